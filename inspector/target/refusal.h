/* Why the kernel refused to let culeak trace or read a live process, told from /proc in the
 * order the kernel decides: a kernel thread, another tracer, Yama, culeak's own privilege, then
 * whatever remains (a security module or a sandbox around culeak). Only a caller without
 * CAP_SYS_PTRACE is told to run culeak as root. */
#ifndef CULEAK_TARGET_REFUSAL_H
#define CULEAK_TARGET_REFUSAL_H

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

/* Sets err to the reason the kernel refused to `what` ("trace", "read the memory of") process
 * pid, and returns its code: CL_E_NOT_PYTHON for a kernel thread, else CL_E_PERMISSION. */
int cl_live_refusal(int pid, const char *what, struct cl_error *err);

/* After an attach was refused: whether to try again, because nobody holds pid any more or
 * another culeak held it and let go (waited for, a few seconds at most); false when a debugger
 * holds it. */
bool cl_live_let_go(int pid);

/* The pid tracing pid (TracerPid in /proc/PID/status), 0 when none or unknown. */
int cl_proc_tracer(int pid);
/* The process's command name (/proc/PID/comm), "" when it cannot be read. */
void cl_proc_comm(int pid, char *out, size_t cap);

/* The pid in the process's own PID namespace (NSpid's last field), 0 when the kernel does not say
 * (before 4.1). */
int cl_proc_ns_pid(int pid);

#endif

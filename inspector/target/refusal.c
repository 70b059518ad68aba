#include "target/refusal.h"
#include "target/procstat.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <pwd.h>
#include <stdlib.h>
#include <unistd.h>

/* Another culeak holds a process for as long as it copies it (a second of a large one); it is
 * waited out, up to LET_GO_TRIES pauses. */
#define LET_GO_TRIES 100
#define LET_GO_PAUSE_NS 50000000L   /* 50 ms: 5 s in all */

#define PF_KTHREAD 0x00200000u   /* include/linux/sched.h: the task is a kernel thread */
#define CAP_SYS_PTRACE 19

/* A field of /proc/PID/status ("TracerPid", "CapEff"), its value copied to out; false if absent. */
static bool status_field(const char *pid, const char *name, char *out, size_t cap)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%s/status", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = strlen(name);
    bool found = false;
    while (!found && fgets(line, sizeof line, f))
        if (strncmp(line, name, n) == 0 && line[n] == ':') {
            snprintf(out, cap, "%s", line + n + 1 + strspn(line + n + 1, " \t"));
            out[strcspn(out, "\n")] = '\0';
            found = true;
        }
    fclose(f);
    return found;
}

int cl_proc_tracer(int pid)
{
    char id[16], v[32];
    snprintf(id, sizeof id, "%d", pid);
    return status_field(id, "TracerPid", v, sizeof v) ? atoi(v) : 0;
}

int cl_proc_ns_pid(int pid)
{
    char id[16], v[128];
    snprintf(id, sizeof id, "%d", pid);
    if (!status_field(id, "NSpid", v, sizeof v))
        return 0;
    const char *last = v + strlen(v); /* one field per nested namespace, ours first */
    while (last > v && last[-1] != ' ' && last[-1] != '\t')
        last--;
    return atoi(last);
}

/* The kernel's flags for the task, 0 if unreadable. */
static unsigned long task_flags(int pid)
{
    struct cl_proc_stat st;
    (void)cl_proc_stat_read(pid, &st); /* zeroed when unreadable: no flags */
    return st.flags;
}

void cl_proc_comm(int pid, char *out, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/comm", pid);
    FILE *f = fopen(path, "r");
    out[0] = '\0';
    if (f) {
        if (!fgets(out, (int)cap, f))
            out[0] = '\0';
        fclose(f);
    }
    out[strcspn(out, "\n")] = '\0';
}

static bool have_ptrace_cap(void)
{
    char v[32];
    unsigned long long caps;
    return status_field("self", "CapEff", v, sizeof v) && sscanf(v, "%llx", &caps) == 1 &&
           (caps >> CAP_SYS_PTRACE & 1);
}

/* kernel.yama.ptrace_scope, or -1 without Yama. */
static int yama_scope(void)
{
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    int scope = -1;
    if (f) {
        if (fscanf(f, "%d", &scope) != 1)
            scope = -1;
        fclose(f);
    }
    return scope;
}

/* The Yama rule that refuses a tracer of this privilege, or NULL. */
static const char *yama_rule(int scope, bool privileged)
{
    if (scope == 3)
        return "kernel.yama.ptrace_scope is 3: no process may be traced until the next reboot";
    if (scope == 2 && !privileged)
        return "kernel.yama.ptrace_scope is 2: only a tracer with CAP_SYS_PTRACE may attach; run "
               "culeak as root";
    if (scope == 1 && !privileged)
        return "kernel.yama.ptrace_scope is 1: only the process's ancestors may attach; run "
               "culeak as root, or set /proc/sys/kernel/yama/ptrace_scope to 0";
    return NULL;
}

/* "user alice (uid 1000)", from the real uid /proc/PID/status gives; "another user" when it
 * cannot be read. */
static void owner_of(int pid, char *out, size_t cap)
{
    char id[16], v[64];
    unsigned uid;
    snprintf(id, sizeof id, "%d", pid);
    if (!status_field(id, "Uid", v, sizeof v) || sscanf(v, "%u", &uid) != 1) {
        snprintf(out, cap, "another user");
        return;
    }
    struct passwd pw, *found = NULL;
    char buf[1024];
    if (getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found)
        snprintf(out, cap, "user %s (uid %u)", found->pw_name, uid);
    else
        snprintf(out, cap, "uid %u", uid);
}

bool cl_live_let_go(int pid)
{
    char comm[64];
    for (int i = 0; i < LET_GO_TRIES; i++) {
        int tracer = cl_proc_tracer(pid);
        if (!tracer)
            return true; /* nobody holds it (now): try again */
        cl_proc_comm(tracer, comm, sizeof comm);
        if (strcmp(comm, "culeak") != 0)
            return false; /* a debugger: it will not let go by itself */
        struct timespec pause = {0, LET_GO_PAUSE_NS};
        nanosleep(&pause, NULL);
    }
    return false;
}

int cl_live_refusal(int pid, const char *what, struct cl_error *err)
{
    char comm[64];
    cl_proc_comm(pid, comm, sizeof comm);
    if (task_flags(pid) & PF_KTHREAD)
        return cl_error_set(err, CL_E_NOT_PYTHON,
                            "process %d (%s) is a kernel thread, not a "
                            "Python process: it has no user memory to read",
                            pid, comm);
    int tracer = cl_proc_tracer(pid);
    if (tracer && tracer != getpid()) {
        char tcomm[64];
        cl_proc_comm(tracer, tcomm, sizeof tcomm);
        return cl_error_set(err, CL_E_PERMISSION,
                            "cannot %s process %d: it is held by process %d (%s); detach that "
                            "debugger, or stop the process in it and culeak reads it without "
                            "attaching",
                            what, pid, tracer, tcomm);
    }
    bool privileged = have_ptrace_cap();
    const char *yama = yama_rule(yama_scope(), privileged);
    if (yama)
        return cl_error_set(err, CL_E_PERMISSION, "cannot %s process %d: %s", what, pid, yama);
    if (!privileged) {
        char owner[96];
        owner_of(pid, owner, sizeof owner);
        return cl_error_set(err, CL_E_PERMISSION,
                            "permission denied to %s process %d, which belongs to %s: run "
                            "culeak as root, or as %s with CAP_SYS_PTRACE",
                            what, pid, owner, owner);
    }
    return cl_error_set(err, CL_E_PERMISSION,
                        "the kernel refused to %s process %d (%s) although "
                        "culeak has CAP_SYS_PTRACE, the process is no kernel thread, has no tracer "
                        "and Yama allows it: a security module (Landlock, AppArmor, SELinux) or "
                        "the sandbox or container culeak runs in forbids it, or the process is in "
                        "a user namespace culeak's privilege does not reach",
                        what, pid, comm);
}

/* The memory the machine has to give: what culeak's defaults (the copy of a live process, the
 * objects a walk may hold) are derived from, so that they grow with the host. */
#ifndef CULEAK_UTIL_MEMINFO_H
#define CULEAK_UTIL_MEMINFO_H

#include <stdint.h>

/* MemAvailable of /proc/meminfo in bytes; 0 when it cannot be read. */
uint64_t cl_mem_available(void);
/* The memory of process pid that no file backs (RssAnon and RssShmem of /proc/PID/status), in
 * bytes: what a copy of it takes at most; 0 when it cannot be read. */
uint64_t cl_proc_anon_bytes(int pid);

#endif

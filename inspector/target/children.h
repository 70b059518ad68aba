/* The child processes of a live process, from /proc/PID/task/TID/children (every thread's):
 * a torchrun agent's workers. */
#ifndef CULEAK_TARGET_CHILDREN_H
#define CULEAK_TARGET_CHILDREN_H

#include <stddef.h>

/* Up to cap child pids into out; returns how many there are (more than cap when cut), or 0 when
 * there are none or pid is not readable. */
size_t cl_proc_children(int pid, int *out, size_t cap);

#endif

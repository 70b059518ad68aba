/* /proc/PID/stat, read one way: the fields culeak needs of a task (its state letter, its flags),
 * parsed after the last ')' because the command name between the parentheses may hold spaces
 * and parentheses of its own. */
#ifndef CULEAK_TARGET_PROCSTAT_H
#define CULEAK_TARGET_PROCSTAT_H

#include <stdbool.h>

struct cl_proc_stat {
    char state;                 /* 'R', 'S', 't', 'T', 'Z', ... */
    unsigned long flags;        /* the kernel's task flags (PF_KTHREAD, ...) */
};

/* Parses a stat line: false (out zeroed) when it is not one. Pure, for the tests. */
bool cl_proc_stat_parse(const char *text, struct cl_proc_stat *out);
/* /proc/TID/stat of a task (a process or one of its threads): false when it cannot be read. */
bool cl_proc_stat_read(int tid, struct cl_proc_stat *out);

#endif

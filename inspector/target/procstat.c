#include "target/procstat.h"

#include <stdio.h>
#include <string.h>

bool cl_proc_stat_parse(const char *text, struct cl_proc_stat *out)
{
    memset(out, 0, sizeof *out);
    const char *rp = strrchr(text, ')');   /* comm may contain spaces and parentheses */
    if (!rp || rp[1] != ' ' || !rp[2] || rp[2] == ' ')
        return false;
    /* state ppid pgrp session tty_nr tpgid flags */
    if (sscanf(rp + 2, "%c %*d %*d %*d %*d %*d %lu", &out->state, &out->flags) != 2) {
        memset(out, 0, sizeof *out);
        return false;
    }
    return true;
}

bool cl_proc_stat_read(int tid, struct cl_proc_stat *out)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", tid);
    FILE *f = fopen(path, "re");
    if (!f) {
        memset(out, 0, sizeof *out);
        return false;
    }
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return cl_proc_stat_parse(buf, out);
}

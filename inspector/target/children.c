#include "target/children.h"

#include <dirent.h>
#include <stdio.h>

size_t cl_proc_children(int pid, int *out, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", pid);
    DIR *d = opendir(path);
    size_t n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char list[96];
        snprintf(list, sizeof list, "/proc/%d/task/%.20s/children", pid, e->d_name);
        FILE *f = fopen(list, "r");
        for (int child; f && fscanf(f, "%d", &child) == 1; n++)
            if (n < cap)
                out[n] = child;
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    return n;
}

#include "util/meminfo.h"

#include <inttypes.h>
#include <stdio.h>

uint64_t cl_mem_available(void)
{
    uint64_t kib = 0;
    FILE *f = fopen("/proc/meminfo", "r");
    char line[128];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %" SCNu64 " kB", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib * 1024;
}

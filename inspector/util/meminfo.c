#include "util/meminfo.h"

#include <inttypes.h>
#include <stdio.h>

/* The sum of the "KEY: N kB" lines of path that keys name, in bytes. */
static uint64_t kib_lines(const char *path, const char *const *keys, size_t nkeys)
{
    uint64_t sum = 0, kib;
    FILE *f = fopen(path, "r");
    char line[128], format[64];
    while (f && fgets(line, sizeof line, f))
        for (size_t k = 0; k < nkeys; k++) {
            snprintf(format, sizeof format, "%s: %%" SCNu64 " kB", keys[k]);
            if (sscanf(line, format, &kib) == 1)
                sum += kib;
        }
    if (f)
        fclose(f);
    return sum * 1024;
}

uint64_t cl_mem_available(void)
{
    static const char *const keys[] = {"MemAvailable"};
    return kib_lines("/proc/meminfo", keys, 1);
}

uint64_t cl_proc_anon_bytes(int pid)
{
    static const char *const keys[] = {"RssAnon", "RssShmem"};
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    return kib_lines(path, keys, 2);
}

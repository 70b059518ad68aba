/* libFuzzer harness for the /proc/PID/maps parser (inspector/target/mappings.c): the input is
 * the maps text. Every mapping kept is a non-empty range, the list comes out sorted, and lookup
 * finds a mapping at each one's start. */
#include <stdint.h>
#include <stdlib.h>

#include "target/mappings.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cl_mappings ms = {0};
    if (cl_mappings_parse_proc_maps(&ms, (const char *)data, size) != 0)
        abort();   /* only allocation failure may fail */
    for (size_t i = 0; i < ms.n; i++) {
        const struct cl_mapping *m = &ms.v[i];
        if (m->end <= m->start || (i > 0 && m->start < ms.v[i - 1].start))
            abort();
        const struct cl_mapping *f = cl_mappings_find(&ms, m->start);
        if (!f || m->start < f->start || m->start >= f->end)
            abort();
    }
    cl_mappings_free(&ms);
    return 0;
}

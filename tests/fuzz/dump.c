/* libFuzzer harness for the dump reader (inspector/target/dump.c, target/dumpfile.c) and the
 * symbol answers it carries (symbols/record.c): the input is a file `culeak dump` wrote. It is
 * opened as a target from memory, its symbol section loaded, a recorded symbol asked of every
 * module, the first and last bytes of every mapping read and the recorded files asked for.
 * Whatever the bytes, the open must return a status, never crash, hang or leak. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/symbols.h"
#include "target/dump.h"

#define MAX_READS 256   /* mappings read per input: bounds an input with 10^5 mappings */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void read_mappings(struct cl_target *t)
{
    unsigned char buf[64];
    for (size_t i = 0; i < t->maps.n && i < MAX_READS; i++) {
        const struct cl_mapping *m = &t->maps.v[i];
        (void)cl_read(t, m->start, buf, sizeof buf);   /* either status is fine; no crash */
        if (m->end - m->start >= sizeof buf)
            (void)cl_read(t, m->end - sizeof buf, buf, sizeof buf);
    }
}

static void ask_symbols(struct cl_target *t)
{
    struct cl_symbols *s;
    struct cl_error err;
    if (cl_symbols_load(t, &s, &err)) {
        if (err.code != CL_E_NOT_CORE && err.code != CL_E_INTERNAL)
            abort();   /* a malformed symbol section is "corrupt" */
        return;
    }
    for (size_t i = 0; i < s->n && i < MAX_READS; i++) {
        uint64_t addr, len;
        (void)cl_module_symbol(&s->mods[i], "_PyRuntime", &addr, &len);
        (void)cl_module_has_dwarf(&s->mods[i]);
    }
    (void)cl_symbols_name_at(s, 0x1000, NULL);
    cl_symbols_close(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cl_open_options opt = {.cache_pages = 64};
    struct cl_target *t = NULL;
    struct cl_error err = {0};
    int rc = cl_target_open_dump_bytes(data, size, "input", &opt, &t, &err);
    if (rc == 0) {
        ask_symbols(t);
        read_mappings(t);
        char local[256], text[256];
        for (size_t i = 0; i < t->files.n; i++)
            (void)cl_target_text_file(t, t->files.v[i].target_path, local, sizeof local, text,
                                      sizeof text);
        cl_target_close(t);
    } else if (t || (int)err.code != rc || !err.msg[0] ||
               (rc != CL_E_NOT_CORE && rc != CL_E_TRUNCATED && rc != CL_E_UNSUPPORTED)) {
        abort();   /* a bad dump is "not a dump", "truncated" or "another version", says why */
    }
    return 0;
}

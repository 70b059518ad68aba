/* libFuzzer harness for the note parsers (inspector/target/corenotes.c): the input is read both
 * as a PT_NOTE segment, every note handed to the parser of its type whatever its name, and as
 * the first bytes of an ELF image for its build-id. Results are checked against their contract:
 * NT_FILE entries are non-empty ranges, a build-id fits the buffer it was copied to. */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>

#include "target/corenotes.h"
#include "util/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_files(const struct cl_mappings *ms)
{
    for (size_t i = 0; i < ms->n; i++)
        if (ms->v[i].end <= ms->v[i].start || !ms->v[i].path)
            abort();
}

static int each_note(const struct cl_note *n, void *arg)
{
    (void)arg;
    struct cl_mappings files = {0};
    struct cl_prstatus ps;
    struct cl_prpsinfo pi;
    switch (n->type) {
    case NT_FILE:
        if (cl_nt_file_parse(n->desc, n->descsz, &files) == 0)
            check_files(&files);
        cl_mappings_free(&files);
        break;
    case NT_PRSTATUS: (void)cl_prstatus_parse(n->desc, n->descsz, &ps); break;
    case NT_PRPSINFO: (void)cl_prpsinfo_parse(n->desc, n->descsz, &pi); break;
    case NT_AUXV: (void)cl_auxv_get(n->desc, n->descsz, AT_ENTRY); break;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int rc = cl_notes_foreach(data, size, each_note, NULL);
    if (rc != 0 && rc != CL_E_NOT_CORE)
        abort();
    unsigned char id[20];   /* a sha1 build-id's size: longer ones must not be copied */
    if (cl_buildid_parse(data, size, id, sizeof id) > sizeof id)
        abort();
    return 0;
}

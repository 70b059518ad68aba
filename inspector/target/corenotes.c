#include "target/corenotes.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

static size_t align4(size_t n)
{
    return (n + 3) & ~(size_t)3;
}

int cl_notes_foreach(const unsigned char *data, size_t len,
                     int (*fn)(const struct cl_note *n, void *arg), void *arg)
{
    size_t pos = 0;
    while (len - pos >= sizeof(Elf64_Nhdr)) {
        Elf64_Nhdr h;
        memcpy(&h, data + pos, sizeof h);
        size_t name_at = pos + sizeof h;
        if (h.n_namesz > len - name_at)
            return CL_E_NOT_CORE;
        size_t desc_at = name_at + align4(h.n_namesz);
        if (desc_at > len || h.n_descsz > len - desc_at)
            return CL_E_NOT_CORE;
        const char *name = (const char *)data + name_at;
        if (h.n_namesz == 0 || name[h.n_namesz - 1] != '\0')
            name = "";
        struct cl_note n = {h.n_type, name, data + desc_at, h.n_descsz};
        int rc = fn(&n, arg);
        if (rc)
            return rc;
        pos = desc_at + align4(h.n_descsz);
        if (pos > len)
            break;
    }
    return 0;
}

int cl_nt_file_parse(const unsigned char *desc, size_t len, struct cl_mappings *out)
{
    uint64_t count, page_size;
    if (len < 16)
        return CL_E_NOT_CORE;
    memcpy(&count, desc, sizeof count);
    memcpy(&page_size, desc + 8, sizeof page_size);
    if (count > (len - 16) / 24 || page_size == 0)
        return CL_E_NOT_CORE;
    const unsigned char *names = desc + 16 + count * 24, *end = desc + len;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t e[3];
        memcpy(e, desc + 16 + i * 24, sizeof e);
        const unsigned char *nul = memchr(names, '\0', (size_t)(end - names));
        if (!nul || e[1] <= e[0] || e[2] > UINT64_MAX / page_size)
            return CL_E_NOT_CORE;
        /* a copy: the note is read-only, and the mapping's path is its own to free */
        char *path = strndup((const char *)names, (size_t)(nul - names));
        struct cl_mapping m = {
            .start = e[0], .end = e[1], .offset = e[2] * page_size, .path = path};
        int rc = path ? cl_mappings_add(out, &m) : CL_E_INTERNAL;
        free(path);
        if (rc)
            return rc;
        names = nul + 1;
    }
    return 0;
}

int cl_prstatus_parse(const unsigned char *desc, size_t len, struct cl_prstatus *out)
{
    /* struct elf_prstatus on x86-64: pr_cursig at 12 (short), pr_pid at 32; 336 bytes in all. */
    if (len < 336)
        return CL_E_NOT_CORE;
    int16_t sig;
    int32_t pid;
    memcpy(&sig, desc + 12, sizeof sig);
    memcpy(&pid, desc + 32, sizeof pid);
    out->cursig = sig;
    out->pid = pid;
    return 0;
}

int cl_prpsinfo_parse(const unsigned char *desc, size_t len, struct cl_prpsinfo *out)
{
    /* struct elf_prpsinfo on x86-64: pr_pid at 24, pr_fname[16] at 40, pr_psargs[80] at 56. */
    if (len < 136)
        return CL_E_NOT_CORE;
    int32_t pid;
    memcpy(&pid, desc + 24, sizeof pid);
    out->pid = pid;
    memcpy(out->fname, desc + 40, sizeof out->fname - 1); /* pr_fname[16], pr_psargs[80] */
    out->fname[sizeof out->fname - 1] = '\0';
    memcpy(out->psargs, desc + 56, sizeof out->psargs - 1);
    out->psargs[sizeof out->psargs - 1] = '\0';
    return 0;
}

uint64_t cl_auxv_get(const unsigned char *desc, size_t len, uint64_t type)
{
    for (size_t i = 0; i + 16 <= len; i += 16) {
        uint64_t kv[2];
        memcpy(kv, desc + i, sizeof kv);
        if (kv[0] == AT_NULL)
            break;
        if (kv[0] == type)
            return kv[1];
    }
    return 0;
}

struct buildid_search {
    unsigned char *out;
    size_t cap, len;
};

static int take_buildid(const struct cl_note *n, void *arg)
{
    struct buildid_search *s = arg;
    if (n->type != NT_GNU_BUILD_ID || strcmp(n->name, "GNU") != 0 || n->descsz == 0)
        return 0;
    if (n->descsz > s->cap)
        return 1; /* no real build-id is this long: callers compare len bytes of out */
    s->len = n->descsz;
    memcpy(s->out, n->desc, n->descsz);
    return 1;
}

size_t cl_buildid_parse(const unsigned char *image, size_t len, unsigned char *out, size_t cap)
{
    Elf64_Ehdr eh;
    if (len < sizeof eh)
        return 0;
    memcpy(&eh, image, sizeof eh);
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff > len)
        return 0;
    struct buildid_search s = {out, cap, 0};
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        uint64_t at = eh.e_phoff + (uint64_t)i * sizeof ph;
        if (at + sizeof ph > len)
            break;
        memcpy(&ph, image + at, sizeof ph);
        if (ph.p_type != PT_NOTE || ph.p_offset > len || ph.p_filesz > len - ph.p_offset)
            continue;
        if (cl_notes_foreach(image + ph.p_offset, ph.p_filesz, take_buildid, &s) == 1)
            return s.len; /* 0 when it was too long to compare */
    }
    return 0;
}

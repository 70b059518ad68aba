#include "symbols/symbols.h"

#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/names.h"
#include "symbols/replay.h"
#include "target/corenotes.h"
#include "target/dump.h"
#include "util/notes.h"
#include "util/vec.h"

/* Where separate debug files are looked for: next to the file, in .debug/ there, then by
 * build-id or path under the target's own /usr/lib/debug (a container's, a sysroot's) before
 * this machine's. Every candidate must carry the module's build-id, so the host's never lends
 * wrong DWARF. */
static char *debuginfo_path_for(const struct cl_file_locator *loc)
{
    char root[40] = "";
    const char *prefix = loc->sysroot;
    if (!prefix && loc->root_pid > 0) {
        snprintf(root, sizeof root, "/proc/%d/root", loc->root_pid);
        prefix = root;
    }
    size_t n = (prefix ? strlen(prefix) : 0) + 64;
    char *path = malloc(n);
    if (!path)
        return NULL;
    if (prefix)
        snprintf(path, n, ":.debug:%s/usr/lib/debug:/usr/lib/debug", prefix);
    else
        snprintf(path, n, ":.debug:/usr/lib/debug");
    return path;
}

static bool is_elf_file(const char *path, unsigned char *head, size_t cap, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = pread(fd, head, cap, 0);
    close(fd);
    *len = n > 0 ? (size_t)n : 0;
    return *len >= 4 && memcmp(head, "\177ELF", 4) == 0;
}

/* Compares the build-id in the target's copy of the ELF header page with the file's. Unknown on
 * either side counts as a match: many cores and some binaries carry none. */
static bool same_build(struct cl_target *t, uint64_t base, const unsigned char *head, size_t len)
{
    unsigned char page[CL_PAGE_SIZE], want[64], have[64];
    if (cl_read(t, base, page, sizeof page) != 0)
        return true;
    size_t nw = cl_buildid_parse(page, sizeof page, want, sizeof want);
    size_t nh = cl_buildid_parse(head, len, have, sizeof have);
    return !nw || !nh || (nw == nh && memcmp(want, have, nw) == 0);
}

/* Where a deleted or replaced module's symbols come from, for its warning. */
static const char *deleted_source(const char *file)
{
    if (!file)
        return "no file for its symbols";
    if (strstr(file, "/map_files/"))
        return "its symbols are read from the copy the target still maps";
    return "the file now at that path lends symbols only if its build-id matches";
}

static int add_module(struct cl_target *t, struct cl_symbols *s, const struct cl_mapping *base)
{
    struct cl_module m = {.start = base->start, .end = base->end};
    for (size_t i = 0; i < t->maps.n; i++) {
        const struct cl_mapping *o = &t->maps.v[i];
        if (o->path && strcmp(o->path, base->path) == 0 && o->end > m.end &&
            o->start >= base->start)
            m.end = o->end;
    }
    bool is_exe = t->exe_path && strcmp(t->exe_path, base->path) == 0;
    char *file = cl_locate_mapping(t, base, is_exe);
    unsigned char head[CL_PAGE_SIZE];
    size_t len = 0;
    if (file && !is_elf_file(file, head, sizeof head, &len)) {
        free(file);
        return 0;   /* a data file mapped at offset 0, not a module */
    }
    if (base->perms & CL_MAP_DELETED)
        cl_note_add(&t->warnings, "%s was deleted or replaced after the target mapped it; %s",
                    base->path, deleted_source(file));
    if (!file) {
        m.state = CL_MODULE_MISSING;
    } else if (!same_build(t, base->start, head, len)) {
        m.state = CL_MODULE_MISMATCH;
        cl_note_add(&t->warnings,
                    "%s is not the file the target loaded (build-id differs); its symbols "
                    "are not used",
                    file);
    } else {
        m.dwfl = dwfl_report_elf(s->dwfl, base->path, file, -1, base->start, false);
        Dwarf_Addr low, high;
        /* the module ends where its last segment does: the .bss past its file's last page is
         * an anonymous mapping of its own, whose statics belong to it too */
        if (m.dwfl && dwfl_module_info(m.dwfl, NULL, &low, &high, NULL, NULL, NULL, NULL) &&
            high > m.end)
            m.end = high;
        Dwarf_Addr bias = 0;
        if (m.dwfl && dwfl_module_getelf(m.dwfl, &bias))
            m.bias = bias;
        else
            m.state = CL_MODULE_MISSING;
    }
    m.file = file;
    if (!(m.path = strdup(base->path)))
        return CL_E_INTERNAL;
    if (!CL_VEC_RESERVE(s->mods, s->n, s->cap)) {
        free(m.path);
        free(file);
        return CL_E_INTERNAL;
    }
    s->mods[s->n++] = m;
    return 0;
}

/* The warnings t gained since it had len bytes of them, copied. */
static char *notes_since(const struct cl_target *t, size_t len)
{
    size_t now = t->warnings ? strlen(t->warnings) : 0;
    if (now <= len)
        return NULL;
    size_t n = now - len;
    while (n && t->warnings[len + n - 1] == '\n') /* cl_note_add adds the newline again */
        n--;
    return strndup(t->warnings + len, n);
}

int cl_symbols_load(struct cl_target *t, struct cl_symbols **out, struct cl_error *err)
{
    const unsigned char *recorded;
    size_t recorded_len;
    if (cl_dump_symbols(t, &recorded, &recorded_len))
        return cl_symbols_load_recorded(t, recorded, recorded_len, out, err);
    size_t notes_before = t->warnings ? strlen(t->warnings) : 0;
    struct cl_symbols *s = calloc(1, sizeof *s);
    if (s && (s->debuginfo_path = debuginfo_path_for(&t->locator))) {
        s->callbacks = (Dwfl_Callbacks){.find_elf = dwfl_build_id_find_elf,
                                        .find_debuginfo = dwfl_standard_find_debuginfo,
                                        .debuginfo_path = &s->debuginfo_path};
        s->dwfl = dwfl_begin(&s->callbacks);
    }
    if (!s || !s->dwfl) {
        if (s)
            free(s->debuginfo_path);
        free(s);
        return cl_error_set(err, CL_E_INTERNAL, "cannot start libdwfl");
    }
    dwfl_report_begin(s->dwfl);
    int rc = 0;
    /* A module is a file mapped at offset 0; later mappings of the same file extend it. */
    for (size_t i = 0; i < t->maps.n && !rc; i++) {
        const struct cl_mapping *m = &t->maps.v[i];
        if (m->offset != 0 || !m->path || m->path[0] != '/')
            continue;
        bool seen = false;
        for (size_t j = 0; j < s->n && !seen; j++)
            seen = strcmp(s->mods[j].path, m->path) == 0;
        if (!seen)
            rc = add_module(t, s, m);
    }
    dwfl_report_end(s->dwfl, NULL, NULL);
    s->target = t;
    s->recording = t->record != NULL;
    for (size_t i = 0; i < s->n; i++)
        s->mods[i].owner = s;
    if (!rc && s->recording && notes_before < (t->warnings ? strlen(t->warnings) : 0) &&
        !(s->load_notes = notes_since(t, notes_before)))
        rc = CL_E_INTERNAL;
    if (rc) {
        cl_symbols_close(s);
        return cl_error_set(err, rc, "out of memory");
    }
    *out = s;
    return 0;
}

void cl_symbols_close(struct cl_symbols *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        free(s->mods[i].path);
        free(s->mods[i].file);
        if (s->names)
            cl_symnames_free(&s->names[i]);
    }
    free(s->names);
    free(s->mods);
    if (s->dwfl)
        dwfl_end(s->dwfl);
    free(s->debuginfo_path);
    free(s->load_notes);
    cl_symrec_free(&s->rec);
    free(s);
}

const struct cl_module *cl_symbols_module_named(const struct cl_symbols *s, const char *prefix)
{
    if (!prefix)
        return NULL;
    for (size_t i = 0; i < s->n; i++) {
        const char *slash = strrchr(s->mods[i].path, '/');
        const char *base = slash ? slash + 1 : s->mods[i].path;
        if (strncmp(base, prefix, strlen(prefix)) == 0)
            return &s->mods[i];
    }
    return NULL;
}

const struct cl_module *cl_symbols_module_at(const struct cl_symbols *s, uint64_t addr)
{
    for (size_t i = 0; i < s->n; i++)
        if (addr >= s->mods[i].start && addr < s->mods[i].end)
            return &s->mods[i];
    return NULL;
}

static bool find_symbol(const struct cl_module *m, const char *name, uint64_t *addr, uint64_t *size)
{
    struct cl_symbols *s = m->owner;
    GElf_Sym sym;
    GElf_Addr value;
    if (!m->dwfl || !s || (!s->names && !(s->names = calloc(s->n, sizeof *s->names))) ||
        !cl_symnames_find(&s->names[m - s->mods], m->dwfl, name, &sym, &value))
        return false;
    *addr = value;
    if (size)
        *size = sym.st_size;
    return true;
}

static bool find_section(const struct cl_module *m, const char *name, uint64_t *addr,
                         uint64_t *size)
{
    Dwarf_Addr bias;
    Elf *elf = m->dwfl ? dwfl_module_getelf(m->dwfl, &bias) : NULL;
    size_t shstrndx;
    if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
        return false;
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        const char *sname;
        if (gelf_getshdr(scn, &sh) && (sname = elf_strptr(elf, shstrndx, sh.sh_name)) &&
            strcmp(sname, name) == 0 && (sh.sh_flags & SHF_ALLOC)) {
            *addr = sh.sh_addr + bias;
            if (size)
                *size = sh.sh_size;
            return true;
        }
    }
    return false;
}

static bool find_dwarf(const struct cl_module *m)
{
    Dwarf_Addr bias;
    return m->dwfl && dwfl_module_getdwarf(m->dwfl, &bias) != NULL;
}

static bool find_symtab(const struct cl_module *m)
{
    Dwarf_Addr bias;
    Elf *elf = m->dwfl ? dwfl_module_getelf(m->dwfl, &bias) : NULL;
    for (Elf_Scn *scn = NULL; elf && (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
            return true;
    }
    /* dwfl also takes .symtab from a separate debug file; it then reports more symbols than
     * .dynsym has, which is what matters to lookups. */
    return false;
}

static const char *find_name(const struct cl_symbols *s, uint64_t addr, uint64_t *offset)
{
    Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, addr);
    GElf_Off off = 0;
    GElf_Sym sym;
    const char *name = mod ? dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL) : NULL;
    if (name && offset)
        *offset = off;
    return name;
}

/* ---- the questions, each answered from a dump, or looked up (and kept while dumping) ---- */

/* Answers a question whose answer is an address and a size. */
static bool located(const struct cl_module *m, enum cl_symq_kind kind, const char *name,
                    bool optional, uint64_t *addr, uint64_t *size)
{
    struct cl_symq q = cl_symbols_question(m, kind, name, NULL);
    q.optional = optional;
    if (!cl_symbols_recorded(m->owner, &q)) {
        q.found = kind == CL_SYMQ_SYMBOL ? find_symbol(m, name, &q.v1, &q.v2)
                                         : find_section(m, name, &q.v1, &q.v2);
        cl_symbols_answered(m->owner, &q);
    }
    if (q.found) {
        *addr = q.v1;
        if (size)
            *size = q.v2;
    }
    return q.found;
}

bool cl_module_symbol(const struct cl_module *m, const char *name, uint64_t *addr, uint64_t *size)
{
    return located(m, CL_SYMQ_SYMBOL, name, false, addr, size);
}

bool cl_module_symbol_optional(const struct cl_module *m, const char *name, uint64_t *addr,
                               uint64_t *size)
{
    return located(m, CL_SYMQ_SYMBOL, name, true, addr, size);
}

bool cl_module_section(const struct cl_module *m, const char *name, uint64_t *addr, uint64_t *size)
{
    return located(m, CL_SYMQ_SECTION, name, false, addr, size);
}

bool cl_module_section_optional(const struct cl_module *m, const char *name, uint64_t *addr,
                                uint64_t *size)
{
    return located(m, CL_SYMQ_SECTION, name, true, addr, size);
}

static bool has(const struct cl_module *m, enum cl_symq_kind kind)
{
    struct cl_symq q = cl_symbols_question(m, kind, NULL, NULL);
    if (!cl_symbols_recorded(m->owner, &q)) {
        q.found = kind == CL_SYMQ_HAS_DWARF ? find_dwarf(m) : find_symtab(m);
        cl_symbols_answered(m->owner, &q);
    }
    return q.found;
}

bool cl_module_has_dwarf(const struct cl_module *m)
{
    return has(m, CL_SYMQ_HAS_DWARF);
}

bool cl_module_has_symtab(const struct cl_module *m)
{
    return has(m, CL_SYMQ_HAS_SYMTAB);
}

static const char *name_at(struct cl_symbols *s, uint64_t addr, bool optional, uint64_t *offset)
{
    struct cl_symq q = {
        .kind = CL_SYMQ_NAME_AT, .module = CL_SYMQ_NO_MODULE, .addr = addr, .optional = optional};
    if (!cl_symbols_recorded(s, &q)) {
        q.name = find_name(s, addr, &q.v1);
        q.found = q.name != NULL;
        cl_symbols_answered(s, &q);
    }
    if (q.found && offset)
        *offset = q.v1;
    return q.found ? q.name : NULL;
}

const char *cl_symbols_name_at(struct cl_symbols *s, uint64_t addr, uint64_t *offset)
{
    return name_at(s, addr, false, offset);
}

const char *cl_symbols_name_at_optional(struct cl_symbols *s, uint64_t addr, uint64_t *offset)
{
    return name_at(s, addr, true, offset);
}

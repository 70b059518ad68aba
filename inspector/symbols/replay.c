/* The symbols of a dump, and the recording of answers while dumping (symbols.h): a dump's
 * modules and answers are read from its symbol section, written by cl_symbols_write. */
#include "symbols/replay.h"

#include <stdlib.h>
#include <string.h>

#include "util/notes.h"

#define MAX_MODULES 65536u
#define MAX_PATH_LEN 4096u
#define MAX_NOTES_LEN (1u << 20)
#define MODULE_MIN_SIZE 36u     /* two NULL paths, start, end, bias, state */

/* One module of a dump's symbol section. */
static bool read_module(struct cl_bytes_in *in, struct cl_symbols *s, struct cl_module *m)
{
    m->path = cl_in_str(in, MAX_PATH_LEN);
    m->file = cl_in_str(in, MAX_PATH_LEN);
    m->start = cl_in_u64(in);
    m->end = cl_in_u64(in);
    m->bias = cl_in_u64(in);
    uint32_t state = cl_in_u32(in);
    m->state = (enum cl_module_state)state;
    m->owner = s;
    return !in->bad && m->path && state <= CL_MODULE_MISMATCH && m->start <= m->end;
}

static bool read_section(struct cl_bytes_in *in, struct cl_symbols *s)
{
    uint32_t n = cl_in_u32(in);
    if (in->bad || n > MAX_MODULES || n > cl_in_room(in, MODULE_MIN_SIZE))
        return false;
    if (n && !(s->mods = calloc(n, sizeof *s->mods))) {
        in->oom = true;
        return false;
    }
    for (; s->n < n; s->n++)
        if (!read_module(in, s, &s->mods[s->n])) {
            free(s->mods[s->n].path);
            free(s->mods[s->n].file);
            return false;
        }
    s->load_notes = cl_in_str(in, MAX_NOTES_LEN);
    return !in->bad && cl_symrec_read(in, n, &s->rec);
}

/* A dump's modules and answers; its loading's warnings are the target's again. */
int cl_symbols_load_recorded(struct cl_target *t, const unsigned char *p, size_t len,
                             struct cl_symbols **out, struct cl_error *err)
{
    struct cl_symbols *s = calloc(1, sizeof *s);
    if (!s)
        return cl_error_set(err, CL_E_INTERNAL, "out of memory");
    s->target = t;
    s->replay = true;
    struct cl_bytes_in in = {p, len, 0, false, false};
    if (!read_section(&in, s)) {
        bool oom = in.oom;
        cl_symbols_close(s);
        return oom ? cl_error_set(err, CL_E_INTERNAL, "out of memory")
                   : cl_error_set(err, CL_E_NOT_CORE,
                                  "the dump is corrupt: its symbol section "
                                  "is malformed");
    }
    if (s->load_notes)
        cl_note_add(&t->warnings, "%s", s->load_notes);
    *out = s;
    return 0;
}

void cl_symbols_write(const struct cl_symbols *s, struct cl_bytes_out *o)
{
    cl_out_u32(o, (uint32_t)s->n);
    for (size_t i = 0; i < s->n; i++) {
        const struct cl_module *m = &s->mods[i];
        cl_out_str(o, m->path);
        cl_out_str(o, m->file);
        cl_out_u64(o, m->start);
        cl_out_u64(o, m->end);
        cl_out_u64(o, m->bias);
        cl_out_u32(o, m->state);
    }
    cl_out_str(o, s->load_notes);
    cl_symrec_write(&s->rec, o);
    if (s->rec.oom)
        o->oom = true;
}

static const char *const question_names[CL_SYMQ_KINDS] = {
    [CL_SYMQ_SYMBOL] = "the symbol",
    [CL_SYMQ_SECTION] = "the section",
    [CL_SYMQ_HAS_DWARF] = "whether there is DWARF",
    [CL_SYMQ_HAS_SYMTAB] = "whether there is .symtab",
    [CL_SYMQ_DWARF_SIZE] = "the DWARF size of",
    [CL_SYMQ_DWARF_MEMBER] = "the DWARF offset of",
    [CL_SYMQ_NAME_AT] = "the symbol at an address",
};

bool cl_symbols_recorded(struct cl_symbols *s, struct cl_symq *q)
{
    if (!s->replay)
        return false;
    const struct cl_symq *a = cl_symrec_find(&s->rec, q);
    if (a) {
        q->found = a->found;
        q->v1 = a->v1;
        q->v2 = a->v2;
        q->name = a->name;
        return true;
    }
    const char *mod = q->module < s->n ? s->mods[q->module].path : "the modules";
    if (q->optional) {
        if (!s->optional_missed)
            cl_note_add(&s->target->warnings,
                        "this dump was written by an older culeak, which did not look up %s "
                        "%s in %s (nor maybe others): what culeak reads through it now is left "
                        "out (the types it names, the libraries' static data)",
                        question_names[q->kind], q->key ? q->key : "", mod);
        s->optional_missed = true;
        q->found = false;
        return true;
    }
    cl_target_lose(s->target, CL_E_UNREADABLE,
                   "the dump does not hold %s %s%s%s in %s: culeak "
                   "dump did not ask it",
                   question_names[q->kind], q->key ? q->key : "", q->key2 ? "." : "",
                   q->key2 ? q->key2 : "", mod);
    q->found = false;
    return true;
}

void cl_symbols_answered(struct cl_symbols *s, const struct cl_symq *q)
{
    if (s->recording)
        cl_symrec_add(&s->rec, q);
}

struct cl_symq cl_symbols_question(const struct cl_module *m, enum cl_symq_kind kind,
                                   const char *key, const char *key2)
{
    return (struct cl_symq){
        .kind = kind, .module = (uint32_t)(m - m->owner->mods), .key = key, .key2 = key2};
}

#include "cpython/statics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/symbols.h"
#include "util/notes.h"
#include "util/ranges.h"
#include "util/vec.h"

#define PAGE 4096u

struct scan {
    struct py_heap *h;
    struct cl_ranges sections;
    struct cl_ranges objects; /* the heap's objects that lie in them */
    struct py_static_word *words;
    size_t nwords, words_cap;
    bool oom;
};

/* The .data and .bss of every library but the interpreter's, each bounded. */
static void find_sections(struct scan *s)
{
    const struct py_runtime *rt = s->h->objects.rt;
    const struct cl_symbols *syms = rt->module->owner;
    static const char *const names[] = {".data", ".bss"};
    for (size_t i = 0; i < syms->n; i++) {
        const struct cl_module *m = &syms->mods[i];
        for (size_t k = 0; m != rt->module && k < sizeof names / sizeof *names; k++) {
            uint64_t addr, size;
            if (!cl_module_section_optional(m, names[k], &addr, &size) || !size)
                continue;
            if (size > PY_STATICS_MAX_SECTION) {
                cl_note_add(&s->h->warnings,
                            "%s's %s is %llu bytes: only its first %u are read for references "
                            "to Python objects",
                            m->path, names[k], (unsigned long long)size, PY_STATICS_MAX_SECTION);
                size = PY_STATICS_MAX_SECTION;
            }
            cl_ranges_add(&s->sections, addr & ~7ull, addr + size);
        }
    }
    cl_ranges_sort(&s->sections);
    s->oom |= s->sections.lost;
}

/* The types that lie in those sections (a library's static types, whose words the walk reads as
 * theirs: tp_dict, tp_mro...), each a PyTypeObject: its metatype's basicsize is a heap type's,
 * and would hide the statics after it (_datetime's PyDateTime_Epoch, which holds its UTC).
 * Other static objects are not looked for among the millions of nodes: a word of one that the
 * walk counted makes its object's words outnumber its unexplained references, and none of
 * them is taken. */
static void find_objects(struct scan *s)
{
    struct py_objects *o = &s->h->objects;
    for (size_t k = 0; k < o->ntypes; k++) {
        uint64_t a = o->types[k]->addr;
        if (cl_ranges_contain(&s->sections, a))
            cl_ranges_add(&s->objects, a, a + o->rt->l->type_object_size);
    }
    cl_ranges_sort(&s->objects);
    s->oom |= s->objects.lost;
}

/* The bytes of a type object read to know it (py_type_at: its header, tp_name .. tp_dict). */
#define TYPE_READ 512

/* Whether w is the address of an object: a node of the heap, or, while the heap has room for
 * more (--max-objects), memory the target holds whose header names a type and holds a count a
 * live object may have (a freed one's is 0, or a free list's link); allocated, so 16-aligned.
 * The word may point anywhere: each range it leads to is one the target holds (cl_target_holds)
 * before it is read, so that a dump's replay reads what its run read. */
static bool object_at(struct py_heap *h, uint64_t w)
{
    struct cl_target *t = h->objects.rt->t;
    uint64_t header[2], meta, refcnt; /* ob_refcnt, ob_type */
    if (w < PAGE || (w & 7))
        return false;
    if (py_heap_find(h, w) != PY_NO_NODE)
        return true;
    return h->n < h->max_objects && !(w & 15) && cl_target_holds_range(t, w, sizeof header) &&
           cl_read(t, w, header, sizeof header) == 0 && header[0] >= 1 &&
           header[0] <= PY_STATICS_MAX_REFCNT && !(header[1] & 7) &&
           cl_target_holds_range(t, header[1], TYPE_READ) &&
           cl_read_u64(t, header[1] + h->objects.rt->l->ob_type, &meta) == 0 && !(meta & 7) &&
           cl_target_holds_range(t, meta, TYPE_READ) && py_object_header(&h->objects, w, &refcnt);
}

static void scan_page(struct scan *s, uint64_t page, uint64_t from, uint64_t to)
{
    uint64_t words[PAGE / 8];
    struct cl_target *t = s->h->objects.rt->t;
    if (cl_target_left_out(t, page) || cl_read(t, page, words, sizeof words))
        return;
    for (uint64_t at = from; at < to; at += 8) {
        uint64_t w = words[(at - page) / 8];
        if (cl_ranges_contain(&s->objects, at) || !object_at(s->h, w))
            continue;
        if (!CL_VEC_RESERVE(s->words, s->nwords, s->words_cap)) {
            s->oom = true;
            return;
        }
        s->words[s->nwords++] = (struct py_static_word){at, w};
    }
}

int py_statics_find(struct py_heap *h, struct py_static_word **out, size_t *n)
{
    struct scan s = {.h = h};
    *out = NULL;
    *n = 0;
    if (!h->objects.rt->module || !h->objects.rt->module->owner)
        return 0;
    find_sections(&s);
    if (!s.oom)
        find_objects(&s);
    for (size_t k = 0; !s.oom && k < s.sections.n; k++) {
        const struct cl_range *r = &s.sections.v[k];
        /* A section whose start the target left out is a foreign library's (target/libdata.h):
         * none of it is read, not even a last page a live copy holds because the memory after
         * it shares it. */
        if (cl_target_left_out(h->objects.rt->t, r->start))
            continue;
        for (uint64_t page = r->start & ~(uint64_t)(PAGE - 1); page < r->end && !s.oom;
             page += PAGE) {
            uint64_t from = page > r->start ? page : r->start, to = page + PAGE;
            scan_page(&s, page, from, to < r->end ? to : r->end);
        }
    }
    cl_ranges_free(&s.sections);
    cl_ranges_free(&s.objects);
    if (s.oom) {
        free(s.words);
        return CL_E_INTERNAL;
    }
    *out = s.words;
    *n = s.nwords;
    return 0;
}

void py_static_name(const struct py_heap *h, uint64_t at, char *buf, size_t cap)
{
    struct cl_symbols *syms = h->objects.rt->module->owner;
    const struct cl_module *m = cl_symbols_module_at(syms, at);
    const char *path = m ? m->path : "?", *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    uint64_t off = 0;
    /* optional: refs names words a dump written before it did so did not record */
    const char *sym = cl_symbols_name_at_optional(syms, at, &off);
    if (sym && off)
        snprintf(buf, cap, "<%s: %s+0x%llx>", base, sym, (unsigned long long)off);
    else if (sym)
        snprintf(buf, cap, "<%s: %s>", base, sym);
    else
        snprintf(buf, cap, "<%s+0x%llx>", base, (unsigned long long)(at - (m ? m->bias : 0)));
}

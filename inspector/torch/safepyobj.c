#include "torch/safepyobj.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/balance.h"
#include "cpython/buffers.h"
#include "symbols/symbols.h"
#include "torch/cxx.h"
#include "util/notes.h"
#include "util/ranges.h"
#include "util/vec.h"

/* PyInterpreterHolder self_interpreter, whose first member is the PyInterpreter* (2.1-2.15; the
 * namespace moved in 2.6). */
static const char *const interpreter_symbols[] = {
    "_ZN5torch6detail12_GLOBAL__N_116self_interpreterE",
    "_ZN12_GLOBAL__N_116self_interpreterE",
};

/* A SafePyObject found: its data_ word's address and what it points at. */
struct pair {
    uint64_t at, object;
};

struct scan {
    struct py_heap *h;
    uint64_t interp;
    uint64_t last_page, last_word; /* the word before a page, where the previous page was read */
    struct pair *pairs;
    size_t n, cap;
    bool oom;
};

static uint64_t find_interpreter(const struct py_heap *h)
{
    const struct cl_symbols *syms = h->objects.rt->module ? h->objects.rt->module->owner : NULL;
    const struct cl_module *lib = syms ? cl_symbols_module_named(syms, "libtorch_python") : NULL;
    uint64_t at, interp;
    for (size_t k = 0; lib && k < sizeof interpreter_symbols / sizeof *interpreter_symbols; k++)
        if (cl_module_symbol_optional(lib, interpreter_symbols[k], &at, NULL) &&
            cl_read_u64(h->objects.rt->t, at, &interp) == 0 && interp && !(interp & 7))
            return interp;
    return 0;
}

/* Whether node j's count has references not explained: what a pair may explain. */
static bool unexplained(const struct py_heap *h, uint32_t j)
{
    return j != PY_NO_NODE && py_books_unexplained(h, j) > 0;
}

static bool scan_page(void *arg, uint64_t page, const uint64_t *words)
{
    struct scan *s = arg;
    bool used = false;
    for (size_t k = 0; k < CL_PAGE_SIZE / 8; k++) {
        uint64_t before = k ? words[k - 1] : s->last_page + CL_PAGE_SIZE == page ? s->last_word : 0;
        if (words[k] != s->interp || !unexplained(s->h, py_heap_find(s->h, before)))
            continue;
        if (!CL_VEC_RESERVE(s->pairs, s->n, s->cap)) {
            s->oom = true;
            break;
        }
        s->pairs[s->n++] = (struct pair){page + 8 * k - 8, before};
        used = true;
    }
    s->last_page = page;
    s->last_word = words[CL_PAGE_SIZE / 8 - 1];
    return used;
}

/* The data of CPU storages and Python buffers of a page or more, which holds no C++ object: on a
 * host of large CPU tensors and datasets, most of the memory a scan would read. */
static struct cl_ranges known_data(struct py_heap *h, const struct torch_tensors *tt)
{
    struct cl_ranges r = {0};
    for (uint32_t k = 0; k < tt->nstorages; k++) {
        const struct torch_storage *st = &tt->storages[k];
        if (st->device_type == TORCH_DEVICE_CPU && st->data && st->nbytes >= CL_PAGE_SIZE)
            cl_ranges_add(&r, st->data, st->data + st->nbytes);
    }
    py_heap_buffers(h, &r);
    cl_ranges_sort(&r);
    return r;
}

/* Memory no file backs (the C heap, threads' arenas and stacks, anonymous mappings): where C++
 * objects live. A core's ranges may carry no permissions; they are read too. */
static bool heap_mapping(const struct cl_mapping *m)
{
    return (!m->path || m->path[0] == '[') && (m->perms == 0 || (m->perms & CL_MAP_W));
}

/* Scans [start, end) less the known data skip (sorted). */
static int scan_range(struct cl_target *t, struct scan *s, uint64_t start, uint64_t end,
                      const struct cl_ranges *skip)
{
    for (size_t k = cl_ranges_first_after(skip, start); k < skip->n && start < end; k++) {
        const struct cl_range *r = &skip->v[k];
        if (r->start >= end)
            break;
        int rc = r->start > start ? cl_target_scan(t, start, r->start, scan_page, s) : 0;
        if (rc)
            return rc;
        start = r->end;
    }
    return start < end ? cl_target_scan(t, start, end, scan_page, s) : 0;
}

static int by_object(const void *a, const void *b)
{
    const struct pair *x = a, *y = b;
    if (x->object != y->object)
        return x->object < y->object ? -1 : 1;
    return (x->at > y->at) - (x->at < y->at);
}

/* The C++ object a pair opens, named by its class: a polymorphic object's vptr right before it
 * (at - 8), or before an intrusive_ptr_target's counts (a PythonKernelHolder, an OperatorKernel:
 * at - 16 from 2.10, whose counts share a word, at - 24 before), or make_shared's control block
 * (std::shared_ptr<c10::SafePyObject>); else the pair itself. */
static void holder_name(struct cl_target *t, uint64_t at, char *out, size_t cap)
{
    char mangled[256], name[CXX_SHORT_NAME];
    for (uint64_t back = 8; back <= 24; back += 8) {
        if (!cxx_class_name(t, at - back, mangled, sizeof mangled))
            continue;
        if (strncmp(mangled, "St23_Sp_counted_ptr_inplace", 27) == 0)
            snprintf(name, sizeof name, "std::shared_ptr<c10::SafePyObject>");
        else
            cxx_short_name(mangled, name, sizeof name);
        snprintf(out, cap, "<%s 0x%llx>", name, (unsigned long long)(at - back));
        return;
    }
    snprintf(out, cap, "<c10::SafePyObject 0x%llx>", (unsigned long long)at);
}

bool torch_safepyobjs_explain(struct py_heap *h, struct torch_tensors *tt)
{
    struct cl_target *t = h->objects.rt->t;
    struct scan s = {.h = h, .interp = find_interpreter(h)};
    if (!s.interp)
        return false; /* no torch Python bindings, or a build without its symbol table */
    struct cl_ranges skip = known_data(h, tt);
    int rc = 0;
    for (size_t k = 0; !rc && !skip.lost && !s.oom && k < t->maps.n; k++)
        if (heap_mapping(&t->maps.v[k]))
            rc = scan_range(t, &s, t->maps.v[k].start, t->maps.v[k].end, &skip);
    if (skip.lost || s.oom)
        cl_note_add(&tt->warnings, "out of memory scanning for the references torch's C++ keeps "
                                   "to Python objects (c10::SafePyObject): they are not explained");
    cl_ranges_free(&skip);
    if (s.n)
        qsort(s.pairs, s.n, sizeof *s.pairs, by_object);
    bool added = false;
    char name[CXX_SHORT_NAME + 32];
    for (size_t k = 0, end; !rc && k < s.n; k = end) {
        uint32_t j = py_heap_find(h, s.pairs[k].object);
        for (end = k; end < s.n && s.pairs[end].object == s.pairs[k].object;)
            end++;
        if (py_books_unexplained(h, j) != (int32_t)(end - k))
            continue; /* a stale pair, or something unseen holds it too */
        for (size_t i = k; i < end; i++) {
            holder_name(t, s.pairs[i].at, name, sizeof name);
            added |= py_books_add_c_ref(h, j, name);
        }
    }
    free(s.pairs);
    return added;
}

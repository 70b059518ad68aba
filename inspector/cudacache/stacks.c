#include "cudacache/stacks.h"

#include <stdlib.h>
#include <string.h>

#include "cpython/frames.h"
#include "cudacache/layout.h"
#include "torch/cxx.h"
#include "util/vec.h"

#define MAX_FRAMES 4096   /* Python frames of one stack: deeper than any recursion limit */
#define NOT_READ (UINT32_MAX - 1)   /* by_context's value for a context that is no stack */

/* A std::vector's [begin, end) of elem-byte items, checked: false when it is not one. */
static bool vector_of(struct cl_target *t, uint64_t at, size_t elem, uint64_t *begin, uint64_t *n)
{
    uint64_t v[3];   /* begin, end, end of storage */
    if (cl_read(t, at, v, sizeof v) || v[0] > v[1] || v[1] > v[2] || (v[1] - v[0]) % elem ||
        (v[0] == 0) != (v[2] == 0))
        return false;
    *begin = v[0];
    *n = (v[1] - v[0]) / elem;
    return true;
}

/* A new site (file and name copied); UINT32_MAX when memory ran out. */
static uint32_t new_site(struct cc_stacks *s, const char *file, const char *name, int line)
{
    if (!CL_VEC_RESERVE(s->sites, s->nsites, s->sites_cap)) {
        s->oom = true;
        return UINT32_MAX;
    }
    struct cc_frame f = {strdup(file), strdup(name), line};
    if (!f.file || !f.name) {
        free(f.file);
        free(f.name);
        s->oom = true;
        return UINT32_MAX;
    }
    s->sites[s->nsites] = f;
    return (uint32_t)s->nsites++;
}

/* The site of a Python frame: code object code at byte offset lasti; UINT32_MAX when code is no
 * readable code object or memory ran out. */
static uint32_t python_site(struct py_objects *o, uint64_t code, int32_t lasti, struct cc_stacks *s)
{
    /* user-space pointers fit in 48 bits, and the offsets of all but the longest functions in
     * 16: one key for both; the rare place past it is just not cached */
    bool cacheable = code < (1ull << 48) && lasti >= -1 && lasti < 0xffff;
    uint64_t key = code | ((uint64_t)(int64_t)lasti + 1) << 48;
    uint32_t i = cacheable ? cl_addrmap_get(&s->by_code, key) : UINT32_MAX;
    struct py_code_location where;
    if (i != UINT32_MAX)
        return i;
    if (!py_code_locate(o, code, lasti, &where))
        return UINT32_MAX;
    i = new_site(s, where.file, where.name, where.line);
    bool inserted;   /* a failed insert only costs making the site again */
    if (cacheable && i != UINT32_MAX)
        (void)cl_addrmap_put(&s->by_code, key, i, &inserted);
    return i;
}

static bool push(struct cc_stacks *s, uint32_t site)
{
    if (site == UINT32_MAX || !CL_VEC_RESERVE(s->frames, s->nframes, s->frames_cap)) {
        s->oom |= site != UINT32_MAX;
        return false;
    }
    s->frames[s->nframes++] = site;
    return true;
}

/* Appends the Python frame (a CapturedTraceback::PyFrame) at at. */
static bool push_python(struct py_objects *o, uint64_t at, struct cc_stacks *s)
{
    uint64_t code;
    int32_t lasti;
    return !cl_read_u64(o->rt->t, at, &code) &&
           !cl_read(o->rt->t, at + CC_PYFRAME_LASTI, &lasti, sizeof lasti) &&
           push(s, python_site(o, code, lasti, s));
}

/* Appends the Python frames of the CapturedTraceback at ctx as a new stack, innermost first (as
 * torch's snapshot lists them when it recorded no C++ frames; when it did, it puts them among
 * those, where its symbolizer's inlined frames say the eval loop ran). False when it is none or
 * cannot be read whole. */
static bool read_stack(struct py_objects *o, uint64_t ctx, struct cc_stacks *s)
{
    struct cl_target *t = o->rt->t;
    char type[64];
    uint64_t py, npy, cpp, ncpp;
    if (!cxx_class_name(t, ctx, type, sizeof type) || strcmp(type, CC_CAPTURED_TRACEBACK) ||
        !vector_of(t, ctx + CC_CT_FRAMES, CC_PYFRAME_SIZE, &py, &npy) || npy > MAX_FRAMES ||
        !vector_of(t, ctx + CC_CT_CPP_FRAMES, sizeof(uint64_t), &cpp, &ncpp))
        return false;
    uint32_t first = (uint32_t)s->nframes;
    bool ok = true;
    for (uint64_t k = 0; ok && k < npy; k++)
        ok = push_python(o, py + k * CC_PYFRAME_SIZE, s);
    if (!ok || !CL_VEC_RESERVE(s->stacks, s->nstacks, s->stacks_cap)) {
        s->nframes = first;   /* a stack is whole or not there */
        s->oom |= ok;
        return false;
    }
    s->cpp_frames += ncpp;
    s->stacks[s->nstacks++] = (struct cc_stack){first, (uint32_t)(s->nframes - first)};
    return true;
}

static void add(struct py_objects *o, uint64_t ctx, struct cc_stacks *s)
{
    if (!ctx || cl_addrmap_get(&s->by_context, ctx) != UINT32_MAX)
        return;
    uint32_t index = (uint32_t)s->nstacks;
    if (!read_stack(o, ctx, s)) {
        s->unreadable++;
        index = NOT_READ;
    }
    bool inserted;
    if (cl_addrmap_put(&s->by_context, ctx, index, &inserted) == UINT32_MAX)
        s->oom = true;
}

void cc_stacks_read(struct py_objects *o, const struct cc_allocator *a, const struct cc_trace *tr,
                    struct cc_stacks *out)
{
    *out = (struct cc_stacks){0};
    for (uint32_t d = 0; d < a->ndevices; d++)
        for (uint32_t b = 0; b < a->devices[d].nblocks; b++) {
            add(o, a->devices[d].blocks[b].context, out);
            add(o, a->devices[d].blocks[b].segment_context, out);
        }
    for (uint32_t d = 0; tr && d < tr->ndevices; d++)
        for (uint32_t i = 0; i < tr->devices[d].n; i++)
            add(o, tr->devices[d].v[i].context, out);
}

const struct cc_stack *cc_stack_at(const struct cc_stacks *s, uint64_t context)
{
    uint32_t i = context ? cl_addrmap_get(&s->by_context, context) : UINT32_MAX;
    return i >= NOT_READ ? NULL : &s->stacks[i];
}

void cc_stacks_free(struct cc_stacks *s)
{
    for (size_t i = 0; i < s->nsites; i++) {
        free(s->sites[i].file);
        free(s->sites[i].name);
    }
    free(s->sites);
    free(s->frames);
    free(s->stacks);
    cl_addrmap_free(&s->by_context);
    cl_addrmap_free(&s->by_code);
    *s = (struct cc_stacks){0};
}

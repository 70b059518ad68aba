#include "cpython/buffers.h"

#include <stdlib.h>
#include <string.h>

#include "target/pagecache.h"

/* A C type whose buffer is a pointer and a length in it, at the same offsets in every supported
 * version (3.8-3.15): PyByteArrayObject {ob_alloc, ob_bytes} after its var head, whatever 3.15
 * added after them; mmap_object {data, size} after its head, whatever follows (72 to 88 bytes
 * as the platform fields came and went). min_size: the least tp_basicsize of the struct. */
static const struct buffer_type {
    const char *name;
    uint16_t min_size, data, length;
} buffer_types[] = {
    {"bytearray", 56, 32, 24},
    {"mmap.mmap", 72, 16, 24},
};

/* A buffer bigger than this is no buffer: a reading gone wrong. */
#define MAX_BUFFER (1ull << 44)

enum { NOT_BUFFER, BYTES, LIST, BUFFER_TYPE };

/* What ty's instances keep beside them: NOT_BUFFER, BYTES, LIST, or BUFFER_TYPE + its row. */
static int kind_of(const struct py_type *ty)
{
    if (ty->family == PY_F_BYTES)
        return BYTES;
    if (ty->family == PY_F_LIST)
        return LIST;
    for (size_t k = 0; k < sizeof buffer_types / sizeof *buffer_types; k++)
        if (strcmp(ty->name, buffer_types[k].name) == 0 &&
            ty->basicsize >= buffer_types[k].min_size)
            return BUFFER_TYPE + (int)k;
    return NOT_BUFFER;
}

/* The words of an object that hold where its buffer is: those of every kind below lie in its
 * first 40 bytes. */
#define HEAD_WORDS 5

/* Object obj's buffer, of a kind other than NOT_BUFFER, into *start and *len: false where it
 * has none, or cannot be read. Its head is read only where the target holds it, so that a dump
 * made before this reader replays (it holds what the walk read): one read an object. */
static bool buffer_of(struct py_objects *o, uint64_t obj, int kind, uint64_t *start, uint64_t *len)
{
    const struct py_layout *l = o->rt->l;
    uint64_t head[HEAD_WORDS];
    if (cl_read_held(o->rt->t, obj, head, sizeof head))
        return false;
    if (kind == BYTES || kind == LIST) {
        uint64_t size = head[l->ob_size / 8];
        *start = kind == BYTES ? obj + l->bytes_data : head[l->list_items / 8];
        *len = kind == BYTES ? size : size * 8;
        return *start && size < MAX_BUFFER / 8;
    }
    const struct buffer_type *b = &buffer_types[kind - BUFFER_TYPE];
    *start = head[b->data / 8];
    *len = head[b->length / 8];
    return *start && *len < MAX_BUFFER;
}

void py_heap_buffers(struct py_heap *h, struct cl_ranges *out)
{
    size_t ntypes = h->objects.ntypes;
    signed char *kinds = malloc(ntypes ? ntypes : 1);   /* by type index; -1 until known */
    if (!kinds) {
        out->lost = true;
        return;
    }
    memset(kinds, -1, ntypes);
    for (uint32_t i = 0; i < h->n; i++) {
        uint32_t type = h->nodes[i].type;
        if (type >= ntypes)
            continue;
        if (kinds[type] < 0)
            kinds[type] = (signed char)kind_of(h->objects.types[type]);
        uint64_t start, len;
        if (kinds[type] != NOT_BUFFER &&
            buffer_of(&h->objects, h->nodes[i].addr, kinds[type], &start, &len) &&
            len >= CL_PAGE_SIZE && start + len > start)
            cl_ranges_add(out, start, start + len);
    }
    free(kinds);
}

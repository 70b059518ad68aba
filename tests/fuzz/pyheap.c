/* libFuzzer harness for the CPython object-graph walk (cpython/heap.c, and beneath it
 * referents.c, frames.c, object.c, gclist.c) over the hand-built fixture image of the unit tests
 * (tests/unit/cpython/heap_fixture.h, a fixture, not a real interpreter). The input is a list of
 * patches to the image, so the fuzzer starts from a heap that walks and corrupts it: byte 0 picks
 * the layout table the image is laid out with (and read with), then each 11 bytes are a patch:
 * a kind, an offset (16-bit, within the image) and 8 bytes (little-endian) of which the kind
 * writes the first 8, 4 or 1, or, as a pointer into the image, PF_BASE plus the first 2 (random
 * words seldom point anywhere; a pointer patch makes aliases, cycles and dangling links in one
 * step). The walk runs as the session
 * runs it (py_heap_build with a small --max-objects, then the note of what it skipped), then
 * every node's path is rendered. It must end with a status, never crash, hang or leak; a graph it
 * builds must be consistent: reachable nodes first, each reached from an earlier node or a root,
 * every edge within the graph. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/heap.h"
#include "cpython/heap_fixture.h"
#include "cpython/referents.h"

#define PATCH 11
#define MAX_OBJECTS 256   /* the scene has under 100: room for what patches conjure */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const layouts[] = {"3.11", "3.12", "3.13.0"};

static struct pf P;   /* large, and rebuilt every run */

static void check(const struct py_heap *h)
{
    if (h->nreachable > h->n || h->n > MAX_OBJECTS || h->nroots == 0)
        abort();
    for (uint32_t i = 0; i < h->n; i++) {
        const struct py_node *nd = &h->nodes[i];
        if (i < h->nreachable &&
            (nd->root >= h->nroots || (nd->parent != PY_NO_NODE && nd->parent >= i)))
            abort();   /* breadth-first: a parent was found, and expanded, before its child */
        if (i >= h->nreachable && nd->root != PY_NO_NODE)
            abort();
        if (h->edges.of[i].first > h->edges.of[i + 1].first ||
            h->edges.of[i + 1].first > h->edges.n)
            abort();
    }
    for (uint32_t i = 0; i < h->n; i++)   /* a class edge too: to its type's node, if any */
        for (uint32_t p = 0; p < py_node_nedges(h, i); p++)
            if (py_edge_dst(h, py_node_edge(h, i, p)) >= h->n)
                abort();
    for (size_t k = 0; k < h->nroot_edges; k++)
        if (h->root_edges[k].root >= h->nroots || h->root_edges[k].dst >= h->n)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *layout = layouts[size ? data[0] % (sizeof layouts / sizeof *layouts) : 0];
    if (!pf_build(&P, layout))
        abort();   /* the fixture no longer fits its own image */
    for (size_t at = 1; at + PATCH <= size; at += PATCH) {
        static const size_t width[4] = {8, 4, 1, 8};
        uint16_t off, to;
        uint8_t v[8];
        memcpy(&off, data + at + 1, sizeof off);
        memcpy(v, data + at + 3, sizeof v);
        if ((data[at] & 3) == 3) {
            memcpy(&to, v, sizeof to);
            uint64_t ptr = PF_BASE + to % PF_SIZE;
            memcpy(v, &ptr, sizeof ptr);
        }
        memcpy(pf_img + off % (sizeof pf_img - 7), v, width[data[at] & 3]);
    }
    struct cl_target *t = pf_target(&P);
    if (!t)
        abort();
    struct py_walk_options opt = {.max_objects = MAX_OBJECTS};
    struct py_heap h;
    struct cl_error err = {0};
    if (py_heap_build(&P.rt, &opt, &h, &err) == 0) {
        py_referents_note_skipped(&h.objects, &h.warnings);
        check(&h);
        char path[4096];
        for (uint32_t i = 0; i < h.n; i++)
            if (py_heap_path(&h, i, path, sizeof path) != (i < h.nreachable))
                abort();
        static char paths[4][4096];
        for (uint32_t i = 0; i < h.nreachable && i < 8; i++)
            (void)py_heap_paths(&h, i, 4, paths);   /* other referrers' paths too */
        py_heap_free(&h);
    }
    cl_target_close(t);
    return 0;
}

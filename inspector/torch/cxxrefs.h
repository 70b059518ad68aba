/* References that torch's C++ keeps to Python objects, read where a layout says they are, and
 * taken into the books the way a library's static word is: an object's only where they are
 * exactly as many as its references not explained (else a word is borrowed, or something unseen
 * holds the object too, and none is taken). Each is a C reference with a name of its own. */
#ifndef CULEAK_TORCH_CXXREFS_H
#define CULEAK_TORCH_CXXREFS_H

#include <stdbool.h>
#include <stdint.h>

#include "cpython/heap.h"

struct cxx_refs {
    struct cxx_ref {
        uint64_t object;
        char *name;
    } *v;
    size_t n, cap;
    bool oom; /* one was lost: none is taken */
};

/* Adds a reference to object, named by fmt. */
void cxx_refs_add(struct cxx_refs *r, uint64_t object, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Moves src's references into r, emptying src. */
void cxx_refs_take(struct cxx_refs *r, struct cxx_refs *src);
/* Takes into h's books each object's references, with the libraries' static words to it that the
 * build left (h->statics_left), where they are exactly as many as its references not explained
 * (py_books_add_c_ref), then frees r; true when any was taken, for the caller to
 * split what no root reaches again (py_books_resplit). */
bool cxx_refs_confirm(struct py_heap *h, struct cxx_refs *r);
void cxx_refs_free(struct cxx_refs *r);

#endif

/* References held by the static data of the libraries a process loaded (C extensions, torch's
 * libraries), which no walk of objects sees: a C extension keeps an object it made once (an
 * interned name, a type, a cache, torch's dtype registry) in a global. Every aligned word of each
 * library's .data and .bss that points at the start of an object, outside the static types the
 * heap holds there, may be such a reference: an object of the heap, or one the walk has not met
 * (untracked, on no GC list), which the heap then walks too. The interpreter's own are left to the
 * walk's roots and rules: its state is full of addresses it holds no reference to (free lists,
 * caches, a thread's last call), and one such word once matched the count of a list leaked by a
 * Py_IncRef (test_books) as well as a reference would.
 * The balance decides, per object: where the words that point at it are exactly as many as its
 * references not explained, each becomes a root named after the library and the word (its symbol
 * where the library says, `<static_refs.so: kept>`); otherwise none does (a stale or borrowed
 * word, something unseen holding it too), and the object stays held from C with its count
 * unexplained. */
#ifndef CULEAK_CPYTHON_STATICS_H
#define CULEAK_CPYTHON_STATICS_H

#include <stddef.h>
#include <stdint.h>

#include "cpython/heap.h"

/* Bounds the scan: a library's section past this is read only this far, with a warning. */
#define PY_STATICS_MAX_SECTION (256u << 20)

/* Bounds the count of an object a word may point at: past it, the word points at no object. */
#define PY_STATICS_MAX_REFCNT (1ull << 32)

/* A word of a library's static data, at `at`, that points at the start of an object: a node of
 * the heap, or one the walk has not met (an untracked object only C holds: a Cython module's
 * code objects and constant tuples), which py_heap_build adds to the heap. */
struct py_static_word {
    uint64_t at;
    uint64_t object;
};

/* Every such word, in address order (*out malloc'ed; none where the symbols are not known). 0,
 * or CL_E_INTERNAL when out of memory. Pages the target left out (target.h) are not read. */
int py_statics_find(struct py_heap *h, struct py_static_word **out, size_t *n);
/* The root name of the word at `at`: `<libfoo.so: symbol+0x8>`, or `<libfoo.so+0x1234>` (its
 * address in the library's file) where no symbol holds it. */
void py_static_name(const struct py_heap *h, uint64_t at, char *buf, size_t cap);

#endif

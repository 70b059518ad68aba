/* The books of a heap: each object's reference count against the references the walk found to
 * it, and, the way CPython's collector decides, which of the objects no root reaches are garbage
 * (their every reference is explained by others of them) and which something outside the walk
 * holds (references not explained, or a reference the interpreter's C state holds). */
#ifndef CULEAK_CPYTHON_BALANCE_H
#define CULEAK_CPYTHON_BALANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpython/heap.h"

/* One rule of the count, per version: where CPython's reference counts differ from the strong
 * references a walk finds, and what culeak does about it. Most are kept by the readers (an edge
 * they do not emit, or emit uncounted); the balance applies the rest. */
struct py_books_rule {
    unsigned first, last;     /* 3.first to 3.last */
    const char *rule;         /* what holds, and what culeak does */
    const char *source;       /* where CPython says so */
};

/* The rules, in the order `culeak balance` lists them. */
const struct py_books_rule *py_books_rules(size_t *n);
/* Whether rule k applies to the 3.minor runtime. */
bool py_books_rule_applies(const struct py_books_rule *r, unsigned minor);

/* An object's count from its ob_refcnt word as read, or PY_UNBALANCED for an object whose count
 * means nothing (immortal). */
int32_t py_books_refcnt(const struct py_layout *l, uint64_t word);

/* The balance of a built heap, in two steps. py_books_count counts every reference the walk
 * found off its target's count (false without counts: none was read for lack of memory). Then
 * py_books_confirm takes an inferred reference (a running frame's stack slot) off node i's count
 * when a reference is left unexplained to take, else refuses it. py_books_split then splits
 * what no root reaches into garbage and held; false when out of memory (h->books.done stays
 * false, and nothing no root reaches is called garbage). */
bool py_books_count(struct py_heap *h);
bool py_books_confirm(struct py_heap *h, uint32_t i);
bool py_books_split(struct py_heap *h);
/* A reference from C that a reader after the walk finds (a TensorImpl's to its Python object:
 * torch/tensors.c), for node i: off its count and named as the walk's own C references are. Then
 * py_books_resplit splits what no root reaches again, with all of them. False when out of
 * memory (the books stay as they were). */
bool py_books_add_c_ref(struct py_heap *h, uint32_t i, const char *name);
bool py_books_resplit(struct py_heap *h);
void py_books_free(struct py_books *b);

/* For node i, which no root reaches: the node whose references hold it (itself included), or
 * PY_NO_NODE when it is garbage. Without books (out of memory) every such node holds itself. */
uint32_t py_books_held_from(const struct py_heap *h, uint32_t i);
/* The name of the C reference that holds node i (no root reaches it), or NULL when none does
 * (then references not explained hold it, or it is garbage). */
const char *py_books_c_holder(const struct py_heap *h, uint32_t i);
/* Whether gc.collect() under gc.DEBUG_SAVEALL would put node i in gc.garbage: tracked, and
 * unreachable as the collector computes it, over tracked objects alone. */
bool py_books_collectable(const struct py_heap *h, uint32_t i);
/* Node i's references not explained: 0 when all are, or when its count is not balanced. */
static inline int32_t py_books_unexplained(const struct py_heap *h, uint32_t i)
{
    int32_t u = h->books.unexplained[i];
    return u == PY_UNBALANCED || u < 0 ? 0 : u;
}

#endif

/* Growable arrays: one helper instead of a realloc per call site. Arrays double, so appending n
 * elements costs O(n) copies in all. */
#ifndef CULEAK_UTIL_VEC_H
#define CULEAK_UTIL_VEC_H

#include <stdbool.h>
#include <stddef.h>

/* Grows *p (elements of elem bytes, *cap of them) to hold at least one more; false on allocation
 * failure (then *p and *cap are unchanged). */
bool cl_vec_grow(void **p, size_t *cap, size_t elem);

/* Resizes *p to exactly cap elements of elem bytes; false on allocation failure (then *p is
 * unchanged). For an array kept in step with one cl_vec_grow grows: parallel arrays share that
 * one's capacity. */
bool cl_vec_resize(void **p, size_t cap, size_t elem);

/* Makes room for one more element of p (n used, cap allocated); false on allocation failure. */
#define CL_VEC_RESERVE(p, n, cap) ((n) < (cap) || cl_vec_grow((void **)&(p), &(cap), sizeof *(p)))

#endif

/* Sets of address ranges, sorted and merged once built, asked whether they hold an address: the
 * memory a scan leaves out (tensor data, libraries' sections) or reads as known (objects). */
#ifndef CULEAK_UTIL_RANGES_H
#define CULEAK_UTIL_RANGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cl_range {
    uint64_t start, end; /* [start, end) */
};

struct cl_ranges {
    struct cl_range *v;
    size_t n, cap;
    bool lost; /* an add ran out of memory: the set lacks a range */
};

/* Appends [start, end); false when out of memory (then lost is set). */
bool cl_ranges_add(struct cl_ranges *r, uint64_t start, uint64_t end);
/* Sorts by start and merges those that overlap or touch: what cl_ranges_contain needs. */
void cl_ranges_sort(struct cl_ranges *r);
/* Whether a sorted set holds addr. */
bool cl_ranges_contain(const struct cl_ranges *r, uint64_t addr);
/* The index of the first range of a sorted set that ends after addr (r->n if none). */
size_t cl_ranges_first_after(const struct cl_ranges *r, uint64_t addr);
void cl_ranges_free(struct cl_ranges *r);

#endif

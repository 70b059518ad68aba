/* `culeak balance`: the heap's books (cpython/balance.h). Every object's reference count against
 * the references culeak found, by type; what no root reaches, split as the collector would into
 * garbage and what C holds; and the rules the count follows on this runtime. */
#ifndef CULEAK_REPORT_BALANCE_H
#define CULEAK_REPORT_BALANCE_H

#include <stdbool.h>
#include <stdio.h>

#include "cpython/heap.h"
#include "report/warnings.h"

/* 0, or CL_E_INTERNAL (out of memory) before anything is written. top cuts both lists (0: all). */
int cl_report_balance(FILE *out, struct py_heap *h, size_t top, bool json,
                      const struct cl_report_notes *w, struct cl_error *err);

/* Why node i, which no root reaches, stays or goes, in words: garbage (gc.collect() would free
 * it), or what holds it from C. */
void cl_unreached_text(const struct py_heap *h, uint32_t i, char *out, size_t cap);

#endif

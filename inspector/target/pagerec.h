/* The pages a target served while `culeak dump` ran: each page once, with its bytes or the
 * status its read failed with, so that the dump answers every read the same way. Fed from the
 * page cache's fill (target.c), so only reads that reached the memory source are seen. */
#ifndef CULEAK_TARGET_PAGEREC_H
#define CULEAK_TARGET_PAGEREC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/addrmap.h"

struct cl_pagerec_entry {
    uint64_t addr;          /* page-aligned */
    int status;             /* 0, or the cl_status its read failed with */
    uint32_t data;          /* index of its bytes in pages (status 0 only) */
};

struct cl_pagerec {
    struct cl_addrmap index;        /* page number (number key) -> entry */
    struct cl_pagerec_entry *v;
    size_t n, cap;
    unsigned char *pages;           /* CL_PAGE_SIZE bytes per page read */
    size_t npages, pages_cap;
    bool oom;                       /* a page could not be kept: the dump would lack it */
};

/* Keeps the page at addr (a page the source filled) unless it is already kept. */
void cl_pagerec_add(struct cl_pagerec *r, uint64_t addr, int status, const void *page);
/* Zeros the len bytes at addr in the pages kept (before sorting them): a part of a page that must
 * not leave the machine (dump --redact). */
void cl_pagerec_zero(struct cl_pagerec *r, uint64_t addr, uint64_t len);
/* The entries sorted by address (the order the dump stores them in). */
void cl_pagerec_sort(struct cl_pagerec *r);
const unsigned char *cl_pagerec_data(const struct cl_pagerec *r, const struct cl_pagerec_entry *e);
void cl_pagerec_free(struct cl_pagerec *r);

#endif

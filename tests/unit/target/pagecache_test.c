/* The page cache, over a fake page source: a byte array of NPAGES pages at BASE, one of which
 * fails to read. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "suites.h"
#include "target/pagecache.h"
#include "testutil.h"
#include "util/error.h"

#define NPAGES 64u
#define BASE 0x7f0000000000ull

struct fake_source {
    unsigned char mem[NPAGES * CL_PAGE_SIZE];
    uint64_t bad_page;          /* this page fails with CL_E_IO */
    unsigned calls;             /* fill calls in all */
    unsigned per_page[NPAGES];  /* fill calls per page */
    bool anywhere;              /* any address reads as its page number, for the wrap tests */
};

static struct fake_source src;

static int fake_fill(void *source, uint64_t addr, void *page)
{
    struct fake_source *s = source;
    s->calls++;
    CU_ASSERT_EQUAL(addr % CL_PAGE_SIZE, 0);
    if (s->anywhere) {
        memset(page, (int)((addr >> 12) & 0xff), CL_PAGE_SIZE);
        return 0;
    }
    if (addr < BASE || addr - BASE >= sizeof s->mem)
        return CL_E_UNREADABLE;
    size_t pn = (size_t)((addr - BASE) / CL_PAGE_SIZE);
    s->per_page[pn]++;
    if (addr == s->bad_page)
        return CL_E_IO;
    memcpy(page, s->mem + (addr - BASE), CL_PAGE_SIZE);
    return 0;
}

static void reset_source(void)
{
    memset(&src, 0, sizeof src);
    for (size_t i = 0; i < sizeof src.mem; i++)
        src.mem[i] = (unsigned char)(i * 31u + i / CL_PAGE_SIZE);
    src.bad_page = BASE + 5 * CL_PAGE_SIZE;
}

static void test_init_sizes(void)
{
    const size_t cases[][2] = {{0, 1},  {4, 1},  {7, 1},       {8, 2},
                               {15, 2}, {16, 4}, {4096, 1024}, {5000, 1024}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct cl_pagecache c;
        CU_ASSERT_EQUAL_FATAL(cl_pagecache_init(&c, cases[i][0], fake_fill, &src), 0);
        CU_ASSERT_EQUAL(c.nsets, cases[i][1]);
        CU_ASSERT_EQUAL(c.hits, 0);
        CU_ASSERT_EQUAL(c.misses, 0);
        cl_pagecache_free(&c);
        CU_ASSERT_PTR_NULL(c.slots);
    }
}

static void test_read_spanning_pages(void)
{
    reset_source();
    struct cl_pagecache c;
    CU_ASSERT_EQUAL_FATAL(cl_pagecache_init(&c, 64, fake_fill, &src), 0);
    unsigned char buf[3 * CL_PAGE_SIZE];
    uint64_t at = BASE + CL_PAGE_SIZE - 50;
    CU_ASSERT_EQUAL(cl_pagecache_read(&c, at, buf, 100), 0);
    CU_ASSERT_EQUAL(memcmp(buf, src.mem + CL_PAGE_SIZE - 50, 100), 0);
    CU_ASSERT_EQUAL(src.calls, 2);
    CU_ASSERT_EQUAL(c.misses, 2);
    CU_ASSERT_EQUAL(c.hits, 0);

    /* again: no fill, two hits */
    memset(buf, 0, sizeof buf);
    CU_ASSERT_EQUAL(cl_pagecache_read(&c, at, buf, 100), 0);
    CU_ASSERT_EQUAL(memcmp(buf, src.mem + CL_PAGE_SIZE - 50, 100), 0);
    CU_ASSERT_EQUAL(src.calls, 2);
    CU_ASSERT_EQUAL(c.hits, 2);

    /* more than two pages, unaligned at both ends: pages 1..4, of which 1 is cached */
    CU_ASSERT_EQUAL(cl_pagecache_read(&c, BASE + CL_PAGE_SIZE + 7, buf, sizeof buf), 0);
    CU_ASSERT_EQUAL(memcmp(buf, src.mem + CL_PAGE_SIZE + 7, sizeof buf), 0);
    CU_ASSERT_EQUAL(src.calls, 5);
    CU_ASSERT_EQUAL(c.misses, 5);
    CU_ASSERT_EQUAL(c.hits, 3);

    /* zero bytes: nothing happens */
    CU_ASSERT_EQUAL(cl_pagecache_read(&c, 0, buf, 0), 0);
    CU_ASSERT_EQUAL(src.calls, 5);

    /* clear drops everything */
    cl_pagecache_clear(&c);
    CU_ASSERT_EQUAL(cl_pagecache_read(&c, at, buf, 1), 0);
    CU_ASSERT_EQUAL(src.calls, 6);
    cl_pagecache_free(&c);
}

static void test_failure_is_cached(void)
{
    reset_source();
    struct cl_pagecache c;
    CU_ASSERT_EQUAL_FATAL(cl_pagecache_init(&c, 64, fake_fill, &src), 0);
    unsigned char buf[16];
    CU_ASSERT_EQUAL(cl_pagecache_read(&c, src.bad_page + 8, buf, 8), CL_E_IO);
    CU_ASSERT_EQUAL(src.per_page[5], 1);
    CU_ASSERT_EQUAL(cl_pagecache_read(&c, src.bad_page + 100, buf, 8), CL_E_IO);
    CU_ASSERT_EQUAL(src.per_page[5], 1);   /* the failure came from the cache */
    CU_ASSERT_EQUAL(c.hits, 1);
    CU_ASSERT_EQUAL(c.misses, 1);

    /* a read that runs from a good page into the bad one fails as a whole */
    CU_ASSERT_EQUAL(cl_pagecache_read(&c, src.bad_page - 4, buf, 8), CL_E_IO);
    CU_ASSERT_EQUAL(src.per_page[4], 1);
    CU_ASSERT_EQUAL(src.per_page[5], 1);
    /* outside the source */
    CU_ASSERT_EQUAL(cl_pagecache_read(&c, 0x1000, buf, 8), CL_E_UNREADABLE);
    cl_pagecache_free(&c);
}

static void test_lru_eviction(void)
{
    reset_source();
    struct cl_pagecache c;
    CU_ASSERT_EQUAL_FATAL(cl_pagecache_init(&c, CL_CACHE_WAYS, fake_fill, &src), 0);
    CU_ASSERT_EQUAL_FATAL(c.nsets, 1);   /* one set: every page competes for the same 4 ways */
    unsigned char b;
#define TOUCH(pn) CU_ASSERT_EQUAL(cl_pagecache_read(&c, BASE + (pn) * CL_PAGE_SIZE, &b, 1), 0)
    TOUCH(0);
    TOUCH(1);
    TOUCH(2);
    TOUCH(3);
    TOUCH(0);                       /* 0 becomes the most recent; 1 is now the oldest */
    CU_ASSERT_EQUAL(c.hits, 1);
    TOUCH(6);                       /* evicts 1 */
    TOUCH(0);
    TOUCH(2);
    TOUCH(3);
    CU_ASSERT_EQUAL(c.hits, 4);
    CU_ASSERT_EQUAL(src.per_page[0], 1);
    CU_ASSERT_EQUAL(src.per_page[2], 1);
    CU_ASSERT_EQUAL(src.per_page[3], 1);
    TOUCH(1);                       /* read again; evicts 6, the oldest */
    CU_ASSERT_EQUAL(src.per_page[1], 2);
    TOUCH(6);
    CU_ASSERT_EQUAL(src.per_page[6], 2);
    CU_ASSERT_EQUAL(c.misses, 7);
    CU_ASSERT_EQUAL(src.calls, c.misses);
#undef TOUCH
    cl_pagecache_free(&c);
}

static void test_many_pages_many_sets(void)
{
    reset_source();
    src.bad_page = UINT64_MAX;
    struct cl_pagecache c;
    CU_ASSERT_EQUAL_FATAL(cl_pagecache_init(&c, 16, fake_fill, &src), 0);   /* 4 sets x 4 ways */
    unsigned char b;
    for (int pass = 0; pass < 3; pass++)
        for (unsigned pn = 0; pn < NPAGES; pn++) {
            CU_ASSERT_EQUAL(cl_pagecache_read(&c, BASE + pn * CL_PAGE_SIZE + pn, &b, 1), 0);
            CU_ASSERT_EQUAL(b, src.mem[pn * CL_PAGE_SIZE + pn]);
        }
    /* 64 pages cycled through 16 slots: every access is a miss, and each miss one fill */
    CU_ASSERT_EQUAL(c.hits + c.misses, 3 * NPAGES);
    CU_ASSERT_EQUAL(src.calls, c.misses);
    CU_ASSERT(c.misses > 2 * NPAGES);
    /* at most 16 pages stay cached: re-reading the last 16 touched costs nothing only if cached */
    unsigned before = src.calls;
    for (unsigned pn = 0; pn < NPAGES; pn++)
        cl_pagecache_read(&c, BASE + pn * CL_PAGE_SIZE, &b, 1);
    CU_ASSERT(src.calls - before >= NPAGES - 16);
    cl_pagecache_free(&c);
}

static void test_wrap_around(void)
{
    reset_source();
    src.anywhere = true;
    struct cl_pagecache c;
    CU_ASSERT_EQUAL_FATAL(cl_pagecache_init(&c, 8, fake_fill, &src), 0);
    unsigned char buf[32];
    /* ending exactly at the top of the address space is fine */
    CU_ASSERT_EQUAL(cl_pagecache_read(&c, UINT64_MAX - 9, buf, 10), 0);
    CU_ASSERT_EQUAL(buf[9], 0xff);
    /* going past it is not, even though the page at 0 would read */
    CU_ASSERT_EQUAL(cl_pagecache_read(&c, UINT64_MAX - 9, buf, 20), CL_E_UNREADABLE);
    cl_pagecache_free(&c);
}

void register_target_pagecache_tests(void)
{
    static const struct tu_test tests[] = {
        {"init rounds sizes", test_init_sizes},
        {"reads spanning pages, hits and misses", test_read_spanning_pages},
        {"failures are cached", test_failure_is_cached},
        {"LRU eviction within a set", test_lru_eviction},
        {"more pages than capacity", test_many_pages_many_sets},
        {"wrap-around at the top", test_wrap_around},
        {NULL, NULL},
    };
    tu_add_suite("target/pagecache", tests);
}

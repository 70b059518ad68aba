/* The copy of a live process's changing memory: which mappings it takes, bulk reads with pages
 * that fail, and a process that goes away while it is copied. The source is a fake reader over a
 * buffer (a test double for process_vm_readv); the integration tests copy real processes. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "lib_fixture.h"
#include "suites.h"
#include "target/freeze.h"
#include "target/pagecache.h"
#include "testutil.h"
#include "util/error.h"

#define BASE 0x10000000ull
#define PAGES 600   /* more than one chunk (256 pages) */

struct fake_memory {
    unsigned char bytes[PAGES * CL_PAGE_SIZE];
    uint64_t bad_page[3];   /* addresses whose pages cannot be read, or 0 */
    uint64_t gone_after;    /* reads allowed before the process "goes away"; 0: never */
    atomic_uint reads;      /* atomic: the copy may read in threads */
    atomic_uint_fast64_t pages_read; /* by every read */
    uint64_t untouched[2];  /* pages [from, to) the page tables say were never touched */
    uint64_t file_pages[2]; /* pages [from, to) present and still the file's, never written */
    bool no_pagemap;        /* the page tables cannot be read */
    const char *file;       /* what open_file opens, or NULL: it cannot */
    unsigned opens;         /* of it */
};

/* Reads as process_vm_readv does: the bytes up to the first page that fails. */
static long fake_read(void *source, uint64_t addr, void *buf, size_t len)
{
    struct fake_memory *m = source;
    if (m->gone_after && ++m->reads > m->gone_after)
        return -ESRCH;
    if (addr < BASE || addr + len > BASE + sizeof m->bytes)
        return -EFAULT;
    size_t n = len;
    for (size_t i = 0; i < 3; i++)
        if (m->bad_page[i] && m->bad_page[i] >= addr && m->bad_page[i] < addr + n)
            n = (size_t)(m->bad_page[i] - addr);
    if (n == 0)
        return -EFAULT;
    memcpy(buf, m->bytes + (addr - BASE), n);
    m->pages_read += n / CL_PAGE_SIZE;
    return (long)n;
}

static long fake_pagemap(void *source, uint64_t addr, size_t npages, uint64_t *out)
{
    struct fake_memory *m = source;
    if (m->no_pagemap)
        return -EACCES;
    for (size_t i = 0; i < npages; i++) {
        uint64_t page = (addr - BASE) / CL_PAGE_SIZE + i;
        bool untouched = page >= m->untouched[0] && page < m->untouched[1],
             file = page >= m->file_pages[0] && page < m->file_pages[1];
        /* present (the file's, or written), or swapped */
        out[i] = untouched ? 0 : file ? 5ull << 61 : page % 2 ? 1ull << 63 : 1ull << 62;
    }
    return (long)npages;
}

static int fake_open(void *source, const struct cl_mapping *m)
{
    (void)m;
    struct fake_memory *fm = source;
    fm->opens++;
    return fm->file ? open(fm->file, O_RDONLY | O_CLOEXEC) : -1;
}

/* The plan, then the copy, from m. */
/* cl_frozen_page's answer as one value: its status where the copy holds addr, else NOT_HELD. */
#define NOT_HELD (-1)
static int page_status(struct cl_frozen *f, uint64_t addr, void *page)
{
    bool held;
    int rc = cl_frozen_page(f, addr, page, &held);
    return held ? rc : NOT_HELD;
}

static int freeze_in(struct cl_frozen *f, const struct cl_mappings *ms, struct fake_memory *m,
                     unsigned threads)
{
    struct cl_freeze_source src = {fake_read, fake_pagemap, fake_open, m, threads};
    int rc = cl_freeze_plan(f, ms, &src, NULL);
    return rc ? rc : cl_freeze_copy(f, &src);
}

static int freeze(struct cl_frozen *f, const struct cl_mappings *ms, struct fake_memory *m)
{
    return freeze_in(f, ms, m, 1);
}

static struct fake_memory *fake_new(void)
{
    static struct fake_memory m;
    memset(&m, 0, sizeof m);
    for (size_t i = 0; i < sizeof m.bytes; i++)
        m.bytes[i] = (unsigned char)(i * 7 + i / CL_PAGE_SIZE);
    m.file_pages[0] = 300, m.file_pages[1] = 310;   /* three_mappings' read-only one */
    return &m;
}

static void test_wants(void)
{
    struct cl_mapping anon = {.start = BASE, .end = BASE + 4096, .perms = CL_MAP_R | CL_MAP_W};
    CU_ASSERT(cl_freeze_wants(&anon));
    struct cl_mapping ro_anon = {.start = BASE, .end = BASE + 4096, .perms = CL_MAP_R};
    CU_ASSERT(cl_freeze_wants(&ro_anon));   /* anonymous: mprotect may make it writable again */
    struct cl_mapping heap = {
        .start = BASE, .end = BASE + 4096, .perms = CL_MAP_R | CL_MAP_W, .path = "[heap]"};
    CU_ASSERT(cl_freeze_wants(&heap));
    struct cl_mapping stack = {
        .start = BASE, .end = BASE + 4096, .perms = CL_MAP_R | CL_MAP_W, .path = "[stack]"};
    CU_ASSERT(cl_freeze_wants(&stack));
    struct cl_mapping data = {.start = BASE,
                              .end = BASE + 4096,
                              .perms = CL_MAP_R | CL_MAP_W,
                              .path = "/usr/lib/libpython.so"};
    CU_ASSERT(cl_freeze_wants(&data));
    /* read-only: the process may die before the walk reads them (from the file, see below) */
    struct cl_mapping text = {.start = BASE,
                              .end = BASE + 4096,
                              .perms = CL_MAP_R | CL_MAP_X,
                              .path = "/usr/lib/libpython.so"};
    CU_ASSERT(cl_freeze_wants(&text));
    struct cl_mapping rodata = {
        .start = BASE, .end = BASE + 4096, .perms = CL_MAP_R, .path = "/usr/lib/libpython.so"};
    CU_ASSERT(cl_freeze_wants(&rodata));
    struct cl_mapping shared = {.start = BASE,
                                .end = BASE + 4096,
                                .perms = CL_MAP_R | CL_MAP_W | CL_MAP_SHARED,
                                .path = "/memfd:device (deleted)"};
    CU_ASSERT(!cl_freeze_wants(&shared));
    struct cl_mapping device = {
        .start = BASE, .end = BASE + 4096, .perms = CL_MAP_R | CL_MAP_W, .path = "/dev/nvidia0"};
    CU_ASSERT(!cl_freeze_wants(&device));
    struct cl_mapping zero = {
        .start = BASE, .end = BASE + 4096, .perms = CL_MAP_R | CL_MAP_W, .path = "/dev/zero"};
    CU_ASSERT(cl_freeze_wants(&zero));
    struct cl_mapping vvar = {
        .start = BASE, .end = BASE + 4096, .perms = CL_MAP_R, .path = "[vvar]"};
    CU_ASSERT(!cl_freeze_wants(&vvar));
    struct cl_mapping guard = {.start = BASE, .end = BASE + 4096};
    CU_ASSERT(!cl_freeze_wants(&guard));
}

/* Two wanted mappings around a read-only file mapping of the file's pages, which the copy
 * leaves out where the file cannot be opened (the fake's, unless it names one). */
static void three_mappings(struct cl_mappings *ms)
{
    struct cl_mapping v[] = {
        {.start = BASE, .end = BASE + 300 * CL_PAGE_SIZE, .perms = CL_MAP_R | CL_MAP_W},
        {.start = BASE + 300 * CL_PAGE_SIZE,
         .end = BASE + 310 * CL_PAGE_SIZE,
         .perms = CL_MAP_R,
         .path = "/lib/x.so"},
        {.start = BASE + 310 * CL_PAGE_SIZE,
         .end = BASE + PAGES * CL_PAGE_SIZE,
         .perms = CL_MAP_R | CL_MAP_W,
         .path = "[heap]"},
    };
    memset(ms, 0, sizeof *ms);
    for (size_t i = 0; i < 3; i++)
        CU_ASSERT_EQUAL_FATAL(cl_mappings_add(ms, &v[i]), 0);
}

/* The copy of three_mappings over fake memory whose page 400 cannot be read; the memory. */
static struct fake_memory *frozen_three(struct cl_frozen *f, struct cl_mappings *ms)
{
    struct fake_memory *m = fake_new();
    m->bad_page[0] = BASE + 400 * CL_PAGE_SIZE;
    three_mappings(ms);
    CU_ASSERT_EQUAL_FATAL(freeze(f, ms, m), 0);
    return m;
}

static void test_copy_and_pages(void)
{
    struct cl_mappings ms;
    struct cl_frozen f;
    struct fake_memory *m = frozen_three(&f, &ms);
    CU_ASSERT_EQUAL(f.n, 2);
    CU_ASSERT_EQUAL(f.bytes, (uint64_t)(PAGES - 10) * CL_PAGE_SIZE);
    /* the process changes after the copy: the copy does not */
    unsigned char before[CL_PAGE_SIZE], page[CL_PAGE_SIZE];
    memcpy(before, m->bytes + 599 * CL_PAGE_SIZE, CL_PAGE_SIZE);
    memset(m->bytes, 0xee, sizeof m->bytes);
    CU_ASSERT_EQUAL(page_status(&f, BASE + 599 * CL_PAGE_SIZE, page), 0);
    CU_ASSERT(memcmp(page, before, CL_PAGE_SIZE) == 0);
    CU_ASSERT_EQUAL(page_status(&f, BASE, page), 0);
    CU_ASSERT_EQUAL(page[1], 7);
    /* pages of the chunk after the one that failed were still copied, one by one */
    CU_ASSERT_EQUAL(page_status(&f, BASE + 401 * CL_PAGE_SIZE, page), 0);
    CU_ASSERT_EQUAL(page[0], (unsigned char)(401 * CL_PAGE_SIZE * 7 + 401));
    CU_ASSERT_EQUAL(page_status(&f, BASE + 400 * CL_PAGE_SIZE, page), CL_E_UNREADABLE);
    CU_ASSERT_EQUAL(page_status(&f, BASE + 399 * CL_PAGE_SIZE, page), 0);
    /* what the copy leaves out, and what is not mapped at all */
    CU_ASSERT_EQUAL(page_status(&f, BASE + 305 * CL_PAGE_SIZE, page), NOT_HELD);
    CU_ASSERT_EQUAL(page_status(&f, BASE - CL_PAGE_SIZE, page), NOT_HELD);
    CU_ASSERT_EQUAL(page_status(&f, BASE + PAGES * CL_PAGE_SIZE, page), NOT_HELD);
    cl_frozen_free(&f);
    CU_ASSERT_EQUAL(f.n, 0);
    cl_mappings_free(&ms);
}

/* The span of a read address, checked against the region's start and length. */
static void check_span(struct cl_frozen *f, uint64_t addr, uint64_t start_page, uint64_t pages)
{
    uint64_t start = 0, len = 0;
    const unsigned char *p = cl_frozen_span(f, addr, &start, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_EQUAL(start, BASE + start_page * CL_PAGE_SIZE);
    CU_ASSERT_EQUAL(len, pages * CL_PAGE_SIZE);
    CU_ASSERT_EQUAL(p[0], (unsigned char)(start_page * CL_PAGE_SIZE * 7 + start_page));
}

/* The walk's reads in place: a whole region, or around a page that could not be read, the pages
 * read next to the address's (at most 64 either side). */
static void test_span_in_place(void)
{
    struct cl_mappings ms;
    struct cl_frozen f;
    (void)frozen_three(&f, &ms);
    check_span(&f, BASE + 1, 0, 300);
    check_span(&f, BASE + 299 * CL_PAGE_SIZE + 4095, 0, 300);
    check_span(&f, BASE + 401 * CL_PAGE_SIZE, 401, 64);   /* page 400 failed */
    check_span(&f, BASE + 399 * CL_PAGE_SIZE + 8, 335, 65);
    check_span(&f, BASE + 599 * CL_PAGE_SIZE, 535, 65);
    /* a page that could not be read, a page not copied, outside any mapping */
    uint64_t start, len;
    CU_ASSERT_PTR_NULL(cl_frozen_span(&f, BASE + 400 * CL_PAGE_SIZE + 8, &start, &len));
    CU_ASSERT_PTR_NULL(cl_frozen_span(&f, BASE + 305 * CL_PAGE_SIZE, &start, &len));
    CU_ASSERT_PTR_NULL(cl_frozen_span(&f, BASE - 8, &start, &len));
    CU_ASSERT_PTR_NULL(cl_frozen_span(&f, BASE + PAGES * CL_PAGE_SIZE, &start, &len));
    cl_frozen_free(&f);
    cl_mappings_free(&ms);
}

/* Memory reserved from a plan made while the process ran goes to the regions of the same range
 * in the plan made once it stopped; a region whose mapping changed meanwhile gets its own. Either
 * way the copy is the process's memory as it was when stopped. */
static void test_reserved_then_adopted(void)
{
    struct fake_memory *m = fake_new();
    struct cl_mappings before, after;
    three_mappings(&before);
    struct cl_freeze_source src = {fake_read, fake_pagemap, fake_open, m, 1};
    struct cl_frozen reserved, f;
    CU_ASSERT_EQUAL_FATAL(cl_freeze_plan(&reserved, &before, &src, NULL), 0);
    CU_ASSERT_EQUAL_FATAL(cl_freeze_reserve(&reserved, 2), 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(reserved.v[0].data);
    unsigned char *first = reserved.v[0].data;
    /* before the process stopped, the heap's first ten pages were unmapped: a new range */
    struct cl_mapping v[] = {
        {.start = BASE, .end = BASE + 300 * CL_PAGE_SIZE, .perms = CL_MAP_R | CL_MAP_W},
        {.start = BASE + 320 * CL_PAGE_SIZE,
         .end = BASE + PAGES * CL_PAGE_SIZE,
         .perms = CL_MAP_R | CL_MAP_W,
         .path = "[heap]"},
    };
    memset(&after, 0, sizeof after);
    for (size_t i = 0; i < 2; i++)
        CU_ASSERT_EQUAL_FATAL(cl_mappings_add(&after, &v[i]), 0);
    memset(m->bytes, 0x33, 4);   /* changed after the plan, before the stop */
    CU_ASSERT_EQUAL_FATAL(cl_freeze_replan(&f, &after, &src, &reserved, NULL), 0);
    CU_ASSERT_EQUAL(reserved.n, 0);   /* freed */
    CU_ASSERT_PTR_EQUAL(f.v[0].data, first);
    CU_ASSERT_PTR_NULL(f.v[1].data);
    CU_ASSERT_EQUAL_FATAL(cl_freeze_copy(&f, &src), 0);
    unsigned char page[CL_PAGE_SIZE];
    CU_ASSERT_EQUAL(page_status(&f, BASE, page), 0);
    CU_ASSERT_EQUAL(page[0], 0x33);
    CU_ASSERT_EQUAL(page_status(&f, BASE + 320 * CL_PAGE_SIZE, page), 0);
    CU_ASSERT_EQUAL(page[0], (unsigned char)(320 * CL_PAGE_SIZE * 7 + 320));
    cl_frozen_free(&f);
    cl_mappings_free(&before);
    cl_mappings_free(&after);
}

/* Anonymous pages never touched are not read: they are zeros, and cost nothing against the
 * limit. A file's writable pages are all read (one not in memory holds the file's bytes, not
 * zeros), and so is everything when the page tables cannot be read. */
static void test_untouched_pages(void)
{
    struct fake_memory *m = fake_new();
    m->untouched[0] = 100, m->untouched[1] = 150;   /* in the first, anonymous mapping */
    struct cl_mappings ms;
    three_mappings(&ms);
    struct cl_frozen f;
    CU_ASSERT_EQUAL_FATAL(freeze(&f, &ms, m), 0);
    CU_ASSERT_EQUAL(f.bytes, (uint64_t)(PAGES - 10 - 50) * CL_PAGE_SIZE);
    unsigned char page[CL_PAGE_SIZE], zeros[CL_PAGE_SIZE] = {0};
    CU_ASSERT_EQUAL(page_status(&f, BASE + 120 * CL_PAGE_SIZE, page), 0);
    CU_ASSERT(memcmp(page, zeros, sizeof page) == 0);   /* not read: the fake's bytes are not 0 */
    CU_ASSERT_EQUAL(page_status(&f, BASE + 150 * CL_PAGE_SIZE, page), 0);
    CU_ASSERT_EQUAL(page[0], (unsigned char)(150 * CL_PAGE_SIZE * 7 + 150));
    cl_frozen_free(&f);

    m->untouched[0] = 320, m->untouched[1] = 330;   /* in [heap]: anonymous too */
    CU_ASSERT_EQUAL_FATAL(freeze(&f, &ms, m), 0);
    CU_ASSERT_EQUAL(f.bytes, (uint64_t)(PAGES - 10 - 10) * CL_PAGE_SIZE);
    cl_frozen_free(&f);
    cl_mappings_free(&ms);

    /* a file's mapping whose file cannot be had: every page is copied */
    struct cl_mapping data = {.start = BASE,
                              .end = BASE + 200 * CL_PAGE_SIZE,
                              .perms = CL_MAP_R | CL_MAP_W,
                              .path = "/lib/x.so"};
    CU_ASSERT_EQUAL_FATAL(cl_mappings_add(&ms, &data), 0);
    m->untouched[0] = 0, m->untouched[1] = 200;
    CU_ASSERT_EQUAL_FATAL(freeze(&f, &ms, m), 0);
    CU_ASSERT_EQUAL(f.bytes, 200 * CL_PAGE_SIZE);
    CU_ASSERT_EQUAL(page_status(&f, BASE + 120 * CL_PAGE_SIZE, page), 0);
    CU_ASSERT_EQUAL(page[0], (unsigned char)(120 * CL_PAGE_SIZE * 7 + 120));
    cl_frozen_free(&f);
    cl_mappings_free(&ms);

    three_mappings(&ms);
    m->untouched[0] = 100, m->untouched[1] = 150;
    m->no_pagemap = true;
    CU_ASSERT_EQUAL_FATAL(freeze(&f, &ms, m), 0);
    CU_ASSERT_EQUAL(f.bytes, (uint64_t)(PAGES - 10) * CL_PAGE_SIZE);
    CU_ASSERT_EQUAL(page_status(&f, BASE + 120 * CL_PAGE_SIZE, page), 0);
    CU_ASSERT_EQUAL(page[0], (unsigned char)(120 * CL_PAGE_SIZE * 7 + 120));
    cl_frozen_free(&f);
    cl_mappings_free(&ms);
}

/* A byte of the fake library file, unlike the fake memory's. */
static unsigned char file_byte(uint64_t at)
{
    return (unsigned char)(0xf0 ^ at % 251);
}

/* Fake memory whose open_file opens a library file of the size bytes given, written in a new
 * folder *dir as *file: both for the caller to remove and free. */
static struct fake_memory *fake_with_bytes(const unsigned char *bytes, size_t size, char **dir,
                                           char **file)
{
    *dir = tu_mkdtemp();
    *file = tu_path(*dir, "x.so");
    CU_ASSERT_EQUAL_FATAL(tu_write_file(*file, bytes, size), 0);
    struct fake_memory *m = fake_new();
    m->file = *file;
    return m;
}

/* fake_with_bytes of a file of size bytes, file_byte's. */
static struct fake_memory *fake_with_file(size_t size, char **dir, char **file)
{
    unsigned char *bytes = malloc(size);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bytes);
    for (size_t i = 0; i < size; i++)
        bytes[i] = file_byte(i);
    struct fake_memory *m = fake_with_bytes(bytes, size, dir, file);
    free(bytes);
    return m;
}

/* A private writable mapping of a file from its second page, whose pages [100, 160) were never
 * written; the file ends half-way through the mapping's page 148. The untouched pages are read
 * from the file, not copied, but those past its end, which the process cannot read either. */
static void test_untouched_file_pages(void)
{
    char *dir, *file;
    struct fake_memory *m = fake_with_file(149 * CL_PAGE_SIZE + CL_PAGE_SIZE / 2, &dir, &file);
    m->untouched[0] = 100, m->untouched[1] = 160;
    struct cl_mappings ms = {0};
    struct cl_mapping data = {.start = BASE,
                              .end = BASE + 200 * CL_PAGE_SIZE,
                              .offset = CL_PAGE_SIZE,
                              .perms = CL_MAP_R | CL_MAP_W,
                              .path = "/lib/x.so"};
    CU_ASSERT_EQUAL_FATAL(cl_mappings_add(&ms, &data), 0);
    struct cl_frozen f;
    CU_ASSERT_EQUAL_FATAL(freeze(&f, &ms, m), 0);
    CU_ASSERT_EQUAL(f.bytes, (uint64_t)(200 - 49) * CL_PAGE_SIZE); /* pages 100-148 not copied */
    unsigned char page[CL_PAGE_SIZE];
    CU_ASSERT_EQUAL(page_status(&f, BASE + 120 * CL_PAGE_SIZE, page), 0);
    CU_ASSERT_EQUAL(page[5], file_byte(121 * CL_PAGE_SIZE + 5));
    CU_ASSERT_EQUAL(page_status(&f, BASE + 148 * CL_PAGE_SIZE, page), 0);
    CU_ASSERT_EQUAL(page[0], file_byte(149 * CL_PAGE_SIZE));
    CU_ASSERT_EQUAL(page[CL_PAGE_SIZE / 2], 0); /* past the file's end, as the process reads it */
    CU_ASSERT_EQUAL(page_status(&f, BASE + 150 * CL_PAGE_SIZE, page), 0);
    CU_ASSERT_EQUAL(page[0], (unsigned char)(150 * CL_PAGE_SIZE * 7 + 150));
    /* the copy is read in place up to the pages read from the file, never across them */
    check_span(&f, BASE + 10 * CL_PAGE_SIZE, 0, 74);
    check_span(&f, BASE + 99 * CL_PAGE_SIZE, 35, 65);
    uint64_t start, len;
    CU_ASSERT_PTR_NULL(cl_frozen_span(&f, BASE + 120 * CL_PAGE_SIZE, &start, &len));
    /* a file cut short since: its missing pages are unreadable, not zeros */
    CU_ASSERT_EQUAL_FATAL(truncate(file, 100 * CL_PAGE_SIZE), 0);
    CU_ASSERT_EQUAL(page_status(&f, BASE + 120 * CL_PAGE_SIZE, page), CL_E_UNREADABLE);
    CU_ASSERT_EQUAL(page_status(&f, BASE + 98 * CL_PAGE_SIZE, page), 0);
    cl_frozen_free(&f);
    cl_mappings_free(&ms);
    free(file);
    tu_rmtree(dir);
}

/* A library's writable data as the loader maps it: its file's page at BASE, the rest of its
 * segment's 1.5 MiB (.bss) anonymous right after, then memory of another's. A library foreign to
 * culeak (no Python, no torch) is left out, its .bss with it, and read from the process; the
 * memory past its segment, or its .bss once something else lies between, is copied; so is all
 * of a library that calls Python. A plan made stopped reads no library again. */
static void test_foreign_library_data(void)
{
    static const char *const foreign[] = {"memcpy", "cublasLtCreate"}, *const python[] = {
                                                                           "PyList_New"};
    const uint64_t segment = 0x180000 + CL_PAGE_SIZE, bss_end = BASE + segment;
    for (int calls_python = 0; calls_python < 2; calls_python++)
        for (int gap = 0; gap < 2; gap++) {
            unsigned char lib[LIB_FILE_SIZE];
            lib_fixture(lib, segment, calls_python ? python : foreign, calls_python ? 1 : 2, false);
            char *dir, *file;
            struct fake_memory *m = fake_with_bytes(lib, sizeof lib, &dir, &file);
            m->file_pages[0] = m->file_pages[1] = 0;
            struct cl_mapping v[] = {
                {.start = BASE,
                 .end = BASE + CL_PAGE_SIZE,
                 .offset = LIB_SEGMENT_OFFSET,
                 .perms = CL_MAP_R | CL_MAP_W,
                 .path = "/lib/lib.so",
                 .dev = 8,
                 .inode = 7},
                {.start = BASE + (1 + gap) * CL_PAGE_SIZE,
                 .end = bss_end,
                 .perms = CL_MAP_R | CL_MAP_W},
                {.start = bss_end,
                 .end = BASE + PAGES * CL_PAGE_SIZE,
                 .perms = CL_MAP_R | CL_MAP_W},
            };
            struct cl_mappings ms = {0};
            for (size_t i = 0; i < 3; i++)
                CU_ASSERT_EQUAL_FATAL(cl_mappings_add(&ms, &v[i]), 0);
            struct cl_freeze_source src = {fake_read, fake_pagemap, fake_open, m, 1};
            struct cl_frozen reserved, f;
            CU_ASSERT_EQUAL_FATAL(cl_freeze_plan(&reserved, &ms, &src, NULL), 0);
            unsigned opens = m->opens;
            CU_ASSERT_EQUAL(opens, 1);
            CU_ASSERT_EQUAL_FATAL(cl_freeze_replan(&f, &ms, &src, &reserved, NULL), 0);
            CU_ASSERT_EQUAL(m->opens, opens);
            CU_ASSERT_EQUAL_FATAL(cl_freeze_copy(&f, &src), 0);
            uint64_t past = BASE + PAGES * CL_PAGE_SIZE - bss_end;
            bool left_out = !calls_python, bss_left_out = left_out && !gap;
            CU_ASSERT_EQUAL(f.bytes, past + (left_out ? 0 : CL_PAGE_SIZE) +
                                         (bss_left_out ? 0 : segment - (1 + gap) * CL_PAGE_SIZE));
            unsigned char page[CL_PAGE_SIZE];
            CU_ASSERT_EQUAL(page_status(&f, BASE, page), left_out ? NOT_HELD : 0);
            CU_ASSERT_EQUAL(page_status(&f, BASE + 100 * CL_PAGE_SIZE, page),
                            bss_left_out ? NOT_HELD : 0);
            CU_ASSERT_EQUAL(page_status(&f, bss_end, page), 0);
            cl_frozen_free(&f);
            cl_mappings_free(&ms);
            free(file);
            tu_rmtree(dir);
        }
}

/* Two read-only mappings of one file (code, then constants with a relocated part): the pages the
 * process wrote (300-309) are copied, the others, present or not, read from the file, which is
 * opened once for both. None of it needs the process once copied. */
static void test_read_only_file_pages(void)
{
    char *dir, *file;
    struct fake_memory *m = fake_with_file(320 * CL_PAGE_SIZE, &dir, &file);
    m->file_pages[0] = 0, m->file_pages[1] = 250;   /* code and constants read */
    m->untouched[0] = 250, m->untouched[1] = 300;   /* never read */
    struct cl_mapping v[] = {
        {.start = BASE,
         .end = BASE + 200 * CL_PAGE_SIZE,
         .perms = CL_MAP_R | CL_MAP_X,
         .path = "/lib/x.so",
         .dev = 8,
         .inode = 42},
        {.start = BASE + 200 * CL_PAGE_SIZE,
         .end = BASE + 310 * CL_PAGE_SIZE,
         .offset = 200 * CL_PAGE_SIZE,
         .perms = CL_MAP_R,
         .path = "/lib/x.so",
         .dev = 8,
         .inode = 42},
    };
    struct cl_mappings ms = {0};
    for (size_t i = 0; i < 2; i++)
        CU_ASSERT_EQUAL_FATAL(cl_mappings_add(&ms, &v[i]), 0);
    struct cl_frozen f;
    CU_ASSERT_EQUAL_FATAL(freeze(&f, &ms, m), 0);
    CU_ASSERT_EQUAL(f.n, 2);
    CU_ASSERT_EQUAL(f.nfiles, 1);
    CU_ASSERT_EQUAL(f.bytes, 10 * CL_PAGE_SIZE);
    CU_ASSERT_EQUAL(m->pages_read, 10);
    m->gone_after = m->reads;   /* the process goes away */
    unsigned char page[CL_PAGE_SIZE];
    CU_ASSERT_EQUAL(page_status(&f, BASE + 5 * CL_PAGE_SIZE, page), 0);
    CU_ASSERT_EQUAL(page[1], file_byte(5 * CL_PAGE_SIZE + 1));
    CU_ASSERT_EQUAL(page_status(&f, BASE + 260 * CL_PAGE_SIZE, page), 0);
    CU_ASSERT_EQUAL(page[1], file_byte(260 * CL_PAGE_SIZE + 1));
    CU_ASSERT_EQUAL(page_status(&f, BASE + 305 * CL_PAGE_SIZE, page), 0);
    CU_ASSERT_EQUAL(page[1], (unsigned char)((305 * CL_PAGE_SIZE + 1) * 7 + 305));
    check_span(&f, BASE + 305 * CL_PAGE_SIZE, 300, 10);
    cl_frozen_free(&f);

    /* Copied while the process runs, then planned again once it stopped: taken whole, with its
     * file, neither its page tables nor its pages read again. */
    m->gone_after = 0;
    struct cl_freeze_source src = {fake_read, fake_pagemap, fake_open, m, 2};
    struct cl_frozen reserved;
    CU_ASSERT_EQUAL_FATAL(cl_freeze_plan(&reserved, &ms, &src, NULL), 0);
    CU_ASSERT_EQUAL_FATAL(cl_freeze_reserve(&reserved, 2), 0);
    CU_ASSERT_EQUAL_FATAL(cl_freeze_copy_read_only(&reserved, &src), 0);
    CU_ASSERT(reserved.v[0].copied && reserved.v[1].copied);
    unsigned reads = m->reads;
    m->no_pagemap = true;
    memset(m->bytes + 305 * CL_PAGE_SIZE, 0xee, 8);
    CU_ASSERT_EQUAL_FATAL(cl_freeze_replan(&f, &ms, &src, &reserved, NULL), 0);
    CU_ASSERT_EQUAL_FATAL(cl_freeze_copy(&f, &src), 0);
    CU_ASSERT_EQUAL(m->reads, reads);
    CU_ASSERT_EQUAL(f.n, 2);
    CU_ASSERT_EQUAL(f.nfiles, 1);
    CU_ASSERT_EQUAL(f.bytes, 10 * CL_PAGE_SIZE);
    CU_ASSERT_EQUAL(page_status(&f, BASE + 305 * CL_PAGE_SIZE, page), 0);
    CU_ASSERT_EQUAL(page[1], (unsigned char)((305 * CL_PAGE_SIZE + 1) * 7 + 305));
    CU_ASSERT_EQUAL(page_status(&f, BASE + 260 * CL_PAGE_SIZE, page), 0);
    CU_ASSERT_EQUAL(page[1], file_byte(260 * CL_PAGE_SIZE + 1));
    cl_frozen_free(&f);
    /* the same range now maps another file: planned anew (no page tables: left out) */
    ms.v[1].inode = 43;
    m->no_pagemap = false;
    CU_ASSERT_EQUAL_FATAL(cl_freeze_plan(&reserved, &ms, &src, NULL), 0);
    CU_ASSERT_EQUAL_FATAL(cl_freeze_reserve(&reserved, 2), 0);
    CU_ASSERT_EQUAL_FATAL(cl_freeze_copy_read_only(&reserved, &src), 0);
    ms.v[1].inode = 44;
    m->no_pagemap = true;
    CU_ASSERT_EQUAL_FATAL(cl_freeze_replan(&f, &ms, &src, &reserved, NULL), 0);
    CU_ASSERT_EQUAL(f.n, 1);
    CU_ASSERT_EQUAL(page_status(&f, BASE + 305 * CL_PAGE_SIZE, page), NOT_HELD);
    cl_frozen_free(&f);
    cl_mappings_free(&ms);
    free(file);
    tu_rmtree(dir);
}

/* A copy made on demand reads a chunk (64 pages) the first time the walk reads a page of it, and
 * reads it once; its untouched anonymous pages are zeros, unread. Past the budget, pages are not
 * held: the caller reads the process. */
static void test_on_demand(void)
{
    struct fake_memory *m = fake_new();
    m->bad_page[0] = BASE + 400 * CL_PAGE_SIZE;
    m->untouched[0] = 10, m->untouched[1] = 20;
    struct cl_mappings ms;
    three_mappings(&ms);
    struct cl_freeze_source src = {fake_read, fake_pagemap, fake_open, m, 1};
    struct cl_frozen f;
    CU_ASSERT_EQUAL_FATAL(cl_freeze_plan(&f, &ms, &src, NULL), 0);
    CU_ASSERT_EQUAL_FATAL(cl_freeze_on_demand(&f, &src, 3 * 64 * CL_PAGE_SIZE), 0);
    CU_ASSERT_EQUAL(m->pages_read, 0);
    unsigned char page[CL_PAGE_SIZE], zeros[CL_PAGE_SIZE] = {0};
    CU_ASSERT_EQUAL(page_status(&f, BASE + 5 * CL_PAGE_SIZE, page), 0);
    CU_ASSERT_EQUAL(page[0], (unsigned char)(5 * CL_PAGE_SIZE * 7 + 5));
    CU_ASSERT_EQUAL(m->pages_read, 54);   /* pages 0-63, less the ten untouched */
    CU_ASSERT_EQUAL(page_status(&f, BASE + 15 * CL_PAGE_SIZE, page), 0);
    CU_ASSERT(memcmp(page, zeros, sizeof page) == 0);
    memset(m->bytes, 0xee, 4);   /* read once: the copy does not see it */
    check_span(&f, BASE + 63 * CL_PAGE_SIZE, 0, 64);
    CU_ASSERT_EQUAL(m->pages_read, 54);
    /* the next chunk joins the span; one with a page that fails is read around it */
    check_span(&f, BASE + 64 * CL_PAGE_SIZE, 0, 128);
    CU_ASSERT_EQUAL(page_status(&f, BASE + 400 * CL_PAGE_SIZE, page), CL_E_UNREADABLE);
    CU_ASSERT_EQUAL(page_status(&f, BASE + 401 * CL_PAGE_SIZE, page), 0);
    CU_ASSERT_EQUAL(page[0], (unsigned char)(401 * CL_PAGE_SIZE * 7 + 401));
    check_span(&f, BASE + 390 * CL_PAGE_SIZE, 374, 26);   /* region 2's chunk 1: pages 374-437 */
    CU_ASSERT_EQUAL(m->pages_read, 54 + 64 + 63);
    CU_ASSERT_EQUAL(f.filled_bytes, (54 + 64 + 64) * CL_PAGE_SIZE);
    /* 10 pages of budget left: the next chunk is not held, nor is any after it */
    uint64_t start, len;
    CU_ASSERT_EQUAL(page_status(&f, BASE + 200 * CL_PAGE_SIZE, page), NOT_HELD);
    CU_ASSERT_PTR_NULL(cl_frozen_span(&f, BASE + 200 * CL_PAGE_SIZE, &start, &len));
    CU_ASSERT(f.spent);
    CU_ASSERT_EQUAL(m->pages_read, 54 + 64 + 63);
    CU_ASSERT_EQUAL(page_status(&f, BASE + 70 * CL_PAGE_SIZE, page), 0);   /* what it holds */
    cl_frozen_free(&f);
    /* the process goes away: the chunk is not held, and the caller's read of the process says
     * so; the budget is not spent by it */
    CU_ASSERT_EQUAL_FATAL(cl_freeze_plan(&f, &ms, &src, NULL), 0);
    CU_ASSERT_EQUAL_FATAL(cl_freeze_on_demand(&f, &src, 3 * 64 * CL_PAGE_SIZE), 0);
    m->gone_after = 1;
    m->reads = 1;
    CU_ASSERT_EQUAL(page_status(&f, BASE + 5 * CL_PAGE_SIZE, page), NOT_HELD);
    CU_ASSERT(!f.spent);
    CU_ASSERT_EQUAL(f.filled_bytes, 0);
    m->gone_after = 0;
    cl_frozen_free(&f);
    /* a budget under one chunk: nothing would ever be copied */
    CU_ASSERT_EQUAL_FATAL(cl_freeze_plan(&f, &ms, &src, NULL), 0);
    CU_ASSERT_EQUAL(cl_freeze_on_demand(&f, &src, 63 * CL_PAGE_SIZE), 0);
    CU_ASSERT_EQUAL(f.n, 0);
    CU_ASSERT_EQUAL(page_status(&f, BASE, page), NOT_HELD);
    cl_mappings_free(&ms);
}

/* A scout reads through a copy made on demand, and notes each page its walk needed; what it saw
 * is the writable anonymous memory. The copy at the stop leaves out what it saw and did not need
 * (not held: the caller must not read the process for it), and copies what it needed and what is
 * new. */
static void test_scouted(void)
{
    struct fake_memory *m = fake_new();
    m->untouched[0] = 10, m->untouched[1] = 20;
    struct cl_mappings ms;
    three_mappings(&ms);
    struct cl_freeze_source src = {fake_read, fake_pagemap, fake_open, m, 1};
    struct cl_frozen f;
    CU_ASSERT_EQUAL_FATAL(cl_freeze_plan(&f, &ms, &src, NULL), 0);
    CU_ASSERT_EQUAL_FATAL(cl_freeze_on_demand(&f, &src, PAGES * CL_PAGE_SIZE), 0);
    unsigned char page[CL_PAGE_SIZE];
    CU_ASSERT_EQUAL(page_status(&f, BASE + 5 * CL_PAGE_SIZE, page), 0);
    CU_ASSERT(cl_frozen_touch(&f, BASE + 5 * CL_PAGE_SIZE));
    CU_ASSERT(cl_frozen_touch(&f, BASE + 320 * CL_PAGE_SIZE));
    CU_ASSERT(cl_frozen_touch(&f, BASE + 321 * CL_PAGE_SIZE));
    struct cl_scouted s;
    CU_ASSERT_EQUAL_FATAL(cl_freeze_scouted(&f, &s), 0);
    cl_frozen_free(&f);
    CU_ASSERT_EQUAL_FATAL(s.seen.n, 2);   /* the two writable mappings; not the file's */
    CU_ASSERT_EQUAL(s.seen.v[1].start, BASE + 310 * CL_PAGE_SIZE);
    CU_ASSERT_EQUAL_FATAL(s.read.n, 2);   /* a page of one, two of the other */
    CU_ASSERT_EQUAL(s.read.v[0].start, BASE + 5 * CL_PAGE_SIZE);
    CU_ASSERT_EQUAL(s.read.v[0].end, BASE + 6 * CL_PAGE_SIZE);
    CU_ASSERT_EQUAL(s.read.v[1].end, BASE + 322 * CL_PAGE_SIZE);

    m->pages_read = 0;
    CU_ASSERT_EQUAL_FATAL(cl_freeze_plan(&f, &ms, &src, NULL), 0);
    uint64_t planned = f.bytes;
    cl_frozen_free(&f);
    CU_ASSERT_EQUAL_FATAL(cl_freeze_plan(&f, &ms, &src, &s), 0);
    /* region 0's 300 pages but page 5, the heap's 290 but pages 320 and 321; of them, pages
     * 10-19 were never touched, so the plan without a scout did not copy them either */
    CU_ASSERT_EQUAL(f.unread_bytes, (299 + 288) * CL_PAGE_SIZE);
    CU_ASSERT_EQUAL(f.bytes, planned - f.unread_bytes + 10 * CL_PAGE_SIZE);
    CU_ASSERT_EQUAL_FATAL(cl_freeze_copy(&f, &src), 0);
    CU_ASSERT_EQUAL(m->pages_read * CL_PAGE_SIZE, f.bytes);
    CU_ASSERT_EQUAL(page_status(&f, BASE + 5 * CL_PAGE_SIZE, page), 0);
    CU_ASSERT_EQUAL(page[0], (unsigned char)(5 * CL_PAGE_SIZE * 7 + 5));
    CU_ASSERT_EQUAL(page_status(&f, BASE + 6 * CL_PAGE_SIZE, page), NOT_HELD);
    CU_ASSERT(cl_frozen_left_unread(&f, BASE + 6 * CL_PAGE_SIZE));
    CU_ASSERT(!cl_frozen_left_unread(&f, BASE + 5 * CL_PAGE_SIZE));
    CU_ASSERT_EQUAL(page_status(&f, BASE + 599 * CL_PAGE_SIZE, page), NOT_HELD);
    check_span(&f, BASE + 5 * CL_PAGE_SIZE, 5, 1);
    uint64_t start, len;
    CU_ASSERT_PTR_NULL(cl_frozen_span(&f, BASE + 100 * CL_PAGE_SIZE, &start, &len));
    cl_frozen_free(&f);

    /* memory the scout did not see (the heap grew past it) is copied */
    s.seen.n = 1;
    CU_ASSERT_EQUAL_FATAL(cl_freeze_plan(&f, &ms, &src, &s), 0);
    CU_ASSERT_EQUAL(f.unread_bytes, 299 * CL_PAGE_SIZE);
    CU_ASSERT_EQUAL_FATAL(cl_freeze_copy(&f, &src), 0);
    CU_ASSERT_EQUAL(page_status(&f, BASE + 599 * CL_PAGE_SIZE, page), 0);
    cl_frozen_free(&f);

    /* past its copy's budget, a scout's pages are read from the process, and noted all the same;
     * a page noted twice counts once */
    CU_ASSERT_EQUAL_FATAL(cl_freeze_plan(&f, &ms, &src, NULL), 0);
    CU_ASSERT_EQUAL_FATAL(cl_freeze_on_demand(&f, &src, 64 * CL_PAGE_SIZE), 0);
    CU_ASSERT_EQUAL(page_status(&f, BASE + 5 * CL_PAGE_SIZE, page), 0);
    CU_ASSERT_EQUAL(page_status(&f, BASE + 320 * CL_PAGE_SIZE, page), NOT_HELD);
    CU_ASSERT(cl_frozen_touch(&f, BASE + 320 * CL_PAGE_SIZE));
    CU_ASSERT(cl_frozen_touch(&f, BASE + 320 * CL_PAGE_SIZE));
    CU_ASSERT_EQUAL(f.touched_bytes, CL_PAGE_SIZE);
    struct cl_scouted spent;
    CU_ASSERT_EQUAL_FATAL(cl_freeze_scouted(&f, &spent), 0);
    CU_ASSERT_EQUAL(spent.read.n, 1);
    CU_ASSERT_EQUAL(spent.read.v[0].start, BASE + 320 * CL_PAGE_SIZE);
    cl_scouted_free(&spent);
    cl_frozen_free(&f);
    cl_scouted_free(&s);
    cl_mappings_free(&ms);
}

static void test_gone_while_copying(void)
{
    struct fake_memory *m = fake_new();
    m->gone_after = 2; /* the third read: the process was killed */
    struct cl_mappings ms;
    three_mappings(&ms);
    struct cl_frozen f;
    CU_ASSERT_EQUAL(freeze(&f, &ms, m), CL_E_NO_PROCESS);
    CU_ASSERT_EQUAL(f.n, 0); /* nothing kept */
    CU_ASSERT_PTR_NULL(f.v);
    cl_mappings_free(&ms);

    struct cl_mappings none = {0};
    CU_ASSERT_EQUAL(freeze(&f, &none, m), 0);
    unsigned char page[CL_PAGE_SIZE];
    CU_ASSERT_EQUAL(page_status(&f, BASE, page), NOT_HELD);
    cl_frozen_free(&f);
}

/* Copied in threads, a chunk (256 pages) each at a time: the same copy, with the pages that fail
 * in two chunks of one region marked in its one bitmap, and a process that goes away midway
 * gone for every thread. */
static void test_copy_in_threads(void)
{
    struct fake_memory *m = fake_new();
    const uint64_t bad[3] = {10, 290, 590}; /* two chunks of the first region, the heap's */
    for (size_t i = 0; i < 3; i++)
        m->bad_page[i] = BASE + bad[i] * CL_PAGE_SIZE;
    struct cl_mappings ms;
    three_mappings(&ms);
    struct cl_frozen f;
    CU_ASSERT_EQUAL_FATAL(freeze_in(&f, &ms, m, 4), 0);
    CU_ASSERT_EQUAL(f.n, 2);
    unsigned char page[CL_PAGE_SIZE];
    for (uint64_t p = 0; p < PAGES; p++) {
        int want = p >= 300 && p < 310                         ? NOT_HELD
                   : p == bad[0] || p == bad[1] || p == bad[2] ? CL_E_UNREADABLE
                                                               : 0;
        int got = page_status(&f, BASE + p * CL_PAGE_SIZE, page);
        CU_ASSERT_EQUAL(got, want);
        if (got == 0 && memcmp(page, m->bytes + p * CL_PAGE_SIZE, CL_PAGE_SIZE) != 0)
            CU_FAIL("a page copied in a thread differs from the process's");
    }
    cl_frozen_free(&f);

    m->gone_after = 2;
    CU_ASSERT_EQUAL(freeze_in(&f, &ms, m, 4), CL_E_NO_PROCESS);
    CU_ASSERT_EQUAL(f.n, 0);
    CU_ASSERT_PTR_NULL(f.v);
    cl_mappings_free(&ms);
}

void register_target_freeze_tests(void)
{
    static const struct tu_test tests[] = {
        {"which mappings are copied", test_wants},
        {"a copy with an unreadable page", test_copy_and_pages},
        {"the copy read in place", test_span_in_place},
        {"memory reserved before the stop, adopted after", test_reserved_then_adopted},
        {"untouched anonymous pages are not read", test_untouched_pages},
        {"untouched file pages are read from the file", test_untouched_file_pages},
        {"read-only file pages are read from the file", test_read_only_file_pages},
        {"a foreign library's writable data is left out", test_foreign_library_data},
        {"the process goes away while copied", test_gone_while_copying},
        {"a copy made on demand", test_on_demand},
        {"a scout's unread memory left out", test_scouted},
        {"a copy made in threads", test_copy_in_threads},
        {NULL, NULL},
    };
    tu_add_suite("target/freeze", tests);
}

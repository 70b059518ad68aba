/* The target-independent layer: cl_read's bounds checks over a fake target, cl_read_cstr,
 * warnings, and cl_locate_file over temporary directories. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "image.h"
#include "suites.h"
#include "target/target.h"
#include "testutil.h"

/* The fake target's memory: [0x10000, 0x13000) in two adjacent mappings, a gap at 0x13000, and
 * [0x14000, 0x15000) mapped but failing to read. */
#define TBASE 0x10000u
static unsigned char tmem[3 * CL_PAGE_SIZE];
static struct tu_image image = {.base = TBASE, .bytes = tmem, .size = sizeof tmem};

static struct cl_target *fake_target(void)
{
    for (size_t i = 0; i < sizeof tmem; i++)
        tmem[i] = (unsigned char)(i * 7u + 1u);
    image.reads = 0;
    struct cl_open_options opt = {.cache_pages = 16};
    const struct cl_mapping ms[] = {
        {.start = 0x10000, .end = 0x12000, .perms = CL_MAP_R},
        {.start = 0x12000, .end = 0x13000, .perms = CL_MAP_R | CL_MAP_W},
        {.start = 0x14000, .end = 0x15000, .perms = CL_MAP_R},
    };
    struct cl_target *t = tu_image_target(&image, CL_TARGET_GDB, &opt, ms, 3);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    return t;
}

static void test_read_bounds(void)
{
    struct cl_target *t = fake_target();
    unsigned char buf[64];
    CU_ASSERT_EQUAL(cl_read(t, 0x10010, buf, 16), 0);
    CU_ASSERT_EQUAL(memcmp(buf, tmem + 0x10, 16), 0);
    /* across the border of two adjacent mappings */
    CU_ASSERT_EQUAL(cl_read(t, 0x11ff8, buf, 16), 0);
    CU_ASSERT_EQUAL(memcmp(buf, tmem + 0x1ff8, 16), 0);
    CU_ASSERT_EQUAL(cl_read(t, 0x10000, buf, 0), 0);
    unsigned before = image.reads;

    /* unmapped, before, in the gap, after: refused without touching the source */
    CU_ASSERT_EQUAL(cl_read(t, 0x1000, buf, 8), CL_E_UNREADABLE);
    CU_ASSERT_EQUAL(t->err.code, CL_E_UNREADABLE);
    CU_ASSERT_PTR_NOT_NULL(strstr(t->err.msg, "not mapped"));
    CU_ASSERT_EQUAL(cl_read(t, 0x13000, buf, 8), CL_E_UNREADABLE);
    CU_ASSERT_EQUAL(cl_read(t, 0x12ffc, buf, 8), CL_E_UNREADABLE);   /* runs into the gap */
    CU_ASSERT_EQUAL(cl_read(t, 0x15000, buf, 1), CL_E_UNREADABLE);
    /* wrap-around */
    CU_ASSERT_EQUAL(cl_read(t, UINT64_MAX - 3, buf, 8), CL_E_UNREADABLE);
    CU_ASSERT_PTR_NOT_NULL(strstr(t->err.msg, "wraps"));
    CU_ASSERT_EQUAL(cl_read(t, 0x10000, buf, SIZE_MAX), CL_E_UNREADABLE);
    CU_ASSERT_EQUAL(image.reads, before);

    /* mapped but the source fails: its message is kept; a repeat (cached) still fails */
    CU_ASSERT_EQUAL(cl_read(t, 0x14008, buf, 8), CL_E_UNREADABLE);
    CU_ASSERT_PTR_NOT_NULL(strstr(t->err.msg, "no page 0x14000"));
    CU_ASSERT_EQUAL(cl_read(t, 0x14010, buf, 8), CL_E_UNREADABLE);
    CU_ASSERT_EQUAL(t->err.code, CL_E_UNREADABLE);
    CU_ASSERT_EQUAL(image.reads, before + 1);
    cl_target_close(t);
}

static void test_read_ints(void)
{
    struct cl_target *t = fake_target();
    uint64_t v64, e64;
    uint32_t v32, e32;
    memcpy(&e64, tmem + 0xffc, 8);   /* straddles a page */
    memcpy(&e32, tmem + 0x2ffc, 4);  /* the last bytes before the gap */
    CU_ASSERT_EQUAL(cl_read_u64(t, 0x10ffc, &v64), 0);
    CU_ASSERT_EQUAL(v64, e64);
    CU_ASSERT_EQUAL(cl_read_u32(t, 0x12ffc, &v32), 0);
    CU_ASSERT_EQUAL(v32, e32);
    CU_ASSERT_EQUAL(cl_read_u64(t, 0x12ffc, &v64), CL_E_UNREADABLE);
    cl_target_close(t);
}

static void test_read_cstr(void)
{
    struct cl_target *t = fake_target();
    char buf[512];
    /* all of the memory is written before the first read: pages are cached */
    memcpy(tmem + 0x10, "hello world", 12);
    memcpy(tmem + 0xffa, "straddling", 11);
    memset(tmem + 0x2e00, 'x', 0x100);
    memcpy(tmem + 0x2ff0, "tail", 5);
    memset(tmem + 0x2f00, 'x', 0xf0);
    CU_ASSERT_EQUAL(cl_read_cstr(t, 0x10010, buf, sizeof buf), 0);
    CU_ASSERT_STRING_EQUAL(buf, "hello world");
    /* exactly fits: 11 chars + NUL in 12 */
    CU_ASSERT_EQUAL(cl_read_cstr(t, 0x10010, buf, 12), 0);
    CU_ASSERT_STRING_EQUAL(buf, "hello world");
    /* no NUL within cap */
    CU_ASSERT_EQUAL(cl_read_cstr(t, 0x10010, buf, 5), CL_E_UNREADABLE);
    CU_ASSERT_STRING_EQUAL(buf, "hell");
    CU_ASSERT_PTR_NOT_NULL(strstr(t->err.msg, "terminator"));
    CU_ASSERT_EQUAL(cl_read_cstr(t, 0x10010, buf, 0), CL_E_INTERNAL);

    /* across a page boundary */
    CU_ASSERT_EQUAL(cl_read_cstr(t, 0x10ffa, buf, sizeof buf), 0);
    CU_ASSERT_STRING_EQUAL(buf, "straddling");
    /* right before the unmapped gap: the gap is never read */
    CU_ASSERT_EQUAL(cl_read_cstr(t, 0x12ff0, buf, sizeof buf), 0);
    CU_ASSERT_STRING_EQUAL(buf, "tail");
    /* 0x1f0 bytes of 'x' before "tail": no NUL within 0x100 */
    CU_ASSERT_EQUAL(cl_read_cstr(t, 0x12e00, buf, 0x100), CL_E_UNREADABLE);
    CU_ASSERT_EQUAL(cl_read_cstr(t, 0x12e00, buf, sizeof buf), 0);
    CU_ASSERT_EQUAL(strlen(buf), 0x1f0 + 4);
    /* no NUL before the unmapped gap */
    memset(tmem + 0x2ff0, 'y', 0x10);   /* page cached: invisible until the cache is cleared */
    cl_pagecache_clear(&t->cache);
    CU_ASSERT_EQUAL(cl_read_cstr(t, 0x12f00, buf, sizeof buf), CL_E_UNREADABLE);
    CU_ASSERT_PTR_NOT_NULL(strstr(t->err.msg, "not mapped"));
    /* in a page that fails */
    CU_ASSERT_EQUAL(cl_read_cstr(t, 0x14000, buf, sizeof buf), CL_E_UNREADABLE);
    cl_target_close(t);
}

/* A temporary tree: root/sysroot/usr/lib/libfoo.so, root/libs1/libbar.so, root/libs2/libbar.so,
 * root/libs2/libfoo.so, root/host/libhost.so, root/exe. */
struct tree {
    char *root, *sysroot, *libs1, *libs2, *host_file, *exe;
};

static void make_tree(struct tree *tr)
{
    tr->root = tu_mkdtemp();
    CU_ASSERT_PTR_NOT_NULL_FATAL(tr->root);
    tr->sysroot = tu_path(tr->root, "sysroot");
    tr->libs1 = tu_path(tr->root, "libs1");
    tr->libs2 = tu_path(tr->root, "libs2");
    tr->host_file = tu_path(tr->root, "host/libhost.so");
    tr->exe = tu_path(tr->root, "exe");
    const char *files[] = {"sysroot/usr/lib/libfoo.so", "libs1/libbar.so", "libs2/libbar.so",
                           "libs2/libfoo.so",           "host/libhost.so", "exe"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char *p = tu_path(tr->root, files[i]);
        CU_ASSERT_EQUAL_FATAL(tu_write_file(p, "x", 1), 0);
        free(p);
    }
}

static void free_tree(struct tree *tr)
{
    free(tr->sysroot);
    free(tr->libs1);
    free(tr->libs2);
    free(tr->host_file);
    free(tr->exe);
    tu_rmtree(tr->root);
}

/* Checks that cl_locate_file gives root + "/" + rel (or NULL when rel is NULL). */
static void expect(const struct cl_file_locator *loc, const char *path, bool is_exe,
                   const char *root, const char *rel)
{
    char *got = cl_locate_file(loc, path, is_exe);
    if (!rel) {
        CU_ASSERT_PTR_NULL(got);
    } else {
        char *want = tu_path(root, rel);
        CU_ASSERT_PTR_NOT_NULL(got);
        if (got)
            CU_ASSERT_STRING_EQUAL(got, want);
        free(want);
    }
    free(got);
}

/* The fake target, less its second page (as a dump leaves out what its run did not read). */
static bool second_page_left_out(struct cl_target *t, uint64_t addr)
{
    (void)t;
    return addr >= TBASE + CL_PAGE_SIZE && addr < TBASE + 2 * CL_PAGE_SIZE;
}

static void test_holds_range(void)
{
    struct cl_target *t = fake_target();
    struct cl_target_ops ops = *t->ops;
    ops.left_out = second_page_left_out;
    t->ops = &ops;
    CU_ASSERT_TRUE(cl_target_holds_range(t, TBASE, CL_PAGE_SIZE));
    CU_ASSERT_TRUE(cl_target_holds_range(t, TBASE + 8, 0));
    CU_ASSERT_FALSE(cl_target_holds_range(t, TBASE + CL_PAGE_SIZE - 8, 16)); /* into the second */
    CU_ASSERT_FALSE(cl_target_holds_range(t, TBASE, 3 * CL_PAGE_SIZE));      /* across it */
    CU_ASSERT_TRUE(cl_target_holds_range(t, TBASE + 2 * CL_PAGE_SIZE, CL_PAGE_SIZE));
    /* a word of a static that points into the top page: no page past it, and no wrap to 0 */
    CU_ASSERT_TRUE(cl_target_holds_range(t, UINT64_MAX - CL_PAGE_SIZE + 1, 16));
    CU_ASSERT_TRUE(cl_target_holds_range(t, UINT64_MAX - 15, 16));
    CU_ASSERT_FALSE(cl_target_holds_range(t, UINT64_MAX - 7, 16)); /* wraps */
    uint64_t w;
    CU_ASSERT_EQUAL(cl_read_held(t, TBASE + CL_PAGE_SIZE, &w, sizeof w), CL_E_UNREADABLE);
    CU_ASSERT_EQUAL(cl_read_held(t, TBASE, &w, sizeof w), 0);
    cl_target_close(t);
}

static void test_locate_file(void)
{
    struct tree tr;
    make_tree(&tr);
    const char *dirs[] = {tr.libs1, tr.libs2};
    struct cl_file_locator loc = {.sysroot = tr.sysroot, .lib_dirs = dirs, .nlib_dirs = 2};

    expect(&loc, "/usr/lib/libfoo.so", false, tr.sysroot, "usr/lib/libfoo.so"); /* sysroot first */
    expect(&loc, "/opt/lib/libfoo.so", false, tr.libs2, "libfoo.so"); /* by basename */
    expect(&loc, "/usr/lib/libbar.so", false, tr.libs1, "libbar.so"); /* first dir wins */
    expect(&loc, tr.host_file, false, NULL, NULL); /* a sysroot hides the host's files */
    expect(&loc, "/usr/lib/libnone.so", false, NULL, NULL);
    expect(&loc, "libfoo.so", false, NULL, NULL); /* relative: not a path the target mapped */
    expect(&loc, NULL, false, NULL, NULL);
    expect(&loc, "[heap]", false, NULL, NULL);

    /* no sysroot: lib dirs, then the host path itself */
    loc.sysroot = NULL;
    expect(&loc, "/usr/lib/libfoo.so", false, tr.libs2, "libfoo.so");
    char *got = cl_locate_file(&loc, tr.host_file, false);
    CU_ASSERT_PTR_NOT_NULL(got);
    if (got)
        CU_ASSERT_STRING_EQUAL(got, tr.host_file);
    free(got);
    loc.nlib_dirs = 0;
    expect(&loc, "/usr/lib/libbar.so", false, NULL, NULL);

    /* a live target's own root (its mount namespace) first: our own is the host's root */
    loc.root_pid = getpid();
    char root[64];
    snprintf(root, sizeof root, "/proc/%d/root", (int)getpid());
    expect(&loc, tr.host_file, false, root, tr.host_file + 1);
    loc.root_pid = 0;

    /* --exe overrides the recorded path for the executable only, and must exist */
    loc.exe = tr.exe;
    got = cl_locate_file(&loc, "/usr/bin/python3", true);
    CU_ASSERT_PTR_NOT_NULL(got);
    if (got)
        CU_ASSERT_STRING_EQUAL(got, tr.exe);
    free(got);
    expect(&loc, "/usr/bin/python3-does-not-exist", false, NULL, NULL);
    struct cl_file_locator missing = {.exe = "/nonexistent/culeak-exe"};
    expect(&missing, tr.host_file, true, NULL, NULL);
    free_tree(&tr);
}

void register_target_target_tests(void)
{
    static const struct tu_test tests[] = {
        {"cl_read bounds", test_read_bounds},
        {"cl_read_u64/u32", test_read_ints},
        {"cl_read_cstr", test_read_cstr},
        {"cl_target_holds_range, cl_read_held", test_holds_range},
        {"cl_locate_file", test_locate_file},
        {NULL, NULL},
    };
    tu_add_suite("target/target", tests);
}

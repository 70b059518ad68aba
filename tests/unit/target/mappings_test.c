/* The address-space map: /proc/PID/maps parsing, sorting and lookup. */
#include <string.h>

#include <CUnit/CUnit.h>

#include "suites.h"
#include "target/mappings.h"
#include "testutil.h"

static const char maps_text[] =
    "7f2a1c000000-7f2a1c028000 r--p 00000000 08:01 1311 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "55d0c0a00000-55d0c0a21000 rw-p 00000000 00:00 0 [heap]\n"
    "7f2a1c028000-7f2a1c1bd000 r-xp 00028000 08:01 1311 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "7f2a1d000000-7f2a1d001000 rw-s 00000000 00:01 42 /tmp/my lib.so (deleted)\n"
    "this line is not a mapping\n"
    "7f2a1e000000-7f2a1e000000 r--p 00000000 00:00 0 \n"
    "7f2a1c3c0000-7f2a1c3cd000 rw-p 00000000 00:00 0 \n"
    "7ffc5a100000-7ffc5a122000 rw-p 00000000 00:00 0                          [stack]\n"
    "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]";   /* no final newline */

static void test_parse_proc_maps(void)
{
    struct cl_mappings ms = {0};
    CU_ASSERT_EQUAL_FATAL(cl_mappings_parse_proc_maps(&ms, maps_text, strlen(maps_text)), 0);
    CU_ASSERT_EQUAL_FATAL(ms.n, 7);   /* the junk line and the empty range are skipped */
    const struct cl_mapping *v = ms.v;
    CU_ASSERT_EQUAL(v[0].start, 0x55d0c0a00000);
    CU_ASSERT_STRING_EQUAL(v[0].path, "[heap]");
    CU_ASSERT_EQUAL(v[0].perms, CL_MAP_R | CL_MAP_W);
    CU_ASSERT_EQUAL(v[1].start, 0x7f2a1c000000);
    CU_ASSERT_EQUAL(v[1].end, 0x7f2a1c028000);
    CU_ASSERT_EQUAL(v[1].perms, CL_MAP_R);
    CU_ASSERT_STRING_EQUAL(v[1].path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
    CU_ASSERT_EQUAL(v[2].offset, 0x28000);
    CU_ASSERT_EQUAL(v[2].perms, CL_MAP_R | CL_MAP_X);
    CU_ASSERT_PTR_NULL(v[3].path);   /* anonymous */
    CU_ASSERT_EQUAL(v[3].start, 0x7f2a1c3c0000);
    CU_ASSERT_STRING_EQUAL(v[4].path, "/tmp/my lib.so");   /* spaces kept, "(deleted)" gone */
    CU_ASSERT_EQUAL(v[4].perms,   /* ... but recorded, and so is 's' */
                    CL_MAP_R | CL_MAP_W | CL_MAP_DELETED | CL_MAP_SHARED);
    CU_ASSERT_STRING_EQUAL(v[5].path, "[stack]");
    CU_ASSERT_EQUAL(v[6].start, 0xffffffffff600000);
    CU_ASSERT_EQUAL(v[6].perms, CL_MAP_X);
    CU_ASSERT_STRING_EQUAL(v[6].path, "[vsyscall]");
    for (size_t i = 1; i < ms.n; i++)
        CU_ASSERT(v[i - 1].end <= v[i].start);
    cl_mappings_free(&ms);
    CU_ASSERT_EQUAL(ms.n, 0);
    CU_ASSERT_PTR_NULL(ms.v);

    CU_ASSERT_EQUAL(cl_mappings_parse_proc_maps(&ms, "", 0), 0);
    CU_ASSERT_EQUAL(ms.n, 0);
    /* len bounds the text: the second line is not seen */
    CU_ASSERT_EQUAL(cl_mappings_parse_proc_maps(&ms, maps_text, 86), 0);
    CU_ASSERT_EQUAL(ms.n, 1);
    cl_mappings_free(&ms);
}

static void test_find(void)
{
    struct cl_mappings ms = {0};
    CU_ASSERT_PTR_NULL(cl_mappings_find(&ms, 0x1000));
    const uint64_t r[][2] = {
        {0x5000, 0x6000}, {0x1000, 0x2000}, {0x2000, 0x3000}, {0x9000, 0xa000}};
    for (size_t i = 0; i < 4; i++)
        CU_ASSERT_EQUAL_FATAL(
            cl_mappings_add(&ms, &(struct cl_mapping){.start = r[i][0], .end = r[i][1]}), 0);
    cl_mappings_sort(&ms);
    CU_ASSERT_PTR_NULL(cl_mappings_find(&ms, 0));
    CU_ASSERT_PTR_NULL(cl_mappings_find(&ms, 0xfff));
    CU_ASSERT_PTR_EQUAL(cl_mappings_find(&ms, 0x1000), &ms.v[0]);
    CU_ASSERT_PTR_EQUAL(cl_mappings_find(&ms, 0x1fff), &ms.v[0]);
    CU_ASSERT_PTR_EQUAL(cl_mappings_find(&ms, 0x2000), &ms.v[1]);   /* end is exclusive */
    CU_ASSERT_PTR_NULL(cl_mappings_find(&ms, 0x3000));
    CU_ASSERT_PTR_NULL(cl_mappings_find(&ms, 0x4fff));
    CU_ASSERT_PTR_EQUAL(cl_mappings_find(&ms, 0x5800), &ms.v[2]);
    CU_ASSERT_PTR_EQUAL(cl_mappings_find(&ms, 0x9fff), &ms.v[3]);
    CU_ASSERT_PTR_NULL(cl_mappings_find(&ms, 0xa000));
    CU_ASSERT_PTR_NULL(cl_mappings_find(&ms, UINT64_MAX));
    cl_mappings_free(&ms);
}

static void test_add_copies_and_grows(void)
{
    struct cl_mappings ms = {0};
    char path[32];
    /* 300 entries, added in a scrambled order: past the first growth, sorted afterwards */
    for (unsigned i = 0; i < 300; i++) {
        unsigned k = (i * 7919u) % 300u;
        snprintf(path, sizeof path, "/lib/l%u.so", k);
        struct cl_mapping m = {.start = k * 0x10000ull,
                               .end = k * 0x10000ull + 0x1000,
                               .offset = k,
                               .perms = CL_MAP_R,
                               .path = path};
        CU_ASSERT_EQUAL_FATAL(cl_mappings_add(&ms, &m), 0);
    }
    strcpy(path, "overwritten");   /* the list holds its own copies */
    cl_mappings_sort(&ms);
    CU_ASSERT_EQUAL_FATAL(ms.n, 300);
    for (unsigned k = 0; k < 300; k++) {
        const struct cl_mapping *m = cl_mappings_find(&ms, k * 0x10000ull + 0x800);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        CU_ASSERT_EQUAL(m->offset, k);
        snprintf(path, sizeof path, "/lib/l%u.so", k);
        CU_ASSERT_STRING_EQUAL(m->path, path);
        CU_ASSERT_PTR_NULL(cl_mappings_find(&ms, k * 0x10000ull + 0x1000));
    }
    cl_mappings_free(&ms);
}

/* Numbers sscanf would have made undefined (wider than 64 bits) and malformed fields: the line
 * is skipped, its neighbours kept. */
static void test_parse_rejects_malformed(void)
{
    static const char text[] =
        "ffffffffffffffff0-ffffffffffffffff1 r--p 00000000 00:00 0 /seventeen-digit-start\n"
        "1000-ffffffffffffffff r--p 00000000 00:00 0 /sixteen-digit-end\n"
        "2000-3000 r--p 1ffffffffffffffff 00:00 0 /seventeen-digit-offset\n"
        "4000-5000 r--p 00000000 00:00 12x /inode-not-a-number\n"
        "6000-7000 r-\n"
        "8000-9000 rw-p zz 00:00 0 /offset-not-hex\n"
        "a000- r--p 0 00:00 0 /no-end\n"
        "-b000 r--p 0 00:00 0 /no-start\n"
        "c000-d000 r--p 0";
    struct cl_mappings ms = {0};
    CU_ASSERT_EQUAL_FATAL(cl_mappings_parse_proc_maps(&ms, text, sizeof text - 1), 0);
    CU_ASSERT_EQUAL_FATAL(ms.n, 1);
    CU_ASSERT_EQUAL(ms.v[0].start, 0x1000);
    CU_ASSERT_EQUAL(ms.v[0].end, UINT64_MAX);
    CU_ASSERT_STRING_EQUAL(ms.v[0].path, "/sixteen-digit-end");
    cl_mappings_free(&ms);
}

void register_target_mappings_tests(void)
{
    static const struct tu_test tests[] = {
        {"parse /proc/PID/maps", test_parse_proc_maps},
        {"find", test_find},
        {"add copies paths and grows", test_add_copies_and_grows},
        {"parse skips malformed lines and over-wide numbers", test_parse_rejects_malformed},
        {NULL, NULL},
    };
    tu_add_suite("target/mappings", tests);
}

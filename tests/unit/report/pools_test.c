/* A device's private pools (report/pools.c) on a hand-built allocator walk: each pool's
 * segments, reserved, allocated and empty bytes, and its owner by id. The pools of real captures
 * are checked against torch's own snapshot by the integration tests (test_blocks cuda-graphs). */
#include <stdlib.h>

#include <CUnit/CUnit.h>

#include "report/pools.h"
#include "suites.h"
#include "testutil.h"

#define MIB (1ull << 20)
#define SEG 0x7f0000000000ull

/* Pool (1, 0): a segment with a live block and a pending-free one, and an empty segment; pool
 * (0, 2): an expandable segment, 4 of its 8 MiB mapped, nothing live; and a default-pool segment
 * that is no private pool's. */
static struct cc_block blocks[] = {
    {.ptr = SEG, .size = 2 * MIB, .state = CC_ACTIVE_ALLOCATED},
    {.ptr = SEG + 2 * MIB, .size = 2 * MIB, .state = CC_ACTIVE_PENDING_FREE},
    {.ptr = SEG + 4 * MIB, .size = 16 * MIB, .state = CC_INACTIVE},
    {.ptr = SEG + 32 * MIB, .size = 20 * MIB, .state = CC_INACTIVE},
    {.ptr = SEG + 64 * MIB, .size = 4 * MIB, .state = CC_INACTIVE},
    {.ptr = SEG + 68 * MIB, .size = 4 * MIB, .state = CC_UNMAPPED},
    {.ptr = SEG + 96 * MIB, .size = 2 * MIB, .state = CC_ACTIVE_ALLOCATED},
};
static struct cc_segment segments[] = {
    {.addr = SEG,
     .size = 20 * MIB,
     .mapped = 20 * MIB,
     .pool_id = {1, 0},
     .first = 0,
     .nblocks = 3},
    {.addr = SEG + 32 * MIB,
     .size = 20 * MIB,
     .mapped = 20 * MIB,
     .pool_id = {1, 0},
     .first = 3,
     .nblocks = 1},
    {.addr = SEG + 64 * MIB,
     .size = 8 * MIB,
     .mapped = 4 * MIB,
     .pool_id = {0, 2},
     .expandable = true,
     .first = 4,
     .nblocks = 2},
    {.addr = SEG + 96 * MIB, .size = 2 * MIB, .mapped = 2 * MIB, .first = 6, .nblocks = 1},
};
static struct cc_device device = {
    .segments = segments, .nsegments = 4, .blocks = blocks, .nblocks = 7};

static void test_rows(void)
{
    char name[] = "torch.cuda.CUDAGraph __main__.g";
    struct cc_pool_owner owners[] = {{{1, 0}, name, 1}};
    struct cc_allocator a = {.devices = &device, .ndevices = 1, .pools = owners, .npools = 1};
    struct cl_pool_row *rows;
    uint32_t n;
    CU_ASSERT_FATAL(cl_pool_rows(&a, &device, &rows, &n));
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT(rows[0].id[0] == 1 && rows[0].id[1] == 0 && rows[0].segments == 2);
    CU_ASSERT_STRING_EQUAL(rows[0].owner, name);
    CU_ASSERT_EQUAL(rows[0].reserved, 40 * MIB);
    CU_ASSERT_EQUAL(rows[0].allocated, 4 * MIB);   /* pending free is still allocated */
    CU_ASSERT_EQUAL(rows[0].empty, 20 * MIB);      /* the second segment only */
    CU_ASSERT(rows[1].id[0] == 0 && rows[1].id[1] == 2 && rows[1].owner == NULL);
    CU_ASSERT(rows[1].reserved == 4 * MIB && rows[1].allocated == 0 && rows[1].empty == 4 * MIB);
    free(rows);
    struct cc_device none = {
        .segments = &segments[3], .nsegments = 1, .blocks = &blocks[6], .nblocks = 1};
    segments[3].first = 0;
    CU_ASSERT_FATAL(cl_pool_rows(&a, &none, &rows, &n));
    CU_ASSERT(n == 0 && rows == NULL);
    segments[3].first = 6;
}

void register_report_pools_tests(void)
{
    static const struct tu_test tests[] = {
        {"rows", test_rows},
        {NULL, NULL},
    };
    tu_add_suite("report/pools", tests);
}

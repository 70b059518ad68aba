/* The blocks report (report/blocks.c) on a hand-built allocator walk and tensors (the models
 * the walkers would have made; the report is checked against torch's own snapshot on the
 * simulated device by the integration tests): its rows, then the text and the JSON written from
 * them, which must say the same. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "report/blocks.h"
#include "suites.h"
#include "testutil.h"
#include "util/jsonread.h"

#define MIB (1ull << 20)
#define SEG 0x7f0000000000ull

/* Device 0: one 20 MiB segment split into an allocated 2 MiB block holding two storages (a
 * tensor each, the second first in storage order), a free 16 MiB block, and an allocated 2 MiB
 * block no tensor lies in; a second, small-pool segment with a pending-free block. */
static struct cc_block blocks[] = {
    {.ptr = SEG, .size = 2 * MIB, .requested = 2 * MIB, .state = CC_ACTIVE_ALLOCATED},
    {.ptr = SEG + 2 * MIB, .size = 16 * MIB, .state = CC_INACTIVE},
    {.ptr = SEG + 18 * MIB, .size = 2 * MIB, .requested = MIB, .state = CC_ACTIVE_ALLOCATED},
    {.ptr = SEG + 32 * MIB, .size = 2 * MIB, .state = CC_ACTIVE_PENDING_FREE},
};
static struct cc_segment segments[] = {
    {.addr = SEG, .size = 20 * MIB, .mapped = 20 * MIB, .first = 0, .nblocks = 3},
    {.addr = SEG + 32 * MIB,
     .size = 2 * MIB,
     .mapped = 2 * MIB,
     .small = true,
     .first = 3,
     .nblocks = 1},
};
static struct cc_device device = {.index = 0,
                                  .reserved = 22 * MIB,
                                  .allocated = 4 * MIB,
                                  .segments = segments,
                                  .nsegments = 2,
                                  .blocks = blocks,
                                  .nblocks = 4};
static struct cc_allocator allocator = {.devices = &device, .ndevices = 1};

/* Storage 0 on the CPU; storages 1 and 2 in block 0 (2 at its start, 1 above it); storage 3's
 * data on the GPU but in no block the walk has. */
static struct torch_tensor tensors[4];
static uint32_t storage_tensors[4] = {0, 1, 2, 3};
static struct torch_storage storages[4] = {
    {.data = 0x1000, .nbytes = 64, .tensors = &storage_tensors[0], .ntensors = 1},
    {.data = SEG + 4096,
     .nbytes = 4096,
     .tensors = &storage_tensors[1],
     .ntensors = 1,
     .device_type = TORCH_DEVICE_CUDA},
    {.data = SEG,
     .nbytes = 4096,
     .tensors = &storage_tensors[2],
     .ntensors = 1,
     .device_type = TORCH_DEVICE_CUDA},
    {.data = SEG + 64 * MIB,
     .nbytes = 8,
     .tensors = &storage_tensors[3],
     .ntensors = 1,
     .device_type = TORCH_DEVICE_CUDA},
};
static struct torch_tensors tt = {.v = tensors, .n = 4, .storages = storages, .nstorages = 4};
static const char *paths[4] = {NULL, "__main__.a", NULL, NULL};
static struct cl_storage_holders storage_holders[4] = {{.held_by = CL_HELD_PYTHON},
                                                       {.held_by = CL_HELD_PYTHON},
                                                       {.held_by = CL_HELD_GARBAGE},
                                                       {.held_by = CL_HELD_UNKNOWN}};
static struct cl_holders hs = {
    .storages = storage_holders, .nstorages = 4, .tensor_paths = paths, .ntensors = 4};

static void setup(void)
{
    for (uint32_t k = 0; k < 4; k++)
        tensors[k] = (struct torch_tensor){.pyobj = 0x5000 + 16 * k, .storage_index = k};
}

static void test_rows(void)
{
    setup();
    struct cl_block_filter all = {.device = -1};
    struct cl_blocks_report r;
    struct cl_error err = {0};
    CU_ASSERT_EQUAL_FATAL(cl_blocks_report_build(&allocator, &tt, &hs, &all, &r, &err), 0);
    CU_ASSERT_EQUAL(r.ndevices, 1);
    CU_ASSERT_EQUAL_FATAL(r.nsegments, 2);
    CU_ASSERT_EQUAL(r.segments[0].allocated, 4 * MIB);
    CU_ASSERT_EQUAL(r.segments[0].largest_free, 16 * MIB);
    CU_ASSERT_EQUAL(r.segments[0].inactive_split, 16 * MIB);
    CU_ASSERT_FALSE(r.segments[0].pinned);   /* 4 of 20 MiB live: more than an eighth */
    CU_ASSERT_EQUAL_FATAL(r.nblocks, 4);
    /* block 0: storages 1 and 2, in storage order though 2's data comes first */
    CU_ASSERT_EQUAL_FATAL(r.blocks[0].ntensors, 2);
    CU_ASSERT_EQUAL(r.tensors[r.blocks[0].first_tensor].address, 0x5010);
    CU_ASSERT_STRING_EQUAL(r.tensors[r.blocks[0].first_tensor].path, "__main__.a");
    CU_ASSERT_EQUAL(r.tensors[r.blocks[0].first_tensor + 1].address, 0x5020);
    CU_ASSERT_STRING_EQUAL(r.tensors[r.blocks[0].first_tensor + 1].held_by, "garbage");
    CU_ASSERT_FALSE(cl_block_unattributed(&r, &r.blocks[0]));
    CU_ASSERT(cl_block_unattributed(&r, &r.blocks[2]));        /* allocated, no tensor in it */
    CU_ASSERT_FALSE(cl_block_unattributed(&r, &r.blocks[1]));  /* free */
    cl_blocks_report_free(&r);
    /* the filter keeps the free blocks only; segments stay */
    struct cl_block_filter free_only = {.device = -1, .state = CL_BLOCKS_FREE};
    CU_ASSERT_EQUAL_FATAL(cl_blocks_report_build(&allocator, &tt, &hs, &free_only, &r, &err), 0);
    CU_ASSERT_EQUAL(r.nsegments, 2);
    CU_ASSERT_EQUAL(r.nblocks, 1);
    cl_blocks_report_free(&r);
    struct cl_block_filter other = {.device = 3};
    CU_ASSERT_EQUAL_FATAL(cl_blocks_report_build(&allocator, &tt, &hs, &other, &r, &err), 0);
    CU_ASSERT_EQUAL(r.ndevices, 0);
    cl_blocks_report_free(&r);
    /* without tensors nothing is unattributed: it is not known */
    CU_ASSERT_EQUAL_FATAL(cl_blocks_report_build(&allocator, NULL, NULL, &all, &r, &err), 0);
    CU_ASSERT_FALSE(cl_block_unattributed(&r, &r.blocks[2]));
    CU_ASSERT_EQUAL(r.ntensors, 0);
    cl_blocks_report_free(&r);
}

static void test_unattributed_bytes(void)
{
    setup();
    struct cl_block_storages s;
    CU_ASSERT_FATAL(cl_block_storages_build(&tt, &s));
    CU_ASSERT_EQUAL(s.n, 3);   /* the CUDA storages */
    struct cl_blocks_unheld unheld = {.owned = 1, .nowned = 1};
    cl_blocks_unheld(&s, &device, &unheld);
    CU_ASSERT(unheld.unattributed == 2 * MIB && unheld.owned == 0 && unheld.nowned == 0);
    CU_ASSERT_EQUAL(cl_block_storages_in(&s, SEG, 2 * MIB), 2);
    CU_ASSERT(s.found[0] == 1 && s.found[1] == 2);
    CU_ASSERT_EQUAL(cl_block_storages_in(&s, SEG + 2 * MIB, 16 * MIB), 0);
    CU_ASSERT_EQUAL(cl_block_storages_in(&s, UINT64_MAX - 10, 100), 0);   /* wraps: nothing */
    cl_block_storages_free(&s);
    CU_ASSERT_FATAL(cl_block_storages_build(NULL, &s));
    cl_blocks_unheld(&s, &device, &unheld);
    CU_ASSERT(unheld.unattributed == 4 * MIB && unheld.owned == 0);
    cl_block_storages_free(&s);
}

/* Block 2, which no tensor lies in, named for a C++ owner: counted as owned, not unattributed,
 * and named in the rows; an owner index past the names names nothing. */
static void test_owned_block(void)
{
    setup();
    char name[] = "torch's cuBLAS workspace (handle 0x1, stream 0x0)", *names[] = {name};
    allocator.owners = names;
    allocator.nowners = 1;
    blocks[2].owner = 1;
    struct cl_block_storages s;
    CU_ASSERT_FATAL(cl_block_storages_build(&tt, &s));
    struct cl_blocks_unheld unheld;
    cl_blocks_unheld(&s, &device, &unheld);
    CU_ASSERT(unheld.unattributed == 0 && unheld.owned == 2 * MIB && unheld.nowned == 1);
    cl_block_storages_free(&s);
    struct cl_blocks_report r;
    struct cl_error err;
    struct cl_block_filter all = {.device = -1};
    CU_ASSERT_EQUAL_FATAL(cl_blocks_report_build(&allocator, &tt, &hs, &all, &r, &err), 0);
    CU_ASSERT_FALSE(cl_block_unattributed(&r, &r.blocks[2]));
    CU_ASSERT_STRING_EQUAL(cl_block_owner(&allocator, r.blocks[2].block), name);
    cl_blocks_report_free(&r);
    blocks[2].owner = 2;   /* no such name */
    CU_ASSERT_PTR_NULL(cl_block_owner(&allocator, &blocks[2]));
    blocks[2].owner = 0;
    allocator.owners = NULL;
    allocator.nowners = 0;
}

static char *written(bool json)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    struct cl_block_filter all = {.device = -1};
    struct cl_report_notes w = {{"a warning\n"}};
    struct cl_error err = {0};
    CU_ASSERT_EQUAL(cl_report_blocks(out, &allocator, &tt, &hs, &all, json, &w, &err), 0);
    fclose(out);
    return text;
}

/* The two writers say the same: what the text gives, the JSON has. */
static void test_writers(void)
{
    setup();
    char *text = written(false), *json = written(true);
    CU_ASSERT_PTR_NOT_NULL_FATAL(
        strstr(text, "device 0: 22.0 MiB reserved, 4.0 MiB allocated, 2 segments"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "        tensor 0x5010  __main__.a\n"
                                        "        tensor 0x5020  garbage\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "unattributed: no tensor known"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "warning: a warning"));
    struct cl_jv doc;
    struct cl_error err = {0};
    CU_ASSERT_EQUAL_FATAL(cl_json_parse(json, strlen(json), &doc, &err), 0);
    const struct cl_jv *devs = cl_jv_get(&doc, "devices");
    CU_ASSERT_FATAL(devs && devs->n == 1);
    const struct cl_jv *dev = &devs->items[0];
    CU_ASSERT_EQUAL(cl_jv_get(dev, "reserved")->integer, (int64_t)(22 * MIB));
    const struct cl_jv *segs = cl_jv_get(dev, "segments");
    CU_ASSERT_FATAL(segs && segs->n == 2);
    CU_ASSERT_EQUAL(cl_jv_get(&segs->items[0], "largest_free")->integer, (int64_t)(16 * MIB));
    const struct cl_jv *bl = cl_jv_get(&segs->items[0], "blocks");
    CU_ASSERT_FATAL(bl && bl->n == 3);
    CU_ASSERT_EQUAL(cl_jv_get(&bl->items[0], "tensors")->n, 2);
    CU_ASSERT(cl_jv_get(&bl->items[2], "unattributed")->boolean);
    CU_ASSERT_FALSE(cl_jv_get(&bl->items[0], "unattributed")->boolean);
    CU_ASSERT_EQUAL(cl_jv_get(&doc, "warnings")->n, 1);
    cl_jv_free(&doc);
    free(text);
    free(json);
}

void register_report_blocks_tests(void)
{
    static const struct tu_test tests[] = {
        {"rows", test_rows},
        {"unattributed bytes", test_unattributed_bytes},
        {"a block a C++ owner holds", test_owned_block},
        {"text and JSON from the rows", test_writers},
        {NULL, NULL},
    };
    tu_add_suite("report/blocks", tests);
}

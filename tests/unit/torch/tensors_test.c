/* The tensor model's lookups (torch/tensors.c): the links of a source, found with and without
 * the per-source index. Reading tensors from memory is checked on real wheels (frozen evidence
 * and the integration tests). */
#include <stdint.h>

#include <CUnit/CUnit.h>

#include "suites.h"
#include "testutil.h"
#include "torch/tensors.h"

/* Links sorted by source: tensor 0 has two, node 1 one, a Python object (heap node 7) one. */
static struct torch_link links[] = {
    {.src = 0,
     .dst = 1,
     .src_end = TORCH_END_TENSOR,
     .dst_end = TORCH_END_NODE,
     .kind = TORCH_LINK_GRAD_FN},
    {.src = 0,
     .dst = 1,
     .src_end = TORCH_END_TENSOR,
     .dst_end = TORCH_END_TENSOR,
     .kind = TORCH_LINK_GRAD},
    {.src = 1,
     .dst = 0,
     .src_end = TORCH_END_NODE,
     .dst_end = TORCH_END_NODE,
     .kind = TORCH_LINK_NEXT},
    {.src = 7,
     .dst = 1,
     .src_end = TORCH_END_PYOBJ,
     .dst_end = TORCH_END_TENSOR,
     .kind = TORCH_LINK_SAVED},
};

static void test_links_from(void)
{
    struct torch_tensors tt = {.n = 2, .nnodes = 2, .links = links, .nlinks = 4};
    for (int indexed = 0; indexed < 2; indexed++) {
        /* the per-source index: tensors 0, 1, then nodes 0, 1, and the end */
        uint32_t first[] = {0, 2, 2, 2, 3};
        tt.link_first = indexed ? first : NULL;
        size_t n;
        const struct torch_link *l = torch_links_from(&tt, TORCH_END_TENSOR, 0, &n);
        CU_ASSERT(l == &links[0] && n == 2);
        torch_links_from(&tt, TORCH_END_TENSOR, 1, &n);
        CU_ASSERT_EQUAL(n, 0);
        l = torch_links_from(&tt, TORCH_END_NODE, 1, &n);
        CU_ASSERT(l == &links[2] && n == 1);
        torch_links_from(&tt, TORCH_END_NODE, 5, &n);   /* no such node */
        CU_ASSERT_EQUAL(n, 0);
        l = torch_links_from(&tt, TORCH_END_PYOBJ, 7, &n);   /* always searched */
        CU_ASSERT(l == &links[3] && n == 1);
        torch_links_from(&tt, TORCH_END_PYOBJ, 8, &n);
        CU_ASSERT_EQUAL(n, 0);
    }
}

void register_torch_tensors_tests(void)
{
    static const struct tu_test tests[] = {
        {"links by source", test_links_from},
        {NULL, NULL},
    };
    tu_add_suite("torch/tensors", tests);
}

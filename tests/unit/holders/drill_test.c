/* The drill-down on small dominator trees: down the dominant chain, an accumulation point where
 * bytes spread, a breakdown where they do not, and no entry into what may not be entered. */
#include <stdbool.h>
#include <stdlib.h>

#include <CUnit/CUnit.h>

#include "holders/drill.h"
#include "suites.h"
#include "testutil.h"

/* A tree from each vertex's parent (root: itself) and own bytes: retained sums and CSR children
 * (those that retain any), in vertex order. */
struct tree {
    uint32_t n;
    uint64_t retained[64];
    uint32_t first[65], child[64];
    bool closed[64]; /* may not be entered */
};

static void build(struct tree *t, uint32_t n, const uint32_t *parent, const uint64_t *own)
{
    *t = (struct tree){.n = n};
    for (uint32_t v = 0; v < n; v++)
        t->retained[v] = own[v];
    for (uint32_t v = n; v-- > 1;) /* parents come before children */
        t->retained[parent[v]] += t->retained[v];
    uint32_t count[64] = {0};
    for (uint32_t v = 1; v < n; v++)
        count[parent[v]] += t->retained[v] > 0;
    for (uint32_t v = 0; v < n; v++)
        t->first[v + 1] = t->first[v] + count[v];
    uint32_t at[64];
    for (uint32_t v = 0; v < n; v++)
        at[v] = t->first[v];
    for (uint32_t v = 1; v < n; v++)
        if (t->retained[v] > 0)
            t->child[at[parent[v]]++] = v;
}

static bool open_vertex(void *arg, uint32_t x)
{
    return !((struct tree *)arg)->closed[x];
}

static size_t drill(struct tree *t, uint32_t hx, struct cl_drill_options o, struct cl_drill **v)
{
    struct cl_dom_tree d = {t->n, t->retained, t->first, t->child};
    size_t n = 0, cap = 0;
    *v = NULL;
    CU_ASSERT_TRUE_FATAL(cl_drill_holder(&d, hx, &o, open_vertex, t, v, &n, &cap));
    return n;
}

static void test_accumulation(void)
{
    /* 0 holder -> 1 object -> 2 dict (90%) + 3 (10%); 2 -> 4 list -> 12 items */
    uint32_t parent[17] = {0, 0, 1, 1, 2};
    uint64_t own[17] = {0, 0, 0, 100};
    for (uint32_t v = 5; v < 17; v++)
        parent[v] = 4, own[v] = 75;
    struct tree t;
    build(&t, 17, parent, own);
    struct cl_drill *v;
    size_t n = drill(&t, 0, (struct cl_drill_options){80, 10, 1}, &v);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_EQUAL(v[0].vertex, 4);
    CU_ASSERT_EQUAL(v[0].bytes, 900);
    CU_ASSERT_EQUAL(v[0].children, 12);
    CU_ASSERT_TRUE(v[0].accumulation);
    free(v);
    /* 12 objects make none at --spread 13: vertex 4 is broken down instead, into its largest
     * items (each a twentieth of the holder or more), at most CL_DRILL_BREADTH */
    n = drill(&t, 0, (struct cl_drill_options){80, 13, 1}, &v);
    CU_ASSERT_EQUAL_FATAL(n, 1 + CL_DRILL_BREADTH);
    CU_ASSERT_FALSE(v[0].accumulation);
    for (size_t k = 1; k < n; k++)
        CU_ASSERT(v[k].parent == 0 && v[k].level == 1 && v[k].bytes == 75);
    free(v);
    /* a closed vertex stops the descent before it */
    t.closed[4] = true;
    n = drill(&t, 0, (struct cl_drill_options){80, 10, 0}, &v);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_EQUAL(v[0].vertex, 2);
    free(v);
}

static void test_breakdown(void)
{
    /* 0 holder -> 1 object -> 2 (60%), 3 (30%), 4 (10%), 5 (1%: under a twentieth) */
    uint32_t parent[] = {0, 0, 1, 1, 1, 1};
    uint64_t own[] = {0, 0, 600, 300, 100, 10};
    struct tree t;
    build(&t, 6, parent, own);
    struct cl_drill *v;
    size_t n = drill(&t, 0, (struct cl_drill_options){80, 10, 1}, &v);
    CU_ASSERT_EQUAL_FATAL(n, 4);
    CU_ASSERT_EQUAL(v[0].vertex, 1);
    CU_ASSERT_EQUAL(v[0].children, 4);
    uint32_t want[] = {2, 3, 4};
    for (size_t k = 1; k < 4; k++) {
        CU_ASSERT_EQUAL(v[k].vertex, want[k - 1]);
        CU_ASSERT_EQUAL(v[k].parent, 0);
        CU_ASSERT_EQUAL(v[k].level, 1);
    }
    free(v);
    n = drill(&t, 0, (struct cl_drill_options){80, 10, 0}, &v); /* --depth 0 */
    CU_ASSERT_EQUAL(n, 1);
    free(v);
    /* a 60% child is gone into at --dominant 51 */
    n = drill(&t, 0, (struct cl_drill_options){51, 10, 0}, &v);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_EQUAL(v[0].vertex, 2);
    free(v);
}

void register_holders_drill_tests(void)
{
    static const struct tu_test tests[] = {
        {"accumulation point", test_accumulation},
        {"breakdown", test_breakdown},
        {NULL, NULL},
    };
    tu_add_suite("holders/drill", tests);
}

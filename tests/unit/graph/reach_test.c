/* The vertices a root reaches that reach a target: hand-made graphs (cycles, skipped edges,
 * targets nothing reaches), 2,000,000-vertex chains and cycles that would overflow a recursive
 * search, and random graphs checked against two plain breadth-first searches. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "graph/reach.h"
#include "suites.h"
#include "testutil.h"

/* A graph as an edge table: vertex v's edges are dst[first[v] .. first[v+1]), where SKIP entries
 * stand for edges out() leaves out. */
struct table {
    uint32_t n;
    const uint32_t *first, *dst;
    uint32_t calls_past_end;   /* out() asked again after CL_GRAPH_END: a contract breach */
};

static uint32_t table_out(void *arg, uint32_t v, uint32_t p)
{
    struct table *t = arg;
    if (p >= t->first[v + 1] - t->first[v]) {
        t->calls_past_end += p > t->first[v + 1] - t->first[v];
        return CL_GRAPH_END;
    }
    return t->dst[t->first[v] + p];
}

static void expect_marks(struct table *t, uint32_t root, const uint8_t *targets,
                         const uint8_t *want)
{
    uint8_t mark[16];
    memcpy(mark, targets, t->n);
    CU_ASSERT_EQUAL_FATAL(cl_graph_reaching(t->n, root, table_out, t, mark), 0);
    for (uint32_t v = 0; v < t->n; v++)
        CU_ASSERT_EQUAL(mark[v], want[v]);
    CU_ASSERT_EQUAL(t->calls_past_end, 0);
}

static void test_tree(void)
{
    /* 0 -> 1 -> 2 (target), 0 -> 3 -> 4: the branch to 4 reaches no target. */
    static const uint32_t first[] = {0, 2, 3, 3, 4, 4}, dst[] = {1, 3, 2, 4};
    struct table t = {5, first, dst, 0};
    expect_marks(&t, 0, (const uint8_t[]){0, 0, 7, 0, 0}, (const uint8_t[]){1, 1, 1, 0, 0});
    /* rooted at 3: the target is out of reach, and so is everything */
    expect_marks(&t, 3, (const uint8_t[]){0, 0, 1, 0, 0}, (const uint8_t[]){0, 0, 0, 0, 0});
    /* a target that is the root */
    expect_marks(&t, 4, (const uint8_t[]){0, 0, 0, 0, 1}, (const uint8_t[]){0, 0, 0, 0, 1});
}

static void test_cycles(void)
{
    /* 0 -> 1 <-> 2 -> 3 (target); 3 -> 6 -> 1 closes a second cycle through the target; 1 -> 4
     * <-> 5, searched after the target's component, reaches nothing. */
    static const uint32_t first[] = {0, 1, 3, 5, 6, 7, 8, 9}, dst[] = {1, 2, 4, 1, 3, 6, 5, 4, 1};
    struct table t = {7, first, dst, 0};
    expect_marks(&t, 0, (const uint8_t[]){0, 0, 0, 1, 0, 0, 0},
                 (const uint8_t[]){1, 1, 1, 1, 0, 0, 1});
    /* the target inside the cycle 4 <-> 5 instead */
    expect_marks(&t, 0, (const uint8_t[]){0, 0, 0, 0, 0, 1, 0},
                 (const uint8_t[]){1, 1, 1, 1, 1, 1, 1});
}

static void test_skipped_edges(void)
{
    /* 0 -> 1 (skipped) and 0 -> 2 -> 1: 1 is reached the long way; 2 -> 3 (skipped) is the only
     * way to the target 3. */
    static const uint32_t first[] = {0, 2, 2, 4, 4}, dst[] = {CL_GRAPH_SKIP, 2, 1, CL_GRAPH_SKIP};
    struct table t = {4, first, dst, 0};
    expect_marks(&t, 0, (const uint8_t[]){0, 1, 0, 1}, (const uint8_t[]){1, 1, 1, 0});
}

static void test_bad_input(void)
{
    static const uint32_t first[] = {0, 1, 1}, dst[] = {9};
    struct table t = {2, first, dst, 0};
    uint8_t mark[2] = {1, 1};
    CU_ASSERT_EQUAL(cl_graph_reaching(2, 0, table_out, &t, mark), CL_E_INTERNAL);
    mark[0] = mark[1] = 1;
    CU_ASSERT_EQUAL(cl_graph_reaching(2, 2, table_out, &t, mark), 0); /* root out of range */
    CU_ASSERT_EQUAL(mark[0], 0);
    CU_ASSERT_EQUAL(mark[1], 0);
    CU_ASSERT_EQUAL(cl_graph_reaching(0, 0, table_out, &t, mark), 0);
}

#define BIG 2000000u

static uint32_t chain_out(void *arg, uint32_t v, uint32_t p)
{
    const bool *back = arg; /* the tail points back at 1, making one component of 1 .. BIG-1 */
    if (p > 0)
        return CL_GRAPH_END;
    return v + 1 < BIG ? v + 1 : *back ? 1 : CL_GRAPH_END;
}

static void test_long_chain(void)
{
    uint8_t *mark = calloc(BIG, 1);
    CU_ASSERT_FATAL(mark != NULL);
    for (int back = 0; back < 2; back++) {
        bool b = back;
        memset(mark, 0, BIG);
        mark[BIG / 2] = 1;
        CU_ASSERT_EQUAL_FATAL(cl_graph_reaching(BIG, 0, chain_out, &b, mark), 0);
        uint32_t wrong = 0;
        for (uint32_t v = 0; v < BIG; v++)
            wrong += mark[v] != (back || v <= BIG / 2);
        CU_ASSERT_EQUAL(wrong, 0);
    }
    free(mark);
}

#define MAXV 60
#define MAXE (4 * MAXV)

/* seen[v]: v is reached from the starts over the edges, forwards or backwards. */
static void bfs(const struct table *t, const bool *start, bool backwards, bool *seen)
{
    uint32_t queue[MAXV], head = 0, tail = 0;
    for (uint32_t v = 0; v < t->n; v++)
        if ((seen[v] = start[v]))
            queue[tail++] = v;
    while (head < tail) {
        uint32_t v = queue[head++];
        for (uint32_t u = 0; u < t->n; u++)
            for (uint32_t e = t->first[u]; e < t->first[u + 1]; e++) {
                uint32_t d = t->dst[e];
                uint32_t from = backwards ? d : u, to = backwards ? u : d;
                if (d != CL_GRAPH_SKIP && from == v && !seen[to]) {
                    seen[to] = true;
                    queue[tail++] = to;
                }
            }
    }
}

static void test_random_graphs(void)
{
    uint64_t rng = 20261203;
    uint32_t wrong = 0, marked = 0;
    for (int round = 0; round < 300; round++) {
        uint32_t n = 1 + (uint32_t)(tu_random(&rng) % MAXV);
        uint32_t first[MAXV + 1] = {0}, dst[MAXE];
        uint32_t m = 0;
        for (uint32_t v = 0; v < n; v++) {
            first[v] = m;
            for (uint32_t k = (uint32_t)(tu_random(&rng) % 4); k > 0; k--)
                dst[m++] = tu_random(&rng) % 8 ? (uint32_t)(tu_random(&rng) % n) : CL_GRAPH_SKIP;
        }
        first[n] = m;
        struct table t = {n, first, dst, 0};
        bool root[MAXV] = {false}, target[MAXV], from_root[MAXV], to_target[MAXV];
        uint8_t mark[MAXV];
        uint32_t r = (uint32_t)(tu_random(&rng) % n);
        root[r] = true;
        for (uint32_t v = 0; v < n; v++)
            mark[v] = target[v] = tu_random(&rng) % 10 == 0;
        bfs(&t, root, false, from_root);
        bfs(&t, target, true, to_target);
        CU_ASSERT_EQUAL_FATAL(cl_graph_reaching(n, r, table_out, &t, mark), 0);
        for (uint32_t v = 0; v < n; v++) {
            wrong += mark[v] != (from_root[v] && to_target[v]);
            marked += mark[v];
        }
        CU_ASSERT_EQUAL(t.calls_past_end, 0);
    }
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_TRUE(marked > 300); /* the graphs are not all trivially unmarked */
}

void register_graph_reach_tests(void)
{
    static const struct tu_test tests[] = {
        {"tree", test_tree},
        {"cycles, done before and after the target", test_cycles},
        {"skipped edges", test_skipped_edges},
        {"bad edge, root out of range, no vertices", test_bad_input},
        {"2,000,000-vertex chain and cycle", test_long_chain},
        {"random graphs against two searches", test_random_graphs},
        {NULL, NULL},
    };
    tu_add_suite("graph/reach", tests);
}

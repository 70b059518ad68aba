/* Immediate dominators: hand-made graphs with known answers (Lengauer and Tarjan's own example
 * among them), 2,000,000-vertex chains that would overflow a recursive DFS or compress, and random
 * graphs checked against a naive reference. Every result is also checked against the order
 * contract: each reached vertex once, the root first, every vertex after its idom. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "graph/dominators.h"
#include "suites.h"
#include "testutil.h"

#define NONE CL_GRAPH_NONE

struct edge {
    uint32_t src, dst;
};

/* A graph built from an edge list; each vertex's edges keep the list's order. */
struct csr {
    struct cl_graph g;
    uint32_t *first, *dst;
};

static void csr_build(struct csr *c, uint32_t n, const struct edge *e, size_t m)
{
    c->first = calloc((size_t)n + 1, sizeof *c->first);
    c->dst = malloc((m ? m : 1) * sizeof *c->dst);
    CU_ASSERT_FATAL(c->first && c->dst);
    for (size_t i = 0; i < m; i++)
        c->first[e[i].src + 1]++;
    for (uint32_t v = 0; v < n; v++)
        c->first[v + 1] += c->first[v];
    uint32_t *fill = malloc(((size_t)n + 1) * sizeof *fill);
    CU_ASSERT_FATAL(fill != NULL);
    memcpy(fill, c->first, ((size_t)n + 1) * sizeof *fill);
    for (size_t i = 0; i < m; i++)
        c->dst[fill[e[i].src]++] = e[i].dst;
    free(fill);
    c->g = (struct cl_graph){n, c->first, c->dst};
}

static void csr_free(struct csr *c)
{
    free(c->first);
    free(c->dst);
    *c = (struct csr){0};
}

/* The order contract; returns the number of violations so that big graphs assert once. */
static uint32_t order_errors(const struct cl_graph *g, uint32_t root, const uint32_t *idom,
                             const uint32_t *order, uint32_t nordered)
{
    uint32_t bad = 0, reached = 0;
    uint32_t *pos = malloc(((size_t)g->n + 1) * sizeof *pos);
    CU_ASSERT_FATAL(pos != NULL);
    for (uint32_t v = 0; v < g->n; v++) {
        pos[v] = NONE;
        reached += idom[v] != NONE;
    }
    bad += reached != nordered;
    bad += nordered && order[0] != root;
    for (uint32_t i = 0; i < nordered && i < g->n; i++) {
        if (order[i] >= g->n || pos[order[i]] != NONE || idom[order[i]] == NONE)
            bad++;   /* not a vertex, twice, or one the root does not reach */
        else
            pos[order[i]] = i;
    }
    for (uint32_t i = 1; i < nordered && i < g->n; i++) {
        uint32_t v = order[i];
        if (v < g->n && (idom[v] >= g->n || pos[idom[v]] == NONE || pos[idom[v]] >= i))
            bad++;
    }
    free(pos);
    return bad;
}

/* Runs cl_dominators and checks it against want (n entries) and the order contract. */
static void expect_idoms(uint32_t n, const struct edge *e, size_t m, uint32_t root,
                         const uint32_t *want)
{
    struct csr c;
    csr_build(&c, n, e, m);
    uint32_t *idom = malloc(((size_t)n + 1) * sizeof *idom);
    uint32_t *order = malloc(((size_t)n + 1) * sizeof *order);
    uint32_t nordered = 12345;
    CU_ASSERT_FATAL(idom && order);
    CU_ASSERT_EQUAL_FATAL(cl_dominators(&c.g, root, idom, order, &nordered), 0);
    for (uint32_t v = 0; v < n; v++)
        CU_ASSERT_EQUAL(idom[v], want[v]);
    CU_ASSERT_EQUAL(order_errors(&c.g, root, idom, order, nordered), 0);
    free(idom);
    free(order);
    csr_free(&c);
}

#define EXPECT(n, edges, root, ...) \
    do { \
        const uint32_t want_[n] = {__VA_ARGS__}; \
        expect_idoms(n, edges, sizeof edges / sizeof *edges, root, want_); \
    } while (0)

static void test_chain(void)
{
    static const struct edge e[] = {{0, 1}, {1, 2}, {2, 3}, {3, 4}};
    EXPECT(5, e, 0, 0, 0, 1, 2, 3);
    EXPECT(5, e, 2, NONE, NONE, 2, 2, 3);   /* rooted mid-chain: what lies before is unreached */
}

static void test_diamond(void)
{
    /* 0 forks to 1 and 2, which join at 3: the join is dominated by the fork, not by a branch. */
    static const struct edge e[] = {{0, 1}, {0, 2}, {1, 3}, {2, 3}, {3, 4}};
    EXPECT(5, e, 0, 0, 0, 0, 0, 3);
}

/* Figure 1 of Lengauer and Tarjan (TOPLAS 1979), R = 0 and A..L = 1..12, with the idoms of its
 * dominator tree: R above A B C D E H I K, C above F G, G above J, D above L. */
enum { R, A, B, C, D, E, F, G, H, I, J, K, L };
static void test_lengauer_tarjan_example(void)
{
    static const struct edge e[] = {
        {R, A}, {R, B}, {R, C}, {A, D}, {B, A}, {B, D}, {B, E}, {C, F}, {C, G}, {D, L}, {E, H},
        {F, I}, {G, I}, {G, J}, {H, E}, {H, K}, {I, K}, {J, I}, {K, I}, {K, R}, {L, H},
    };
    EXPECT(13, e, R, [R] = R, [A] = R, [B] = R, [C] = R, [D] = R, [E] = R, [F] = C, [G] = C,
           [H] = R, [I] = R, [J] = G, [K] = R, [L] = D);
}

static void test_cycle_to_root(void)
{
    /* 3 -> 0 closes a cycle through the root; the root keeps itself as idom. */
    static const struct edge e[] = {{0, 1}, {1, 2}, {2, 3}, {3, 0}, {2, 4}, {4, 1}};
    EXPECT(5, e, 0, 0, 0, 1, 2, 2);
    EXPECT(5, e, 2, 3, 2, 2, 2, 2); /* the same cycle, rooted elsewhere */
}

static void test_unreachable(void)
{
    /* 3 and 4 point into the reached part (and at each other) but nothing reaches them. */
    static const struct edge e[] = {{0, 1}, {1, 2}, {3, 1}, {3, 4}, {4, 3}, {4, 2}};
    EXPECT(6, e, 0, 0, 0, 1, NONE, NONE, NONE);
}

static void test_self_loops_and_duplicates(void)
{
    static const struct edge e[] = {
        {0, 0}, {0, 1}, {0, 1}, {1, 1}, {1, 2}, {1, 2}, {1, 3}, {2, 2}, {2, 3}, {3, 3}, {3, 3},
    };
    EXPECT(4, e, 0, 0, 0, 1, 1);
}

static void test_two_children_one_node(void)
{
    /* 1 and 2 both point at 3: only the root dominates it. */
    static const struct edge e[] = {{0, 1}, {0, 2}, {1, 3}, {2, 3}, {3, 4}};
    EXPECT(5, e, 0, 0, 0, 0, 0, 3);
    static const struct edge longer[] = {{0, 1}, {1, 2}, {0, 3}, {3, 4}, {2, 5}, {4, 5}};
    EXPECT(6, longer, 0, 0, 0, 1, 0, 3, 0);
}

static void test_no_vertices_and_bad_root(void)
{
    static const uint32_t first[3] = {0, 1, 1};
    static const uint32_t dst[1] = {1};
    uint32_t idom[2] = {7, 7}, order[2] = {7, 7}, nordered = 7;
    struct cl_graph empty = {0, first, dst};
    CU_ASSERT_EQUAL(cl_dominators(&empty, 0, idom, order, &nordered), 0);
    CU_ASSERT_EQUAL(nordered, 0);
    struct cl_graph two = {2, first, dst};
    CU_ASSERT_EQUAL(cl_dominators(&two, 2, idom, order, &nordered), 0);
    CU_ASSERT_EQUAL(nordered, 0);
    CU_ASSERT_EQUAL(idom[0], NONE);
    CU_ASSERT_EQUAL(idom[1], NONE);
    CU_ASSERT_EQUAL(cl_dominators(&two, NONE, idom, order, &nordered), 0);
    CU_ASSERT_EQUAL(nordered, 0);
    CU_ASSERT_EQUAL(cl_dominators(&two, 1, idom, order, &nordered), 0); /* a lone vertex */
    CU_ASSERT_EQUAL(nordered, 1);
    CU_ASSERT_EQUAL(order[0], 1);
    CU_ASSERT_EQUAL(idom[0], NONE);
    CU_ASSERT_EQUAL(idom[1], 1);
}

static void test_malformed_graph(void)
{
    /* An edge to a vertex that does not exist, and a decreasing first[]: a bug in the caller. */
    static const uint32_t first[3] = {0, 1, 1}, dst_out[1] = {5}, first_down[3] = {0, 1, 0};
    static const uint32_t dst[1] = {1};
    uint32_t idom[2], order[2], nordered;
    struct cl_graph out_of_range = {2, first, dst_out};
    CU_ASSERT_EQUAL(cl_dominators(&out_of_range, 0, idom, order, &nordered), CL_E_INTERNAL);
    CU_ASSERT_EQUAL(nordered, 0);
    CU_ASSERT_EQUAL(cl_dominators(&out_of_range, 1, idom, order, &nordered), 0); /* unreached */
    CU_ASSERT_EQUAL(nordered, 1);
    struct cl_graph down = {2, first_down, dst};
    CU_ASSERT_EQUAL(cl_dominators(&down, 0, idom, order, &nordered), CL_E_INTERNAL);
}

#define BIG 2000000u

/* Runs cl_dominators on a big graph; want(v) is v's expected idom. Asserts once per kind. */
static void expect_big(const struct cl_graph *g, uint32_t root, uint32_t (*want)(uint32_t))
{
    uint32_t *idom = malloc((size_t)g->n * sizeof *idom);
    uint32_t *order = malloc((size_t)g->n * sizeof *order);
    uint32_t nordered;
    CU_ASSERT_FATAL(idom && order);
    CU_ASSERT_EQUAL_FATAL(cl_dominators(g, root, idom, order, &nordered), 0);
    CU_ASSERT_EQUAL(nordered, g->n);
    uint32_t wrong = 0;
    for (uint32_t v = 0; v < g->n; v++)
        wrong += idom[v] != want(v);
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_EQUAL(order_errors(g, root, idom, order, nordered), 0);
    free(idom);
    free(order);
}

static uint32_t chain_idom(uint32_t v)
{
    return v ? v - 1 : 0;
}

static void test_long_chain(void)
{
    /* 0 -> 1 -> ... -> BIG-1: the DFS goes BIG deep. With the tail pointing back at 1, step 2
     * evaluates the tail when it reaches 1, and compresses a forest path BIG-2 long. */
    uint32_t *first = malloc(((size_t)BIG + 1) * sizeof *first);
    uint32_t *dst = malloc((size_t)BIG * sizeof *dst);
    CU_ASSERT_FATAL(first && dst);
    for (uint32_t v = 0; v < BIG; v++) {
        first[v] = v;
        dst[v] = v + 1;
    }
    first[BIG] = BIG - 1; /* the tail has no edge */
    struct cl_graph g = {BIG, first, dst};
    expect_big(&g, 0, chain_idom);
    first[BIG] = BIG;
    dst[BIG - 1] = 1;
    expect_big(&g, 0, chain_idom);
    free(first);
    free(dst);
}

/* The broom: a handle 0 .. HANDLE-1, whose end fans out to BRISTLES leaves, each pointing at
 * one last vertex and back at vertex 1. */
#define HANDLE (BIG / 2)
#define BRISTLES (BIG / 2 - 1)
#define SINK (BIG - 1)

static uint32_t broom_idom(uint32_t v)
{
    return v && v <= HANDLE - 1 ? v - 1 : v ? HANDLE - 1 : 0;
}

static void test_broom(void)
{
    size_t m = (HANDLE - 1) + BRISTLES + 2 * (size_t)BRISTLES;
    uint32_t *first = malloc(((size_t)BIG + 1) * sizeof *first);
    uint32_t *dst = malloc(m * sizeof *dst);
    CU_ASSERT_FATAL(first && dst);
    uint32_t e = 0;
    for (uint32_t v = 0; v < BIG; v++) {
        first[v] = e;
        if (v < HANDLE - 1)
            dst[e++] = v + 1;
        else if (v == HANDLE - 1)
            for (uint32_t b = 0; b < BRISTLES; b++)
                dst[e++] = HANDLE + b;
        else if (v != SINK) {
            dst[e++] = SINK;
            dst[e++] = 1;
        }
    }
    first[BIG] = e;
    CU_ASSERT_EQUAL_FATAL(e, m);
    struct cl_graph g = {BIG, first, dst};
    expect_big(&g, 0, broom_idom);
    free(first);
    free(dst);
}

#define MAXV 60

/* seen[v]: root reaches v without passing through `removed` (NONE: nothing removed). */
static void reach(const struct cl_graph *g, uint32_t root, uint32_t removed, bool *seen)
{
    uint32_t queue[MAXV], head = 0, tail = 0;
    memset(seen, 0, g->n * sizeof *seen);
    if (root == removed)
        return;
    seen[root] = true;
    queue[tail++] = root;
    while (head < tail) {
        uint32_t v = queue[head++];
        for (uint32_t e = g->first[v]; e < g->first[v + 1]; e++) {
            uint32_t w = g->dst[e];
            if (w != removed && !seen[w]) {
                seen[w] = true;
                queue[tail++] = w;
            }
        }
    }
}

/* The definition, directly: d dominates v iff v is reached and removing d cuts it off (or d is
 * v); idom(v) is the strict dominator that every other strict dominator dominates. */
static void naive_idoms(const struct cl_graph *g, uint32_t root, uint32_t *idom)
{
    bool dom[MAXV][MAXV]; /* dom[d][v] */
    bool reached[MAXV], without[MAXV];
    reach(g, root, NONE, reached);
    for (uint32_t d = 0; d < g->n; d++) {
        reach(g, root, d, without);
        for (uint32_t v = 0; v < g->n; v++)
            dom[d][v] = reached[v] && (d == v || !without[v]);
    }
    for (uint32_t v = 0; v < g->n; v++) {
        idom[v] = !reached[v] ? NONE : v == root ? root : NONE;
        for (uint32_t d = 0; d < g->n && reached[v] && v != root; d++) {
            bool lowest = d != v && dom[d][v];
            for (uint32_t o = 0; o < g->n && lowest; o++)
                if (o != v && o != d && dom[o][v] && !dom[o][d])
                    lowest = false;
            if (lowest) {
                CU_ASSERT_EQUAL(idom[v], NONE); /* exactly one */
                idom[v] = d;
            }
        }
    }
}

static void test_random_graphs(void)
{
    uint64_t rng = 20240611;
    struct edge e[4 * MAXV + MAXV];
    uint32_t idom[MAXV], order[MAXV], want[MAXV], nordered;
    uint32_t wrong = 0, bad_order = 0, reached_total = 0;
    for (int round = 0; round < 200; round++) {
        uint32_t n = 1 + (uint32_t)(tu_random(&rng) % MAXV);
        uint32_t m = (uint32_t)(tu_random(&rng) % (n * (1 + tu_random(&rng) % 4) + 1));
        for (uint32_t i = 0; i < m; i++)
            e[i] = (struct edge){(uint32_t)(tu_random(&rng) % n), (uint32_t)(tu_random(&rng) % n)};
        for (uint32_t v = 0; round % 2 && v + 1 < n; v++) /* a spine: reach more of it */
            if (tu_random(&rng) % 3)
                e[m++] = (struct edge){v, v + 1};
        uint32_t root = (uint32_t)(tu_random(&rng) % n);
        struct csr c;
        csr_build(&c, n, e, m);
        CU_ASSERT_EQUAL_FATAL(cl_dominators(&c.g, root, idom, order, &nordered), 0);
        naive_idoms(&c.g, root, want);
        for (uint32_t v = 0; v < n; v++)
            wrong += idom[v] != want[v];
        bad_order += order_errors(&c.g, root, idom, order, nordered);
        reached_total += nordered;
        csr_free(&c);
    }
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_EQUAL(bad_order, 0);
    CU_ASSERT_TRUE(reached_total > 200 * 5); /* the graphs are not all trivially small */
}

void register_graph_dominators_tests(void)
{
    static const struct tu_test tests[] = {
        {"chain", test_chain},
        {"diamond", test_diamond},
        {"Lengauer-Tarjan paper example", test_lengauer_tarjan_example},
        {"cycle back to the root", test_cycle_to_root},
        {"unreachable vertices", test_unreachable},
        {"self-loops and duplicate edges", test_self_loops_and_duplicates},
        {"two children of the root join", test_two_children_one_node},
        {"no vertices, root out of range", test_no_vertices_and_bad_root},
        {"malformed graph is refused", test_malformed_graph},
        {"2,000,000-vertex chain", test_long_chain},
        {"2,000,000-vertex broom", test_broom},
        {"random graphs against the definition", test_random_graphs},
        {NULL, NULL},
    };
    tu_add_suite("graph/dominators", tests);
}

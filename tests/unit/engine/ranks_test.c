/* The ranks side by side: a rank above the median by a pattern is named, with its excess; ranks
 * that hold the same, or differ by less than the threshold, are not. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "engine/ranks.h"
#include "suites.h"
#include "testutil.h"

#define MiB (1ull << 20)

static void add(struct cl_snapshot *s, const char *pattern, uint64_t bytes)
{
    s->v = realloc(s->v, (s->n + 1) * sizeof *s->v);
    s->v[s->n++] = (struct cl_snapshot_entry){strdup(pattern), 1, bytes};
    s->bytes += bytes;
    s->storages++;
}

static char *report(struct cl_snapshot *snaps, size_t n)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    const char *sources[8] = {0};
    struct cl_ranks ranks;
    struct cl_error err;
    CU_ASSERT_EQUAL_FATAL(cl_ranks_build(snaps, sources, n, &ranks, &err), 0);
    cl_ranks_write_text(out, &ranks);
    cl_ranks_free(&ranks);
    fclose(out);
    return text;
}

static void job(struct cl_snapshot *snaps, size_t n, uint64_t last_outputs)
{
    memset(snaps, 0, n * sizeof *snaps);
    for (size_t r = 0; r < n; r++) {
        snaps[r].pid = 100 + (int)r;
        snaps[r].rank = (struct cl_rank){(int)r, (int)r, (int)n};
        add(&snaps[r], "__main__.weights", 2 * MiB);
        add(&snaps[r], "__main__.outputs[*]", r == n - 1 ? last_outputs : 4 * MiB);
    }
}

static void test_one_rank_above(void)
{
    struct cl_snapshot snaps[4];
    job(snaps, 4, 16 * MiB);
    add(&snaps[1], "__main__.cache", 3 * MiB);   /* only one rank has it: the median is 0 */
    char *text = report(snaps, 4);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "rank 3: +12.0 MiB in __main__.outputs[*] more than the "
                                        "median (4.0 MiB)\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "rank 1: +3.0 MiB in __main__.cache more than the median "
                                        "(0 B)\n"));
    CU_ASSERT_PTR_NULL(strstr(text, "__main__.weights more"));
    CU_ASSERT_TRUE(strstr(text, "rank 3: +12") < strstr(text, "rank 1: +3")); /* biggest first */
    free(text);
    for (size_t r = 0; r < 4; r++)
        cl_snapshot_free(&snaps[r]);
}

static void test_alike_ranks(void)
{
    struct cl_snapshot snaps[3];
    job(snaps, 3, 4 * MiB + 512 * 1024); /* half a MiB more: under the threshold */
    char *text = report(snaps, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "no rank holds 1 MiB or more above the median"));
    free(text);
    for (size_t r = 0; r < 3; r++)
        cl_snapshot_free(&snaps[r]);
}

/* Two ranks: the one that holds more is compared with the other, not with their mean. */
static void test_two_ranks(void)
{
    struct cl_snapshot snaps[2];
    job(snaps, 2, 12 * MiB);
    char *text = report(snaps, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "rank 1: +8.0 MiB in __main__.outputs[*] more than rank 0 "
                                        "(4.0 MiB)\n"));
    free(text);
    for (size_t r = 0; r < 2; r++)
        cl_snapshot_free(&snaps[r]);
    job(snaps, 2, 4 * MiB);
    text = report(snaps, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "neither rank holds 1 MiB or more than the other"));
    free(text);
    for (size_t r = 0; r < 2; r++)
        cl_snapshot_free(&snaps[r]);
}

void register_engine_ranks_tests(void)
{
    static const struct tu_test tests[] = {
        {"one rank above the median", test_one_rank_above},
        {"alike ranks", test_alike_ranks},
        {"two ranks", test_two_ranks},
        {NULL, NULL},
    };
    tu_add_suite("engine/ranks", tests);
}

/* Holder patterns: indices collapsed, a frame's line left out (recursion kept apart), a graph cut
 * at .grad_fn; a snapshot file of the older pattern format collapsed again on reading; and the
 * line watch and break-step print per step: what grew, and what changed by category. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "engine/snapshot.h"
#include "suites.h"
#include "testutil.h"

static void assert_collapses(const char *path, const char *want)
{
    char out[512], again[512];
    cl_path_collapse(path, out, sizeof out);
    CU_ASSERT_STRING_EQUAL(out, want);
    cl_path_collapse(out, again, sizeof again); /* a pattern is its own pattern */
    CU_ASSERT_STRING_EQUAL(again, want);
}

static void test_collapse(void)
{
    assert_collapses("__main__.history[17]", "__main__.history[*]");
    assert_collapses("__main__.cache[-3][0]", "__main__.cache[*][*]");
    assert_collapses("__main__.cache['key']", "__main__.cache['key']");
    assert_collapses("<thread main: main() at job.py:25>.trainer",
                     "<thread main: main() at job.py>.trainer");
    assert_collapses("<thread main: main() at job.py>.trainer",
                     "<thread main: main() at job.py>.trainer");
    assert_collapses("<thread main: <module>() at job.py:7 (recursion 2)>.x[3]",
                     "<thread main: <module>() at job.py (recursion 2)>.x[*]");
    /* a colon in the file's name is no line */
    assert_collapses("<thread worker: f() at a:b.py:12>.y", "<thread worker: f() at a:b.py>.y");
    assert_collapses("<thread main: exception being raised>.__traceback__",
                     "<thread main: exception being raised>.__traceback__");
    /* only a thread's frame root: a module global keeps its text */
    assert_collapses("__main__.d['at job.py:3>']", "__main__.d['at job.py:3>']");
    assert_collapses("__main__.losses[4].grad_fn.next_functions[0][0]",
                     "__main__.losses[*].grad_fn");
}

/* A snapshot of one pattern and one category (in *e, two entries), or none of its categories
 * known (an older file's). */
static struct cl_snapshot one(struct cl_snapshot_entry e[2], const char *pattern, uint64_t bytes,
                              bool categories)
{
    e[0] = (struct cl_snapshot_entry){(char *)pattern, 1, bytes};
    e[1] = (struct cl_snapshot_entry){"cuda:0 saved for backward", 1, bytes};
    return (struct cl_snapshot){.v = &e[0],
                                .n = 1,
                                .storages = 1,
                                .bytes = bytes,
                                .cat = &e[1],
                                .ncat = 1,
                                .has_categories = categories};
}

static void test_step_line(void)
{
    char line[512];
    struct cl_snapshot_entry ea[2], eb[2], ec[2];
    struct cl_snapshot a = one(ea, "__main__.losses[*].grad_fn", 1024, true);
    struct cl_snapshot b = one(eb, "__main__.losses[*].grad_fn", 3072, true);
    CU_ASSERT_EQUAL(cl_snapshot_delta(&a, &b, line, sizeof line), 2048);
    CU_ASSERT_STRING_EQUAL(line, "+0 storages, +2.0 KiB; grew: __main__.losses[*].grad_fn "
                                 "+2.0 KiB; by category: cuda:0 saved for backward +2.0 KiB");
    /* released: no growth, the category's change still said */
    CU_ASSERT_EQUAL(cl_snapshot_delta(&b, &a, line, sizeof line), -2048);
    CU_ASSERT_STRING_EQUAL(line, "+0 storages, -2.0 KiB; by category: cuda:0 saved for backward "
                                 "-2.0 KiB");
    /* a side without categories: none compared */
    struct cl_snapshot c = one(ec, "__main__.losses[*].grad_fn", 3072, false);
    CU_ASSERT_EQUAL(cl_snapshot_delta(&a, &c, line, sizeof line), 2048);
    CU_ASSERT_PTR_NOT_NULL(strstr(line, "grew: __main__.losses[*].grad_fn +2.0 KiB"));
    CU_ASSERT_PTR_NULL(strstr(line, "by category"));
}

static void test_old_patterns(void)
{
    char path[] = "/tmp/culeak-snapshot-XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    FILE *f = fdopen(fd, "w");
    CU_ASSERT_FATAL(f != NULL);
    /* culeak 0.2's file: no "patterns", frame roots with their line */
    fprintf(f, "{\"schema_version\": 1, \"kind\": \"culeak-snapshot\", \"pid\": 7, "
               "\"storages\": 3, \"bytes\": 60, \"entries\": ["
               "{\"pattern\": \"<thread main: main() at job.py:6>.big\", \"storages\": 1, "
               "\"bytes\": 10},"
               "{\"pattern\": \"<thread main: main() at job.py:7>.big\", \"storages\": 1, "
               "\"bytes\": 20},"
               "{\"pattern\": \"__main__.h[*]\", \"storages\": 1, \"bytes\": 30}]}");
    fclose(f);
    struct cl_snapshot s;
    struct cl_error err = {0};
    CU_ASSERT_EQUAL_FATAL(cl_snapshot_read(path, &s, &err), 0);
    CU_ASSERT_TRUE(s.recollapsed);
    CU_ASSERT_EQUAL_FATAL(s.n, 2);
    CU_ASSERT_STRING_EQUAL(s.v[0].path, "<thread main: main() at job.py>.big");
    CU_ASSERT_EQUAL(s.v[0].bytes, 30);
    CU_ASSERT_EQUAL(s.v[0].storages, 2);
    /* a diff of it says so */
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    CU_ASSERT_EQUAL(cl_snapshot_diff(out, &s, &s, false, &err), 0);
    fclose(out);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "note: both snapshots were written by an older culeak"));
    free(text);
    cl_snapshot_free(&s);

    /* a format this culeak does not know is refused */
    f = fopen(path, "w");
    CU_ASSERT_FATAL(f != NULL);
    fprintf(f, "{\"schema_version\": 1, \"kind\": \"culeak-snapshot\", \"patterns\": 3, "
               "\"pid\": 7, \"storages\": 0, \"bytes\": 0, \"entries\": []}");
    fclose(f);
    CU_ASSERT_EQUAL(cl_snapshot_read(path, &s, &err), CL_E_IO);
    unlink(path);
}

/* A device's growth is the sum of its categories' changes: a move between categories of one
 * device is none, a category new on one device counts, and the device that grew most is named. */
static void test_device_growth(void)
{
    struct cl_snapshot_entry before[] = {{"cpu other tensors", 1, 4096},
                                         {"cuda:0 parameters", 1, 1000},
                                         {"cuda:0 other tensors", 1, 500}};
    struct cl_snapshot_entry after[] = {{"cpu other tensors", 1, 4096},
                                        {"cuda:0 parameters", 1, 1000},
                                        {"cuda:0 gradients", 1, 500},
                                        {"cuda:1 saved for backward", 2, 3000}};
    struct cl_snapshot a = {.cat = before, .ncat = 3, .has_categories = true};
    struct cl_snapshot b = {.cat = after, .ncat = 4, .has_categories = true};
    char device[32];
    CU_ASSERT_EQUAL(cl_snapshot_device_growth(&a, &b, device), 3000);
    CU_ASSERT_STRING_EQUAL(device, "cuda:1");
    b.ncat = 3; /* cuda:0's 500 bytes moved from other tensors to gradients: no growth */
    CU_ASSERT_EQUAL(cl_snapshot_device_growth(&a, &b, device), 0);
    CU_ASSERT_STRING_EQUAL(device, "");
}

void register_engine_snapshot_tests(void)
{
    static const struct tu_test tests[] = {
        {"patterns", test_collapse},
        {"older pattern format", test_old_patterns},
        {"the line of a step: growth, and changes by category", test_step_line},
        {"a device's growth", test_device_growth},
        {NULL, NULL},
    };
    tu_add_suite("engine/snapshot", tests);
}

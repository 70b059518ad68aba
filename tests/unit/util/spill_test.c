/* Spill files: what is written comes back whole, and nothing is left behind by name. */
#include <dirent.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "suites.h"
#include "testutil.h"
#include "util/spill.h"

/* Entries of dir other than . and .. */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    if (d)
        closedir(d);
    return n;
}

/* Sets TMPDIR for a test; the run's own comes back with restore_tmpdir. */
static char *saved_tmpdir;

static void set_tmpdir(const char *dir)
{
    if (!saved_tmpdir && getenv("TMPDIR"))
        saved_tmpdir = strdup(getenv("TMPDIR"));
    setenv("TMPDIR", dir, 1);
}

static void restore_tmpdir(void)
{
    if (saved_tmpdir)
        setenv("TMPDIR", saved_tmpdir, 1);
    else
        unsetenv("TMPDIR");
    free(saved_tmpdir);
    saved_tmpdir = NULL;
}

static void test_round_trip(void)
{
    char *dir = tu_mkdtemp();
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    set_tmpdir(dir);
    CU_ASSERT_STRING_EQUAL(cl_tmp_dir(), dir);
    FILE *f = cl_spill_open();
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(entries(dir), 0); /* unlinked from the start */
    for (int i = 0; i < 200000; i++) /* more than the file's buffer and the copy's */
        fprintf(f, "%d\n", i);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    CU_ASSERT_TRUE(cl_spill_copy(f, out));
    fclose(out);
    fclose(f);
    size_t want = 0;
    for (int i = 0; i < 200000; i++)
        want += (size_t)snprintf(NULL, 0, "%d\n", i);
    CU_ASSERT_EQUAL(len, want);
    CU_ASSERT_TRUE(text && strncmp(text, "0\n1\n2\n", 6) == 0);
    CU_ASSERT_TRUE(text && len > 7 && strcmp(text + len - 7, "199999\n") == 0);
    free(text);
    CU_ASSERT_EQUAL(entries(dir), 0);
    restore_tmpdir();
    tu_rmtree(dir);
}

static void test_no_folder(void)
{
    set_tmpdir("/nonexistent/culeak");
    CU_ASSERT_PTR_NULL(cl_spill_open());
    set_tmpdir(""); /* empty: the default */
    CU_ASSERT_STRING_EQUAL(cl_tmp_dir(), "/tmp");
    restore_tmpdir();
}

void register_util_spill_tests(void)
{
    static const struct tu_test tests[] = {
        {"round trip", test_round_trip},
        {"no folder", test_no_folder},
        {NULL, NULL},
    };
    tu_add_suite("util/spill", tests);
}

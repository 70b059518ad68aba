/* A core from a pipe, spooled: the file reads back as the stream was, its pages of zeros holes
 * that take no disk, and a stream whose data passes the limit is refused, nothing kept. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "suites.h"
#include "target/spool.h"
#include "testutil.h"

#define PAGES 64

/* The stream: PAGES pages of zeros but page 5 and the last half page, from a child writing
 * into a pipe (a pipe holds less than the stream: the spool must read as it comes). */
static int stream(unsigned char *want)
{
    memset(want, 0, PAGES * 4096);
    memset(want + 5 * 4096, 0xab, 4096);
    memset(want + (PAGES - 1) * 4096, 0xcd, 2048);
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    if (fork() == 0) {
        close(fds[0]);
        size_t len = PAGES * 4096 - 2048;
        for (size_t at = 0; at < len;) {
            ssize_t n = write(fds[1], want + at, len - at);
            if (n <= 0)
                _exit(1);
            at += (size_t)n;
        }
        _exit(0);
    }
    close(fds[1]);
    return fds[0];
}

static void test_holes(void)
{
    unsigned char *want = malloc(PAGES * 4096), *got = malloc(PAGES * 4096);
    CU_ASSERT_FATAL(want && got);
    int in = stream(want);
    CU_ASSERT_FATAL(in >= 0);
    struct cl_spool s;
    struct cl_error err = {0};
    CU_ASSERT_EQUAL_FATAL(cl_spool_stream(in, "/tmp", 1 << 20, &s, &err), 0);
    wait(NULL);
    close(in);
    CU_ASSERT_EQUAL(s.size, PAGES * 4096 - 2048);
    CU_ASSERT_EQUAL(s.stored, 4096 + 2048);
    struct stat st;
    CU_ASSERT(fstat(s.fd, &st) == 0 && st.st_size == (off_t)s.size);
    CU_ASSERT(st.st_blocks * 512 <= 4 * 4096);   /* the zeros take no disk */
    CU_ASSERT_EQUAL(pread(s.fd, got, s.size, 0), (ssize_t)s.size);
    CU_ASSERT(memcmp(got, want, s.size) == 0);
    cl_spool_close(&s);
    free(want);
    free(got);
}

static void test_limit(void)
{
    unsigned char *want = malloc(PAGES * 4096);
    CU_ASSERT_FATAL(want != NULL);
    int in = stream(want);
    CU_ASSERT_FATAL(in >= 0);
    struct cl_spool s;
    struct cl_error err = {0};
    CU_ASSERT_EQUAL(cl_spool_stream(in, "/tmp", 4096, &s, &err), CL_E_IO);
    CU_ASSERT(strstr(err.msg, "--copy-limit") != NULL);
    CU_ASSERT_EQUAL(s.fd, -1);
    close(in);   /* the writer, blocked on a full pipe, ends */
    wait(NULL);
    CU_ASSERT_EQUAL(cl_spool_stream(0, "/nonexistent", 4096, &s, &err), CL_E_IO);
    free(want);
}

void register_target_spool_tests(void)
{
    static const struct tu_test tests[] = {
        {"page of zeros left a hole", test_holes},
        {"data past the limit refused", test_limit},
        {NULL, NULL},
    };
    tu_add_suite("target/spool", tests);
}

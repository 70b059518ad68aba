/* Live targets: a forked child is stopped while open (keep_stopped) or while its changing memory
 * is copied, read through cl_read, and resumes exactly as it was on close. Needs ptrace rights
 * over our own children (root, or ptrace_scope <= 1). */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "suites.h"
#include "target/pagecache.h"
#include "target/target.h"
#include "testutil.h"

#define MAGIC 0x5ca1ab1e0ddba11ull

/* Set before fork, changed after it in the parent: the child's copy keeps MAGIC at the same
 * address. */
static volatile uint64_t live_magic;
static const char live_text[] = "culeak live target text";

/* Read-only data the open never reads: pages a test reads first after the child is gone. */
static const unsigned char far_text[1 << 16] = {1, [(1 << 16) - 1] = 2};
/* A pointer the loader relocates when the binary is position-independent: read-only once loaded
 * (RELRO), but a page the process wrote, so not the file's bytes. */
static const char *const relocated_text = live_text;

static struct cl_target *open_live_with(pid_t pid, bool keep_stopped)
{
    struct cl_target *t = NULL;
    struct cl_error err = {0};
    struct cl_open_options opt = {.keep_stopped = keep_stopped};
    int rc = cl_target_open_live(pid, &opt, &t, &err);
    CU_ASSERT_EQUAL(rc, 0);
    if (rc)
        fprintf(stderr, "\n  open pid %d: %s\n", (int)pid, err.msg);
    return t;
}

/* Stopped for as long as it is open. */
static struct cl_target *open_live(pid_t pid)
{
    return open_live_with(pid, true);
}

static void test_open_read_close(void)
{
    live_magic = MAGIC;
    pid_t child = tu_fork_paused_child();
    CU_ASSERT_FATAL(child > 0);
    live_magic = 1;
    CU_ASSERT_EQUAL(tu_proc_state(child), 'S');
    CU_ASSERT_EQUAL(tu_tracer_pid(child), 0);

    struct cl_target *t = open_live(child);
    if (t) {
        CU_ASSERT_EQUAL(t->kind, CL_TARGET_LIVE);
        CU_ASSERT_EQUAL(t->pid, child);
        CU_ASSERT_EQUAL(t->nthreads, 1);
        CU_ASSERT_EQUAL(t->threads[0].tid, child);
        CU_ASSERT_EQUAL(tu_proc_state(child), 't');
        CU_ASSERT_EQUAL(tu_tracer_pid(child), getpid());
        CU_ASSERT(t->maps.n > 5);
        CU_ASSERT_PTR_NOT_NULL(t->exe_path);

        uint64_t v = 0;
        CU_ASSERT_EQUAL(cl_read_u64(t, (uint64_t)(uintptr_t)&live_magic, &v), 0);
        CU_ASSERT_EQUAL(v, MAGIC);
        char s[64];
        CU_ASSERT_EQUAL(cl_read_cstr(t, (uint64_t)(uintptr_t)live_text, s, sizeof s), 0);
        CU_ASSERT_STRING_EQUAL(s, live_text);
        CU_ASSERT_EQUAL(cl_read_u64(t, 8, &v), CL_E_UNREADABLE);   /* page 0 is never mapped */
        cl_target_close(t);
    }
    CU_ASSERT_EQUAL(tu_wait_state(child, "S"), 'S');   /* resumed: asleep in pause() again */
    CU_ASSERT_EQUAL(tu_tracer_pid(child), 0);
    CU_ASSERT(tu_kill_child(child));
}

/* The /proc/PID/mem fallback, forced as on systems that refuse process_vm_readv. */
static void test_proc_mem_fallback(void)
{
    live_magic = MAGIC ^ 0xff;
    pid_t child = tu_fork_paused_child();
    CU_ASSERT_FATAL(child > 0);
    live_magic = 2;
    setenv("CULEAK_NO_PROCESS_VM_READV", "1", 1);
    struct cl_target *t = open_live(child);
    unsetenv("CULEAK_NO_PROCESS_VM_READV");
    if (t) {
        uint64_t v = 0;
        CU_ASSERT_EQUAL(cl_read_u64(t, (uint64_t)(uintptr_t)&live_magic, &v), 0);
        CU_ASSERT_EQUAL(v, MAGIC ^ 0xff);
        char s[64];
        CU_ASSERT_EQUAL(cl_read_cstr(t, (uint64_t)(uintptr_t)live_text, s, sizeof s), 0);
        CU_ASSERT_STRING_EQUAL(s, live_text);
        cl_target_close(t);
    }
    CU_ASSERT(tu_kill_child(child));
}

/* The default: stopped while its changing memory is copied, then running while it is read; the
 * copy keeps what the memory held then, even once the process is gone, and reads its read-only
 * file pages from the file, but for those it wrote (relocated). Shared memory is read from the
 * process, so a first read of it after the process died says so. */
static void test_copied_and_resumed(void)
{
    enum { FAR_BYTES = 1 << 20 };
    unsigned char *far = malloc(FAR_BYTES);
    CU_ASSERT_PTR_NOT_NULL_FATAL(far);
    memset(far, 0x5a, FAR_BYTES);
    uint64_t *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CU_ASSERT_FATAL(shared != MAP_FAILED);
    live_magic = MAGIC;
    pid_t child = tu_fork_paused_child();
    CU_ASSERT_FATAL(child > 0);
    live_magic = 4;
    struct cl_target *t = open_live_with(child, false);
#ifdef __SANITIZE_ADDRESS__
    /* The child carries AddressSanitizer's shadow memory, terabytes reserved: the copy is
     * declined, the warning says why, and the child stays stopped while open. */
    if (t) {
        CU_ASSERT_EQUAL(t->copied_bytes, 0);
        CU_ASSERT(!t->resumed);
        CU_ASSERT_PTR_NOT_NULL(t->warnings && strstr(t->warnings, "stays stopped"));
        CU_ASSERT_EQUAL(tu_proc_state(child), 't');
        cl_target_close(t);
        t = NULL;
    }
#endif
    if (t) {
        CU_ASSERT_EQUAL(tu_wait_state(child, "S"), 'S');   /* running: asleep in pause() */
        CU_ASSERT_EQUAL(tu_tracer_pid(child), 0);
        CU_ASSERT(t->copied_bytes >= FAR_BYTES);
        CU_ASSERT(t->resumed);
        CU_ASSERT(t->stopped_seconds > 0 && t->stopped_seconds < 60);
        uint64_t v = 0;
        char s[64];
        CU_ASSERT_EQUAL(cl_read_cstr(t, (uint64_t)(uintptr_t)live_text, s, sizeof s), 0);
        CU_ASSERT_STRING_EQUAL(s, live_text);
        kill(child, SIGKILL);
        CU_ASSERT_EQUAL(tu_wait_state(child, "Z"), 'Z');
        CU_ASSERT_EQUAL(cl_read_u64(t, (uint64_t)(uintptr_t)&live_magic, &v), 0);
        CU_ASSERT_EQUAL(v, MAGIC);
        CU_ASSERT_EQUAL(cl_read_u64(t, (uint64_t)(uintptr_t)(far + FAR_BYTES / 2), &v), 0);
        CU_ASSERT_EQUAL(v, 0x5a5a5a5a5a5a5a5aull);
        unsigned char c = 0;
        CU_ASSERT_EQUAL(cl_read(t, (uint64_t)(uintptr_t)&far_text[sizeof far_text - 1], &c, 1), 0);
        CU_ASSERT_EQUAL(c, 2);
        CU_ASSERT_EQUAL(cl_read_u64(t, (uint64_t)(uintptr_t)&relocated_text, &v), 0);
        CU_ASSERT_EQUAL(v, (uint64_t)(uintptr_t)live_text);
        CU_ASSERT_FALSE(t->gone);
        CU_ASSERT_EQUAL(cl_read_u64(t, (uint64_t)(uintptr_t)shared, &v), CL_E_NO_PROCESS);
        CU_ASSERT(t->gone);
        cl_target_close(t);
    }
    CU_ASSERT(tu_kill_child(child));
    munmap(shared, 4096);
    free(far);
}

/* Whether the page at addr is in pid's page tables (/proc/PID/pagemap's bit 63). */
static bool page_present(pid_t pid, const void *addr)
{
    char path[64];
    uint64_t entry = 0;
    snprintf(path, sizeof path, "/proc/%d/pagemap", (int)pid);
    int fd = open(path, O_RDONLY);
    bool ok = fd >= 0 && pread(fd, &entry, sizeof entry,
                               (off_t)((uintptr_t)addr / CL_PAGE_SIZE * sizeof entry)) ==
                             (ssize_t)sizeof entry;
    if (fd >= 0)
        close(fd);
    CU_ASSERT(ok);
    return entry >> 63;
}

/* A private writable mapping of a file (as a library's .data is) of which the process wrote only
 * some pages, and one of a file deleted since: the pages never written are not read from the
 * process (it is not made to fault them in), and read as the file holds them after it died. */
static void test_untouched_file_pages(void)
{
    enum { FILE_PAGES = 64, WRITTEN = 10 };
    static unsigned char bytes[FILE_PAGES * CL_PAGE_SIZE];
    for (size_t i = 0; i < sizeof bytes; i++)
        bytes[i] = (unsigned char)(i * 13 ^ i >> 12);
    char *dir = tu_mkdtemp(), *kept = tu_path(dir, "kept"), *gone = tu_path(dir, "gone");
    CU_ASSERT_EQUAL_FATAL(tu_write_file(kept, bytes, sizeof bytes), 0);
    CU_ASSERT_EQUAL_FATAL(tu_write_file(gone, bytes, sizeof bytes), 0);
    unsigned char *map[2];
    const char *files[2] = {kept, gone};
    for (int k = 0; k < 2; k++) {
        int fd = open(files[k], O_RDONLY);
        map[k] = mmap(NULL, sizeof bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
        close(fd);
        CU_ASSERT_FATAL(map[k] != MAP_FAILED);
        memset(map[k], 0x11, WRITTEN * CL_PAGE_SIZE);
    }
    unlink(gone);
    pid_t child = tu_fork_paused_child();
    CU_ASSERT_FATAL(child > 0);
    CU_ASSERT(!page_present(child, map[0] + 20 * CL_PAGE_SIZE));
    struct cl_target *t = open_live_with(child, false);
#ifdef __SANITIZE_ADDRESS__
    if (t) {   /* no copy with the sanitizer's shadow memory: see test_copied_and_resumed */
        cl_target_close(t);
        t = NULL;
    }
#endif
    if (t) {
        CU_ASSERT(t->resumed);
        CU_ASSERT(!page_present(child, map[0] + 20 * CL_PAGE_SIZE));
        kill(child, SIGKILL);
        CU_ASSERT_EQUAL(tu_wait_state(child, "Z"), 'Z');
        unsigned char page[CL_PAGE_SIZE];
        for (int k = 0; k < 2; k++) {
            CU_ASSERT_EQUAL(
                cl_read(t, (uint64_t)(uintptr_t)(map[k] + 5 * CL_PAGE_SIZE), page, sizeof page), 0);
            CU_ASSERT_EQUAL(page[7], 0x11);
            CU_ASSERT_EQUAL(
                cl_read(t, (uint64_t)(uintptr_t)(map[k] + 40 * CL_PAGE_SIZE), page, sizeof page),
                0);
            CU_ASSERT(memcmp(page, bytes + 40 * CL_PAGE_SIZE, sizeof page) == 0);
        }
        CU_ASSERT_FALSE(t->gone);
        cl_target_close(t);
    }
    CU_ASSERT(tu_kill_child(child));
    for (int k = 0; k < 2; k++)
        munmap(map[k], sizeof bytes);
    unlink(kept);
    free(kept);
    free(gone);
    tu_rmtree(dir);
}

static void *thread_pause(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

static int count_tasks(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

/* A child killed while open, read through either source: the first read that fails because it
 * is gone makes the target gone for good (a page read before it fails too), and
 * cl_target_went_away says so; a bad address before the kill is only unreadable. */
static void test_went_away(void)
{
    enum { AWAY_BYTES = 1 << 20 };
    for (int proc_mem = 0; proc_mem < 2; proc_mem++) {
        unsigned char *far = malloc(AWAY_BYTES);   /* pages the open does not read */
        CU_ASSERT_PTR_NOT_NULL_FATAL(far);
        memset(far, 0x5a, AWAY_BYTES);
        live_magic = MAGIC;
        pid_t child = tu_fork_paused_child();
        CU_ASSERT_FATAL(child > 0);
        live_magic = 3;
        setenv("CULEAK_NO_PROCESS_VM_READV", proc_mem ? "1" : "0", 1);
        struct cl_target *t = open_live(child);
        unsetenv("CULEAK_NO_PROCESS_VM_READV");
        if (t) {
            uint64_t v = 0;
            CU_ASSERT_EQUAL(cl_read_u64(t, (uint64_t)(uintptr_t)&live_magic, &v), 0);
            CU_ASSERT_EQUAL(v, MAGIC);
            CU_ASSERT_EQUAL(cl_read_u64(t, 8, &v), CL_E_UNREADABLE);
            CU_ASSERT_FALSE(t->gone);
            kill(child, SIGKILL);
            CU_ASSERT_EQUAL(tu_wait_state(child, "Z"), 'Z');
            CU_ASSERT_EQUAL(cl_read_u64(t, (uint64_t)(uintptr_t)(far + AWAY_BYTES / 2), &v),
                            CL_E_NO_PROCESS);
            CU_ASSERT(t->gone);
            CU_ASSERT_EQUAL(cl_read_u64(t, (uint64_t)(uintptr_t)&live_magic, &v), CL_E_NO_PROCESS);
            struct cl_error err = {0};
            CU_ASSERT_EQUAL(cl_target_went_away(t, &err), CL_E_NO_PROCESS);
            CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "went away"));
            cl_target_close(t);
        }
        CU_ASSERT(tu_kill_child(child));
        free(far);
    }
}

static void test_all_threads_stopped(void)
{
    fflush(NULL);
    pid_t child = fork();
    CU_ASSERT_FATAL(child >= 0);
    if (child == 0) {
        pthread_t th;
        for (int i = 0; i < 2; i++)
            pthread_create(&th, NULL, thread_pause, NULL);
        for (;;)
            pause();
    }
    for (int i = 0; i < 500 && count_tasks(child) < 3; i++)
        tu_sleep_ms(10);
    CU_ASSERT_EQUAL_FATAL(count_tasks(child), 3);
    struct cl_target *t = open_live(child);
    if (t) {
        CU_ASSERT_EQUAL(t->nthreads, 3);
        for (size_t i = 0; i < t->nthreads; i++) {
            CU_ASSERT_EQUAL(tu_proc_state(t->threads[i].tid), 't');
            CU_ASSERT_EQUAL(t->threads[i].pending_signal, 0);
        }
        cl_target_close(t);
    }
    CU_ASSERT_EQUAL(tu_tracer_pid(child), 0);
    CU_ASSERT(tu_kill_child(child));
}

static void test_no_process(void)
{
    struct cl_target *t = NULL;
    struct cl_error err = {0};
    /* a pid nobody has: a child's pid after it was reaped (not reused this soon) */
    fflush(NULL);
    pid_t gone = fork();
    CU_ASSERT_FATAL(gone >= 0);
    if (gone == 0)
        _exit(0);
    CU_ASSERT_FATAL(waitpid(gone, NULL, 0) == gone);
    CU_ASSERT_EQUAL(cl_target_open_live(gone, NULL, &t, &err), CL_E_NO_PROCESS);
    CU_ASSERT_EQUAL(err.code, CL_E_NO_PROCESS);
    CU_ASSERT_PTR_NULL(t);

    /* a zombie: exited, not yet reaped */
    pid_t zombie = fork();
    CU_ASSERT_FATAL(zombie >= 0);
    if (zombie == 0)
        _exit(0);
    siginfo_t si;
    CU_ASSERT_EQUAL_FATAL(waitid(P_PID, (id_t)zombie, &si, WEXITED | WNOWAIT), 0);
    CU_ASSERT_EQUAL(tu_proc_state(zombie), 'Z');
    CU_ASSERT_EQUAL(cl_target_open_live(zombie, NULL, &t, &err), CL_E_NO_PROCESS);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "zombie"));
    CU_ASSERT_PTR_NULL(t);
    CU_ASSERT(waitpid(zombie, NULL, 0) == zombie);

    /* not a pid at all, and ourselves */
    CU_ASSERT_EQUAL(cl_target_open_live(0, NULL, &t, &err), CL_E_USAGE);
    CU_ASSERT_EQUAL(cl_target_open_live(-5, NULL, &t, &err), CL_E_USAGE);
    CU_ASSERT_EQUAL(cl_target_open_live(getpid(), NULL, &t, &err), CL_E_USAGE);
    CU_ASSERT_PTR_NULL(t);
}

void register_target_live_tests(void)
{
    static const struct tu_test tests[] = {
        {"open, read, close a stopped child", test_open_read_close},
        {"/proc/PID/mem fallback", test_proc_mem_fallback},
        {"copied, resumed, read after it died", test_copied_and_resumed},
        {"a file's untouched pages read from the file", test_untouched_file_pages},
        {"a process killed while open went away", test_went_away},
        {"every thread is stopped", test_all_threads_stopped},
        {"no process, zombie, bad pid", test_no_process},
        {NULL, NULL},
    };
    tu_add_suite("target/live", tests);
}

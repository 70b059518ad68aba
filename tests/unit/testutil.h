/* Helpers shared by the unit tests: header-only (static inline) because the Makefile builds only
 * *_test.c and main.c. */
#ifndef CULEAK_TESTS_UNIT_TESTUTIL_H
#define CULEAK_TESTS_UNIT_TESTUTIL_H

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdint.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "target/procstat.h"
#include "util/spill.h"

struct tu_test {
    const char *name;
    CU_TestFunc fn;
};

/* Registers a suite from a {NULL, NULL}-terminated table; a registry failure aborts the run. */
static inline void tu_add_suite(const char *name, const struct tu_test *tests)
{
    CU_pSuite s = CU_add_suite(name, NULL, NULL);
    if (!s) {
        fprintf(stderr, "cannot add suite %s: %s\n", name, CU_get_error_msg());
        exit(1);
    }
    for (; tests->name; tests++)
        if (!CU_add_test(s, tests->name, tests->fn)) {
            fprintf(stderr, "cannot add test %s: %s\n", tests->name, CU_get_error_msg());
            exit(1);
        }
}

/* splitmix64: a fixed sequence of pseudo-random numbers from *state, whatever else in the process
 * calls rand(). */
static inline uint64_t tu_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A fresh directory under $TMPDIR (or /tmp); malloc'ed path, NULL on failure. */
static inline char *tu_mkdtemp(void)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s/culeak-unit-XXXXXX", cl_tmp_dir());
    return mkdtemp(buf) ? strdup(buf) : NULL;
}

static inline int tu_rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* Removes a directory tree made by tu_mkdtemp and frees its path. */
static inline void tu_rmtree(char *dir)
{
    if (dir)
        nftw(dir, tu_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(dir);
}

/* dir + "/" + name, malloc'ed. */
static inline char *tu_path(const char *dir, const char *name)
{
    char *p;
    return asprintf(&p, "%s/%s", dir, name) < 0 ? NULL : p;
}

/* Writes len bytes to path (creating parent directories); 0 or -1. */
static inline int tu_write_file(const char *path, const void *data, size_t len)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *s = dir + 1; (s = strchr(s, '/')); s++) {
        *s = '\0';
        if (mkdir(dir, 0755) != 0 && errno != EEXIST)
            return -1;
        *s = '/';
    }
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t n = fwrite(data, 1, len, f);
    return fclose(f) == 0 && n == len ? 0 : -1;
}

static inline void tu_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The state letter of /proc/PID/stat ('S', 't', 'Z', ...), or 0. */
static inline char tu_proc_state(int pid)
{
    struct cl_proc_stat st;
    (void)cl_proc_stat_read(pid, &st);   /* zeroed when unreadable */
    return st.state;
}

/* The TracerPid: line of /proc/PID/status, or -1. */
static inline int tu_tracer_pid(int pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *f = fopen(path, "r");
    int tracer = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "TracerPid: %d", &tracer) == 1)
            break;
    fclose(f);
    return tracer;
}

/* Waits (up to about 5 s) until pid's state is one of states; returns the state seen last. */
static inline char tu_wait_state(int pid, const char *states)
{
    char s = 0;
    for (int i = 0; i < 500; i++) {
        s = tu_proc_state(pid);
        if (s && strchr(states, s))
            break;
        tu_sleep_ms(10);
    }
    return s;
}

/* Forks a child that sleeps in pause() until killed, and waits until it is asleep. The child is
 * a copy of this process, so its globals and libraries sit at this process's addresses. */
static inline pid_t tu_fork_paused_child(void)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        for (;;)
            pause();
    }
    if (pid > 0)
        tu_wait_state(pid, "S");
    return pid;
}

/* Kills and reaps a child; returns whether it was reaped. */
static inline int tu_kill_child(pid_t pid)
{
    if (pid <= 0)
        return 0;
    kill(pid, SIGKILL);
    int status;
    return waitpid(pid, &status, 0) == pid;
}

extern char **environ;

/* Starts argv (through PATH) with its stdout on a pipe and waits for its first line, i.e. until
 * the program is up: its pid, or -1. *pipe_fd is the pipe's read end (-1 if none), to be closed
 * only once the child is gone, so that no write of the child's fails. */
static inline pid_t tu_spawn_ready(char *const argv[], int *pipe_fd)
{
    int fds[2];
    *pipe_fd = -1;
    if (pipe(fds) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    *pipe_fd = fds[0];
    char c = 0;
    while (rc == 0 && c != '\n')
        if (read(fds[0], &c, 1) != 1)
            rc = -1;
    return rc == 0 ? pid : -1;
}

#endif

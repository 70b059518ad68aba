/* Live processes: every thread is stopped with PTRACE_SEIZE + PTRACE_INTERRUPT, so the heap does
 * not change under the walkers, then read with process_vm_readv (or /proc/PID/mem where that is
 * refused). The memory that can change is copied at once (target/freeze.c) and the process
 * resumed, so it is stopped only while that copy is made; where the copy would be larger than
 * the limit, it stays stopped until culeak is done. Detaching re-delivers any signal caught while
 * stopping, so the process continues exactly as it would have. A process that another debugger
 * already holds stopped is read as it is, without ptrace. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "target/freeze.h"
#include "target/refusal.h"
#include "target/target.h"
#include "util/meminfo.h"
#include "util/notes.h"
#include "util/vec.h"
#include "target/procstat.h"

#define MAX_THREADS 65536
#define SEIZE_ROUNDS 64   /* threads may be created while we stop others; rescan until stable */
#define VANISHED (-1)     /* stop_thread: the thread exited meanwhile */

struct live {
    int pid;
    int mem_fd;          /* /proc/PID/mem, opened when process_vm_readv is refused */
    pthread_mutex_t mem_fd_lock;   /* the copy's threads may all need mem_fd at once */
    int pagemap_fd;      /* /proc/PID/pagemap, for the copy; -1 until opened, -2 refused */
    atomic_bool vm_readv_ok;
    bool seized;         /* false when a debugger holds the process and we only read */
    size_t threads_cap;  /* of the target's threads[] */
    struct cl_frozen frozen;   /* what could change, copied before resuming; empty if not */
    struct cl_frozen reserved; /* the copy's memory, reserved before the process stopped */
    uint64_t scout_limit;      /* a scout's: the most its walk's pages may be (live_touch) */
};

/* The open live targets, for emergency_detach: on an abnormal exit of culeak itself (Ctrl-C, a
 * broken pipe) their threads are detached, so the target is never left stopped. This is the one
 * piece of process-wide state in the library, and has to be: a signal handler gets no argument.
 * volatile, because the handler may read a slot while register_attached is writing it; a slot is
 * one pointer, written in one store. */
static struct cl_target *volatile attached[16];

/* The task's state letter, 0 when it cannot be read. */
static char proc_state(int tid)
{
    struct cl_proc_stat st;
    (void)cl_proc_stat_read(tid, &st);   /* zeroed when unreadable: state 0 */
    return st.state;
}

/* A whole /proc file into *out (malloc'ed, NUL-terminated, *len bytes): 0, or the errno of the
 * failure (ENOMEM when out of memory). */
static int read_text(const char *path, char **out, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    for (ssize_t r; buf; n += (size_t)r) {
        if (n == cap) {
            char *nb = realloc(buf, cap * 2 + 1);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        r = read(fd, buf + n, cap - n);
        if (r <= 0)
            break;
    }
    close(fd);
    if (!buf)
        return ENOMEM;
    buf[n] = '\0';
    *len = n;
    *out = buf;
    return 0;
}

static bool has_thread(const struct cl_target *t, int tid)
{
    for (size_t i = 0; i < t->nthreads; i++)
        if (t->threads[i].tid == tid)
            return true;
    return false;
}

static int push_thread(struct cl_target *t, int tid, int sig)
{
    struct live *lv = t->impl;
    if (t->nthreads >= MAX_THREADS)
        return CL_E_UNSUPPORTED;
    if (!CL_VEC_RESERVE(t->threads, t->nthreads, lv->threads_cap))
        return CL_E_INTERNAL;
    t->threads[t->nthreads++] = (struct cl_thread){tid, sig};
    return 0;
}

/* Whether tid is dying: gone, or a zombie within a few milliseconds (a thread being killed refuses
 * to be traced with EPERM, as one culeak may not trace does, until it is a zombie). */
static bool dying(int tid)
{
    for (int i = 0; i < 10; i++) {
        char state = proc_state(tid);
        if (!state || state == 'Z' || state == 'X')
            return true;
        usleep(2000);
    }
    return false;
}

/* Seizes and interrupts one thread and waits for its stop. Returns 0, VANISHED if the thread
 * exited meanwhile, or an errno. *sig is a signal the thread was about to receive, to give back
 * on detach. */
static int stop_thread(int tid, int *sig)
{
    *sig = 0;
    if (ptrace(PTRACE_SEIZE, tid, 0, 0) != 0) {
        int e = errno;
        return e == ESRCH || (e == EPERM && dying(tid)) ? VANISHED : e;
    }
    if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) != 0) {
        int e = errno;
        ptrace(PTRACE_DETACH, tid, 0, 0);
        return e == ESRCH ? VANISHED : e;
    }
    int status;
    for (;;) {
        pid_t r = waitpid(tid, &status, __WALL);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return errno == ECHILD ? VANISHED : errno;
        break;
    }
    if (WIFEXITED(status) || WIFSIGNALED(status))
        return VANISHED;
    /* A PTRACE_EVENT_STOP is our interrupt (or a group-stop); any other stop is a signal that was
     * being delivered: keep it and re-inject it on detach. */
    if (WIFSTOPPED(status) && (status >> 16) != PTRACE_EVENT_STOP)
        *sig = WSTOPSIG(status);
    return 0;
}

static int list_tasks(int pid, int **tids, size_t *n)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", pid);
    DIR *d = opendir(path);
    if (!d)
        return errno;
    size_t cap = 0;
    *n = 0;
    *tids = NULL;
    bool oom = false;
    for (struct dirent *e; !oom && (e = readdir(d));) {
        int tid = atoi(e->d_name);
        if (tid <= 0)
            continue;
        if ((oom = !CL_VEC_RESERVE(*tids, *n, cap)))
            break;
        (*tids)[(*n)++] = tid;
    }
    closedir(d);
    if (oom) {
        free(*tids);
        *tids = NULL;
        return ENOMEM;
    }
    return 0;
}

static void detach_all(struct cl_target *t)
{
    struct live *lv = t->impl;
    if (!lv || !lv->seized)
        return;
    for (size_t i = 0; i < t->nthreads; i++)
        ptrace(PTRACE_DETACH, t->threads[i].tid, 0, (void *)(long)t->threads[i].pending_signal);
    lv->seized = false;
}

/* A signal handler: only async-signal-safe calls (ptrace, signal, raise) from here down. */
static void emergency_detach(int sig)
{
    for (size_t i = 0; i < sizeof attached / sizeof *attached; i++)
        if (attached[i])
            detach_all(attached[i]);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void register_attached(struct cl_target *t, bool add)
{
    /* Installed once per process, at the first attach, whatever targets come and go; only read
     * and written here, outside any handler. Never for a target only adopted (a plugin in gdb,
     * whose signals are gdb's). */
    static volatile sig_atomic_t handlers;
    if (add && !handlers) {
        int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
        for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
            signal(sigs[i], emergency_detach);
        handlers = true;
    }
    for (size_t i = 0; i < sizeof attached / sizeof *attached; i++)
        if (add ? !attached[i] : attached[i] == t) {
            attached[i] = add ? t : NULL;
            return;
        }
}

static int seize_all(struct cl_target *t, struct cl_error *err)
{
    struct live *lv = t->impl;
    lv->seized = true;
    register_attached(t, true);
    for (int round = 0; round < SEIZE_ROUNDS; round++) {
        int *tids;
        size_t n;
        int e = list_tasks(lv->pid, &tids, &n);
        if (e == ENOMEM)
            return cl_error_set(err, CL_E_INTERNAL,
                                "out of memory listing the threads of "
                                "process %d",
                                lv->pid);
        if (e)
            return cl_error_set(err, CL_E_NO_PROCESS, "process %d vanished while stopping it",
                                lv->pid);
        bool added = false;
        for (size_t i = 0; i < n; i++) {
            if (has_thread(t, tids[i]))
                continue;
            int sig, rc = stop_thread(tids[i], &sig);
            /* another culeak copying it (--pid X --pid X, two at once): wait, then again */
            for (int again = 0; (rc == EPERM || rc == EACCES) && !t->nthreads && again < 2 &&
                                cl_live_let_go(lv->pid);
                 again++)
                rc = stop_thread(tids[i], &sig);
            if (rc == VANISHED)
                continue;
            if (rc) {
                free(tids);
                if (rc == EPERM || rc == EACCES)
                    return cl_live_refusal(lv->pid, "trace", err);
                return cl_error_set(err, CL_E_INTERNAL, "cannot stop thread %d: %s", tids[i],
                                    strerror(rc));
            }
            if ((rc = push_thread(t, tids[i], sig))) {
                ptrace(PTRACE_DETACH, tids[i], 0, (void *)(long)sig);
                free(tids);
                return cl_error_set(err, rc, "too many threads");
            }
            added = true;
        }
        free(tids);
        if (!added && !t->nthreads) { /* it died since culeak found it */
            t->gone = true;
            return cl_target_went_away(t, err);
        }
        if (!added)
            return 0;
    }
    return cl_error_set(err, CL_E_INTERNAL, "process %d keeps creating threads; cannot stop it",
                        lv->pid);
}

/* Another debugger is the tracer: read only if it holds every thread stopped. */
static int adopt_stopped(struct cl_target *t, int tracer, struct cl_error *err)
{
    struct live *lv = t->impl;
    int *tids;
    size_t n;
    int e = list_tasks(lv->pid, &tids, &n);
    if (e == ENOMEM)
        return cl_error_set(err, CL_E_INTERNAL, "out of memory listing the threads of process %d",
                            lv->pid);
    if (e)
        return cl_error_set(err, CL_E_NO_PROCESS, "process %d vanished", lv->pid);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        char s = proc_state(tids[i]), comm[64];
        cl_proc_comm(tracer, comm, sizeof comm);
        if (s != 't' && s != 'T')
            rc = cl_error_set(err, CL_E_PERMISSION,
                              "process %d is held by process %d (%s), and its thread %d runs: "
                              "stop it in that debugger, or detach the debugger",
                              lv->pid, tracer, comm, tids[i]);
        else
            rc = push_thread(t, tids[i], 0);
    }
    free(tids);
    return rc;
}

/* Whether a read failed because the process is gone: ESRCH (no task, or a task without memory),
 * or /proc says it is a zombie or has no entry. Any other failure is one unreadable page. */
static bool went_away(const struct live *lv, int errnum)
{
    if (errnum == ESRCH)
        return true;
    char state = proc_state(lv->pid);
    return state == 0 || state == 'Z' || state == 'X' || state == 'x';
}

/* A failed page read: gone for good (sticky, see cl_target.gone) or just this page. */
static int read_failed(struct cl_target *t, uint64_t addr, int errnum)
{
    struct live *lv = t->impl;
    if (went_away(lv, errnum)) {
        t->gone = true;
        return cl_target_went_away(t, &t->err);
    }
    return cl_error_set(&t->err, CL_E_UNREADABLE, "cannot read 0x%llx: %s",
                        (unsigned long long)addr, errnum ? strerror(errnum) : "short read");
}

/* Reads len bytes at addr: the bytes read, or -errno (-ESRCH: the process went away; -EACCES:
 * /proc/PID/mem cannot be opened). */
static long read_memory(void *source, uint64_t addr, void *buf, size_t len)
{
    struct live *lv = source;
    if (atomic_load_explicit(&lv->vm_readv_ok, memory_order_relaxed)) {
        struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};
        ssize_t n = process_vm_readv(lv->pid, &local, 1, &remote, 1, 0);
        if (n >= 0 || (errno != ENOSYS && errno != EPERM))
            return n >= 0 ? n : went_away(lv, errno) ? -ESRCH : -errno;
        /* refused (e.g. seccomp, old kernel): use /proc/PID/mem */
        atomic_store_explicit(&lv->vm_readv_ok, false, memory_order_relaxed);
    }
    pthread_mutex_lock(&lv->mem_fd_lock);
    if (lv->mem_fd < 0) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/mem", lv->pid);
        lv->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
    }
    int fd = lv->mem_fd, e = errno;
    pthread_mutex_unlock(&lv->mem_fd_lock);
    if (fd < 0)
        return went_away(lv, e == ENOENT ? ESRCH : e) ? -ESRCH : -EACCES;
    ssize_t n = pread(fd, buf, len, (off_t)addr);
    /* 0 bytes of a page that is mapped: the process has no memory any more (a bad address gives
     * EIO instead) */
    if (n == 0 || (n < 0 && went_away(lv, errno)))
        return -ESRCH;
    return n >= 0 ? n : -errno;
}

/* npages page-table entries from addr (8 bytes a page): the entries read, or -errno. */
static long read_pagemap(void *source, uint64_t addr, size_t npages, uint64_t *out)
{
    struct live *lv = source;
    if (lv->pagemap_fd == -2)
        return -EACCES;
    if (lv->pagemap_fd < 0) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/pagemap", lv->pid);
        if ((lv->pagemap_fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
            int e = errno;
            lv->pagemap_fd = -2; /* asked once: a sandbox without it refuses every time */
            return -e;
        }
    }
    ssize_t n = pread(lv->pagemap_fd, out, npages * sizeof *out,
                      (off_t)(addr / CL_PAGE_SIZE * sizeof *out));
    return n < 0 ? -errno : n / (ssize_t)sizeof *out;
}

/* path, opened for reading if it is the file mapping m maps: a regular file of the device and
 * inode maps named. Looked at through O_PATH first, so that nothing else (a device, a FIFO the
 * target put in its place) is ever opened. -1 when it is not. */
static int open_if_mapped(const char *path, const struct cl_mapping *m)
{
    struct stat st;
    int fd = -1, at = open(path, O_PATH | O_CLOEXEC);
    if (at < 0)
        return -1;
    if (fstat(at, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == m->dev &&
        st.st_ino == m->inode) {
        char self[64];
        snprintf(self, sizeof self, "/proc/self/fd/%d", at);
        fd = open(self, O_RDONLY | O_CLOEXEC);
    }
    close(at);
    return fd;
}

/* The file a private mapping m maps, for the copy's pages the process never wrote: by its path in
 * the process's root (a container's too), while that is still the file mapped; else through
 * /proc/PID/map_files (a deleted or replaced file; it needs CAP_CHECKPOINT_RESTORE). -1 when
 * neither. */
static int open_mapped_file(void *source, const struct cl_mapping *m)
{
    struct live *lv = source;
    char path[4096 + 64];
    int fd = -1;
    if (m->path && m->path[0] == '/' && !(m->perms & CL_MAP_DELETED) &&
        snprintf(path, sizeof path, "/proc/%d/root%s", lv->pid, m->path) < (int)sizeof path)
        fd = open_if_mapped(path, m);
    if (fd < 0) {
        snprintf(path, sizeof path, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, lv->pid, m->start,
                 m->end);
        fd = open_if_mapped(path, m);
    }
    return fd;
}

/* What a copy made on demand has copied so far, for the reports. */
static void count_copied(struct cl_target *t)
{
    const struct live *lv = t->impl;
    if (lv->frozen.src.read)
        t->copied_bytes = lv->frozen.filled_bytes;
}

static int live_read_page(struct cl_target *t, uint64_t addr, void *page)
{
    struct live *lv = t->impl;
    bool held;
    int rc = cl_frozen_page(&lv->frozen, addr, page, &held);
    count_copied(t);
    if (held)
        return rc ? cl_error_set(&t->err, rc,
                                 "cannot read 0x%llx: it could not be read when "
                                 "the process was stopped",
                                 (unsigned long long)addr)
                  : 0;
    if (t->resumed && cl_frozen_left_unread(&lv->frozen, addr)) {
        /* The process runs again: what the copy left out as a scout did not read it is not read
         * from it, which would mix two instants in one report. The inspection is done again,
         * stopped (engine/inspect.c). (Shared memory and a foreign library's data, which no
         * copy holds, are read from the process, as they always were.) */
        t->missed = true;
        cl_target_lose(t, CL_E_UNREADABLE,
                       "the walk needed 0x%llx, which the copy made when process %d stopped left "
                       "out",
                       (unsigned long long)addr, t->pid);
        return cl_target_went_away(t, &t->err);
    }
    long n = read_memory(lv, addr, page, CL_PAGE_SIZE);
    if (n == CL_PAGE_SIZE)
        return 0;
    if (n == -EACCES)
        return cl_live_refusal(lv->pid, "read the memory of", &t->err);
    return read_failed(t, addr, n == -ESRCH ? ESRCH : n < 0 ? (int)-n : 0);
}

static void live_close(struct cl_target *t)
{
    struct live *lv = t->impl;
    if (!lv)
        return;
    detach_all(t);
    register_attached(t, false);
    if (lv->mem_fd >= 0)
        close(lv->mem_fd);
    if (lv->pagemap_fd >= 0)
        close(lv->pagemap_fd);
    cl_frozen_free(&lv->frozen);
    cl_frozen_free(&lv->reserved);
    free(lv);
}

/* A page a scout's walk needed. Once they are more than the copy limit, the copy at the stop
 * would be over it whatever the scout finds: it has nothing more to learn. */
static void live_touch(struct cl_target *t, uint64_t page)
{
    struct live *lv = t->impl;
    cl_frozen_touch(&lv->frozen, page);
    if (lv->frozen.touched_bytes > lv->scout_limit)
        cl_target_lose(t, CL_E_UNSUPPORTED, "what the walk reads is over the copy limit");
}

static bool live_resident(struct cl_target *t, uint64_t addr, struct cl_window *w)
{
    struct live *lv = t->impl;
    w->data = cl_frozen_span(&lv->frozen, addr, &w->start, &w->len);
    count_copied(t);
    if (w->data && t->scouting) { /* a page at a time, each noted as the walk needs it */
        uint64_t page = addr & ~(uint64_t)(CL_PAGE_SIZE - 1);
        w->data += page - w->start;
        w->start = page;
        w->len = CL_PAGE_SIZE;
        live_touch(t, page);
    }
    return w->data != NULL;
}

/* A copy (made at once or on demand) leaves out what no walk reads; with none, the process is
 * stopped while read and nothing is. */
static bool live_left_out(struct cl_target *t, uint64_t addr)
{
    const struct live *lv = t->impl;
    return lv->frozen.n && !cl_frozen_holds(&lv->frozen, addr);
}

static bool live_vanished(struct cl_target *t)
{
    return went_away(t->impl, 0);
}

static const struct cl_target_ops live_ops = {.read_page = live_read_page,
                                              .close = live_close,
                                              .resident = live_resident,
                                              .left_out = live_left_out,
                                              .touch = live_touch,
                                              .vanished = live_vanished};

/* The process's /proc/PID/maps into ms: 0, or the errno reading it. */
static int read_maps(int pid, struct cl_mappings *ms)
{
    char path[64];
    size_t len = 0;
    snprintf(path, sizeof path, "/proc/%d/maps", pid);
    char *text = NULL;
    int e = read_text(path, &text, &len);
    if (!e && cl_mappings_parse_proc_maps(ms, text, len))
        e = ENOMEM;
    free(text);
    return e;
}

static int load_maps(struct cl_target *t, struct cl_error *err)
{
    char path[64];
    int e = read_maps(t->pid, &t->maps);
    if (e == EACCES)
        return cl_live_refusal(t->pid, "inspect", err);
    if (e == ENOMEM)
        return cl_error_set(err, CL_E_INTERNAL, "out of memory reading /proc/%d/maps", t->pid);
    if (e)
        return cl_error_set(err, CL_E_NO_PROCESS, "process %d vanished", t->pid);
    snprintf(path, sizeof path, "/proc/%d/exe", t->pid);
    char exe[4096];
    ssize_t n = readlink(path, exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *del = strstr(exe, " (deleted)");
        if (del && del[10] == '\0')
            *del = '\0';
        if (!(t->exe_path = strdup(exe)))
            return cl_error_set(err, CL_E_INTERNAL, "out of memory");
    }
    return 0;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Copying is the shorter stop whatever the size, as long as the copy fits: on a 75-million-object
 * process (issue 47) the copy of its 5.6 GiB stopped it 0.59 s, while a walk with it stopped took
 * 5.6 s (the walk reads less, but at a tenth of the speed: an object at a time). So the copy
 * takes what memory allows, half of MemAvailable (1 GiB when it cannot be read), no fixed cap. */
uint64_t cl_default_copy_limit(void)
{
    uint64_t available = cl_mem_available();
    return available ? available / 2 : 1ull << 30;
}

static uint64_t copy_limit(const struct cl_open_options *opt)
{
    return opt && opt->copy_limit ? opt->copy_limit : cl_default_copy_limit();
}

unsigned cl_cpus(void)
{
    cpu_set_t cpus;
    int n = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
    return n > 0 ? (unsigned)n : 1;
}

/* The threads that copy the process's memory while it is stopped: one a CPU culeak may run on
 * (or its share of them, opt->copy_threads), at most MAX_COPY_THREADS (the memory's bandwidth is
 * the bound by then), and none that would copy less than COPY_BYTES_PER_THREAD (starting a
 * thread costs more than copying a few hundred KiB). On 2 cores, 253 MiB were copied in 0.034 s
 * against 0.058 by one thread. */
#define MAX_COPY_THREADS 8u
#define COPY_BYTES_PER_THREAD (8u << 20)
static unsigned copy_threads(uint64_t bytes, const struct cl_open_options *opt)
{
    unsigned n = opt && opt->copy_threads ? opt->copy_threads : cl_cpus();
    uint64_t by_size = bytes / COPY_BYTES_PER_THREAD;
    if (n > MAX_COPY_THREADS)
        n = MAX_COPY_THREADS;
    return by_size < n ? (by_size ? (unsigned)by_size : 1) : n;
}

/* Plans the copy from the mappings as they are while the process still runs (into
 * lv->reserved), leaving out what a scout did not read: false where it cannot be planned. */
static bool plan_copy(struct cl_target *t, const struct cl_open_options *opt)
{
    struct live *lv = t->impl;
    struct cl_mappings ms = {0};
    struct cl_freeze_source src = {read_memory, read_pagemap, open_mapped_file, lv, 1};
    bool planned = read_maps(t->pid, &ms) == 0 &&
                   cl_freeze_plan(&lv->reserved, &ms, &src, opt ? opt->scouted : NULL) == 0;
    cl_mappings_free(&ms);
    if (!planned)
        cl_frozen_free(&lv->reserved);
    return planned;
}

/* Reserves the planned copy's memory (cl_freeze_reserve) and copies what the process cannot
 * write (its files' read-only mappings), so that the process is stopped only while the rest is
 * read. Best effort: what fails here is done again, stopped, by copy_memory. */
static void reserve_copy(struct cl_target *t, const struct cl_open_options *opt)
{
    struct live *lv = t->impl;
    struct cl_freeze_source src = {read_memory, read_pagemap, open_mapped_file, lv, 1};
    src.threads = copy_threads(lv->reserved.bytes, opt);
    if (lv->reserved.bytes > copy_limit(opt) || cl_freeze_reserve(&lv->reserved, src.threads) ||
        cl_freeze_copy_read_only(&lv->reserved, &src))
        cl_frozen_free(&lv->reserved);
}

/* A copy that would stop the process longer than this is worth a scout first (the goal
 * for a rank's pause), at the speed one thread copied on this project's machines (3.7 GB/s:
 * 253 MiB in 0.034 s by two). A 75-million-object heap (5.6 GiB) is copied whole by two
 * threads; a rank with 10 GB of CPU tensors beside its objects is scouted. */
#define PAUSE_GOAL_SECONDS 1.0
#define COPY_BYTES_PER_SECOND 3.7e9

/* Whether the planned copy is worth a scout: it is over the limit (so, else, the process would
 * stay stopped for the whole walk), or would take longer than the pause goal. */
static bool worth_scouting(const struct cl_target *t, const struct cl_open_options *opt)
{
    const struct live *lv = t->impl;
    uint64_t bytes = lv->reserved.bytes;
    return opt && opt->may_scout && !opt->scouted && lv->reserved.n &&
           (bytes > copy_limit(opt) ||
            (double)bytes > PAUSE_GOAL_SECONDS * COPY_BYTES_PER_SECOND * copy_threads(bytes, opt));
}

/* Reads the running process through a copy made on demand from the plan (up to the limit; past
 * it, from the process a page at a time), so that the pages its walk needs are known
 * (cl_target_scouted), until they are more than the limit, when the scout is of no use. */
static void start_scout(struct cl_target *t, const struct cl_open_options *opt)
{
    struct live *lv = t->impl;
    struct cl_freeze_source src = {read_memory, read_pagemap, open_mapped_file, lv, 1};
    lv->frozen = lv->reserved;
    lv->scout_limit = copy_limit(opt);
    memset(&lv->reserved, 0, sizeof lv->reserved);
    if (cl_freeze_on_demand(&lv->frozen, &src, copy_limit(opt)))
        cl_frozen_free(&lv->frozen);
}

int cl_target_scouted(const struct cl_target *t, struct cl_scouted *out)
{
    const struct live *lv = t->kind == CL_TARGET_LIVE && t->scouting ? t->impl : NULL;
    return lv ? cl_freeze_scouted(&lv->frozen, out) : CL_E_UNSUPPORTED;
}

/* Copies what can change, when the copy fits the limit and this machine's memory: reads are then
 * served from memory already here, and a process culeak stopped runs again at once. Else it
 * stays stopped until closed, and says why. A process another debugger holds stays as its
 * debugger holds it (it is not culeak's to resume); it, and one over the limit, are copied as
 * read, up to the limit: the fastest way to read them (a bulk read instead of a read per page). */
static int copy_memory(struct cl_target *t, const struct cl_open_options *opt, double stopped_at,
                       struct cl_error *err)
{
    struct live *lv = t->impl;
    if (opt && opt->keep_stopped)
        return 0;
    uint64_t limit = copy_limit(opt);
    struct cl_freeze_source src = {read_memory, read_pagemap, open_mapped_file, lv, 1};
    int rc =
        cl_freeze_replan(&lv->frozen, &t->maps, &src, &lv->reserved, opt ? opt->scouted : NULL);
    uint64_t size = lv->frozen.bytes;
    if (!rc && (size > limit || !lv->seized)) {
        /* Stopped all along, so the copy can be made as the walk reads: of what the walk needs
         * (a fraction of a big process's memory), each page once and in bulk. */
        if (cl_freeze_on_demand(&lv->frozen, &src, copy_limit(opt)))
            cl_frozen_free(&lv->frozen);
        if (lv->seized)
            cl_note_add(&t->warnings,
                        "the process's writable memory (%" PRIu64 " MiB) is more "
                        "than the copy limit (%" PRIu64 " MiB, --copy-limit): it stays stopped "
                        "until culeak is done",
                        size >> 20, limit >> 20);
        return 0;
    }
    src.threads = copy_threads(size, opt);
    if (!rc)
        rc = cl_freeze_copy(&lv->frozen, &src);
    if (rc == CL_E_NO_PROCESS) {
        t->gone = true;
        return cl_target_went_away(t, err);
    }
    if (rc) { /* out of memory: the copy is freed, and reading it stopped still works */
        if (lv->seized)
            cl_note_add(&t->warnings, "not enough memory here to copy the process: it stays "
                                      "stopped until culeak is done");
        return 0;
    }
    t->copied_bytes = lv->frozen.bytes;
    t->unread_bytes = lv->frozen.unread_bytes;
    if (lv->seized) {
        detach_all(t);
        t->resumed = true;
        t->stopped_seconds = now() - stopped_at;
    }
    return 0;
}

int cl_target_open_live(int pid, const struct cl_open_options *opt, struct cl_target **out,
                        struct cl_error *err)
{
    *out = NULL;
    if (pid <= 0)
        return cl_error_set(err, CL_E_USAGE, "invalid pid %d", pid);
    if (kill(pid, 0) != 0 && errno == ESRCH)
        return cl_error_set(err, CL_E_NO_PROCESS, "no process with pid %d", pid);
    char state = proc_state(pid);
    if (!state)
        return cl_error_set(err, CL_E_NO_PROCESS, "no process with pid %d", pid);
    if (state == 'Z' || state == 'X')
        return cl_error_set(err, CL_E_NO_PROCESS,
                            "process %d has exited (zombie); inspect a core "
                            "instead",
                            pid);
    if (pid == getpid())
        return cl_error_set(err, CL_E_USAGE, "culeak cannot inspect itself");

    struct cl_target *t;
    struct live *lv = calloc(1, sizeof *lv);
    if (!lv || cl_target_new(&live_ops, CL_TARGET_LIVE, lv, opt, &t)) {
        free(lv);
        return cl_error_set(err, CL_E_INTERNAL, "out of memory");
    }
    /* CULEAK_NO_PROCESS_VM_READV=1 forces the /proc/PID/mem path (for systems that refuse
     * process_vm_readv only sometimes, and for testing that path). */
    const char *no_vm = getenv("CULEAK_NO_PROCESS_VM_READV");
    *lv = (struct live){.pid = pid,
                        .mem_fd = -1,
                        .mem_fd_lock = PTHREAD_MUTEX_INITIALIZER,
                        .pagemap_fd = -1,
                        .vm_readv_ok = !(no_vm && *no_vm == '1')};
    t->pid = pid;
    t->ns_pid = cl_proc_ns_pid(pid);
    t->locator.root_pid = pid; /* a container's files are its own, not the host's */
    double stopped_at = now();
    int rc, tracer = cl_proc_tracer(pid);
    if (tracer && !(opt && opt->assume_stopped) && cl_live_let_go(pid))
        tracer = cl_proc_tracer(pid); /* another culeak held it while it copied it */
    if (opt && opt->assume_stopped) {
        rc = adopt_stopped(t, tracer ? tracer : pid, err);
    } else if (tracer) {
        rc = adopt_stopped(t, tracer, err);
        if (!rc)
            cl_note_add(&t->warnings,
                        "process %d is held stopped by debugger process %d; reading "
                        "it without attaching",
                        pid, tracer);
    } else if (opt && opt->keep_stopped) {
        rc = seize_all(t, err);
    } else if (plan_copy(t, opt) && worth_scouting(t, opt)) {
        t->scouting = true; /* not stopped: read as it runs */
        rc = 0;
    } else {
        reserve_copy(t, opt);
        stopped_at = now();
        rc = seize_all(t, err);
    }
    if (!rc)
        rc = load_maps(t, err);
    if (rc) {
        cl_target_close(t);
        return rc;
    }
    /* One probe read turns a refused process_vm_readv + /proc/PID/mem into an early, clear
     * error. */
    unsigned char probe[CL_PAGE_SIZE];
    for (size_t i = 0; i < t->maps.n; i++) {
        if (!(t->maps.v[i].perms & CL_MAP_R))
            continue;
        if (live_read_page(t, t->maps.v[i].start, probe) == CL_E_PERMISSION) {
            *err = t->err;
            cl_target_close(t);
            return CL_E_PERMISSION;
        }
        break;
    }
    if (t->scouting)
        start_scout(t, opt);
    else if ((rc = copy_memory(t, opt, stopped_at, err))) {
        cl_target_close(t);
        return rc;
    }
    *out = t;
    return 0;
}

/* Status codes and the one error channel every layer reports through. */
#ifndef CULEAK_UTIL_ERROR_H
#define CULEAK_UTIL_ERROR_H

#include <stdarg.h>

/* Each bad-input class has its own code so scripts can tell them apart; the CLI's exit status is
 * the code itself. */
enum cl_status {
    CL_OK = 0,
    CL_E_INTERNAL = 1,      /* out of memory, a bug, an unexpected system error */
    CL_E_USAGE = 2,         /* bad command line */
    CL_E_NO_PROCESS = 3,    /* no such pid, or a zombie */
    CL_E_PERMISSION = 4,    /* ptrace / read access refused */
    CL_E_NOT_CORE = 5,      /* not an ELF core, or a core of another architecture */
    CL_E_TRUNCATED = 6,     /* the core file is shorter than its headers say */
    /* --exe (or a mapped file) is not the binary the core was made from */
    CL_E_EXE_MISMATCH = 7,
    CL_E_NOT_PYTHON = 8,    /* no CPython runtime in the target */
    CL_E_UNSUPPORTED = 9,   /* a runtime or layout culeak does not know */
    /* an address the target does not have, or whose backing file is missing */
    CL_E_UNREADABLE = 10,
    CL_E_IO = 11,           /* a file that cannot be opened or read */
};

/* The last error's code and message; a fixed buffer so reporting never allocates. */
struct cl_error {
    enum cl_status code;
    char msg[512];
};

/* Records code and a printf-style message; returns code, so that callers can
 * `return cl_error_set(...)`. */
int cl_error_set(struct cl_error *err, enum cl_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int cl_error_vset(struct cl_error *err, enum cl_status code, const char *fmt, va_list ap);

/* A short stable name for a code ("no-process", "permission", ...), used in JSON errors. */
const char *cl_status_name(enum cl_status code);

#endif

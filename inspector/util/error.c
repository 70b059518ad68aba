#include "util/error.h"

#include <stdio.h>

int cl_error_vset(struct cl_error *err, enum cl_status code, const char *fmt, va_list ap)
{
    if (err) {
        err->code = code;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    }
    return code;
}

int cl_error_set(struct cl_error *err, enum cl_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cl_error_vset(err, code, fmt, ap);
    va_end(ap);
    return code;
}

const char *cl_status_name(enum cl_status code)
{
    switch (code) {
    case CL_OK: return "ok";
    case CL_E_INTERNAL: return "internal";
    case CL_E_USAGE: return "usage";
    case CL_E_NO_PROCESS: return "no-process";
    case CL_E_PERMISSION: return "permission";
    case CL_E_NOT_CORE: return "not-core";
    case CL_E_TRUNCATED: return "truncated-core";
    case CL_E_EXE_MISMATCH: return "exe-mismatch";
    case CL_E_NOT_PYTHON: return "not-python";
    case CL_E_UNSUPPORTED: return "unsupported";
    case CL_E_UNREADABLE: return "unreadable";
    case CL_E_IO: return "io";
    }
    return "unknown";
}

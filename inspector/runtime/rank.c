#include "runtime/rank.h"

#include <stdlib.h>
#include <string.h>

#define MAX_ENV 65536   /* entries of environ read at most: a bound on a corrupt array */
#define VALUE_CAP 64    /* RANK=123: the variables wanted are short; longer ones are skipped */

/* A non-negative decimal value, or -1. */
static int number(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    return *s && !*end && v >= 0 && v <= 1 << 24 ? (int)v : -1;
}

int cl_rank_order(const struct cl_rank *x, int xpid, const struct cl_rank *y, int ypid)
{
    unsigned rx = (unsigned)x->rank, ry = (unsigned)y->rank;   /* -1: the largest */
    return rx != ry ? (rx > ry) - (rx < ry) : (xpid > ypid) - (xpid < ypid);
}

void cl_rank_detect(struct cl_target *t, const struct cl_symbols *syms, struct cl_rank *out)
{
    *out = (struct cl_rank){-1, -1, -1};
    if (t->kind == CL_TARGET_DUMP)   /* it answers only what its own run asked: more loses it */
        return;
    const struct cl_module *libc = cl_symbols_module_named(syms, "libc.so");
    uint64_t at, size, env;
    if (!libc || !cl_module_symbol(libc, "__environ", &at, &size) || cl_read_u64(t, at, &env) != 0)
        return;
    for (size_t i = 0; env && i < MAX_ENV; i++) {
        uint64_t p;
        char var[VALUE_CAP];
        if (cl_read_u64(t, env + 8 * i, &p) != 0 || !p)
            break;
        if (cl_read_cstr(t, p, var, sizeof var) != 0)
            continue;
        if (strncmp(var, "RANK=", 5) == 0)
            out->rank = number(var + 5);
        else if (strncmp(var, "LOCAL_RANK=", 11) == 0)
            out->local_rank = number(var + 11);
        else if (strncmp(var, "WORLD_SIZE=", 11) == 0)
            out->world_size = number(var + 11);
    }
}

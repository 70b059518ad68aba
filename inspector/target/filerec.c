#include "target/filerec.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/vec.h"

static char *dup_or_null(const char *s, bool *failed)
{
    char *d = s ? strdup(s) : NULL;
    if (s && !d)
        *failed = true;
    return d;
}

int cl_filerec_add(struct cl_filerec *r, const char *target_path, const char *local,
                   const char *text)
{
    if (!CL_VEC_RESERVE(r->v, r->n, r->cap))
        return CL_E_INTERNAL;
    bool failed = false;
    struct cl_filerec_entry e = {dup_or_null(target_path, &failed), dup_or_null(local, &failed),
                                 dup_or_null(text, &failed)};
    if (failed || !e.target_path) {
        free(e.target_path);
        free(e.local);
        free(e.text);
        return CL_E_INTERNAL;
    }
    r->v[r->n++] = e;
    return 0;
}

const struct cl_filerec_entry *cl_filerec_find(const struct cl_filerec *r, const char *target_path)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->v[i].target_path, target_path) == 0)
            return &r->v[i];
    return NULL;
}

void cl_filerec_free(struct cl_filerec *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->v[i].target_path);
        free(r->v[i].local);
        free(r->v[i].text);
    }
    free(r->v);
    memset(r, 0, sizeof *r);
}

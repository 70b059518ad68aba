/* Tells whether PyTorch is loaded in a target, which build, and where its libraries are. The
 * version comes from the installed torch/version.py next to the mapped extension module. */
#ifndef CULEAK_RUNTIME_TORCH_H
#define CULEAK_RUNTIME_TORCH_H

#include <stdbool.h>
#include <stddef.h>

#include "target/target.h"

#define CL_TORCH_MAX_LIBS 16

struct cl_torch_info {
    bool loaded;
    char version[64];          /* __version__ from version.py; "" when it could not be read */
    char cuda[32];             /* version.py's `cuda`, "" for None (a CPU build) */
    char version_file[4096];   /* the version.py read, on this machine */
    bool cuda_build;           /* a CUDA version in version.py, or CUDA libraries mapped */
    bool c10_cuda_mapped;      /* libc10_cuda.so: the caching allocator is loaded */
    const char *libs[CL_TORCH_MAX_LIBS];   /* mapped torch libraries, as the target names them */
    size_t nlibs;
};

/* Never fails on a target without torch: loaded is then false. */
void cl_torch_detect(struct cl_target *t, struct cl_torch_info *info);

/* Reads `name = '...'` (with or without a type annotation) from a version.py text; "" if the
 * assignment is missing or not a string literal. Pure. */
void cl_torch_version_py_field(const char *text, const char *name, char *out, size_t cap);

/* Which row of a table of C++ shapes read off torch 2.x releases fits t's release: the rows'
 * first minors (first_minor, then every stride bytes: a member of each row) rise, each row
 * covering its minor up to the next row's, the last one newer releases too. -1 for a release
 * before the first row, another major, or no version read. */
int cl_torch_row(const struct cl_torch_info *t, const unsigned *first_minor, size_t nrows,
                 size_t stride);

#endif

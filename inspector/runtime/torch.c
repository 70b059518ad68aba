#include "runtime/torch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/notes.h"
#include "util/text.h"

void cl_torch_version_py_field(const char *text, const char *name, char *out, size_t cap)
{
    size_t nlen = strlen(name);
    out[0] = '\0';
    for (const char *line = text; line && *line;
         line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        if (strncmp(line, name, nlen) != 0 ||
            (line[nlen] != ' ' && line[nlen] != '=' && line[nlen] != ':'))
            continue;
        const char *eq = strchr(line, '=');
        const char *eol = strchr(line, '\n');
        if (!eq || (eol && eq > eol))
            continue;
        const char *q = eq + 1;
        while (*q == ' ')
            q++;
        if (*q != '\'' && *q != '"')
            return;   /* None, or an expression: not a version */
        const char *end = strchr(q + 1, *q);
        if (!end || (eol && end > eol))
            return;
        cl_copy_span(out, cap, q + 1, (size_t)(end - q - 1));
        return;
    }
}

static const char *basename_of(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static bool is_torch_lib(const char *base)
{
    static const char *const prefixes[] = {"libtorch", "libc10", "libshm", "libcaffe2"};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (strncmp(base, prefixes[i], strlen(prefixes[i])) == 0)
            return true;
    return false;
}

static void read_version_py(struct cl_target *t, const char *ext_path, struct cl_torch_info *info)
{
    /* .../torch/_C.cpython-311-x86_64-linux-gnu.so -> .../torch/version.py */
    size_t dir = (size_t)(basename_of(ext_path) - ext_path);
    char want[4096];
    if (!cl_copy_span(want, sizeof want, ext_path, dir))
        return;   /* a path too long to look for */
    size_t len = strlen(want);
    if (!cl_appendf(want, sizeof want, &len, "version.py"))
        return;
    char text[16384];
    if (cl_target_text_file(t, want, info->version_file, sizeof info->version_file, text,
                            sizeof text))
        return;
    cl_torch_version_py_field(text, "__version__", info->version, sizeof info->version);
    cl_torch_version_py_field(text, "cuda", info->cuda, sizeof info->cuda);
}

void cl_torch_detect(struct cl_target *t, struct cl_torch_info *info)
{
    memset(info, 0, sizeof *info);
    const char *ext = NULL;
    bool torch_lib = false, ext_deleted = false;
    for (size_t i = 0; i < t->maps.n; i++) {
        const char *path = t->maps.v[i].path;
        if (!path || path[0] != '/')
            continue;
        const char *base = basename_of(path);
        size_t dirlen = (size_t)(base - path);
        if (!ext && strncmp(base, "_C.", 3) == 0 && dirlen >= 7 &&
            strncmp(base - 7, "/torch/", 7) == 0) {
            ext = path;
            ext_deleted = t->maps.v[i].perms & CL_MAP_DELETED;
        }
        bool mine = is_torch_lib(base);
        torch_lib |= mine;
        if (!mine && strncmp(base, "libcudart", 9) != 0)
            continue;
        bool dup = false;
        for (size_t j = 0; j < info->nlibs && !dup; j++)
            dup = strcmp(info->libs[j], path) == 0;
        if (!dup && info->nlibs < CL_TORCH_MAX_LIBS)
            info->libs[info->nlibs++] = path;
        if (strncmp(base, "libc10_cuda", 11) == 0)
            info->c10_cuda_mapped = true;
        if (strncmp(base, "libtorch_cuda", 13) == 0 || strncmp(base, "libc10_cuda", 11) == 0)
            info->cuda_build = true;
    }
    info->loaded = ext != NULL || torch_lib;
    if (ext)
        read_version_py(t, ext, info);
    if (ext && ext_deleted)   /* e.g. pip upgraded torch under a running job */
        cl_note_add(&t->warnings,
                    "%s was deleted or replaced after the target loaded it; the "
                    "torch version read from version.py may be the new install's",
                    ext);
    if (info->cuda[0])
        info->cuda_build = true;
}

int cl_torch_row(const struct cl_torch_info *t, const unsigned *first_minor, size_t nrows,
                 size_t stride)
{
    unsigned major, minor;
    int row = -1;
    if (sscanf(t->version, "%u.%u", &major, &minor) != 2 || major != 2)
        return -1;
    for (size_t i = 0; i < nrows; i++)
        if (*(const unsigned *)(const void *)((const char *)first_minor + i * stride) <= minor)
            row = (int)i;
    return row;
}

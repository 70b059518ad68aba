#include "util/output.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cl_output_open(const char *path, struct cl_output *out, struct cl_error *err)
{
    memset(out, 0, sizeof *out);
    out->path = path;
    struct stat st;
    int fd;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    } else {
        if (asprintf(&out->tmp, "%s.XXXXXX", path) < 0) {
            out->tmp = NULL;
            return cl_error_set(err, CL_E_INTERNAL, "out of memory");
        }
        fd = mkostemp(out->tmp, O_CLOEXEC);   /* mode 0600 */
    }
    if (fd >= 0 && (out->f = fdopen(fd, "w")))
        return 0;
    int e = errno;
    if (fd >= 0) {
        close(fd);
        if (out->tmp)
            unlink(out->tmp);
    }
    free(out->tmp);
    out->tmp = NULL;
    return cl_error_set(err, CL_E_IO, "cannot write %s: %s", path, strerror(e));
}

int cl_output_commit(struct cl_output *out, struct cl_error *err)
{
    bool failed = ferror(out->f) != 0;
    int e = failed ? EIO : 0;
    if (fclose(out->f) != 0 && !failed) {
        failed = true;
        e = errno;
    }
    out->f = NULL;
    if (!failed && out->tmp && rename(out->tmp, out->path) != 0) {
        failed = true;
        e = errno;
    }
    if (failed && out->tmp)
        unlink(out->tmp);
    free(out->tmp);
    out->tmp = NULL;
    return failed ? cl_error_set(err, CL_E_IO, "cannot write %s: %s", out->path, strerror(e)) : 0;
}

void cl_output_abort(struct cl_output *out)
{
    if (out->f)
        fclose(out->f);
    if (out->tmp)
        unlink(out->tmp);
    free(out->tmp);
    memset(out, 0, sizeof *out);
}

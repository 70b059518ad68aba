#include "util/spill.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

const char *cl_tmp_dir(void)
{
    const char *dir = getenv("TMPDIR");
    return dir && *dir ? dir : "/tmp";
}

FILE *cl_spill_open(void)
{
    const char *dir = cl_tmp_dir();
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) { /* a file system without O_TMPFILE: a name, removed at once */
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/culeak-XXXXXX", dir) >= (int)sizeof path)
            return NULL;
        if ((fd = mkostemp(path, O_CLOEXEC)) >= 0)
            unlink(path);
    }
    FILE *f = fd >= 0 ? fdopen(fd, "w+") : NULL;
    if (!f && fd >= 0)
        close(fd);
    if (f) /* written in large pieces: a report is many small writes */
        setvbuf(f, NULL, _IOFBF, 1 << 20);
    return f;
}

bool cl_spill_copy(FILE *f, FILE *out)
{
    char buf[1 << 16];
    if (fflush(f) || fseek(f, 0, SEEK_SET))
        return false;
    for (size_t got; (got = fread(buf, 1, sizeof buf, f)) > 0;)
        if (fwrite(buf, 1, got, out) != got)
            return false;
    return !ferror(f);
}

/* libFuzzer harness for the test of which libraries' writable data the copy leaves out
 * (inspector/target/libdata.c). The library file is the target's, in a container anyone's, so
 * it is untrusted. The input patches the made-up library of the unit tests
 * (tests/unit/target/lib_fixture.h, a fixture: test_attach.py reads a CUDA torch process's own
 * libraries):
 * - byte 0 picks the library: bit 0 a program, bit 1 with a Python symbol, bit 2 with one of
 *   torch's, bit 3 CL_LIBDATA_MIN_BYTES of writable memory rather than 64 KiB;
 * - byte 1 how much of it the file keeps, in 32-byte steps (0: all of it);
 * - then each 10 bytes write a 64-bit value (little-endian) at an offset (16-bit, within it).
 * The answer must be consistent: segments only for a foreign library, at most CL_LIB_SEGMENTS,
 * none with more file than memory; and for a library as made, the one its byte 0 says. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "target/lib_fixture.h"
#include "target/libdata.h"

#define PATCH 10

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1;   /* one file for every run, rewritten */
    unsigned char file[LIB_FILE_SIZE];
    uint8_t kind = size > 0 ? data[0] : 0;
    const char *names[3] = {"cublasLtCreate"};
    size_t nnames = 1;
    if (kind & 2)
        names[nnames++] = "PyList_Append";
    if (kind & 4)
        names[nnames++] = "_ZN3c1010TensorImplD2Ev";
    lib_fixture(file, kind & 8 ? CL_LIBDATA_MIN_BYTES : 0x10000, names, nnames, kind & 1);
    size_t len = size > 1 && data[1] ? data[1] * 32u : LIB_FILE_SIZE;
    for (size_t at = 2; at + PATCH <= size; at += PATCH) {
        uint16_t off;
        memcpy(&off, data + at, sizeof off);
        memcpy(file + off % (sizeof file - 7), data + at + 2, 8);
    }
    if (fd < 0 && (fd = memfd_create("fuzz-libdata", MFD_CLOEXEC)) < 0)
        abort();
    if (ftruncate(fd, 0) != 0 || pwrite(fd, file, len, 0) != (ssize_t)len)
        abort();
    struct cl_lib_segment seg[CL_LIB_SEGMENTS];
    size_t n = CL_LIB_SEGMENTS + 1;
    bool foreign = cl_libdata_foreign(fd, seg, &n);
    if (foreign ? n == 0 || n > CL_LIB_SEGMENTS : n != 0)
        abort();
    for (size_t i = 0; foreign && i < n; i++)
        if (seg[i].filesz > seg[i].memsz)
            abort();
    bool as_made = size <= 2 && len == LIB_FILE_SIZE;
    if (as_made && foreign != ((kind & 0xf) == 8))
        abort();
    return 0;
}

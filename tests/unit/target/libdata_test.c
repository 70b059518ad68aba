/* Which libraries' writable data the copy of a live process leaves out: made-up libraries (the
 * integration tests read a CUDA torch process's own), well-formed and not. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "lib_fixture.h"
#include "suites.h"
#include "target/libdata.h"
#include "testutil.h"

/* cl_libdata_foreign on bytes[0, len) written to a file; its segments into seg and *n. */
static bool foreign_bytes(const unsigned char *bytes, size_t len, struct cl_lib_segment *seg,
                          size_t *n)
{
    char *dir = tu_mkdtemp(), *path = tu_path(dir, "lib.so");
    CU_ASSERT_EQUAL_FATAL(tu_write_file(path, bytes, len), 0);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    CU_ASSERT_FATAL(fd >= 0);
    bool foreign = cl_libdata_foreign(fd, seg, n);
    close(fd);
    free(path);
    tu_rmtree(dir);
    return foreign;
}

static bool foreign_lib(uint64_t memsz, const char *const *names, size_t count)
{
    unsigned char lib[LIB_FILE_SIZE];
    struct cl_lib_segment seg[CL_LIB_SEGMENTS];
    size_t n;
    lib_fixture(lib, memsz, names, count, false);
    return foreign_bytes(lib, sizeof lib, seg, &n);
}

/* A big .bss among libc's and the library's own names: foreign, with its segment. */
static void test_foreign(void)
{
    static const char *const names[] = {"memcpy", "cublasLtCreate", "_ZN4cuda6detail4initEv"};
    unsigned char lib[LIB_FILE_SIZE];
    struct cl_lib_segment seg[CL_LIB_SEGMENTS];
    size_t n;
    lib_fixture(lib, 2u << 20, names, 3, false);
    CU_ASSERT_TRUE(foreign_bytes(lib, sizeof lib, seg, &n));
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_EQUAL(seg[0].offset, LIB_SEGMENT_OFFSET);
    CU_ASSERT_EQUAL(seg[0].vaddr, LIB_VADDR);
    CU_ASSERT_EQUAL(seg[0].filesz, LIB_FILE_SIZE - LIB_SEGMENT_OFFSET);
    CU_ASSERT_EQUAL(seg[0].memsz, 2u << 20);
}

/* A library that defines or calls Python's C API, or torch's C++, is culeak's business. */
static void test_ours(void)
{
    static const char *const python[] = {"memcpy", "PyList_New"};
    static const char *const private_python[] = {"_Py_NoneStruct"};
    static const char *const c10[] = {"_ZN3c1010TensorImpl7releaseEv"};
    static const char *const torch[] = {"_ZNK5torch8autograd4Node4nameEv"};
    CU_ASSERT_FALSE(foreign_lib(2u << 20, python, 2));
    CU_ASSERT_FALSE(foreign_lib(2u << 20, private_python, 1));
    CU_ASSERT_FALSE(foreign_lib(2u << 20, c10, 1));
    CU_ASSERT_FALSE(foreign_lib(2u << 20, torch, 1));
}

/* Little writable memory: kept, whatever the library is (libc's, whose __environ culeak reads). */
static void test_small(void)
{
    static const char *const names[] = {"memcpy"};
    CU_ASSERT_FALSE(foreign_lib(CL_LIBDATA_MIN_BYTES - 1, names, 1));
    CU_ASSERT_TRUE(foreign_lib(CL_LIBDATA_MIN_BYTES, names, 1));
}

/* What is not a well-formed library is kept: no dynamic symbols, cut short, not ELF, an
 * executable, a segment whose file part outgrows its memory; and a program, even a PIE. */
static void test_malformed(void)
{
    static const char *const names[] = {"memcpy"};
    unsigned char lib[LIB_FILE_SIZE];
    struct cl_lib_segment seg[CL_LIB_SEGMENTS];
    size_t n;
    lib_fixture(lib, 2u << 20, names, 1, false);
    CU_ASSERT_FALSE(foreign_bytes(lib, 0x450, seg, &n));   /* within the symbols */
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_FALSE(foreign_bytes((const unsigned char *)"not an ELF file", 15, seg, &n));
    unsigned char copy[LIB_FILE_SIZE];
    memcpy(copy, lib, sizeof lib);
    Elf64_Shdr sh;
    memcpy(&sh, copy + LIB_SHDRS + sizeof sh, sizeof sh);
    sh.sh_type = SHT_PROGBITS;   /* the table is no longer a dynamic symbol table */
    memcpy(copy + LIB_SHDRS + sizeof sh, &sh, sizeof sh);
    CU_ASSERT_FALSE(foreign_bytes(copy, sizeof copy, seg, &n));
    memcpy(copy, lib, sizeof lib);
    Elf64_Ehdr eh;
    memcpy(&eh, copy, sizeof eh);
    eh.e_type = ET_EXEC;
    memcpy(copy, &eh, sizeof eh);
    CU_ASSERT_FALSE(foreign_bytes(copy, sizeof copy, seg, &n));
    lib_fixture(copy, 2u << 20, names, 1, true);
    CU_ASSERT_FALSE(foreign_bytes(copy, sizeof copy, seg, &n));
    lib_fixture(copy, 0x100, names, 1, false);   /* filesz 0x1000 > memsz */
    CU_ASSERT_FALSE(foreign_bytes(copy, sizeof copy, seg, &n));
    CU_ASSERT_TRUE(foreign_bytes(lib, sizeof lib, seg, &n));   /* and the original is foreign */
}

void register_target_libdata_tests(void)
{
    static const struct tu_test tests[] = {
        {"a library foreign to culeak", test_foreign},
        {"Python's and torch's libraries", test_ours},
        {"little writable memory", test_small},
        {"malformed libraries are kept", test_malformed},
        {NULL, NULL},
    };
    tu_add_suite("target/libdata", tests);
}

/* Symbols of a live target: a forked child (no exec), so its libc and executable sit at this
 * process's addresses and our own function pointers are the expected answers. libc functions
 * the sanitizers intercept (malloc, ...) would point into the runtime instead, so the libc
 * probe is gnu_get_libc_version. */
#include <gnu/libc-version.h>
#include <stdint.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "suites.h"
#include "symbols/symbols.h"
#include "testutil.h"

static pid_t child;
static struct cl_target *target;
static struct cl_symbols *syms;

static void close_child(void)
{
    cl_symbols_close(syms);
    cl_target_close(target);
    syms = NULL;
    target = NULL;
    tu_kill_child(child);
    child = 0;
}

/* Opened once per test: the child stays stopped only while the target is open. */
static int open_child(void)
{
    struct cl_error err = {0};
    child = tu_fork_paused_child();
    if (child <= 0)
        return -1;
    if (cl_target_open_live(child, NULL, &target, &err) == 0 &&
        cl_symbols_load(target, &syms, &err) == 0)
        return 0;
    fprintf(stderr, "\n  pid %d: %s\n", (int)child, err.msg);
    close_child();
    return -1;
}

static void test_libc_symbol(void)
{
    CU_ASSERT_EQUAL_FATAL(open_child(), 0);
    const struct cl_module *libc = cl_symbols_module_named(syms, "libc.so");
    CU_ASSERT_PTR_NOT_NULL(libc);
    if (libc) {
        CU_ASSERT_EQUAL(libc->state, CL_MODULE_OK);
        CU_ASSERT_PTR_NOT_NULL(strstr(libc->path, "libc.so.6"));
        uint64_t want = (uint64_t)(uintptr_t)&gnu_get_libc_version, addr = 0, size = 0;
        CU_ASSERT(cl_module_symbol(libc, "gnu_get_libc_version", &addr, &size));
        CU_ASSERT_EQUAL(addr, want);
        CU_ASSERT(size > 0);
        CU_ASSERT(want >= libc->start && want < libc->end);
        CU_ASSERT_PTR_EQUAL(cl_symbols_module_at(syms, want), libc);

        uint64_t off = 99;
        const char *name = cl_symbols_name_at(syms, want + 1, &off);
        CU_ASSERT_PTR_NOT_NULL(name);
        if (name)
            CU_ASSERT_STRING_EQUAL(name, "gnu_get_libc_version");
        CU_ASSERT_EQUAL(off, 1);

        uint64_t text = 0, tsize = 0;
        CU_ASSERT(cl_module_section(libc, ".text", &text, &tsize));
        CU_ASSERT(want >= text && want < text + tsize);
        CU_ASSERT(text >= libc->start && text + tsize <= libc->end);
        CU_ASSERT_FALSE(cl_module_symbol(libc, "culeak_no_such_symbol", &addr, NULL));
        CU_ASSERT_FALSE(cl_module_section(libc, ".culeak_no_such_section", &addr, NULL));
    }
    CU_ASSERT_PTR_NULL(cl_symbols_module_named(syms, "libculeak-no-such-lib"));
    CU_ASSERT_PTR_NULL(cl_symbols_module_named(syms, NULL));
    CU_ASSERT_PTR_NULL(cl_symbols_module_at(syms, 8));
    CU_ASSERT_PTR_NULL(cl_symbols_name_at(syms, 8, NULL));
    close_child();
}

/* A function of this executable, found through its own .symtab. */
int culeak_unit_probe(int x);
__attribute__((noipa)) int culeak_unit_probe(int x)
{
    return x * 7919 + 104729;
}

static void test_exe_symbol(void)
{
    CU_ASSERT_EQUAL_FATAL(open_child(), 0);
    const struct cl_module *exe = NULL;
    for (size_t i = 0; i < syms->n; i++)
        if (target->exe_path && strcmp(syms->mods[i].path, target->exe_path) == 0)
            exe = &syms->mods[i];
    CU_ASSERT_PTR_NOT_NULL(exe);
    if (exe) {
        uint64_t want = (uint64_t)(uintptr_t)&culeak_unit_probe, addr = 0;
        CU_ASSERT_EQUAL(exe->state, CL_MODULE_OK);
        CU_ASSERT(cl_module_has_symtab(exe));   /* built unstripped, with -g */
        CU_ASSERT(cl_module_has_dwarf(exe));
        CU_ASSERT(cl_module_symbol(exe, "culeak_unit_probe", &addr, NULL));
        CU_ASSERT_EQUAL(addr, want);
        CU_ASSERT_PTR_EQUAL(cl_symbols_module_at(syms, want), exe);
        const char *name = cl_symbols_name_at(syms, want, NULL);
        CU_ASSERT_PTR_NOT_NULL(name);
        if (name)
            CU_ASSERT_STRING_EQUAL(name, "culeak_unit_probe");
    }
    /* every module is a distinct file mapped at offset 0 */
    for (size_t i = 0; i < syms->n; i++)
        for (size_t j = i + 1; j < syms->n; j++)
            CU_ASSERT(strcmp(syms->mods[i].path, syms->mods[j].path) != 0);
    close_child();
}

void register_symbols_tests(void)
{
    static const struct tu_test tests[] = {
        {"libc symbol, reverse lookup, section", test_libc_symbol},
        {"executable symbol from .symtab", test_exe_symbol},
        {NULL, NULL},
    };
    tu_add_suite("symbols", tests);
}

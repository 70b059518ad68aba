/* The symbol-name table against the order libdwfl gives a module's symbols in: every defined
 * name of this test binary's own .symtab (thousands, static functions of the same name in several
 * files among them) is answered with its first defined symbol, as a scan finds it. */
#include <elfutils/libdwfl.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "suites.h"
#include "symbols/names.h"
#include "testutil.h"

static char *debuginfo_path;
static const Dwfl_Callbacks offline = {.find_elf = dwfl_build_id_find_elf,
                                       .find_debuginfo = dwfl_standard_find_debuginfo,
                                       .section_address = dwfl_offline_section_address,
                                       .debuginfo_path = &debuginfo_path};

/* The first defined symbol named name, by a scan of the table. */
static bool scan(Dwfl_Module *mod, const char *name, GElf_Addr *value)
{
    int n = dwfl_module_getsymtab(mod);
    for (int i = 1; i < n; i++) {
        GElf_Sym sym;
        const char *have = dwfl_module_getsym_info(mod, i, &sym, value, NULL, NULL, NULL);
        if (have && sym.st_shndx != SHN_UNDEF && strcmp(have, name) == 0)
            return true;
    }
    return false;
}

static void test_every_name(void)
{
    Dwfl *dwfl = dwfl_begin(&offline);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dwfl);
    Dwfl_Module *mod = dwfl_report_offline(dwfl, "self", "/proc/self/exe", -1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mod);
    dwfl_report_end(dwfl, NULL, NULL);
    int n = dwfl_module_getsymtab(mod);
    CU_ASSERT(n > 1000);
    struct cl_symnames names = {0};
    size_t checked = 0, repeated = 0;
    for (int i = 1; i < n; i++) {
        GElf_Sym sym, found;
        GElf_Addr value, want, got = 0;
        const char *name = dwfl_module_getsym_info(mod, i, &sym, &value, NULL, NULL, NULL);
        if (!name || sym.st_shndx == SHN_UNDEF || !*name)
            continue;
        CU_ASSERT_FATAL(scan(mod, name, &want));
        CU_ASSERT_FATAL(cl_symnames_find(&names, mod, name, &found, &got));
        CU_ASSERT_EQUAL(got, want);
        repeated += want != value; /* a later symbol of a name taken before */
        checked++;
    }
    CU_ASSERT(checked > 1000);
    CU_ASSERT(repeated > 0); /* `probe`, `build`, ... are static in several files */
    GElf_Sym sym;
    GElf_Addr value;
    CU_ASSERT_FALSE(cl_symnames_find(&names, mod, "culeak_no_such_symbol", &sym, &value));
    cl_symnames_free(&names);
    CU_ASSERT_PTR_NULL(names.slots);
    dwfl_end(dwfl);
}

void register_symbols_names_tests(void)
{
    static const struct tu_test tests[] = {
        {"every name: its first defined symbol", test_every_name},
        {NULL, NULL},
    };
    tu_add_suite("symbols/names", tests);
}

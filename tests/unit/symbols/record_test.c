/* The recorded symbol answers: kept once per question, found by the whole question (kind,
 * module, keys, address), written and read back, and refused when malformed or cut short. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "suites.h"
#include "symbols/record.h"
#include "testutil.h"

static void fill(struct cl_symrec *r)
{
    struct cl_symq a = {CL_SYMQ_SYMBOL, 1, "_PyRuntime", NULL, 0, true, 0x1000, 64, NULL, false};
    struct cl_symq b = {CL_SYMQ_DWARF_MEMBER, 0, "PyObject", "ob_type", 0, true, 8, 0, NULL, false};
    struct cl_symq c = {
        CL_SYMQ_NAME_AT, CL_SYMQ_NO_MODULE, NULL, NULL, 0x2010, true, 16, 0, "f", false};
    struct cl_symq d = {CL_SYMQ_SECTION, 1, ".PyRuntime", NULL, 0, false, 0, 0, NULL, false};
    cl_symrec_add(r, &a);
    cl_symrec_add(r, &b);
    cl_symrec_add(r, &c);
    cl_symrec_add(r, &d);
    cl_symrec_add(r, &a);   /* asked twice: kept once */
}

static void test_find(void)
{
    struct cl_symrec r = {0};
    fill(&r);
    CU_ASSERT_EQUAL(r.n, 4);
    struct cl_symq q = {.kind = CL_SYMQ_SYMBOL, .module = 1, .key = "_PyRuntime"};
    const struct cl_symq *a = cl_symrec_find(&r, &q);
    CU_ASSERT(a && a->found && a->v1 == 0x1000 && a->v2 == 64);
    q.module = 0;   /* the same name in another module is another question */
    CU_ASSERT_PTR_NULL(cl_symrec_find(&r, &q));
    struct cl_symq m = {
        .kind = CL_SYMQ_DWARF_MEMBER, .module = 0, .key = "PyObject", .key2 = "ob_refcnt"};
    CU_ASSERT_PTR_NULL(cl_symrec_find(&r, &m));
    struct cl_symq n = {.kind = CL_SYMQ_NAME_AT, .module = CL_SYMQ_NO_MODULE, .addr = 0x2010};
    const struct cl_symq *c = cl_symrec_find(&r, &n);
    CU_ASSERT(c && strcmp(c->name, "f") == 0 && c->v1 == 16);
    cl_symrec_free(&r);
}

static void test_round_trip_and_refusals(void)
{
    struct cl_symrec r = {0}, back;
    fill(&r);
    struct cl_bytes_out o = {0};
    cl_symrec_write(&r, &o);
    CU_ASSERT_FATAL(!o.oom);
    struct cl_bytes_in in = {o.p, o.len, 0, false, false};
    CU_ASSERT(cl_symrec_read(&in, 2, &back));
    CU_ASSERT_EQUAL(back.n, 4);
    struct cl_symq q = {
        .kind = CL_SYMQ_DWARF_MEMBER, .module = 0, .key = "PyObject", .key2 = "ob_type"};
    const struct cl_symq *b = cl_symrec_find(&back, &q);
    CU_ASSERT(b && b->found && b->v1 == 8);
    cl_symrec_free(&back);
    /* a module index the dump does not have */
    in = (struct cl_bytes_in){o.p, o.len, 0, false, false};
    CU_ASSERT(!cl_symrec_read(&in, 1, &back));
    cl_symrec_free(&back);
    /* every cut short */
    for (size_t cut = 0; cut < o.len; cut++) {
        in = (struct cl_bytes_in){o.p, cut, 0, false, false};
        CU_ASSERT(!cl_symrec_read(&in, 2, &back));
        CU_ASSERT(in.bad);
        cl_symrec_free(&back);
    }
    /* a count no section could hold */
    memset(o.p, 0xff, 8);
    in = (struct cl_bytes_in){o.p, o.len, 0, false, false};
    CU_ASSERT(!cl_symrec_read(&in, 2, &back));
    cl_symrec_free(&back);
    cl_out_free(&o);
    cl_symrec_free(&r);
}

void register_symbols_record_tests(void)
{
    static const struct tu_test tests[] = {
        {"answers found by the whole question", test_find},
        {"written, read back, refused when malformed", test_round_trip_and_refusals},
        {NULL, NULL},
    };
    tu_add_suite("symbols/record", tests);
}

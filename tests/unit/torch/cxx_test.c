/* C++ names as culeak writes them (torch/cxx.c): plain nested names demangled, anything else
 * (templates, substitutions, a truncated name) left as it is rather than guessed at. */
#include <string.h>

#include <CUnit/CUnit.h>

#include "suites.h"
#include "testutil.h"
#include "torch/cxx.h"

static void test_class_text(void)
{
    static const char *const cases[][2] = {
        {"N4c10d7ReducerE", "c10d::Reducer"},
        {"N2at4cuda9CUDAGraphE", "at::cuda::CUDAGraph"},
        {"7MemPool", "MemPool"},
        {"St6vectorIiSaIiEE", "St6vectorIiSaIiEE"},     /* a template: as it is */
        {"N3c1012TensorImplIiEE", "N3c1012TensorImplIiEE"},
        {"N4c10d7Reduc", "N4c10d7Reduc"},               /* cut short */
        {"N4c10d7ReducerE!", "N4c10d7ReducerE!"},       /* more after the end */
        {"", ""},
    };
    char out[64];
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        cxx_class_text(cases[k][0], out, sizeof out);
        CU_ASSERT_STRING_EQUAL(out, cases[k][1]);
    }
    char small[8];   /* too long for out: cut, never overrun */
    cxx_class_text("N2at4cuda9CUDAGraphE", small, sizeof small);
    CU_ASSERT_EQUAL(strlen(small), sizeof small - 1);
}

void register_torch_cxx_tests(void)
{
    static const struct tu_test tests[] = {
        {"class names as C++ writes them", test_class_text},
        {NULL, NULL},
    };
    tu_add_suite("torch/cxx", tests);
}

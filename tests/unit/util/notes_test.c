/* Warnings gathered as one newline-separated string. */
#include <stdlib.h>

#include <CUnit/CUnit.h>

#include "suites.h"
#include "testutil.h"
#include "util/notes.h"

static void test_add(void)
{
    char *notes = NULL;
    cl_note_add(&notes, "first %d", 1);
    cl_note_add(&notes, "second %s", "two");
    CU_ASSERT_STRING_EQUAL(notes, "first 1\nsecond two\n");
    free(notes);
}

void register_util_notes_tests(void)
{
    static const struct tu_test tests[] = {
        {"cl_note_add", test_add},
        {NULL, NULL},
    };
    tu_add_suite("util/notes", tests);
}

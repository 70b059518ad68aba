/* The command table (engine/table.h) is whole: every row says what each front end needs of it,
 * every option applies somewhere, and what the table derives (usage, applicability, the dump's
 * list) follows it. The checks against files outside the library (schemas, the Python package,
 * gdb, the man page) are scripts/check-commands'. */
#include <stdint.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "engine/cmdline.h"
#include "engine/table.h"
#include "suites.h"
#include "testutil.h"

static void test_rows_whole(void)
{
    size_t n;
    const struct cl_command_spec *c = cl_commands(&n);
    CU_ASSERT_FATAL(n > 10);
    for (size_t i = 0; i < n; i++) {
        const struct cl_command_spec *r = &c[i];
        CU_ASSERT_PTR_NOT_NULL_FATAL(r->help);
        CU_ASSERT_PTR_EQUAL(cl_command_find(r->name), r);   /* names are unique */
        /* it runs somehow: on a target, on files, opening targets itself, or in gdb's form */
        CU_ASSERT(r->run || r->run_files || r->drive || (r->flags & CL_CMD_GDB_OWN));
        if (!(r->flags & CL_CMD_GDB_ONLY)) /* a Python form, or the reason for none */
            CU_ASSERT((r->python != NULL) != (r->no_python != NULL));
        if (r->flags & CL_CMD_GDB_OWN)
            CU_ASSERT_PTR_NOT_NULL(r->gdb_doc);
        if (r->flags & CL_CMD_GDB) /* the engine runs it in gdb */
            CU_ASSERT_PTR_NOT_NULL(r->run);
        if (r->uses)
            CU_ASSERT_PTR_NOT_NULL(r->without);
        if (r->max_files)
            CU_ASSERT(r->min_files <= r->max_files && r->fewer_files);
        if (r->run_files)
            CU_ASSERT(r->run_files_at >= r->min_files && r->run_files_at <= r->max_files);
        if (r->flags & (CL_CMD_MANY | CL_CMD_DUMPED))
            CU_ASSERT_PTR_NOT_NULL(r->run);
    }
}

/* No option is taken by no command, and --json goes with a schema. */
static void test_options_used(void)
{
    size_t n;
    const struct cl_command_spec *c = cl_commands(&n);
    uint64_t taken = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t set = cl_command_option_set(&c[i]);
        taken |= set;
        CU_ASSERT_EQUAL((set & CL_OPTION_BIT(CL_O_JSON)) != 0, c[i].schema != NULL);
    }
    for (int id = 0; id < CL_O_NUMBER_OF_OPTIONS; id++)
        if (!(taken & CL_OPTION_BIT(id)))
            CU_FAIL(cl_option(id)->name);
}

/* --help lists every command of the CLI and every option one takes, and none of gdb's own. */
static void test_usage(void)
{
    static char usage[CL_USAGE_CAP];
    size_t len = cl_command_usage(CL_FRONT_CLI, usage, sizeof usage);
    CU_ASSERT_FATAL(len > 0 && len < sizeof usage - 1);
    size_t n;
    const struct cl_command_spec *c = cl_commands(&n);
    char word[64];
    for (size_t i = 0; i < n; i++) {
        snprintf(word, sizeof word, "\n  %s ", c[i].name);
        CU_ASSERT_EQUAL(strstr(usage, word) != NULL, !(c[i].flags & CL_CMD_GDB_ONLY));
    }
    CU_ASSERT_PTR_NOT_NULL(strstr(usage, "  --max-objects N  stop walking"));
    CU_ASSERT_PTR_NOT_NULL(strstr(usage, "  -o, --output FILE  write the report"));
    CU_ASSERT_PTR_NULL(strstr(usage, "--stop-on-growth"));
    len = cl_command_usage(CL_FRONT_GDB, usage, sizeof usage);
    CU_ASSERT_FATAL(len > 0 && len < sizeof usage - 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(usage, "--stop-on-growth N"));
    CU_ASSERT_PTR_NULL(strstr(usage, "  --pid PID"));
    CU_ASSERT_PTR_NULL(strstr(usage, "\n  watch "));
}

static int parse(struct cl_command_line *cl, struct cl_error *err, bool cli, const char **args)
{
    char *argv[16] = {"culeak"};
    int argc = 1;
    while (args[argc - 1] && argc < 15)
        argv[argc] = (char *)args[argc - 1], argc++;
    return cl_command_parse(argc, argv, 1, cli, cli, cl, err);
}

/* Options apply where the table says: --json where a schema is, break-step's in gdb only. */
static void test_applicability(void)
{
    struct cl_command_line cl = {0};
    struct cl_error err = {0};
    CU_ASSERT_EQUAL(parse(&cl, &err, true, (const char *[]){"watch", "--pid", "5", "--json", NULL}),
                    CL_E_USAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--json does not apply to watch (only to info,"));
    memset(&cl, 0, sizeof cl);
    CU_ASSERT_EQUAL(
        parse(&cl, &err, true, (const char *[]){"info", "--pid", "5", "--every", "2", NULL}),
        CL_E_USAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--every does not apply to info (only to break-step)"));
    memset(&cl, 0, sizeof cl);
    CU_ASSERT_EQUAL(parse(&cl, &err, true, (const char *[]){"break-step", NULL}), CL_E_USAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "unknown command 'break-step'"));
    memset(&cl, 0, sizeof cl);
    cl.command = "break-step"; /* as the plugin parses it */
    CU_ASSERT_EQUAL(
        parse(&cl, &err, false, (const char *[]){"--every", "3", "--stop-on-growth", "1M", NULL}),
        0);
    CU_ASSERT(cl.steps.every == 3 && cl.steps.stop_on_growth == 1u << 20);
    memset(&cl, 0, sizeof cl);
    cl.command = "break-step";
    CU_ASSERT_EQUAL(parse(&cl, &err, false, (const char *[]){"--stop-on-growth", "0", NULL}),
                    CL_E_USAGE);
    memset(&cl, 0, sizeof cl);
    cl.command = "break-step";
    CU_ASSERT_EQUAL(parse(&cl, &err, false, (const char *[]){"--top", "3", NULL}), CL_E_USAGE);
    /* several targets: the message names the commands that read several, from the table */
    memset(&cl, 0, sizeof cl);
    CU_ASSERT_EQUAL(
        parse(&cl, &err, true, (const char *[]){"watch", "--pid", "5", "--pid", "6", NULL}),
        CL_E_USAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "blocks, snapshot and check-layout"));
    /* snapshot files: as many as the row takes, and the row's words when too few */
    memset(&cl, 0, sizeof cl);
    CU_ASSERT_EQUAL(parse(&cl, &err, true, (const char *[]){"merge", "a.json", NULL}), CL_E_USAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "merge wants two or more snapshot files"));
    memset(&cl, 0, sizeof cl);
    CU_ASSERT_EQUAL(parse(&cl, &err, true, (const char *[]){"diff", "a", "b", "c", NULL}),
                    CL_E_USAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "unexpected argument 'c'"));
}

void register_engine_table_tests(void)
{
    static const struct tu_test tests[] = {
        {"rows whole", test_rows_whole},
        {"every option used", test_options_used},
        {"usage from the table", test_usage},
        {"applicability from the table", test_applicability},
        {NULL, NULL},
    };
    tu_add_suite("engine/table", tests);
}

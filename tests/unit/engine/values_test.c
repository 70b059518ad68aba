/* Option values: every kind accepts what it documents and refuses signs, overflow, stray text
 * and out-of-range numbers, with the option named in the message. */
#include <stdint.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "engine/cmdline.h"
#include "engine/values.h"
#include "suites.h"
#include "testutil.h"

static void test_count(void)
{
    struct cl_error err = {0};
    uint64_t v = 7;
    CU_ASSERT_EQUAL(cl_value_count("--top", "20", 1, 100, &v, &err), 0);
    CU_ASSERT_EQUAL(v, 20);
    CU_ASSERT_EQUAL(cl_value_count("--x", "18446744073709551615", 0, UINT64_MAX, &v, &err), 0);
    CU_ASSERT_EQUAL(v, UINT64_MAX);
    const char *bad[] = {"-1",
                         "+1",
                         " 1",
                         "1 ",
                         "",
                         "0",
                         "101",
                         "18446744073709551616",
                         "99999999999999999999999",
                         "0x10",
                         "1e3",
                         "1.5"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        v = 7;
        CU_ASSERT_EQUAL(cl_value_count("--top", bad[i], 1, 100, &v, &err), CL_E_USAGE);
        CU_ASSERT_EQUAL(v, 7);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--top"));
    }
}

static void test_size(void)
{
    struct cl_error err = {0};
    struct {
        const char *s;
        uint64_t want;
    } good[] = {
        {"0", 0},
        {"100", 100},
        {"1K", 1024},
        {"1k", 1024},
        {"2M", 2u << 20},
        {"1MiB", 1u << 20},
        {"3G", 3ull << 30},
        {"1GB", 1ull << 30},
        {"16T", 16ull << 40},
        {"18446744073709551615", UINT64_MAX},
        {"16777215T", 16777215ull << 40},
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        uint64_t v = 7;
        CU_ASSERT_EQUAL(cl_value_size("--min-bytes", good[i].s, &v, &err), 0);
        CU_ASSERT_EQUAL(v, good[i].want);
    }
    const char *bad[] = {
        "", "M", "-1M", "1Q", "1MM", "1 M", "1.5M", "16777216T", "18446744073709551616", "1Mb2"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        uint64_t v = 7;
        CU_ASSERT_EQUAL(cl_value_size("--min-bytes", bad[i], &v, &err), CL_E_USAGE);
        CU_ASSERT_EQUAL(v, 7);
    }
}

static void test_addr(void)
{
    struct cl_error err = {0};
    uint64_t v = 0;
    CU_ASSERT_EQUAL(cl_value_addr("--addr", "0x7f3a1c2b4e50", &v, &err), 0);
    CU_ASSERT_EQUAL(v, 0x7f3a1c2b4e50ull);
    CU_ASSERT_EQUAL(cl_value_addr("--addr", "7F3A1C2B4E50", &v, &err), 0);
    CU_ASSERT_EQUAL(v, 0x7f3a1c2b4e50ull);
    CU_ASSERT_EQUAL(cl_value_addr("--addr", "0xffffffffffffffff", &v, &err), 0);
    CU_ASSERT_EQUAL(v, UINT64_MAX);
    const char *bad[] = {
        "0x1000000000000000000", "-0x10", "0x", "", "0", "0x0", "0x10g", " 0x10", "+10"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CU_ASSERT_EQUAL(cl_value_addr("--addr", bad[i], &v, &err), CL_E_USAGE);
}

static void test_device(void)
{
    struct cl_error err = {0};
    struct cl_device_choice d;
    CU_ASSERT_EQUAL(cl_value_device("--device", "cpu", &d, &err), 0);
    CU_ASSERT(d.kind == CL_DEVICE_CPU && d.index == -1);
    CU_ASSERT_EQUAL(cl_value_device("--device", "cuda", &d, &err), 0);
    CU_ASSERT(d.kind == CL_DEVICE_CUDA && d.index == -1);
    CU_ASSERT_EQUAL(cl_value_device("--device", "cuda:3", &d, &err), 0);
    CU_ASSERT(d.kind == CL_DEVICE_CUDA && d.index == 3);
    CU_ASSERT_EQUAL(cl_value_device("--device", "1", &d, &err), 0);
    CU_ASSERT(d.kind == CL_DEVICE_CUDA && d.index == 1);
    CU_ASSERT_EQUAL(cl_value_device("--device", "all", &d, &err), 0);
    CU_ASSERT(d.kind == CL_DEVICE_ALL);
    const char *bad[] = {"cuda:", "cuda:-1", "cuda:x", "-1", "128", "gpu", "cuda:1:2", "", "CPU"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CU_ASSERT_EQUAL(cl_value_device("--device", bad[i], &d, &err), CL_E_USAGE);
}

static void test_seconds(void)
{
    struct cl_error err = {0};
    double v = 0;
    CU_ASSERT_EQUAL(cl_value_seconds("--interval", "0.5", 0.1, 60, &v, &err), 0);
    CU_ASSERT_DOUBLE_EQUAL(v, 0.5, 1e-12);
    CU_ASSERT_EQUAL(cl_value_seconds("--interval", "30", 0.1, 60, &v, &err), 0);
    CU_ASSERT_DOUBLE_EQUAL(v, 30, 1e-12);
    CU_ASSERT_EQUAL(cl_value_seconds("--interval", "2.", 0.1, 60, &v, &err), 0);
    const char *bad[] = {"-3", "0.01", "61",  "nan",   "inf", "",  "1s",
                         " 1", "0x10", "1e1", "1.2.3", ".5",  "+1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CU_ASSERT_EQUAL(cl_value_seconds("--interval", bad[i], 0.1, 60, &v, &err), CL_E_USAGE);
}

/* The command line as a whole: repeats, inapplicable options (CLI and gdb plugin alike). */
static int parse(bool want_command, bool allow_target, struct cl_command_line *cl,
                 struct cl_error *err, const char *const *args)
{
    char *argv[16] = {"culeak"};
    int argc = 1;
    while (args[argc - 1])
        argv[argc] = (char *)args[argc - 1], argc++;
    memset(cl, 0, sizeof *cl);
    return cl_command_parse(argc, argv, 1, want_command, allow_target, cl, err);
}

static void test_command_line(void)
{
    struct cl_command_line cl;
    struct cl_error err = {0};
    CU_ASSERT_EQUAL(parse(true, true, &cl, &err,
                          (const char *[]){"tensors", "--pid", "5", "--min-bytes", "1M", "--device",
                                           "cuda:0", NULL}),
                    0);
    CU_ASSERT_EQUAL(cl.tensor_filter.min_bytes, 1u << 20);
    CU_ASSERT(cl.tensor_filter.device == 1 && cl.tensor_filter.by_index);
    CU_ASSERT_EQUAL(cl.tensor_filter.index, 0);
    CU_ASSERT_EQUAL(
        parse(true, true, &cl, &err, (const char *[]){"tensors", "--pid", "5", "--top", "3", NULL}),
        CL_E_USAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--top does not apply to tensors"));
    /* several targets: each read, for the commands that report on each (engine/multi.h) */
    CU_ASSERT_EQUAL(
        parse(true, true, &cl, &err,
              (const char *[]){"info", "--pid", "5", "--pid", "6", "--core", "c", NULL}),
        0);
    CU_ASSERT(cl.npids == 2 && cl.pids[1] == 6 && cl.ncores == 1 && cl_command_many(&cl));
    CU_ASSERT_EQUAL(parse(true, true, &cl, &err,
                          (const char *[]){"dump", "--pid", "5", "--pid", "6", "-o", "x", NULL}),
                    CL_E_USAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "dump reads one target"));
    CU_ASSERT_EQUAL(parse(true, true, &cl, &err,
                          (const char *[]){"summary", "--children", "5", "--exe", "x", NULL}),
                    CL_E_USAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "apply to cores only"));
    CU_ASSERT_EQUAL(
        parse(true, true, &cl, &err, (const char *[]){"info", "--dump", "d", "--pid", "6", NULL}),
        CL_E_USAGE);
    CU_ASSERT_EQUAL(
        parse(true, true, &cl, &err,
              (const char *[]){"refs", "--pid", "5", "--addr", "0x10", "--addr", "0x20", NULL}),
        0);
    CU_ASSERT_EQUAL(cl.naddrs, 2);
    CU_ASSERT_EQUAL(parse(true, true, &cl, &err,
                          (const char *[]){"blocks", "--pid", "5", "--device", "cpu", NULL}),
                    CL_E_USAGE);
    /* The gdb plugin parses without the command and sets it after: running checks again. */
    CU_ASSERT_EQUAL(parse(false, false, &cl, &err, (const char *[]){"--top", "3", NULL}), 0);
    cl.command = "tensors";
    CU_ASSERT_EQUAL(cl_command_applicable(&cl, &err), CL_E_USAGE);
    cl.command = "summary";
    CU_ASSERT_EQUAL(cl_command_applicable(&cl, &err), 0);
    CU_ASSERT_EQUAL(parse(true, true, &cl, &err, (const char *[]){"--help", NULL}), CL_PARSE_HELP);
}

/* --copy-limit: a size for live targets; 0 keeps the process stopped, as info does without it. */
static void test_copy_limit_command_line(void)
{
    struct cl_command_line cl;
    struct cl_error err = {0};
    CU_ASSERT_EQUAL(parse(true, true, &cl, &err,
                          (const char *[]){"summary", "--pid", "5", "--copy-limit", "2G", NULL}),
                    0);
    CU_ASSERT_EQUAL(cl.session.open.copy_limit, 2ull << 30);
    CU_ASSERT_FALSE(cl.session.open.keep_stopped);
    CU_ASSERT_EQUAL(parse(true, true, &cl, &err,
                          (const char *[]){"info", "--pid", "5", "--copy-limit", "0", NULL}),
                    0);
    CU_ASSERT(cl.session.open.keep_stopped);
    /* info reads a few pages: it copies nothing unless given a limit. */
    CU_ASSERT_EQUAL(parse(true, true, &cl, &err, (const char *[]){"info", "--pid", "5", NULL}), 0);
    CU_ASSERT(cl.session.open.keep_stopped);
    CU_ASSERT_EQUAL(parse(true, true, &cl, &err,
                          (const char *[]){"info", "--pid", "5", "--copy-limit", "4G", NULL}),
                    0);
    CU_ASSERT_FALSE(cl.session.open.keep_stopped);
    CU_ASSERT_EQUAL(parse(true, true, &cl, &err, (const char *[]){"objects", "--pid", "5", NULL}),
                    0);
    CU_ASSERT_FALSE(cl.session.open.keep_stopped);
    CU_ASSERT_EQUAL(parse(true, true, &cl, &err,
                          (const char *[]){"info", "--core", "c", "--copy-limit", "1M", NULL}),
                    CL_E_USAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "live process"));
    CU_ASSERT_EQUAL(parse(true, true, &cl, &err,
                          (const char *[]){"info", "--pid", "5", "--copy-limit", "-1", NULL}),
                    CL_E_USAGE);
    CU_ASSERT_EQUAL(parse(false, false, &cl, &err, (const char *[]){"--copy-limit", "1M", NULL}),
                    CL_E_USAGE);   /* in gdb the debugger holds the process */
}

/* dump: a live process or a core in, -o out; --dump FILE: a target like --core, holding its files. */
static void test_dump_command_line(void)
{
    struct cl_command_line cl;
    struct cl_error err = {0};
    CU_ASSERT_EQUAL(
        parse(true, true, &cl, &err, (const char *[]){"dump", "--pid", "5", "-o", "f", NULL}), 0);
    CU_ASSERT_STRING_EQUAL(cl.output, "f");
    CU_ASSERT_EQUAL(
        parse(true, true, &cl, &err,
              (const char *[]){"dump", "--core", "c", "--sysroot", "/r", "-o", "f", NULL}),
        0);
    CU_ASSERT_EQUAL(parse(true, true, &cl, &err, (const char *[]){"dump", "--pid", "5", NULL}),
                    CL_E_USAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "-o FILE"));
    CU_ASSERT_EQUAL(
        parse(true, true, &cl, &err, (const char *[]){"dump", "--dump", "d", "-o", "f", NULL}),
        CL_E_USAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not another dump"));
    CU_ASSERT_EQUAL(parse(true, true, &cl, &err, (const char *[]){"summary", "--dump", "d", NULL}),
                    0);
    CU_ASSERT_STRING_EQUAL(cl.session.dump, "d");
    CU_ASSERT_EQUAL(parse(true, true, &cl, &err,
                          (const char *[]){"summary", "--dump", "d", "--lib-path", "/l", NULL}),
                    CL_E_USAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "a dump holds what it needs"));
    CU_ASSERT_EQUAL(parse(true, true, &cl, &err,
                          (const char *[]){"summary", "--dump", "d", "--pid", "5", NULL}),
                    CL_E_USAGE);
    CU_ASSERT_EQUAL(parse(false, false, &cl, &err, (const char *[]){"--dump", "d", NULL}),
                    CL_E_USAGE);
}

static bool has(const char **names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return true;
    return false;
}

/* What the gdb plugin completes: the options a command accepts, and fixed sets of values. */
static void test_completion_lists(void)
{
    const char *names[32];
    size_t n = cl_command_options("tensors", CL_FRONT_GDB, names, 32);
    CU_ASSERT(has(names, n, "device") && has(names, n, "min-bytes") && has(names, n, "json"));
    CU_ASSERT(!has(names, n, "top") && !has(names, n, "state") && !has(names, n, "pid"));
    CU_ASSERT(!has(names, n, "help"));
    n = cl_command_options("tensors", CL_FRONT_CLI, names, 32);
    CU_ASSERT(has(names, n, "pid") && has(names, n, "copy-limit"));
    CU_ASSERT_EQUAL(cl_command_options("blocks", CL_FRONT_GDB, names, 2), 2); /* cut at cap */
    const char *const *v = cl_option_values("state");
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    CU_ASSERT_STRING_EQUAL(v[0], "all");
    CU_ASSERT_STRING_EQUAL(v[2], "free");
    CU_ASSERT_PTR_NULL(v[3]);
    CU_ASSERT_PTR_NOT_NULL(cl_option_values("device"));
    CU_ASSERT_PTR_NULL(cl_option_values("top"));
}

void register_engine_values_tests(void)
{
    static const struct tu_test tests[] = {
        {"counts", test_count},
        {"sizes with units", test_size},
        {"addresses", test_addr},
        {"devices", test_device},
        {"seconds", test_seconds},
        {"command lines", test_command_line},
        {"dump command lines", test_dump_command_line},
        {"--copy-limit command lines", test_copy_limit_command_line},
        {"completion lists", test_completion_lists},
        {NULL, NULL},
    };
    tu_add_suite("engine/values", tests);
}

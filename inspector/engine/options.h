/* The options both front ends take: one row each (name, value, whether it repeats, its help), in
 * the order --help lists them. Which commands an option applies to is the commands' business
 * (engine/table.h); the values are parsed by engine/cmdline.c through engine/values.h. */
#ifndef CULEAK_ENGINE_OPTIONS_H
#define CULEAK_ENGINE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* clang-format off */
enum cl_option_id {
    /* the target: the CLI's only (in gdb, the target is gdb's) */
    CL_O_PID, CL_O_CHILDREN, CL_O_COPY_LIMIT, CL_O_MEMORY_LIMIT, CL_O_CORE, CL_O_DUMP, CL_O_EXE,
    CL_O_SYSROOT, CL_O_LIB_PATH,
    /* what to report */
    CL_O_TOP, CL_O_ADDR, CL_O_TYPE, CL_O_MAX_PATHS, CL_O_REFERENTS, CL_O_DEVICE, CL_O_STATE, CL_O_ALLOCATOR_LAYOUT,
    CL_O_MIN_BYTES, CL_O_MAX_OBJECTS, CL_O_OUTPUT, CL_O_NOTE, CL_O_REDACT, CL_O_ALLOCATOR_ONLY, CL_O_TORCH_SNAPSHOT,
    CL_O_INTERVAL, CL_O_COUNT, CL_O_DUMP_ON_GROWTH, CL_O_DEPTH, CL_O_DOMINANT, CL_O_SPREAD,
    /* how to write it */
    CL_O_JSON, CL_O_FULL, CL_O_HTML, CL_O_QUIET,
    /* culeak-break-step's, in gdb */
    CL_O_SYMBOL, CL_O_EVERY, CL_O_STOP_ON_GROWTH, CL_O_WARMUP, CL_O_OFF,
    CL_O_HELP, CL_O_VERSION,
    CL_O_NUMBER_OF_OPTIONS
};
/* clang-format on */

#define CL_OPTION_BIT(id) (UINT64_C(1) << (id))

/* The headings --help groups the options under, in its order. */
enum cl_option_group { CL_OPT_TARGET, CL_OPT_SELECTION, CL_OPT_OUTPUT, CL_OPT_STEPS, CL_OPT_META };

struct cl_option_spec {
    const char *name;           /* without the dashes */
    char short_name;            /* -o; 0: none */
    const char *value; /* what it takes, as --help writes it ("N", "FILE"); NULL: a flag */
    bool repeatable; /* may be given more than once (--pid, --addr, --lib-path) */
    enum cl_option_group group;
    const char *help; /* --help's text; "\n" starts an indented line */
};

/* The option id's row. */
const struct cl_option_spec *cl_option(enum cl_option_id id);

/* The options that apply to every command that reads a target, whatever it reports. */
#define CL_OPTIONS_TARGET \
    (CL_OPTION_BIT(CL_O_PID) | CL_OPTION_BIT(CL_O_COPY_LIMIT) | CL_OPTION_BIT(CL_O_MEMORY_LIMIT) | \
     CL_OPTION_BIT(CL_O_CORE) | CL_OPTION_BIT(CL_O_DUMP) | CL_OPTION_BIT(CL_O_EXE) | \
     CL_OPTION_BIT(CL_O_SYSROOT) | CL_OPTION_BIT(CL_O_LIB_PATH))
/* ... and to every command at all. */
#define CL_OPTIONS_ALWAYS (CL_OPTION_BIT(CL_O_HELP) | CL_OPTION_BIT(CL_O_VERSION))

/* The option's lines of --help (its group's heading is the caller's), appended to out at *len
 * (cap bytes in all; util/text.h's cl_appendf). */
void cl_option_usage(enum cl_option_id id, char *out, size_t cap, size_t *len);

/* The values an option takes from a fixed set (device: cpu, cuda, all; state: all, allocated,
 * free), NULL-terminated; NULL for an option whose values are open (numbers, names, files). */
const char *const *cl_option_values(const char *option);

#endif

#include "engine/options.h"

#include <string.h>

#include "util/text.h"

/* clang-format off */
static const struct cl_option_spec options[CL_O_NUMBER_OF_OPTIONS] = {
    [CL_O_PID] = {"pid", 0, "PID", true, CL_OPT_TARGET,
        "a live process: stopped while what can change in it is copied,\n"
        "then resumed while culeak walks the copy (repeatable: several\n"
        "processes, read in parallel, each report under its rank)"},
    [CL_O_CHILDREN] = {"children", 0, "PID", false, CL_OPT_TARGET,
        "every child process of PID: the workers of a torchrun agent"},
    [CL_O_COPY_LIMIT] = {"copy-limit", 0, "N", false, CL_OPT_TARGET,
        "copy at most N bytes (K, M, G: powers of 1024; default half the\n"
        "memory available, shared by the processes read at once); a\n"
        "process with more stays stopped until culeak is done, copied as\n"
        "read up to N, and so does any with --copy-limit 0, copied not at\n"
        "all (info, which reads a few pages, copies nothing unless it is\n"
        "given); dump --core -: the most of the core's data its spool keeps\n"
        "(default half the free disk beside -o FILE)"},
    [CL_O_MEMORY_LIMIT] = {"memory-limit", 0, "N", false, CL_OPT_TARGET,
        "several targets (--pid or --core repeated, --children): the memory\n"
        "their reads may take at once (default half the memory available);\n"
        "each is given a share by its size, and those that do not fit beside\n"
        "the ones being read wait for them"},
    [CL_O_CORE] = {"core", 0, "FILE", true, CL_OPT_TARGET,
        "a core file (kernel core or gdb's gcore; repeatable, as --pid)"},
    [CL_O_DUMP] = {"dump", 0, "FILE", false, CL_OPT_TARGET, "a file culeak dump wrote"},
    [CL_O_EXE] = {"exe", 0, "PATH", false, CL_OPT_TARGET,
        "the executable the core was made from, if it has moved"},
    [CL_O_SYSROOT] = {"sysroot", 0, "DIR", false, CL_OPT_TARGET,
        "look up the core's files under DIR (a core from another machine)"},
    [CL_O_LIB_PATH] = {"lib-path", 0, "DIR", true, CL_OPT_TARGET,
        "look up the core's libraries by name in DIR (repeatable)"},

    [CL_O_TOP] = {"top", 0, "N", false, CL_OPT_SELECTION,
        "objects: only the N most common types; summary: the N biggest holders"},
    [CL_O_ADDR] = {"addr", 0, "ADDR", true, CL_OPT_SELECTION,
        "refs: this object (hex; repeatable)"},
    [CL_O_TYPE] = {"type", 0, "NAME", false, CL_OPT_SELECTION,
        "refs: every object of this type: qualified (torch.nn.parameter.Parameter)\n"
        "or bare (Parameter, which says so when it names several types)"},
    [CL_O_MAX_PATHS] = {"max-paths", 0, "N", false, CL_OPT_SELECTION,
        "refs: up to N paths per object, each through another referrer (max 64)"},
    [CL_O_REFERENTS] = {"referents", 0, NULL, false, CL_OPT_SELECTION,
        "refs: also every reference each object holds, as culeak read it"},
    [CL_O_DEVICE] = {"device", 0, "D", false, CL_OPT_SELECTION,
        "tensors: cpu, cuda, cuda:N or all (default all); blocks: cuda:N or N"},
    [CL_O_STATE] = {"state", 0, "S", false, CL_OPT_SELECTION,
        "blocks: allocated, free or all (default all)"},
    [CL_O_ALLOCATOR_LAYOUT] = {"allocator-layout", 0, "NAME", false, CL_OPT_SELECTION,
        "blocks, summary, tensors, refs: read the CUDA allocator\n"
        "with this layout table (e.g. 2.14) instead of the torch version's;\n"
        "it must still fit"},
    [CL_O_MIN_BYTES] = {"min-bytes", 0, "N", false, CL_OPT_SELECTION,
        "tensors: only storages of at least N bytes (K, M, G: powers of 1024)"},
    [CL_O_MAX_OBJECTS] = {"max-objects", 0, "N", false, CL_OPT_SELECTION,
        "stop walking after N objects (default: as many as half the memory\n"
        "available holds, at 128 bytes an object)"},
    [CL_O_OUTPUT] = {"output", 'o', "FILE", false, CL_OPT_OUTPUT,
        "write the report (snapshot: the snapshot; dump: the dump) to FILE\n"
        "instead of standard output: made whole, mode 0600, then renamed;\n"
        "watch: the folder --dump-on-growth writes in"},
    [CL_O_NOTE] = {"note", 0, "TEXT", false, CL_OPT_SELECTION,
        "dump: a line saying why it was taken (an out-of-memory error: its\n"
        "device and size), which info and summary of the dump print"},
    [CL_O_REDACT] = {"redact", 0, NULL, false, CL_OPT_SELECTION,
        "dump: leave out the characters of strs and the bytes of bytes\n"
        "objects (their sizes kept), for a dump that leaves the machine;\n"
        "interned strs, the names holders are written with, stay"},
    [CL_O_ALLOCATOR_ONLY] = {"allocator-only", 0, NULL, false, CL_OPT_SELECTION,
        "dump: the runtimes and the CUDA allocator, no Python objects: a\n"
        "small file on which blocks lists the segments without holders"},
    [CL_O_TORCH_SNAPSHOT] = {"torch-snapshot", 0, "FILE", false, CL_OPT_SELECTION,
        "blocks: also write the allocator as torch.cuda.memory._snapshot()\n"
        "returns it, pickled, for torch's memory viewers (holders as frames,\n"
        "or beside the allocation stacks _record_memory_history recorded)"},
    [CL_O_INTERVAL] = {"interval", 0, "S", false, CL_OPT_SELECTION,
        "watch: seconds between inspections (default 10)"},
    [CL_O_COUNT] = {"count", 0, "N", false, CL_OPT_SELECTION,
        "watch: inspections before stopping (default: until the process ends)"},
    [CL_O_DUMP_ON_GROWTH] = {"dump-on-growth", 0, "N", false, CL_OPT_SELECTION,
        "watch: the first time a device's tensor bytes have grown by N (K, M,\n"
        "G) since the watch began, write a dump and the diff into -o DIR"},
    [CL_O_DEPTH] = {"depth", 0, "N", false, CL_OPT_SELECTION,
        "summary: levels of each holder's breakdown under where its drill-down\n"
        "stops (default 1; 0: none)"},
    [CL_O_DOMINANT] = {"dominant", 0, "PCT", false, CL_OPT_SELECTION,
        "summary: the drill-down goes into a child that retains PCT percent of\n"
        "its parent's bytes (default 80)"},
    [CL_O_SPREAD] = {"spread", 0, "N", false, CL_OPT_SELECTION,
        "summary: bytes spread over N objects or more make an accumulation\n"
        "point, where the drill-down stops (default 10)"},

    [CL_O_JSON] = {"json", 0, NULL, false, CL_OPT_OUTPUT, "one JSON object instead of text"},
    [CL_O_FULL] = {"full", 0, NULL, false, CL_OPT_OUTPUT,
        "tensors, summary: text lines whole (by default cut to 160 columns)"},
    [CL_O_HTML] = {"html", 0, "FILE", false, CL_OPT_OUTPUT,
        "summary, blocks: also write a self-contained HTML page: the holders\n"
        "and the CUDA segments, each block coloured by what holds it"},
    [CL_O_QUIET] = {"quiet", 0, NULL, false, CL_OPT_OUTPUT,
        "no progress lines (on a terminal, a walk past a second shows them)"},

    [CL_O_SYMBOL] = {"symbol", 0, "SYM", false, CL_OPT_STEPS,
        "break-step: the function called once a step (default: the autograd\n"
        "engine's execute in libtorch_cpu, once per backward())"},
    [CL_O_EVERY] = {"every", 0, "N", false, CL_OPT_STEPS,
        "break-step: report every Nth step only"},
    [CL_O_STOP_ON_GROWTH] = {"stop-on-growth", 0, "N", false, CL_OPT_STEPS,
        "break-step: stay stopped at a step that grew by N bytes or more"},
    [CL_O_WARMUP] = {"warmup", 0, "N", false, CL_OPT_STEPS,
        "break-step: steps before growth counts (default: until every\n"
        "torch.optim.Optimizer has state, at most 10; 0: from the first step)"},
    [CL_O_OFF] = {"off", 0, NULL, false, CL_OPT_STEPS, "break-step: stop tracking steps"},

    [CL_O_HELP] = {"help", 'h', NULL, true, CL_OPT_META, "this text"},
    [CL_O_VERSION] = {"version", 0, NULL, true, CL_OPT_META, "culeak's version"},
};
/* clang-format on */

const struct cl_option_spec *cl_option(enum cl_option_id id)
{
    return &options[id];
}

/* --help's columns: the option and its value, then the help from this column on. */
#define HELP_COLUMN 19

void cl_option_usage(enum cl_option_id id, char *out, size_t cap, size_t *len)
{
    const struct cl_option_spec *o = &options[id];
    char left[64];
    size_t n = 0;
    left[0] = '\0';
    if (o->short_name)
        cl_appendf(left, sizeof left, &n, "-%c, ", o->short_name);
    cl_appendf(left, sizeof left, &n, "--%s%s%s", o->name, o->value ? " " : "",
               o->value ? o->value : "");
    /* at least two spaces between the option and its help */
    int pad = n + 4 < HELP_COLUMN ? HELP_COLUMN - 2 - (int)n : 2;
    cl_appendf(out, cap, len, "  %s%*s", left, pad, "");
    for (const char *line = o->help; line;) {
        const char *eol = strchr(line, '\n');
        int width = eol ? (int)(eol - line) : (int)strlen(line);
        cl_appendf(out, cap, len, "%.*s\n", width, line);
        line = eol ? eol + 1 : NULL;
        if (line)
            cl_appendf(out, cap, len, "%*s", HELP_COLUMN, "");
    }
}

/* --state's values, in enum cl_block_state_filter's order. */
static const char *const states[] = {"all", "allocated", "free", NULL};
static const char *const devices[] = {"cpu", "cuda", "all", NULL};

const char *const *cl_option_values(const char *option)
{
    return strcmp(option, "device") == 0 ? devices : strcmp(option, "state") == 0 ? states : NULL;
}

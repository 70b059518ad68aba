/* The command table: one row per command of the CLI, the gdb plugin and the Python package.
 * Everything that differs between commands is a field of its row (engine/commands.c): its help,
 * the options that apply, the models it needs or can use, how it runs (on a target, on files,
 * or opening targets itself), whether a dump keeps its reads, whether it reads several targets,
 * its JSON schema, its Python method and its gdb form. Usage text, option checks, culeak dump's
 * list, multi-target runs, gdb's commands and help, the man page and the checks that every
 * command has a schema and a Python method all read this table; adding a command is adding a
 * row (HACKING.md). */
#ifndef CULEAK_ENGINE_TABLE_H
#define CULEAK_ENGINE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cpython/heap.h"
#include "cudacache/walk.h"
#include "holders/holders.h"
#include "report/warnings.h"
#include "runtime/python.h"
#include "runtime/rank.h"
#include "runtime/torch.h"
#include "symbols/symbols.h"
#include "target/target.h"
#include "torch/tensors.h"

struct cl_command_line;

/* The models a command can be given, built by the session on first use. */
enum cl_model {
    CL_MODEL_HEAP = 1,        /* the Python object graph */
    CL_MODEL_HOLDERS = 2,     /* the tensors and who holds each (with the heap) */
    CL_MODEL_ALLOCATOR = 4,   /* the CUDA caching allocator's segments and blocks */
};

/* What a command's run function is given instead of the session: the target and its runtimes,
 * every model its row needs, and those it uses where they could be read (else NULL, and a note
 * says what the report lacks). */
struct cl_models {
    struct cl_target *target;
    struct cl_symbols *symbols;
    const struct cl_python_info *python;
    const struct cl_torch_info *torch;
    const struct cl_rank *rank;
    struct py_heap *heap;
    struct torch_tensors *tensors;   /* with holders */
    struct cl_holders *holders;
    struct cc_allocator *allocator;
    const struct cl_driver_memory *driver;   /* what NVML said of a live process */
    const char *unread;              /* why the model the row uses could not be read, or NULL */
    char **notes;                    /* this run's own notes, which its report ends with too */
    char **note_lists[CL_REPORT_NOTE_LISTS];   /* every model's notes, for the report */
};

/* The notes a report ends with, as they stand now. */
struct cl_report_notes cl_models_notes(const struct cl_models *m);

enum cl_command_flags {
    CL_CMD_TORCH = 1 << 0,         /* a process without PyTorch is refused */
    CL_CMD_DUMPED = 1 << 1,        /* culeak dump keeps what it reads (engine/dump.c) */
    CL_CMD_MANY = 1 << 2,          /* runs on several targets at once (engine/multi.c) */
    CL_CMD_RANKS = 1 << 3,         /* ... and then compares the ranks */
    CL_CMD_LIVE = 1 << 4,          /* a live process only (--pid) */
    CL_CMD_READS_LITTLE = 1 << 5,  /* a few pages: the process stays stopped, not copied */
    CL_CMD_RECORDS = 1 << 9,       /* reads a process or a core, never a dump, into -o FILE */
    CL_CMD_OWN_OUTPUT = 1 << 10,   /* its run writes -o FILE itself (snapshot: the snapshot) */
    CL_CMD_DRIVER = 1 << 11,       /* asks NVML what a live process uses of its GPUs */
    CL_CMD_GDB = 1 << 6,           /* a culeak-NAME command in gdb, run by the engine */
    CL_CMD_GDB_OWN = 1 << 7,       /* a culeak-NAME command in gdb, in the plugin's own form */
    CL_CMD_GDB_ONLY = 1 << 8,      /* not a command of the CLI or the Python package */
};

typedef int (*cl_command_run_fn)(const struct cl_command_line *cli, const struct cl_models *m,
                                 FILE *out, struct cl_error *err);

struct cl_command_spec {
    const char *name;
    const char *operands;       /* what follows the name on --help's line ("A [B]"), or NULL */
    const char *help;           /* --help's text; "\n" starts an indented line */
    uint64_t options;           /* what applies beyond the target's (CL_OPTION_BIT of each) */
    uint64_t one_of;            /* options of which exactly one must be given (refs), or 0 */
    unsigned needs, uses;       /* enum cl_model: refused without / reported without */
    const char *without;        /* what the report lacks when `uses` cannot be read */
    unsigned flags;             /* enum cl_command_flags */
    size_t min_files, max_files;   /* the snapshot files it takes (diff A [B], merge A B...) */
    const char *fewer_files;    /* the usage error when fewer than min_files are given */
    const char *schema;         /* its --json document: docs/schemas/NAME.json; NULL: text only */
    const char *python;         /* its Python form (culeak.Target.NAME, culeak.NAME), or NULL */
    const char *no_python;      /* else why the Python package has none */
    const char *gdb_doc;        /* CL_CMD_GDB_OWN: the plugin's form's help, usage included */
    cl_command_run_fn run;      /* on an open target; NULL where the command runs otherwise */
    /* on the snapshot files alone, once given run_files_at of them (diff A B, merge A B...) */
    int (*run_files)(const struct cl_command_line *cli, FILE *out, struct cl_error *err);
    size_t run_files_at;
    /* opening its targets itself (watch, dump): out for the report, log for what it did */
    int (*drive)(const struct cl_command_line *cli, FILE *out, FILE *log, struct cl_error *err);
};

/* Every row, in --help's order; *n of them. */
const struct cl_command_spec *cl_commands(size_t *n);
/* The row of the command called name, or NULL. */
const struct cl_command_spec *cl_command_find(const char *name);
/* Every option that applies to the row: its own, the target's, --json where it has a schema,
 * --children where it reads several targets, --max-objects where it walks the heap, -o where it
 * writes a report. */
uint64_t cl_command_option_set(const struct cl_command_spec *c);

#endif

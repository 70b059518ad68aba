/* torch.compile's cache, which Dynamo hangs off the code objects it compiled: in the co_extra
 * slot it asked CPython for (libtorch_python's `extra_index`), an ExtraState that owns the
 * function's cache entries (each its guards, the code Dynamo made and the backend: py::objects,
 * so references) and its frame state (a dict) (torch/csrc/dynamo/extra_state.h, cache_entry.h).
 * Nothing in Python refers to them, so without this reader they are "held from C"; with it they
 * are the code object's, and so the function's: `f.__code__.<torch.compile cache>.guard_manager`.
 *
 * The ExtraState's shape is a table row per torch line, read off the wheels by
 * tests/layouts/probe_dynamo.py: 2.1 chains Python objects, 2.4 to 2.12 keep a std::list of
 * entries, 2.13 on a std::unordered_map of such lists (one per isolated recompile region). Each
 * is checked before anything is taken from it: where the row has them, the ExtraState points back
 * at its code and each entry at its ExtraState, and every member is an object of the heap. */
#ifndef CULEAK_TORCH_DYNAMO_CACHE_H
#define CULEAK_TORCH_DYNAMO_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "cpython/emit.h"
#include "runtime/torch.h"
#include "symbols/symbols.h"
#include "target/target.h"

struct torch_dynamo_cache {
    struct py_code_extra_reader reader;   /* for py_walk_options.code_extra */
    struct cl_target *t;
    const struct cl_symbols *syms;
    const struct cl_torch_info *torch;
    bool looked_up;      /* extra_index and the row, once the first co_extra is met */
    bool torch_python;   /* libtorch_python is loaded */
    int64_t index;       /* Dynamo's co_extra slot; -1: none known */
    int row;             /* the table's, -1: none for this release */
    uint64_t read, unread;   /* code objects whose cache was read, and not */
};

/* Sets c up to be handed to the walk (&c->reader). Nothing is read before a code object with
 * co_extra set is met, so a job that never compiled costs nothing. */
void torch_dynamo_cache_init(struct torch_dynamo_cache *c, struct cl_target *t,
                             const struct cl_symbols *syms, const struct cl_torch_info *torch);

#endif

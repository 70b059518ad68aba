/* One inspection: the target, its symbols and the runtimes found in it. Both front ends (CLI and
 * gdb plugin) open a session and hand it to the same report code. */
#ifndef CULEAK_ENGINE_SESSION_H
#define CULEAK_ENGINE_SESSION_H

#include "cpython/heap.h"
#include "cudacache/walk.h"
#include "holders/holders.h"
#include "report/warnings.h"
#include "runtime/driver_memory.h"
#include "runtime/python.h"
#include "runtime/rank.h"
#include "runtime/torch.h"
#include "symbols/symbols.h"
#include "torch/dynamo_cache.h"
#include "torch/tensors.h"
#include "torch/type_readers.h"
#include "target/target.h"

struct cl_session {
    struct cl_target *target;
    struct cl_symbols *symbols;
    struct cl_python_info python;
    struct cl_torch_info torch;
    struct cl_rank rank;
    struct py_runtime py_runtime;
    struct py_heap heap;
    bool heap_built;
    struct torch_dynamo_cache dynamo;   /* what the heap's walk reads of torch.compile's cache */
    struct torch_type_readers type_readers;   /* and of torch's C types */
    struct torch_tensors tensors;
    bool tensors_built;
    struct cc_allocator allocator;
    bool allocator_built;
    struct cl_holders holders;
    bool holders_built;
    struct cl_driver_memory driver;     /* CL_DRIVER_NOT_ASKED unless driver_memory */
};

struct cl_session_options {
    int pid;                    /* a live process, or */
    const char *core;           /* a core file, or */
    const char *dump;           /* a file `culeak dump` wrote */
    struct cl_open_options open;
    bool driver_memory;         /* a live process: ask NVML what it uses of its GPUs */
};

/* Opens the target and detects the runtimes; fails with CL_E_NOT_PYTHON for a target without
 * CPython. */
int cl_session_open(const struct cl_session_options *opt, struct cl_session **out,
                    struct cl_error *err);
/* The same, over a target a front end made itself (the gdb plugin's read_memory source); the
 * session owns it from here on, also on failure. */
int cl_session_open_target(struct cl_target *t, struct cl_session **out, struct cl_error *err);
void cl_session_close(struct cl_session *s);

/* The Python object graph, built on first use. */
int cl_session_heap(struct cl_session *s, const struct py_walk_options *opt, struct py_heap **out,
                    struct cl_error *err);

/* The CUDA caching allocator's segments and blocks, walked on first use; force names a layout
 * table to use instead of the version's (NULL: none). */
int cl_session_allocator(struct cl_session *s, const char *force, struct cc_allocator **out,
                         struct cl_error *err);

/* The tensors of the heap, built on first use (out may be NULL). */
int cl_session_tensors(struct cl_session *s, const struct py_walk_options *opt,
                       struct torch_tensors **out, struct cl_error *err);

/* Who holds each storage and what each holder retains, built on first use over the tensors and,
 * in a process with the CUDA allocator, its walk (with the force layout, see
 * cl_session_allocator; a failed walk only makes CUDA bytes storage sizes); drill: how holders
 * are drilled down (NULL: the defaults). */
int cl_session_holders(struct cl_session *s, const struct py_walk_options *opt, const char *force,
                       const struct cl_drill_options *drill, struct cl_holders **out,
                       struct cl_error *err);

#endif

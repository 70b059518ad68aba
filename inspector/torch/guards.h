/* The guards torch.compile builds in C++ (torch 2.6+: torch/csrc/dynamo/guards.cpp), whose Python
 * objects only that C++ holds. A cache entry's `guard_manager.root` is pybind11's instance of a
 * RootGuardManager: a tree of GuardManagers, each keeping its leaf guards (std::shared_ptrs: a
 * relational guard is shared by several managers) and its accessors (std::unique_ptrs, each
 * owning the child manager and a reference to its key). A leaf guard keeps a reference to the
 * list of its code parts and, from 2.11, to the StackSummary of the user code that made it;
 * some kinds keep more (a lambda guard its function, EQUALS_MATCH its value, GLOBAL_STATE its
 * GlobalStateGuard). A manager keeps a weak reference to the type of the value it guards.
 *
 * They become the RootGuardManager's references, named by the guard's C++ class
 * (`….guard_manager.root.<LAMBDA_GUARD guard>.verbose_code_parts`); a leaf shared by several
 * trees is the first one's. The shapes are a table row per
 * torch line, read off the wheels by tests/layouts/probe_guards.py, which also tells a counted
 * reference (a py::object) from a member that only keeps an address (ID_MATCH's id, an
 * accessor's borrowed key): only the former are rows. Every node is checked before anything is
 * taken: its RTTI is one of Dynamo's classes, its vectors are vectors, every member an object. */
#ifndef CULEAK_TORCH_GUARDS_H
#define CULEAK_TORCH_GUARDS_H

#include <stddef.h>
#include <stdint.h>

#include "cpython/emit.h"
#include "runtime/torch.h"
#include "util/addrmap.h"

#define TORCH_GUARDS_ROOT_TYPE "torch._C._dynamo.guards.RootGuardManager"

struct torch_guards {
    int row;   /* the table's, -1: none for this release */
    /* A leaf guard's references are counted once, however many trees share it (a cache entry's
     * `diff_guard_root` is a copy of `root` sharing its leaves): they are the references of the
     * first tree the walk read it in, for the whole session, so that every later read of any
     * tree gives the same edges. Leaf guard -> its tree's number in trees. */
    struct cl_addrmap leaf_tree;
    struct cl_addrmap trees;   /* RootGuardManager object -> its number, in the order met */
    uint32_t ntrees;
};

/* g zeroed (or set up before: it is emptied). */
void torch_guards_init(struct torch_guards *g, const struct cl_torch_info *torch);
void torch_guards_free(struct torch_guards *g);
/* The py_type_reader of RootGuardManager objects, ctx a struct torch_guards. */
void torch_guards_emit(void *ctx, const struct py_emitter *e, uint64_t obj);

#endif

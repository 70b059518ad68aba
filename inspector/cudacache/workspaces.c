#include "cudacache/workspaces.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudacache/layout.h"
#include "util/notes.h"
#include "util/vec.h"

#define MAX_WORKSPACES 1024   /* one per handle and stream: a handful */

/* Each static points to a std::map from std::tuple<void*, void*> to the workspace (from 2.10 a
 * WorkspaceMapWithMutex, ATen/cuda/CUDAContextLight.h: the map, then a mutex; before, the map
 * alone, made with new). A node's value (CC_RB_VALUE): the key, which libstdc++ lays out last
 * element first (the stream, then the handle); the DataPtr {data, its deleter and context,
 * c10::Device {int8 type, int8 index}}; from 2.13 the size after it (the value a
 * std::pair<at::DataPtr, size_t>). Read off 2.1, 2.4, 2.6 to 2.10 (CUDA 12) and 2.11 to 2.14
 * (CUDA 13) on the simulated device, with its cuBLAS; 2.15's header declares 2.13's map (2.15
 * made no workspace there). A newer release is read as the newest, its entries checked all the
 * same. */
static const struct shape {
    unsigned first_minor;   /* to the next row's */
    bool sized;
} shapes[] = {
    {1, false},
    {13, true},
};
#define WS_STREAM (CC_RB_VALUE + 0)
#define WS_HANDLE (CC_RB_VALUE + 8)
#define WS_DATA (CC_RB_VALUE + 16)
#define WS_DEVICE (CC_RB_VALUE + 40)
#define WS_SIZE (CC_RB_VALUE + 48)
#define DEVICE_TYPE_CUDA 1

/* the statics' names, by the torch 2.x releases that have them: up to 2.7 the cuBLAS one is in
 * an anonymous namespace, and there is no cuBLASLt one before 2.9 (a symbol is asked only of
 * its releases, so that a dump of another does not miss it) */
static const struct {
    const char *symbol, *what;
    unsigned first_minor, last_minor;
} maps[] = {
    {"_ZZN2at4cuda12_GLOBAL__N_133cublas_handle_stream_to_workspaceEvE8instance", "cuBLAS", 1, 7},
    {"_ZZN2at4cuda33cublas_handle_stream_to_workspaceEvE8instance", "cuBLAS", 8, UINT_MAX},
    {"_ZZN2at4cuda35cublaslt_handle_stream_to_workspaceEvE8instance", "cuBLASLt", 9, UINT_MAX},
};

/* The allocated block of a that starts at ptr on device index, or NULL. */
static struct cc_block *block_at(struct cc_allocator *a, int index, uint64_t ptr)
{
    for (uint32_t d = 0; d < a->ndevices; d++)
        for (uint32_t i = 0; a->devices[d].index == index && i < a->devices[d].nblocks; i++) {
            struct cc_block *b = &a->devices[d].blocks[i];
            if (b->ptr == ptr)
                return b->state == CC_ACTIVE_ALLOCATED ? b : NULL;
        }
    return NULL;
}

/* Names the block of the workspace in the map node at node; false when the node is none. */
static bool name_one(struct cl_target *t, const struct shape *sh, const char *what, uint64_t node,
                     struct cc_allocator *a)
{
    uint64_t stream, handle, data, size = 0;
    uint8_t device[2];
    if (cl_read_u64(t, node + WS_STREAM, &stream) || cl_read_u64(t, node + WS_HANDLE, &handle) ||
        cl_read_u64(t, node + WS_DATA, &data) ||
        (sh->sized && cl_read_u64(t, node + WS_SIZE, &size)) ||
        cl_read(t, node + WS_DEVICE, device, sizeof device) || device[0] != DEVICE_TYPE_CUDA)
        return false;
    struct cc_block *b = block_at(a, (int8_t)device[1], data);
    if (!b || size > b->size)
        return false;
    char name[160];
    snprintf(name, sizeof name, "torch's %s workspace (handle 0x%llx, stream 0x%llx)", what,
             (unsigned long long)handle, (unsigned long long)stream);
    char *copy = CL_VEC_RESERVE(a->owners, a->nowners, a->owners_cap) ? strdup(name) : NULL;
    if (!copy)
        return true;   /* out of memory: the block stays unnamed */
    a->owners[a->nowners++] = copy;
    b->owner = a->nowners;
    return true;
}

/* Every node of the std::map at map, in order, each named; false when the map is none (its
 * count too big, a node unreadable, a cycle: more steps than an in-order walk takes). */
static bool name_all(struct cl_target *t, const struct shape *sh, const char *what, uint64_t map,
                     struct cc_allocator *a)
{
    uint64_t header = map + CC_SET_HEADER, count, node;
    if (cl_read_u64(t, map + CC_SET_COUNT, &count) || count > MAX_WORKSPACES ||
        cl_read_u64(t, header + CC_RB_LEFT, &node))
        return false;
    uint64_t seen = 0, steps = 0, limit = 4 * count + 4;
    while (count && node != header && seen < count && steps++ < limit) {
        if (!node || !name_one(t, sh, what, node, a))
            return false;
        seen++;
        uint64_t next = cl_read_ptr_or_0(t, node + CC_RB_RIGHT);
        if (next) {   /* the leftmost of the right subtree */
            for (uint64_t left; (left = cl_read_ptr_or_0(t, next + CC_RB_LEFT)) && steps < limit;
                 steps++)
                next = left;
        } else {      /* up while coming from the right */
            next = cl_read_ptr_or_0(t, node + CC_RB_PARENT);
            while (next && next != header && cl_read_ptr_or_0(t, next + CC_RB_RIGHT) == node &&
                   steps++ < limit) {
                node = next;
                next = cl_read_ptr_or_0(t, next + CC_RB_PARENT);
            }
        }
        node = next;
    }
    return seen == count;
}

void torch_workspaces_name(struct cl_target *t, const struct cl_symbols *syms,
                           const struct cl_torch_info *torch, struct cc_allocator *a)
{
    const struct cl_module *lib = cl_symbols_module_named(syms, "libtorch_cuda");
    int row =
        cl_torch_row(torch, &shapes[0].first_minor, sizeof shapes / sizeof *shapes, sizeof *shapes);
    if (!lib || row < 0)
        return;
    const struct shape *sh = &shapes[row];
    unsigned minor = 0;
    (void)sscanf(torch->version, "2.%u", &minor); /* cl_torch_row found a 2.x */
    for (size_t i = 0; i < sizeof maps / sizeof *maps; i++) {
        uint64_t at, map;
        if (minor < maps[i].first_minor || minor > maps[i].last_minor ||
            !cl_module_symbol_optional(lib, maps[i].symbol, &at, NULL))
            continue;   /* no .symtab, or no such map in this release */
        if (cl_read_u64(t, at, &map) || !map)
            continue;   /* never made: no product has run */
        uint32_t before = a->nowners;
        if (!name_all(t, sh, maps[i].what, map, a)) {
            for (uint32_t d = 0; d < a->ndevices; d++)   /* all of this map's, or none */
                for (uint32_t k = 0; k < a->devices[d].nblocks; k++)
                    if (a->devices[d].blocks[k].owner > before)
                        a->devices[d].blocks[k].owner = 0;
            while (a->nowners > before)   /* and their names with them */
                free(a->owners[--a->nowners]);
            cl_note_add(&a->warnings,
                        "torch's %s workspaces could not be read (their map does not check "
                        "out against the allocator): their blocks stay unattributed",
                        maps[i].what);
        }
    }
}

/* Allocation stacks: what torch.cuda.memory._record_memory_history() recorded for each CUDA block
 * and segment (Block.context_when_allocated, a torch::CapturedTraceback): its Python frames,
 * innermost first, named as torch's own _snapshot() names them (file, function, line). Its C++
 * frames are counted, not named: torch places the Python frames among them by the inlined
 * frames its symbolizer finds in DWARF, which culeak does not read. */
#ifndef CULEAK_CUDACACHE_STACKS_H
#define CULEAK_CUDACACHE_STACKS_H

#include <stdbool.h>
#include <stdint.h>

#include "cpython/object.h"
#include "cudacache/trace.h"
#include "cudacache/walk.h"
#include "util/addrmap.h"

struct cc_frame {
    char *file, *name;
    int line;
};

struct cc_stack {
    uint32_t first, n;          /* frames [first, first + n) */
};

struct cc_stacks {
    struct cc_frame *sites;     /* each distinct frame once: stacks share most of theirs */
    size_t nsites, sites_cap;
    uint32_t *frames;           /* the stacks' frames, as indices into sites */
    size_t nframes, frames_cap;
    struct cc_stack *stacks;
    size_t nstacks, stacks_cap;
    struct cl_addrmap by_context;   /* GatheredContext* -> index in stacks (or none read) */
    struct cl_addrmap by_code;      /* code object and instruction -> index in sites */
    uint64_t unreadable;        /* contexts that are no CapturedTraceback, or unreadable frames */
    uint64_t cpp_frames;        /* C++ frames of the stacks read, left out */
    bool oom;                   /* some stack was dropped for want of memory */
};

/* Reads the stack of every block and segment of a, and of every entry of its trace tr (NULL:
 * none), that has one; what cannot be read is counted in unreadable (and then has no stack),
 * never guessed. */
void cc_stacks_read(struct py_objects *o, const struct cc_allocator *a, const struct cc_trace *tr,
                    struct cc_stacks *out);
/* The stack recorded at context, or NULL when none was read there (context 0: nothing
 * recorded). */
const struct cc_stack *cc_stack_at(const struct cc_stacks *s, uint64_t context);
void cc_stacks_free(struct cc_stacks *s);

#endif

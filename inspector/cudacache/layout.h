/* Where PyTorch's native CUDA caching allocator keeps its state, per release line. Data only,
 * chosen by torch version and confirmed by the structure itself (the allocator's RTTI name, the
 * allocator's own statistics equal to the walk's totals, block chains that link both ways, every
 * block in a known pool). */
#ifndef CULEAK_CUDACACHE_LAYOUT_H
#define CULEAK_CUDACACHE_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cc_layout {
    const char *name;                   /* what --allocator-layout takes */
    unsigned major, first_minor, last_minor;   /* the torch releases it was read off */
    unsigned cuda_major;                       /* ...and the CUDA major of those builds */
    /* NativeCachingAllocator */
    uint32_t nca_device_allocator;            /* std::vector<DeviceCachingAllocator*> */
    /* DeviceCachingAllocator */
    uint32_t dca_allocated_bytes, dca_reserved_bytes;   /* Stat[AGGREGATE].current */
    uint32_t dca_large_blocks; /* BlockPool; small_blocks is the next member, in every line */
    uint32_t dca_active_blocks; /* ska::flat_hash_set<Block*> */
    uint32_t dca_graph_pools; /* ska::flat_hash_map<MempoolId_t, unique_ptr<PrivatePool>>;
                                     * from 2.10 it follows an embedded cudaDeviceProp, so see
                                     * below */
    bool device_prop; /* whether the DeviceCachingAllocator embeds one */
    /* BlockPool: free mapped blocks (std::set) at +0 */
    uint16_t bp_size;
    uint16_t bp_unmapped; /* std::set of expandable-segment ranges without memory */
    uint16_t bp_is_small, bp_owner; /* bool; PrivatePool*, NULL for the device's own pools */
    /* PrivatePool */
    bool pp_has_id; /* from 2.10 it starts with its MempoolId_t (two u64) */
    uint16_t pp_large_blocks; /* small_blocks follows it */
    /* Block */
    uint16_t blk_stream, blk_size, blk_requested, blk_pool, blk_ptr, blk_allocated, blk_mapped,
        blk_prev, blk_next, blk_expandable;
    /* std::shared_ptr<GatheredContext> context_when_allocated, then the segment's: what
     * torch.cuda.memory._record_memory_history() recorded (a torch::CapturedTraceback) */
    uint16_t blk_context;
    /* The trace ring _record_memory_history() fills (DeviceCachingAllocator, after its
     * cudaDeviceProp where it has one): std::vector<TraceEntry>* alloc_trace, the slot of the
     * oldest entry (alloc_trace_next) and max_entries */
    uint32_t dca_trace_entries, dca_trace_next, dca_trace_max;
    /* TraceEntry: its size and members; its Action (an int) is at +0 in every line. 0: the line
     * has no such member (the time from 2.4, the private pool and compile context from 2.8, the
     * user metadata from 2.10) */
    uint16_t te_stride, te_addr, te_context, te_stream, te_size, te_mempool, te_time,
        te_compile_context, te_user_metadata;
    /* NativeCachingAllocator: its ApproximateClockToUnixTimeConverter's start pairs (0: none),
     * what torch turns the trace's TSC ticks into time_us with */
    uint32_t nca_clock;
    uint8_t last_action; /* the highest TraceEntry::Action: ANNOTATE (9) from 2.14, else OOM */
};

/* context_when_segment_allocated follows context_when_allocated: a shared_ptr is two words. */
#define CC_SEGMENT_CONTEXT_AFTER 16

/* torch::CapturedTraceback (torch/csrc/profiler/combined_traceback.h), what
 * _record_memory_history() records per allocation; one shape from 2.1 to 2.15 (probed in every
 * wheel of the tables, 2.1.2 to 2.15.0, by tests/layouts/probe_allocator.py): the
 * GatheredContext vtable pointer, then std::vector<PyFrame> frames_ (innermost first), then
 * std::vector<void*> cpp_frames_. A PyFrame is {PyCodeObject *code; int lasti}, lasti the
 * instruction's byte offset. */
#define CC_CAPTURED_TRACEBACK "N5torch17CapturedTracebackE"
#define CC_CT_FRAMES 8
#define CC_CT_CPP_FRAMES 32
#define CC_PYFRAME_SIZE 16
#define CC_PYFRAME_LASTI 8

/* The containers the allocator keeps its blocks in, the same in every release (libstdc++ and
 * ska::flat_hash_map). std::set: its header node at +8, node_count at +40; a red-black node is
 * {colour, parent, left, right, value}. std::vector: begin, end (, capacity). A ska table: its
 * entries (each an int8 distance first, -1 when empty) at +0, slot count - 1 at +8, max_lookups
 * (int8) at +17, element count at +24; an entry's value follows its distance, 8-aligned. */
#define CC_SET_HEADER 8
#define CC_SET_COUNT 40
#define CC_RB_PARENT 8
#define CC_RB_LEFT 16
#define CC_RB_RIGHT 24
#define CC_RB_VALUE 32
#define CC_VECTOR_END 8
#define CC_SKA_SLOTS 8
#define CC_SKA_MAX_LOOKUPS 17
#define CC_SKA_COUNT 24
#define CC_SKA_VALUE 8

/* From 2.10 the DeviceCachingAllocator embeds a cudaDeviceProp, which is this much bigger in
 * CUDA 12 (1032 bytes in CUDA 12.8's headers) than in 13 (1008 in 13.0's); that moves every
 * member after it, of those culeak reads graph_pools and the trace ring's, between builds of one
 * release for the two CUDA majors. */
#define CC_CUDA12_DEVICE_PROP_GROWTH 24

/* The table read off torch major.minor, or NULL. */
const struct cc_layout *cc_layout_for(unsigned major, unsigned minor);
/* The table called name, or the one covering release name ("2.14"); NULL if none. */
const struct cc_layout *cc_layout_named(const char *name);
/* The tables' names, comma-separated, in buf (truncated to cap); returns buf. */
const char *cc_layout_names(char *buf, size_t cap);
/* Every table, oldest first, for trying each when the version has none; *n is their number. */
const struct cc_layout *const *cc_layouts(size_t *n);

#endif

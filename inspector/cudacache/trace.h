/* The allocator's history: the ring of TraceEntry that torch.cuda.memory._record_memory_history()
 * fills per device (allocations, frees, segments mapped and freed, snapshots, out-of-memory
 * errors), read as torch's own _snapshot() lists it in device_traces: oldest first, a ring that
 * has wrapped included, each time converted from TSC ticks to unix microseconds as torch
 * converts it (c10::ApproximateClockToUnixTimeConverter). */
#ifndef CULEAK_CUDACACHE_TRACE_H
#define CULEAK_CUDACACHE_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "cudacache/walk.h"
#include "target/clock.h"
#include "util/addrmap.h"

/* TraceEntry::Action, and the name torch's snapshot gives each */
enum cc_trace_action {
    CC_TRACE_ALLOC,
    CC_TRACE_FREE_REQUESTED,
    CC_TRACE_FREE_COMPLETED,
    CC_TRACE_SEGMENT_ALLOC,
    CC_TRACE_SEGMENT_FREE,
    CC_TRACE_SEGMENT_MAP,
    CC_TRACE_SEGMENT_UNMAP,
    CC_TRACE_SNAPSHOT,
    CC_TRACE_OOM,      /* addr: the bytes CUDA said were free */
    CC_TRACE_ANNOTATE, /* from 2.14 */
};
const char *cc_trace_action_name(enum cc_trace_action a);

#define CC_TRACE_NO_TEXT UINT32_MAX   /* a string member the torch line does not have */

struct cc_trace_entry {
    uint64_t addr, size, stream;
    uint64_t context;          /* GatheredContext* recorded, 0 for none (cudacache/stacks.h) */
    uint64_t pool_id[2];       /* MempoolId_t, where the line records it */
    int64_t time_us;           /* where cc_trace.times */
    uint32_t compile_context, user_metadata;   /* into cc_trace.texts, or CC_TRACE_NO_TEXT */
    uint8_t action;            /* enum cc_trace_action */
};

struct cc_device_trace {
    struct cc_trace_entry *v;  /* oldest first */
    uint32_t n;
    bool read;                 /* false: its ring could not be read whole (noted), n is 0 */
};

struct cc_trace {
    struct cc_device_trace *devices;   /* one per device of the allocator, in its order */
    uint32_t ndevices;
    char **texts;                      /* each distinct string of the entries once */
    size_t ntexts, texts_cap;
    struct cl_addrmap by_text;         /* a text's hash -> its index */
    bool times;                        /* entries carry time_us */
    enum cl_clock_source clock;        /* what the times were converted with */
    char *notes;                       /* what was not read, or not as the process would */
};

/* Reads every device's trace of a; what cannot be read is noted, never guessed. false when
 * memory ran out (out holds nothing then). */
bool cc_trace_read(struct cl_target *t, const struct cc_allocator *a, struct cc_trace *out);
void cc_trace_free(struct cc_trace *tr);

#endif

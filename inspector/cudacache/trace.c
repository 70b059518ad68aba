#include "cudacache/trace.h"

#include <stdlib.h>
#include <string.h>

#include "util/notes.h"
#include "util/vec.h"

#define MAX_ENTRIES (1u << 24)   /* per device; torch's default max_entries is unbounded */
#define MAX_TEXT (1u << 20)      /* a compile context or user metadata string */
#define CHUNK 256                /* entries read at a time */
#define STRING_SIZE 32           /* a libstdc++ std::string: data, length, 16 bytes */

static const char *const action_names[] = {
    "alloc",       "free_requested", "free_completed", "segment_alloc", "segment_free",
    "segment_map", "segment_unmap",  "snapshot",       "oom",           "annotate",
};

const char *cc_trace_action_name(enum cc_trace_action a)
{
    return (unsigned)a < sizeof action_names / sizeof *action_names ? action_names[a] : "unknown";
}

/* ---- time: torch's ApproximateClockToUnixTimeConverter::makeConverter(), step for step (its
 * types and roundings included: a double's precision near today's unix time is 256 ns), over the
 * pairs the allocator measured when it was made and a reading measured since */

struct converter {
    long double scale;   /* nanoseconds a tick */
    int64_t t0;
    uint64_t t0_ticks;
};

static int by_value(const void *a, const void *b)
{
    long double x = *(const long double *)a, y = *(const long double *)b;
    return (x > y) - (x < y);
}

static bool make_converter(const struct cl_clock_pair *start, const struct cl_clock_pair *end,
                           struct converter *c)
{
    enum { N = CL_CLOCK_PAIRS, MID = CL_CLOCK_PAIRS / 2 + 1 };
    long double *scale = malloc(N * sizeof *scale);
    if (!scale)
        return false;
    bool ok = true;
    for (size_t i = 0; i < N && ok; i++) {
        ok = end[i].ticks > start[i].ticks && end[i].unix_ns > start[i].unix_ns &&
             start[i].unix_ns > 0 && start[i].ticks >= start[0].ticks;
        scale[i] =
            (double)(end[i].unix_ns - start[i].unix_ns) / (double)(end[i].ticks - start[i].ticks);
    }
    if (ok) {
        qsort(scale, N, sizeof *scale, by_value);
        c->scale = scale[MID];
        c->t0 = start[0].unix_ns;
        c->t0_ticks = start[0].ticks;
        long double at_mid = (double)(start[MID].ticks - c->t0_ticks) * c->scale;
        double correction = (double)(start[MID].unix_ns - c->t0 - (int64_t)at_mid);
        c->t0 = (int64_t)((double)c->t0 + correction);
    }
    free(scale);
    return ok;
}

static int64_t to_us(const struct converter *c, uint64_t ticks)
{
    int64_t ns =
        ticks > c->t0_ticks ? (int64_t)((double)(ticks - c->t0_ticks) * c->scale) + c->t0 : 0;
    return ns / 1000;
}

/* ---- strings */

static uint64_t text_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;   /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h | 1;   /* never 0, the map's empty key */
}

/* The index of text s[0..n) in tr->texts, added if new; UINT32_MAX when memory ran out. */
static uint32_t intern(struct cc_trace *tr, const char *s, size_t n)
{
    uint64_t h = text_hash(s, n);
    uint32_t i = cl_addrmap_get(&tr->by_text, h);
    if (i != UINT32_MAX && strlen(tr->texts[i]) == n && memcmp(tr->texts[i], s, n) == 0)
        return i;
    char *copy = CL_VEC_RESERVE(tr->texts, tr->ntexts, tr->texts_cap) ? malloc(n + 1) : NULL;
    if (!copy)
        return UINT32_MAX;
    memcpy(copy, s, n);
    copy[n] = 0;
    i = (uint32_t)tr->ntexts;
    tr->texts[tr->ntexts++] = copy;
    bool inserted;   /* a hash taken by another text: this one is just not found by it */
    (void)cl_addrmap_put(&tr->by_text, h, i, &inserted);
    return i;
}

/* The std::string at at, interned into *index: false when it is no readable string, or memory
 * ran out (*oom). */
static bool read_text(struct cl_target *t, uint64_t at, struct cc_trace *tr, uint32_t *index,
                      bool *oom)
{
    uint64_t data, len;
    if (cl_read_u64(t, at, &data) || cl_read_u64(t, at + 8, &len) || len > MAX_TEXT ||
        (len > 15 && data == at + 16))   /* longer than the inline buffer, yet in it */
        return false;
    char inline_text[16], *s = len < sizeof inline_text ? inline_text : malloc(len + 1);
    if (!s)
        return !(*oom = true);
    bool ok = !cl_read(t, data, s, len);
    if (ok)
        *index = intern(tr, s, len);
    if (ok && *index == UINT32_MAX)
        ok = !(*oom = true);
    if (s != inline_text)
        free(s);
    return ok;
}

/* ---- the ring */

/* Decodes the TraceEntry at raw (read from at) into e; false when it is none. */
static bool decode(struct cl_target *t, const struct cc_layout *l, const unsigned char *raw,
                   uint64_t at, struct cc_trace *tr, struct cc_trace_entry *e, bool *oom)
{
#define WORD(off) (memcpy(&w, raw + (off), 8), w)
    uint64_t w;
    uint32_t action;
    memcpy(&action, raw, 4);
    if (action > l->last_action)
        return false;
    *e = (struct cc_trace_entry){.action = (uint8_t)action,
                                 .addr = WORD(l->te_addr),
                                 .size = WORD(l->te_size),
                                 .stream = WORD(l->te_stream),
                                 .context = WORD(l->te_context),
                                 .compile_context = CC_TRACE_NO_TEXT,
                                 .user_metadata = CC_TRACE_NO_TEXT};
    if (l->te_mempool) {
        e->pool_id[0] = WORD(l->te_mempool);
        e->pool_id[1] = WORD(l->te_mempool + 8);
    }
    if (l->te_time)
        e->time_us = (int64_t)WORD(l->te_time);   /* ticks, until converted */
#undef WORD
    return (!l->te_compile_context ||
            read_text(t, at + l->te_compile_context, tr, &e->compile_context, oom)) &&
           (!l->te_user_metadata ||
            read_text(t, at + l->te_user_metadata, tr, &e->user_metadata, oom));
}

/* Device d's ring (its DeviceCachingAllocator at dca) into dt, oldest first; false with a note
 * when it cannot be read whole, or memory ran out (*oom). */
static bool read_ring(struct cl_target *t, const struct cc_layout *l, int d, uint64_t dca,
                      struct cc_trace *tr, struct cc_device_trace *dt, bool *oom)
{
    uint64_t vec, next, max, v[3];   /* the vector: begin, end, end of storage */
    if (cl_read_u64(t, dca + l->dca_trace_entries, &vec) ||
        cl_read_u64(t, dca + l->dca_trace_next, &next) ||
        cl_read_u64(t, dca + l->dca_trace_max, &max) || !vec || cl_read(t, vec, v, sizeof v) ||
        v[0] > v[1] || v[1] > v[2] || (v[1] - v[0]) % l->te_stride || !max) {
        cl_note_add(&tr->notes, "device %d: the allocator's trace could not be read", d);
        return false;
    }
    uint64_t n = (v[1] - v[0]) / l->te_stride;
    if (next > n) {
        cl_note_add(&tr->notes,
                    "device %d: the allocator's trace is mid-update (its oldest "
                    "entry is past its end): not read",
                    d);
        return false;
    }
    if (n > MAX_ENTRIES) {
        cl_note_add(&tr->notes,
                    "device %d: the allocator's trace has %llu entries, more than "
                    "culeak reads (%u): not read",
                    d, (unsigned long long)n, MAX_ENTRIES);
        return false;
    }
    dt->v = calloc(n ? n : 1, sizeof *dt->v);
    unsigned char *raw = malloc((size_t)CHUNK * l->te_stride);
    bool ok = dt->v && raw;
    *oom |= !ok;
    for (uint64_t i = 0; ok && i < n; i += CHUNK) {   /* slot i of the vector */
        uint64_t k = n - i < CHUNK ? n - i : CHUNK, at = v[0] + i * l->te_stride;
        ok = !cl_read(t, at, raw, k * l->te_stride);
        for (uint64_t j = 0; ok && j < k; j++) {
            uint64_t slot = i + j, order = slot >= next ? slot - next : n - next + slot;
            ok =
                decode(t, l, raw + j * l->te_stride, at + j * l->te_stride, tr, &dt->v[order], oom);
        }
    }
    free(raw);
    if (!ok) {
        if (!*oom)
            cl_note_add(&tr->notes,
                        "device %d: an entry of the allocator's trace could not be "
                        "read: the trace is left out",
                        d);
        free(dt->v);
        dt->v = NULL;
        return false;
    }
    dt->n = (uint32_t)n;
    return true;
}

/* Whether every entry of dt was stamped between the allocator's making and now: what a ring of
 * this layout holds, and garbage seldom does. */
static bool stamped_in(const struct cc_device_trace *dt, uint64_t first, uint64_t last)
{
    for (uint32_t i = 0; i < dt->n; i++)
        if ((uint64_t)dt->v[i].time_us < first || (uint64_t)dt->v[i].time_us > last)
            return false;
    return true;
}

/* Turns every entry's ticks into time_us with the allocator's converter and t's clock; a
 * device's trace whose ticks are not times of this allocator is left out. */
static void convert_times(struct cl_target *t, const struct cc_allocator *a, struct cc_trace *tr)
{
    const struct cl_clock_pair *end = cl_target_clock(t, &tr->clock);
    struct cl_clock_pair *start = malloc(CL_CLOCK_PAIRS * sizeof *start);
    struct converter c;
    if (!end || !start ||
        cl_read(t, a->object + a->l->nca_clock, start, CL_CLOCK_PAIRS * sizeof *start) ||
        !make_converter(start, end, &c)) {
        cl_note_add(&tr->notes, "the trace's times are left out: %s",
                    !end ? "this machine has no TSC to convert them with"
                         : "the allocator's clock pairs could not be read");
        free(start);
        return;
    }
    tr->times = true;
    for (uint32_t d = 0; d < tr->ndevices; d++) {
        struct cc_device_trace *dt = &tr->devices[d];
        if (!stamped_in(dt, start[0].ticks, end[CL_CLOCK_PAIRS - 1].ticks)) {
            cl_note_add(&tr->notes,
                        "device %d: the allocator's trace does not fit layout %s "
                        "(its times are not this allocator's): left out",
                        a->devices[d].index, a->l->name);
            free(dt->v);
            *dt = (struct cc_device_trace){0};
        }
        for (uint32_t i = 0; i < dt->n; i++)
            dt->v[i].time_us = to_us(&c, (uint64_t)dt->v[i].time_us);
    }
    if (tr->clock == CL_CLOCK_READER)
        cl_note_add(&tr->notes, "the trace's times are converted with this machine's clock "
                                "rate, measured now: right for a core written on this machine "
                                "since it last booted");
    free(start);
}

bool cc_trace_read(struct cl_target *t, const struct cc_allocator *a, struct cc_trace *out)
{
    *out = (struct cc_trace){0};
    out->devices = calloc(a->ndevices ? a->ndevices : 1, sizeof *out->devices);
    bool oom = !out->devices;
    out->ndevices = oom ? 0 : a->ndevices;
    for (uint32_t d = 0; d < out->ndevices && !oom; d++) {
        const struct cc_device *dev = &a->devices[d];
        if (dev->dca)
            out->devices[d].read =
                read_ring(t, a->l, dev->index, dev->dca, out, &out->devices[d], &oom);
    }
    bool entries = false;
    for (uint32_t d = 0; d < out->ndevices; d++)
        entries |= out->devices[d].n > 0;
    if (!oom && entries && a->l->te_time)
        convert_times(t, a, out);
    if (oom) {
        cc_trace_free(out);
        return false;
    }
    return true;
}

void cc_trace_free(struct cc_trace *tr)
{
    for (uint32_t d = 0; d < tr->ndevices; d++)
        free(tr->devices[d].v);
    free(tr->devices);
    for (size_t i = 0; i < tr->ntexts; i++)
        free(tr->texts[i]);
    free(tr->texts);
    cl_addrmap_free(&tr->by_text);
    free(tr->notes);
    *tr = (struct cc_trace){0};
}

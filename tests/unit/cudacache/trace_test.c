/* The allocator's trace over the walker's fixture image (walk_fixture.h) with a hand-built ring
 * of three TraceEntry in 2.14's layout (the real ring is checked against torch's own snapshot
 * on the simulated device by the integration tests, and on a GPU by tests/gpu/run-on-device):
 * read oldest first across the wrap, its times converted; a ring mid-update, too long, or with
 * an entry that is none (an unknown action, a string that is none, a time not of this
 * allocator) is left out with a note, never partly read. */
#include <stdint.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "cudacache/trace.h"
#include "cudacache/walk.h"
#include "cudacache/walk_fixture.h"
#include "suites.h"
#include "testutil.h"

enum { VECTOR = 0xb000, ENTRIES = 0xb100, LONG_TEXT = 0xd000, SLOTS = 3 };
static const char long_text[] = "user metadata longer than the inline buffer";
static struct cl_clock_pair start[CL_CLOCK_PAIRS];

/* Slot i's entry: action, address and ticks; its compile context "N/A" inline, its user
 * metadata long_text on the heap. */
static void entry(const struct cc_layout *l, int i, uint32_t action, uint64_t addr, uint64_t ticks)
{
    uint64_t e = ENTRIES + (uint64_t)i * l->te_stride, cc = e + l->te_compile_context,
             um = e + l->te_user_metadata;
    memcpy(img + e, &action, 4);
    put64(e + l->te_addr, addr);
    put64(e + l->te_size, 4096);
    put64(e + l->te_stream, 7);
    put64(e + l->te_time, ticks);
    put64(cc, BASE + cc + 16);
    put64(cc + 8, 3);
    memcpy(img + cc + 16, "N/A", 3);
    put64(um, BASE + LONG_TEXT);
    put64(um + 8, strlen(long_text));
}

/* The fixture with a ring of SLOTS entries whose oldest is in slot 1. */
static const struct cc_layout *build(void)
{
    const struct cc_layout *l = fixture_build();
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    CU_ASSERT_TRUE_FATAL(cl_clock_measure(start));
    memcpy(img + NCA + l->nca_clock, start, sizeof start);
    memcpy(img + LONG_TEXT, long_text, strlen(long_text));
    put64(DCA + l->dca_trace_entries, BASE + VECTOR);
    put64(DCA + l->dca_trace_next, 1);
    put64(DCA + l->dca_trace_max, SLOTS);
    put64(VECTOR, BASE + ENTRIES);
    put64(VECTOR + 8, BASE + ENTRIES + SLOTS * l->te_stride);
    put64(VECTOR + 16, BASE + ENTRIES + SLOTS * l->te_stride);
    uint64_t t0 = start[CL_CLOCK_PAIRS - 1].ticks;
    entry(l, 1, CC_TRACE_SEGMENT_ALLOC, device_ptr, t0 + 10);   /* the oldest */
    entry(l, 2, CC_TRACE_ALLOC, device_ptr, t0 + 20);
    entry(l, 0, CC_TRACE_FREE_REQUESTED, device_ptr, t0 + 30);  /* the newest, wrapped */
    return l;
}

/* The trace of the image as it is now; the allocator walk must succeed. */
static void read_trace(struct cc_trace *tr)
{
    struct cl_target *t = fixture_target();
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    struct cc_allocator a = {0};
    struct cl_error err;
    CU_ASSERT_EQUAL_FATAL(cc_walk_object(t, cc_layout_named("2.14"), BASE + NCA, &a, &err), 0);
    CU_ASSERT_TRUE_FATAL(cc_trace_read(t, &a, tr));
    cc_free(&a);
    cl_target_close(t);
}

static void test_read_across_the_wrap(void)
{
    build();
    struct cc_trace tr;
    read_trace(&tr);
    CU_ASSERT_PTR_NULL(tr.notes);
    CU_ASSERT_EQUAL_FATAL(tr.ndevices, 1);
    const struct cc_device_trace *dt = &tr.devices[0];
    CU_ASSERT_TRUE(dt->read);
    CU_ASSERT_EQUAL_FATAL(dt->n, SLOTS);
    static const uint8_t order[SLOTS] = {CC_TRACE_SEGMENT_ALLOC, CC_TRACE_ALLOC,
                                         CC_TRACE_FREE_REQUESTED};
    for (int i = 0; i < SLOTS; i++) {
        CU_ASSERT_EQUAL(dt->v[i].action, order[i]);
        CU_ASSERT_EQUAL(dt->v[i].addr, device_ptr);
        CU_ASSERT_EQUAL(dt->v[i].stream, 7);
        CU_ASSERT_STRING_EQUAL(tr.texts[dt->v[i].compile_context], "N/A");
        CU_ASSERT_STRING_EQUAL(tr.texts[dt->v[i].user_metadata], long_text);
    }
    CU_ASSERT_EQUAL(tr.ntexts, 2);   /* each distinct text once */
    CU_ASSERT_STRING_EQUAL(cc_trace_action_name(dt->v[0].action), "segment_alloc");
    /* ticks a few past the reading's last pair: about its time, in microseconds */
    CU_ASSERT_TRUE(tr.times);
    int64_t last_us = start[CL_CLOCK_PAIRS - 1].unix_ns / 1000;
    CU_ASSERT_TRUE(dt->v[0].time_us >= last_us - 2 && dt->v[2].time_us <= last_us + 2);
    CU_ASSERT_TRUE(dt->v[0].time_us <= dt->v[2].time_us);
    cc_trace_free(&tr);
}

/* A change to the built ring, and the note it must leave (with nothing read). */
static void refused(void (*change)(const struct cc_layout *), const char *note)
{
    change(build());
    struct cc_trace tr;
    read_trace(&tr);
    CU_ASSERT_FALSE(tr.devices[0].read && tr.devices[0].n);
    CU_ASSERT_EQUAL(tr.devices[0].n, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tr.notes);
    CU_ASSERT_PTR_NOT_NULL(strstr(tr.notes, note));
    cc_trace_free(&tr);
}

static void next_past_the_end(const struct cc_layout *l)
{
    put64(DCA + l->dca_trace_next, SLOTS + 1);
}
static void unknown_action(const struct cc_layout *l)
{
    uint32_t action = l->last_action + 1;
    memcpy(img + ENTRIES + l->te_stride, &action, 4);
}
static void huge_text(const struct cc_layout *l)
{
    put64(ENTRIES + l->te_user_metadata + 8, 1ull << 40);
}
static void long_text_inline(const struct cc_layout *l)
{
    uint64_t um = ENTRIES + l->te_user_metadata;
    put64(um, BASE + um + 16);   /* 43 bytes in a 16-byte buffer */
}
static void too_many(const struct cc_layout *l)
{
    put64(VECTOR + 8, BASE + ENTRIES + (uint64_t)l->te_stride * ((1u << 24) + 1));
    put64(VECTOR + 16, BASE + ENTRIES + (uint64_t)l->te_stride * ((1u << 24) + 1));
}
static void backwards_vector(const struct cc_layout *l)
{
    put64(VECTOR + 8, BASE + ENTRIES - l->te_stride);
}
static void time_before_the_allocator(const struct cc_layout *l)
{
    put64(ENTRIES + l->te_time, start[0].ticks - 1);
}

static void test_refused(void)
{
    refused(next_past_the_end, "mid-update");
    refused(unknown_action, "could not be read");
    refused(huge_text, "could not be read");
    refused(long_text_inline, "could not be read");
    refused(too_many, "more than culeak reads");
    refused(backwards_vector, "could not be read");
    refused(time_before_the_allocator, "does not fit layout 2.13-2.14");
}

void register_cudacache_trace_tests(void)
{
    static const struct tu_test tests[] = {
        {"fixture image: a wrapped ring read oldest first, times converted",
         test_read_across_the_wrap},
        {"fixture image: a ring that is none is left out, with a note", test_refused},
        {NULL, NULL},
    };
    tu_add_suite("cudacache/trace", tests);
}

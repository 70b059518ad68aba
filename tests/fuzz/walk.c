/* libFuzzer harness for the CUDA caching allocator walker (inspector/cudacache/walk.c) over the
 * hand-built fixture image of the unit tests (tests/unit/cudacache/walk_fixture.h, a fixture,
 * not a real allocator). The input is a list of patches to the image, so the fuzzer starts from
 * a structure that walks and corrupts it: byte 0 picks the layout table to read it with, then
 * each 10 bytes write a 64-bit value (little-endian) at an offset (16-bit, within the image).
 * The walk must end with a status, never crash, hang or leak; a walk that succeeds must be
 * consistent: each segment's blocks lie in the device's list and tile the segment. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cudacache/walk.h"
#include "cudacache/walk_fixture.h"

#define PATCH 10

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_device(const struct cc_device *d)
{
    for (uint32_t i = 0; i < d->nsegments; i++) {
        const struct cc_segment *s = &d->segments[i];
        if (s->first > d->nblocks || s->nblocks > d->nblocks - s->first)
            abort();
        uint64_t at = s->addr;
        for (uint32_t j = s->first; j < s->first + s->nblocks; j++) {
            if (d->blocks[j].ptr != at)
                abort();   /* blocks in address order, back to back */
            at += d->blocks[j].size;
        }
        if (at - s->addr != s->size)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t n;
    const struct cc_layout *const *all = cc_layouts(&n);
    const struct cc_layout *l = fixture_build();
    if (!l || n == 0)
        abort();
    if (size > 0)
        l = all[data[0] % n];
    for (size_t at = 1; at + PATCH <= size; at += PATCH) {
        uint16_t off;
        memcpy(&off, data + at, sizeof off);
        memcpy(img + off % (sizeof img - 7), data + at + 2, 8);
    }
    struct cl_target *t = fixture_target();
    if (!t)
        abort();
    struct cc_allocator a = {0};
    struct cl_error err = {0};
    if (cc_walk_object(t, l, BASE + NCA, &a, &err) == 0)
        for (uint32_t i = 0; i < a.ndevices; i++)
            check_device(&a.devices[i]);
    cc_free(&a);
    cl_target_close(t);
    return 0;
}

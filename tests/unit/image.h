/* The unit tests' one mock target: memory laid out by hand at a base address and served through
 * cl_target_ops, for the walkers' tests (cpython/, cudacache/, torch/, holders/, report/) and the
 * fuzz harnesses that share their fixtures. A page can be made to fail, and reads are counted.
 * Header-only, as testutil.h. */
#ifndef CULEAK_TESTS_UNIT_IMAGE_H
#define CULEAK_TESTS_UNIT_IMAGE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "target/target.h"

struct tu_image {
    uint64_t base;             /* the target address of bytes[0]; page-aligned */
    unsigned char *bytes;      /* the caller's buffer */
    size_t size;               /* a whole number of pages */
    uint64_t bad_page;         /* a page whose reads fail (CL_E_UNREADABLE), or 0 */
    unsigned reads;            /* pages read so far */
};

static inline int tu_image_read_page(struct cl_target *t, uint64_t addr, void *page)
{
    struct tu_image *im = t->impl;
    im->reads++;
    if (addr < im->base || addr - im->base >= im->size || (im->bad_page && addr == im->bad_page))
        return cl_error_set(&t->err, CL_E_UNREADABLE, "image: no page 0x%llx",
                            (unsigned long long)addr);
    memcpy(page, im->bytes + (addr - im->base), CL_PAGE_SIZE);
    return 0;
}

static const struct cl_target_ops tu_image_ops = {.read_page = tu_image_read_page};

/* A target of kind serving im, with the mappings given (NULL, 0: one read-write mapping of the
 * whole image), sorted; NULL on allocation failure. The image must outlive the target. */
static inline struct cl_target *tu_image_target(struct tu_image *im, enum cl_target_kind kind,
                                                const struct cl_open_options *opt,
                                                const struct cl_mapping *maps, size_t nmaps)
{
    const struct cl_mapping all = {
        .start = im->base, .end = im->base + im->size, .perms = CL_MAP_R | CL_MAP_W};
    struct cl_target *t;
    if (cl_target_new(&tu_image_ops, kind, im, opt, &t) != 0)
        return NULL;
    if (!maps) {
        maps = &all;
        nmaps = 1;
    }
    for (size_t i = 0; i < nmaps; i++)
        if (cl_mappings_add(&t->maps, &maps[i]) != 0) {
            cl_target_close(t);
            return NULL;
        }
    cl_mappings_sort(&t->maps);
    return t;
}

/* Writers and a reader at target addresses; what falls outside the image is dropped (a
 * fixture checks that its layout fits instead). */
static inline void tu_put(struct tu_image *im, uint64_t addr, const void *v, size_t n)
{
    if (n && addr >= im->base && addr - im->base <= im->size - n)
        memcpy(im->bytes + (addr - im->base), v, n);
}
static inline void tu_put64(struct tu_image *im, uint64_t addr, uint64_t v)
{
    tu_put(im, addr, &v, sizeof v);
}
static inline void tu_put32(struct tu_image *im, uint64_t addr, uint32_t v)
{
    tu_put(im, addr, &v, sizeof v);
}
static inline void tu_put8(struct tu_image *im, uint64_t addr, uint8_t v)
{
    tu_put(im, addr, &v, sizeof v);
}
static inline uint64_t tu_get64(const struct tu_image *im, uint64_t addr)
{
    uint64_t v = 0;
    if (addr >= im->base && addr - im->base <= im->size - sizeof v)
        memcpy(&v, im->bytes + (addr - im->base), sizeof v);
    return v;
}

#endif

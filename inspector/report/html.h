/* `summary --html FILE`, `blocks --html FILE`: one self-contained page (no network when it is
 * viewed): each device's memory to scale by category and by holder, the holders by retained
 * bytes, and the CUDA segments to scale with their blocks coloured by holder, each block's chains
 * beside the map on hover and on click. The page carries the summary's and the blocks' --json
 * documents and draws from them, so its numbers are the JSON's. */
#ifndef CULEAK_REPORT_HTML_H
#define CULEAK_REPORT_HTML_H

#include <stdio.h>

#include "cpython/heap.h"
#include "cudacache/walk.h"
#include "holders/holders.h"
#include "report/blocks.h"
#include "report/warnings.h"
#include "runtime/driver_memory.h"
#include "torch/tensors.h"
#include "util/error.h"

/* What the page's header says of where its report comes from. */
struct cl_html_header {
    const char *target;          /* report/info.h's cl_target_words: "live process, pid 1234" */
    const char *python, *torch;  /* their versions ("" for none) */
};

/* a is NULL when the process has no CUDA allocator culeak could read (no segment map then);
 * filter selects the devices and block states drawn (blocks --device, --state). */
int cl_report_html(FILE *out, const struct cl_html_header *header, struct py_heap *h,
                   const struct torch_tensors *tt, const struct cl_holders *hs,
                   const struct cc_allocator *a, const struct cl_driver_memory *driver,
                   const struct cl_block_filter *filter, const struct cl_report_notes *w,
                   struct cl_error *err);

#endif

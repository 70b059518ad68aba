/* The data Python objects keep beside them, in memory of its own: a bytes object's bytes, a
 * bytearray's and an mmap's buffers, a list's item array. No C++ object lies in it, so a scan
 * for the words C++ objects keep (torch/safepyobj.c) leaves it out: on a host of datasets and
 * buffers, most of the memory there is, which a walk need not read (engine/inspect.h). */
#ifndef CULEAK_CPYTHON_BUFFERS_H
#define CULEAK_CPYTHON_BUFFERS_H

#include "cpython/heap.h"
#include "util/ranges.h"

/* Adds the buffers of a page or more of h's objects to out (not sorted). */
void py_heap_buffers(struct py_heap *h, struct cl_ranges *out);

#endif

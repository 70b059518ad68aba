/* Python frames (frames.c): their named locals, and how roots name them. */
#ifndef CULEAK_CPYTHON_FRAMES_H
#define CULEAK_CPYTHON_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpython/heap.h"

/* Emits the named locals of an interpreter frame (3.11+) or frame object (3.9/3.10) with edge. */
void py_frame_locals(struct py_emitter *e, uint64_t frame, enum py_edge edge);
/* Describes a frame as "func() at file.py" for root names; false if it is not a Python frame. */
bool py_frame_describe(struct py_objects *o, uint64_t frame, char *out, size_t cap);
/* The file a frame's code comes from; false if it cannot be read. */
bool py_frame_file(struct py_objects *o, uint64_t frame, char *out, size_t cap);

#endif

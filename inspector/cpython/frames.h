/* Python frames (frames.c): their named locals, and how roots name them. */
#ifndef CULEAK_CPYTHON_FRAMES_H
#define CULEAK_CPYTHON_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpython/emit.h"

/* What a frame on a thread's chain is: Python code, a frame that runs none (a 3.12+ shim
 * frame), or one that cannot be read (nor, then, can its locals). */
enum py_frame_kind { PY_FRAME_CODE, PY_FRAME_NOT_CODE, PY_FRAME_UNREADABLE };
enum py_frame_kind py_frame_kind(struct py_objects *o, uint64_t frame);

/* Emits the named locals of an interpreter frame (3.11+) or frame object (3.9/3.10) with edge.
 * False when the frame or its locals cannot be read (some may have been emitted): the caller
 * counts it (py_emit_skipped). A frame that runs no Python code has none, and is read. */
bool py_frame_locals(struct py_emitter *e, uint64_t frame, enum py_edge edge);
/* Describes a frame as "func() at file.py" for root names; false if it is not a Python frame. */
bool py_frame_describe(struct py_objects *o, uint64_t frame, char *out, size_t cap);
/* Where a code object runs: its file, its function's name and the line of the instruction at
 * byte offset addr (as PyCode_Addr2Line: the first line for a negative addr, -1 when the table
 * has none). False when code is not a readable code object. */
struct py_code_location {
    char file[512];
    char name[128];
    int line;
};
bool py_code_locate(struct py_objects *o, uint64_t code, int64_t addr,
                    struct py_code_location *out);
/* The code object a frame runs, 0 if none can be read. */
uint64_t py_frame_code(struct py_objects *o, uint64_t frame);
/* The function a 3.11+ frame runs (f_funcobj), 0 before 3.11 or if it cannot be read. */
uint64_t py_frame_function(struct py_objects *o, uint64_t frame);
/* The globals a frame runs with (borrowed: f_globals), 0 if they cannot be read. */
uint64_t py_frame_globals(struct py_objects *o, uint64_t frame);
/* The file a frame's code comes from; false if it cannot be read. */
bool py_frame_file(struct py_objects *o, uint64_t frame, char *out, size_t cap);

#endif

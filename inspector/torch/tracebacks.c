#include "torch/tracebacks.h"

#include <string.h>

#include "cpython/object.h"
#include "torch/cxx.h"

#define TRACEBACK_DATA 16        /* the shared_ptr's pointer */
#define TRACEBACK_FRAMES 8       /* CapturedTraceback::frames_, after the vptr */
#define FRAME_SIZE 16            /* PyFrame {code, lasti} */
#define MAX_FRAMES 4096          /* a bound on a vector read from a target that may be corrupt */
#define CAPTURED_TRACEBACK "N5torch17CapturedTracebackE"

/* A dump an older culeak wrote, before it read tracebacks, holds none of their C++ memory: every
 * read is of what the target holds (cl_read_held). */
void torch_traceback_emit(void *ctx, const struct py_emitter *e, uint64_t obj)
{
    (void)ctx;
    struct cl_target *t = e->o->rt->t;
    uint64_t data = cl_read_held_ptr_or_0(t, obj + TRACEBACK_DATA), v[3];
    char name[64];
    if (!data)
        return;   /* no traceback gathered */
    if (!cxx_class_name_held(t, data, name, sizeof name) || strcmp(name, CAPTURED_TRACEBACK) ||
        !cxx_vector_held(t, data + TRACEBACK_FRAMES, FRAME_SIZE, MAX_FRAMES, v)) {
        py_emit_skipped(e, PY_F_READER);
        return;
    }
    for (uint64_t p = v[0]; p < v[1]; p += FRAME_SIZE) {
        const struct py_type *ty = py_held_object_type(e->o, cl_read_held_ptr_or_0(t, p));
        if (!ty || ty->family != PY_F_CODE) {
            py_emit_skipped(e, PY_F_READER);
            return;
        }
    }
    for (uint64_t p = v[0]; p < v[1]; p += FRAME_SIZE)
        py_emit(e, cl_read_held_ptr_or_0(t, p), PY_E_NAMED,
                (uint64_t)(uintptr_t)".<a frame's code>");
}

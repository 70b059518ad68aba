/* Reading C++ objects in the target without their headers: the RTTI class name of a polymorphic
 * object, and the usable size of a glibc malloc allocation. */
#ifndef CULEAK_TORCH_CXX_H
#define CULEAK_TORCH_CXX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "target/target.h"
#include "util/addrmap.h"

/* The mangled class name (typeinfo name, e.g. "N3c1010TensorImplE") of the polymorphic object at
 * obj, read through its vtable; false when obj's first word is not a vtable pointer into a
 * read-only, file-backed mapping. */
bool cxx_class_name(struct cl_target *t, uint64_t obj, char *out, size_t cap);
/* The same for a reader not sure of obj (a hook an older culeak's dump has no page of): obj's word
 * only where the target holds it (cl_read_held), its vtable and RTTI, read-only, unless the
 * target left them out (cl_read_unless_left_out). */
bool cxx_class_name_held(struct cl_target *t, uint64_t obj, char *out, size_t cap);
/* A mangled class name as C++ writes it, for plain (nested) names: "N4c10d7ReducerE" ->
 * "c10d::Reducer", "7MemPool" -> "MemPool"; any other (a template's) is copied as it is. Pure. */
void cxx_class_text(const char *mangled, char *out, size_t cap);
/* The innermost name of a mangled nested name: "N5torch8autograd9generated12SumBackward0E" ->
 * "SumBackward0". Copies the input when it is not one. Pure. */
void cxx_short_name(const char *mangled, char *out, size_t cap);
/* Usable bytes of the glibc malloc chunk that starts at ptr, or 0 when the header is implausible
 * (ptr is not the start of a chunk, or the size exceeds max). */
uint64_t cxx_malloc_size(struct cl_target *t, uint64_t ptr, uint64_t max);

/* libstdc++'s std::vector at `at`, its triple {begin, end, end of storage} read into v: false
 * when it is no vector of elem-byte elements (out of order, not whole elements, more than max);
 * callers check what more their element type asks. */
bool cxx_vector(struct cl_target *t, uint64_t at, uint64_t elem, uint64_t max, uint64_t v[3]);
/* The same of a vector a probing reader is not sure of: only where the target holds it
 * (cl_read_held). */
bool cxx_vector_held(struct cl_target *t, uint64_t at, uint64_t elem, uint64_t max, uint64_t v[3]);

/* libstdc++'s shared_ptr control block (_Sp_counted_base): a vptr, then the use and the weak
 * count (an int each); the derived block's own members follow its header: make_shared's object,
 * the owned pointer (_Sp_counted_ptr), or a deleter and then the pointer (_Sp_counted_deleter). */
#define CXX_SP_USE_COUNT 8
#define CXX_SP_HEADER 16

/* What a polymorphic object is, as far as the autograd walk cares. */
enum cxx_kind {
    CXX_OTHER = 1,
    CXX_TENSOR,             /* a c10::TensorImpl (or subclass), not the undefined singleton */
    CXX_UNDEFINED_TENSOR,   /* c10::UndefinedTensorImpl: an at::Tensor that holds nothing */
    CXX_NODE,               /* a torch::autograd node (Node subclass) */
    CXX_VIEW_META,          /* a DifferentiableViewMeta: a view's AutogradMeta, with its base */
    CXX_STORAGE,            /* a c10::StorageImpl */
};

#define CXX_SHORT_NAME 64

/* Classifies objects by their vtable, each vtable looked up once. Zeroed, then t set. */
struct cxx_classifier {
    struct cl_target *t;
    struct cl_addrmap kinds;   /* vtable -> enum cxx_kind | its index in names << 8 */
    char (*names)[CXX_SHORT_NAME]; /* the classes' short names; entry 0 for none (unreadable) */
    size_t nnames, names_cap;
};
enum cxx_kind cxx_classify(struct cxx_classifier *c, uint64_t obj);
/* The short class name of the polymorphic object at obj (cxx_short_name), or NULL when it
 * cannot be read. It lies in the classifier, which may move it when it meets a class it has not
 * seen: compare or copy it before classifying anything else. */
const char *cxx_short_class(struct cxx_classifier *c, uint64_t obj);
void cxx_classifier_free(struct cxx_classifier *c);

#endif

/* The books of a heap (cpython/balance.h): CPython's collector, out of process. The collector
 * subtracts from each object's count the references other objects hold to it; what keeps a count
 * is held from outside, as is everything it reaches; the rest is garbage. culeak does the same
 * over every object the walk found, with the references the readers found in place of
 * tp_traverse's, and the rules below where counts and references differ. A reference culeak
 * cannot read leaves a count over: never garbage, held from C. */
#include "cpython/balance.h"

#include <stdlib.h>

#include "util/ranges.h"

/* The rules the balance applies itself, by index into the table. */
enum {
    RULE_IMMORTAL,
    RULE_STATIC_311,
    RULE_STATIC_DATA,
    RULE_HEAP_TYPE_CLASS,
    RULE_GC_TRACKED_ONLY,
};

/* clang-format off */
static const struct py_books_rule rules[] = {
    [RULE_IMMORTAL] = {12, 99,
     "immortal objects (ob_refcnt's low 32 bits negative as an int32) are never freed: "
     "not balanced, and never garbage",
     "Include/object.h (3.12), Include/refcount.h (3.14): _Py_IsImmortal"},
    [RULE_STATIC_311] = {11, 11,
     "static and deep-frozen objects start at 999999999 references: not balanced, and their "
     "own references (a frozen code object's constants) were never counted",
     "Include/internal/pycore_object.h: _PyObject_IMMORTAL_REFCNT; Tools/build/deepfreeze.py"},
    [RULE_STATIC_DATA] = {9, 11,
     "an object in the data of a file the process mapped or in a library's .bss (a static type, "
     "None, True, False, "
     "Ellipsis, NotImplemented, a C extension's static types) is never freed, and C code "
     "nothing walks takes references to it: not balanced, and never garbage (3.12 made them "
     "immortal)",
     "Include/object.h: PyObject_HEAD_INIT; PEP 683"},
    [RULE_HEAP_TYPE_CLASS] = {9, 99,
     "an instance holds a reference to its class only when the class is a heap type",
     "Objects/typeobject.c: PyType_GenericAlloc, subtype_dealloc"},
    [RULE_GC_TRACKED_ONLY] = {9, 99,
     "the collector subtracts only what GC-tracked objects reference and traverses only "
     "them: a reference from an untracked object (a code object's co_consts) keeps its "
     "target out of gc.garbage, though it goes with what it is held by",
     "Python/gc.c: subtract_refs, move_unreachable"},
    {9, 99,
     "a weak reference holds no count of its referent: no edge",
     "Objects/weakrefobject.c: init_weakref"},
    {9, 99,
     "the interned dict's two references to a mortal interned str are not counted: the walk "
     "does not read it (3.9-3.11, a static variable), or counts nothing of it (3.12+, "
     "interp->cached_objects.interned_strings, which 3.14 tracks)",
     "Objects/unicodeobject.c: PyUnicode_InternInPlace, intern_common (SSTATE_INTERNED_MORTAL)"},
    {9, 99,
     "a cell variable: the frame holds the cell and the cell its content, which paths name "
     "through the frame, uncounted",
     "Python/ceval.c: MAKE_CELL, COPY_FREE_VARS"},
    {9, 10,
     "a thread's frames are frame objects, each held by the C stack of the call that runs it: "
     "a C reference named after the frame; its slots count once, from the frame object",
     "Python/ceval.c: _PyEval_EvalFrameDefault; Objects/frameobject.c: frame_traverse"},
    {11, 99,
     "a frame's slots, function and code are counted by the frame's owner alone: the thread "
     "(C references named after the frame), a generator or a frame object",
     "Include/internal/pycore_frame.h: enum _frameowner, _PyFrame_Traverse"},
    {9, 99,
     "a running frame's stack below the pointer it saved (a call, a yield; 3.14: every C call) "
     "holds references its owner counts; a frame that saved none (3.9/3.10 while it runs, "
     "3.11-3.13 in a C function) has its stack's words inferred: one is a reference, printed "
     "`.<stack[i]?>`, only when it points at an object no root reaches whose count has a "
     "reference nothing else explains",
     "Python/ceval.c: _PyFrame_SetStackPointer, f_stackdepth, f_stacktop"},
    {9, 99,
     "a C type culeak has no reader for holds what its tp_traverse visits, in its own memory: "
     "a word that is no member, dict or weak-reference slot is a reference, printed "
     "`.<Type+offset?>`, only when it points at an object no root reaches whose count has a "
     "reference nothing else explains, or at one a root reaches whose references not "
     "explained are exactly as many as such words and the libraries' static words to it",
     "Include/cpython/object.h: PyTypeObject tp_traverse, tp_members"},
    {9, 99,
     "a C extension's static data (its globals: a Cython module's names, code objects and "
     "constants) holds references: each word of a library's .data and .bss that points at an "
     "object is one where the words to that object are exactly as many as its references not "
     "explained, a root named after the library and symbol; an untracked object such a word "
     "points at is walked too",
     "Include/moduleobject.h: PyModuleDef m_size (state the C code keeps besides its globals)"},
    {9, 99,
     "a C module's state (m_size bytes at md_state), which its m_traverse visits, is read as a "
     "C type's memory is: a word is a reference, printed `module.<state+offset?>`, by the same "
     "two conditions",
     "Objects/moduleobject.c: module_traverse; Include/moduleobject.h: PyModuleDef m_size"},
    {9, 99,
     "CPython's entry holds the code the main thread's outermost frame runs when that frame "
     "runs __main__'s globals (python FILE, -c, PyRun_*), from 3.11 the function it made of it, "
     "and, for a file, __main__ and the file's name (__main__.__file__): C references named "
     "<python's entry: ...>",
     "Python/pythonrun.c: _PyRun_SimpleFileObject, run_mod; Python/ceval.c: PyEval_EvalCode; "
     "Modules/main.c: pymain_run_file"},
    {9, 99,
     "a module holds its name (md_name), which module_traverse does not visit",
     "Objects/moduleobject.c: module_init_dict, module_dealloc"},
    {9, 99,
     "the type attribute cache holds a reference to each name it caches (None where cleared); "
     "its values are borrowed: C references named <type attribute cache>",
     "Objects/typeobject.c: _PyType_Lookup (update_cache), type_cache_clear"},
    {9, 99,
     "an OrderedDict's ordered list holds each key a second time, counted, not followed: the "
     "dict names each key",
     "Objects/odictobject.c: _odict_add_new_node, odict_traverse"},
    {11, 99,
     "a frame's f_globals and f_builtins are borrowed: no edge",
     "Include/internal/pycore_frame.h: _PyInterpreterFrame"},
    {14, 99,
     "a stack reference tagged Py_TAG_REFCNT is borrowed (or immortal): uncounted",
     "Include/internal/pycore_stackref.h: Py_TAG_REFCNT"},
    {13, 13,
     "an object's valid inline values are its own references, visited by the object; a "
     "__dict__ made of them shares them (uncounted) and is a reference the collector does "
     "not visit: from outside, to gc",
     "Objects/dictobject.c: PyObject_VisitManagedDict, dict_traverse (values->embedded)"},
    {9, 99,
     "a bounded lru cache holds each link twice: in its dict, and in its ring of links "
     "(root.next, each link's next), counted, not followed",
     "Modules/_functoolsmodule.c: bounded_lru_cache_wrapper, lru_cache_append_link"},
    {9, 99,
     "a split table's keys are held once by the keys object its dicts share: counted from the "
     "class that keeps it (ht_cached_keys), never from each dict",
     "Objects/dictobject.c: new_keys_object, dictkeys_decref"},
    {9, 99,
     "a static type borrows its tp_base; a heap type holds it, and its names, __slots__ and "
     "module",
     "Objects/typeobject.c: type_ready_set_bases, type_dealloc"},
    {9, 99,
     "threading.local's per-thread dicts are held by its dict of them; named from the local "
     "as its __dict__, uncounted",
     "Modules/_threadmodule.c: localobject, _ldict"},
    {9, 99,
     "torch: a TensorImpl holds a reference to its tensor's Python object, and a StorageImpl "
     "(2.4+) to its torch.UntypedStorage object, once it owns it (up to 2.9: resurrected, the "
     "pyobj slot tagged) or whenever C++ holds it too (2.10+: kHasPyObject and a strong count "
     "above 1); a custom Function's PyNode holds its ctx (up to 2.12), and from 2.13 every "
     "autograd node its grad_fn object or ctx by the 2.10 rule: C references named after the "
     "C++ object",
     "c10/core/impl/PyObjectSlot.h: pyobj_; c10/util/intrusive_ptr.h: kHasPyObject; "
     "torch/csrc/autograd/python_function.h: PyNode::obj, THPFunction::cdata (torch)"},
    {9, 99,
     "torch: a c10::SafePyObject {PyObject*, PyInterpreter*} in C++ memory holds a reference "
     "(the dispatcher's Python kernels, torch.library's registrations): found by torch's one "
     "interpreter in its second word, taken where such pairs to an object are exactly as many "
     "as its references not explained; C references named after the C++ object",
     "c10/core/SafePyObject.h; torch/csrc/utils/python_dispatch.cpp: PythonKernelHolder "
     "(torch)"},
    {9, 99,
     "torch: its argument parsers (function-local static PythonArgParsers in libtorch_python's "
     ".bss, each checked whole) hold every parameter's interned name and numpy spellings, and "
     "its legacy tensor types their dtype and layout, past the tensortype metaclass's size, "
     "with torch::tensors::tensor_types holding the types: taken where they are exactly as "
     "many as an object's references not explained, with the static words left; C references "
     "named after the parser and parameter, or the type",
     "torch/csrc/utils/python_arg_parser.h: FunctionParameter::python_name, "
     "numpy_python_names; torch/csrc/tensor/python_tensor.cpp: PyTensorType, tensor_types "
     "(torch)"},
    {9, 99,
     "torch: torch.compile's cache on a code object (Dynamo's co_extra slot, extra_index) "
     "holds its frame state and each cache entry's guards, code, compile id and backend: "
     "references of the code object, named .<torch.compile cache>.guard_manager",
     "torch/csrc/dynamo/extra_state.h: ExtraState; torch/csrc/dynamo/cache_entry.h: "
     "CacheEntry (torch)"},
    {9, 99,
     "pybind11: the weak reference to each type of its instances (a bound type, or a Python "
     "subclass of one) whose C++ type infos it caches, with a callback that drops the cache, "
     "is released on purpose: a C reference named <pybind11: the weak reference that clears "
     "T's type cache>",
     "pybind11/pybind11.h: all_type_info_get_cache"},
    {9, 99,
     "pybind11: each bundle's internals (behind its __pybind11_internals_vN capsule) made its "
     "static property type, default metaclass and instance base, and holds a reference to "
     "each: C references named <pybind11 internals vN: ...>",
     "pybind11/detail/internals.h: get_internals (make_static_property_type, "
     "make_default_metaclass, make_object_base_type)"},
    {9, 99,
     "the interpreter's own references (sys.modules, sys's and builtins' dicts, gc.garbage, "
     "threads' exceptions and dicts, 3.9-3.12's weak reference to a thread's lock, settrace "
     "and setprofile functions, signal handlers, "
     "atexit callbacks, sys.monitoring callables, the codec registry, audit hooks, importlib, "
     "warnings' filters, once registry and default action, gc.callbacks, the errno map, "
     "ExceptionGroup, the ast module's state, the strs _Py_IDENTIFIERs made, 3.9-3.10's small "
     "ints and one-character str and bytes caches, 3.9-3.11's slot names) "
     "are C references, each a root named after what holds it",
     "Include/internal/pycore_interp.h: PyInterpreterState; Include/cpython/pystate.h; "
     "Modules/signalmodule.c: Handlers; Modules/_threadmodule.c: thread__set_sentinel; "
     "Objects/unicodeobject.c: _PyUnicode_FromId; "
     "Objects/longobject.c: _PyLong_Init; Objects/typeobject.c: slotdefs"},
};
/* clang-format on */

const struct py_books_rule *py_books_rules(size_t *n)
{
    *n = sizeof rules / sizeof *rules;
    return rules;
}

bool py_books_rule_applies(const struct py_books_rule *r, unsigned minor)
{
    return minor >= r->first && minor <= r->last;
}

#define STATIC_311_REFCNT 999999999

int32_t py_books_refcnt(const struct py_layout *l, uint64_t word)
{
    if (py_books_rule_applies(&rules[RULE_IMMORTAL], l->minor))
        return (int32_t)(uint32_t)word < 0 ? PY_UNBALANCED : (int32_t)(uint32_t)word;
    if (py_books_rule_applies(&rules[RULE_STATIC_311], l->minor) && word >= STATIC_311_REFCNT)
        return PY_UNBALANCED;
    return word > INT32_MAX ? PY_UNBALANCED : (int32_t)word;
}

static inline void found(int32_t *unexplained, uint32_t dst)
{
    if (unexplained[dst] != PY_UNBALANCED)
        unexplained[dst]--;
}

/* Whether node i's own references are counted in their targets' counts: not the interned dict's,
 * nor (3.11) a deep-frozen object's, which was built holding them uncounted. */
static bool source_counts(const struct py_heap *h, uint32_t i)
{
    if (h->interned && h->nodes[i].addr == h->interned)
        return false;
    return !h->books.frozen || !(h->books.frozen[i / 8] >> (i % 8) & 1);
}

/* Every reference found, off its target's count. */
static void count_references(struct py_heap *h)
{
    int32_t *u = h->books.unexplained;
    const struct py_edges *g = &h->edges;
    for (uint32_t i = 0; i < h->n; i++) {
        if (!source_counts(h, i))
            continue;
        for (uint32_t e = g->of[i].first; e < g->of[i + 1].first; e++)
            if (!(g->kind[e] & PY_E_UNCOUNTED))
                found(u, g->dst[e]);
    }
    bool heap_only = py_books_rule_applies(&rules[RULE_HEAP_TYPE_CLASS], h->objects.rt->l->minor);
    for (uint32_t i = 0; i < h->n; i++) {
        uint32_t c = py_class_node(h, i);
        if (c != PY_NO_NODE && (!heap_only || py_node_type(h, i)->heap))
            found(u, c);
    }
    for (size_t k = 0; k < h->nroot_edges; k++)
        if (h->root_edges[k].counted)
            found(u, h->root_edges[k].dst);
    for (size_t k = 0; k < h->nbooks_refs; k++) {
        uint32_t i = py_heap_find(h, h->books_refs[k]);
        if (i != PY_NO_NODE)
            found(u, i);
    }
    for (size_t k = 0; k < h->nc_refs; k++) {
        uint32_t i = py_heap_find(h, h->c_refs[k].addr);
        if (i != PY_NO_NODE)
            found(u, i);
    }
}

static void tally(struct py_heap *h)
{
    struct py_books *b = &h->books;
    for (uint32_t i = 0; i < h->n; i++) {
        int32_t u = b->unexplained[i];
        if (u == PY_UNBALANCED) {
            b->unbalanced++;
            continue;
        }
        b->balanced++;
        if (u > 0) {
            b->short_objects++;
            b->short_refs += (uint64_t)u;
        } else if (u < 0) {
            b->over_objects++;
            b->over_refs += (uint64_t)-(int64_t)u;
        }
    }
}

/* What no root reaches, as the collector splits it: an object with references left over (or
 * immortal, or held by a C reference) holds itself and all it reaches; the rest is garbage. */
static bool split_unreachable(struct py_heap *h)
{
    struct py_books *b = &h->books;
    uint32_t first = h->nreachable, n = h->n - first;
    uint32_t *queue = malloc(((size_t)n + 1) * sizeof *queue);
    b->held_from = malloc(((size_t)n + 1) * sizeof *b->held_from);
    b->c_ref_of = malloc(((size_t)n + 1) * sizeof *b->c_ref_of);
    if (!queue || !b->held_from || !b->c_ref_of) {
        free(queue);
        return false;
    }
    for (uint32_t k = 0; k < n; k++)
        b->held_from[k] = b->c_ref_of[k] = PY_NO_NODE;
    for (size_t k = 0; k < h->nc_refs; k++) {
        uint32_t i = py_heap_find(h, h->c_refs[k].addr);
        if (i != PY_NO_NODE && i >= first && b->c_ref_of[i - first] == PY_NO_NODE)
            b->c_ref_of[i - first] = (uint32_t)k;
    }
    uint32_t head = 0, tail = 0;
    for (uint32_t i = first; i < h->n; i++) {
        int32_t u = b->unexplained[i];
        if (py_node_reachable(h, i))
            continue;   /* a confirmed stack word reaches it */
        if (u == PY_UNBALANCED || u > 0 || b->c_ref_of[i - first] != PY_NO_NODE) {
            b->held_from[i - first] = i;
            queue[tail++] = i;
        }
    }
    while (head < tail) {
        uint32_t i = queue[head++], seed = b->held_from[i - first];
        for (uint32_t p = 0, m = py_node_nedges(h, i); p < m; p++) {
            uint32_t d = py_edge_dst(h, py_node_edge(h, i, p));
            if (d != PY_NO_NODE && !py_node_reachable(h, d) &&
                b->held_from[d - first] == PY_NO_NODE) {
                b->held_from[d - first] = seed;
                queue[tail++] = d;
            }
        }
    }
    free(queue);
    for (uint32_t i = first; i < h->n; i++) {
        if (py_node_reachable(h, i))
            continue;
        uint64_t size = py_object_size(&h->objects, h->nodes[i].addr, py_node_type(h, i));
        if (b->held_from[i - first] == PY_NO_NODE) {
            b->garbage++;
            b->garbage_bytes += size;
        } else {
            b->held++;
            b->held_bytes += size;
        }
    }
    return true;
}

/* What the collector itself finds unreachable among what no root reaches. It works on tracked
 * objects alone: a count less the references tracked objects hold (a reference from an untracked
 * one, or from C, is from outside), then what those with a count left reach through tracked
 * objects. An untracked object's referents go when it goes, but not in gc.garbage. */
static bool mark_collected(struct py_heap *h)
{
    struct py_books *b = &h->books;
    uint32_t first = h->nreachable, n = h->n - first;
    int64_t *outside = calloc((size_t)n + 1, sizeof *outside);
    uint32_t *queue = malloc(((size_t)n + 1) * sizeof *queue);
    b->collected = malloc((size_t)n + 1);
    if (!outside || !queue || !b->collected) {
        free(outside);
        free(queue);
        return false;
    }
    bool heap_only = py_books_rule_applies(&rules[RULE_HEAP_TYPE_CLASS], h->objects.rt->l->minor);
    for (uint32_t i = first; i < h->n; i++) {
        if (!source_counts(h, i))
            continue;
        /* an untracked object's references are from outside, and so are those a tracked
         * one's traverse does not visit */
        bool tracked = h->nodes[i].tracked;
        for (uint32_t p = 0, m = py_node_nedges(h, i); p < m; p++) {
            uint32_t e = py_node_edge(h, i, p), d = py_edge_dst(h, e);
            uint8_t kind = e < h->edges.n ? h->edges.kind[e] : 0;
            bool counted =
                e < h->edges.n ? !(kind & PY_E_UNCOUNTED) : !heap_only || py_node_type(h, i)->heap;
            if (d != PY_NO_NODE && d >= first && counted && (!tracked || (kind & PY_E_UNTRAVERSED)))
                outside[d - first]++;
        }
    }
    for (size_t k = 0; k < h->nc_refs; k++) {
        uint32_t i = py_heap_find(h, h->c_refs[k].addr);
        if (i != PY_NO_NODE && i >= first)
            outside[i - first]++;
    }
    uint32_t tail = 0;
    for (uint32_t i = first; i < h->n; i++) {
        int32_t u = b->unexplained[i];
        bool held = u == PY_UNBALANCED || u + outside[i - first] > 0 || py_node_reachable(h, i);
        b->collected[i - first] = h->nodes[i].tracked && !held;
        if (h->nodes[i].tracked && held)
            queue[tail++] = i;
    }
    for (uint32_t head = 0; head < tail;) {
        uint32_t i = queue[head++];
        for (uint32_t p = 0, m = py_node_nedges(h, i); p < m; p++) {
            uint32_t e = py_node_edge(h, i, p), d = py_edge_dst(h, e);
            if (e < h->edges.n && (h->edges.kind[e] & PY_E_UNTRAVERSED))
                continue;   /* the collector does not follow it */
            if (d != PY_NO_NODE && d >= first && b->collected[d - first]) {
                b->collected[d - first] = 0;
                queue[tail++] = d;
            }
        }
    }
    free(outside);
    free(queue);
    return true;
}

/* The .bss of every module: zero-initialised static data, which the loader maps with no file
 * past the file's end (a C extension's static PyTypeObjects: torch's autograd node types). */
static struct cl_ranges bss_sections(const struct py_heap *h)
{
    const struct cl_symbols *syms = h->objects.rt->module ? h->objects.rt->module->owner : NULL;
    struct cl_ranges r = {0};
    for (size_t k = 0; syms && k < syms->n; k++) {
        uint64_t addr, size;
        if (cl_module_section_optional(&syms->mods[k], ".bss", &addr, &size) && size)
            cl_ranges_add(&r, addr, addr + size);
    }
    cl_ranges_sort(&r);
    return r;
}

/* Whether addr lies in a file the target mapped, or in a module's .bss: an object there is
 * static. */
static bool static_address(const struct py_heap *h, const struct cl_ranges *bss, uint64_t addr)
{
    const struct cl_mapping *m = cl_mappings_find(&h->objects.rt->t->maps, addr);
    return (m && m->path && m->path[0] != '[') || cl_ranges_contain(bss, addr);
}

bool py_books_count(struct py_heap *h)
{
    if (!h->books.unexplained)
        return false;
    if (py_books_rule_applies(&rules[RULE_STATIC_311], h->objects.rt->l->minor)) {
        if (!(h->books.frozen = calloc((size_t)h->n / 8 + 1, 1)))
            return false;
        for (uint32_t i = 0; i < h->n; i++)
            if (h->books.unexplained[i] == PY_UNBALANCED)
                h->books.frozen[i / 8] |= (uint8_t)(1u << (i % 8));
    }
    count_references(h);
    /* after counting: a static object's own references are counted as any object's */
    if (py_books_rule_applies(&rules[RULE_STATIC_DATA], h->objects.rt->l->minor)) {
        struct cl_ranges bss = bss_sections(h);
        for (uint32_t i = 0; i < h->n; i++)
            if (static_address(h, &bss, h->nodes[i].addr))
                h->books.unexplained[i] = PY_UNBALANCED;
        cl_ranges_free(&bss);
    }
    return true;
}

bool py_books_confirm(struct py_heap *h, uint32_t i)
{
    int32_t *u = &h->books.unexplained[i];
    if (*u == PY_UNBALANCED || *u <= 0)
        return false;
    --*u;
    return true;
}

bool py_books_split(struct py_heap *h)
{
    tally(h);
    h->books.done = split_unreachable(h) && mark_collected(h);
    return h->books.done;
}

bool py_books_collectable(const struct py_heap *h, uint32_t i)
{
    return h->books.done && i >= h->nreachable && h->books.collected[i - h->nreachable];
}

void py_books_free(struct py_books *b)
{
    free(b->unexplained);
    free(b->held_from);
    free(b->c_ref_of);
    free(b->collected);
    free(b->frozen);
}

bool py_books_add_c_ref(struct py_heap *h, uint32_t i, const char *name)
{
    if (!h->books.unexplained || i >= h->n || !py_heap_add_c_ref(h, h->nodes[i].addr, name))
        return false;
    found(h->books.unexplained, i);
    return true;
}

bool py_books_resplit(struct py_heap *h)
{
    struct py_books *b = &h->books;
    if (!b->unexplained)
        return false;
    free(b->held_from);
    free(b->c_ref_of);
    free(b->collected);
    *b = (struct py_books){.unexplained = b->unexplained, .frozen = b->frozen};
    return py_books_split(h);
}

uint32_t py_books_held_from(const struct py_heap *h, uint32_t i)
{
    if (py_node_reachable(h, i))
        return PY_NO_NODE;
    return h->books.done ? h->books.held_from[i - h->nreachable] : i;
}

const char *py_books_c_holder(const struct py_heap *h, uint32_t i)
{
    uint32_t seed = py_books_held_from(h, i);
    if (!h->books.done || seed == PY_NO_NODE)
        return NULL;
    uint32_t k = h->books.c_ref_of[seed - h->nreachable];
    return k == PY_NO_NODE ? NULL : h->c_refs[k].name;
}

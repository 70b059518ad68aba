/* Building the object graph: roots first (modules, then thread frames and thread state, then
 * the interpreter's own references), one breadth-first pass over referents, then the GC lists
 * for what no root reaches. */
#include "cpython/heap.h"
#include "cpython/balance.h"
#include "cpython/frames.h"
#include "cpython/gclist.h"
#include "cpython/path.h"
#include "cpython/referents.h"
#include "cpython/statics.h"
#include "cpython/strkeys.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/notes.h"
#include "util/meminfo.h"
#include "util/progress.h"
#include "util/text.h"
#include "util/vec.h"
#include "util/bsearch.h"

/* The walk's default bound on objects: as many as half the memory available holds at
 * BYTES_PER_OBJECT, twice the 59 bytes an object a 75-million-object walk took at its peak
 * (nodes, edges, the books; issue 47), so that the bound is what the machine can do, never a
 * fixed count that cuts a big heap short; 50 million where /proc/meminfo cannot be read. */
#define BYTES_PER_OBJECT 128u
#define FALLBACK_MAX_OBJECTS 50000000u
#define MAX_THREADS 4096
#define MAX_FRAMES 100000           /* per thread */
#define MAX_GC_LIST 200000000u     /* nodes per GC list, whatever the memory could hold */

/* A new root, or PY_NO_NODE when memory runs out: then what it holds is still walked, without
 * a path from it, and the build says so (py_heap_build's warnings). */
static uint32_t add_root(struct py_heap *h, const char *name, enum py_root_kind kind)
{
    char *copy = NULL;
    if (h->nroots == PY_NO_NODE || !CL_VEC_RESERVE(h->roots, h->nroots, h->roots_cap) ||
        !CL_VEC_RESERVE(h->root_kinds, h->nroots, h->root_kinds_cap) || !(copy = strdup(name))) {
        h->roots_dropped++;
        return PY_NO_NODE;
    }
    h->roots[h->nroots] = copy;
    h->root_kinds[h->nroots] = (uint8_t)kind;
    return h->nroots++;
}

/* Library code: the standard library, anything installed (site-packages, dist-packages),
 * frozen or built-in modules; a file elsewhere is the user's own. */
static bool library_file(const char *path)
{
    return !path[0] || path[0] == '<' || strstr(path, "/site-packages/") ||
           strstr(path, "/dist-packages/") || strstr(path, "/lib/python3");
}

#define MAX_EDGES (UINT32_MAX - 1)   /* edge ids are 32-bit, below CLASS_VIA_PENDING */

/* Says once that references were dropped for lack of memory; PY_NO_EDGE. This and the two below
 * are add_edge's rare cases, out of line: add_edge is inlined into every emit. */
/* The heap builder as the referent readers' sink (cpython/emit.h): what it records an edge as
 * coming from. */
struct heap_sink {
    struct py_heap *h;
    uint32_t from;            /* the node being expanded, or PY_NO_NODE for a root's referents */
    uint32_t root;            /* the root it belongs to, PY_NO_NODE on the GC lists */
};

__attribute__((noinline)) static uint32_t edge_dropped(struct py_heap *h)
{
    if (!h->edges_dropped++)
        cl_note_add(&h->warnings, "out of memory recording references: holders, retained "
                                  "bytes and paths are incomplete");
    return PY_NO_EDGE;
}

/* An edge out of a root; none for an object met on the GC lists. */
/* Room for the books' count of one more node, grown with the nodes' capacity. */
__attribute__((noinline)) static bool grow_books(struct py_heap *h)
{
    size_t cap = h->books_cap;
    if (!cl_vec_grow((void **)&h->books.unexplained, &cap, sizeof *h->books.unexplained))
        return false;
    h->books_cap = cap;
    return true;
}

/* A reference the interpreter's C state holds to addr, named name. One that cannot be kept
 * leaves a count unexplained: the object then reads as held from C, by something unnamed. */
bool py_heap_add_c_ref(struct py_heap *h, uint64_t addr, const char *name)
{
    if (!addr || !CL_VEC_RESERVE(h->c_refs, h->nc_refs, h->c_refs_cap))
        return false;
    struct py_c_ref *r = &h->c_refs[h->nc_refs];
    r->addr = addr;
    if (!(r->name = strdup(name)))
        return false;
    h->nc_refs++;
    return true;
}

__attribute__((noinline)) static uint32_t add_root_edge(struct py_heap *h,
                                                        const struct heap_sink *e, uint32_t dst,
                                                        enum py_edge edge, uint64_t payload)
{
    if (e->root == PY_NO_NODE)
        return PY_NO_EDGE;   /* the GC lists: not a reference */
    if (h->nroot_edges >= PY_NO_EDGE ||
        !CL_VEC_RESERVE(h->root_edges, h->nroot_edges, h->root_edges_cap))
        return edge_dropped(h);
    /* a root's own reference is a frame's slot; the rest name references counted elsewhere */
    enum py_root_kind kind = h->root_kinds[e->root];
    bool counted =
        !(edge & PY_E_UNCOUNTED) && (kind == PY_ROOT_USER_FRAME || kind == PY_ROOT_LIBRARY_FRAME);
    h->root_edges[h->nroot_edges] = (struct py_root_edge){
        e->root, dst, {(uint8_t)(edge & PY_E_KIND_MASK), payload, h->nodes[dst].addr}, counted};
    return (uint32_t)h->nroot_edges++;
}

/* Room for more edges: dst, payload and kind grow together, at dst's capacity. Edge ids,
 * recorded and class, stay below MAX_EDGES. */
__attribute__((noinline)) static bool grow_edges(struct py_heap *h)
{
    struct py_edges *g = &h->edges;
    size_t cap = g->cap;
    if (!cl_vec_grow((void **)&g->dst, &cap, sizeof *g->dst) || cap + h->cap >= MAX_EDGES ||
        !cl_vec_resize((void **)&g->payload, cap, sizeof *g->payload) ||
        !cl_vec_resize((void **)&g->kind, cap, sizeof *g->kind))
        return false;
    g->cap = cap;
    return true;
}

/* Records the edge from the node being expanded (or from a root) to node dst; returns its id
 * (in root_edges for a root's), or PY_NO_EDGE. A failed allocation drops the edge and says so
 * once. Inline for the common case, an edge between nodes with room for it (millions). */
static inline uint32_t add_edge(struct py_heap *h, const struct heap_sink *e, uint32_t dst,
                                enum py_edge edge, uint64_t payload)
{
    struct py_edges *g = &h->edges;
    if (e->from == PY_NO_NODE)
        return add_root_edge(h, e, dst, edge, payload);
    if (g->n == g->cap && !grow_edges(h))
        return edge_dropped(h);
    g->dst[g->n] = dst;
    g->payload[g->n] = payload;
    g->kind[g->n] = (uint8_t)edge;
    return (uint32_t)g->n++;
}

static bool grow_types(struct py_heap *h, uint32_t index)
{
    while (index >= h->types_cap) {
        size_t old = h->types_cap, cap = old;
        if (!cl_vec_grow((void **)&h->type_bytes, &cap, sizeof *h->type_bytes) ||
            !cl_vec_resize((void **)&h->type_nodes, cap, sizeof *h->type_nodes))
            return false;
        memset(h->type_bytes + old, 0, (cap - old) * sizeof *h->type_bytes);
        for (size_t i = old; i < cap; i++)
            h->type_nodes[i] = PY_NO_NODE;
        h->types_cap = cap;
    }
    return true;
}

/* Whether type_bytes and type_nodes have an entry for the type at index, grown if need be (no
 * bytes, no node). */
static inline bool type_room(struct py_heap *h, uint32_t index)
{
    return index < h->types_cap || grow_types(h, index);
}

const char py_class_label[] = ".__class__";

/* A class edge's id is known once the build is done (class edges follow the recorded ones): a
 * type node found by one has this via until then. */
#define CLASS_VIA_PENDING (PY_NO_EDGE - 1)

/* dst as a new node, found from e's node; PY_NO_NODE when it is not an object or cannot be
 * added (the node's via is for the caller to set). */
__attribute__((always_inline)) static inline uint32_t add_node(struct py_heap *h,
                                                               const struct heap_sink *e,
                                                               uint64_t dst)
{
    if (h->n >= h->max_objects)
        return PY_NO_NODE;
    uint64_t refcnt;
    const struct py_type *ty = py_object_header(&h->objects, dst, &refcnt);
    if (!ty)
        return PY_NO_NODE;
    if (h->n == h->cap) {   /* edges.of has one more entry than nodes */
        size_t cap = h->cap;
        if (!cl_vec_grow((void **)&h->nodes, &cap, sizeof *h->nodes) ||
            cap + h->edges.cap >= MAX_EDGES ||
            !cl_vec_resize((void **)&h->edges.of, cap + 1, sizeof *h->edges.of)) {
            h->nodes_dropped++;
            return PY_NO_NODE;
        }
        h->cap = (uint32_t)cap;
    }
    uint64_t size = py_object_size(&h->objects, dst, ty);
    if (h->n == h->books_cap && !grow_books(h)) {
        h->nodes_dropped++;
        return PY_NO_NODE;
    }
    if (!type_room(h, ty->index) || !cl_nodemap_put(&h->index, dst, size, h->n)) {
        h->nodes_dropped++;
        return PY_NO_NODE;
    }
    h->type_bytes[ty->index] += size;
    uint8_t tracked = 0;
    if (ty->flags & PY_TPFLAGS_HAVE_GC)
        /* PyGC_Head._gc_next sits right before the object */
        tracked = py_word(&h->objects, dst - h->objects.rt->l->gc_head_size) != 0;
    h->nodes[h->n] = (struct py_node){dst, e->from, e->root, ty->index, tracked, PY_NO_EDGE};
    h->books.unexplained[h->n] = py_books_refcnt(h->objects.rt->l, refcnt);
    return h->n++;
}

static void heap_edge(void *sink, uint64_t dst, enum py_edge edge, uint64_t payload)
{
    const struct heap_sink *e = sink;
    struct py_heap *h = e->h;
    if (!dst)
        return;
    if ((edge & PY_E_KIND_MASK) == PY_E_BOOKS) {
        if (e->from != PY_NO_NODE &&
            CL_VEC_RESERVE(h->books_refs, h->nbooks_refs, h->books_refs_cap))
            h->books_refs[h->nbooks_refs++] = dst;
        return;
    }
    if (edge & PY_E_INFERRED) {
        if (e->from == PY_NO_NODE && e->root != PY_NO_NODE &&
            CL_VEC_RESERVE(h->inferred, h->ninferred, h->inferred_cap))
            h->inferred[h->ninferred++] = (struct py_inferred){dst, payload, e->root};
        return;
    }
    if (edge & PY_E_COUNT_ONLY) {
        if (e->from == PY_NO_NODE) {
            py_heap_add_c_ref(h, dst, e->root != PY_NO_NODE ? h->roots[e->root] : "");
            return;
        }
        edge &= ~PY_E_COUNT_ONLY;
    }
    uint32_t seen = cl_nodemap_get(&h->index, dst);
    if (seen != PY_NO_NODE) {
        add_edge(h, e, seen, edge, payload);
        return;
    }
    uint32_t added = add_node(h, e, dst);
    if (added != PY_NO_NODE)
        h->nodes[added].via = add_edge(h, e, added, edge, payload);
}

static void heap_class(void *sink, const struct py_type *ty)
{
    const struct heap_sink *e = sink;
    struct py_heap *h = e->h;
    uint32_t i = ty->index;
    if (e->from == PY_NO_NODE || !type_room(h, i))   /* a class edge leaves a node */
        return;
    if (h->type_nodes[i] == PY_NO_NODE) {
        /* the first instance of its type walked: the type object's node, new or not */
        uint32_t t = cl_nodemap_get(&h->index, ty->addr);
        if (t == PY_NO_NODE && (t = add_node(h, e, ty->addr)) != PY_NO_NODE)
            h->nodes[t].via = CLASS_VIA_PENDING;
        h->type_nodes[i] = t;
    }
    h->edges.of[e->from].class_dst = h->type_nodes[i];
}

static void heap_prefetch(void *sink, uint64_t dst)
{
    cl_nodemap_prefetch(&((const struct heap_sink *)sink)->h->index, dst);
}

static void heap_skipped(void *sink, enum py_family family)
{
    ((struct heap_sink *)sink)->h->objects.unreadable[family]++;
}

static const struct py_emit_ops heap_ops = {heap_edge, heap_class, heap_prefetch, heap_skipped};

/* The emitter that records into s's heap. */
static struct py_emitter heap_emitter(struct heap_sink *s)
{
    return (struct py_emitter){&s->h->objects, &heap_ops, s};
}

uint32_t py_heap_find(const struct py_heap *h, uint64_t addr)
{
    return cl_nodemap_get(&h->index, addr);
}

/* ---- attribute lookups ---- */

struct attr_probe {
    struct py_objects *o;
    const char *name;
    uint64_t value;           /* found, or 0 */
};

static void probe_attr(void *arg, uint64_t dst, enum py_edge edge, uint64_t payload)
{
    struct attr_probe *p = arg;
    char key[64];
    if (p->value || (edge & PY_E_COUNT_ONLY))
        return;
    edge &= PY_E_KIND_MASK;
    if (edge == PY_E_ATTR && py_str_read(p->o, payload, key, sizeof key) &&
        strcmp(key, p->name) == 0)
        p->value = dst;
    else if (edge == PY_E_NAMED && strcmp((const char *)(uintptr_t)payload, ".__dict__") == 0)
        p->value = py_dict_get_str(p->o, dst, p->name);
}

uint64_t py_heap_attr(struct py_objects *o, uint64_t obj, const char *name)
{
    /* the instance's attributes, wherever this minor keeps them (a dict, managed values), as the
     * referent walker finds them */
    struct attr_probe p = {o, name, 0};
    static const struct py_emit_ops probe_ops = {.edge = probe_attr};
    struct py_emitter e = {o, &probe_ops, &p};
    struct py_type *ty = py_object_type(o, obj);
    if (ty)
        py_referents(&e, obj, ty);
    return p.value;
}

/* Bases followed at most: a class hierarchy deeper than this is a corrupt or looping chain. */
#define MAX_BASES 64

bool py_type_derives(struct py_heap *h, const struct py_type *ty, const char *qualified)
{
    struct py_objects *o = &h->objects;
    char name[600];
    for (int depth = 0; ty && depth < MAX_BASES; depth++) {
        py_type_qualified_name(h, ty, name, sizeof name);
        if (strcmp(name, qualified) == 0)
            return true;
        uint64_t base = py_word(o, ty->addr + o->rt->l->tp_base);
        ty = base ? py_type_at(o, base) : NULL;
    }
    return false;
}

bool py_node_derives(struct py_heap *h, uint32_t i, unsigned char *cache, const char *qualified)
{
    enum { UNASKED, DERIVES, NOT };
    uint32_t t = h->nodes[i].type;
    if (cache[t] == UNASKED)
        cache[t] = py_type_derives(h, py_node_type(h, i), qualified) ? DERIVES : NOT;
    return cache[t] == DERIVES;
}

bool py_heap_module_str(struct py_heap *h, const char *module, const char *attr, char *out,
                        size_t cap)
{
    struct py_objects *o = &h->objects;
    uint64_t modules = py_word(o, o->rt->interp + o->rt->l->is_modules);
    uint64_t mod = py_dict_get_str(o, modules, module);
    const struct py_type *ty = mod ? py_object_type(o, mod) : NULL;
    return ty && ty->family == PY_F_MODULE &&
           py_str_read(o, py_dict_get_str(o, py_word(o, mod + o->rt->l->module_dict), attr), out,
                       cap);
}

void py_type_qualified_name(struct py_heap *h, const struct py_type *ty, char *out, size_t cap)
{
    struct py_objects *o = &h->objects;
    char module[256], qualname[256];
    if (ty->heap &&
        py_str_read(o, py_dict_get_str(o, ty->dict, "__module__"), module, sizeof module) &&
        py_str_read(o, py_word(o, ty->addr + o->rt->l->ht_qualname), qualname, sizeof qualname))
        snprintf(out, cap, "%s.%s", module, qualname);
    else if (strchr(ty->name, '.'))
        snprintf(out, cap, "%s", ty->name);
    else
        snprintf(out, cap, "builtins.%s", ty->name);
}

/* threading._active[ident]._name, or "" when it cannot be read. */
static void thread_name(struct py_heap *h, uint64_t modules, uint64_t ident, char *out, size_t cap)
{
    struct py_objects *o = &h->objects;
    out[0] = '\0';
    uint64_t threading = py_dict_get_str(o, modules, "threading");
    uint64_t mdict = threading ? py_word(o, threading + o->rt->l->module_dict) : 0;
    uint64_t active = py_dict_get_str(o, mdict, "_active");
    uint64_t thread = py_dict_get_int(o, active, (int64_t)ident);
    if (!thread)
        return;
    py_str_read(o, py_heap_attr(o, thread, "_name"), out, cap);
}

/* ---- roots ---- */

struct module_roots {
    struct py_heap *h;
    uint64_t modules;
    bool main_only;
    struct py_strkeys keys; /* sys.modules and the packages' dicts, by name */
};

/* How Python code names a module: `pkg.mod`, unless pkg's attribute mod is something else (a
 * function unittest.main shadows the module unittest.main): then sys.modules['pkg.mod']. */
static void module_root_name(struct module_roots *m, const char *name, uint64_t module, char *out,
                             size_t cap)
{
    struct py_objects *o = &m->h->objects;
    const char *dot = strrchr(name, '.');
    char parent[256];
    snprintf(out, cap, "%s", name);
    if (!dot || (size_t)(dot - name) >= sizeof parent)
        return;
    snprintf(parent, sizeof parent, "%.*s", (int)(dot - name), name);
    uint64_t pkg = py_strkeys_get(&m->keys, m->modules, parent);
    const struct py_type *ty = pkg ? py_object_type(o, pkg) : NULL;
    uint64_t attr = ty && ty->family == PY_F_MODULE
                        ? py_strkeys_get(&m->keys, py_word(o, pkg + o->rt->l->module_dict), dot + 1)
                        : 0;
    if (attr != module)
        snprintf(out, cap, "sys.modules['%s']", name);
}

static bool add_module_root(void *arg, uint64_t key, uint64_t module)
{
    struct module_roots *m = arg;
    struct py_heap *h = m->h;
    char name[256], root[300];
    if (!py_str_read(&h->objects, key, name, sizeof name))
        return true;
    if ((strcmp(name, "__main__") == 0) != m->main_only)
        return true;
    module_root_name(m, name, module, root, sizeof root);
    char file[512] = "";
    const struct py_type *mt = py_object_type(&h->objects, module);
    uint64_t mdict = py_word(&h->objects, module + h->objects.rt->l->module_dict);
    uint64_t file_str =
        mt && mt->family == PY_F_MODULE ? py_dict_get_str(&h->objects, mdict, "__file__") : 0;
    py_str_read(&h->objects, file_str, file, sizeof file);
    if (m->main_only && mt && mt->family == PY_F_MODULE) /* for entry_roots */
        h->main_module = module, h->main_file = file_str;
    bool user = m->main_only || !library_file(file);
    uint32_t r = add_root(h, root, user ? PY_ROOT_USER_MODULE : PY_ROOT_LIBRARY_MODULE);
    struct heap_sink sink = {h, PY_NO_NODE, r};
    struct py_emitter e = heap_emitter(&sink);
    py_emit(&e, module, PY_E_SELF, 0);
    const struct py_type *ty = py_object_type(&h->objects, module);
    if (ty && ty->family == PY_F_MODULE) /* so `mod.__dict__['x']` prints as `mod.x` */
        py_emit(&e, mdict, PY_E_NAMED, (uint64_t)(uintptr_t)".__dict__");
    return true;
}

/* A root for an object the interpreter's C state holds (a thread's exception, sys's dict),
 * unless a root already reaches it; its reference is counted as a C reference named name. */
static void add_self_root(struct py_heap *h, const char *name, uint64_t obj, const char *label)
{
    /* a word of C state may point anywhere: only into memory the target holds (a dump an
     * older culeak wrote, or a walk cut short by --max-objects, may not have read it) */
    if (!obj || !cl_target_holds(h->objects.rt->t, obj) || !py_object_type(&h->objects, obj))
        return;
    py_heap_add_c_ref(h, obj, name);
    if (py_heap_find(h, obj) != PY_NO_NODE)
        return;
    struct heap_sink sink = {h, PY_NO_NODE, add_root(h, name, PY_ROOT_OTHER)};
    struct py_emitter e = heap_emitter(&sink);
    py_emit(&e, obj, label ? PY_E_NAMED : PY_E_SELF, (uint64_t)(uintptr_t)label);
}

/* Whether a walk along a chain of target structures (threads, frames, exception states) comes
 * back to node, which seen remembers from then on: a corrupt or changing chain, walked once. A
 * failed allocation reads as a revisit, so that the walk stops rather than goes on unchecked. */
static bool revisited(struct cl_addrmap *seen, uint64_t node)
{
    bool inserted;
    return cl_addrmap_put(seen, node, 0, &inserted) == PY_NO_NODE || !inserted;
}

/* The thread's top frame in *frame (0: none); false when the thread state cannot be read. */
static bool top_frame(struct py_objects *o, uint64_t tstate, uint64_t *frame)
{
    const struct py_layout *l = o->rt->l;
    struct cl_target *t = o->rt->t;
    uint64_t cframe;
    switch (l->frames) {
    case PY_FRAMES_OBJECTS: return cl_read_u64(t, tstate + l->ts_frame, frame) == 0;
    case PY_FRAMES_CFRAME:
        if (cl_read_u64(t, tstate + l->ts_cframe, &cframe) != 0)
            return false;
        *frame = 0;
        return !cframe || cl_read_u64(t, cframe + l->cf_current_frame, frame) == 0;
    case PY_FRAMES_CURRENT: return cl_read_u64(t, tstate + l->ts_current_frame, frame) == 0;
    }
    return false;
}

/* The frames of the thread that run Python code, top first, into *out (n returned). A frame
 * that cannot be read (nor its locals, nor the link to its caller) is counted with the
 * containers the walk could not read; a chain that comes back to a frame already seen (a corrupt
 * or changing stack) is walked once and said. */
static size_t code_frames(struct py_heap *h, uint64_t tstate, const char *who, uint64_t **out)
{
    struct py_objects *o = &h->objects;
    const struct py_layout *l = o->rt->l;
    struct heap_sink nowhere = {h, PY_NO_NODE, PY_NO_NODE};
    struct py_emitter skip = heap_emitter(&nowhere);
    struct cl_addrmap seen = {0};
    uint64_t frame = 0, *frames = NULL;
    size_t n = 0, cap = 0;
    uint16_t back = l->frames == PY_FRAMES_OBJECTS ? l->f_back : l->if_previous;
    int i = 0;
    if (!top_frame(o, tstate, &frame)) {
        py_emit_skipped(&skip, PY_F_FRAME); /* the thread's stack cannot be found */
        frame = 0;
    }
    for (; frame && i < MAX_FRAMES; i++) {
        if (revisited(&seen, frame)) {
            cl_note_add(&h->warnings,
                        "the frame chain of thread %s loops back after %d frames "
                        "(a corrupt or changing stack): frames below are missing",
                        who, i);
            break;
        }
        enum py_frame_kind kind = py_frame_kind(o, frame);
        if (kind == PY_FRAME_UNREADABLE)
            py_emit_skipped(&skip, PY_F_FRAME);
        if (kind == PY_FRAME_CODE) {
            if (CL_VEC_RESERVE(frames, n, cap))
                frames[n++] = frame;
            else
                py_emit_skipped(&skip, PY_F_FRAME); /* out of memory: its locals unread */
        }
        if (cl_read_u64(o->rt->t, frame + back, &frame) != 0) {
            if (kind != PY_FRAME_UNREADABLE) /* counted once: the chain is cut here */
                py_emit_skipped(&skip, PY_F_FRAME);
            break;
        }
    }
    if (i == MAX_FRAMES && frame)
        cl_note_add(&h->warnings, "thread %s has more than %d frames: frames below are missing",
                    who, MAX_FRAMES);
    cl_addrmap_free(&seen);
    *out = frames;
    return n;
}

/* A root for each Python frame of the thread, top first, holding the frame's locals, named by
 * the thread, the function, and its file and current line ("<thread main: main() at job.py:25>").
 * Snapshots compare frames without their line (cl_path_collapse), so a function that runs
 * itself again (recursion, direct or not) is told apart by its calls' order from the bottom of
 * the stack, which frames pushed above it leave unchanged: "... at job.py:7 (recursion 2)". */
static void frame_roots(struct py_heap *h, uint64_t tstate, const char *who)
{
    struct py_objects *o = &h->objects;
    uint64_t *frames;
    size_t n = code_frames(h, tstate, who, &frames);
    if (n && strcmp(who, "main") == 0)
        h->entry_frame = frames[n - 1];
    /* each frame's call of its code, from the bottom: 1 for the first */
    uint32_t *call = calloc(n ? n : 1, sizeof *call), *calls = calloc(n ? n : 1, sizeof *calls);
    struct cl_addrmap codes = {0}; /* code object -> its index in calls */
    uint32_t ncodes = 0;
    for (size_t k = n; call && calls && k-- > 0;) {
        uint64_t code = py_frame_code(o, frames[k]);
        bool inserted = false;
        uint32_t c = code ? cl_addrmap_put(&codes, code, ncodes, &inserted) : UINT32_MAX;
        if (c == UINT32_MAX)
            continue; /* no code read, or out of memory: no order said rather than a wrong one */
        ncodes += inserted;
        call[k] = ++calls[c];
    }
    cl_addrmap_free(&codes);
    free(calls);
    char desc[512], root[700];
    for (size_t k = 0; k < n; k++) {
        if (!py_frame_describe(o, frames[k], desc, sizeof desc))
            snprintf(desc, sizeof desc, "?() at ?"); /* code whose names are unreadable */
        if (call && call[k] > 1)
            snprintf(root, sizeof root, "<thread %s: %s (recursion %u)>", who, desc, call[k]);
        else
            snprintf(root, sizeof root, "<thread %s: %s>", who, desc);
        char file[512] = "";
        py_frame_file(o, frames[k], file, sizeof file);
        enum py_root_kind rk = library_file(file) ? PY_ROOT_LIBRARY_FRAME : PY_ROOT_USER_FRAME;
        struct heap_sink sink = {h, PY_NO_NODE, add_root(h, root, rk)};
        struct py_emitter e = heap_emitter(&sink);
        if (!py_frame_locals(&e, frames[k], PY_E_ATTR))
            py_emit_skipped(&e, PY_F_FRAME);
    }
    free(call);
    free(frames);
}

static void thread_roots(struct py_heap *h, uint64_t tstate, uint64_t modules, bool main)
{
    struct py_objects *o = &h->objects;
    const struct py_layout *l = o->rt->l;
    char who[128], name[96], root[700];
    uint64_t ident = py_word(o, tstate + l->ts_thread_id);
    if (main)
        strcpy(who, "main");
    else {
        thread_name(h, modules, ident, name, sizeof name);
        if (name[0])
            snprintf(who, sizeof who, "%s", name);
        else if (l->ts_native_thread_id != PY_NONE)
            snprintf(who, sizeof who, "tid %llu",
                     (unsigned long long)py_word(o, tstate + l->ts_native_thread_id));
        else
            snprintf(who, sizeof who, "0x%llx", (unsigned long long)ident);
    }
    frame_roots(h, tstate, who);
    snprintf(root, sizeof root, "<thread %s: exception being raised>", who);
    if (l->ts_current_exception != PY_NONE)
        add_self_root(h, root, py_word(o, tstate + l->ts_current_exception), NULL);
    else
        add_self_root(h, root, py_word(o, tstate + l->ts_curexc_value), NULL);
    snprintf(root, sizeof root, "<thread %s: exception being handled>", who);
    uint64_t item = py_word(o, tstate + l->ts_exc_info);
    uint16_t prev = l->ei_exc_type == PY_NONE ? 8 : 24; /* _PyErr_StackItem.previous_item */
    struct cl_addrmap seen = {0};
    for (int i = 0; item && i < MAX_FRAMES; i++, item = py_word(o, item + prev)) {
        if (revisited(&seen, item)) {
            cl_note_add(&h->warnings,
                        "the exceptions being handled by thread %s loop back after "
                        "%d (a corrupt or changing thread state): those below are missing",
                        who, i);
            break;
        }
        add_self_root(h, root, py_word(o, item + l->ei_exc_value), NULL);
    }
    cl_addrmap_free(&seen);
    snprintf(root, sizeof root, "<thread %s: thread state dict>", who);
    add_self_root(h, root, py_word(o, tstate + l->ts_dict), NULL);
    /* 3.9-3.12: the weak reference to the lock threading waits on, which the thread state owns
     * (Modules/_threadmodule.c: thread__set_sentinel); a dump an older culeak wrote may hold no
     * page of it */
    uint64_t sentinel =
        l->ts_on_delete_data == PY_NONE ? 0 : py_word(o, tstate + l->ts_on_delete_data);
    const struct py_type *st = py_held_object_type(o, sentinel);
    snprintf(root, sizeof root, "<thread %s: its lock's weak reference>", who);
    if (st && st->family == PY_F_WEAKREF)
        add_self_root(h, root, sentinel, NULL);
    snprintf(root, sizeof root, "<thread %s: sys.settrace function>", who);
    add_self_root(h, root, py_word(o, tstate + l->ts_c_traceobj), NULL);
    snprintf(root, sizeof root, "<thread %s: sys.setprofile function>", who);
    add_self_root(h, root, py_word(o, tstate + l->ts_c_profileobj), NULL);
    /* the Context whose ContextVar values the thread sees (Python/context.c: ts->context); a
     * dump an older culeak wrote holds no page of it */
    snprintf(root, sizeof root, "<thread %s: contextvars context>", who);
    uint64_t context = py_word(o, tstate + l->ts_context);
    if (context && !cl_target_left_out(o->rt->t, context))
        add_self_root(h, root, context, NULL);
}

/* The interpreter's word at field; 0 for a field the layout lacks, or one a dump an older culeak
 * wrote left out. */
static uint64_t interp_word(struct py_heap *h, uint32_t field)
{
    uint64_t at = h->objects.rt->interp + field;
    return field == PY_NONE || cl_target_left_out(h->objects.rt->t, at) ? 0
                                                                        : py_word(&h->objects, at);
}

#define MAX_ATEXIT 4096
#define NSIG_HANDLERS 65 /* Linux's NSIG: _PyRuntime.signals.handlers' length */

/* atexit's callbacks: 3.10-3.13 an array of pointers to {func, args, kwargs}, 3.14 a list. */
static void atexit_roots(struct py_heap *h)
{
    const struct py_layout *l = h->objects.rt->l;
    uint64_t callbacks = interp_word(h, l->is_atexit_callbacks);
    if (!callbacks)
        return;
    if (l->is_atexit_ncallbacks == PY_NONE) {
        add_self_root(h, "<atexit callbacks>", callbacks, NULL);
        return;
    }
    int32_t n = 0;
    char name[64];
    if (cl_read(h->objects.rt->t, h->objects.rt->interp + l->is_atexit_ncallbacks, &n, sizeof n))
        return;
    for (int32_t i = 0; i < n && i < MAX_ATEXIT; i++) {
        uint64_t cb = py_word(&h->objects, callbacks + 8 * (uint64_t)i);
        snprintf(name, sizeof name, "<atexit callback %d>", i);
        for (unsigned k = 0; cb && k < 3; k++) /* func, args, kwargs */
            add_self_root(h, name, py_word(&h->objects, cb + 8 * k), NULL);
    }
}

#define TYPE_CACHE_ENTRIES 4096 /* 1 << MCACHE_SIZE_EXP, 3.9-3.14 */
#define TYPE_CACHE_ENTRY 24 /* {unsigned version; PyObject *name; PyObject *value;} */

/* The type attribute cache's names: each entry holds a reference to the name it caches (or to
 * None, cleared), and a borrowed one to the value (Objects/typeobject.c: _PyType_Lookup,
 * type_cache_clear). Counted C references, no roots: a name nothing else holds is no object of
 * the program's, and 4096 roots would take their share of a --max-objects walk first. */
static void type_cache_refs(struct py_heap *h)
{
    const struct py_runtime *rt = h->objects.rt;
    uint64_t cache = rt->l->is_type_cache != PY_NONE ? rt->interp + rt->l->is_type_cache : 0;
    /* 3.9: typeobject.c's static method_cache, where the runtime has a symbol table */
    if (!cache && !cl_module_symbol_optional(rt->module, "method_cache", &cache, NULL))
        return;
    uint64_t entries[TYPE_CACHE_ENTRIES * TYPE_CACHE_ENTRY / 8];
    /* a dump an older culeak wrote has none of it: its names stay unexplained */
    if (!cache || cl_target_left_out(rt->t, cache) ||
        cl_target_left_out(rt->t, cache + sizeof entries - 1) ||
        cl_read(rt->t, cache, entries, sizeof entries))
        return;
    for (size_t k = 0; k < TYPE_CACHE_ENTRIES; k++)
        py_heap_add_c_ref(h, entries[k * TYPE_CACHE_ENTRY / 8 + 1], "<type attribute cache>");
}

/* Roots for what the interpreter holds in C on a program's behalf: what it registered (codec
 * search functions and error handlers, audit hooks, atexit callbacks, signal handlers,
 * sys.monitoring callables) and what it keeps (importlib, its dict, builtins' copy). Each is a C
 * reference the balance counts, and a root where nothing else reaches the object. */
static void c_roots(struct py_heap *h)
{
    struct py_objects *o = &h->objects;
    const struct py_layout *l = o->rt->l;
    static const struct {
        size_t field;
        const char *name;
    } fields[] = {
        {offsetof(struct py_layout, is_codec_search_path), "<codec search functions>"},
        {offsetof(struct py_layout, is_codec_search_cache), "<codec cache>"},
        {offsetof(struct py_layout, is_codec_error_registry), "<codec error handlers>"},
        {offsetof(struct py_layout, is_audit_hooks), "<audit hooks>"},
        {offsetof(struct py_layout, is_importlib), "<importlib>"},
        {offsetof(struct py_layout, is_interp_dict), "<interpreter dict>"},
        {offsetof(struct py_layout, is_builtins_copy), "<builtins copy>"},
    };
    for (size_t k = 0; k < sizeof fields / sizeof *fields; k++) {
        uint32_t field;
        memcpy(&field, (const char *)l + fields[k].field, sizeof field);
        add_self_root(h, fields[k].name, interp_word(h, field), NULL);
    }
    atexit_roots(h);
    type_cache_refs(h);
    char name[96];
    for (unsigned k = 0; l->is_monitoring_callables != PY_NONE && k < l->monitoring_callables;
         k++) {
        uint64_t f = py_word(o, o->rt->interp + l->is_monitoring_callables + 8 * (uint64_t)k);
        unsigned events = l->monitoring_callables / 8; /* 8 tools (PY_MONITORING_TOOL_IDS) */
        snprintf(name, sizeof name, "<sys.monitoring tool %u, event %u>", k / events, k % events);
        add_self_root(h, name, f, NULL);
    }
    uint64_t handlers = l->rt_signal_handlers != PY_NONE ? o->rt->runtime + l->rt_signal_handlers
                                                         : o->rt->signal_handlers;
    for (int sig = 1; handlers && sig < NSIG_HANDLERS; sig++) {
        /* {tripped, func}: the handler at +8 */
        uint64_t f = py_word(o, handlers + 16 * (uint64_t)sig + 8);
        const char *abbrev = sigabbrev_np(sig);
        if (abbrev)
            snprintf(name, sizeof name, "<signal SIG%s>", abbrev);
        else
            snprintf(name, sizeof name, "<signal %d>", sig);
        add_self_root(h, name, f, NULL);
    }
}

#define MAX_KEPT_ARRAY (1u << 16) /* words of an array of references the interpreter keeps */

/* The words [at, at + 8 * n) that point at objects the target holds, each a reference root;
 * read only where the target holds them (a dump an older culeak wrote has none of them). */
static void array_roots(struct py_heap *h, const char *name, uint64_t at, uint64_t n)
{
    struct cl_target *t = h->objects.rt->t;
    uint64_t words[512];
    n = n < MAX_KEPT_ARRAY ? n : MAX_KEPT_ARRAY;
    for (uint64_t done = 0; done < n; done += 512) {
        size_t m = n - done < 512 ? (size_t)(n - done) : 512;
        if (cl_read_held(t, at + 8 * done, words, 8 * m))
            return;
        for (size_t k = 0; k < m; k++)
            if (!(words[k] & 7))
                add_self_root(h, name, words[k], NULL);
    }
}

#define NSMALL_INTS 262 /* _PY_NSMALLNEGINTS + _PY_NSMALLPOSINTS: -5..256 */
#define NCACHED_CHARS 257 /* the empty string, then one per byte value */

/* What the interpreter keeps in arrays and lists of its own, a reference each:
 * - _PyUnicode_FromId's strs for _Py_IDENTIFIERs (an extension's, ctypes' `_type_`): 3.10+ in
 *   interp->unicode.ids {Py_ssize_t size; PyObject **array}, 3.9 on the list static_strings
 *   of _Py_Identifier {next, string, object} (Objects/unicodeobject.c);
 * - 3.9-3.10's small ints, -5..256 (interp->small_ints; Objects/longobject.c: _PyLong_Init);
 * - 3.9-3.10's one-character str and bytes caches, each its empty string then 256 characters
 *   (3.10: interp->unicode, interp->bytes; 3.9: statics; 3.11 made them static);
 * - 3.9-3.11's slot names, slotdefs[].name_strobj (Objects/typeobject.c: init_slotdefs);
 * - 3.9's ast state, the static global_ast_state (an int, then PyObject *s only), which 3.10
 *   moved to the interpreter (is_ast);
 * - 3.9-3.11's statics of one object each: the cache of extension modules imported, Token.MISSING
 *   and contextvars' empty map.
 * Statics are found by their symbols, where the interpreter's table has them. */
static void kept_array_roots(struct py_heap *h)
{
    const struct py_runtime *rt = h->objects.rt;
    const struct py_layout *l = rt->l;
    struct cl_target *t = rt->t;
    uint64_t ids[2], at, size, word;
    if (l->is_unicode_ids != PY_NONE &&
        !cl_read_held(t, rt->interp + l->is_unicode_ids, ids, sizeof ids))
        array_roots(h, "<_Py_IDENTIFIER strings>", ids[1], ids[0]);
    if (l->is_small_ints != PY_NONE)
        array_roots(h, "<small ints>", rt->interp + l->is_small_ints, NSMALL_INTS);
    if (l->is_unicode_cache != PY_NONE)
        array_roots(h, "<one-character strs>", rt->interp + l->is_unicode_cache, NCACHED_CHARS);
    if (l->is_bytes_cache != PY_NONE)
        array_roots(h, "<one-character bytes>", rt->interp + l->is_bytes_cache, NCACHED_CHARS);
    if (!rt->module)
        return;
    static const struct {
        const char *symbol, *root;
    } statics[] = {
        {"unicode_empty", "<one-character strs>"},
        {"unicode_latin1", "<one-character strs>"},
        {"nullstring", "<one-character bytes>"},
        {"characters", "<one-character bytes>"},
        /* import.c's dict of extension modules loaded, {(filename, name): def} */
        {"extensions", "<extension modules imported>"},
        /* context.c's Token.MISSING, hamt.c's empty map and its root node (3.12: static) */
        {"_token_missing", "<contextvars.Token.MISSING>"},
        {"_empty_hamt", "<contextvars' empty map>"},
        {"_empty_bitmap_node", "<contextvars' empty map>"},
    };
    for (size_t k = 0; k < sizeof statics / sizeof *statics; k++)
        if (cl_module_symbol_optional(rt->module, statics[k].symbol, &at, &size))
            array_roots(h, statics[k].root, at, size / 8);
    if (l->is_ast == PY_NONE &&
        cl_module_symbol_optional(rt->module, "global_ast_state", &at, &size) && size >= 16)
        array_roots(h, "<ast state>", at + 8, size / 8 - 1); /* past `initialized` */
    if (l->slotdef_size != PY_NONE && cl_module_symbol_optional(rt->module, "slotdefs", &at, &size))
        for (uint64_t k = 0; k < size / l->slotdef_size && k < MAX_KEPT_ARRAY; k++)
            array_roots(h, "<type slot names>", at + k * l->slotdef_size + l->slotdef_name, 1);
    if (l->id_object == PY_NONE ||
        !cl_module_symbol_optional(rt->module, "static_strings", &at, NULL) ||
        cl_read_held(t, at, &word, sizeof word))
        return;
    struct cl_addrmap seen = {0};
    for (unsigned k = 0; word && k < MAX_KEPT_ARRAY && !revisited(&seen, word); k++) {
        array_roots(h, "<_Py_IDENTIFIER strings>", word + l->id_object, 1);
        if (cl_read_held(t, word, &word, sizeof word)) /* next, the first word */
            break;
    }
    cl_addrmap_free(&seen);
}

/* Parser `parser`'s name, `<argument parser: replace()>`, after the function it parses for:
 * fname, or what its format says after ':' ("O|O:from_bytes"); false where neither reads, as
 * in a list that is no list of parsers. */
static bool arg_parser_name(const struct py_runtime *rt, uint64_t parser, char *out, size_t cap)
{
    const struct py_layout *l = rt->l;
    char text[64];
    uint64_t fname, format;
    const char *fn = NULL;
    /* the texts lie in read-only data, which a process is not copied for */
    if (!cl_read_held(rt->t, parser + l->argparser_fname, &fname, sizeof fname) && fname &&
        !cl_target_left_out(rt->t, fname) && !cl_read_cstr(rt->t, fname, text, sizeof text))
        fn = text;
    else if (!cl_read_held(rt->t, parser + l->argparser_format, &format, sizeof format) && format &&
             !cl_target_left_out(rt->t, format) &&
             !cl_read_cstr(rt->t, format, text, sizeof text) && strchr(text, ':'))
        fn = strchr(text, ':') + 1;
    if (fn)
        snprintf(out, cap, "<argument parser: %s()>", fn);
    return fn != NULL;
}

/* Whether parser `parser` is one as the layout says: its kwtuple a tuple (or none yet) and its
 * name readable (into name). */
static bool arg_parser_fits(struct py_heap *h, uint64_t parser, uint64_t *kwtuple, char *name,
                            size_t cap)
{
    const struct py_runtime *rt = h->objects.rt;
    const struct py_type *ty;
    return !cl_read_held(rt->t, parser + rt->l->argparser_kwtuple, kwtuple, sizeof *kwtuple) &&
           (!*kwtuple ||
            (cl_target_holds(rt->t, *kwtuple) && (ty = py_object_type(&h->objects, *kwtuple)) &&
             ty->family == PY_F_TUPLE)) &&
           arg_parser_name(rt, parser, name, cap);
}

/* Where the list of parsers starts: the symbol static_arg_parsers (3.9-3.11; none in a stripped
 * runtime), or in _PyRuntime (3.12+) where its first parser fits, of the places the variant's
 * patch releases keep it; 0 for none. */
static uint64_t arg_parsers_head(struct py_heap *h)
{
    const struct py_runtime *rt = h->objects.rt;
    const struct py_layout *l = rt->l;
    uint64_t at, parser, kwtuple;
    char name[112];
    if (l->rt_arg_parsers == PY_NONE)
        return rt->module && cl_module_symbol_optional(rt->module, "static_arg_parsers", &at, NULL)
                   ? at
                   : 0;
    uint32_t places[] = {l->rt_arg_parsers, l->rt_arg_parsers_alt};
    for (size_t k = 0; k < 2 && places[k] != PY_NONE; k++) {
        at = rt->runtime + places[k];
        if (!cl_read_held(rt->t, at, &parser, sizeof parser) && parser &&
            arg_parser_fits(h, parser, &kwtuple, name, sizeof name))
            return at;
    }
    return 0;
}

/* Argument Clinic's parsers, each a root for its keyword names' tuple: `<argument parser:
 * replace()>`. Each parser is checked as read; a list that stops fitting is said, and what the
 * rest keep is left unexplained. */
static void arg_parser_roots(struct py_heap *h)
{
    struct cl_target *t = h->objects.rt->t;
    uint64_t head = arg_parsers_head(h), parser, kwtuple;
    struct cl_addrmap seen = {0};
    char name[112];
    for (unsigned k = 0;
         head && k < MAX_KEPT_ARRAY && !cl_read_held(t, head, &parser, sizeof parser) && parser &&
         !revisited(&seen, parser);
         k++) {
        if (!arg_parser_fits(h, parser, &kwtuple, name, sizeof name)) {
            cl_note_add(&h->warnings,
                        "Argument Clinic's parser %u (0x%llx) does not fit "
                        "culeak's layout: the keyword names the parsers keep are not all "
                        "explained",
                        k, (unsigned long long)parser);
            break;
        }
        add_self_root(h, name, kwtuple, NULL);
        head = parser + h->objects.rt->l->argparser_next;
    }
    cl_addrmap_free(&seen);
}

/* The static types the interpreter keeps slots for (3.12+), each a root `<static type NAME>` where
 * the walk did not meet it, so that the dict and subclasses its slot holds are reached through
 * it (cpython/referents.c), as a type the walk meets has them, and counted once. */
static void static_type_roots(struct py_heap *h)
{
    const struct py_runtime *rt = h->objects.rt;
    const struct py_layout *l = rt->l;
    const struct {
        uint32_t at, count_before, max;
    } arrays[] = {{l->is_static_types, 8, PY_STATIC_TYPES},
                  {l->is_static_ext_types, 16, PY_STATIC_EXT_TYPES}};
    char name[112];
    for (size_t a = 0; a < sizeof arrays / sizeof *arrays; a++) {
        uint64_t base = rt->interp + arrays[a].at, n, type;
        if (arrays[a].at == PY_NONE ||
            cl_read_held(rt->t, base - arrays[a].count_before, &n, sizeof n))
            continue;
        for (uint64_t k = 0; k < n && k < arrays[a].max; k++) {
            const struct py_type *ty;
            if (cl_read_held(rt->t, base + k * l->static_type_size, &type, sizeof type) || !type ||
                py_heap_find(h, type) != PY_NO_NODE || !cl_target_holds(rt->t, type) ||
                !(ty = py_type_at(&h->objects, type)))
                continue;
            snprintf(name, sizeof name, "<static type %s>", ty->name);
            add_self_root(h, name, type, NULL);
        }
    }
}

/* What the interpreter keeps for modules that also name it (warnings' filters, once registry and
 * default action; gc.callbacks; the errno map and ExceptionGroup; __import__, typing's C types,
 * the single-phase modules by their def's index, os.register_at_fork's hooks; the ast module's
 * types and singletons): C references, and roots only where the walk from the modules did not
 * reach them, so that `warnings.filters` keeps its module's name. Read after that walk, so that a walk
 * --max-objects cuts short (a tensor evidence dump's) meets what it met before they were read. */
/* What CPython's entry holds while the main thread's outermost frame runs __main__'s code
 * (`python FILE`, `python -c`, PyRun_*): run_mod the code it compiled, PyEval_EvalCode (3.11+)
 * the function it made of it; for a file, _PyRun_SimpleFileObject __main__ itself and
 * pymain_run_file the file's name, which is __main__.__file__ and the code's co_filename. None
 * of these is an object's: C references, each a root named after its holder. A bottom frame
 * that runs other globals (python -m: runpy's) is no such entry, and holds none of them. Read
 * once the walk is done, from what it read (a dump an older culeak wrote holds no more). */
static void entry_roots(struct py_heap *h)
{
    struct py_objects *o = &h->objects;
    const struct py_layout *l = o->rt->l;
    struct cl_target *t = o->rt->t;
    uint64_t frame = h->entry_frame, main = h->main_module;
    uint64_t at_globals = frame + (l->frames == PY_FRAMES_OBJECTS ? l->f_globals : l->if_globals);
    if (!frame || !main || !cl_target_holds(t, at_globals) ||
        !cl_target_holds(t, main + l->module_dict) ||
        py_frame_globals(o, frame) != py_word(o, main + l->module_dict))
        return;
    uint64_t code = py_frame_code(o, frame);
    if (!code)
        return;
    add_self_root(h, "<python's entry: the code it runs (run_mod)>", code, NULL);
    if (l->frames != PY_FRAMES_OBJECTS && cl_target_holds(t, frame + l->if_funcobj))
        add_self_root(h, "<python's entry: its function (PyEval_EvalCode)>",
                      py_frame_function(o, frame), NULL);
    uint64_t file = h->main_file;
    if (file && cl_target_holds(t, code + l->co_filename) &&
        file == py_word(o, code + l->co_filename)) {
        add_self_root(h, "<python's entry: __main__ (_PyRun_SimpleFileObject)>", main, NULL);
        add_self_root(h, "<python's entry: the script's path (pymain_run_file)>", file, NULL);
    }
}

static void interpreter_kept_roots(struct py_heap *h)
{
    const struct py_layout *l = h->objects.rt->l;
    static const char *const warnings[] = {"<warnings filters>", "<warnings once registry>",
                                           "<warnings default action>"};
    for (uint32_t k = 0; l->is_warnings != PY_NONE && k < 3; k++)
        add_self_root(h, warnings[k], interp_word(h, l->is_warnings + 8 * k), NULL);
    add_self_root(h, "<gc callbacks>", interp_word(h, l->is_gc_callbacks), NULL);
    add_self_root(h, "<errno map>", interp_word(h, l->is_errnomap), NULL);
    add_self_root(h, "<ExceptionGroup>", interp_word(h, l->is_exception_group), NULL);
    add_self_root(h, "<import function>", interp_word(h, l->is_import_func), NULL);
    entry_roots(h);
    for (uint32_t k = 0; l->is_typing_types != PY_NONE && k < l->typing_types; k++)
        add_self_root(h, "<typing's C types>", interp_word(h, l->is_typing_types + 8 * k), NULL);
    add_self_root(h, "<modules by index>", interp_word(h, l->is_modules_by_index), NULL);
    static const char *const forkers[] = {"<os.register_at_fork before>",
                                          "<os.register_at_fork after_in_parent>",
                                          "<os.register_at_fork after_in_child>"};
    for (uint32_t k = 0; l->is_forkers != PY_NONE && k < 3; k++)
        add_self_root(h, forkers[k], interp_word(h, l->is_forkers + 8 * k), NULL);
    /* Python/Python-ast.c: struct ast_state, every member from AST_type on an owned reference */
    for (uint32_t at = l->ast_first; l->is_ast != PY_NONE && at + 8 <= l->ast_state_size; at += 8)
        add_self_root(h, "<ast state>", interp_word(h, l->is_ast + at), NULL);
    kept_array_roots(h);
    arg_parser_roots(h);
    static_type_roots(h);
}

static void seed_roots(struct py_heap *h)
{
    struct py_objects *o = &h->objects;
    struct py_runtime *rt = o->rt;
    const struct py_layout *l = rt->l;
    uint64_t modules = py_word(o, rt->interp + l->is_modules);
    /* __main__ first: where both reach an object at the same depth, its path is the one users
     * want. */
    struct module_roots mr = {h, modules, true, {.o = o}};
    py_dict_items(o, modules, add_module_root, &mr);
    mr.main_only = false;
    py_dict_items(o, modules, add_module_root, &mr);
    py_strkeys_free(&mr.keys);

    uint64_t main_ident = py_word(o, rt->runtime + l->rt_main_thread);
    uint64_t ts = py_word(o, rt->interp + l->is_threads_head);
    struct cl_addrmap seen = {0};
    for (int i = 0; ts && i < MAX_THREADS; i++, ts = py_word(o, ts + l->ts_next)) {
        if (revisited(&seen, ts)) {
            cl_note_add(&h->warnings,
                        "the interpreter's thread list loops back after %d threads "
                        "(a corrupt or changing list): threads after are missing",
                        i);
            break;
        }
        thread_roots(h, ts, modules, py_word(o, ts + l->ts_thread_id) == main_ident);
    }
    cl_addrmap_free(&seen);

    add_self_root(h, "sys", py_word(o, rt->interp + l->is_sysdict), ".__dict__");
    add_self_root(h, "builtins", py_word(o, rt->interp + l->is_builtins), ".__dict__");
    uint64_t gc = rt->interp + l->is_gc;
    add_self_root(h, "gc.garbage", py_word(o, gc + l->gc_garbage), NULL);
    py_heap_add_c_ref(h, modules, "sys.modules");
    c_roots(h);
    if (l->is_interned != PY_NONE)
        h->interned = py_word(o, rt->interp + l->is_interned);
}

/* Expands nodes [from, n) and everything they discover. */
static void expand(struct py_heap *h, struct cl_progress *progress, uint32_t from)
{
    for (uint32_t i = from; i < h->n; i++) {
        /* recorded as i is expanded: in node order; its class edge by py_emit_class */
        h->edges.of[i] = (struct py_node_edges){(uint32_t)h->edges.n, PY_NO_NODE};
        struct heap_sink sink = {h, i, h->nodes[i].root};
        struct py_emitter e = heap_emitter(&sink);
        py_referents(&e, h->nodes[i].addr, py_node_type(h, i));
        if ((i & 0xfff) == 0)
            cl_progress_tick(progress, i, h->objects.rt->t->bytes_read);
    }
}

/* Nodes no root reached, now reached from a root by a confirmed word, and what they reach. */
struct promotion {
    uint32_t *queue;
    size_t tail, cap;
};

/* Takes a word that is a reference to node i, from root by the root edge (edge, payload), where
 * i's count holds a reference nothing else explains. A node no root reached is reached from root
 * then, queued for what it reaches. */
static void take_word(struct py_heap *h, struct promotion *p, uint32_t root, uint32_t i,
                      enum py_edge edge, uint64_t payload)
{
    struct heap_sink sink = {h, PY_NO_NODE, root};
    uint32_t re;
    if (i == PY_NO_NODE || root == PY_NO_NODE || !py_books_confirm(h, i) ||
        (re = add_root_edge(h, &sink, i, edge, payload)) == PY_NO_EDGE || py_node_reachable(h, i) ||
        !CL_VEC_RESERVE(p->queue, p->tail, p->cap))
        return;
    h->nodes[i].root = root;
    h->nodes[i].parent = PY_NO_NODE;
    h->nodes[i].via = re;
    p->queue[p->tail++] = i;
}

/* take_word for a word that may be a reference, when the balance confirms it: i is no root's
 * yet (an object a root reaches may be held from C as well: its unexplained reference is not
 * taken on a guess) and its count holds a reference nothing else explains. */
static void confirm_word(struct py_heap *h, struct promotion *p, uint32_t root, uint32_t i,
                         enum py_edge edge, uint64_t payload)
{
    if (i != PY_NO_NODE && !py_node_reachable(h, i))
        take_word(h, p, root, i, edge, payload);
}

/* What the confirmed words reach that no root did, by the shortest chains from them. */
static void promote(struct py_heap *h, struct promotion *p)
{
    for (size_t head = 0; head < p->tail; head++) {
        uint32_t i = p->queue[head];
        h->npromoted++;
        for (uint32_t k = 0, m = py_node_nedges(h, i); k < m; k++) {
            uint32_t e = py_node_edge(h, i, k), d = py_edge_dst(h, e);
            if (d == PY_NO_NODE || py_node_reachable(h, d) ||
                !CL_VEC_RESERVE(p->queue, p->tail, p->cap))
                continue;
            h->nodes[d] = (struct py_node){
                h->nodes[d].addr, i, h->nodes[i].root, h->nodes[d].type, h->nodes[d].tracked, e};
            p->queue[p->tail++] = d;
        }
    }
    free(p->queue);
    *p = (struct promotion){0};
}

uint64_t py_opaque_words(struct py_objects *o, struct py_type *ty)
{
    if (ty->opaque_known)
        return ty->opaque_mask;
    ty->opaque_known = true;
    ty->opaque_mask = 0;
    if (ty->family != PY_F_OBJECT && ty->family != PY_F_OTHER)
        return 0;
    int64_t words = ty->basicsize / 8 < PY_OPAQUE_WORDS ? ty->basicsize / 8 : PY_OPAQUE_WORDS;
    for (int64_t k = ty->itemsize ? 3 : 2; k < words; k++)
        ty->opaque_mask |= 1ull << k;
    int n;
    const struct py_member *m = py_type_slots(o, ty, &n);
    for (int k = 0; k < n; k++)
        if (m[k].offset % 8 == 0 && m[k].offset / 8 < PY_OPAQUE_WORDS)
            ty->opaque_mask &= ~(1ull << (m[k].offset / 8));
    int64_t read[] = {ty->dictoffset, ty->weaklistoffset};
    for (size_t k = 0; k < 2; k++)
        if (read[k] > 0 && read[k] % 8 == 0 && read[k] / 8 < PY_OPAQUE_WORDS)
            ty->opaque_mask &= ~(1ull << (read[k] / 8));
    return ty->opaque_mask;
}

bool py_fields_read(struct py_objects *o, struct py_type *ty)
{
    if (ty->family != PY_F_TYPE || ty->addr == o->rt->family_type[PY_F_TYPE])
        return py_opaque_words(o, ty) == 0;
    /* A metaclass: a class statement's traverses as `type` does; a C one (static, or made with
     * its module: ht_module) may keep more, as ctypes' keep their types' StgDict or StgInfo. */
    return ty->heap && !py_word(o, ty->addr + o->rt->l->ht_module);
}

/* A word that may be a reference, not yet taken: a library's static word (holder PY_NO_NODE, at
 * its address) or a word at offset `at` of node holder's memory that no reader knows, its own
 * struct's or (in_state) its C module's state, or a field of it that keeps a reference no
 * reader counts (field: its name). */
struct word_ref {
    uint64_t object, at;
    uint32_t holder; /* on_stack: the running frame's root */
    bool in_state, on_stack; /* on_stack: a slot of the frame's stack (payload: its edge's) */
    const char *field;
    uint64_t payload;
};

struct word_refs {
    struct word_ref *v;
    size_t n, cap;
};

static void add_word_ref(struct py_heap *h, struct word_refs *w, struct word_ref r)
{
    if (!CL_VEC_RESERVE(w->v, w->n, w->cap)) {
        h->objects.oom++;
        return;
    }
    w->v[w->n++] = r;
}

static int by_word_object(const void *a, const void *b)
{
    const struct word_ref *x = a, *y = b;
    if (x->object != y->object)
        return x->object < y->object ? -1 : 1;
    return (x->at > y->at) - (x->at < y->at);
}

/* The root a word of node i's, at offset off, is a reference from: `path.<Type+off?>` (its
 * module state's: `path.<state+off?>`), of the kind of i's root; PY_NO_NODE where i has no
 * path. */
static uint32_t opaque_word_root(struct py_heap *h, const struct word_ref *r)
{
    char path[2048], root[2200];
    uint32_t i = r->holder;
    if (h->nodes[i].root == PY_NO_NODE || !py_heap_path(h, i, path, sizeof path))
        return PY_NO_NODE;
    if (r->field)
        snprintf(root, sizeof root, "%s.<%s>", path, r->field);
    else
        snprintf(root, sizeof root, "%s.<%s+%u?>", path,
                 r->in_state ? "state" : py_node_type(h, i)->name, (unsigned)r->at);
    return add_root(h, root, (enum py_root_kind)h->root_kinds[h->nodes[i].root]);
}

/* A word of node i's memory that may be a reference (confirm_opaque_words). */
static void opaque_word(struct py_heap *h, struct promotion *p, struct word_refs *left,
                        struct word_ref r)
{
    uint32_t j = py_heap_find(h, r.object);
    if (j == PY_NO_NODE || py_books_unexplained(h, j) <= 0)
        return;
    if (py_node_reachable(h, j))
        add_word_ref(h, left, r);
    else
        confirm_word(h, p, opaque_word_root(h, &r), j, PY_E_SELF, 0);
}

/* A type's tp_doc that points at a str's characters: numpy's add_docstring sets it so and keeps
 * the str with a reference of its own (numpy/_core/src/multiarray/compiled_base.c: "hold on to
 * string (leaks reference)"); CPython's own types keep a copy, or a C literal. */
static void doc_word(struct py_heap *h, struct promotion *p, struct word_refs *left, uint32_t i)
{
    struct py_objects *o = &h->objects;
    const struct py_layout *l = o->rt->l;
    uint64_t doc, str;
    if (cl_read_held(o->rt->t, h->nodes[i].addr + l->tp_doc, &doc, sizeof doc) ||
        doc <= l->ascii_data)
        return;
    str = doc - l->ascii_data;
    if (py_heap_find(h, str) != PY_NO_NODE && cl_target_holds_range(o->rt->t, str, l->ascii_data) &&
        py_str_chars(o, str) == doc)
        opaque_word(
            h, p, left,
            (struct word_ref){.object = str, .at = l->tp_doc, .holder = i, .field = "tp_doc"});
}

#define MAX_MODULE_STATE (1u << 20) /* a C module's state read for references, at most */

/* The words of a C module's state (PyModuleDef.m_size bytes at md_state; 3.15: md_state_size),
 * which its m_traverse visits and no reader knows: a C module keeps its types, singletons and
 * caches there (the static_refs test extension's state, tests/integration/test_statics.py). */
static void module_state_words(struct py_heap *h, struct promotion *p, struct word_refs *left,
                               uint32_t i)
{
    struct py_objects *o = &h->objects;
    const struct py_layout *l = o->rt->l;
    uint64_t mod = h->nodes[i].addr, state = py_word(o, mod + l->module_state), words[512];
    uint64_t size_at = mod + l->module_state_size;
    if (l->module_state_size == PY_NONE) {
        uint64_t def = py_word(o, mod + l->module_def);
        if (!def)
            return;
        size_at = def + l->moduledef_size;
    }
    int64_t size = 0;
    /* a dump an older culeak wrote has none of it */
    if (!state || (state & 7) || cl_target_left_out(o->rt->t, size_at) ||
        cl_read(o->rt->t, size_at, &size, sizeof size) || size <= 0)
        return;
    size = size < MAX_MODULE_STATE ? size : MAX_MODULE_STATE;
    for (int64_t at = 0; at + 8 <= size; at += (int64_t)sizeof words) {
        size_t len =
            (size_t)(size - at) / 8 * 8 < sizeof words ? (size_t)(size - at) / 8 * 8 : sizeof words;
        if (cl_target_left_out(o->rt->t, state + (uint64_t)at) ||
            cl_target_left_out(o->rt->t, state + (uint64_t)at + len - 1) ||
            cl_read(o->rt->t, state + (uint64_t)at, words, len))
            return;
        for (size_t k = 0; k < len / 8; k++)
            opaque_word(
                h, p, left,
                (struct word_ref){
                    .object = words[k], .at = (uint64_t)at + 8 * k, .holder = i, .in_state = true});
    }
}

/* The running frames' stack words (read above a stack pointer the frame did not save): one to
 * an object no root reaches becomes an edge from the frame's root where the balance confirms it
 * (confirm_word); one to an object a root reaches is left in `left`, for confirm_word_refs to
 * take with the frames' other words to that object, once every other word is taken (the
 * callable a frame is calling, which its module holds too). A word the balance refuses (stale,
 * or explained already) is no edge. */
static void confirm_inferred(struct py_heap *h, struct word_refs *left)
{
    struct promotion p = {0};
    for (size_t k = 0; k < h->ninferred; k++) {
        const struct py_inferred *c = &h->inferred[k];
        uint32_t i = py_heap_find(h, c->addr);
        if (i != PY_NO_NODE && py_node_reachable(h, i) && py_books_unexplained(h, i) > 0)
            add_word_ref(
                h, left,
                (struct word_ref){
                    .object = c->addr, .holder = c->root, .on_stack = true, .payload = c->payload});
        else
            confirm_word(h, &p, c->root, i, PY_E_STACK, c->payload);
    }
    promote(h, &p);
}

/* The words of objects of C types culeak has no reader for (py_opaque_words), in objects a root
 * reaches: each may be a reference, and one the balance confirms (confirm_word) is an edge from
 * a root named after the object and the word: `path.<Type+off?>`. So what such an object alone
 * holds, found on the GC lists, is named through it; a freed or stale word, pointing at no
 * object or at one whose count is explained, makes no holder. A word to an object a root
 * reaches, whose count holds references nothing explains, is left in `left` for
 * confirm_word_refs, which takes it only with all the others to that object. */
static void confirm_opaque_words(struct py_heap *h, struct word_refs *left)
{
    struct py_objects *o = &h->objects;
    struct promotion p = {0};
    for (uint32_t i = 0; i < h->n; i++) {
        struct py_type *ty = py_node_type(h, i);
        if (ty->family == PY_F_MODULE && py_node_reachable(h, i))
            module_state_words(h, &p, left, i);
        if (ty->family == PY_F_TYPE && py_node_reachable(h, i))
            doc_word(h, &p, left, i);
        uint64_t mask = py_node_reachable(h, i) ? py_opaque_words(o, ty) : 0,
                 words[PY_OPAQUE_WORDS];
        if (!mask ||
            cl_read(o->rt->t, h->nodes[i].addr, words,
                    (size_t)ty->basicsize < sizeof words ? (size_t)ty->basicsize : sizeof words))
            continue;
        for (unsigned k = 2; k < PY_OPAQUE_WORDS && mask >> k; k++)
            if (mask >> k & 1)
                opaque_word(h, &p, left,
                            (struct word_ref){.object = words[k], .at = 8 * k, .holder = i});
    }
    promote(h, &p);
}

/* The words of the libraries' static data that point at objects (cpython/statics.h), read once
 * the GC lists are walked, sorted by object; none, with a warning, when out of memory. */
static struct word_refs find_statics(struct py_heap *h)
{
    struct py_static_word *w;
    size_t n;
    struct word_refs refs = {0};
    if (py_statics_find(h, &w, &n)) {
        cl_note_add(&h->warnings, "out of memory reading the libraries' static data: references "
                                  "they hold to Python objects are not explained");
        return refs;
    }
    for (size_t k = 0; k < n; k++)
        add_word_ref(h, &refs,
                     (struct word_ref){.object = w[k].object, .at = w[k].at, .holder = PY_NO_NODE});
    free(w);
    if (refs.n)
        qsort(refs.v, refs.n, sizeof *refs.v, by_word_object);
    return refs;
}

/* The objects those words point at that the walk has not met, as nodes no root reaches: an
 * untracked object only C holds (a Cython module's code objects, which hold its names) is on no
 * GC list, and its own references would go unexplained. */
static void seed_statics(struct py_heap *h, const struct word_refs *w)
{
    struct heap_sink e = {h, PY_NO_NODE, PY_NO_NODE};
    for (size_t k = 0; k < w->n; k++)
        if (!k || w->v[k].object != w->v[k - 1].object)
            heap_edge(&e, w->v[k].object, PY_E_SELF, 0);
}

/* The words to each object, sorted by object (by_word_object): all of an object's are references where they are exactly as many as its references not explained,
 * whether a root reaches it or not (each is then as certain as the balance can make it); none
 * where they are not (a word is stale or borrowed, or something else unseen holds it too). A
 * static word is a root named after its library and symbol, an object's word one named after
 * the object's path (opaque_word_root). */
static void confirm_word_refs(struct py_heap *h, const struct word_ref *w, size_t n)
{
    struct promotion p = {0};
    char name[256];
    for (size_t k = 0, end; k < n; k = end) {
        uint32_t j = py_heap_find(h, w[k].object);
        for (end = k; end < n && w[end].object == w[k].object;)
            end++;
        if (j == PY_NO_NODE || h->books.unexplained[j] != (int32_t)(end - k))
            continue;
        for (size_t i = k; i < end; i++) {
            uint32_t root;
            if (w[i].on_stack) {
                take_word(h, &p, w[i].holder, j, PY_E_STACK, w[i].payload);
                continue;
            }
            if (w[i].holder == PY_NO_NODE) {
                py_static_name(h, w[i].at, name, sizeof name);
                root = add_root(h, name, PY_ROOT_OTHER);
            } else {
                root = opaque_word_root(h, &w[i]);
            }
            take_word(h, &p, root, j, PY_E_SELF, 0);
        }
    }
    promote(h, &p);
}

/* The static words to objects with references left to explain, appended to `to`. */
static void pending_statics(struct py_heap *h, const struct word_refs *statics,
                            struct word_refs *to)
{
    for (size_t k = 0; k < statics->n; k++) {
        uint32_t j = py_heap_find(h, statics->v[k].object);
        if (j != PY_NO_NODE && py_books_unexplained(h, j) > 0)
            add_word_ref(h, to, statics->v[k]);
    }
}

/* The static words to objects with references left to explain, kept in h->statics_left. */
static void keep_statics_left(struct py_heap *h, const struct word_refs *statics)
{
    size_t cap = 0;
    for (size_t k = 0; k < statics->n; k++) {
        uint32_t j = py_heap_find(h, statics->v[k].object);
        if (j == PY_NO_NODE || py_books_unexplained(h, j) <= 0)
            continue;
        if (!CL_VEC_RESERVE(h->statics_left, h->nstatics_left, cap)) {
            h->objects.oom++;
            return;
        }
        h->statics_left[h->nstatics_left++] =
            (struct py_word_at){statics->v[k].at, statics->v[k].object};
    }
}

struct words_to {
    const struct py_word_at *v;
    uint64_t object;
};

static bool word_before(size_t i, const void *ctx)
{
    const struct words_to *q = ctx;
    return q->v[i].object < q->object;
}

size_t py_heap_statics_left(const struct py_heap *h, uint64_t addr, size_t *first)
{
    struct words_to q = {h->statics_left, addr};
    size_t end = *first = cl_partition_point(h->nstatics_left, word_before, &q);
    while (end < h->nstatics_left && h->statics_left[end].object == addr)
        end++;
    return end;
}

/* Once the walk holds --max-objects, no listed object can join it: the rest of the lists would
 * cost a read per object of the heap for nothing. */
static bool emit_gc_node(void *arg, uint64_t node)
{
    struct heap_sink *sink = arg;
    struct py_heap *h = sink->h;
    heap_edge(sink, node + h->objects.rt->l->gc_head_size, PY_E_SELF, 0);
    return h->n < h->max_objects;
}

/* Objects on the GC lists that no root reached: garbage cycles awaiting collection, or objects
 * held only from C. py_runtime_open has checked each list's first node; a break further in is a
 * corrupt or changing heap, said as a warning. */
static void seed_gc_lists(struct py_heap *h)
{
    struct py_objects *o = &h->objects;
    const struct py_layout *l = o->rt->l;
    uint64_t gc = o->rt->interp + l->is_gc;
    int32_t collecting = 0;
    (void)cl_read(o->rt->t, gc + l->gc_collecting, &collecting, sizeof collecting); /* 0: not */
    h->gc_collecting = collecting != 0;
    if (h->gc_collecting)
        cl_note_add(&h->warnings,
                    "the process was stopped during a garbage collection: GC "
                    "lists may be inconsistent, and unreachable objects may be missing");
    struct heap_sink e = {h, PY_NO_NODE, PY_NO_NODE};
    /* the smallest GC object: its PyGC_Head and a PyObject (which ob_size follows) */
    uint64_t bound = py_gc_list_bound(o->rt->t, l->gc_head_size + l->ob_size, MAX_GC_LIST);
    for (unsigned g = 0; g <= PY_GC_GENERATIONS && h->n < h->max_objects; g++) {
        uint64_t head = py_gc_list_head(l, gc, g);
        bool broken;
        uint64_t n = py_gc_list_walk(o->rt->t, head, bound, emit_gc_node, &e, &broken);
        if (broken)
            cl_note_add(&h->warnings, "GC generation %u list is broken after %llu objects", g,
                        (unsigned long long)n);
        h->gc_listed += n;
    }
}

static uint64_t default_max_objects(void)
{
    uint64_t available = cl_mem_available();
    uint64_t n = available ? available / 2 / BYTES_PER_OBJECT : FALLBACK_MAX_OBJECTS;
    return n < PY_NO_NODE ? n : PY_NO_NODE - 1; /* nodes are numbered with 32 bits */
}

/* Whether type derives from the instance base one of pybind11's internals made: a bound type, or
 * a Python subclass of one (whose metaclass may be its own: torch.distributed's Partial). */
static bool pybind11_instance_type(struct py_heap *h, uint64_t type)
{
    for (size_t k = 0; k < h->pybind11.nowned; k++)
        if (h->pybind11.owned[k].instance_base &&
            py_type_derives_from(&h->objects, type, h->pybind11.owned[k].addr))
            return true;
    return false;
}

/* pybind11 keeps, for each type of its instances whose C++ type infos it caches, a weak
 * reference whose callback (a bound C function) drops the cache when the type dies, and releases
 * it on purpose: that reference is pybind11's (pybind11/pybind11.h: all_type_info_get_cache). One
 * C reference each, where it is the weak reference's one reference not explained. */
static void pybind11_type_weakrefs(struct py_heap *h)
{
    struct py_objects *o = &h->objects;
    uint16_t callback_at = o->rt->l->weakref_callback;
    for (uint32_t i = 0; callback_at != PY_NONE && i < h->n; i++) {
        if (h->books.unexplained[i] != 1 || py_node_type(h, i)->family != PY_F_WEAKREF)
            continue;
        uint64_t callback = py_word(o, h->nodes[i].addr + callback_at);
        /* wr_object, the word before wr_callback (Include/cpython/weakrefobject.h) */
        uint64_t referent = py_word(o, h->nodes[i].addr + callback_at - 8);
        const struct py_type *cb = callback ? py_object_type(o, callback) : NULL;
        const struct py_type *type = referent ? py_type_at(o, referent) : NULL;
        if (!cb || cb->family != PY_F_CFUNCTION || !type || !pybind11_instance_type(h, referent))
            continue;
        char name[160];
        snprintf(name, sizeof name, "<pybind11: the weak reference that clears %s's type cache>",
                 type->name);
        (void)py_books_add_c_ref(h, i, name);
    }
}

int py_heap_build(struct py_runtime *rt, const struct py_walk_options *opt, struct py_heap *h,
                  struct cl_error *err)
{
    memset(h, 0, sizeof *h);
    py_objects_init(&h->objects, rt);
    h->objects.code_extra = opt ? opt->code_extra : NULL;
    h->objects.type_readers = opt ? opt->type_readers : NULL;
    h->objects.ntype_readers = opt ? opt->ntype_readers : 0;
    h->max_objects = opt && opt->max_objects ? opt->max_objects : default_max_objects();
    struct cl_progress progress;
    cl_progress_start(&progress, opt ? opt->progress : NULL, "walked");
    seed_roots(h);
    expand(h, &progress, 0);
    uint32_t walked = h->n;
    interpreter_kept_roots(h);
    expand(h, &progress, walked);
    h->nreachable = h->n;
    seed_gc_lists(h);
    expand(h, &progress, h->nreachable);
    struct word_refs statics = find_statics(h);
    uint32_t met = h->n;
    seed_statics(h, &statics);
    expand(h, &progress, met);
    cl_progress_done(&progress, h->n, rt->t->bytes_read);
    py_pybind11_types_read(&h->objects, &h->pybind11);
    if (h->pybind11.unread[0])
        cl_note_add(&h->warnings,
                    "pybind11's internals %s not read (no row for its version, or its map did "
                    "not check out): the C++ classes its types wrap are not named",
                    h->pybind11.unread);
    if (h->edges.of) /* closes the last node's edges */
        h->edges.of[h->n] = (struct py_node_edges){(uint32_t)h->edges.n, PY_NO_NODE};
    for (size_t i = 0; i < h->types_cap; i++) { /* class edges' ids are known now */
        uint32_t t = h->type_nodes[i];
        if (t != PY_NO_NODE && h->nodes[t].via == CLASS_VIA_PENDING)
            h->nodes[t].via = (uint32_t)h->edges.n + h->nodes[t].parent;
    }
    bool counted = h->n && py_books_count(h);
    if (counted) {
        for (size_t k = 0; k < h->pybind11.nowned; k++) {
            /* a type pybind11's internals made and keep: one reference each */
            uint32_t i = py_heap_find(h, h->pybind11.owned[k].addr);
            if (i != PY_NO_NODE && py_node_type(h, i)->family == PY_F_TYPE)
                (void)py_books_add_c_ref(h, i, h->pybind11.owned[k].name);
        }
        pybind11_type_weakrefs(h);
        /* a library's static word first: it was written there to be kept, where a running
         * frame's slot past its live depth may be stale (3.9's, seen holding an argument of a
         * call long returned) */
        confirm_word_refs(h, statics.v, statics.n);
        /* then the words left, together: an object that a static word and an unknown C
         * object's word both hold (a Cython module's code object, and its function's) balances
         * only with both */
        struct word_refs words = {0}, stack = {0};
        confirm_inferred(h, &stack);
        pending_statics(h, &statics, &words);
        confirm_opaque_words(h, &words);
        if (words.n)
            qsort(words.v, words.n, sizeof *words.v, by_word_object);
        confirm_word_refs(h, words.v, words.n);
        /* last, running frames' words to objects a root reaches, against what is left: a
         * slot past the live depth may be stale (a str the frame printed), and must not keep
         * the words written to be kept from balancing */
        if (stack.n)
            qsort(stack.v, stack.n, sizeof *stack.v, by_word_object);
        confirm_word_refs(h, stack.v, stack.n);
        free(words.v);
        free(stack.v);
        keep_statics_left(h, &statics);
    }
    free(statics.v);
    if (!counted || !py_books_split(h))
        cl_note_add(&h->warnings, "out of memory balancing reference counts: nothing no root "
                                  "reaches is called garbage");
    if (h->n >= h->max_objects)
        cl_note_add(&h->warnings,
                    "stopped after %llu objects (--max-objects%s); counts and paths "
                    "are partial",
                    (unsigned long long)h->max_objects,
                    opt && opt->max_objects ? ""
                                            : ", by default as many as half the memory "
                                              "available holds");
    bool oom = h->nodes_dropped || h->roots_dropped || h->objects.oom;
    if (oom)
        cl_note_add(&h->warnings,
                    "out of memory after %u objects: %llu objects, %llu roots and "
                    "%llu types or slots were not recorded; counts and paths are partial",
                    h->n, (unsigned long long)h->nodes_dropped,
                    (unsigned long long)h->roots_dropped, (unsigned long long)h->objects.oom);
    if (h->nroots == 0 || h->nreachable == 0) {
        py_heap_free(h);
        if (oom)
            return cl_error_set(err, CL_E_INTERNAL, "out of memory building the object graph");
        return cl_error_set(err, CL_E_UNSUPPORTED,
                            "found no Python roots (no modules, no "
                            "threads)");
    }
    return 0;
}

void py_heap_free(struct py_heap *h)
{
    py_pybind11_types_free(&h->pybind11);
    free(h->statics_left);
    for (uint32_t i = 0; i < h->nroots; i++)
        free(h->roots[i]);
    free(h->roots);
    free(h->root_kinds);
    free(h->nodes);
    free(h->type_bytes);
    free(h->type_nodes);
    free(h->edges.of);
    free(h->edges.dst);
    free(h->edges.payload);
    free(h->edges.kind);
    free(h->edges.by_dst);
    free(h->edges.by_dst_first);
    free(h->root_edges);
    free(h->inferred);
    free(h->books_refs);
    for (size_t k = 0; k < h->nc_refs; k++)
        free(h->c_refs[k].name);
    free(h->c_refs);
    py_books_free(&h->books);
    free(h->warnings);
    cl_nodemap_free(&h->index);
    py_objects_free(&h->objects);
    memset(h, 0, sizeof *h);
}

/* ---- paths ---- */

struct out {
    char *p;
    size_t cap, len;
    int depth; /* paths rendered inside this one (an object used as a key) */
    char kind; /* the step being put: enum py_path_kind */
    size_t shifted; /* bytes inserted at the front ([* of a dict key's position) */
};

#define MAX_KEY_DEPTH 2 /* opt.state[model.fc2.weight]: a key's own path, once nested */
#define MAX_TUPLE_KEY 16

/* A byte of text put: a name never forges a step's mark. */
static inline char unmarked(char c)
{
    return c == PY_PATH_MARK ? '?' : c;
}

/* Text just put, o->p[from, end), becomes o->len. */
static void put_done(struct out *o, size_t from, size_t end)
{
    for (char *c = o->p + from; c < o->p + end; c++)
        *c = unmarked(*c);
    o->len = end;
}

static void put(struct out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->p + o->len, o->len < o->cap ? o->cap - o->len : 0, fmt, ap);
    va_end(ap);
    if (n > 0)
        put_done(o, o->len, o->len + (size_t)n < o->cap ? o->len + (size_t)n : o->cap - 1);
}

/* put without formatting: s, cut at the buffer's end. One pass, copying and unmarking: most
 * pieces are a few bytes ("[", ".grad_fn", " → "), where calls to strnlen and memcpy cost more
 * than the copy (1.6 million pieces for the paths of 300,000 tensors). */
static void put_str(struct out *o, const char *s)
{
    if (o->len >= o->cap)
        return;
    char *p = o->p + o->len, *end = o->p + o->cap - 1;
    for (; *s && p < end; s++, p++)
        *p = unmarked(*s);
    *p = '\0';
    o->len = (size_t)(p - o->p);
}

/* [v], as an index is written. */
static void put_index(struct out *o, uint64_t v)
{
    char digits[CL_DIGITS];
    put_str(o, "[");
    put_str(o, cl_digits(digits, v, 10));
    put_str(o, "]");
}

/* The start of a step whose kind put_step decides: its mark and a placeholder for the kind. */
static void put_mark(struct out *o)
{
    if (o->depth == 0 && o->len + 3 < o->cap) {
        o->p[o->len++] = PY_PATH_MARK;
        o->p[o->len++] = '?';
        o->p[o->len] = '\0';
    }
}

static bool identifier(const char *s)
{
    if (!*s || isdigit((unsigned char)*s))
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_' && (unsigned char)*s < 0x80)
            return false;
    return true;
}

static void put_quoted(struct out *o, const char *s)
{
    put_str(o, "'");
    for (; *s; s++) {
        if (*s == '\'' || *s == '\\')
            put(o, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            put(o, "\\x%02x", (unsigned char)*s);
        else
            put_str(o, (char[2]){*s, '\0'});
    }
    put_str(o, "'");
}

static size_t put_step(struct py_heap *h, struct out *o, const struct py_step *steps, size_t k,
                       size_t n);
static bool render(struct py_heap *h, uint32_t i, uint32_t root, const struct py_step *last,
                   char *buf, size_t cap, int depth);
struct referrer {
    uint32_t src, root, depth;
    struct py_step step;
};
static size_t referrers(struct py_heap *h, uint32_t i, struct referrer **out);

/* A str's whole text; false when it is not a str or does not fit (a cut key names another). */
static bool whole_str(struct py_heap *h, uint64_t obj, char *s, size_t cap)
{
    return py_str_read(&h->objects, obj, s, cap) && strlen(s) < cap - 1;
}

/* A float as Python's repr writes it: the shortest digits that read back as the same double, and
 * a decimal point so it stays a float. False for inf and nan, which have no literal. */
static bool float_literal(struct py_objects *o, uint64_t obj, char *out, size_t cap)
{
    double v;
    if (cl_read(o->rt->t, obj + o->rt->l->float_value, &v, sizeof v) || !isfinite(v))
        return false;
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(out, cap, "%.*g", digits, v);
        if (strtod(out, NULL) == v)
            break;
    }
    if (!strpbrk(out, ".e"))
        strncat(out, ".0", cap - strlen(out) - 1);
    return true;
}

/* A key Python writes as a literal: str, int, float, bool, None, or a tuple of those. Writes
 * nothing and returns false for anything else. */
static bool put_literal(struct py_heap *h, struct out *o, uint64_t key, int depth)
{
    struct py_objects *ob = &h->objects;
    const struct py_layout *l = ob->rt->l;
    const struct py_type *ty = py_object_type(ob, key);
    size_t mark = o->len;
    char s[1024];
    int64_t v, n;
    uint64_t items[MAX_TUPLE_KEY];
    if (!ty)
        return false;
    if (key == ob->rt->none) {
        put_str(o, "None");
    } else if (ty->family == PY_F_STR && whole_str(h, key, s, sizeof s)) {
        put_quoted(o, s);
    } else if (ty->family == PY_F_INT && py_int_read(ob, key, &v)) {
        if (strcmp(ty->name, "bool") == 0)
            put_str(o, v ? "True" : "False");
        else
            put(o, "%lld", (long long)v);
    } else if (ty->family == PY_F_FLOAT && float_literal(ob, key, s, sizeof s)) {
        put_str(o, s);
    } else if (ty->family == PY_F_TUPLE && depth < 4 &&
               cl_read(ob->rt->t, key + l->ob_size, &n, sizeof n) == 0 && n >= 0 &&
               n <= MAX_TUPLE_KEY &&
               cl_read(ob->rt->t, key + l->tuple_items, items, (size_t)n * sizeof *items) == 0) {
        put_str(o, "(");
        for (int64_t i = 0; i < n; i++) {
            if (i)
                put_str(o, ", ");
            if (!put_literal(h, o, items[i], depth + 1)) {
                o->len = mark;
                o->p[mark] = '\0';
                return false;
            }
        }
        put_str(o, n == 1 ? ",)" : ")");
    } else {
        return false;
    }
    return true;
}

struct position {
    uint64_t want;
    int64_t at, i;
};

static bool find_key(void *arg, uint64_t key, uint64_t value)
{
    struct position *p = arg;
    (void)value;
    if (key == p->want) {
        p->at = p->i;
        return false;
    }
    p->i++;
    return true;
}

/* The key's place in the dict's iteration (insertion) order, or -1. */
static int64_t key_position(struct py_heap *h, uint64_t dict, uint64_t key)
{
    struct position p = {key, -1, 0};
    const struct py_type *ty = dict ? py_object_type(&h->objects, dict) : NULL;
    if (ty && ty->family == PY_F_DICT)
        py_dict_items(&h->objects, dict, find_key, &p);
    return p.at;
}

/* A path Python can evaluate with no dict position in it: starts at a named root (not a thread's
 * frame) and has neither `[*d][i]` nor a notation culeak uses where Python has none. */
static bool plain_path(const char *text, size_t cap)
{
    return strlen(text) + 1 < cap && text[0] != '<' && !strstr(text, "[*") && !strchr(text, '<');
}

/* How much a key's path reads like a name: attributes over indices, then shorter (lower is
 * better). */
static size_t key_path_cost(const char *text)
{
    size_t brackets = 0;
    for (const char *c = text; *c; c++)
        brackets += *c == '[';
    return brackets * 4096 + strlen(text);
}

#define MAX_KEY_CANDIDATES 16

/* The length of a path's root when it is a <...> name (<thread main: <module>() at x.py:3>),
 * else 0. */
static size_t angle_root_len(const char *text)
{
    int depth = 0;
    for (size_t k = 0; text[0] == '<' && text[k]; k++) {
        depth += text[k] == '<';
        depth -= text[k] == '>';
        if (depth == 0)
            return k + 1;
    }
    return 0;
}

/* An object used as a key, by its own path from a root (opt.state[model.fc2.weight]): of its
 * shortest path and those through its other referrers, the plain one that reads most like a
 * name. A path from the root the key's own path starts from reads from there, as the code of
 * that frame names it (trainer.opt.state[trainer.model[0].weight]). False when none is plain. */
static bool put_object_key(struct py_heap *h, struct out *o, uint64_t key)
{
    uint32_t node = py_heap_find(h, key);
    char text[2048], best[2048] = "", marked[4096], here[4096];
    size_t best_cost = SIZE_MAX;
    if (node == PY_NO_NODE || !py_node_reachable(h, node) || o->depth >= MAX_KEY_DEPTH)
        return false;
    cl_copy_span(marked, sizeof marked, o->p, o->len);
    size_t root = angle_root_len(py_path_text(marked, here, sizeof here));
    struct referrer *v = NULL;
    size_t n = referrers(h, node, &v);
    for (size_t k = 0; k <= n && k <= MAX_KEY_CANDIDATES; k++) {
        bool ok = k == 0 ? render(h, node, PY_NO_NODE, NULL, text, sizeof text, o->depth + 1)
                         : render(h, v[k - 1].src, v[k - 1].root, &v[k - 1].step, text, sizeof text,
                                  o->depth + 1);
        const char *name =
            root && strncmp(text, here, root) == 0 && text[root] == '.' ? text + root + 1 : text;
        if (ok && plain_path(name, sizeof text) && key_path_cost(name) < best_cost) {
            best_cost = key_path_cost(name);
            memmove(best, name, strlen(name) + 1);
        }
    }
    free(v);
    if (best[0])
        put_str(o, best);
    return best[0] != '\0';
}

/* `[*` prefix `]`: what is rendered so far, unpacked, so `[*d][i]` names d's i-th key. */
static void wrap_unpacked(struct out *o, int64_t i)
{
    if (o->len + 3 >= o->cap)
        return;
    memmove(o->p + 2, o->p, o->len + 1);
    memcpy(o->p, "[*", 2);
    o->len += 2;
    o->shifted += 2;
    put(o, "][%lld]", (long long)i);
}

/* A dict item d[key] for the key object: a literal, the key's own path, else by position,
 * d[[*d][i]] (insertion order), with no address in it. */
static void put_key(struct py_heap *h, struct out *o, uint64_t dict, uint64_t key)
{
    size_t mark = o->len;
    put_str(o, "[");
    if (put_literal(h, o, key, 0) || put_object_key(h, o, key)) {
        put_str(o, "]");
        return;
    }
    int64_t i = key_position(h, dict, key);
    char marked[4096], prefix[4096];
    cl_copy_span(marked, sizeof marked, o->p, mark); /* a path is at most 4096 bytes */
    py_path_text(marked, prefix, sizeof prefix);
    o->len = mark;
    o->p[mark] = '\0';
    if (i < 0) {
        put_str(o, "[<a key culeak cannot name>]");
        return;
    }
    put(o, "[[*%s][%lld]]", prefix, (long long)i);
}

/* Whether obj is a torch.nn.Module: a base named Module whose __module__ is torch's. */
static bool nn_module(struct py_heap *h, uint64_t obj)
{
    struct py_objects *o = &h->objects;
    struct py_type *ty = obj ? py_object_type(o, obj) : NULL;
    if (!ty)
        return false;
    if (ty->nn_module < 0) {
        ty->nn_module = 0;
        uint64_t base = ty->addr;
        for (int i = 0; i < 64 && base && !ty->nn_module; i++) {
            struct py_type *b = py_type_at(o, base);
            char mod[64];
            if (!b)
                break;
            if (strcmp(b->name, "Module") == 0 &&
                whole_str(h, py_dict_get_str(o, b->dict, "__module__"), mod, sizeof mod) &&
                strcmp(mod, "torch.nn.modules.module") == 0)
                ty->nn_module = 1;
            base = py_word(o, base + o->rt->l->tp_base);
        }
    }
    return ty->nn_module == 1;
}

/* An nn.Module's child, parameter or buffer as users write it: `.fc2`, `[0]` in a Sequential,
 * ModuleList or ParameterList, `['k']` in a ModuleDict or ParameterDict. Steps k.. are
 * `._modules['fc2']` (or `.__dict__['_modules']['fc2']`); returns the steps consumed, or 0 when
 * they are not that. */
static size_t put_module_child(struct py_heap *h, struct out *o, const struct py_step *steps,
                               size_t k, size_t n)
{
    char s[256], name[256];
    size_t skip = steps[k].edge == PY_E_NAMED ? 1 : 0; /* `.__dict__` before the key */
    const struct py_step *table = &steps[k + skip], *child = &steps[k + skip + 1];
    if (k == 0 || k + skip + 1 >= n || child->edge != PY_E_KEY || !nn_module(h, steps[k - 1].obj))
        return 0;
    if (!(skip ? table->edge == PY_E_KEY && whole_str(h, table->payload, s, sizeof s)
               : table->edge == PY_E_ATTR && whole_str(h, table->payload, s, sizeof s)) ||
        (strcmp(s, "_modules") && strcmp(s, "_parameters") && strcmp(s, "_buffers")) ||
        !whole_str(h, child->payload, name, sizeof name))
        return 0;
    const struct py_type *ty = py_object_type(&h->objects, steps[k - 1].obj);
    bool indexed = ty && (!strcmp(ty->name, "Sequential") || !strcmp(ty->name, "ModuleList") ||
                          !strcmp(ty->name, "ParameterList"));
    bool keyed = ty && (!strcmp(ty->name, "ModuleDict") || !strcmp(ty->name, "ParameterDict"));
    char *end;
    long index = strtol(name, &end, 10);
    if (indexed && *name && !*end && index >= 0) {
        put_index(o, (uint64_t)index);
        o->kind = PY_PATH_INDEX;
    } else if (keyed) {
        put_str(o, "[");
        put_quoted(o, name);
        put_str(o, "]");
        o->kind = PY_PATH_KEY;
    } else if (identifier(name)) {
        put_str(o, ".");
        put_str(o, name);
        o->kind = PY_PATH_ATTR;
    } else {
        return 0;
    }
    return skip + 2;
}

/* Whether two C++ steps lead to nodes of one class: " → AddBackward0" and ".grad_fn →
 * AddBackward0" do; ".grad" and " (saved)" lead to no node. */
static bool same_node_class(const char *a, const char *b)
{
    const char *x = strstr(a, "→ "), *y = strstr(b, "→ ");
    return x && y && strcmp(x, y) == 0;
}

/* A step culeak names with text of its own (`.__closure__`, `.grad`, `.<vars>`): an attribute
 * when it reads as one. */
static char named_kind(const char *text)
{
    return text[0] == '.' && identifier(text + 1) ? PY_PATH_ATTR : PY_PATH_NAMED;
}

/* One edge's text, its kind in o->kind; k indexes steps (the edge into steps[k]), the next step
 * may be consumed. */
static size_t put_step(struct py_heap *h, struct out *o, const struct py_step *steps, size_t k,
                       size_t n)
{
    const struct py_step *e = &steps[k];
    const char *named = (const char *)(uintptr_t)e->payload;
    char s[256];
    switch (e->edge) {
    case PY_E_SELF:
    case PY_E_HIDDEN: break;
    case PY_E_NAMED: {
        size_t used = strcmp(named, ".__dict__") == 0 ? put_module_child(h, o, steps, k, n) : 0;
        if (used)
            return used;
        /* `.__dict__['name']` reads better, and pastes the same, as `.name`. */
        if (strcmp(named, ".__dict__") == 0 && k + 1 < n && steps[k + 1].edge == PY_E_KEY &&
            py_str_read(&h->objects, steps[k + 1].payload, s, sizeof s) && identifier(s)) {
            put_str(o, ".");
            put_str(o, s);
            o->kind = PY_PATH_ATTR;
            return 2;
        }
        put_str(o, named);
        o->kind = named_kind(named);
        break;
    }
    case PY_E_CXX: {
        /* a run of the same autograd node class reads as one: ` → AddBackward0 ×20` */
        size_t run = 1;
        while (k + run < n && steps[k + run].edge == PY_E_CXX &&
               same_node_class(named, (const char *)(uintptr_t)steps[k + run].payload))
            run++;
        put_str(o, named);
        if (run > 1)
            put(o, " ×%zu", run);
        o->kind = strncmp(named, PY_PATH_ELISION, strlen(PY_PATH_ELISION)) == 0 ? PY_PATH_ELIDED
                  : run == 1 && named_kind(named) == PY_PATH_ATTR               ? PY_PATH_ATTR
                                                                                : PY_PATH_AUTOGRAD;
        return run;
    }
    case PY_E_ATTR: {
        size_t used = put_module_child(h, o, steps, k, n);
        if (used)
            return used;
        put_str(o, ".");
        put_str(o, py_str_read(&h->objects, e->payload, s, sizeof s) ? s : "?");
        o->kind = PY_PATH_ATTR;
        break;
    }
    case PY_E_CATTR: {
        char m[128] = "?";
        cl_read_cstr(h->objects.rt->t, e->payload, m, sizeof m);
        put_str(o, ".");
        put_str(o, m);
        o->kind = PY_PATH_ATTR;
        break;
    }
    case PY_E_KEY:
        put_key(h, o, k ? steps[k - 1].obj : 0, e->payload);
        o->kind = PY_PATH_KEY;
        break;
    case PY_E_INDEX:
        put_index(o, e->payload);
        o->kind = PY_PATH_INDEX;
        break;
    case PY_E_FRAMELOCAL:
    case PY_E_GENLOCAL:
        put_str(o, e->edge == PY_E_GENLOCAL ? ".gi_frame.f_locals[" : ".f_locals[");
        put_quoted(o, py_str_read(&h->objects, e->payload, s, sizeof s) ? s : "?");
        put_str(o, "]");
        o->kind = PY_PATH_LOCAL;
        break;
    case PY_E_DICTKEY: {
        int64_t i = key_position(h, k ? steps[k - 1].obj : 0, e->obj);
        if (i >= 0)
            wrap_unpacked(o, i);
        else
            put_str(o, "[<a key culeak cannot place>]");
        o->kind = PY_PATH_DICT_KEY;
        break;
    }
    case PY_E_SETITEM:
        wrap_unpacked(o, (int64_t)e->payload);
        o->kind = PY_PATH_SET_ITEM;
        break;
    case PY_E_STACK:
        snprintf(s, sizeof s, "%s.<stack[%u]%s>",
                 e->payload & PY_STACK_GENERATOR ? ".gi_frame" : "", (unsigned)e->payload,
                 e->payload & PY_STACK_INFERRED ? "?" : "");
        put_str(o, s);
        o->kind = PY_PATH_NAMED;
        break;
    }
    return 1;
}

/* Appends a holder's marked path as it is: the steps after it go on from its own. */
static void put_marked(struct out *o, const char *path)
{
    size_t n = strlen(path);
    if (o->len + n + 1 > o->cap)
        n = o->cap > o->len + 1 ? o->cap - o->len - 1 : 0;
    memcpy(o->p + o->len, path, n);
    o->len += n;
    o->p[o->len] = '\0';
}

/* The root (a name, or a holder's marked path), or else steps[k]: marked with its kind at depth
 * 0, where a step that prints nothing leaves no mark. Returns the steps consumed. */
static size_t put_one(struct py_heap *h, struct out *o, const char *root,
                      const struct py_step *steps, size_t k, size_t n)
{
    if (root && strchr(root, PY_PATH_MARK)) {
        char text[4096];
        if (o->depth == 0)
            put_marked(o, root);
        else
            put_str(o, py_path_text(root, text, sizeof text));
        return 0;
    }
    size_t at = o->len, used = 0;
    put_mark(o);
    size_t start = o->len;
    o->shifted = 0;
    o->kind = PY_PATH_NAMED;
    if (root) {
        put_str(o, root);
        o->kind = PY_PATH_ROOT;
    } else {
        used = put_step(h, o, steps, k, n);
    }
    at += o->shifted;
    start += o->shifted;
    if (start == at) /* unmarked: inside a key, or no room */
        return used;
    if (o->len == start) { /* nothing printed: no step */
        o->len = at;
        o->p[at] = '\0';
    } else {
        o->p[at + 1] = o->kind;
    }
    return used;
}

#define MAX_DEPTH 4096

static void render_steps(struct py_heap *h, const char *root, const struct py_step *steps, size_t n,
                         char *buf, size_t cap, int depth)
{
    struct out o = {buf, cap, 0, depth, 0, 0};
    buf[0] = '\0';
    put_one(h, &o, root, steps, 0, n);
    for (size_t k = 0; k < n;)
        k += put_one(h, &o, NULL, steps, k, n);
    if (o.len + 1 >= cap && cap > 8) /* cut short: say so rather than print another path */
        memcpy(buf + cap - 5, " …", 5);
}

/* The step that found node i. */
static struct py_step found_by(const struct py_heap *h, uint32_t i)
{
    const struct py_node *nd = &h->nodes[i];
    if (nd->via == PY_NO_EDGE)
        return (struct py_step){PY_E_SELF, 0, nd->addr};
    if (nd->parent == PY_NO_NODE)
        return h->root_edges[nd->via].step;
    return py_edge_step(h, nd->via, nd->addr);
}

/* The steps from node i's root down to i (root first); returns how many (at most cap) and sets
 * *root, or 0 when i is unreachable. */
static size_t py_heap_steps(const struct py_heap *h, uint32_t i, struct py_step *steps, size_t cap,
                            uint32_t *root)
{
    size_t n = 0;
    uint32_t r = PY_NO_NODE;
    if (!py_node_reachable(h, i))
        return 0;
    for (uint32_t c = i; c != PY_NO_NODE && n < cap; c = h->nodes[c].parent) {
        steps[n++] = found_by(h, c);
        r = h->nodes[c].root;
    }
    if (r >= h->nroots)
        return 0;
    for (size_t a = 0, b = n ? n - 1 : 0; a < b; a++, b--) { /* root first */
        struct py_step tmp = steps[a];
        steps[a] = steps[b];
        steps[b] = tmp;
    }
    *root = r;
    return n;
}

/* Root name + the steps from the root down to node i (none for PY_NO_NODE: from `root`), then
 * `last` if given. */
void py_heap_render(struct py_heap *h, const char *root, const struct py_step *steps, size_t n,
                    char *buf, size_t cap)
{
    render_steps(h, root, steps, n, buf, cap, 0);
}

static bool render(struct py_heap *h, uint32_t i, uint32_t root, const struct py_step *last,
                   char *buf, size_t cap, int depth)
{
    struct py_step *steps = malloc((MAX_DEPTH + 1) * sizeof *steps);
    size_t n = 0;
    buf[0] = '\0';
    if (!steps)
        return false;
    if (i != PY_NO_NODE && !(n = py_heap_steps(h, i, steps, MAX_DEPTH, &root))) {
        free(steps);
        return false;
    }
    if (last)
        steps[n++] = *last;
    bool ok = root < h->nroots;
    if (ok)
        render_steps(h, h->roots[root], steps, n, buf, cap, depth);
    free(steps);
    return ok;
}

bool py_heap_path(struct py_heap *h, uint32_t i, char *buf, size_t cap)
{
    buf[0] = '\0';
    return py_node_reachable(h, i) && render(h, i, PY_NO_NODE, NULL, buf, cap, 0);
}

static uint32_t depth(const struct py_heap *h, uint32_t i)
{
    uint32_t d = 0;
    for (; i != PY_NO_NODE && d < MAX_DEPTH; i = h->nodes[i].parent)
        d++;
    return d;
}

/* The node whose edges include edge id e. */
struct edge_at {
    const struct py_heap *h;
    uint32_t e;
};

static bool first_edge_by(size_t i, const void *ctx)
{
    const struct edge_at *q = ctx;
    return q->h->edges.of[i].first <= q->e;
}

static uint32_t edge_src(const struct py_heap *h, uint32_t e)
{
    if (e >= h->edges.n)
        return e - (uint32_t)h->edges.n;
    /* the last node whose first edge is <= e (node 0's is 0) */
    struct edge_at q = {h, e};
    size_t after = cl_partition_point(h->n, first_edge_by, &q);
    return after ? (uint32_t)after - 1 : 0;
}

/* Edge ids by destination, built once: a counting sort over the nodes' edges in node order, so
 * that a node's referrers come in the order the walk met them. */
static bool index_by_dst(struct py_heap *h)
{
    if (h->edges.by_dst)
        return true;
    uint32_t nids = py_edge_ids(h);
    uint32_t *v = malloc((nids + 1) * sizeof *v), *start = calloc(h->n + 2, sizeof *start);
    if (!v || !start) {
        free(v);
        free(start);
        return false;
    }
    for (uint32_t i = 0; i < h->n; i++)
        for (uint32_t p = 0, m = py_node_nedges(h, i); p < m; p++)
            start[py_edge_dst(h, py_node_edge(h, i, p)) + 2]++;
    for (uint32_t d = 0; d < h->n; d++)
        start[d + 2] += start[d + 1];
    for (uint32_t i = 0; i < h->n; i++)
        for (uint32_t p = 0, m = py_node_nedges(h, i); p < m; p++) {
            uint32_t e = py_node_edge(h, i, p);
            v[start[py_edge_dst(h, e) + 1]++] = e;
        }
    h->edges.by_dst = v;
    h->edges.by_dst_first = start;
    return true;
}

/* A reference to node i other than the one that discovered it (struct referrer, above). */

static size_t referrers(struct py_heap *h, uint32_t i, struct referrer **out)
{
    size_t n = 0, cap = 0;
    struct referrer *v = NULL;
    const struct py_node *node = &h->nodes[i];
    for (size_t k = 0; k < h->nroot_edges; k++) {
        const struct py_root_edge *r = &h->root_edges[k];
        if (r->dst != i || (node->parent == PY_NO_NODE && node->via == k))
            continue;
        if (CL_VEC_RESERVE(v, n, cap))
            v[n++] = (struct referrer){PY_NO_NODE, r->root, 0, r->step};
    }
    const struct py_edges *g = &h->edges;
    uint32_t k = 0, end = 0;
    if (index_by_dst(h))
        k = g->by_dst_first[i], end = g->by_dst_first[i + 1];
    for (; k < end; k++) {
        uint32_t e = g->by_dst[k], src = edge_src(h, e);
        struct py_step step = py_edge_step(h, e, h->nodes[i].addr);
        if (!py_node_reachable(h, src) || src == i)
            continue;
        if (node->parent != PY_NO_NODE && e == node->via)
            continue;
        if (CL_VEC_RESERVE(v, n, cap))
            v[n++] = (struct referrer){src, h->nodes[src].root, depth(h, src), step};
    }
    *out = v;
    return n;
}

static int by_depth(const void *a, const void *b)
{
    const struct referrer *x = a, *y = b;
    return (x->depth > y->depth) - (x->depth < y->depth);
}

size_t py_heap_paths(struct py_heap *h, uint32_t i, size_t max, char (*out)[4096])
{
    if (max == 0 || !py_heap_path(h, i, out[0], sizeof out[0]))
        return 0;
    size_t n = 1;
    /* Other referrers, each giving its own shortest path plus the edge to i; shortest first. */
    struct referrer *v = NULL;
    size_t count = max > 1 ? referrers(h, i, &v) : 0;
    if (count)
        qsort(v, count, sizeof *v, by_depth);
    for (size_t k = 0; k < count && n < max; k++)
        if (render(h, v[k].src, v[k].root, &v[k].step, out[n], sizeof out[n], 0))
            n++;
    free(v);
    return n;
}

#!/usr/bin/env python3
"""Discover the x86-64 layouts of PyTorch's autograd C++ structures in a real build.

Run it with the Python of the torch build to inspect, e.g.

    build/venv/torch-2.13/bin/python tests/layouts/probe_autograd.py
    /usr/bin/python3 tests/layouts/probe_autograd.py        # Debian's python3-torch

It builds small autograd graphs of known shape in its own process (CPU tensors only), then reads
the process's own memory with ctypes (ctypes.string_at) to find where each C++ member sits. No
offset is assumed: every one is found by searching memory for values known from the Python side
(a tensor's TensorImpl* is `t._cdata`; a C++ grad_fn's Node* is the first word of its `cdata`,
16 bytes into the THPCppFunction object; object types are checked by resolving their vtable
pointer with dladdr). Objects are only read within their malloc'd size, and every address is
checked against /proc/self/maps before it is read.

Discovered, as offsets in bytes:
  node.*          torch::autograd::Node: next_edges_, pyobj_, hook vectors, size of the base
  edge.*          Edge {function, input_nr}: element size, the control block word, input_nr
  refcount.*      where a Node's strong count lives (shared_ptr control block or intrusive)
  thpfunction.*   THPFunction (a custom Function's ctx): cdata; pynode.obj: PyNode's PyObject*
  saved_variable.*  SavedVariable: size and every member found
  tensorimpl.* / autograd_meta.* / view_meta.*  TensorImpl.autograd_meta_, AutogradMeta and the
                  DifferentiableViewMeta's base tensor
  ownership       whether SavedVariable.grad_fn_/grad_accumulator_ own their node (the
                  strong/weak count change one such reference makes)
  semantics       what each SavedVariable member holds in the cases tried (saved leaf input,
                  non-leaf input, output, None, with saved-tensor hooks, in-place on a view,
                  under forward AD, in MulBackward0/ExpBackward0 before and after backward)

Prints one JSON object. Exits 1 with a message on stderr when a discovery fails or is ambiguous.
Used to fill the autograd layout tables: run on Debian 12's python3-torch 1.13.1 and on the PyPI
wheels 2.1.2, 2.4.1, 2.6.0, 2.10.0, 2.11.0, 2.12.1, 2.13.0 (CPU and CUDA), 2.14.1 and 2.15.0
(build/venv/*), each run giving the same output every time; and on 2.7.1, 2.8.0 and 2.9.1, whose
output equals each other's but for the version. About 2 s of CPU per run.
"""
import ctypes
import json
import sys

import torch
from torch.autograd import Function

class ProbeError(Exception):
    pass


def fail(msg):
    raise ProbeError(msg)


# ---------------------------------------------------------------- memory access

class Maps:
    """Readable address ranges of this process, from /proc/self/maps."""

    def __init__(self):
        self.ranges = []
        self.refresh()

    def refresh(self):
        ranges = []
        with open('/proc/self/maps') as f:
            for line in f:
                parts = line.split()
                lo, hi = (int(v, 16) for v in parts[0].split('-'))
                if parts[1][0] == 'r':
                    ranges.append((lo, hi))
        self.ranges = ranges

    def readable(self, addr, n=8):
        for _ in range(2):
            for lo, hi in self.ranges:
                if lo <= addr and addr + n <= hi:
                    return True
            self.refresh()
        return False


MAPS = Maps()


def read(addr, n):
    if addr <= 0 or not MAPS.readable(addr, n):
        fail('unreadable address %#x (+%d)' % (addr, n))
    return ctypes.string_at(addr, n)


def u64(addr):
    return int.from_bytes(read(addr, 8), 'little')


def u32(addr):
    return int.from_bytes(read(addr, 4), 'little')


def u8(addr):
    return read(addr, 1)[0]


def words(addr, n):
    """The n bytes at addr as a list of little-endian u64 (n a multiple of 8)."""
    raw = read(addr, n)
    return [int.from_bytes(raw[i:i + 8], 'little') for i in range(0, n, 8)]


def is_ptr(v):
    return v != 0 and v % 8 == 0 and MAPS.readable(v, 8)


class DlInfo(ctypes.Structure):
    _fields_ = [('dli_fname', ctypes.c_char_p), ('dli_fbase', ctypes.c_void_p),
                ('dli_sname', ctypes.c_char_p), ('dli_saddr', ctypes.c_void_p)]


LIBC = ctypes.CDLL(None)
LIBC.dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(DlInfo)]
LIBC.malloc_usable_size.argtypes = [ctypes.c_void_p]
LIBC.malloc_usable_size.restype = ctypes.c_size_t


def symbol_at(addr):
    """(symbol name, offset from it) for a code/data address, or (None, None)."""
    info = DlInfo()
    if not LIBC.dladdr(addr, ctypes.byref(info)) or not info.dli_sname:
        return None, None
    return info.dli_sname.decode(), addr - info.dli_saddr


def vtable_of(obj):
    """Mangled vtable symbol of the C++ object at obj, when its vptr is exactly 16 bytes into
    an exported vtable (single inheritance); None otherwise."""
    if not is_ptr(obj):
        return None
    vptr = u64(obj)
    if not is_ptr(vptr):
        return None
    name, off = symbol_at(vptr)
    if name and name.startswith('_ZTV') and off == 16:
        return name
    return None


def has_type(obj, cls):
    """Whether obj's vtable is that of the class named cls (last mangled name component)."""
    v = vtable_of(obj)
    return v is not None and v.endswith('%d%sE' % (len(cls), cls))


def alloc_size(start):
    """malloc usable size of the chunk starting at start, after sanity checks of its header."""
    if start % 16 or not MAPS.readable(start - 8, 8):
        fail('%#x is not a malloc chunk start' % start)
    hdr = u64(start - 8)
    size = hdr & ~7
    if size < 32 or size > 1 << 30:
        fail('%#x: implausible malloc header %#x' % (start, hdr))
    return LIBC.malloc_usable_size(start)


def ti(t):
    """TensorImpl* of a tensor."""
    return t._cdata


def find_words(base, n, value):
    """Offsets (multiples of 8) in [base, base+n) holding the u64 value."""
    return [i * 8 for i, w in enumerate(words(base, n)) if w == value]


def unique(cands, what):
    cands = sorted(set(cands))
    if len(cands) != 1:
        fail('%s: %s candidates %s' % (what, 'no' if not cands else 'ambiguous', cands))
    return cands[0]


# ---------------------------------------------------------------- graph helpers

def leaf(n=4, val=1.0):
    return torch.full((n,), val, requires_grad=True)


def nonleaf(n=4):
    w = leaf(n, 2.0)
    return w * 1, w


class Ctx:
    """Discovered facts, filled in order by the discover_* functions."""

    def __init__(self):
        self.out = {}
        self.keep = []          # objects kept alive for the duration of the probe
        self.shared = None      # True: Node held by std::shared_ptr; False: intrusive_ptr
        self.edge_size = None
        self.next_edges = None
        self.base_size = None
        self.undefined = None   # address of c10::UndefinedTensorImpl's singleton


def cpp_node(g):
    """Node* of a C++ grad_fn (THPCppFunction: PyObject_HEAD then cdata)."""
    node = u64(id(g) + 16)
    if not has_type(node, type(g).__name__):
        fail('grad_fn %s: word at +16 (%#x) is not a %s (vtable %s)'
             % (type(g).__name__, node, type(g).__name__, vtable_of(node)))
    return node


def cpp_cb(g):
    """Control block of a C++ grad_fn's std::shared_ptr<Node> cdata (shared_ptr builds)."""
    return u64(id(g) + 24)


def cb_kind(cb):
    """Mangled vtable symbol of a shared_ptr control block."""
    name, off = symbol_at(u64(cb)) if is_ptr(cb) and is_ptr(u64(cb)) else (None, None)
    return name if name and name.startswith('_ZTV') and off == 16 else None


def node_alloc(c, node):
    """Start of the malloc chunk holding node: its control block for make_shared nodes."""
    if c.shared and MAPS.readable(node - 16, 8) and \
            'inplace' in (cb_kind(node - 16) or ''):  # std::_Sp_counted_ptr_inplace
        return node - 16
    return node


def node_chunk(c, node):
    """Bytes of node's malloc chunk from node on (a multiple of 8)."""
    start = node_alloc(c, node)
    n = alloc_size(start) - (node - start)
    return n - n % 8


def edges_of(c, node):
    b, e = u64(node + c.next_edges), u64(node + c.next_edges + 8)
    return [(u64(a), u64(a + 8) if c.shared else None, a) for a in range(b, e, c.edge_size)]


# ---------------------------------------------------------------- Node and Edge

def discover_edges(c):
    """next_edges_ offset and Edge element size, from MulBackward0 of (leaf * non-leaf)."""
    x = leaf()
    y, _w = nonleaf()
    z = x * y
    g = z.grad_fn
    node = cpp_node(g)
    targets = [cpp_node(f) for f, _ in g.next_functions]
    if not has_type(targets[0], 'AccumulateGrad') or not has_type(targets[1], 'MulBackward0'):
        fail('next_functions of x*y are not (AccumulateGrad, MulBackward0)')
    found = []
    ws = words(node, 512)
    for i in range(len(ws) - 2):
        b, e, cap = ws[i:i + 3]
        for esz in (16, 24, 32):
            if is_ptr(b) and e - b == 2 * esz and cap >= e and \
                    u64(b) == targets[0] and u64(b + esz) == targets[1]:
                found.append((i * 8, esz))
    c.next_edges, c.edge_size = unique(found, 'Node.next_edges_')
    c.shared = c.edge_size == 24
    c.out['node.next_edges'] = c.next_edges
    c.out['edge.size'] = c.edge_size
    c.out['edge.function'] = 0
    c.out['node_holder'] = 'std::shared_ptr' if c.shared else 'c10::intrusive_ptr'
    c.keep += [x, y, z, g]
    c.mul = (x, y, z, g, node)


def discover_input_nr(c):
    """Edge.input_nr: z = u[1] * u[2] for u = a.unbind(0) has edges (Unbind, 1), (Unbind, 2)."""
    a, _w = nonleaf(12)
    u = a.view(3, 4).unbind(0)
    z = u[1] * u[2]
    nfs = [(cpp_node(f), nr) for f, nr in z.grad_fn.next_functions]
    if [nr for _, nr in nfs] != [1, 2]:
        fail('unexpected next_functions input_nr %s' % [nr for _, nr in nfs])
    es = edges_of(c, cpp_node(z.grad_fn))
    if [e[0] for e in es] != [n for n, _ in nfs]:
        fail('next_edges_ of u[1]*u[2] do not match next_functions')
    x, y, z0, g0, node0 = c.mul
    es0 = edges_of(c, node0)
    cands = []
    for k in range(8, c.edge_size, 4):
        if [u32(e[2] + k) for e in es] == [1, 2] and [u32(e[2] + k) for e in es0] == [0, 0]:
            cands.append(k)
    c.out['edge.input_nr'] = unique(cands, 'Edge.input_nr')
    if c.shared:
        c.out['edge.control_block'] = 8


def discover_control_block(c):
    """Where a Node's control block / strong count is. For shared_ptr nodes the Edge's second
    word is the control block; make_shared puts it at Node-16 (vptr, use int32, weak int32)."""
    x, y, z, g, node = c.mul
    es = edges_of(c, node)
    notes = {}
    if c.shared:
        for tgt, cb, _ in es:
            kind = cb_kind(cb)
            if kind is None:
                fail('control block %#x of an edge has no vtable' % cb)
            if cb == tgt - 16:
                if 'inplace' not in kind:
                    fail('control block at node-16 is a %s' % kind)
                notes[vtable_of(tgt)] = 'make_shared: control block at node-16'
            else:
                at = unique(find_words(cb, 48, tgt), 'node pointer in control block')
                dname, doff = symbol_at(u64(cb + 16))
                notes[vtable_of(tgt)] = 'separate control block (%s), node ptr at cb+%d, ' \
                    'cb+16 = %s+%s' % (kind, at, dname, doff)
        c.out['control_block'] = notes
        c.out['control_block.counts'] = 'use_count int32 at cb+8, weak_count int32 at cb+12'
    # the strong count: a 32-bit field near the node that grows by one per new edge to it
    tgt, cb, _ = es[1]
    lo = cb if c.shared else tgt
    before = [u32(lo + k) for k in range(0, 32, 4)]
    y2 = y * 3                                  # a second edge to y's grad_fn
    after = [u32(lo + k) for k in range(0, 32, 4)]
    del y2
    after_del = [u32(lo + k) for k in range(0, 32, 4)]
    grew = [i * 4 for i in range(8) if after[i] == before[i] + 1 and after_del[i] == before[i]]
    off = unique(grew, 'strong refcount')
    if c.shared:
        if off != 8:
            fail('use_count at cb+%d' % off)
    else:
        c.out['refcount.strong'] = off
        c.out['refcount.weak'] = off + 4


def discover_base_size(c):
    """Node base size = where AccumulateGrad's `Variable variable` (the leaf's TensorImpl*) is."""
    p = leaf()
    q = p * 2
    acc = q.grad_fn.next_functions[0][0]
    node = cpp_node(acc)
    c.base_size = unique(find_words(node, node_chunk(c, node), ti(p)), 'AccumulateGrad.variable')
    c.out['node.base_size'] = c.base_size
    c.out['accumulate_grad.variable'] = c.base_size
    c.out['accumulate_grad.alloc_size'] = alloc_size(node_alloc(c, node))
    c.keep += [p, q, acc]
    c.acc = (p, q, acc, node)


def discover_pyobj(c):
    """Node.pyobj_: the weak PyObject* back to the live grad_fn wrapper."""
    x, y, z, g, node = c.mul
    c.out['node.pyobj'] = unique(find_words(node, c.base_size, id(g)), 'Node.pyobj_')


def _vector_counts(node, n):
    """{offset: element count} of every 8-byte-element std::vector shape in [node, node+n)."""
    ws = words(node, n)
    res = {}
    for i in range(len(ws) - 2):
        b, e, cap = ws[i:i + 3]
        if b == e == cap == 0:
            res[i * 8] = 0
        elif is_ptr(b) and b <= e <= cap and (e - b) % 8 == 0 and cap - b < 1 << 20:
            res[i * 8] = (e - b) // 8
    return res


def discover_hooks(c):
    """Which Node vector gains an element for each kind of hook; retains_grad_hooks_ (a map)."""
    x = leaf()
    y, _w = nonleaf()
    z = x * y
    g = z.grad_fn
    node = cpp_node(g)
    nb = c.base_size
    state = {'counts': _vector_counts(node, nb)}
    res = {}

    def grown():
        now = _vector_counts(node, nb)
        old = state['counts']
        state['counts'] = now
        return [o for o in now if o in old and now[o] == old[o] + 1]

    def name_of(off):
        return next((k for k, v in res.items() if v == off), None)

    g.register_hook(lambda gi, go: None)
    res['post_hooks'] = unique(grown(), 'Node.post_hooks_ (grad_fn.register_hook)')
    if hasattr(g, 'register_prehook'):
        g.register_prehook(lambda go: None)
        res['pre_hooks'] = unique(grown(), 'Node.pre_hooks_ (grad_fn.register_prehook)')
    # retains_grad_hooks_ (an std::unordered_map): empty, it points its bucket array at its
    # own single bucket (+48) with a bucket count of 1; retain_grad() makes its size 1
    ws = words(node, nb)
    maps = [i * 8 for i in range(nb // 8 - 6)
            if ws[i] == node + i * 8 + 48 and ws[i + 1] == 1 and ws[i + 3] == 0]
    z.register_hook(lambda gr: None)
    off = unique(grown(), 'vector for tensor.register_hook')
    res['tensor_pre_hooks'] = name_of(off) + '_ (shared)' if name_of(off) else off
    z.retain_grad()
    ws = words(node, nb)
    hit = [m for m in maps if ws[m // 8 + 3] == 1 and is_ptr(ws[m // 8 + 2])]
    if hit:
        res['retains_grad_hooks'] = unique(hit, 'Node.retains_grad_hooks_')
    else:
        off = unique(grown(), 'vector for retain_grad')
        res['retains_grad_hooks'] = name_of(off) + '_ (shared)' if name_of(off) else off
    for k, v in res.items():
        c.out['node.' + k] = v
    c.keep += [x, y, z, g]


def discover_node_extras(c):
    """sequence_nr_ and input_metadata_ (SmallVector<InputMetadata, 2>: BeginX pointing at
    its own inline storage at +16, u32 size, u32 capacity 2)."""
    x, y, z, g, node = c.mul
    gs = [(x * k).grad_fn for k in range(4)]       # consecutive sequence numbers
    nodes = [cpp_node(gg) for gg in gs]
    hits = [off for off in range(8, c.base_size, 8)
            if all(u64(nodes[i] + off) == u64(nodes[0] + off) + i for i in range(4))]
    if hasattr(g, '_sequence_nr'):
        hits = [off for off in hits if u64(nodes[0] + off) == gs[0]._sequence_nr()]
    c.out['node.sequence_nr'] = unique(hits, 'Node.sequence_nr_')
    ws = words(node, c.base_size)
    im = [i * 8 for i in range(len(ws) - 2)
          if ws[i] == node + i * 8 + 16 and ws[i + 1] == 1 | 2 << 32]
    c.out['node.input_metadata'] = unique(im, 'Node.input_metadata_')


# ---------------------------------------------------------------- TensorImpl / AutogradMeta

def discover_tensorimpl(c):
    """TensorImpl.autograd_meta_, storage_ and the version counter's pointer."""
    plain = torch.zeros(4)
    rg = torch.zeros(4, requires_grad=True)
    a, b = words(ti(plain), 128), words(ti(rg), 128)
    cands = [i * 8 for i in range(16) if a[i] == 0 and has_type(b[i], 'AutogradMeta')]
    c.am_off = unique(cands, 'TensorImpl.autograd_meta_')
    c.out['tensorimpl.autograd_meta'] = c.am_off
    # storage_ and version_counter_: shared by a tensor and its view, not by another tensor
    v = plain[1:]
    other = torch.zeros(4)
    va, vo = words(ti(v), 128), words(ti(other), 128)
    shared = [i for i in range(16) if a[i] == va[i] and a[i] != vo[i] and is_ptr(a[i])]
    st = [i * 8 for i in shared if has_type(a[i], 'StorageImpl')]
    c.out['tensorimpl.storage'] = c.ti_storage = unique(st, 'TensorImpl.storage_')
    # the version counter: an object whose 32-bit field follows plain._version
    vc = []
    for i in shared:
        if i * 8 == c.ti_storage:
            continue
        obj = a[i]
        before = [u32(obj + k) for k in range(8, 32, 4)]
        plain.add_(1)
        plain.add_(1)
        after = [u32(obj + k) for k in range(8, 32, 4)]
        for j in range(len(before)):
            if after[j] == before[j] + 2 and after[j] == plain._version:
                vc.append((i * 8, 8 + 4 * j))
    c.ti_version, c.vc_version = unique(vc, 'TensorImpl.version_counter_')
    c.out['tensorimpl.version_counter'] = c.ti_version
    c.out['version_counter.version'] = c.vc_version
    c.keep += [plain, rg, v, other]


def meta_of(c, t):
    m = u64(ti(t) + c.am_off)
    if not has_type(m, 'AutogradMeta') and not has_type(m, 'DifferentiableViewMeta'):
        fail('autograd_meta_ of a tensor is %#x (%s)' % (m, vtable_of(m)))
    return m


def discover_autograd_meta(c):
    x, y, z, g, node = c.mul
    m = meta_of(c, z)
    n = alloc_size(m)
    n -= n % 8
    out = c.out
    gf = unique(find_words(m, n, node), 'AutogradMeta.grad_fn_')
    out['autograd_meta.grad_fn'] = gf
    if c.shared:
        if u64(m + gf + 8) != cpp_cb(g):
            fail('AutogradMeta.grad_fn_ is not followed by its control block')
        out['autograd_meta.grad_fn_kind'] = 'std::shared_ptr (ptr, ctrl)'
    else:
        out['autograd_meta.grad_fn_kind'] = 'c10::intrusive_ptr'
    p, q, acc, accnode = c.acc
    mp = meta_of(c, p)
    ga = unique(find_words(mp, n, accnode), 'AutogradMeta.grad_accumulator_')
    out['autograd_meta.grad_accumulator'] = ga
    out['autograd_meta.grad_accumulator_kind'] = \
        'std::weak_ptr (ptr, ctrl)' if c.shared and u64(mp + ga + 8) == cpp_cb(acc) \
        else 'weak_intrusive_ptr' if not c.shared else 'unknown'
    p.grad = torch.ones(4)
    out['autograd_meta.grad'] = unique(find_words(mp, n, ti(p.grad)), 'AutogradMeta.grad_')
    # with no grad, grad_ holds c10::UndefinedTensorImpl's singleton
    r = leaf()
    r2 = r * 1  # noqa: F841
    undef = u64(meta_of(c, r) + out['autograd_meta.grad'])
    name, off = symbol_at(undef)
    if not name or 'UndefinedTensorImpl' not in name:
        fail('grad_ of a leaf without grad is %#x (%s), not the undefined singleton'
             % (undef, name))
    c.undefined = undef
    out['undefined_tensorimpl'] = '%s+%d' % (name, off)
    # requires_grad_: the byte that follows requires_grad_(False/True) on a leaf
    s = leaf()
    meta_s = meta_of(c, s)
    on = read(meta_s, n)
    s.requires_grad_(False)
    off_ = read(meta_s, n)
    s.requires_grad_(True)
    rg = [i for i in range(n) if on[i] == 1 and off_[i] == 0 and read(meta_s + i, 1)[0] == 1]
    out['autograd_meta.requires_grad'] = unique(rg, 'AutogradMeta.requires_grad_')
    # output_nr_: outputs 0, 1, 2 of a multi-output op (non-view: a custom Function)
    outs = Three.apply(leaf())
    ms = [meta_of(c, o) for o in outs]
    nr = [k for k in range(0, n, 4) if [u32(mm + k) for mm in ms] == [0, 1, 2]]
    out['autograd_meta.output_nr'] = unique(nr, 'AutogradMeta.output_nr_')
    out['autograd_meta.alloc_size'] = n
    c.keep += [p, r, r2, s, outs]


def discover_view_meta(c):
    """DifferentiableViewMeta: where the view's base tensor (backward_info_->base_) is."""
    x, _w = nonleaf(8)
    v = x[1:]
    m = meta_of(c, v)
    if not has_type(m, 'DifferentiableViewMeta'):
        fail('view meta is a %s' % vtable_of(m))
    n = alloc_size(m)
    n -= n % 8
    hits = find_words(m, n, ti(x))
    c.out['view_meta.base'] = unique(hits, 'DifferentiableViewMeta base_')
    c.out['view_meta.alloc_size'] = n
    # a view of a view: base_ is the root base
    vv = v[1:]
    if u64(meta_of(c, vv) + c.out['view_meta.base']) != ti(x):
        fail('view of a view does not keep the root base at the same offset')
    c.keep += [x, _w, v, vv]


# ---------------------------------------------------------------- custom Function

class Three(Function):
    @staticmethod
    def forward(ctx, a):
        return a * 1, a * 2, a * 3

    @staticmethod
    def backward(ctx, g0, g1, g2):
        return g0 + g1 + g2


class Twice(Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


def thpfunction_size():
    return torch._C._FunctionBase.__basicsize__


def discover_pynode(c):
    """THPFunction.cdata (the PyNode*) and PyNode.obj (the THPFunction*)."""
    x = leaf()
    o = Twice.apply(x)
    fctx = o.grad_fn
    w = o * 3
    es = edges_of(c, cpp_node(w.grad_fn))
    pyn, cb, _ = es[0]
    if not has_type(pyn, 'PyNode') and vtable_of(pyn) is not None:
        fail('edge to a custom Function is a %s' % vtable_of(pyn))
    size = thpfunction_size()
    cd = unique(find_words(id(fctx), size, pyn), 'THPFunction.cdata')
    c.out['thpfunction.cdata'] = cd
    c.out['thpfunction.size'] = size
    if c.shared:
        if u64(id(fctx) + cd + 8) != cb:
            fail('THPFunction.cdata is not followed by the control block of the edge')
        c.out['thpfunction.cdata_kind'] = 'std::weak_ptr<PyNode> (ptr, ctrl)'
        if cb == pyn - 16:
            c.out['pynode.control_block'] = 'make_shared: control block at node-16'
        else:
            c.out['pynode.control_block'] = 'separate control block (%s), node ptr at cb+%d' \
                % (cb_kind(cb), unique(find_words(cb, 48, pyn), 'PyNode cb ptr'))
    else:
        c.out['thpfunction.cdata_kind'] = 'c10::intrusive_ptr<Node>'
    hits = find_words(pyn, node_chunk(c, pyn), id(fctx))
    objs = [h for h in hits if h >= c.base_size]
    in_base = [h for h in hits if h < c.base_size]
    if objs:
        c.out['pynode.obj'] = unique(objs, 'PyNode.obj')
    elif in_base == [c.out['node.pyobj']]:
        c.out['pynode.obj'] = 'none: the THPFunction is in Node.pyobj_ (%d)' % in_base[0]
    else:
        fail('PyNode: THPFunction* found at %s' % hits)
    c.out['pynode.pyobj_in_base'] = in_base
    c.out['pynode.vtable'] = vtable_of(pyn)
    c.keep += [x, o, fctx, w]
    c.pynode = (fctx, pyn)


# ---------------------------------------------------------------- SavedVariable

class Saver(Function):
    """Saves (x, y, out1, None, c): leaf input, non-leaf input, an output, None, no-grad."""

    @staticmethod
    def forward(ctx, x, y, c):
        o0 = x * 2
        o1 = y * 3
        ctx.save_for_backward(x, y, o1, None, c)
        return o0, o1

    @staticmethod
    def backward(ctx, g0, g1):
        return g0 * 2, g1 * 3, None


N_SAVED = 5


def saver_inputs():
    """x: leaf, version 3; y: non-leaf output 2 of unbind, version 6; c: no grad, version 5."""
    x = leaf()
    with torch.no_grad():
        for _ in range(3):
            x.add_(0)
    a, w = nonleaf(12)
    for _ in range(6):
        a.add_(0)
    y = a.view(3, 4).unbind(0)[2]
    cc = torch.ones(4)
    for _ in range(5):
        cc.add_(0)
    assert (x._version, y._version, cc._version, y.output_nr) == (3, 6, 5, 2)
    return x, y, cc, (a, w)


def saved_vector(c, fctx, x, y, cc):
    """(begin, element size, data_ offset) of THPFunction.saved_variables."""
    size = thpfunction_size()
    ws = words(id(fctx), size)
    found = []
    for i in range(len(ws) - 2):
        b, e, cap = ws[i:i + 3]
        if not is_ptr(b) or e <= b or (e - b) % N_SAVED or cap < e:
            continue
        es = (e - b) // N_SAVED
        if es % 8 or es > 512:
            continue
        for d in range(0, es, 8):
            if u64(b + d) == ti(x) and u64(b + es + d) == ti(y) and u64(b + 4 * es + d) == ti(cc):
                found.append((i * 8, es, d))
    return unique(found, 'THPFunction.saved_variables')


class Instance:
    """One SavedVariable in memory with what is known about it."""

    def __init__(self, name, addr, size):
        self.name, self.addr, self.raw = name, addr, read(addr, size)

    def w(self, off):
        return int.from_bytes(self.raw[off:off + 8], 'little')

    def d(self, off):
        return int.from_bytes(self.raw[off:off + 4], 'little')

    def b(self, off):
        return self.raw[off]


def run_saver(c, hooks):
    x, y, cc, keep = saver_inputs()
    if hooks:
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            o0, o1 = Saver.apply(x, y, cc)
    else:
        o0, o1 = Saver.apply(x, y, cc)
    c.keep += [x, y, cc, keep, o0, o1]
    return x, y, cc, o0, o1


def find_in_node(c, node_ptr, value_pred, what):
    """Offsets >= base_size in a node's chunk whose word satisfies value_pred."""
    ws = words(node_ptr, node_chunk(c, node_ptr))
    return [i * 8 for i in range(c.base_size // 8, len(ws)) if value_pred(ws[i])]


def same_storage(c, t):
    st = u64(ti(t) + c.ti_storage)
    return lambda p: p != ti(t) and has_type(p, 'TensorImpl') and \
        MAPS.readable(p + c.ti_storage, 8) and u64(p + c.ti_storage) == st


def discover_saved_variable(c):
    out = c.out
    # 1. element size and data_ from the custom Function's vector of SavedVariables
    x, y, cc, o0, o1 = run_saver(c, hooks=False)
    fctx = o0.grad_fn
    vec, size, d = saved_vector(c, fctx, x, y, cc)
    b = u64(id(fctx) + vec)
    out['thpfunction.saved_variables'] = vec
    out['saved_variable.size'] = size
    out['saved_variable.data'] = d
    names = ['leaf_input', 'nonleaf_input', 'output', 'none', 'nograd_input']
    plain = [Instance(nm, b + i * size, size) for i, nm in enumerate(names)]
    if not same_storage(c, o1)(plain[2].w(d)):
        fail('saved output: data_ is not a TensorImpl sharing the output\'s storage')
    if plain[3].w(d) != c.undefined:
        fail('saved None: data_ is %#x, not the undefined singleton' % plain[3].w(d))
    hx, hy, hcc, ho0, ho1 = run_saver(c, hooks=True)
    hctx = ho0.grad_fn
    hb = u64(id(hctx) + vec)
    hooked = [Instance('hooks_' + nm, hb + i * size, size) for i, nm in enumerate(names)]
    # 2. is_inplace_on_view_ and weak_grad_fn_: exp_() on a view of a non-leaf saves its
    #    result with is_inplace_on_view; the ExpBackward0 is the fn of the base's CopySlices
    bse, _w = nonleaf(8)
    view = bse[2:6]
    view.exp_()
    cs = cpp_node(bse.grad_fn)
    fn = unique(find_in_node(c, cs, lambda p: has_type(p, 'ExpBackward0'), 'fn'),
                'CopySlices.fn')
    expn = u64(cs + fn)
    dpos = unique(find_in_node(c, expn, same_storage(c, view), 'data'), 'inplace-view data_')
    inplace = Instance('inplace_on_view_output', expn + dpos - d, size)
    view_gf = cpp_node(view.grad_fn)
    # 3. fw_grad_: an output saved under forward AD keeps its tangent
    import torch.autograd.forward_ad as fwad
    with fwad.dual_level():
        pr = leaf()
        dual = fwad.make_dual(pr, torch.ones(4))
        ex = dual.exp()
        exn = cpp_node(ex.grad_fn)
        dpos = unique(find_in_node(c, exn, same_storage(c, ex), 'data'), 'fw AD data_')
        dual_inst = Instance('output_with_fw_grad', exn + dpos - d, size)
    c.keep += [bse, _w, view, pr, dual, ex]
    taken = set(range(d, d + 8))
    fields = {}

    def claim(name, off, width):
        span = set(range(off, off + width))
        if span & taken:
            fail('%s at %d overlaps another member' % (name, off))
        taken.update(span)
        fields[name] = off

    def search(name, kind, expect, width=None):
        """expect: {instance: value or callable}; kind: 'w' (u64), 'd' (u32) or 'b' (u8)."""
        step = {'w': 8, 'd': 4, 'b': 1}[kind]
        cands = []
        for off in range(0, size - step + 1, step):
            if set(range(off, off + step)) & taken:
                continue
            ok = True
            for inst, val in expect.items():
                got = getattr(inst, kind)(off)
                if not (val(got) if callable(val) else got == val):
                    ok = False
                    break
            if ok:
                cands.append(off)
        off = unique(cands, 'SavedVariable.' + name)
        claim(name, off, width or step)
        return off

    P = dict(zip(names, plain))
    H = dict(zip(names, hooked))
    nz = is_ptr
    zero_w = {i: 0 for i in plain}
    # pointers first
    hk = search('hooks_', 'w', {**zero_w, H['leaf_input']: nz, H['nonleaf_input']: nz,
                                H['output']: nz, H['nograd_input']: nz, H['none']: 0})
    y_gf = cpp_node(hy.grad_fn)
    gf = search('grad_fn_', 'w', {H['nonleaf_input']: y_gf, P['nonleaf_input']: 0})
    if c.shared and H['nonleaf_input'].w(gf + 8) != cpp_cb(hy.grad_fn):
        fail('SavedVariable.grad_fn_ is not followed by its control block')
    if c.shared:
        claim('grad_fn_.ctrl', gf + 8, 8)
    hacc_g = (hx * 1).grad_fn.next_functions[0][0]
    hacc = cpp_node(hacc_g)
    ga = search('grad_accumulator_', 'w', {H['leaf_input']: hacc, P['leaf_input']: 0})
    if c.shared and H['leaf_input'].w(ga + 8) == cpp_cb(hacc_g):
        claim('grad_accumulator_.ctrl', ga + 8, 8)
    wg = search('weak_grad_fn_', 'w', {inplace: view_gf, P['nonleaf_input']: 0})
    if c.shared:
        if inplace.w(wg + 8) != cpp_cb(view.grad_fn):
            fail('SavedVariable.weak_grad_fn_ is not followed by its control block')
        claim('weak_grad_fn_.ctrl', wg + 8, 8)
    # fw_grad_ is a shared_ptr<ForwardGrad> (ptr, ctrl): non-null only under forward AD
    fwc = [off for off in range(0, size - 7, 8)
           if not set(range(off, off + 8)) & taken and nz(dual_inst.w(off))
           and all(i.w(off) == 0 for i in plain + hooked + [inplace])
           and cb_kind(dual_inst.w(off)) is None]
    fw = unique(fwc, 'SavedVariable.fw_grad_')
    claim('fw_grad_', fw, 8)
    if cb_kind(dual_inst.w(fw + 8)) is None:
        fail('SavedVariable.fw_grad_ is not followed by a control block')
    claim('fw_grad_.ctrl', fw + 8, 8)
    # version_counter_ (old releases): the saved output's version counter pointer
    vcp = u64(ti(o1) + c.ti_version)
    hits = [off for off in range(0, size - 7, 8)
            if not set(range(off, off + 8)) & taken and P['output'].w(off) == vcp]
    if hits:
        claim('version_counter_', unique(hits, 'SavedVariable.version_counter_'), 8)
    # 32-bit members
    search('saved_version_', 'd', {P['leaf_input']: 3, P['nonleaf_input']: 6,
                                   P['nograd_input']: 5, P['none']: 0, P['output']: 0,
                                   H['leaf_input']: 3, H['nonleaf_input']: 6})
    search('output_nr_', 'd', {H['nonleaf_input']: 2, P['output']: 1, H['output']: 1,
                               P['leaf_input']: 0, P['nonleaf_input']: 0, P['none']: 0,
                               H['leaf_input']: 0})
    # flags

    def flags(pattern_plain, pattern_hooked, extra=None):
        e = {i: v for i, v in zip(plain, pattern_plain)}
        e.update({i: v for i, v in zip(hooked, pattern_hooked)})
        e.update(extra or {})
        return e

    # order in names: leaf_input, nonleaf_input, output, none, nograd_input
    search('was_default_constructed_', 'b', flags([0, 0, 0, 1, 0], [0, 0, 0, 1, 0]))
    search('is_output_', 'b', flags([0, 0, 1, 0, 0], [0, 0, 1, 0, 0], {inplace: 1}))
    search('is_leaf_', 'b', flags([1, 0, 0, 0, 1], [1, 0, 0, 0, 1], {inplace: 0}))
    search('saved_original_', 'b', flags([1, 1, 0, 0, 1], [0, 0, 0, 0, 0], {inplace: 0}))
    search('is_inplace_on_view_', 'b', flags([0] * 5, [0] * 5, {inplace: 1, dual_inst: 0}))
    search('requires_grad_', 'b', flags([0] * 5, [1, 0, 0, 0, 0]))
    out['saved_variable.fields'] = dict(sorted(fields.items(), key=lambda kv: kv[1]))
    out['saved_variable.unclaimed_bytes'] = sorted(set(range(size)) - taken)
    c.sv = dict(size=size, d=d, fields=fields, plain=P, hooked=H, inplace=inplace,
                dual=dual_inst, view_gf=view_gf, objs=(x, y, cc, o0, o1, hx, hy, hcc, ho0, ho1))
    c.keep += [fctx, hctx, hk]


def describe(c, inst, refs):
    """Decode one SavedVariable with the discovered fields, naming known pointers."""
    f = c.sv['fields']
    res = {}
    for name, off in sorted(f.items(), key=lambda kv: kv[1]):
        if name.endswith('.ctrl'):
            continue
        if name in ('saved_version_', 'output_nr_'):
            v = inst.d(off)
        elif name.endswith('_') and name not in POINTER_MEMBERS:
            v = inst.b(off)
        else:
            v = inst.w(off)
            v = refs.get(v, 0 if v == 0 else 'ptr')
        if v:                        # only what is set
            res[name] = v
    v = inst.w(c.sv['d'])
    res['data_'] = refs.get(v, 'other TensorImpl' if has_type(v, 'TensorImpl') else hex(v))
    return res


POINTER_MEMBERS = ('data_', 'fw_grad_', 'weak_grad_fn_', 'grad_accumulator_', 'grad_fn_',
                   'hooks_', 'version_counter_')


def semantics(c):
    """What the SavedVariable members hold, per case; and after backward()."""
    sv = c.sv
    x, y, cc, o0, o1, hx, hy, hcc, ho0, ho1 = sv['objs']
    refs = {c.undefined: 'UndefinedTensorImpl singleton', ti(x): 'the input itself',
            ti(y): 'the input itself', ti(cc): 'the input itself',
            ti(o1): 'the output itself', ti(hx): 'the input itself', ti(hy): 'the input itself',
            cpp_node(hy.grad_fn): "input's grad_fn Node*",
            cpp_node((hx * 1).grad_fn.next_functions[0][0]): "leaf's AccumulateGrad Node*",
            sv['view_gf']: "view's grad_fn Node*"}
    for t in (x, y, cc, o1, hx, hy, hcc, ho1):
        refs[u64(ti(t) + c.ti_version)] = "tensor's version counter"
    d = sv['d']
    if same_storage(c, o1)(sv['plain']['output'].w(d)):
        refs[sv['plain']['output'].w(d)] = 'shallow copy (new TensorImpl, same storage)'
    for inst in (sv['inplace'], sv['dual']):
        refs[inst.w(d)] = 'shallow copy (new TensorImpl, same storage)'
    sem = {}
    for nm, inst in list(sv['plain'].items()) + list(sv['hooked'].items()):
        sem[inst.name] = describe(c, inst, refs)
    sem[sv['inplace'].name] = describe(c, sv['inplace'], refs)
    sem[sv['dual'].name] = describe(c, sv['dual'], refs)
    # generated nodes: MulBackward0(leaf x, non-leaf y), ExpBackward0 result; before and
    # after backward, with and without retain_graph
    for retain in (True, False):
        x2 = leaf()
        y2, w2 = nonleaf()
        z2 = x2 * y2
        e2 = torch.exp(x2)
        mn, en = cpp_node(z2.grad_fn), cpp_node(e2.grad_fn)
        sx = unique(find_in_node(c, mn, lambda p: p == ti(x2), 'x'), 'MulBackward0 self_') - d
        sy = unique(find_in_node(c, mn, lambda p: p == ti(y2), 'y'), 'MulBackward0 other_') - d
        sr = unique(find_in_node(c, en, same_storage(c, e2), 'r'), 'ExpBackward0 result_') - d
        key = 'retain_graph' if retain else 'no_retain'
        c.out['mul_backward0.self_'] = sx
        c.out['mul_backward0.other_'] = sy
        c.out['exp_backward0.result_'] = sr
        r2 = {ti(x2): 'the input itself', ti(y2): 'the input itself',
              c.undefined: 'UndefinedTensorImpl singleton'}
        r2[u64(en + sr + d)] = 'shallow copy (new TensorImpl, same storage)'
        for t in (x2, y2, e2):
            r2[u64(ti(t) + c.ti_version)] = "tensor's version counter"
        before = {'mul.self_(leaf)': describe(c, Instance('', mn + sx, sv['size']), r2),
                  'mul.other_(nonleaf)': describe(c, Instance('', mn + sy, sv['size']), r2),
                  'exp.result_(output)': describe(c, Instance('', en + sr, sv['size']), r2)}
        (z2.sum() + e2.sum()).backward(retain_graph=retain)
        after = {'mul.self_(leaf)': describe(c, Instance('', mn + sx, sv['size']), r2),
                 'mul.other_(nonleaf)': describe(c, Instance('', mn + sy, sv['size']), r2),
                 'exp.result_(output)': describe(c, Instance('', en + sr, sv['size']), r2)}
        sem['generated_before_backward'] = before
        sem['generated_after_backward_' + key] = after
        c.keep += [x2, y2, w2, z2, e2]
    # data_ owns a reference: the saved input's TensorImpl strong count (low 32 bits of the
    # word at +8 in every release here) grows by one per SavedVariable
    x3 = leaf()
    acc3 = x3 * 1           # its AccumulateGrad (which owns the leaf too) exists before
    base = u32(ti(x3) + 8)
    s3 = torch.sin(x3)
    grew = u32(ti(x3) + 8) - base
    sem['data_owning_refcount_delta_per_saved_input'] = grew
    c.keep += [x3, acc3, s3]
    c.out['semantics'] = sem


def ref_counts(c, g):
    """(strong, weak) counts of the node behind the C++ grad_fn g."""
    node = cpp_node(g)
    if c.shared:
        cb = cpp_cb(g)
        return u32(cb + 8), u32(cb + 12)
    return u32(node + c.out['refcount.strong']), \
        u32(node + c.out['refcount.weak']) & 0x7fffffff   # bit 63: kHasPyObject


def discover_ownership(c):
    """Whether SavedVariable.grad_fn_ / grad_accumulator_ and AutogradMeta.grad_accumulator_
    own their node: the (strong, weak) count changes that one such reference adds."""
    hooks = torch.autograd.graph.saved_tensors_hooks
    x = leaf()
    keep = x * 1
    acc = keep.grad_fn.next_functions[0][0]
    y, w = nonleaf()
    yg = y.grad_fn

    def delta(g, f):
        b = ref_counts(c, g)
        plain = f()
        m = ref_counts(c, g)
        with hooks(lambda t: t, lambda t: t):
            hooked = f()
        a = ref_counts(c, g)
        c.keep.append((plain, hooked))
        return a[0] - m[0] - (m[0] - b[0]), a[1] - m[1] - (m[1] - b[1])

    res = {}
    res['saved_variable.grad_accumulator_'] = delta(acc, lambda: torch.sin(x))
    res['saved_variable.grad_fn_'] = delta(yg, lambda: torch.sin(y))
    # AutogradMeta.grad_accumulator_: a fresh leaf's accumulator, made by the first graph
    x2 = leaf()
    z2 = x2 * 1
    acc2 = z2.grad_fn.next_functions[0][0]
    s0 = ref_counts(c, acc2)
    z3 = x2 * 2                 # one more edge: strong +1
    s1 = ref_counts(c, acc2)
    # strong refs: the 2 edges and the Python wrapper; any more would be the leaf's meta
    if s1[0] - s0[0] != 1:
        fail('a new edge to AccumulateGrad did not add one strong reference')
    res['autograd_meta.grad_accumulator_'] = 'weak (strong count = edges + wrapper)' \
        if s1[0] == 3 else 'owning? strong count %d with 2 edges + 1 wrapper' % s1[0]
    for k, (ds, dw) in list(res.items())[:2]:
        res[k] = 'owning (strong +%d)' % ds if ds == 1 and dw == 0 else \
            'weak (weak +%d)' % dw if ds == 0 and dw == 1 else 'unclear (%d, %d)' % (ds, dw)
    c.out['ownership'] = res
    c.keep += [x, keep, acc, y, w, yg, x2, z2, z3, acc2]


# ---------------------------------------------------------------- main

def probe():
    c = Ctx()
    c.out['torch'] = torch.__version__
    c.out['cxx11_abi'] = bool(torch._C._GLIBCXX_USE_CXX11_ABI)
    for step in (discover_edges, discover_input_nr, discover_control_block, discover_base_size,
                 discover_pyobj, discover_hooks, discover_tensorimpl, discover_autograd_meta,
                 discover_view_meta, discover_pynode, discover_saved_variable, semantics,
                 discover_ownership, discover_node_extras):
        try:
            step(c)
        except ProbeError as e:
            raise ProbeError('%s: %s' % (step.__name__, e))
    return c.out


def main():
    try:
        out = probe()
    except ProbeError as e:
        print('probe_autograd: torch %s: %s' % (torch.__version__, e), file=sys.stderr)
        return 1
    print(json.dumps(out, indent=1))
    return 0


if __name__ == '__main__':
    sys.exit(main())

#!/usr/bin/env python3
"""Discover the x86-64 layout of PyTorch's native CUDA caching allocator in a real build: every
member of culeak's `struct cc_layout` (inspector/cudacache/layout.h).

Run it on the simulated device with the Python of the torch wheel to inspect, e.g.

    scripts/simgpu-run build/venv/torch-2.8-cuda/bin/python tests/layouts/probe_allocator.py

It fills the allocator with blocks of known shape (a split segment with a free block inside,
the small pool, a second stream, a MemPool or a CUDA graph's private pool, an expandable segment
with an unmapped tail), then reads its own memory with ctypes to find where each member sits. No
offset is assumed: each one is found by searching memory for values Python knows, namely the
block addresses, sizes, requested sizes, states and streams of torch.cuda.memory._snapshot(),
memory_allocated() and memory_reserved(), and a private pool's id; and every find must hold for
every block of its kind and be unique. Blocks are found by their (ptr, size, requested_size) in
the process's writable anonymous memory; the rest is reached through pointers from them. Every
address is checked against /proc/self/maps before it is read.

Prints one JSON object with the cc_layout fields (and the CUDA major of the build). Exits 1 with
a message on stderr when a discovery fails or is ambiguous. It gives back the existing tables
from every wheel they were read off, 2.1.2 to 2.15.0 (but for 2.13's unmapped set, which it
found at +96, not +48), and read off 2.7.1, 2.8.0 and 2.9.1, the same output on every run;
blk_context, found later (with a block allocated while _record_memory_history() records), it
found in each of those wheels where the tables have it, and so the trace ring's members (see
find_trace), read off every wheel from 2.1.2 to 2.15.0. About 15 s of CPU per run, most of it
the memory search.
"""
import ctypes
import json
import struct
import sys

import torch

MAX_BLOCK = 256          # bytes of a Block searched for its members (Block is about 170)
MAX_BLOCK_POOL = 512     # bytes of a BlockPool searched
MAX_DCA = 16384          # bytes of a DeviceCachingAllocator searched (about 3 KiB today)
MAX_NCA = 65536          # bytes of the NativeCachingAllocator searched (about 22 KiB today)
MAX_REGION = 1 << 30     # memory regions larger than this are not searched for blocks
SEARCH_CHUNK = 1 << 24   # bytes read at a time when searching memory
ALLOCATOR_SYMBOL = '_ZN3c104cuda20CUDACachingAllocator9allocatorE'
MAPS = []        # this process's mappings, read once the allocator is filled
FOUND = {}       # the offsets found so far


class ProbeError(Exception):
    pass


def fail(msg):
    raise ProbeError(msg)


def unique(cands, what):
    cands = sorted(set(cands))
    if len(cands) != 1:
        fail('%s: %s candidates %s' % (what, 'no' if not cands else 'ambiguous', cands))
    return cands[0]


# ---------------------------------------------------------------- memory access

def maps():
    """(lo, hi, perms, path) of every mapping of this process."""
    out = []
    with open('/proc/self/maps') as f:
        for line in f:
            parts = line.split(None, 5)
            lo, hi = (int(v, 16) for v in parts[0].split('-'))
            out.append((lo, hi, parts[1], parts[5].strip() if len(parts) == 6 else ''))
    return out


def readable(addr, n=8):
    """Whether [addr, addr+n) lies in readable mappings (adjacent ones count as one)."""
    while n > 0:
        m = next(((lo, hi) for lo, hi, p, _ in MAPS if lo <= addr < hi and p[0] == 'r'), None)
        if addr <= 0 or m is None:
            return False
        n, addr = n - (m[1] - addr), m[1]
    return True


def read(addr, n):
    if not readable(addr, n):
        fail('unreadable address %#x (+%d)' % (addr, n))
    return ctypes.string_at(addr, n)


def u64(addr):
    return int.from_bytes(read(addr, 8), 'little')


def u8(addr):
    return read(addr, 1)[0]


def i8(addr):
    return struct.unpack('b', read(addr, 1))[0]


# ---------------------------------------------------------------- the allocator's state

def fill():
    """Blocks of every kind the layout is found from; returns what keeps them alive."""
    keep = {}
    # one 20 MiB large segment: allocated, free (split off between two), allocated, free tail;
    # sizes that are no multiple of 512, so a block's size and requested size differ
    large = [torch.empty(2000001, dtype=torch.uint8, device='cuda') for _ in range(3)]
    del large[1]
    keep['large'] = large
    keep['small'] = [torch.empty(n, dtype=torch.uint8, device='cuda') for n in (1001, 3001)]
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        keep['side'] = torch.empty(3000001, dtype=torch.uint8, device='cuda')
    keep['side_stream'] = side
    if hasattr(torch.cuda, 'use_mem_pool'):
        pool = torch.cuda.MemPool()
        with torch.cuda.use_mem_pool(pool):
            keep['pooled'] = torch.empty(4000001, dtype=torch.uint8, device='cuda')
        keep['pool'], keep['pool_id'] = pool, tuple(pool.id)
    else:   # before 2.6: a CUDA graph's private pool, filled as cudagraph trees do
        pool_stream, pool = torch.cuda.Stream(), torch.cuda.graph_pool_handle()
        with torch.cuda.stream(pool_stream):
            torch._C._cuda_beginAllocateCurrentStreamToPool(0, pool)
            keep['pooled'] = torch.empty(4000001, dtype=torch.uint8, device='cuda')
            try:
                torch._C._cuda_endAllocateCurrentStreamToPool(0, pool)
            except TypeError:
                torch._C._cuda_endAllocateCurrentStreamToPool(0)
        keep['pool_stream'], keep['pool_id'] = pool_stream, tuple(pool)
    # from here new segments are expandable: one on a stream of its own, with an unmapped tail
    torch.cuda.memory._set_allocator_settings('expandable_segments:True')
    grow = torch.cuda.Stream()
    with torch.cuda.stream(grow):
        keep['expandable'] = torch.empty(5000001, dtype=torch.uint8, device='cuda')
    keep['grow_stream'] = grow
    # with allocation stacks recorded, on a stream of their own, not expandable: a large block
    # split off a new segment, and a small one
    torch.cuda.memory._set_allocator_settings('expandable_segments:False')
    torch.cuda.memory._record_memory_history(stacks='python')
    keep['recorded_stream'] = torch.cuda.Stream()
    with torch.cuda.stream(keep['recorded_stream']):
        keep['recorded'] = [recorded_allocation(n) for n in (3000001, 1000001)]
    torch.cuda.memory._record_memory_history(enabled=None)
    # allocated once more and freed: the peak of allocated_bytes is then not its current value
    gone = torch.empty(5001, dtype=torch.uint8, device='cuda')
    del gone
    return keep


def recorded_allocation(n):
    """A tensor allocated here, with how deep the Python stack is (what the allocator records:
    this frame innermost)."""
    depth, f = 0, sys._getframe()
    while f:
        depth, f = depth + 1, f.f_back
    return torch.empty(n, dtype=torch.uint8, device='cuda'), depth


def snapshot_blocks():
    """Every block of the snapshot: dict(ptr, size, requested, state, stream, segment, pool,
    pool_id)."""
    out = []
    for s in torch.cuda.memory._snapshot()['segments']:
        for b in s['blocks']:
            out.append({'ptr': b['address'], 'size': b['size'],
                        'requested': b.get('requested_size', 0), 'state': b['state'],
                        'stream': s['stream'], 'segment': s['address'], 'pool': s['segment_type'],
                        'pool_id': tuple(s.get('segment_pool_id', (0, 0)))})
    return out


# ---------------------------------------------------------------- Blocks

def search_memory(values, segments):
    """value -> every 8-aligned address in writable anonymous memory (not device memory) that
    holds it. Read through /proc/self/mem into one buffer, so that no copy of what is searched
    lands in the memory searched."""
    hits = {v: [] for v in values}
    packed = {struct.pack('<Q', v): v for v in values}
    buf = bytearray(SEARCH_CHUNK)
    view = memoryview(buf)
    own = ctypes.addressof((ctypes.c_char * SEARCH_CHUNK).from_buffer(buf))
    with open('/proc/self/mem', 'rb', buffering=0) as mem:
        for lo, hi, perms, path in MAPS:
            if perms[:2] != 'rw' or (path and path != '[heap]') or hi - lo > MAX_REGION or \
                    any(lo <= s < hi for s in segments):
                continue
            for at in range(lo, hi, SEARCH_CHUNK):
                n = min(SEARCH_CHUNK, hi - at)
                mem.seek(at)
                if mem.readinto(view[:n]) != n:
                    fail('cannot read %#x (+%d) of this process' % (at, n))
                for pat, v in packed.items():
                    i = buf.find(pat, 0, n)
                    while i >= 0:
                        if i % 8 == 0 and not own <= at + i < own + SEARCH_CHUNK:
                            hits[v].append(at + i)
                        i = buf.find(pat, i + 1, n)
    return hits


def find_blocks(blocks, segments):
    """Where each Block keeps ptr, size and requested size relative to ptr, and each Block's
    ptr member (b['at']): the one address holding its ptr with its size and requested size
    within MAX_BLOCK bytes before it (allocated blocks, whose requested size is theirs)."""
    hits = search_memory({b['ptr'] for b in blocks}, segments)
    deltas = []
    for b in blocks:
        if b['state'] != 'active_allocated':
            continue
        for at in hits[b['ptr']]:
            before = [u64(at - d) if readable(at - d) else None for d in range(0, MAX_BLOCK, 8)]
            ds = [d * 8 for d, w in enumerate(before) if w == b['size']]
            dr = [d * 8 for d, w in enumerate(before) if w == b['requested']]
            deltas += [(s, r) for s in ds for r in dr if s != r]
    common = max(set(deltas), key=deltas.count) if deltas else None
    if common is None:
        fail('no Block found: no (size, requested_size, ptr) triple in memory')
    d_size, d_req = common
    for b in blocks:
        at = [a for a in hits[b['ptr']] if readable(a - d_size) and u64(a - d_size) == b['size']]
        b['at'] = unique(at, 'Block of %#x (size %d)' % (b['ptr'], b['size']))
    return d_size, d_req


def find_chain(blocks):
    """Block's ptr offset (so where each Block begins), prev and next: the one ptr offset for
    which every segment's blocks link to their neighbours both ways, at one prev and one next
    offset, with NULL at the ends."""
    segs = {}
    for b in blocks:   # (an expandable segment's chain goes on into ranges the snapshot omits)
        if not b['expandable']:
            segs.setdefault(b['segment'], []).append(b)
    found = []
    for k in range(0, MAX_BLOCK, 8):
        def start(b):
            return b['at'] - k
        links = None
        for chain in segs.values():
            prevs, nexts = set(), set()
            for off in range(0, MAX_BLOCK, 8):
                if all(readable(start(b) + off) for b in chain):
                    ws = [u64(start(b) + off) for b in chain]
                    want_next = [start(b) for b in chain[1:]] + [0]
                    want_prev = [0] + [start(b) for b in chain[:-1]]
                    if ws == want_next:
                        nexts.add(off)
                    if ws == want_prev:
                        prevs.add(off)
            pair = {(p, n) for p in prevs for n in nexts if p != n}
            links = pair if links is None else links & pair
        if links and any(len(c) > 1 for c in segs.values()):
            found += [(k, p, n) for p, n in links]
    return unique(found, 'Block ptr/prev/next offsets')


def block_word_offsets(blocks, want, width=8):
    """Offsets in a Block where want(b) is the value of every block."""
    out = []
    for off in range(0, MAX_BLOCK, width):
        ok = True
        for b in blocks:
            addr = b['start'] + off
            v = (u64(addr) if width == 8 else u8(addr)) if readable(addr, width) else None
            if v != want(b):
                ok = False
                break
        if ok:
            out.append(off)
    return out


def block_members(out):
    """The Block offsets found so far (a member found once is not a candidate for another)."""
    return {v for k, v in out.items() if k.startswith('blk_')}


def class_name(obj):
    """The mangled RTTI name of the polymorphic object at obj, or None."""
    if not (obj and obj % 8 == 0 and readable(obj)):
        return None
    vptr = u64(obj)
    if not (vptr and readable(vptr - 8)) or not readable(u64(vptr - 8) + 8):
        return None
    name = u64(u64(vptr - 8) + 8)
    return (ctypes.string_at(name, 64).split(b'\0')[0].decode('latin-1') if readable(name, 64)
            else None)


def find_context(keep, blocks, out):
    """Block.context_when_allocated: where the two recorded blocks point at a
    torch::CapturedTraceback each, and every other block at nothing; that CapturedTraceback's
    frames_ vector (culeak's TORCH_CT_FRAMES) holds the recording frame's code object first and
    as many frames as the stack was deep; context_when_segment_allocated follows
    (CC_SEGMENT_CONTEXT_AFTER)."""
    ptrs = [t.data_ptr() for t, _ in keep['recorded']]
    rec = [next(b for b in blocks if b['ptr'] == p) for p in ptrs]
    others = [b for b in blocks if b['ptr'] not in ptrs]
    cands = [o for o in range(0, MAX_BLOCK, 8)
             if o not in block_members(out) and
             all(class_name(u64(b['start'] + o)) == 'N5torch17CapturedTracebackE' for b in rec) and
             u64(rec[0]['start'] + o) != u64(rec[1]['start'] + o) and
             all(u64(b['start'] + o) == 0 for b in others)]
    out['blk_context'] = unique(cands, 'Block.context_when_allocated')
    # a split hands the allocation a new Block and leaves the segment's own, which carries the
    # segment's context, as the free tail
    tail = [b for b in blocks if b['segment'] == rec[0]['segment']][-1]
    first_context = u64(rec[0]['start'] + out['blk_context'])
    if tail['state'] != 'inactive' or u64(tail['start'] + out['blk_context'] + 16) != first_context:
        fail('Block.context_when_segment_allocated: not at +16 of the segment\'s free tail')
    for b, (_, depth) in zip(rec, keep['recorded']):
        ct = u64(b['start'] + out['blk_context'])
        begin, end = u64(ct + 8), u64(ct + 16)
        if (end - begin) != 16 * depth or u64(begin) != id(recorded_allocation.__code__):
            fail('CapturedTraceback.frames_: not at +8 (%d frames, want %d)' % (
                (end - begin) // 16, depth))


# ---------------------------------------------------------------- std::set and ska tables

def set_values(s):
    """The values of the std::set<T*> at s (comparator at +0, header at +8, node count at +40;
    a node is {colour, parent, left, right, value}), in order; None when it is not one."""
    header, count = s + 8, u64(s + 40) if readable(s + 40) else None
    if count is None or count > 1 << 20 or not readable(header + 24):
        return None
    node, out, steps = u64(header + 16), [], 0
    while node and node != header and len(out) < count and steps < 4 * count + 4:
        if not readable(node + 32):
            return None
        out.append(u64(node + 32))
        right = u64(node + 24)
        if right:
            node = right
            while readable(node + 16) and u64(node + 16) and steps < 4 * count + 4:
                node, steps = u64(node + 16), steps + 1
        else:
            parent = u64(node + 8)
            while parent and parent != header and readable(parent + 24) and \
                    node == u64(parent + 24) and steps < 4 * count + 4:
                node, parent, steps = parent, u64(parent + 8), steps + 1
            node = parent
    return out if len(out) == count and (count == 0 or node == header) else None


def ska_entries(table, entry_size):
    """The live entries' addresses of the ska::flat_hash_map/set at table (entries at +0,
    slot count - 1 at +8, max_lookups at +17, element count at +24); None when it is not one."""
    if not readable(table, 32):
        return None
    entries, slots, count, lookups = u64(table), u64(table + 8), u64(table + 24), i8(table + 17)
    if slots > 1 << 20 or count > slots + 1 or lookups < 0:
        return None
    out = []
    for i in range(slots + lookups):
        e = entries + entry_size * i
        if not readable(e, entry_size):
            return None
        if i8(e) >= 0:
            out.append(e)
    return out if len(out) == count else None


# ---------------------------------------------------------------- the trace ring buffer

ACTIONS = ('alloc', 'free_requested', 'free_completed', 'segment_alloc', 'segment_free',
           'segment_map', 'segment_unmap', 'snapshot', 'oom', 'annotate')   # TraceEntry::Action
TRACE_SLOTS = 5          # max_entries while the trace is probed: small, so that it wraps
MAX_TRACE_ENTRY = 512    # bytes of a TraceEntry searched (168 in 2.15)
CLOCK_PAIRS = 1001       # ApproximateClockToUnixTimeConverter's replicates


def traced(keep, pool):
    """Fills the trace with entries of known shape: allocations of distinct sizes on two
    streams, one in a private pool where torch has MemPools, a free, with user metadata where
    torch records it; returns the snapshot's entries as the ring holds them after it (the
    snapshot appends one of its own, of the active bytes)."""
    mem = torch.cuda.memory
    if hasattr(mem, '_set_memory_metadata'):
        mem._set_memory_metadata('culeak probe metadata, longer than 15')
    with torch.cuda.stream(keep['side_stream']):
        keep['traced'] = [torch.empty(7000001 + 512 * i, dtype=torch.uint8, device='cuda')
                          for i in range(3)]
    if pool is not None:
        with torch.cuda.use_mem_pool(pool):
            keep['traced'].append(torch.empty(6000001, dtype=torch.uint8, device='cuda'))
    keep['traced'].pop(0)
    snap = mem._snapshot()
    entries = snap['device_traces'][0]
    active = sum(b['size'] for s in snap['segments'] for b in s['blocks']
                 if b['state'] in ('active_allocated', 'active_pending_free'))
    entries.append({'action': 'snapshot', 'addr': 0, 'size': active, 'stream': 0})
    if hasattr(mem, '_set_memory_metadata'):
        mem._set_memory_metadata('')
    return entries[-TRACE_SLOTS:] if len(entries) > TRACE_SLOTS else None


def find_trace(nca, dca, keep, out):
    """The trace ring buffer of _record_memory_history(max_entries=N): in the
    DeviceCachingAllocator a pointer to the std::vector<TraceEntry> of its N entries, the index of
    the oldest (alloc_trace_next) and N (alloc_trace_max_entries) near it; in a TraceEntry its
    action, address, size, stream, recorded context, private pool, time (TSC ticks), compile
    context and user metadata; and the NativeCachingAllocator's clock converter (1001 pairs of
    unix nanoseconds and TSC ticks, measured when it was made), which torch turns the ticks into
    the snapshot's time_us with."""
    pool = keep.get('pool')
    torch.cuda.memory._record_memory_history(stacks='python', max_entries=TRACE_SLOTS)
    # the second snapshot (of the active bytes) is traced too: take entries until the count
    # before it is known, i.e. read the ring after a snapshot whose own entry is the newest
    want = traced(keep, pool)
    if want is None:
        fail('TraceEntry: fewer entries than the ring holds')
    global MAPS
    MAPS = maps()
    addrs = {e['addr'] for e in want if e['action'] != 'snapshot'}
    cands = []
    for o in range(0, MAX_DCA, 8):
        if not readable(dca + o):
            break
        v = u64(dca + o)
        if v % 8 or not readable(v, 24):
            continue
        begin, end = u64(v), u64(v + 8)
        if begin % 8 or end <= begin or (end - begin) % TRACE_SLOTS or \
                (end - begin) // TRACE_SLOTS > MAX_TRACE_ENTRY or not readable(begin, end - begin):
            continue
        words = {u64(a) for a in range(begin, end, 8)}
        if addrs <= words:
            cands.append((o, begin, (end - begin) // TRACE_SLOTS))
    out['dca_trace_entries'], begin, size = unique(cands, 'the trace ring (std::vector<TraceEntry>*)')
    out['te_stride'] = size
    # the oldest entry's slot: where the entries of the snapshot's order start
    def entry(k, i):
        return begin + size * ((k + i) % TRACE_SLOTS)

    def where(k, want_of, width=8):
        return [o for o in range(0, size - width + 1, width)
                if all((u64(entry(k, i) + o) if width == 8 else u64(entry(k, i) + o) & 0xffffffff)
                       == want_of(e) for i, e in enumerate(want) if want_of(e) is not None)]

    ks = [k for k in range(TRACE_SLOTS)
          if 0 in where(k, lambda e: ACTIONS.index(e['action']), width=4)]
    k = unique(ks, 'the oldest trace entry')
    out['te_action'] = 0
    out['te_addr'] = unique([o for o in where(k, lambda e: e['addr']) if o], 'TraceEntry.addr_')
    out['te_size'] = unique([o for o in where(k, lambda e: e['size'])], 'TraceEntry.size_')
    out['te_stream'] = unique([o for o in where(k, lambda e: e['stream'])], 'TraceEntry.stream_')
    ctx = [o for o in range(8, size, 8)
           if all(class_name(u64(entry(k, i) + o)) == 'N5torch17CapturedTracebackE'
                  for i, e in enumerate(want) if e['action'] != 'snapshot')]
    out['te_context'] = unique(ctx, 'TraceEntry.context_')
    pool_id = tuple(keep['pool_id'])
    if pool is not None and any(e.get('pool_id') for e in want) or size >= 104:
        pooled = [i for i, e in enumerate(want) if e['size'] == 6000001]
        cands = [o for o in range(8, size - 8, 8) if pooled and all(
            (u64(entry(k, i) + o), u64(entry(k, i) + o + 8)) == pool_id for i in pooled)]
        out['te_mempool'] = unique(cands, 'TraceEntry.mempool_')
    # std::strings {data, length, capacity or inline bytes}: the compile context torch records
    # ("N/A" outside torch.compile), then the user metadata
    def strings(text):
        return [o for o in range(8, size - 31, 8)
                if all(readable(u64(entry(k, i) + o), max(1, len(text))) and
                       u64(entry(k, i) + o + 8) == len(text) and
                       ctypes.string_at(u64(entry(k, i) + o), len(text)) == text.encode()
                       for i in range(TRACE_SLOTS) if want[i]['action'] != 'snapshot')]
    if 'compile_context' in want[0]:
        out['te_compile_context'] = unique(strings(want[0]['compile_context']),
                                           'TraceEntry.compile_context_')
    if 'user_metadata' in want[0]:
        metas = {e['user_metadata'] for e in want if e['action'] != 'snapshot'}
        out['te_user_metadata'] = unique(strings(metas.pop()) if len(metas) == 1 else [],
                                         'TraceEntry.user_metadata_')
    # the time: TSC ticks, rising entry by entry, in the range of the converter's
    if size <= 48:   # 2.1: no time in the trace
        return stop_trace(dca, k, keep, out)
    out['nca_clock'] = find_clock(nca)
    tsc0 = u64(nca + out['nca_clock'] + 8)
    taken = {v + w for k_, v in out.items() if k_.startswith('te_') and k_ != 'te_stride'
             for w in range(0, {'te_mempool': 16}.get(k_, 32 if k_.endswith('context') and
                                                      k_ != 'te_context' or
                                                      k_.endswith('metadata') else 8), 8)}
    times = [o for o in range(8, size, 8) if o not in taken
             and all(tsc0 < u64(entry(k, i) + o) < tsc0 << 1 for i in range(TRACE_SLOTS)) and
             all(u64(entry(k, i) + o) <= u64(entry(k, i + 1) + o) for i in range(TRACE_SLOTS - 1))]
    out['te_time'] = unique(times, 'TraceEntry.time_')
    stop_trace(dca, k, keep, out)


def stop_trace(dca, k, keep, out):
    """alloc_trace_next (k) and alloc_trace_max_entries, near the ring's vector pointer."""
    near = range(out['dca_trace_entries'] - 64, out['dca_trace_entries'], 8)
    out['dca_trace_max'] = unique([o for o in near if u64(dca + o) == TRACE_SLOTS],
                                  'alloc_trace_max_entries')
    nexts = [o for o in near if u64(dca + o) == k and o != out['dca_trace_max']]
    # words equal to it by chance (zeros abound): one more entry moves it on by one
    keep['traced'].append(torch.empty(1001, dtype=torch.uint8, device='cuda'))
    nexts = [o for o in nexts if u64(dca + o) == (k + 1) % TRACE_SLOTS]
    out['dca_trace_next'] = unique(nexts, 'alloc_trace_next')
    torch.cuda.memory._record_memory_history(enabled=None)


def find_clock(nca):
    """The converter's start pairs: 1001 pairs of unix nanoseconds (now, within a day) and TSC
    ticks, both rising."""
    import time
    now = time.time_ns()
    cands = []
    for o in range(0, MAX_NCA - 16 * CLOCK_PAIRS, 8):
        if not readable(nca + o, 16 * CLOCK_PAIRS):
            break
        first, last = u64(nca + o), u64(nca + o + 16 * (CLOCK_PAIRS - 1))
        if now - 86400 * 10**9 < first <= last <= now and \
                0 < u64(nca + o + 8) <= u64(nca + o + 16 * (CLOCK_PAIRS - 1) + 8) and \
                (o < 16 or not now - 86400 * 10**9 < u64(nca + o - 16) <= now):
            cands.append(o)
    return unique(cands, 'ApproximateClockToUnixTimeConverter.start_times_')


# ---------------------------------------------------------------- main

def probe():
    global MAPS
    keep = fill()
    torch.cuda.synchronize()
    blocks = snapshot_blocks()   # first: what it frees (a big snapshot's memory) is then gone
    MAPS = maps()
    grow = keep['grow_stream'].cuda_stream
    for b in blocks:
        b['expandable'] = b['stream'] == grow
    segments = {b['segment'] for b in blocks}
    out = FOUND
    out.update(torch=torch.__version__, cuda_major=int(torch.version.cuda.split('.')[0]))

    d_size, d_req = find_blocks(blocks, segments)
    k, prev, nxt = find_chain(blocks)
    for b in blocks:
        b['start'] = b['at'] - k
    out.update(blk_ptr=k, blk_size=k - d_size, blk_requested=k - d_req, blk_prev=prev,
               blk_next=nxt)

    side = keep['side_stream'].cuda_stream
    by_stream = [b for b in blocks if b['stream'] in (0, side)]
    out['blk_stream'] = unique([o for o in block_word_offsets(by_stream, lambda b: b['stream'])
                                if o not in block_members(out)], 'Block.stream')
    exp_segs = {b['segment'] for b in blocks if b['stream'] == grow}
    if len(exp_segs) != 1:
        fail('want one expandable segment, the snapshot has %d' % len(exp_segs))
    exp_seg = exp_segs.pop()
    # expandable: the same pointer in every block of the expandable segment, 0 elsewhere
    exp_blocks = [b for b in blocks if b['segment'] == exp_seg]
    first = exp_blocks[0]['start']
    cands = [o for o in range(0, MAX_BLOCK, 8)
             if readable(first + o) and u64(first + o) and u64(first + o) % 8 == 0 and
             o not in block_members(out) and
             all(u64(b['start'] + o) == u64(first + o) for b in exp_blocks) and
             all(u64(b['start'] + o) == 0 for b in blocks if b['segment'] != exp_seg)]
    out['blk_expandable'] = unique(cands, 'Block.expandable_segment_')
    # allocated then mapped: bools, 1/0 by the snapshot's state; every block here is mapped
    alloc = block_word_offsets(blocks, lambda b: int(b['state'] == 'active_allocated'), width=1)
    alloc = [o for o in alloc if o + 1 in block_word_offsets(blocks, lambda b: 1, width=1)]
    out['blk_allocated'] = unique(alloc, 'Block.allocated')
    out['blk_mapped'] = out['blk_allocated'] + 1

    find_context(keep, blocks, out)

    # pool: one BlockPool* per pool, the device's large and small pools 1 word apart by size
    def pool_key(b):
        return (b['pool_id'], b['pool'])
    cands = []
    for o in range(0, MAX_BLOCK, 8):
        if o in block_members(out):
            continue
        v = {}
        for b in blocks:
            v.setdefault(pool_key(b), set()).add(u64(b['start'] + o))
        if all(len(s) == 1 and 0 not in s for s in v.values()) and \
                len({next(iter(s)) for s in v.values()}) == len(v):
            cands.append(o)
    out['blk_pool'] = unique(cands, 'Block.pool')
    pool_of = {pool_key(b): u64(b['start'] + out['blk_pool']) for b in blocks}
    large, small = pool_of[((0, 0), 'large')], pool_of[((0, 0), 'small')]
    out['bp_size'] = small - large
    if not 64 <= out['bp_size'] <= MAX_BLOCK_POOL:
        fail('BlockPool: small pool at %+d from the large one' % out['bp_size'])

    # DeviceCachingAllocator: the device list of the allocator object names the one whose
    # BlockPools these are
    lib = next(p for _, _, _, p in MAPS if p.endswith('.so') and '/libc10_cuda' in p)
    nca = ctypes.c_void_p.in_dll(ctypes.CDLL(lib), ALLOCATOR_SYMBOL).value
    cands = []
    for o in range(0, MAX_NCA - 24, 8):
        if not readable(nca + o, 24):
            break
        begin, end = u64(nca + o), u64(nca + o + 8)
        if end == begin + 8 and readable(begin):
            dca = u64(begin)
            if dca < large < dca + MAX_DCA:
                cands.append((o, dca))
    out['nca_device_allocator'], dca = unique(
        cands, 'NativeCachingAllocator.device_allocator (object at %#x)' % nca)
    out['dca_large_blocks'] = large - dca
    allocated, reserved = torch.cuda.memory_allocated(), torch.cuda.memory_reserved()
    stats = [o for o in range(0, out['dca_large_blocks'], 8)
             if u64(dca + o) == allocated and u64(dca + o + 96) == reserved]
    out['dca_allocated_bytes'] = unique(stats, 'DeviceStats allocated_bytes/reserved_bytes')
    out['dca_reserved_bytes'] = out['dca_allocated_bytes'] + 96

    # BlockPool: the free set at +0 holds the pool's free mapped blocks, the unmapped one the
    # expandable segment's unmapped ranges
    def starts(pred):
        return sorted(b['start'] for b in blocks if pred(b))
    free = starts(lambda b: pool_key(b) == ((0, 0), 'large') and b['state'] == 'inactive')
    if sorted(set_values(large) or [None]) != free:
        fail('BlockPool: the set at +0 of the large pool is not its free blocks')
    # (a set of the same free blocks in another order may sit between them, as in 2.13)
    mapped = starts(lambda b: True)
    unmapped = [o for o in range(48, out['bp_size'] - 47, 8)
                if set_values(large + o) and set_values(small + o) == [] and
                not set(set_values(large + o)) & set(mapped)]
    out['bp_unmapped'] = unique(unmapped, 'BlockPool.unmapped (a set of blocks the snapshot '
                                'does not list, the expandable tail)')

    # private pool: its id in graph_pools, its BlockPools' owner
    pool_id = keep['pool_id']
    priv_large = pool_of[(pool_id, 'large')]
    cands = []
    for o in range(out['dca_large_blocks'] + 2 * out['bp_size'], MAX_DCA, 8):
        entries = ska_entries(dca + o, 32)
        if entries and any((u64(e + 8), u64(e + 16)) == pool_id for e in entries):
            cands.append(o)
    out['dca_graph_pools'] = unique(cands, 'DeviceCachingAllocator.graph_pools')
    entry = next(e for e in ska_entries(dca + out['dca_graph_pools'], 32)
                 if (u64(e + 8), u64(e + 16)) == pool_id)
    pp = u64(entry + 24)
    out['pp_has_id'] = (u64(pp), u64(pp + 8)) == pool_id
    out['pp_large_blocks'] = priv_large - pp
    if not 0 <= out['pp_large_blocks'] < 256:
        fail('PrivatePool: its large pool at %+d' % out['pp_large_blocks'])
    priv_small = priv_large + out['bp_size']
    owner = [o for o in range(out['bp_unmapped'] + 48, out['bp_size'], 8)
             if u64(large + o) == 0 and u64(small + o) == 0 and u64(priv_large + o) == pp and
             u64(priv_small + o) == pp]
    out['bp_owner'] = unique(owner, 'BlockPool.owner_PrivatePool')
    is_small = [o for o in range(out['bp_unmapped'] + 48, out['bp_owner'])
                if (u8(large + o), u8(small + o), u8(priv_large + o), u8(priv_small + o)) ==
                (0, 1, 0, 1)]
    out['bp_is_small'] = unique(is_small, 'BlockPool.is_small')

    # active_blocks: the set of every allocated block, and of nothing else
    active = starts(lambda b: b['state'] in ('active_allocated', 'active_pending_free'))
    cands = [o for o in range(out['dca_large_blocks'] + 2 * out['bp_size'], MAX_DCA, 8)
             if sorted(u64(e + 8) for e in ska_entries(dca + o, 16) or []) == active]
    out['dca_active_blocks'] = unique(cands, 'DeviceCachingAllocator.active_blocks')
    find_trace(nca, dca, keep, out)
    del keep
    return out


def main():
    try:
        out = probe()
    except ProbeError as e:
        print('probe_allocator: torch %s: %s (found so far: %s)' % (
            torch.__version__, e, json.dumps(FOUND)), file=sys.stderr)
        return 1
    print(json.dumps(out, indent=1))
    return 0


if __name__ == '__main__':
    sys.exit(main())

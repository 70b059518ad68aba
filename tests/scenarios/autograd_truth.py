"""Ground truth about holders from inside a process, shared by the holder scenarios: what a
global reaches (gc.get_referents plus the autograd graph, as culeak's graph is defined) and the
autograd graph as Python sees it (next_functions, _saved_*), and what deleting a global frees."""
import gc
import os
import sys

import torch
from torch.multiprocessing.reductions import StorageWeakRef

BARRIER_OBJECTS = []   # kept alive, so their ids stay theirs (some modules make vars() afresh)


def barriers():
    """ids of every module and module dict: roots of their own, where culeak's walks stop."""
    if not BARRIER_OBJECTS:
        for m in list(sys.modules.values()):
            BARRIER_OBJECTS.extend([m, vars(m)] if hasattr(m, "__dict__") else [m])
    return {id(o) for o in BARRIER_OBJECTS}


def saved_tensor(node, attr):
    """A node's saved tensor as its SavedVariable holds it: _raw_saved_X.data does not check the
    version (an optimizer step may have modified it in place since); older releases unpack."""
    raw = getattr(node, "_raw" + attr, None)
    try:
        return raw.data if hasattr(raw, "data") else getattr(node, attr)
    except RuntimeError:   # released by backward(), or modified in place (before 2.13)
        return None


def saved_tensors(node):
    found = []
    for attr in dir(node):
        if not attr.startswith("_saved_"):
            continue
        v = saved_tensor(node, attr)
        for t in (v if isinstance(v, (list, tuple)) else [v]):
            if isinstance(t, torch.Tensor):
                found.append(t)
    if hasattr(node, "saved_tensors"):   # a custom Function's ctx
        try:
            found += [t for t in node.saved_tensors if isinstance(t, torch.Tensor)]
        except RuntimeError:
            pass
    return found


def graph_saved(losses):
    """Every tensor the graphs of losses saved, through next_functions (one node once)."""
    seen, todo = set(), [loss.grad_fn for loss in losses]
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        yield from saved_tensors(node)
        todo += [f for f, _ in node.next_functions]


def storage(t):
    return t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()   # < 2.0


def untyped_storage(t):
    """t's torch.UntypedStorage object (before 2.0 the one its TypedStorage wraps)."""
    s = storage(t)
    return s if type(s).__name__ == "UntypedStorage" else s._storage


def storage_ptr(t):
    return storage(t).data_ptr()


def tensor_fields(t):
    """What torch says of a tensor, as `culeak tensors --json` names it."""
    return {"address": hex(id(t)), "data_ptr": hex(t.data_ptr()), "shape": list(t.shape),
            "strides": list(t.stride()), "storage_offset": t.storage_offset(),
            "dtype": str(t.dtype).split(".")[-1], "nbytes": storage(t).nbytes(),
            "requires_grad": t.requires_grad, "type": type(t).__name__, "device": str(t.device),
            "grad_fn": type(t.grad_fn).__name__ if t.grad_fn is not None else None}


def reachable(obj):
    """data_ptrs of the storages obj reaches, walking as culeak's graph is defined."""
    return sorted(storages(obj))


def storages(obj):
    """{data_ptr: (nbytes, device)} of the storages obj reaches, walking as culeak's graph is
    defined."""
    return {p: (s.nbytes(), str(s.device)) for p, s in storage_objects(obj).items()}


def storage_objects(obj):
    """{data_ptr: storage} of the storages obj reaches (a tensor's, or a torch.UntypedStorage
    object's)."""
    stop = barriers()
    seen, found, todo, alive = set(), {}, [obj], []
    while todo:
        o = todo.pop()
        if id(o) in seen or id(o) in stop:
            continue
        seen.add(id(o))
        alive.append(o)   # node wrappers may be made afresh: keep each alive so ids stay unique
        if issubclass(type(o), torch.Tensor):   # type(): no module's __getattr__ runs
            found[storage_ptr(o)] = storage(o)
            todo += [t for t in (o.grad, o._base, o.grad_fn) if t is not None]
        if issubclass(type(o), torch._C.StorageBase):   # a torch.UntypedStorage object
            found[o.data_ptr()] = o
        if hasattr(type(o), "next_functions"):   # an autograd node (1.13 has no graph.Node)
            try:
                todo += [f for f, _ in getattr(o, "next_functions", ()) if f is not None]
                todo += saved_tensors(o)
                if issubclass(type(o), torch._C._FunctionBase):   # a custom Function's ctx
                    todo += list(o.saved_tensors)
            except RuntimeError:   # a ctx whose node is gone, which released them (up to 2.12)
                pass
            if hasattr(o, "variable"):
                todo.append(o.variable)
        todo += gc.get_referents(o)
    return found


def freed_in_fork(namespace, name, storages_of):
    """Bytes that deleting namespace[name] frees, measured in a fork() so that the job keeps it:
    the nbytes of the storages storages_of() gives ({data_ptr: storage}) whose StorageWeakRef
    expired after `del` and gc.collect()."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        refs = {p: (StorageWeakRef(s), s.nbytes()) for p, s in storages_of().items()}
        del namespace[name]
        gc.collect()
        gone = sum(n for ref, n in refs.values() if ref.expired())
        os.write(write, str(gone).encode())
        os._exit(0)
    os.close(write)
    got = os.read(read, 64)
    os.waitpid(pid, 0)
    return int(got)


def graph_edges(root):
    """Every node reachable from root through next_functions, breadth first."""
    nodes, index, todo = [], {}, [root]   # nodes keeps every wrapper alive: ids stay unique
    while todo:
        n = todo.pop(0)
        if n is None or id(n) in index:
            continue
        index[id(n)] = len(nodes)
        nodes.append(n)
        todo += [f for f, _ in n.next_functions]
    return [{"class": type(n).__name__,
             "next": [index[id(f)] if f is not None else None for f, _ in n.next_functions],
             "saved": sorted(storage_ptr(t) for t in saved_tensors(n))} for n in nodes]



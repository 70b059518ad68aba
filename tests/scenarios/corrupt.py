"""Scenario: a process that damages some of its own objects through ctypes, as a memory-corrupting
extension would, and then only sleeps (the collector is off, so nothing in it touches them again):

* a list, a dict and a set (each the only holder of one tensor, with --torch) whose item array,
  keys table and hash table are moved to a PROT_NONE page: their contents cannot be read;
* a tuple subclass instance and an int whose ob_size is INT64_MIN (a var-sized object with its
  dict after its items, and an int's digit count).

Prints its ground truth (what it damaged, each tensor's data pointer), then READY.

argv: [--torch]"""
import ctypes
import gc
import json
import mmap
import os
import sys
import time

gc.disable()
torch = None
if "--torch" in sys.argv:
    import torch

libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                      ctypes.c_long]
PROT_NONE = 0
hole = libc.mmap(None, mmap.PAGESIZE, PROT_NONE, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
assert hole and hole != ctypes.c_void_p(-1).value

# Offsets in CPython's own structs, the same in 3.9-3.13 (Include/cpython/listobject.h,
# dictobject.h, setobject.h): PyListObject.ob_item, PyDictObject.ma_keys, PySetObject.table.
LIST_OB_ITEM, DICT_MA_KEYS, SET_TABLE, OB_SIZE = 24, 32, 40, 16


def poke(obj, offset, value):
    ctypes.c_int64.from_address(id(obj) + offset).value = value


def payload(i):
    return torch.full((64 * (i + 1),), float(i)) if torch else object()


class Row(tuple):   # var-sized, so instances keep their __dict__ after their items
    pass


held = [payload(i) for i in range(3)]
broken_list = [held[0]]
broken_dict = {"k": held[1]}
broken_set = {held[2]}
row = Row((1, 2, 3))
row.note = "attribute in the dict after the items"
huge = 10 ** 40
truth = {"pid": os.getpid(), "unreadable": {"list": 1, "dict": 1, "set": 1, "tuple": 1},
         "tensors": [t.untyped_storage().data_ptr() for t in held] if torch else []}
del held   # each payload's only holder is now its damaged container
poke(broken_list, LIST_OB_ITEM, hole)
poke(broken_dict, DICT_MA_KEYS, hole)
poke(broken_set, SET_TABLE, hole)
poke(row, OB_SIZE, -2 ** 63)
poke(huge, OB_SIZE, -2 ** 63)
print(json.dumps(truth), flush=True)
print("READY", flush=True)
time.sleep(3600)

"""Scenario: objects held only by frame locals, in two threads and at two depths, with the line
each frame is executing recorded by the frames themselves. Prints one JSON line with each
marker's address and expected path, then READY, and waits.

argv: [--abort]"""
import json
import os
import sys
import threading
import time


class Marker:
    pass


truth = {"pid": os.getpid(), "markers": {}}
ready = threading.Event()


def here():
    return sys._getframe(1).f_lineno


def expect(name, obj, path):
    truth["markers"][name] = {"address": hex(id(obj)), "path": path}


def worker_body():
    held = Marker()
    expect("worker", held, "<thread worker: worker_body() at frames.py:%d>.held" % (here() + 1))
    ready.set() or time.sleep(3600)


def inner(level):
    deep = Marker()
    expect("inner", deep, "<thread main: inner() at frames.py:%d>.deep" % (here() + 2))
    print(json.dumps(truth), flush=True)
    print("READY", flush=True) or (os.abort() if "--abort" in sys.argv else time.sleep(3600))


def outer():
    shallow = Marker()
    expect("outer", shallow, "<thread main: outer() at frames.py:%d>.shallow" % (here() + 1))
    inner(1)


threading.Thread(target=worker_body, name="worker", daemon=True).start()
ready.wait()
outer()

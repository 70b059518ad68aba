"""Scenario: every GC-tracked C type of the standard library (issue 41's sweep). Imports every
importable module of the standard library, collects each C type with Py_TPFLAGS_HAVE_GC (static
types and the heap types C modules make alike; a class statement's type is left out, its
tp_traverse being CPython's subtype_traverse), and for each gives up to PER_TYPE live instances
with their gc.get_referents. A type with no live instance is made one by the CONSTRUCT table;
one the table cannot make says why in SKIP.

Prints one JSON line, then READY, and waits (gc is disabled, so nothing moves):
  {"pid", "version": [3, minor],
   "types": {module.qualname: {"tp_name": str, "heap": bool,
                       "instances": [{"address": hex, "referents": [[hex, type]]}],
                       "skip": reason or null}},
   "unmade": [tp_name],      C types with no live instance, no CONSTRUCT entry and no SKIP line
   "problems": [str]}        CONSTRUCT entries that failed
Referents leave out None, True, False and Ellipsis (culeak reads them as constants, no nodes)."""
import ctypes
import gc
import json
import os
import pkgutil
import sys
import sysconfig
import threading
import warnings

gc.disable()
PER_TYPE = 3

# Modules whose import acts (opens a browser, prints, starts a GUI) or takes minutes, and
# CPython's own test helpers (_testcapi and the like), which programs do not import.
NOT_IMPORTED = {"antigravity", "this", "idlelib", "turtledemo", "__phello__", "__hello__",
                "_tkinter", "tkinter", "turtle", "lib2to3", "pydoc_data", "ensurepip",
                "_pyrepl", "xxsubtype", "xxlimited", "xxlimited_35"}


def stdlib_modules():
    names = set(getattr(sys, "stdlib_module_names", ()))
    if not names:   # 3.9: the standard library's directory and the built-in modules
        lib = sysconfig.get_paths()["stdlib"]
        names = {m.name for m in pkgutil.iter_modules([lib, os.path.join(lib, "lib-dynload")])}
        names.update(sys.builtin_module_names)
    return sorted(n for n in names - NOT_IMPORTED if not n.startswith("_test"))


def import_all():
    warnings.simplefilter("ignore")
    saved = sys.stdout, sys.stderr
    with open(os.devnull, "w") as null:
        sys.stdout = sys.stderr = null
        try:
            for name in stdlib_modules():
                try:
                    __import__(name)
                except BaseException:   # a module this build lacks, or one that exits
                    pass
        finally:
            sys.stdout, sys.stderr = saved


import_all()

# tp_traverse's place in PyTypeObject: word 23 on every 64-bit release without Py_TRACE_REFS.
# tp_flags (word 21) is checked against __flags__ first, so a build where the words moved fails
# here instead of misjudging which types are C types.
TP_NAME, TP_FLAGS, TP_TRAVERSE = 3 * 8, 21 * 8, 23 * 8
HAVE_GC = 1 << 14


def word(t, offset):
    return ctypes.c_uint64.from_address(id(t) + offset).value


class PythonClass:
    pass


if word(PythonClass, TP_FLAGS) != PythonClass.__flags__:
    raise SystemExit("c_types.py: tp_flags is not word 21 of PyTypeObject in this build")
SUBTYPE_TRAVERSE = word(PythonClass, TP_TRAVERSE)


def all_types():
    seen, todo = {}, [object]
    todo += [type(o) for o in gc.get_objects()]
    todo += [o for o in gc.get_objects() if isinstance(o, type)]
    while todo:
        t = todo.pop()
        if id(t) in seen:
            continue
        seen[id(t)] = t
        try:
            todo += type.__subclasses__(t)
        except TypeError:
            pass
    return seen.values()


def is_c_gc_type(t):
    return bool(t.__flags__ & HAVE_GC) and word(t, TP_TRAVERSE) != SUBTYPE_TRAVERSE


CONSTANTS = {id(None), id(True), id(False), id(Ellipsis), id(NotImplemented)}

class Marker:
    """What an instance refers to: an object only the instance (and KEPT) holds."""


def m():
    return Marker()


class Seq:
    """An old-style sequence: iter() makes a seqiter ("iterator") of it, reversed() a reversed."""
    def __len__(self):
        return 3

    def __getitem__(self, i):
        if i > 2:
            raise IndexError
        return Marker()


def gen():
    x = m()
    yield x
    yield x


async def coro():
    x = m()
    return x


async def agen():
    x = m()
    yield x
    yield x


def started(g):
    next(g)
    return g


def frame():
    marker = m()
    return sys._getframe()


def traceback_of():
    try:
        raise ValueError(m())
    except ValueError as e:
        return e.__traceback__


def exception(t):
    """An instance of exception type t with a Marker in its args and as its context."""
    if issubclass(t, getattr(__builtins__, "BaseExceptionGroup", ())):
        e = t("group", [ValueError(m())])
    else:
        e = t.__new__(t)
        e.args = (m(),)
    e.__context__ = ValueError(m())
    return e


def referent(o, type_name):
    """o's referent of that type's name: one only o makes."""
    return next(r for r in gc.get_referents(o) if type(r).__name__ == type_name)


def closed(f):
    f.close()
    return f


def xmlparser():
    import pyexpat
    p = pyexpat.ParserCreate()
    p.StartElementHandler = lambda *a, marker=m(): None
    return p


def sqlite_cache_node():
    """3.9/3.10: a statement in a connection's own cache."""
    import sqlite3
    c = sqlite3.connect(":memory:")
    c.execute("select 1")
    cache = referent(c, "Cache")
    return next(n for n in gc.get_referents(referent(cache, "dict"))
                if type(n).__name__ == "Node")


def sqlite_row():
    import sqlite3
    c = sqlite3.connect(":memory:")
    c.row_factory = sqlite3.Row
    return c.execute("select 1 as one").fetchone()


def simple_cdata():
    import ctypes
    return ctypes.c_int(3)


def hamt_node(n, type_name):
    """The root of the HAMT of a Context of n variables: a bitmap node, or an array node once
    there are more than 16."""
    import contextvars
    ctx = contextvars.Context()
    ctx.run(lambda: [contextvars.ContextVar("v%d" % i).set(m()) for i in range(n)])
    return referent(referent(ctx, "hamt"), type_name)


def instancemethod():
    import ctypes
    new = ctypes.pythonapi.PyInstanceMethod_New
    new.restype, new.argtypes = ctypes.py_object, [ctypes.py_object]
    return new(lambda self, marker=m(): None)


def waitid_result():
    pid = os.posix_spawn("/bin/true", ["true"], os.environ)
    return os.waitid(os.P_PID, pid, os.WEXITED)


def siginfo():
    import signal
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR2])
    os.kill(os.getpid(), signal.SIGUSR2)
    return signal.sigtimedwait([signal.SIGUSR2], 1)


def sqlite_blob():
    import sqlite3
    c = sqlite3.connect(":memory:")
    c.execute("create table t(b blob)")
    c.execute("insert into t values (zeroblob(8))")
    return c.blobopen("t", "b", 1)


def unraisable_args():
    caught, hook = [], sys.unraisablehook
    sys.unraisablehook = caught.append

    class Fails:
        def __del__(self):
            raise ValueError(m())

    Fails()
    sys.unraisablehook = hook
    return caught[0]


def cfield():
    """A ctypes Structure's field descriptor (3.14 renamed its type ctypes.CField)."""
    import ctypes

    class Pair(ctypes.Structure):
        _fields_ = [("first", ctypes.c_int)]
    return Pair.__dict__["first"]


def template():
    """A t-string (3.14): eval'd, so that older interpreters can compile this file."""
    return eval('t"{marker}"', {"marker": m()})


def dict_remover():
    """The weak proxy callback that an array type's cache entry keeps (ctypes' c_int * 5)."""
    key = (__import__("ctypes").c_int, 5)
    __import__("ctypes").c_int * 5
    return next(o for o in gc.get_objects()
                if type(o).__name__ == "DictRemover" and key in gc.get_referents(o))


def generic():
    import typing
    T = typing.TypeVar("T")
    return __import__("types").new_class("G", (typing.Generic[T],))()


# Made where none is alive: tp_name -> a function returning one instance (kept alive in KEPT).
# Each refers to what its type can hold (a Marker where it can) so that a reader that misses a
# field fails.
CONSTRUCT = {
    "_asyncio.Future": lambda: __import__("asyncio").Future(loop=LOOP),
    "_asyncio.Task": lambda: LOOP.create_task(coro()),
    "_asyncio.FutureIter": lambda: __import__("asyncio").Future(loop=LOOP).__await__(),
    "_contextvars.Token": lambda: __import__("contextvars").ContextVar("v").set(m()),
    "_csv.reader": lambda: __import__("csv").reader(iter([m()])),
    "_csv.writer": lambda: __import__("csv").writer(__import__("io").StringIO()),
    "_ctypes.Array": lambda: (__import__("ctypes").py_object * 2)(m(), m()),
    "_ctypes.CField": lambda: cfield(),
    "_ctypes.DictRemover": dict_remover,
    "ctypes.CField": lambda: cfield(),
    "_ctypes.CFuncPtr": lambda: __import__("ctypes").CFUNCTYPE(None)(lambda marker=m(): None),
    "_ctypes.Structure": lambda: type("S", (__import__("ctypes").Structure,),
                                      {"_fields_": [("o", __import__("ctypes").py_object)]})(m()),
    "_ctypes.Union": lambda: type("U", (__import__("ctypes").Union,),
                                  {"_fields_": [("o", __import__("ctypes").py_object)]})(m()),
    "_ctypes._Pointer": lambda: __import__("ctypes").pointer(__import__("ctypes").c_int(1)),
    "_ctypes._SimpleCData": simple_cdata,
    "_elementtree._element_iterator":
        lambda: __import__("xml.etree.ElementTree").etree.ElementTree.Element("a").iter(),
    "_io.BufferedRWPair": lambda: __import__("io").BufferedRWPair(__import__("io").BytesIO(),
                                                                  __import__("io").BytesIO()),
    "_io.BufferedRandom": lambda: __import__("io").BufferedRandom(__import__("io").BytesIO()),
    "_io.BufferedWriter": lambda: __import__("io").BufferedWriter(__import__("io").BytesIO()),
    "_io.BytesIO": lambda: __import__("io").BytesIO(b"x" * 100),
    "_io.StringIO": lambda: __import__("io").StringIO("x" * 100),
    "_io.IncrementalNewlineDecoder":
        lambda: __import__("io").IncrementalNewlineDecoder(
            __import__("codecs").getincrementaldecoder("utf-8")(), True),
    "_json.Encoder": lambda: __import__("json").encoder.c_make_encoder(
        {}, lambda o, marker=m(): None, lambda o: "", None, ":", ",", False, False, True),
    "_lsprof.Profiler": lambda: __import__("_lsprof").Profiler(lambda marker=m(): 0),
    "_md5.md5": lambda: __import__("_md5").md5(),
    "_sha1.sha1": lambda: __import__("_sha1").sha1(),
    "_sha2.SHA224Type": lambda: __import__("_sha2").sha224(),
    "_sha2.SHA256Type": lambda: __import__("_sha2").sha256(),
    "_sha2.SHA384Type": lambda: __import__("_sha2").sha384(),
    "_sha2.SHA512Type": lambda: __import__("_sha2").sha512(),
    "_sha256.sha224": lambda: __import__("_sha256").sha224(),
    "_sha256.sha256": lambda: __import__("_sha256").sha256(),
    "_sha512.sha384": lambda: __import__("_sha512").sha384(),
    "_sha512.sha512": lambda: __import__("_sha512").sha512(),
    "_multibytecodec.MultibyteCodec": lambda: __import__("_codecs_cn").getcodec("gb2312"),
    "_multibytecodec.MultibyteIncrementalDecoder":
        lambda: __import__("codecs").getincrementaldecoder("gb2312")(),
    "_multibytecodec.MultibyteIncrementalEncoder":
        lambda: __import__("codecs").getincrementalencoder("gb2312")(),
    "_multibytecodec.MultibyteStreamReader":
        lambda: __import__("codecs").getreader("gb2312")(__import__("io").BytesIO()),
    "_multibytecodec.MultibyteStreamWriter":
        lambda: __import__("codecs").getwriter("gb2312")(__import__("io").BytesIO()),
    "_multiprocessing.SemLock": lambda: __import__("multiprocessing").Lock()._semlock,
    "_pickle.Pickler": lambda: __import__("_pickle").Pickler(__import__("io").BytesIO()),
    "_pickle.Unpickler": lambda: __import__("_pickle").Unpickler(__import__("io").BytesIO()),
    "_pickle.PicklerMemoProxy":
        lambda: __import__("_pickle").Pickler(__import__("io").BytesIO()).memo,
    "_pickle.UnpicklerMemoProxy":
        lambda: __import__("_pickle").Unpickler(__import__("io").BytesIO()).memo,
    "_queue.SimpleQueue": lambda: (lambda q: (q.put(m()), q)[1])(__import__("queue").SimpleQueue()),
    "_socket.socket": lambda: closed(__import__("socket").socket()),
    "_sre.SRE_Scanner": lambda: __import__("re").compile("a").scanner("a" * 10),
    "re.Match": lambda: __import__("re").match("(a)", "a" * 10),
    "_ssl.MemoryBIO": lambda: __import__("ssl").MemoryBIO(),
    "_ssl._SSLContext": lambda: __import__("ssl").SSLContext(__import__("ssl").PROTOCOL_TLS_CLIENT),
    "_ssl._SSLSocket": lambda: __import__("ssl").create_default_context().wrap_bio(
        __import__("ssl").MemoryBIO(), __import__("ssl").MemoryBIO(),
        server_hostname="example.org")._sslobj,
    "_struct.unpack_iterator": lambda: __import__("struct").iter_unpack("b", b"abc"),
    "anext_awaitable": lambda: anext(agen(), m()),
    "array.array": lambda: __import__("array").array("b", b"abc"),
    "array.arrayiterator": lambda: iter(__import__("array").array("b", b"abc")),
    "async_generator": agen,
    "async_generator_asend": lambda: agen().asend(None),
    "async_generator_athrow": lambda: agen().athrow(ValueError(m())),
    "asyncgen_hooks": lambda: sys.get_asyncgen_hooks(),
    "bytearray_iterator": lambda: iter(bytearray(b"abc")),
    "bytes_iterator": lambda: iter(b"abc"),
    "callable_iterator": lambda: iter(lambda marker=m(): 1, 0),
    "collections.OrderedDict": lambda: __import__("collections").OrderedDict(a=m()),
    "collections._deque_iterator": lambda: iter(__import__("collections").deque([m()])),
    "collections._deque_reverse_iterator":
        lambda: reversed(__import__("collections").deque([m()])),
    "coroutine": coro,
    "coroutine_wrapper": lambda: coro().__await__(),
    "datetime.IsoCalendarDate": lambda: __import__("datetime").date(2026, 1, 1).isocalendar(),
    "decimal.Decimal": lambda: __import__("decimal").Decimal("1.5"),
    "decimal.ContextManager": lambda: __import__("decimal").localcontext(),
    "decimal.SignalDictMixin": lambda: __import__("decimal").Context().flags,
    "dict_itemiterator": lambda: iter({m(): m()}.items()),
    "dict_keyiterator": lambda: iter({m(): 1}),
    "dict_valueiterator": lambda: iter({1: m()}.values()),
    "dict_reverseitemiterator": lambda: reversed({m(): m()}.items()),
    "dict_reversekeyiterator": lambda: reversed({m(): 1}),
    "dict_reversevalueiterator": lambda: reversed({1: m()}.values()),
    "dict_items": lambda: {m(): m()}.items(),
    "dict_keys": lambda: {m(): 1}.keys(),
    "dict_values": lambda: {1: m()}.values(),
    "enumerate": lambda: enumerate([m()]),
    "filter": lambda: filter(lambda x, marker=m(): x, [m()]),
    "map": lambda: map(lambda x, marker=m(): x, [m()]),
    "zip": lambda: zip([m()], [m()]),
    "reversed": lambda: reversed(Seq()),
    "frame": frame,
    "FrameLocalsProxy": lambda: frame().f_locals,
    "functools.KeyWrapper": lambda: __import__("functools").cmp_to_key(lambda a, b: 0)(m()),
    "generator": lambda: started(gen()),
    "generic_alias_iterator": lambda: iter(list[int]),
    "instancemethod": instancemethod,
    "items": lambda: iter(__import__("contextvars").copy_context().items()),
    "keys": lambda: iter(__import__("contextvars").copy_context().keys()),
    "values": lambda: iter(__import__("contextvars").copy_context().values()),
    "iterator": lambda: iter(Seq()),
    "hamt_array_node": lambda: hamt_node(40, "hamt_array_node"),
    "itertools._grouper": lambda: next(__import__("itertools").groupby([m()]))[1],
    "itertools._tee": lambda: __import__("itertools").tee([m()])[0],
    "itertools._tee_dataobject": lambda: referent(__import__("itertools").tee([m()])[0],
                                                  "_tee_dataobject"),
    "itertools.accumulate": lambda: __import__("itertools").accumulate([m()], lambda a, b: a),
    "itertools.batched": lambda: __import__("itertools").batched([m(), m()], 1),
    "itertools.chain": lambda: __import__("itertools").chain([m()], [m()]),
    "itertools.combinations": lambda: __import__("itertools").combinations([m(), m()], 1),
    "itertools.combinations_with_replacement":
        lambda: __import__("itertools").combinations_with_replacement([m(), m()], 1),
    "itertools.compress": lambda: __import__("itertools").compress([m()], [1]),
    "itertools.cycle": lambda: __import__("itertools").cycle([m()]),
    "itertools.dropwhile": lambda: __import__("itertools").dropwhile(lambda x, k=m(): 0, [m()]),
    "itertools.filterfalse":
        lambda: __import__("itertools").filterfalse(lambda x, k=m(): 0, [m()]),
    "itertools.groupby": lambda: __import__("itertools").groupby([m()], lambda x, k=m(): 1),
    "itertools.islice": lambda: __import__("itertools").islice([m()], 1),
    "itertools.pairwise": lambda: __import__("itertools").pairwise([m(), m()]),
    "itertools.permutations": lambda: __import__("itertools").permutations([m(), m()]),
    "itertools.product": lambda: __import__("itertools").product([m()], [m()]),
    "itertools.repeat": lambda: __import__("itertools").repeat(m()),
    "itertools.starmap": lambda: __import__("itertools").starmap(lambda k=m(): 0, [()]),
    "itertools.takewhile": lambda: __import__("itertools").takewhile(lambda x, k=m(): 0, [m()]),
    "itertools.zip_longest": lambda: __import__("itertools").zip_longest([m()], [], fillvalue=m()),
    "list_iterator": lambda: iter([m()]),
    "list_reverseiterator": lambda: reversed([m()]),
    "tuple_iterator": lambda: iter((m(),)),
    "set_iterator": lambda: iter({m()}),
    "str_ascii_iterator": lambda: iter("ab"),
    "str_iterator": lambda: iter("\u00e9b"),
    "memoryview": lambda: memoryview(bytearray(8)),
    "managedbuffer": lambda: referent(memoryview(bytearray(8)), "managedbuffer"),
    "memory_iterator": lambda: iter(memoryview(b"ab")),
    "mmap.mmap": lambda: __import__("mmap").mmap(-1, 4096),
    "odict_items": lambda: __import__("collections").OrderedDict(a=m()).items(),
    "odict_keys": lambda: __import__("collections").OrderedDict(a=m()).keys(),
    "odict_values": lambda: __import__("collections").OrderedDict(a=m()).values(),
    "odict_iterator": lambda: iter(__import__("collections").OrderedDict(a=m())),
    "os.stat_result": lambda: os.stat("/"),
    "os.statvfs_result": lambda: os.statvfs("/"),
    "os.statx_result": lambda: os.statx("/", os.STATX_BASIC_STATS),   # 3.15+
    "os.terminal_size": lambda: os.terminal_size((80, 24)),
    "posix.sched_param": lambda: os.sched_param(m()),
    "posix.times_result": os.times,
    "posix.uname_result": os.uname,
    "posix.waitid_result": waitid_result,
    "pwd.struct_passwd": lambda: __import__("pwd").getpwuid(0),
    "grp.struct_group": lambda: __import__("grp").getgrgid(0),
    "resource.struct_rusage": lambda: __import__("resource").getrusage(0),
    "signal.struct_siginfo": siginfo,
    "time.struct_time": __import__("time").gmtime,
    "pickle.PickleBuffer": lambda: __import__("pickle").PickleBuffer(bytearray(8)),
    "pyexpat.xmlparser": xmlparser,
    "sqlite3.Blob": sqlite_blob,
    "sqlite3.Connection": lambda: __import__("sqlite3").connect(":memory:"),
    "sqlite3.Cursor": lambda: __import__("sqlite3").connect(":memory:").cursor(),
    "sqlite3.PrepareProtocol": lambda: __import__("sqlite3").PrepareProtocol(),
    "sqlite3.Row": sqlite_row,
    "sqlite3.Statement": lambda: referent(
        __import__("sqlite3").connect(":memory:").execute("select 1"), "Statement"),
    "super": lambda: super(Marker, Marker()),
    "traceback": traceback_of,
    "typing.Generic": generic,
    "typing.ParamSpec": lambda: __import__("typing").ParamSpec("P"),
    "typing.ParamSpecArgs": lambda: __import__("typing").ParamSpec("P").args,
    "typing.ParamSpecKwargs": lambda: __import__("typing").ParamSpec("P").kwargs,
    "typing.TypeVarTuple": lambda: __import__("typing").TypeVarTuple("Ts"),
    "weakref.ProxyType": lambda: __import__("weakref").proxy(KEEP_ALIVE),
    "weakref.CallableProxyType": lambda: __import__("weakref").proxy(KEEP_ALIVE_CALLABLE),
    "xml.etree.ElementTree.Element":
        lambda: __import__("xml.etree.ElementTree").etree.ElementTree.Element("a", b=m()),
    "xml.etree.ElementTree.TreeBuilder":
        lambda: __import__("xml.etree.ElementTree").etree.ElementTree.TreeBuilder(),
    "xml.etree.ElementTree.XMLParser":
        lambda: __import__("xml.etree.ElementTree").etree.ElementTree.XMLParser(),
    "zoneinfo.ZoneInfo": lambda: __import__("zoneinfo").ZoneInfo("UTC"),
    "operator.attrgetter": lambda: __import__("operator").attrgetter("a", "b"),
    "operator.itemgetter": lambda: __import__("operator").itemgetter(m(), m()),
    "operator.methodcaller": lambda: __import__("operator").methodcaller("f", m(), k=m()),
    "slice": lambda: slice(m(), m(), m()),
    "types.UnionType": lambda: int | str,
    "types.GenericAlias": lambda: list[Marker],
    "typing.Union": lambda: int | str,
    "hamt_bitmap_node": lambda: hamt_node(3, "hamt_bitmap_node"),
    "sqlite3.Cache": lambda: referent(__import__("sqlite3").connect(":memory:"), "Cache"),
    "sqlite3.Node": sqlite_cache_node,
    "_dbm.dbm": lambda: __import__("_dbm").open(os.path.join(TMP, "db"), "c"),
    "zlib.Compress": lambda: __import__("zlib").compressobj(),
    "zlib.Decompress": lambda: __import__("zlib").decompressobj(),
    "zlib._ZlibDecompressor": lambda: __import__("zlib")._ZlibDecompressor(),
    "_blake2.blake2b": lambda: __import__("_blake2").blake2b(),
    "_blake2.blake2s": lambda: __import__("_blake2").blake2s(),
    "_sha3.sha3_224": lambda: __import__("_sha3").sha3_224(),
    "_sha3.sha3_256": lambda: __import__("_sha3").sha3_256(),
    "_sha3.sha3_384": lambda: __import__("_sha3").sha3_384(),
    "_sha3.sha3_512": lambda: __import__("_sha3").sha3_512(),
    "_sha3.shake_128": lambda: __import__("_sha3").shake_128(),
    "_sha3.shake_256": lambda: __import__("_sha3").shake_256(),
    "_hmac.HMAC": lambda: __import__("_hmac").new(b"key", digestmod="sha256"),
    "compression.zstd.ZstdCompressor":
        lambda: __import__("compression.zstd").zstd.ZstdCompressor(),
    "compression.zstd.ZstdDecompressor":
        lambda: __import__("compression.zstd").zstd.ZstdDecompressor(),
    "unicodedata.GraphemeBreakIterator":   # 3.15+
        lambda: __import__("unicodedata").iter_graphemes("e\u0301x"),
    "unicodedata.Segment": lambda: next(__import__("unicodedata").iter_graphemes("e\u0301x")),
    "string.templatelib.Template": lambda: template(),
    "string.templatelib.Interpolation": lambda: template().interpolations[0],
    "string.templatelib.TemplateIter": lambda: iter(template()),
    "_thread._ExceptHookArgs":
        lambda: threading.ExceptHookArgs([ValueError, ValueError(m()), None, None]),
    "UnraisableHookArgs": unraisable_args,
}
# tp_name -> why the sweep makes no instance of it.
SKIP = {
    "_buffer_wrapper": "made by memoryview for a Python __buffer__ only during the call",
    "_ctypes.CArgObject": "lives only while a ctypes foreign call converts its arguments",
    "_ctypes.CThunkObject": "the C side of a ctypes callback: _ctypes.CFuncPtr holds it",
    "_ctypes.CType_Type": "the metaclass of ctypes types (3.13+): its instances are types",
    "_ctypes.StructParam_Type": "lives only while a Structure is passed by value to a call",
    "_ctypes._CData": "abstract: instances are of its subclasses",
    "_interpchannels.ChannelInfo": "needs a cross-interpreter channel",
    "_io._BufferedIOBase": "abstract: instances are of its subclasses",
    "_io._BytesIOBuffer": "lives only while a BytesIO's buffer is exported",
    "_io._IOBase": "abstract: instances are of its subclasses",
    "_io._RawIOBase": "abstract: instances are of its subclasses",
    "_io._TextIOBase": "abstract: instances are of its subclasses",
    "_lsprof.profiler_entry": "a structseq: a tuple culeak reads as one",
    "_lsprof.profiler_subentry": "a structseq: a tuple culeak reads as one",
    "_pickle.Pdata": "a pickler's stack: lives only inside its pickler",
    "_ssl.SSLSession": "needs a TLS connection",
    "ast.AST": "abstract: instances are of its subclasses",
    "async_generator_wrapped_value": "lives only between an async generator's yield and send",
    "InstructionSequence": "the compiler's, alive only while it compiles",
    "hamt_collision_node": "needs two ContextVars of one hash, which Python does not choose",
    "_ssl.SSLSession": "needs a TLS connection",
    "_ssl.Session": "needs a TLS connection",
    "_curses.window": "needs a terminal (curses.initscr)",
    "_curses_panel.panel": "needs a terminal (curses.initscr)",
    "_typing._ConstEvaluator": "made by annotationlib while it evaluates an annotation",
    "compression.zstd.ZstdDict": "needs a trained zstd dictionary",
    "uop_executor": "the tier-2 optimizer's, alive only while its trace is",
    "builtin_method": "none is alive once the standard library is imported (3.9: no module it "
                      "imports binds a METH_METHOD method)",
    "_asyncio.TaskStepMethWrapper": "3.12+ schedule a task's step without it (3.9-3.11: a "
                                    "task's first step, on the loop's ready queue)",
    "interpreters.InterpreterError": "an exception type: made by the exception rule",
    "interpreters.InterpreterNotFoundError": "an exception type: made by the exception rule",
}
# 3.9-3.11 spell some of these without their module
for new, old in [("_contextvars.Token", "Token"), ("_thread._ExceptHookArgs", "_thread.ExceptHookArgs"),
                 ("collections._deque_iterator", "_collections._deque_iterator"),
                 ("collections._deque_reverse_iterator", "_collections._deque_reverse_iterator"),
                 ("weakref.ProxyType", "weakproxy"), ("weakref.CallableProxyType", "weakcallableproxy"),
                 ("_multibytecodec.MultibyteIncrementalDecoder", "MultibyteIncrementalDecoder"),
                 ("_multibytecodec.MultibyteIncrementalEncoder", "MultibyteIncrementalEncoder"),
                 ("_multibytecodec.MultibyteStreamReader", "MultibyteStreamReader"),
                 ("_multibytecodec.MultibyteStreamWriter", "MultibyteStreamWriter")]:
    CONSTRUCT[old] = CONSTRUCT[new]
SKIP["TaskStepMethWrapper"] = SKIP["_asyncio.TaskStepMethWrapper"]
KEPT = []
TMP = __import__("tempfile").mkdtemp()
KEEP_ALIVE = Marker()
KEEP_ALIVE_CALLABLE = lambda: None   # noqa: E731
LOOP = None


def type_name(t):
    return t.__qualname__ if t.__module__ == "builtins" else t.__module__ + "." + t.__qualname__


def live_instances(types):
    """Up to PER_TYPE instances of each C type among the tracked objects and their untracked
    referents (a tuple of atoms the collector untracked is some tracked object's referent)."""
    by_type, wanted = {}, {id(t) for t in types}
    tracked = gc.get_objects()
    for o in tracked + [r for o in tracked for r in gc.get_referents(o) if not gc.is_tracked(r)]:
        if id(type(o)) in wanted:
            insts = by_type.setdefault(id(type(o)), [])
            if len(insts) < PER_TYPE and all(i is not o for i in insts):
                insts.append(o)
    return by_type


def make(t, problems):
    """An instance of t (of a subclass where only Python makes them), or None."""
    name = type_name(t)
    try:
        if issubclass(t, BaseException):
            o = exception(t)
        elif hasattr(t, "n_fields"):   # a struct sequence, hidden fields included
            o = t([m() for _ in range(t.n_fields)])
        else:
            o = CONSTRUCT[name]() if name in CONSTRUCT else None
    except Exception as e:
        problems.append("%s: not made: %r" % (name, e))
        return None
    if o is not None and not isinstance(o, t):
        problems.append("%s: CONSTRUCT made a %s" % (name, type(o).__name__))
        return None
    return o


def tp_name(t):
    return ctypes.c_char_p(word(t, TP_NAME)).value.decode()


def running_loop():
    """A loop with a task waiting on a future (3.9: its wakeup wrapper on the future) and one
    not started (3.9-3.11: its step wrapper on the ready queue)."""
    asyncio = __import__("asyncio")
    loop = asyncio.new_event_loop()
    future = loop.create_future()

    async def waiter():
        await future

    KEPT.extend([future, loop.create_task(waiter())])
    loop.run_until_complete(asyncio.sleep(0))
    KEPT.append(loop.create_task(coro()))
    return loop


def main():
    global LOOP
    LOOP = running_loop()
    types = sorted((t for t in all_types() if is_c_gc_type(t)), key=type_name)
    live = live_instances(types)
    problems, instances = [], {}
    for t in types:   # first make them all, then read them: making one can change another
        instances[id(t)] = live.get(id(t)) or [o for o in [make(t, problems)] if o is not None]
        KEPT.extend(instances[id(t)])
    out = {type_name(t): {"tp_name": tp_name(t), "heap": bool(t.__flags__ & (1 << 9)),
                          "instances": [{"address": hex(id(o)),
                                         "referents": [[hex(id(r)), type_name(type(r))]
                                                       for r in gc.get_referents(o)
                                                       if id(r) not in CONSTANTS]}
                                        for o in instances[id(t)]],
                          "skip": SKIP.get(type_name(t))}
           for t in types}
    unmade = [type_name(t) for t in types if not instances[id(t)] and type_name(t) not in SKIP]
    print(json.dumps({"pid": os.getpid(), "version": list(sys.version_info[:2]), "types": out,
                      "unmade": unmade, "problems": problems}), flush=True)
    print("READY", flush=True)
    threading.Event().wait()


main()

# Functions shipped by reference, for the generic kind "python"
# ("python3 -m r3q.serve --any"): the client's side (checking a function,
# packing a chunk of calls with the program's context) and the worker's
# (unpacking, importing the program under a name that is not __main__,
# running the chunk), and the restricted unpickler results go through.
# Nothing here is public: r3q.futures and r3q.serve say what it does.
import ast
import builtins
import functools
import hashlib
import importlib
import inspect
import io
import os
import pickle
import socket
import sys
import tempfile
import threading
import time
import traceback
import types
import warnings
import weakref
import zlib

MAGIC = b"r3q-any3"   # 2: the files may stay behind (NEED); 3: constants
PROTO = pickle.HIGHEST_PROTOCOL
# On the workers the program is imported as this module, so that its
# guarded block (if __name__ == "__main__") does not run there.
SCRIPT_MODULE = "__r3q_main__"
# What one task may carry of the program's files (compressed): a task may
# carry them, and masterd's max_payload is 1M by default.
SHIP_LIMIT = int(os.environ.get("R3Q_SHIP_LIMIT", 512 * 1024))


# A task's answer when it came without the program's files (the client
# sends them once a worker has them) and this machine has not got them:
# the client sends the task again with the files.
NEED = b"r3q-need-files"
# In a context's directory on a worker: the script's path, written once
# the files are all there.
SCRIPT_NOTE = ".r3q-context"


class _Need(Exception):
    """The task came without its program's files, which this worker does
    not have."""


class _StopImport(BaseException):
    """Raised on a worker by a distributed call (futures.map, submit...)
    that the script makes as it is imported: its import stops there
    (_activate).  A BaseException, so that the script's own "except
    Exception" around its work lets it through."""


class _Unlike(ValueError):
    """A function sent by name is another one on the worker (_global)."""


class UnsafeResult(pickle.UnpicklingError):
    """A result named something the client does not unpickle from a
    worker (see allowed())."""


# ---------------------------------------------------------------------
# The client: which function, which program, which creator classes.

def describe(fn):
    """A function's name as a user would look for it."""
    if isinstance(fn, functools.partial):
        return "functools.partial(%s, ...)" % describe(fn.func)
    mod = getattr(fn, "__module__", None)
    qual = getattr(fn, "__qualname__", None) or getattr(fn, "__name__",
                                                        None)
    if qual is None:
        return repr(fn)
    where = ""
    code = getattr(fn, "__code__", None)
    if code is not None:
        where = " (%s:%d)" % (os.path.basename(code.co_filename),
                              code.co_firstlineno)
    return "%s.%s%s" % (mod, qual, where) if mod else qual + where


# Plain functions already checked, and those sent by the object that
# holds them (_held), with their pickles: such a reference does not
# change, and checking it (inspect, pickle) cost more than the rest of a
# small submit.
_checked = weakref.WeakKeyDictionary()


def check_function(fn, who):
    """Refuse, naming it and saying what to do, a function the workers
    cannot find by reference: a lambda, a nested function or closure, a
    generator function, a function of an interactive session, or one
    pickle refuses.  Returns the function's pickle."""
    plain = type(fn) is types.FunctionType
    try:
        blob = _checked.get(fn)
    except TypeError:
        blob = None                 # neither hashable nor weakly referable
    if blob is not None:
        return blob
    blob = _check_function(fn, who)
    if plain:
        _checked[fn] = blob
    return blob


def _check_function(fn, who):
    if not callable(fn):
        raise TypeError("%s: %r is not callable" % (who, fn))
    inner = fn.func if isinstance(fn, functools.partial) else fn
    qual = getattr(inner, "__qualname__", "") or ""
    name = describe(fn)
    if getattr(inner, "__name__", None) == "<lambda>":
        bound, why = _bound_name(fn) if fn is inner else (None, None)
        if bound is not None:
            return pickle.dumps(_Named(fn.__module__, bound), PROTO)
        held = _held(fn)
        if held is not None:
            return _remember(fn, pickle.dumps(held, PROTO))
        raise TypeError(
            "%s: cannot run the lambda %s on the workers: they find a "
            "function by its module and name, and %s; define it with def "
            "at the top level of a module or of the script, or bind it to "
            "a name there (f = lambda ...)" % (
                who, name, why or "this lambda has none"))
    if inspect.isgeneratorfunction(inner) or \
            inspect.isasyncgenfunction(inner) or \
            inspect.iscoroutinefunction(inner):
        raise TypeError(
            "%s: %s is a generator (or coroutine) function: its value "
            "cannot come back from a worker; return a list instead"
            % (who, name))
    if "<locals>" in qual:
        raise TypeError(
            "%s: cannot run %s on the workers: it is defined inside "
            "another function (a closure), and the workers find a "
            "function by its module and name; define it at the top level "
            "of a module or of the script, and pass what it used as "
            "arguments (functools.partial)" % (who, name))
    mod = getattr(inner, "__module__", None)
    if mod == "__main__":
        main = sys.modules.get("__main__")
        path = getattr(main, "__file__", None)
        if path is None or not os.path.isfile(path):
            raise TypeError(
                "%s: %s is defined in an interactive session, which the "
                "workers cannot import; put it in a module or a script "
                "(python3 -m r3q SCRIPT)" % (who, name))
    try:
        return pickle.dumps(fn, PROTO)
    except Exception as e:
        held = _held(fn)
        if held is not None:
            return _remember(fn, pickle.dumps(held, PROTO))
        raise TypeError(
            "%s: cannot send %s to the workers: %s; the workers need a "
            "function defined at the top level of a module or of the "
            "script, and arguments pickle can carry"
            % (who, name, e)) from None


def _global(module, name, shape=None):
    """On a worker: what the client sent by the name it is bound to at
    the top level of its module (a lambda: see _bound_name), or by the
    attribute of such an object that holds it (NAME.ATTR: see _held),
    which must be of the same shape as the client's."""
    obj = importlib.import_module(module)
    try:
        for part in name.split("."):
            obj = getattr(obj, part)
    except AttributeError:
        if "." not in name:
            raise
        raise _Unlike(
            "%s is not there on the workers: the script's import does not "
            "make it (the client made it as it ran: in main(), say); make "
            "it at the top level of the script" % name) from None
    if shape is not None and _shape(obj) != shape:
        raise _Unlike(
            "%s is another function on the workers than in the client: "
            "the script's import makes it %s, where the client had "
            "changed it as it ran (decorated or registered again in "
            "main(), say) to %s; make it at the top level of the script"
            % (name, _shape_words(_shape(obj)), _shape_words(shape)))
    return obj


def _shape_words(shape):
    """A shape (_shape) as a user reads it."""
    if shape and shape[0] == "partial":
        return "a partial of %s" % _shape_words(shape[1])
    if len(shape) == 6:
        return "%s (code %s at %s:%s)%s%s" % (
            shape[:4] + (" closing over %s" % ", ".join(
                x for x in shape[4] if x is not None)
                if any(x is not None for x in shape[4]) else "",
                " wrapping %s" % _shape_words(shape[5])
                if shape[5] is not None else ""))
    return "a %s.%s" % shape


def _remember(fn, blob):
    """blob, kept as fn's (check_function) when fn can be a weak key."""
    try:
        _checked[fn] = blob
    except TypeError:
        pass
    return blob


def _held(fn):
    """A reference to fn by the object of its script or module that holds
    it, for a function pickle cannot send by its own name: DEAP's
    toolbox.evaluate once toolbox.decorate has wrapped it (the wrapper
    takes the name of the function it wraps, which is another object), or
    a lambda registered in a toolbox.  The workers import the script, and
    its top level makes the same toolbox; _Named("__main__",
    "toolbox.evaluate"), or None if no object bound at the top level of
    the function's module (or the script) holds fn itself, or if fn is
    not a function (or a partial of one, with arguments pickle can
    carry)."""
    inner = fn.func if isinstance(fn, functools.partial) else fn
    if type(inner) is not types.FunctionType:
        # A callable object (DEAP's MovingPeaks) may keep state that its
        # calls change: each worker's own would give other answers.
        return None
    if isinstance(fn, functools.partial):
        try:
            pickle.dumps((fn.args, fn.keywords), PROTO)
        except Exception:
            return None             # its arguments cannot go either
    seen = []
    for mname in (getattr(inner, "__module__", None), "__main__"):
        mod = sys.modules.get(mname or "")
        if mod is None or mname in seen:
            continue
        seen.append(mname)
        bound = None
        path = getattr(mod, "__file__", None)
        if mname == "__main__" and path:
            try:
                bound = _import_bindings(path)
            except (OSError, SyntaxError, ValueError):
                continue
        for name, obj in sorted(vars(mod).items()):
            if bound is not None and name not in bound:
                continue            # bound only as the script runs
            if obj is fn:
                return _Named(mname, name, _shape(fn))
            if isinstance(obj, (type, types.ModuleType)):
                continue
            try:
                attrs = vars(obj)
            except TypeError:
                continue
            if not isinstance(attrs, dict):
                continue
            for attr, val in sorted(attrs.items()):
                if val is fn:
                    return _Named(mname, "%s.%s" % (name, attr),
                                  _shape(fn))
    return None


class _Named:
    """Pickles as the name a lambda is bound to in its module (or
    NAME.ATTR, the attribute of such an object that holds a function),
    with the function's shape (_shape) when the worker must check that
    the name gives it the same function."""

    def __init__(self, module, name, shape=None):
        self.module, self.name, self.shape = module, name, shape

    def __reduce__(self):
        if self.shape is None:
            return (_global, (self.module, self.name))
        return (_global, (self.module, self.name, self.shape))


def _simple(v, depth=0):
    """v as _shape compares it: numbers, strings and their tuples and
    lists by value, anything else by its type (its repr may hold an
    address, which differs from process to process)."""
    if v is None or isinstance(v, (bool, int, float, complex, str, bytes)):
        return repr(v)
    if isinstance(v, (tuple, list)) and depth < 2 and len(v) <= 64:
        return tuple(_simple(x, depth + 1) for x in v)
    return type(v).__qualname__


def _shape(fn, depth=0):
    """What a function is made of, as far as a name can tell it apart:
    partial's function and its arguments, each function's name, where its
    code is (a function wrapped by a decorator has the wrapper's code,
    whatever name it took) and the simple values it closes over, and
    what it wraps (__wrapped__) in turn."""
    if isinstance(fn, functools.partial):
        return ("partial", _shape(fn.func, depth + 1),
                tuple(_simple(a) for a in fn.args),
                tuple(sorted((k, _simple(v))
                             for k, v in fn.keywords.items())))
    code = getattr(fn, "__code__", None)
    if code is None:
        return (type(fn).__module__, type(fn).__qualname__)
    cells = ()
    for c in getattr(fn, "__closure__", None) or ():
        try:
            v = c.cell_contents
        except ValueError:
            v = None                # an empty cell
        cells += (None if callable(v) else _simple(v),)
    wrapped = getattr(fn, "__wrapped__", None)
    return (getattr(fn, "__qualname__", None), code.co_name,
            os.path.basename(code.co_filename), code.co_firstlineno, cells,
            _shape(wrapped, depth + 1) if wrapped is not None and
            depth < 8 else None)


def _is_main_guard(test):
    """Whether an if's test is __name__ == "__main__" (either way)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and
            isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    return any(isinstance(x, ast.Name) and x.id == "__name__"
               for x in sides) and \
        any(isinstance(x, ast.Constant) and x.value == "__main__"
            for x in sides)


def _import_bindings(path):
    """The names a script binds when it is imported (as the workers import
    it): its top-level assignments, those in blocks that run at import,
    not those in its if __name__ == "__main__" block."""
    with open(path, "rb") as f:
        tree = ast.parse(f.read(), path)
    names = set()

    def visit(body):
        for st in body:
            if isinstance(st, ast.If) and _is_main_guard(st.test):
                visit(st.orelse)
                continue
            targets = []
            if isinstance(st, ast.Assign):
                targets = st.targets
            elif isinstance(st, (ast.AnnAssign, ast.AugAssign)):
                targets = [st.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        names.add(n.id)
            for field in ("body", "orelse", "finalbody"):
                sub = getattr(st, field, None)
                if isinstance(sub, list) and not isinstance(
                        st, (ast.FunctionDef, ast.AsyncFunctionDef,
                             ast.ClassDef)):
                    visit(sub)
            for h in getattr(st, "handlers", []) or []:
                visit(h.body)
    visit(tree.body)
    return names


def _bound_name(fn):
    """(name, None): the name a lambda is bound to at the top level of its
    module, which the workers bind too when they import it; else (None,
    why not in words, or None)."""
    mod = sys.modules.get(fn.__module__ or "")
    if mod is None:
        return None, None
    names = sorted(k for k, v in vars(mod).items() if v is fn)
    if not names:
        return None, None
    path = getattr(mod, "__file__", None)
    if fn.__module__ != "__main__" or path is None:
        return names[0], None
    try:
        bound = _import_bindings(path)
    except (OSError, SyntaxError, ValueError):
        return None, None
    for n in names:
        if n in bound:
            return n, None
    return None, ("%s is bound to it only as the script runs (in its if "
                  "__name__ == \"__main__\" block, or a function that "
                  "block calls), which the workers do not run" % names[0])


def _compressed(obj, parts, say):
    """obj pickled and compressed, what a task carries of the program:
    over SHIP_LIMIT, ValueError(say(KiB, the three largest of parts, a
    dict of name -> bytes))."""
    blob = zlib.compress(pickle.dumps(obj, PROTO), 6)
    if len(blob) > SHIP_LIMIT:
        big = sorted(parts, key=lambda k: -len(parts[k]))[:3]
        raise ValueError(say(len(blob) // 1024, ", ".join(big)))
    return blob


class Creator:
    """deap.creator.create calls, recorded in the client so that the
    workers make the same classes (in the same order) before they unpickle
    a task: classes a program creates inside main() exist there too."""

    def __init__(self):
        self.records = []
        self.blob = b""
        self.installed = False

    def install(self):
        """Wrap deap.creator.create, if DEAP is there."""
        if self.installed:
            return
        try:
            from deap import creator
        except ImportError:
            return
        orig = creator.create
        if getattr(orig, "_r3q_recording", False):
            self.installed = True
            return
        rec = self

        @functools.wraps(orig)
        def create(name, base, **kargs):
            orig(name, base, **kargs)
            # Each alone: a record names the classes made before it,
            # which the worker makes before it unpickles this one.
            try:
                rec.records.append(pickle.dumps((name, base, kargs), PROTO))
            except Exception as e:
                rec.records.append(e)
            rec.blob = None
        create._r3q_recording = True
        creator.create = create
        self.installed = True

    def pickled(self):
        if self.blob is None:
            for r in self.records:
                if isinstance(r, Exception):
                    raise TypeError("cannot send the deap.creator classes "
                                    "to the workers: %s" % r)
            self.blob = pickle.dumps(self.records, PROTO)
        return self.blob


creator = Creator()


class Shared:
    """r3q.shared's constants in the client: each name's value, and its
    pickle, which the tasks carry (the whole table, content-addressed as
    the program's files are: with a task until a worker has answered one
    of this table, then only its hash)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.values = {}
        self.pickles = {}
        self.blob = b""
        self.hash = b""
        self.answered = set()           # hashes a worker answered with

    def set(self, who, items):
        with self.lock:
            for k in items:
                if k in self.values:
                    raise TypeError("This constant already exists: %s."
                                    % k)
            pickles = {}
            for k, v in items.items():
                if inspect.isroutine(v) or isinstance(v,
                                                      functools.partial):
                    pickles[k] = check_function(v, "%s(%s=...)" % (who, k))
                    continue
                try:
                    pickles[k] = pickle.dumps(v, PROTO)
                except Exception as e:
                    raise TypeError(
                        "%s: cannot send the constant %s to the workers: "
                        "%s" % (who, k, e)) from None
            table = dict(self.pickles, **pickles)
            blob = _compressed(table, table, lambda kib, big: (
                "%s: the constants (%d KiB compressed; the largest %s) are "
                "over the limit of %d KiB (R3Q_SHIP_LIMIT): the tasks carry "
                "them; put what is large in a file the tasks read" % (
                    who, kib, big, SHIP_LIMIT // 1024)))
            self.pickles = table
            self.values.update(items)
            self.blob = blob
            self.hash = hashlib.sha256(blob).digest()

    def get(self, name):
        with self.lock:
            return self.values.get(name)

    def carried(self, files):
        """(hash, blob) for a task: blob empty when it may stay behind."""
        with self.lock:
            if files or self.hash not in self.answered:
                return self.hash, self.blob
            return self.hash, b""


shared = Shared()


def _walk(root):
    """The regular files under root, relative, without hidden files,
    caches and compiled code: not sockets, FIFOs or devices (a daemon's
    socket beside the script cannot be read, and opening a FIFO would
    wait for a writer for ever)."""
    out = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if not x.startswith(".") and
                         x != "__pycache__")
        for f in sorted(files):
            if f.startswith(".") or f.endswith((".pyc", ".pyo")):
                continue
            if not os.path.isfile(os.path.join(d, f)):
                continue
            out.append(os.path.relpath(os.path.join(d, f), root))
    return out


class Context:
    """The program the workers import and the files its tasks run among:
    the script, and its directory or the files declared.  Declared files
    keep their places relative to the current directory, which the
    tasks' working directory then stands for: they are shipped from the
    deepest directory that holds them, the script and the current
    directory (cwd, the working directory's place under it), so that
    "../data/x.csv" or sys.path.append("../lib") reads there what it
    reads here.  Content-addressed: workers keep it by its hash."""

    def __init__(self, script=None, files=None):
        self.hash = b""
        self.blob = b""
        self.script = script
        self.answered = False           # a worker answered a task of it
        if script is None and not files:
            return
        cwd = "."
        if files:
            here = os.getcwd()
            named = []
            for p in files:
                a = os.path.abspath(p)
                if not os.path.isdir(a) and not os.path.isfile(a):
                    raise FileNotFoundError("cannot ship %s: no such "
                                            "file" % p)
                named.append(a)
            extra = [os.path.abspath(script)] if script is not None else []
            root = os.path.commonpath([here] + named + extra)
            cwd = os.path.relpath(here, root)
            rels = []
            for a in named:
                r = os.path.relpath(a, root)
                if os.path.isdir(a):
                    rels += [os.path.normpath(os.path.join(r, x))
                             for x in _walk(a)]
                else:
                    rels.append(r)
        else:
            root = os.path.dirname(os.path.abspath(script))
            rels = _walk(root)
        content = {}
        for r in rels:
            with open(os.path.join(root, r), "rb") as f:
                content[r] = f.read()
        srel = None
        if script is not None:
            a = os.path.abspath(script)
            srel = os.path.relpath(a, root)
            if srel not in content:
                with open(a, "rb") as f:
                    content[srel] = f.read()
        blob = _compressed({"script": srel, "files": content, "cwd": cwd},
                           content, lambda kib, big: (
            "the files shipped to the workers (%s: %d files, %d KiB "
            "compressed; the largest %s) are over the limit of %d KiB "
            "(R3Q_SHIP_LIMIT): name the files the tasks need, with "
            "python3 -m r3q --files PATH,... or R3Q_FILES=PATH:..." % (
                root, len(content), kib, big, SHIP_LIMIT // 1024)))
        self.blob = blob
        self.hash = hashlib.sha256(blob).digest()


def pack(ctx, fnblob, calls, files=True):
    """One task's payload: a chunk of calls of one function, with the
    program's files or (files false) only their hash, the deap.creator
    classes and the shared constants; and the constants' hash."""
    call = pickle.dumps((fnblob, calls), PROTO)
    sh, sblob = shared.carried(files)
    return pickle.dumps((MAGIC, ctx.hash, ctx.blob if files else b"",
                         creator.pickled(), sh, sblob, call), PROTO), sh


# ---------------------------------------------------------------------
# The client's unpickler: what a worker may name in a result.

# Never, whatever else is allowed.
_DENY_MODULES = {"os", "posix", "nt", "subprocess", "sys", "shutil",
                 "importlib", "runpy", "pickle", "_pickle", "marshal",
                 "ctypes", "socket", "code", "codeop", "pty", "signal",
                 "io", "_io", "builtins", "functools", "operator", "pdb",
                 "webbrowser", "multiprocessing", "threading", "asyncio",
                 "tempfile", "glob", "pathlib", "types", "inspect",
                 "platform", "commands", "popen2", "posixpath", "ntpath",
                 "codecs", "_codecs", "gc", "weakref", "atexit", "site",
                 "zipimport", "pkgutil", "timeit", "trace", "profile",
                 "cProfile", "bdb", "doctest", "unittest", "r3q"}
_BUILTINS = {"list", "dict", "tuple", "set", "frozenset", "int", "float",
             "complex", "str", "bytes", "bytearray", "bool", "slice",
             "range", "object", "NotImplemented", "Ellipsis"}
_NAMES = {("copyreg", "_reconstructor"), ("array", "array"),
          ("array", "_array_reconstructor"),
          ("collections", "OrderedDict"), ("collections", "deque"),
          ("collections", "defaultdict"), ("collections", "Counter"),
          ("decimal", "Decimal"), ("fractions", "Fraction"),
          ("datetime", "datetime"), ("datetime", "date"),
          ("datetime", "time"), ("datetime", "timedelta"),
          ("datetime", "timezone"),
          ("r3q.errors", "TaskFailed"), ("r3q._ship", "RemoteTraceback")}
for _m in ("numpy.core.multiarray", "numpy._core.multiarray"):
    _NAMES |= {(_m, "_reconstruct"), (_m, "scalar")}
for _m in ("numpy.core.numeric", "numpy._core.numeric"):
    _NAMES.add((_m, "_frombuffer"))
_NAMES |= {("numpy", "ndarray"), ("numpy", "dtype"),
           ("numpy.random", "__RandomState_ctor"),
           ("numpy.random._pickle", "__randomstate_ctor"),
           ("numpy.random.mtrand", "RandomState")}
# Modules whose classes (not functions) a result may name: the program's
# own, DEAP's, and what the program allows (r3q.allow).
_CLASS_MODULES = {"deap", "__main__", SCRIPT_MODULE}
_EXTRA = set()
_TRUST = [os.environ.get("R3Q_TRUST_RESULTS") == "1"]


def allow(*names):
    """Allow results to name these modules' classes ("mymod"), or these
    names ("mymod.func")."""
    for n in names:
        if not isinstance(n, str) or not n:
            raise TypeError("allow() takes module or module.name strings")
        _EXTRA.add(n)


def trust(on=True):
    _TRUST[0] = bool(on)


def _root(module):
    return module.split(".", 1)[0]


def _under(module, roots):
    return any(module == r or module.startswith(r + ".") for r in roots)


def allowed(module, name, extra_modules=()):
    """The object a result's pickle names, if the client lets a worker
    name it; else UnsafeResult naming it."""
    if module == SCRIPT_MODULE:
        module = "__main__"
    full = "%s.%s" % (module, name)
    if _root(module) in _DENY_MODULES and not (
            (module, name) in _NAMES or full in _EXTRA or
            (module == "builtins" and name in _BUILTINS)):
        if not (module == "builtins" and _is_exception(name)):
            raise UnsafeResult(full)
    if (module, name) in _NAMES or full in _EXTRA or (
            module == "builtins" and name in _BUILTINS):
        return _find(module, name)
    if module == "builtins":
        if _is_exception(name):
            return getattr(builtins, name)
        raise UnsafeResult(full)
    roots = _CLASS_MODULES | _EXTRA | set(extra_modules)
    if _under(module, roots):
        # A class defined there, reached through classes only: not
        # subprocess.Popen, which the module imported.
        obj = _find(module, name, modules=False)
        if isinstance(obj, type) and _under(
                "__main__" if obj.__module__ == SCRIPT_MODULE
                else obj.__module__, roots):
            return obj
    raise UnsafeResult(full)


def _is_exception(name):
    obj = getattr(builtins, name, None)
    return isinstance(obj, type) and issubclass(obj, BaseException)


def _find(module, name, modules=True):
    __import__(module)
    obj = sys.modules[module]
    for part in name.split("."):
        if not modules and isinstance(obj, types.ModuleType) and \
                obj is not sys.modules[module]:
            raise UnsafeResult("%s.%s" % (module, name))
        obj = getattr(obj, part)
    return obj


class _Unpickler(pickle.Unpickler):
    def __init__(self, data, extra):
        super().__init__(io.BytesIO(data))
        self.extra = extra

    def find_class(self, module, name):
        if _TRUST[0]:
            if module == SCRIPT_MODULE:
                module = "__main__"
            return super().find_class(module, name)
        return allowed(module, name, self.extra)


def loads(data, extra=()):
    """Unpickle what a worker sent, against the allowlist."""
    return _Unpickler(data, extra).load()


class RemoteTraceback(Exception):
    """The traceback of an exception raised on a worker, as text: the
    __cause__ of the exception re-raised in the client."""

    def __init__(self, tb):
        super().__init__(tb)
        self.tb = tb

    def __str__(self):
        return "\n\n--- on the worker ---\n%s" % self.tb


def unpack(data, extra=()):
    """A task's output: (worker, seconds, values, error), error None or
    (index, exception or None, text).  UnsafeResult if it names what the
    client does not unpickle."""
    try:
        magic, ident, secs, vblob, err = loads(data)
    except UnsafeResult:
        raise
    except Exception as e:
        raise ValueError("not an answer of r3q.serve --any: %s" % e)
    if magic != MAGIC:
        raise ValueError("not an answer of r3q.serve --any")
    values = loads(vblob, extra)
    if err is not None:
        idx, eblob, text = err
        exc = None
        if eblob:
            try:
                exc = loads(eblob, extra)
                if not isinstance(exc, BaseException):
                    exc = None
            except Exception:
                exc = None
        err = (idx, exc, text)
    return ident, secs, values, err


# ---------------------------------------------------------------------
# The worker.

class _NoStdin(io.TextIOBase):
    """Standard input on a worker: reading it is an error that says why."""

    def _refuse(self, *a):
        raise RuntimeError(
            "the program read standard input on a worker, which has none: "
            "read it in the client only, under "
            "if __name__ == \"__main__\":")

    read = readline = readlines = __next__ = _refuse

    def readable(self):
        return True

    def fileno(self):
        self._refuse()


class _Active:
    """The context this worker process has imported (one at a time)."""
    hash = None
    error = None
    root = None             # the program's files
    work = None             # the tasks' working directory, under root
    path = None             # sys.path before the script's directory
    module = None
    creator_blob = None
    creator_records = []
    imported = set()        # deap.creator classes the script's import made
    replayed = set()        # and those made from the client's records
    ephemerals = set()      # deap.gp's ephemeral constants it made
    importing = None        # the script's path while it is imported
    stopped = None          # (line, call): where its import stopped


_active = _Active()
_IDENT = "%s:%d" % (socket.gethostname(), os.getpid())


def _cache_base():
    base = os.path.join(tempfile.gettempdir(), "r3q-any-%d" % os.getuid())
    os.makedirs(base, mode=0o700, exist_ok=True)
    return base


def _cache_dir(h):
    return os.path.join(_cache_base(), h.hex())


# What this machine keeps of the programs (their files, their shared
# constants) goes once no process has used it for R3Q_ANY_KEEP seconds
# (0: never): a worker that runs for months does not fill its $TMPDIR
# with every version of every program.  A process marks what it uses, at
# each switch and once an hour, and looks for the rest once an hour.  A
# program's files that went are asked for again (NEED), as on a new
# machine.
try:
    KEEP = float(os.environ.get("R3Q_ANY_KEEP", 7 * 86400))
except ValueError:
    KEEP = 7 * 86400.0
    print("r3q: R3Q_ANY_KEEP=%r is not a number of seconds: 7 days it is"
          % os.environ["R3Q_ANY_KEEP"], file=sys.stderr, flush=True)
_KEEP_EVERY = 3600.0
_kept = [None]          # monotonic time of the last look


def _touch(path):
    """Mark path as used now (its mtime)."""
    try:
        os.utime(path)
    except OSError:
        pass


def _housekeep(now=None):
    """Once an hour (or when now is given): mark what this process uses,
    and remove from the machine's cache what has not been used for KEEP
    seconds: contexts' directories, constants' tables, leftovers of
    writes cut short."""
    mono = time.monotonic()
    if now is None:
        if _kept[0] is not None and mono - _kept[0] < _KEEP_EVERY:
            return
        now = time.time()
    _kept[0] = mono
    base = _cache_base()
    mine = set()
    if _active.root:
        mine.add(os.path.basename(_active.root))
    if _consts.hash:
        mine.add("shared-" + _consts.hash.hex())
    for name in mine:
        _touch(os.path.join(base, name))
    if KEEP <= 0:
        return
    import shutil
    for name in os.listdir(base):
        p = os.path.join(base, name)
        try:
            st = os.lstat(p)
        except OSError:
            continue
        if name in mine or now - st.st_mtime < KEEP:
            continue
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p, ignore_errors=True)
        else:
            try:
                os.unlink(p)
            except OSError:
                pass


def _cached(h):
    """(script, cwd) of the context h whose files this machine keeps: the
    script's path in them ("" if none is imported) and the working
    directory's; None if the files are not here."""
    try:
        with open(os.path.join(_cache_dir(h), SCRIPT_NOTE), "rb") as f:
            note = f.read().decode()
    except OSError:
        return None
    script, _, cwd = note.partition("\0")
    return script, cwd or "."


def _note(ctx):
    """What SCRIPT_NOTE says of a context: its script, its cwd."""
    return ("%s\0%s" % (ctx["script"] or "", ctx.get("cwd", "."))).encode()


def _materialise(h, blob):
    """The context's files on disk (once per machine): its root, its
    script (None if none is imported) and the tasks' working directory
    (under root)."""
    d = _cache_dir(h)
    if not blob:
        note = _cached(h)
        if note is None:
            raise _Need()
        _touch(d)
        return d, note[0] or None, note[1]
    ctx = pickle.loads(zlib.decompress(blob))
    if _cached(h) is None:
        tmp = tempfile.mkdtemp(prefix=".new-", dir=os.path.dirname(d))
        for rel, data in ctx["files"].items():
            p = os.path.normpath(os.path.join(tmp, rel))
            if not p.startswith(tmp + os.sep):
                raise ValueError("a shipped path leaves its directory: %r"
                                 % rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "wb") as f:
                f.write(data)
        # Written last: the note says the files are all there.
        with open(os.path.join(tmp, SCRIPT_NOTE), "wb") as f:
            f.write(_note(ctx))
        try:
            os.rename(tmp, d)
        except OSError:
            import shutil
            shutil.rmtree(tmp, ignore_errors=True)
            if _cached(h) is None and os.path.isdir(d):
                # Made by a version that wrote no note, whole all the same
                # (renamed into place): the note now, atomically.
                note = os.path.join(d, SCRIPT_NOTE)
                with open(note + ".new", "wb") as f:
                    f.write(_note(ctx))
                os.rename(note + ".new", note)
    _touch(d)
    return d, ctx["script"], ctx.get("cwd", ".")


def _drop_creator():
    """Forget the classes the last script made in DEAP's modules: its
    deap.creator classes, and the ephemeral constants of its GP primitive
    sets (deap.gp refuses another function under a name it has, so the
    next program, or the next version of this one, could not make its
    own, as each does in a process of its own when run locally)."""
    gp = sys.modules.get("deap.gp")
    for n in _active.ephemerals:
        if gp is not None and hasattr(gp, n):
            delattr(gp, n)
    _active.ephemerals = set()
    try:
        from deap import creator as cr
    except ImportError:
        return
    for n in _active.imported | _active.replayed:
        if hasattr(cr, n):
            delattr(cr, n)
    _active.imported, _active.replayed = set(), set()


def _forget_context():
    """Forget what the last context's program left in this process, as a
    process of its own would not have it: the modules imported from its
    files (a module of the same name in the next program's files, or in
    the next version of this one, is imported afresh, not taken from the
    last), its entries on sys.path, and the finders of relative entries
    (bound to the last working directory: "../lib" is looked up from the
    new one); and the shared constants it unpickled, which may be of its
    classes (they are unpickled again, of the new program's)."""
    _consts.values = {}
    root = _active.root
    if root:
        for name, m in list(sys.modules.items()):
            f = getattr(m, "__file__", None)
            if isinstance(f, str) and f.startswith(root + os.sep):
                sys.modules.pop(name, None)
    if _active.path is not None:
        sys.path[:] = _active.path
        _active.path = None
    for k in list(sys.path_importer_cache):
        if not os.path.isabs(k) or (root and (k + os.sep).startswith(
                root + os.sep)):
            sys.path_importer_cache.pop(k, None)
    importlib.invalidate_caches()


def _ephemerals():
    """The ephemeral constants' classes in deap.gp, if it is imported."""
    gp = sys.modules.get("deap.gp")
    if gp is None or not hasattr(gp, "Ephemeral"):
        return set()
    return {n for n, v in vars(gp).items() if isinstance(v, type) and
            issubclass(v, gp.Ephemeral) and v is not gp.Ephemeral}


def _creator_names():
    """The classes in deap.creator (imported first if DEAP is here)."""
    try:
        from deap import creator as cr
    except ImportError:
        return set()
    return {n for n, v in vars(cr).items() if isinstance(v, type)}


def at_import(who):
    """On a worker, in a distributed call (who: "futures.map"...): if it
    comes from the script's import, its module-level code outside an
    if __name__ == "__main__": block, that import stops here
    (_StopImport).  The workers then have what the script defined up to
    that call, as the client had when it made it, and do not run the
    program's work (the script's "main" at its top level) in each of
    their processes."""
    path = _active.importing
    if path is None:
        return
    line = None
    f = sys._getframe(1)
    while f is not None:
        if f.f_code.co_filename == path and f.f_code.co_name == "<module>":
            line = f.f_lineno
            break
        f = f.f_back
    raise _StopImport(line, who)


def _stopped_hint(e):
    """What to say of a function or class the script's stopped import
    lacks (e, from loading a task's function), or ""."""
    if _active.stopped is None or not isinstance(e, AttributeError):
        return ""
    line, who = _active.stopped
    return ("the script's import stops on the workers at its line %s, "
            "where it calls %s outside an if __name__ == \"__main__\": "
            "block, and what it defines after that line is not there: put "
            "the program's work under if __name__ == \"__main__\":"
            % (line, who))


def _activate(h, blob):
    """Make the context current: its files the working directory, its
    script imported as SCRIPT_MODULE (and aliased as __main__, which the
    client's pickles name)."""
    if h == _active.hash:
        if _active.error:
            raise ImportError(_active.error)
        try:
            if _active.root:
                os.chdir(_active.work)
            return
        except OSError:
            _active.hash = None         # its files were removed: again
    if h and not blob and _cached(h) is None:
        raise _Need()
    _drop_creator()
    _forget_context()
    _active.hash, _active.error, _active.module = None, None, None
    _active.root, _active.creator_blob, _active.creator_records = \
        None, None, []
    _active.stopped = None
    sys.modules.pop(SCRIPT_MODULE, None)
    if not h:
        _active.hash = h
        return
    root, script, cwd = _materialise(h, blob)
    work = os.path.normpath(os.path.join(root, cwd))
    if work != root and not work.startswith(root + os.sep):
        raise ValueError("the working directory leaves the program's "
                         "files: %r" % cwd)
    os.makedirs(work, exist_ok=True)
    _active.root, _active.work = root, work
    os.chdir(work)
    if script is None:
        _active.hash = h
        return
    path = os.path.join(root, script)
    sdir = os.path.dirname(path)
    _active.path = list(sys.path)
    if sdir not in sys.path:
        sys.path.insert(0, sdir)
    before = _creator_names()
    before_eph = _ephemerals()
    mod = types.ModuleType(SCRIPT_MODULE)
    mod.__file__ = path
    mod.__builtins__ = builtins
    sys.modules[SCRIPT_MODULE] = mod
    sys.modules["__main__"] = mod
    try:
        with open(path, "rb") as f:
            code = compile(f.read(), path, "exec")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            _active.importing = path
            try:
                exec(code, mod.__dict__)
            finally:
                _active.importing = None
    except _StopImport as e:
        # The script's work at its top level: the client runs it, not
        # each worker process (at_import).
        _active.stopped = e.args
        print("r3q.serve --any: %s calls %s as it is imported (line %s, "
              "outside an if __name__ == \"__main__\": block): its import "
              "stops there on the workers" % (
                  os.path.basename(script), e.args[1], e.args[0]),
              file=sys.stderr, flush=True)
    except Exception as e:
        traceback.print_exc()
        _active.error = ("cannot import the script %s on worker %s: %s%s%s"
                         % (os.path.basename(script), _IDENT,
                            traceback.format_exception_only(
                                type(e), e)[-1].strip(),
                            _where(e.__traceback__),
                            ": install it on the workers, or ship it with "
                            "the script (python3 -m r3q --files PATH,...: "
                            "files keep their places relative to the "
                            "current directory)"
                            if isinstance(e, ImportError) else ""))
        _active.hash = h
        _active.ephemerals = _ephemerals() - before_eph
        raise ImportError(_active.error) from None
    _active.module = mod
    _active.imported = _creator_names() - before
    _active.ephemerals = _ephemerals() - before_eph
    _active.hash = h


class _Constants:
    """The shared constants of the task this worker process runs: the
    table (name -> pickle) of hash, and the values unpickled so far."""
    hash = b""
    table = {}
    values = {}


_consts = _Constants()


def _shared_activate(h, blob):
    """Make the constants of hash h current; kept in a file beside the
    program's files, so that the machine's other processes find them.
    _Need if they are not here and did not come."""
    if h == _consts.hash:
        return
    if not h:
        table = {}
    else:
        path = os.path.join(_cache_base(), "shared-" + h.hex())
        if not blob:
            try:
                with open(path, "rb") as f:
                    blob = f.read()
            except OSError:
                raise _Need() from None
            if hashlib.sha256(blob).digest() != h:
                raise _Need()
            _touch(path)
        else:
            tmp = "%s.%d" % (path, os.getpid())
            try:
                with open(tmp, "wb") as f:
                    f.write(blob)
                os.rename(tmp, path)
            except OSError:
                pass                    # the next task carries them again
        table = pickle.loads(zlib.decompress(blob))
    _consts.hash, _consts.table, _consts.values = h, table, {}


def shared_set(items):
    """On a worker: setConst of the names the task's client has set is
    the script's own top-level call, run again as the worker imports it,
    and does nothing; of other names, RuntimeError."""
    new = sorted(k for k in items if k not in _consts.table)
    if new:
        raise RuntimeError(
            "r3q.shared.setConst(%s) on a worker: constants are set in the "
            "client, before the tasks that read them are submitted; one "
            "set on a worker would reach no other task" % ", ".join(new))


def shared_get(name):
    """On a worker: the constant name of the current task's client, None
    if it had set none of that name."""
    if name not in _consts.values:
        data = _consts.table.get(name)
        if data is None:
            return None
        try:
            _consts.values[name] = pickle.loads(data)
        except Exception as e:
            raise ImportError(
                "r3q.shared.getConst(%r): cannot load the constant on worker "
                "%s: %s: install what it needs on the workers, or ship the "
                "module with the script (python3 -m r3q --files)" % (
                    name, _IDENT, traceback.format_exception_only(
                        type(e), e)[-1].strip())) from None
    return _consts.values[name]


def _where(tb):
    frames = traceback.extract_tb(tb)
    if not frames:
        return ""
    f = frames[-1]
    return " (at %s:%d in %s)" % (os.path.basename(f.filename), f.lineno,
                                  f.name)


def _replay_creator(blob):
    """The client's deap.creator.create calls this worker has not made:
    those the script's import made are skipped, the others (made in
    main(), say) made again in order, each record unpickled once those
    before it exist."""
    if blob == _active.creator_blob:
        return
    records = pickle.loads(blob)
    old = _active.creator_records
    from deap import creator as cr
    if records[:len(old)] != old:       # another run of the script
        for n in _active.replayed:
            if hasattr(cr, n):
                delattr(cr, n)
        _active.replayed = set()
        old = []
    create = getattr(cr.create, "__wrapped__", cr.create)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for rec in records[len(old):]:
            name, base, kargs = pickle.loads(rec)
            if name in _active.imported:
                continue                # the script's import made it
            create(name, base, **kargs)
            _active.replayed.add(name)
    _active.creator_records = records
    _active.creator_blob = blob


def run(payload, arm=None):
    """One task of r3q.serve --any: ('R', answer) or ('F', why).  A
    cancel (r3q.serve.TaskCancelled, a BaseException) may come anywhere
    once arm() has run, even inside an import the function makes: the
    modules imported since then are forgotten (a module half imported
    would stay broken, and those that imported it would hold it), so that
    the next task imports them again.  Those the task imported whole
    before (the program, DEAP, NumPy) stay: NumPy imported a second time
    warns of "subtle issues".  Another BaseException before arm() (a
    KeyboardInterrupt) forgets what the task imported, and the context if
    it was being imported."""
    mods = [set(sys.modules), False]
    before = _active.hash

    def armed():
        mods[:] = [set(sys.modules), True]
        if arm is not None:
            arm()
    try:
        return _run(payload, armed)
    except BaseException as e:
        if isinstance(e, Exception):
            raise
        for m in set(sys.modules) - mods[0]:
            sys.modules.pop(m, None)
        if not mods[1] and _active.hash != before:
            _active.hash = None
        raise


def _whole(t0, text):
    """The answer of a chunk that cannot run here at all, why in text.
    Not 'F': it would fail the same on every worker, which would be
    taken for failing ones, and each task tried on each of them."""
    return b"R", pickle.dumps((MAGIC, _IDENT, time.monotonic() - t0,
                               pickle.dumps([], PROTO), (0, None, text)),
                              PROTO)


def _run(payload, arm):
    t0 = time.monotonic()
    try:
        magic, h, blob, cblob, sh, sblob, call = pickle.loads(payload)
        if magic != MAGIC:
            raise ValueError("bad magic")
    except Exception as e:
        return b"F", ("r3q.serve --any: not a payload of this version of "
                      "r3q.futures (%s): the client's r3q and the worker's "
                      "must be the same version" % e).encode()
    try:
        # The constants first: the script's import may read them, or set
        # them again (a setConst at its top level).
        _shared_activate(sh, sblob)
        _activate(h, blob)
    except _Need:
        # The client sends the files again, with this task.
        return b"R", NEED
    except ImportError:
        if not _active.error:
            raise
        return _whole(t0, _active.error)    # the script fails to import
    try:
        _housekeep()
    except OSError:
        pass                            # the cache is kept another time
    try:
        if cblob:
            _replay_creator(cblob)
        fnblob, calls = pickle.loads(call)
        fn = pickle.loads(fnblob)
    except Exception as e:
        if isinstance(e, ImportError) and _active.error:
            text = _active.error
        else:
            unlike = isinstance(e, _Unlike)
            advice = _stopped_hint(e) or (
                "" if unlike else
                "install what it needs on the workers, or ship the module "
                "with the script (python3 -m r3q --files)")
            text = ("cannot load the function or its arguments on worker "
                    "%s: %s%s%s" % (
                        _IDENT, e if unlike else
                        traceback.format_exception_only(
                            type(e), e)[-1].strip(),
                        "" if unlike else _where(e.__traceback__),
                        ": " + advice if advice else ""))
        return _whole(t0, text)
    values = []
    err = None
    if arm is not None:
        arm()
    for i, (args, kwargs) in enumerate(calls):
        try:
            values.append(fn(*args, **kwargs))
        except Exception as e:
            tb = "".join(traceback.format_exception(type(e), e,
                                                    e.__traceback__))
            try:
                eblob = pickle.dumps(e, PROTO)
            except Exception:
                eblob = None
            err = (i, eblob, "%s raised %s" % (
                describe(fn), traceback.format_exception_only(
                    type(e), e)[-1].strip()) + "\n" + tb)
            break
    try:
        vblob = pickle.dumps(values, PROTO)
    except Exception as e:
        return b"F", ("cannot pickle the result of %s: %s" % (
            describe(fn), e)).encode()
    return b"R", pickle.dumps((MAGIC, _IDENT, time.monotonic() - t0, vblob,
                               err), PROTO)

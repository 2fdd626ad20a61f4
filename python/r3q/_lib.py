# libr3q through ctypes: the library found and loaded once, its functions
# declared, its status codes mapped to this package's exceptions.  Nothing
# here is public; r3q(3) is the reference for every function.
import ctypes
import ctypes.util
import os
import threading

from . import errors

OK = 0
EREMOTE = -1
EKILLED = -2
ECANCELLED = -3
ETIMEDOUT = -4
ESIGNALLED = -5
ECONN = -6
EINVAL = -7
ENOMEM = -8
ETOOBIG = -9
EPROTO = -10
EDENIED = -11
EPENDING = -12

QF_AUTO = 0xFFFFFFFF


class Options(ctypes.Structure):
    """struct r3q_options."""
    _fields_ = [
        ("master", ctypes.c_char_p),
        ("ca", ctypes.c_char_p),
        ("cert", ctypes.c_char_p),
        ("key", ctypes.c_char_p),
        ("control", ctypes.c_char_p),
        ("config", ctypes.c_char_p),
        ("reconnect_ms", ctypes.c_int),
        ("crl", ctypes.c_char_p),
    ]


class JobOptions(ctypes.Structure):
    """struct r3q_job_options."""
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("policy", ctypes.c_char_p),
        ("queue_factor", ctypes.c_uint),
        ("max_attempts", ctypes.c_uint),
        ("max_kills", ctypes.c_uint),
        ("verify", ctypes.c_uint),
        ("client_timeout_ms", ctypes.c_uint),
        ("balance", ctypes.c_char_p),
    ]


class Task(ctypes.Structure):
    """struct r3q_task."""
    _fields_ = [
        ("kind", ctypes.c_char_p),
        ("payload", ctypes.c_void_p),
        ("len", ctypes.c_size_t),
        ("priority", ctypes.c_int32),
        ("copies", ctypes.c_uint),
    ]


class Buf(ctypes.Structure):
    """struct r3q_buf: r3q_map's inputs and outputs."""
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("len", ctypes.c_size_t),
        ("status", ctypes.c_int),
    ]


_lock = threading.Lock()
_lib = None
_libc = None


def _candidates():
    """Where libr3q may be, most specific first."""
    env = os.environ.get("R3Q_LIBRARY")
    if env:
        yield env
        return
    try:
        from . import _paths
        yield os.path.join(_paths.LIBDIR, "libr3q.so.0")
    except ImportError:
        pass
    yield "libr3q.so.0"
    found = ctypes.util.find_library("r3q")
    if found:
        yield found


def _declare(lib):
    """Give every function we call its C prototype."""
    P = ctypes.c_void_p
    I = ctypes.c_int
    S = ctypes.c_size_t
    protos = {
        "r3q_connect": (P, [ctypes.POINTER(Options), ctypes.c_char_p, S]),
        "r3q_close": (None, [P]),
        "r3q_error": (ctypes.c_char_p, [P]),
        "r3q_strerror": (ctypes.c_char_p, [I]),
        "r3q_signal": (None, [P]),
        "r3q_job_open": (P, [P, ctypes.POINTER(JobOptions)]),
        "r3q_job_id": (ctypes.c_uint64, [P]),
        "r3q_job_waiting": (I, [P, ctypes.c_char_p, S]),
        "r3q_job_close": (I, [P]),
        "r3q_job_cancel": (I, [P]),
        "r3q_submit": (P, [P, ctypes.c_char_p, ctypes.c_char_p, S]),
        "r3q_submit_task": (P, [P, ctypes.POINTER(Task)]),
        "r3q_flush": (I, [P]),
        "r3q_send": (I, [P]),
        "r3q_cancel": (I, [P]),
        "r3q_future_result": (I, [P, ctypes.POINTER(P), ctypes.POINTER(S)]),
        "r3q_future_error": (ctypes.c_char_p, [P]),
        "r3q_future_free": (None, [P]),
        "r3q_wait_any": (I, [P, S, I, ctypes.POINTER(S)]),
        "r3q_map": (I, [P, ctypes.c_char_p, P, S, P, I]),
    }
    for name, (res, args) in protos.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args


def lib():
    """libr3q, loaded on first use: $R3Q_LIBRARY, else the libdir of the
    build that installed this package, else the dynamic linker's search."""
    global _lib, _libc
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for path in _candidates():
            try:
                handle = ctypes.CDLL(path)
                break
            except OSError as e:
                tried.append(str(e))
        else:
            raise errors.Error("cannot load libr3q: " + "; ".join(tried),
                               EINVAL)
        _declare(handle)
        _libc = ctypes.CDLL(None)
        _libc.free.restype = None
        _libc.free.argtypes = [ctypes.c_void_p]
        _lib = handle
        return _lib


def libc_free():
    """free(3), for the outputs r3q_map mallocs."""
    lib()
    return _libc.free


def strerror(code):
    return lib().r3q_strerror(code).decode("utf-8", "replace")


def exception(code, text=None, index=None):
    """The exception for a libr3q status, with the remote or local text."""
    if text is None:
        text = strerror(code)
    cls = {
        EREMOTE: errors.TaskFailed,
        EKILLED: errors.TaskFailed,
        ECANCELLED: errors.Cancelled,
        ECONN: errors.ConnectionLost,
        ETOOBIG: errors.PayloadTooLarge,
        ETIMEDOUT: errors.Timeout,
    }.get(code, errors.Error)
    return cls(text, code, index)

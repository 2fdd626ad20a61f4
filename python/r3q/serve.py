"""The worker side: a Python function as a persistent R3Q task kind.

    # workerd.conf
    exec fit = persistent /usr/bin/python3 -m r3q.serve mymodule:evaluate
    env fit = PYTHONPATH=/opt/fitness

workerd starts one such process per execution thread and sends it task
after task as frames on its standard input (workerd.conf(5), "Persistent
kinds").  The process imports MODULE once and calls FUNCTION with each
task's payload (bytes); what it returns (bytes, or str as UTF-8, or None
for nothing) is the task's output.  With --pickle the payload is unpickled
first and the return value pickled, for Client.map_pickled(): a DEAP
evaluate function runs unchanged.

With --any there is no MODULE:FUNCTION: each task names the function it
runs, by reference, with its arguments and the client's script and files
or their hash once a worker has them (r3q.futures, "python3 -m r3q
SCRIPT"; a task whose files this machine lacks is answered so, and the
client sends it again with them); that is the generic kind

    exec python = persistent /usr/bin/python3 -m r3q.serve --any

which an administrator enables once for every program: clients with a
client certificate then run their own Python on the worker as the
worker's user, as with Dask and SCOOP.  --pickle runs clients' code too
(unpickling runs what the pickle names).  pydoc r3q.futures says what
--any does with a task: the script imported under "__r3q_main__", DEAP's
creator classes made again, the files (and r3q.shared's constants)
written once under $TMPDIR/r3q-any-UID/ (removed once unused for
R3Q_ANY_KEEP seconds, 7 days; 0 keeps them) and the working directory;
one program at a time: the next one (or the next version) finds none of
the last one's modules from its files, creator classes or GP ephemeral
constants, as a process of its own would;
a function that raises, a module the worker lacks or a script that does
not import fails that task only ('R' with the error), never withdraws
the kind.

FUNCTION may be a dotted path inside the module (toolbox.evaluate), and
MODULE a file (/opt/fit.py).  An exception fails that task only, with the
last line of its traceback (and where it was raised) as the task's error,
which the client sees in r3q.TaskFailed; the full traceback goes to
standard error.  The process serves on.

A module that cannot be imported (or has no such function) is logged to
standard error once, with its traceback, and the process then answers
each task it is given with a 'U' frame naming the import error, rather
than exiting (workerd would start an exiting server again for the next
task: a restart loop).  'U' tells workerd the kind is unavailable here:
the task fails with that reason, workerd withdraws the kind from what it
offers the master and logs it, and `r3qctl workers` shows it withdrawn,
with why.  The master sends tasks of the kind to the workers that still
offer it; once none does, the tasks of that kind fail at once with the
reason, so that a client is told rather than left waiting.  Reloading
workerd (SIGHUP, once the module is fixed) offers the kind again.

Cancellation ('C'): a task cancelled before it starts is not run, and a
cancel that comes after the answer is ignored.  A task that is running
when its cancel comes is interrupted: the cancel frame's arrival raises
TaskCancelled (a BaseException, as KeyboardInterrupt is, so that "except
Exception" does not swallow it) in the function at once, even in
time.sleep() or a blocking read, or when a call into C code returns; its
finally clauses run, and the process serves the next task.  So a copy
that lost its race (R3Q replicates a generation's last tasks) frees its
worker at once rather than when it would have ended.  The cancel's frame
raises the signal SIGIO (the input pipe is O_ASYNC): a function must not
use SIGIO itself.  With --no-interrupt the function is never
interrupted: it runs to its end (workerd kills the process if that takes
longer than the kind's kill_grace), unless it asks: cancelled() says
whether its task has been cancelled.  halfway() reports the half-way
point of the current task (an 'H' frame), for the master's relative
suspect detection.

Pipelining: workerd offers it (R3Q_PIPELINE=1 in the environment) and
serve takes it (a 'P' frame): workerd writes the next task's frame while
the current task runs, so the process goes from one task to the next
without waiting for workerd.  A cancel then names its task; a queued
task cancelled before it starts is answered "cancelled before it
started" and not run.

Standard output carries frames only: print() in the function goes to
standard error, as does anything written to file descriptor 1.
"""
import argparse
import fcntl
import importlib
import importlib.util
import os
import pickle
import select
import signal
import sys
import time
import traceback

__all__ = ["TaskCancelled", "cancelled", "halfway", "main"]

_HEAD = 5
_out = None             # the descriptor frames go out on
_frames = None          # and the frames that come in
_in_task = False
_half_sent = False
_cancel_seen = False
_seq = 0                # 'T' frames received: the current task's number
_interruptible = False  # a cancel raises TaskCancelled in the function now
_polling = False        # a _Quiet block is reading the input
_missed = False         # SIGIO's handler came during one


class TaskCancelled(BaseException):
    """Raised in the function when its task is cancelled (unless serve
    runs with --no-interrupt).  A BaseException, as KeyboardInterrupt is:
    "except Exception" lets it through."""


def _send(kind, body=b""):
    data = kind + len(body).to_bytes(4, "big") + body
    while data:
        data = data[os.write(_out, data):]


class _Quiet:
    """SIGIO's handler kept out of a block that reads the input or writes
    a frame: the handler reads the same buffer, and run inside such a
    block (Python runs it between any two bytecodes) it would put input
    out of order, or raise TaskCancelled between a read and the append
    of what was read, losing it (the process then waits for ever for a
    task it was sent).  No signal is lost: one that comes meanwhile is
    blocked and runs the handler once the block is over; a handler that
    was due already finds _polling, notes that it missed its turn, and
    runs after the block.  The mask is restored before anything that can
    raise."""

    def __enter__(self):
        global _polling
        self.outer = _polling
        _polling = True
        self.mask = signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGIO])

    def __exit__(self, *exc):
        global _polling, _missed
        try:
            _polling = self.outer
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, self.mask)
        if not self.outer and _missed:
            _missed = False
            _on_sigio(signal.SIGIO, None)


def halfway():
    """Report that the current task is half done (once per task)."""
    global _half_sent
    if _in_task and not _half_sent and _out is not None:
        _half_sent = True
        with _Quiet():
            _send(b"H")


def _poll_cancel():
    """Whether a cancel of the current task has come: what input is
    there is read, without waiting, with the handler kept out."""
    global _cancel_seen
    if not _cancel_seen and _frames is not None:
        with _Quiet():
            if _frames.cancel_pending(_seq):
                _cancel_seen = True
    return _cancel_seen


def cancelled():
    """True once the current task has been cancelled (by the master, or
    its timeout): a long function may look now and then and give up."""
    if _in_task:
        _poll_cancel()
    return _cancel_seen


def _on_sigio(signum, frame):
    """SIGIO: input came.  During a task it is a cancel, or (pipelined)
    the next task, kept for the loop: a cancel of this task interrupts
    the function.  Between tasks it is the next task, read by the loop."""
    global _missed
    if not _interruptible or _cancel_seen or _frames is None:
        return
    if _polling:
        _missed = True                  # _Quiet calls again after
        return
    if _poll_cancel() and _interruptible:
        raise TaskCancelled("cancelled")


class _Frames:
    """Frames from workerd, read through one buffer.  Pipelined (we sent
    'P'), workerd may send the next task's 'T' while one runs, and a 'C'
    then names its task by number (4 bytes: 1 for our first 'T'):
    frames read while looking for a cancel wait in pending."""

    def __init__(self, fd):
        self.fd = fd
        self.buf = bytearray()
        self.pending = []

    def _fill(self, need):
        while len(self.buf) < need:
            chunk = os.read(self.fd, max(65536, need - len(self.buf)))
            if not chunk:
                return False
            self.buf += chunk
        return True

    def _take(self):
        """The frame at the head of buf, if it is all there."""
        if len(self.buf) < _HEAD:
            return None
        n = int.from_bytes(self.buf[1:_HEAD], "big")
        if len(self.buf) < _HEAD + n:
            return None
        kind = bytes(self.buf[0:1])
        body = bytes(self.buf[_HEAD:_HEAD + n])
        del self.buf[:_HEAD + n]
        return kind, body

    def next(self):
        """(type, body), or None at end of input."""
        if self.pending:
            return self.pending.pop(0)
        if not self._fill(_HEAD):
            return None
        n = int.from_bytes(self.buf[1:_HEAD], "big")
        if not self._fill(_HEAD + n):
            return None
        return self._take()

    def cancel_pending(self, seq):
        """True if a 'C' for task seq (or for the current task: no
        number) has come; takes it.  Reads what input is there without
        waiting, keeps other frames for next(), drops cancels of tasks
        answered already."""
        while select.select([self.fd], [], [], 0)[0]:
            chunk = os.read(self.fd, 65536)
            if not chunk:
                break
            self.buf += chunk
        while True:
            f = self._take()
            if f is None:
                break
            self.pending.append(f)
        found = False
        keep = []
        for kind, body in self.pending:
            if kind == b"C":
                k = int.from_bytes(body, "big") if len(body) == 4 else seq
                if k == seq:
                    found = True
                if k <= seq:
                    continue            # this task's, or a late one
            keep.append((kind, body))
        self.pending = keep
        return found


def _where(tb):
    """ "file:line in function" of a traceback's innermost frame."""
    frames = traceback.extract_tb(tb)
    if not frames:
        return ""
    f = frames[-1]
    return " (at %s:%d in %s)" % (os.path.basename(f.filename), f.lineno,
                                  f.name)


def _last_line(e):
    return traceback.format_exception_only(type(e), e)[-1].strip()


def load(spec):
    """The function MODULE:FUNCTION names (MODULE a dotted name or a .py
    file, FUNCTION a dotted path in it)."""
    modname, sep, attr = spec.rpartition(":")
    if not sep or not modname or not attr:
        raise ValueError("%r is not MODULE:FUNCTION" % spec)
    if modname.endswith(".py") or os.sep in modname:
        name = os.path.splitext(os.path.basename(modname))[0]
        loc = importlib.util.spec_from_file_location(name, modname)
        if loc is None:
            raise ImportError("cannot load %s" % modname)
        mod = importlib.util.module_from_spec(loc)
        sys.modules[name] = mod
        loc.loader.exec_module(mod)
    else:
        mod = importlib.import_module(modname)
    obj = mod
    for part in attr.split("."):
        obj = getattr(obj, part)
    if not callable(obj):
        raise TypeError("%s is not callable" % spec)
    return obj


def _output(value):
    if value is None:
        return b""
    if isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode()
    raise TypeError("returned %s, not bytes (serve --pickle carries "
                    "objects)" % type(value).__name__)


def _run_any(payload, interrupt):
    """One task of --any: a chunk of calls of a function the client
    shipped by reference (r3q.futures)."""
    global _in_task, _half_sent, _cancel_seen, _interruptible, _missed
    from . import _ship
    _in_task, _half_sent, _cancel_seen, _missed = True, False, False, False

    def arm():
        # Interrupts only once the program is imported and the calls
        # unpickled: an import cut short leaves broken modules behind.
        global _interruptible
        if interrupt:
            _interruptible = True
            if _poll_cancel():
                raise TaskCancelled("cancelled")
    try:
        try:
            _interruptible = False
            return _ship.run(payload, arm)
        finally:
            _interruptible = _in_task = False
    except TaskCancelled:
        return b"F", b"cancelled"
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        if _cancel_seen:
            return b"F", b"cancelled"
        traceback.print_exc()
        sys.stderr.flush()
        return b"F", (_last_line(e) + _where(e.__traceback__)).encode()


def _run(fn, use_pickle, payload, interrupt=False):
    """One task: ('R', output) or ('F', message)."""
    global _in_task, _half_sent, _cancel_seen, _interruptible, _missed
    if use_pickle == "any":
        return _run_any(payload, interrupt)
    if use_pickle:
        try:
            arg = pickle.loads(payload)
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            return b"F", ("cannot unpickle the payload: " +
                          _last_line(e)).encode()
    else:
        arg = payload
    _in_task, _half_sent, _cancel_seen, _missed = True, False, False, False
    try:
        try:
            _interruptible = interrupt
            value = fn(arg)
        finally:
            # SIGIO's handler raises only before this line.
            _interruptible = _in_task = False
    except TaskCancelled:
        return b"F", b"cancelled"
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        if _cancel_seen:
            return b"F", b"cancelled"   # what it raised came of the cancel
        traceback.print_exc()
        sys.stderr.flush()
        return b"F", (_last_line(e) + _where(e.__traceback__)).encode()
    try:
        out = pickle.dumps(value, pickle.HIGHEST_PROTOCOL) if use_pickle \
            else _output(value)
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        return b"F", ("cannot %s the result: %s" % (
            "pickle" if use_pickle else "send", _last_line(e))).encode()
    return b"R", out


def serve(spec, use_pickle=False, infd=0, outfd=1, interrupt=True):
    """Serve tasks until workerd closes our input."""
    global _out, _frames, _seq
    # Frames own the pipes: the function's prints and reads go elsewhere.
    _out = os.dup(outfd)
    inp = os.dup(infd)
    os.dup2(2, outfd)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, infd)
    os.close(null)
    sys.stdout = sys.stderr
    prog = "r3q.serve"
    if use_pickle == "any":
        from . import _ship
        os.environ["R3Q_ON_WORKER"] = "1"
        sys.stdin = _ship._NoStdin()
    try:
        fn = load(spec) if use_pickle != "any" else None
        broken = None
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        traceback.print_exc()
        broken = ("%s: cannot load %s: %s" % (prog, spec,
                                              _last_line(e))).encode()
        print("%s: the kind is unavailable on this worker: every task "
              "is answered 'U' with this reason" % prog,
              file=sys.stderr, flush=True)
    frames = _frames = _Frames(inp)
    if interrupt and broken is None:
        # A cancel's frame raises SIGIO, which interrupts the function.
        signal.signal(signal.SIGIO, _on_sigio)
        fcntl.fcntl(inp, fcntl.F_SETOWN, os.getpid())
        fcntl.fcntl(inp, fcntl.F_SETFL,
                    fcntl.fcntl(inp, fcntl.F_GETFL) | os.O_ASYNC)
    # workerd offers pipelining: take the next task while one runs, so
    # that none waits for a round trip to workerd (workerd.conf(5)).
    if os.environ.pop("R3Q_PIPELINE", None) == "1" and broken is None:
        _send(b"P")
    while True:
        f = frames.next()
        if f is None:
            return 0
        kind, body = f
        if kind != b"T":
            continue                    # a 'C' that crossed our answer
        _seq += 1
        if broken is not None:
            _send(b"U", broken)
            continue
        if (frames.buf or frames.pending) and frames.cancel_pending(_seq):
            _send(b"F", b"cancelled before it started")
            continue
        t0 = time.monotonic()
        kind, out = _run(fn, use_pickle, body, interrupt)
        if _cancel_seen or (time.monotonic() - t0 > 0.001 and
                            frames.cancel_pending(_seq)):
            kind, out = b"F", b"cancelled"
        _send(kind, out)


class _Parser(argparse.ArgumentParser):
    """Usage errors exit 64 (EX_USAGE), as r3qctl's do."""

    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(64, "%s: error: %s\n" % (self.prog, message))


def main(argv=None):
    p = _Parser(
        prog="python3 -m r3q.serve",
        description="Serve a Python function as a persistent R3Q task "
        "kind: tasks come as frames on standard input, answers go out on "
        "standard output (workerd.conf(5), \"Persistent kinds\").  "
        "In workerd.conf: exec NAME = persistent /usr/bin/python3 -m "
        "r3q.serve [--pickle] MODULE:FUNCTION, with env NAME = "
        "PYTHONPATH=DIR if MODULE is not installed; or, once for every "
        "program, exec python = persistent /usr/bin/python3 -m r3q.serve "
        "--any.  Both --pickle and --any run clients' code on this "
        "worker, as its user.",
        epilog="pydoc r3q.serve says more: exceptions, a module that "
        "fails to import, cancellation, halfway().")
    p.add_argument("--pickle", action="store_true",
                   help="runs clients' code: unpickle each payload and "
                   "pickle each result, for Client.map_pickled: "
                   "unpickling runs code the "
                   "client's pickle names, so a client with a "
                   "certificate runs its code on this worker as its user")
    p.add_argument("--any", action="store_true",
                   help="run any function a client ships by reference "
                   "(r3q.futures, python3 -m r3q SCRIPT), with no "
                   "MODULE:FUNCTION: clients with a client certificate "
                   "run their own Python as this worker's slot users, as with "
                   "Dask and SCOOP; what programs leave under "
                   "$TMPDIR/r3q-any-UID/ goes once unused for R3Q_ANY_KEEP "
                   "seconds (7 days; 0 keeps it)")
    p.add_argument("--no-interrupt", dest="interrupt",
                   action="store_false",
                   help="never interrupt a running function when its task "
                   "is cancelled (it may poll r3q.serve.cancelled()); by "
                   "default the cancel raises r3q.serve.TaskCancelled in "
                   "it")
    p.add_argument("function", metavar="MODULE:FUNCTION", nargs="?",
                   help="e.g. mymodule:evaluate, /opt/fit.py:evaluate, "
                   "mymodule:toolbox.evaluate")
    a = p.parse_args(argv)
    if a.any:
        if a.function is not None or a.pickle:
            p.error("--any takes no MODULE:FUNCTION and no --pickle")
    elif a.function is None:
        p.error("MODULE:FUNCTION is needed (or --any)")
    try:
        return serve(a.function, "any" if a.any else a.pickle,
                     interrupt=a.interrupt)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())

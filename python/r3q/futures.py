"""SCOOP's futures API on an R3Q cluster: any function, shipped by reference.

A program written for SCOOP runs on R3Q by changing its import:

    from r3q import futures             # was: from scoop import futures
                                        # (and r3q.shared for scoop.shared)

    def evaluate(ind): ...              # at the top level of the script

    if __name__ == "__main__":
        toolbox.register("map", futures.map)
        ...

and is started as the client with "python3 -m r3q SCRIPT [ARGS]" (as
"python -m scoop SCRIPT"), or with "python3 SCRIPT" alike.  What is
distributed is what goes through this module: futures.map (so a DEAP
toolbox's map once registered), map_as_completed and submit.  The builtin
map, and a direct call such as toolbox.evaluate(ind), run in the client as
before.  mapReduce and mapScan map on the cluster and reduce in the
client: mapReduce in the order SCOOP's reduces (halves, each reduced so,
then the two combined: SCOOP's value, bit for bit, for a reduction that
is not associative), mapScan as itertools.accumulate (what SCOOP's
documentation describes).  wait and as_completed take SCOOP's negative
timeout as "for ever".

How a call reaches a worker.  The function is sent by reference, as pickle
sends functions: its module and qualified name; its arguments and its
result by value (pickle).  The workers run the generic kind "python"
(workerd.conf: exec python = persistent /usr/bin/python3 -m r3q.serve
--any), which imports the function's module there.  A function of the
script is found because the workers import the script too, under the name
"__r3q_main__", not "__main__": its "if __name__ == '__main__':" block
runs only in the client.  Classes that deap.creator.create makes, at
module level or inside main(), are recorded in the client (importing
r3q.futures wraps creator.create) and made again on the worker, in the
same order, before a task's arguments are unpickled.  The script's
directory is shipped to the workers (content-addressed: a worker writes it
once, under $TMPDIR/r3q-any-UID/; the tasks carry it until a worker has
answered one, then only its hash, and a worker that lacks it asks for it:
that task is sent again with the files) and is the tasks' working
directory, so
that a relative path (open("tsp/gr17.json")) reads what it reads in the
client; "python3 -m r3q --files PATH,..." or R3Q_FILES=PATH:... ships
those instead, each at its place relative to the current directory
(which the working directory stands for: "../lib" there is the shipped
../lib), and more than
R3Q_SHIP_LIMIT bytes (512 KiB compressed) is refused with the largest
files named.  On a worker, futures.map and submit run in that process (a
mapped function that itself maps, as DEAP's island example does, runs its
inner map there).  Made as a worker imports the script (a script with its
work at module level, no if __name__ == "__main__": block), the first of
them stops that import: the workers have what the script defined up to
that call, and do not run the whole program each.

A function pickle cannot send by its own name but that an object at the
top level of the script holds (a toolbox's evaluate wrapped by
toolbox.decorate, whose wrapper took the name of the function it wraps;
a lambda registered in a toolbox) goes as that object's attribute
("toolbox.evaluate"), which the workers' import of the script makes too;
if the client changed it as the script ran (decorated again in main(),
or registered there only), the workers find another function there, or
none, and refuse it, saying so.

What cannot be sent is refused when it is submitted, naming the function:
a lambda (unless it is bound to a name at the top level of its module,
which the workers bind too: a lambda bound only in the script's guarded
block is refused, saying so), a function defined inside another (a
closure), a generator function, a function of an interactive session, or
anything pickle refuses.  An exception the function raises on a worker is
raised again here, the same type when the client may unpickle it, with
the worker's traceback as its __cause__ (r3q.futures.RemoteTraceback); a
module the worker lacks, or a script that fails to import there (one that
reads standard input at import, say), fails the task with r3q.TaskFailed
naming it, at once (not tried on every worker), and no worker withdraws
the kind for it; so does a call that ends its
worker's process (os._exit, a crash in C), the error naming the calls of
the chunk and the function.  Tasks of a kind no connected
worker offers (a cluster whose workerd.conf lacks the python line) wait
for a worker that does; after five seconds without an outcome the client
asks masterd why and says it once on standard error ("r3q: job N waits:
no worker offers kind python ...", with the line to add).

Results cannot attack the client: a result is unpickled against an
allowlist (builtins' containers and numbers, the classes defined in the
script, in DEAP and in the mapped function's module, NumPy arrays and
scalars, array.array, what allow() adds),
never os, subprocess, builtins.eval, exec, getattr or __import__; a result
naming anything else fails that task with r3q.UnsafeResult.  trust_results()
(or R3Q_TRUST_RESULTS=1) unpickles anything instead, for a cluster whose
workers and master you trust.

Chunks.  Each task carries a chunk of calls: small evaluations are grouped
so that the cost of a task (a few hundred microseconds) is paid once per
chunk.  The chunk size is chosen from the measured time of a call, the
measured cost of a task (the least wait of a map's chunks beyond their
work, but for a worker process's first chunk, which waits for the
program's import) and the number of worker processes seen
(R3Q_SLOTS tells it at first): ceil(n / (k S)) for k chunks a slot when
a slot's share is longer than a task's cost, fewer chunks than slots
when it is shorter; or given with chunksize=.  A chunk's results are
exactly the calls' results, in order; replication and suspect detection
work per chunk.  A chunk whose payload or output is over a limit
(masterd's max_payload, workerd's max_output: 1 MiB by default) is sent
again as two halves, as often as it takes, and the function's later
chunks are no larger than the halves that fitted; a single call over a
limit fails with the limit named and what to do.

Batches.  Each map (futures.map, map_as_completed, mapReduce, mapScan)
is one batch of the job, closed at once: a generation, whose tail masterd
copies to idle workers (RR and R3Q replicate a closed batch's tail) and
reports (r3qctl result).  A task of submit goes out at once into the
job's open batch instead, left open, so that a program that waits for
each result in turn does not make masterd end a batch a task before each
answer; whoever waits closes that batch once 5 ms have passed without an
outcome, so that a long lone task is still copied to idle workers, and
the client closes it after 1024 such tasks or when it falls idle.

Settings: use(client=, kind=) (default: a Client from the R3Q_*
environment, kind "python", or R3Q_KIND).  futures.last_chunksize says
the chunk size the last map chose; futures.stats counts the tasks sent,
those that carried the program's files, those sent again with them, and
the chunks split in two.
"""
import atexit
import builtins
import concurrent.futures as _cf
import itertools
import math
import os
import pickle
import re
import sys
import threading
import time

from . import _ship
from .client import _Waiters, _cancel_notified
from .errors import PayloadTooLarge, TaskFailed, UnsafeResult

__all__ = ["map", "map_as_completed", "mapReduce", "mapScan", "submit",
           "as_completed", "wait", "shutdown", "use", "allow",
           "trust_results", "RemoteTraceback",
           "FIRST_COMPLETED", "FIRST_EXCEPTION", "ALL_COMPLETED",
           "TimeoutError", "CancelledError"]

FIRST_COMPLETED = _cf.FIRST_COMPLETED
FIRST_EXCEPTION = _cf.FIRST_EXCEPTION
ALL_COMPLETED = _cf.ALL_COMPLETED
TimeoutError = _cf.TimeoutError
CancelledError = _cf.CancelledError
RemoteTraceback = _ship.RemoteTraceback
allow = _ship.allow

_builtin_map = builtins.map
_lock = threading.Lock()
_on_worker = os.environ.get("R3Q_ON_WORKER") == "1"
_client = None
_owned = False
_kind = os.environ.get("R3Q_KIND", "python")
_script = None          # python3 -m r3q SCRIPT sets it
_files = None           # and --files
_ctx = None
last_chunksize = None
# Tasks sent, those that carried the program's files, those sent again
# because their worker lacked them, and chunks sent again as two halves
# because their payload or their output was over a limit.
stats = {"tasks": 0, "with_files": 0, "resent": 0, "split": 0}
# A task's failure for an output over a limit: workerd's max_output
# (workerd.conf(5)) or masterd's max_payload (masterd.conf(5)).
_OVER = re.compile(r"output of [0-9]+ bytes is over max_(output|payload)")
_split_lock = threading.Lock()

_ship.creator.install()


def trust_results(on=True):
    """Unpickle the workers' results without the allowlist (on=True):
    for a cluster whose workers and master you trust."""
    _ship.trust(on)


def use(client=None, kind=None):
    """Run on this r3q.Client (default: one from the R3Q_* environment,
    made at the first call) and this kind (default "python")."""
    global _client, _owned, _kind
    with _lock:
        if client is not None:
            _client, _owned = client, False
        if kind is not None:
            _kind = kind


def _get_client():
    global _client, _owned
    with _lock:
        if _client is None or _client.closed:
            from .client import Client
            name = "futures"
            if _script:
                name = os.path.basename(_script)
            first = _client is None
            _client, _owned = Client(name=name), True
            if first:
                # After the Client: atexit runs last registered first,
                # and the Client's finalizer (weakref.finalize) would
                # cancel what is left.
                atexit.register(_at_exit)
        return _client


def _at_exit():
    """At the end of "python3 SCRIPT", as python3 -m r3q does: the
    futures left are waited for, unless the script ended by an exception
    (the interpreter keeps it in sys.last_value)."""
    shutdown(wait=not hasattr(sys, "last_value"))


def _main_script():
    """The program's file, if it is a script (not python3 -m MODULE, nor
    a program read from standard input, "python3 -")."""
    if _script is not None:
        return _script
    main = sys.modules.get("__main__")
    if main is None or getattr(main, "__spec__", None) is not None:
        return None
    path = getattr(main, "__file__", None)
    return path if path is not None and os.path.isfile(path) else None


def _context():
    global _ctx
    with _lock:
        if _ctx is None:
            files = _files
            if files is None and os.environ.get("R3Q_FILES"):
                files = [f for f in os.environ["R3Q_FILES"].split(":") if f]
            _ctx = _ship.Context(_main_script(), files)
        return _ctx


class _Sizer:
    """What the chunk size is chosen from: a call's measured time, the
    worker processes seen, and a task's cost."""

    def __init__(self):
        self.lock = threading.Lock()
        self.seen = set()
        self.per_call = None
        self.cap = {}                   # function -> calls a chunk fits
        cost = os.environ.get("R3Q_TASK_COST")
        self.measure = cost is None
        self.overhead = float(cost or "0.0003")

    def slots(self):
        """R3Q_SLOTS, else the worker processes seen, at least 4: a map
        of fewer chunks than the workers would never see the others."""
        given = int(os.environ.get("R3Q_SLOTS", "0") or 0)
        return given if given else max(len(self.seen), 4)

    def note(self, ident, secs, n):
        """A chunk of n calls took secs in the worker process ident;
        True if that process is new to the sizer (its first chunk paid
        its start: the program's import)."""
        if n <= 0:
            return False
        with self.lock:
            new = ident not in self.seen
            self.seen.add(ident)
            t = secs / n
            self.per_call = t if self.per_call is None else \
                0.5 * self.per_call + 0.5 * t
            return new

    def note_cost(self, lags):
        """A map's chunks' waits beyond their work: the least of them
        (a chunk that queued behind none) is a task's cost o.  A map
        moves o at most to 1.5 o (a sample at most 2 o): a worker's
        first chunk waits for the program's import, tens of ms against
        a task's fraction of one, and those chunks are left out
        (_ordered), but one stall (a swapped page, a busy host) should
        not make the next maps one chunk each."""
        lags = [x for x in lags if x is not None]
        if not self.measure or not lags:
            return
        with self.lock:
            o = min(max(min(lags), 1e-5), 2 * self.overhead)
            self.overhead = 0.5 * self.overhead + 0.5 * o

    def capped(self, fn, n):
        """A chunk of fn's calls had to be split in chunks of n (its
        payload or its output was over a limit): no larger from now on."""
        with self.lock:
            self.cap[fn] = min(n, self.cap.get(fn, n))

    def fit(self, fn, size):
        """size, or less if fn's chunks had to be split."""
        with self.lock:
            return min(size, self.cap.get(fn, size))

    def chunksize(self, n):
        """Chunks C minimise the time (W + C o) / S + W / C of n calls
        of total work W on S slots with a cost o a task (measured):
        C = sqrt(W S / o), at most n.  When a slot's share of the work is
        longer than a task's cost, C is rounded to k S chunks (k >= 1),
        the size ceil(n / (k S)), so that every slot has as many; shorter
        work goes in fewer chunks than the slots, as the model says: a
        task costs the master CPU too, and one round trip is then what a
        generation costs (bench/python-futures: at 1 us a call on a
        loaded machine one chunk of 600 took 7.9 ms, four 11.7 ms).
        _submit_chunks caps it with fit()."""
        s = self.slots()
        if self.overhead <= 0:
            c = n                       # R3Q_TASK_COST=0: chunks of one
        elif self.per_call is None:
            c = 4 * s
        else:
            w = self.per_call * n
            c = math.sqrt(w * s / self.overhead)
            if w / s > self.overhead:
                c = s * max(1, int(round(c / s)))
        c = max(1, min(n, int(math.ceil(c))))
        return int(math.ceil(n / c))


_sizer = _Sizer()


class _ChunkFuture(_cf.Future):
    """A chunk's outcome: its task's, through any resend (a worker that
    lacked the program's files)."""

    def __init__(self, chunk):
        super().__init__()
        self._chunk = chunk

    def cancel(self):
        if self.done():
            return self.cancelled()
        parts = self._chunk.parts
        if parts is not None:
            for p in parts:
                p.fut.cancel()
        elif not self._chunk.task.cancel():
            return False
        # The task's callback (_Chunk._done, or _part_done) has cancelled
        # this future already, in this thread.
        return _cancel_notified(self)


class _Chunk:
    """One task: calls [start, start + n) of a map, and what came back.
    fut is its outcome (the task's output); task the r3q.Future of its
    last sending.  A worker without the program's files answers NEED,
    and the chunk goes again with them (resend builds that payload).  A
    chunk whose payload or output was over a limit (PayloadTooLarge, or
    _OVER's failure) goes again as two halves, its parts, and its fut
    completes when both have: what it says is theirs, in order.  send(
    calls, files) sends calls as a task; key names the function (the
    sizer's cap)."""
    __slots__ = ("start", "n", "fut", "task", "resend", "out", "lock",
                 "extra", "t0", "t_packed", "t_sent", "t_out", "wall", "lag",
                 "secs",
                 "sends", "ctx", "calls", "send", "key", "parts", "joined",
                 "files", "fn", "sh", "cold")

    def __init__(self, start, n, task, extra, ctx, calls, send, key,
                 files, fn, sh):
        self.start, self.n, self.task = start, n, task
        self.fn = fn
        self.sh = sh                    # the shared constants' hash
        self.ctx = ctx
        self.fut = _ChunkFuture(self)
        self.calls, self.send, self.key = calls, send, key
        self.parts = None
        self.joined = False
        self.files = files and bool(ctx.blob)   # sent with the files
        # Sent without the files (or the constants): a worker that lacks
        # them answers NEED, and the chunk goes again with them.
        self.resend = None
        if not files:
            self.resend = lambda: send(calls, True)
        self.out = None
        self.lock = threading.Lock()
        self.extra = extra
        # When it was packed, sent (flushed) and its outcome taken: the
        # round trip's parts (bench/python-futures).
        self.t0 = self.t_packed = self.t_sent = time.perf_counter()
        self.t_out = self.wall = self.lag = self.secs = None
        self.cold = False               # its worker process's first chunk
        self.sends = 1
        # Not task.add_done_callback(), which rouses the futures' thread
        # (_Driver.kick): whoever awaits the chunk says so.
        _cf.Future.add_done_callback(task, self._done)

    def _done(self, f):
        """The task's outcome is in (in the thread that took it)."""
        self.t_out = f._t_out
        if f.cancelled():
            _cancel_notified(self.fut)
            return
        e = f.exception()
        if e is None and self.resend is not None and \
                f.result() == _ship.NEED:
            try:
                self.task, self.sh = self.resend()
                self.files = bool(self.ctx.blob)
                self.sends += 1
                stats["resent"] += 1
                stats["with_files"] += self.files
                _cf.Future.add_done_callback(self.task, self._done)
                return
            except BaseException as x:
                e = x
        if e is not None and self.n > 1 and (
                isinstance(e, PayloadTooLarge) or
                (isinstance(e, TaskFailed) and _OVER.search(e.text or ""))):
            try:
                self._split()
                return
            except BaseException as x:
                e = x
        if isinstance(e, PayloadTooLarge) and self.n == 1:
            size = len(pickle.dumps(self.calls, _ship.PROTO))
            if self.files:
                e = PayloadTooLarge(
                    "its arguments pickle to %d bytes and the program's "
                    "files to %d (compressed): with them the task is over "
                    "the master's max_payload (masterd.conf(5)); ship "
                    "fewer files (python3 -m r3q --files) or raise "
                    "max_payload" % (size, len(self.ctx.blob)),
                    e.code, self.start)
            else:
                consts = len(_ship.shared.blob)
                e = PayloadTooLarge(
                    "its arguments pickle to %d bytes, over the master's "
                    "max_payload with the rest of the task%s "
                    "(masterd.conf(5)): pass smaller ones (a file's name, "
                    "say) or raise max_payload" % (size, (
                        " (r3q.shared's constants: %d bytes compressed)"
                        % consts) if consts else ""), e.code, self.start)
        if type(e) is TaskFailed and e.index is None:
            # The task as a whole (its worker's process died, say): which
            # calls, of what; one result over a limit, what to do.
            over = _OVER.search(e.text or "") if self.n == 1 else None
            e = TaskFailed("%s of %s: %s%s" % (
                "call %d" % self.start if self.n == 1 else
                "calls %d-%d" % (self.start, self.start + self.n - 1),
                _ship.describe(self.fn), e.text,
                "" if over is None else
                ": one call's result cannot be larger; return a smaller "
                "one (the name of a file it wrote, say), or raise "
                "max_output in the workers' workerd.conf(5) and "
                "max_payload in masterd.conf(5)"), e.code)
        self.wall = time.perf_counter() - self.t0
        if e is None:
            self.ctx.answered = True
            _ship.shared.answered.add(self.sh)
        try:
            if e is not None:
                self.fut.set_exception(e)
            else:
                self.fut.set_result(f.result())
        except _cf.InvalidStateError:
            pass                        # cancelled meanwhile

    def _split(self):
        """Send the calls again as two chunks, halves (see the class)."""
        h = self.n // 2
        _sizer.capped(self.key, h)
        files = not self.ctx.answered
        parts = []
        try:
            for off, n in ((0, h), (h, self.n - h)):
                calls = self.calls[off:off + n]
                task, sh = self.send(calls, files)
                parts.append(_Chunk(self.start + off, n, task, self.extra,
                                    self.ctx, calls, self.send, self.key,
                                    files, self.fn, sh))
        except BaseException:
            for p in parts:
                p.fut.cancel()
            raise
        stats["split"] += 1
        stats["tasks"] += 2
        self.parts = parts
        for p in parts:
            p.fut.add_done_callback(self._part_done)

    def _part_done(self, _f):
        """A part's outcome is in: once both are, so is the chunk's; a
        part cancelled or failed as a whole, the chunk the same."""
        with _split_lock:
            if self.joined or not all(p.fut.done() for p in self.parts):
                return
            self.joined = True
        bad = next((p.fut for p in self.parts if p.fut.cancelled() or
                    p.fut.exception() is not None), None)
        self.wall = time.perf_counter() - self.t0
        try:
            if bad is None:
                self.fut.set_result(None)
            elif bad.cancelled():
                _cancel_notified(self.fut)
            else:
                self.fut.set_exception(bad.exception())
        except _cf.InvalidStateError:
            pass                        # cancelled meanwhile

    def wait(self, timeout=None):
        """Wait in this thread for the task's outcome, through its
        resends and parts (_Driver.wait_for: no hand-off between
        threads); the time left of timeout."""
        t0 = time.monotonic()
        while not self.fut.done():
            task = self.task
            left = None if timeout is None else \
                timeout - (time.monotonic() - t0)
            if left is not None and left <= 0:
                break
            if self.parts is not None:
                for p in self.parts:
                    left = p.wait(left)
                break                   # the last part's callback sets fut
            task._wait(left)
            if task is self.task and self.parts is None and \
                    not self.fut.done():
                break                   # its callback runs elsewhere
        if timeout is None:
            return None
        return max(0.0, timeout - (time.monotonic() - t0))

    def values(self, timeout=None):
        """(values, error) of the chunk's calls; raises what failed the
        whole task."""
        with self.lock:
            if self.out is None:
                data = self.fut.result(self.wait(timeout))
                if self.parts is not None:
                    # Split: the parts' calls, in order, to the first
                    # failed call.
                    vals, err = [], None
                    for p in self.parts:
                        pv, err = p.values()
                        vals.extend(pv)
                        if err is not None:
                            err = (err[0] + p.start - self.start,) + err[1:]
                            break
                    self.out = (vals, err)
                    return self.out
                if data == _ship.NEED:
                    raise TaskFailed("a worker lacked the program's files, "
                                     "sent again", None, self.start)
                try:
                    ident, secs, vals, err = _ship.unpack(data, self.extra)
                except _ship.UnsafeResult as e:
                    raise UnsafeResult(
                        "refused a worker's result: it names %s, which "
                        "the client does not unpickle from a worker "
                        "(r3q.allow(%r) allows it; "
                        "r3q.trust_results() allows anything)"
                        % (e, str(e)),
                        None, self.start) from None
                self.cold = _sizer.note(ident, secs,
                                        len(vals) + (err is not None))
                self.secs = secs
                if self.wall is not None:
                    self.lag = max(self.wall - secs, 0.0)
                self.out = (vals, err)
            return self.out


def _raise(err, start):
    idx, exc, text = err
    if exc is not None:
        raise exc from RemoteTraceback(text)
    raise TaskFailed(text, None, start + idx)


def _calls(iterables, kwargs):
    return [(args, kwargs) for args in zip(*iterables)]


def _submit_chunks(fn, calls, chunksize, who, client=None, kind=None,
                   linger=False):
    global last_chunksize
    fnblob = _ship.check_function(fn, who)
    ctx = _context()
    client = client or _get_client()
    kind = kind or _kind
    n = len(calls)
    if n == 0:
        return []
    if chunksize is None:
        chunksize = _sizer.chunksize(n)
    # No larger than the halves that fitted, if fn's chunks were split.
    chunksize = _sizer.fit(fnblob, max(1, int(chunksize)))
    last_chunksize = chunksize
    extra = {getattr(getattr(fn, "func", fn), "__module__", None) or
             "__main__"}
    chunks = []
    # The program's files go with every task until a worker has answered
    # one of this program; then with a task only when its worker says it
    # lacks them (one more round trip, once a machine).
    files = not ctx.answered

    def send(part, files=True):
        """A chunk sent again, with the files or as a half: its task and
        the constants' hash."""
        payload, sh = _ship.pack(ctx, fnblob, part, files)
        fut = client.submit(kind, payload, _wake=False)
        client._flush()
        return fut, sh

    try:
        for i in range(0, n, chunksize):
            part = calls[i:i + chunksize]
            try:
                payload, sh = _ship.pack(ctx, fnblob, part, files)
            except (pickle.PicklingError, TypeError, AttributeError) as e:
                raise TypeError("%s: cannot send the arguments of %s (calls "
                                "%d-%d) to the workers: %s" % (
                                    who, _ship.describe(fn), i,
                                    i + len(part) - 1, e)) from None
            packed = time.perf_counter()
            task = client.submit(kind, payload, _wake=False)
            chunks.append(_Chunk(i, len(part), task, extra, ctx, part, send,
                                 fnblob, files, fn, sh))
            chunks[-1].t_packed = packed
        # A lone task goes into the open batch, left open (_Driver).
        if linger:
            client._send()
        else:
            client._flush()
        sent = time.perf_counter()
        for c in chunks:
            c.t_sent = sent
        stats["tasks"] += len(chunks)
        if files and ctx.blob:
            stats["with_files"] += len(chunks)
    except BaseException:
        for c in chunks:
            c.fut.cancel()
        raise
    return chunks


def _ordered(chunks, timeout):
    try:
        for c in chunks:
            vals, err = c.values(timeout)
            yield from vals
            if err is not None:
                _raise(err, c.start)
        # Not from chunks that paid a start: the program's files sent
        # or sent again, or a worker process's first chunk.
        _sizer.note_cost([c.lag for c in chunks
                          if not (c.cold or c.files or c.sends > 1)])
    finally:
        for c in chunks:
            if not c.fut.done():
                c.fut.cancel()


def map(func, *iterables, chunksize=None, timeout=None, **kwargs):
    """func(*args, **kwargs) for each args of zip(*iterables), run on the
    cluster; an iterator of the results in order, as the builtin map (and
    SCOOP's).  Every call is submitted at once (in chunks: chunksize=
    overrides the size chosen); the iterator raises the first failure when
    it reaches it.  timeout (s) bounds the wait for each chunk.  An
    iterator left early (its failure, a break, KeyboardInterrupt) cancels
    the chunks still out once it is closed or dropped."""
    if _on_worker:
        _ship.at_import("futures.map")
        return iter(list(_builtin_map(lambda *a: func(*a, **kwargs),
                                      *iterables)))
    chunks = _submit_chunks(func, _calls(iterables, kwargs), chunksize,
                            "futures.map")
    return _ordered(chunks, timeout)


def map_as_completed(func, *iterables, chunksize=None, timeout=None,
                     **kwargs):
    """As map, but the results come as their chunks complete, not in
    order."""
    if _on_worker:
        _ship.at_import("futures.map_as_completed")
        return map(func, *iterables, **kwargs)
    chunks = _submit_chunks(func, _calls(iterables, kwargs), chunksize,
                            "futures.map_as_completed")
    return _completed(chunks, timeout)


def _kick(chunks):
    """The chunks' outcomes are awaited other than in libr3q
    (as_completed(), a done callback): rouse the futures' thread
    (_Driver.kick)."""
    if chunks:
        chunks[0].task._driver.kick()


def _completed(chunks, timeout):
    """The chunks' results as they complete; those still out are
    cancelled when the iterator is left early."""
    by = {c.fut: c for c in chunks}
    _kick(chunks)
    try:
        for f in _cf.as_completed(list(by), timeout):
            c = by[f]
            vals, err = c.values()
            yield from vals
            if err is not None:
                _raise(err, c.start)
    finally:
        for c in chunks:
            if not c.fut.done():
                c.fut.cancel()


class Future(_cf.Future):
    """The outcome of one submit(): result(), exception(), done(),
    cancel(), add_done_callback(), for wait() and as_completed()."""

    def __init__(self, chunk):
        super().__init__()
        self._chunk = chunk
        self._waiters = _Waiters(chunk.task._driver)
        chunk.fut.add_done_callback(self._done)

    def add_done_callback(self, fn):
        self._chunk.task._driver.kick()  # fn waits on the futures' thread
        super().add_done_callback(fn)

    def _done(self, f):
        try:
            if f.cancelled():
                raise _cf.CancelledError()
            vals, err = self._chunk.values()
            if err is not None:
                _raise(err, 0)
            self.set_result(vals[0])
        except _cf.CancelledError:
            _cancel_notified(self)
        except BaseException as e:
            try:
                self.set_exception(e)
            except _cf.InvalidStateError:
                pass
        else:
            return

    def result(self, timeout=None):
        return super().result(self._chunk.wait(timeout))

    def exception(self, timeout=None):
        return super().exception(self._chunk.wait(timeout))

    def cancel(self):
        if self.done():
            return self.cancelled()
        if not self._chunk.fut.cancel():
            return False
        return _cancel_notified(self)


def submit(func, *args, **kwargs):
    """func(*args, **kwargs) on the cluster: a Future at once.  The task
    goes into the job's open batch (see Batches above)."""
    if _on_worker:
        _ship.at_import("futures.submit")
        f = _cf.Future()
        try:
            f.set_result(func(*args, **kwargs))
        except Exception as e:
            f.set_exception(e)
        return f
    chunks = _submit_chunks(func, [(args, kwargs)], 1, "futures.submit",
                            linger=True)
    return Future(chunks[0])


def _tree(op, values, lo, hi):
    """values[lo:hi] reduced by op as SCOOP's mapReduce reduces them: the
    left half (the smaller when odd) and the right half, each reduced
    so, then op(left, right)."""
    if hi - lo == 1:
        return values[lo]
    mid = lo + (hi - lo) // 2
    return op(_tree(op, values, lo, mid), _tree(op, values, mid, hi))


def mapReduce(mapFunc, reductionFunc, *iterables, chunksize=None,
              timeout=None, **kwargs):
    """SCOOP's mapReduce: map(mapFunc, *iterables) on the cluster, its
    results reduced by reductionFunc (a function of two values) into one,
    which is returned.  The reduction runs in the calling process, in the
    order SCOOP's runs it (halves, each reduced so, then the two
    combined), so that a reduction that is not associative (floats added)
    gives SCOOP's value, bit for bit.  Empty iterables raise TypeError,
    as functools.reduce does."""
    if not callable(reductionFunc):
        raise TypeError("futures.mapReduce: %r is not callable"
                        % (reductionFunc,))
    values = list(map(mapFunc, *iterables, chunksize=chunksize,
                      timeout=timeout, **kwargs))
    if not values:
        raise TypeError("futures.mapReduce() of empty iterables: nothing "
                        "to reduce")
    return _tree(reductionFunc, values, 0, len(values))


def mapScan(mapFunc, reductionFunc, *iterables, chunksize=None,
            timeout=None, **kwargs):
    """SCOOP's mapScan: map(mapFunc, *iterables) on the cluster, then the
    running reduction of its results by reductionFunc, as a list: the
    first result, reductionFunc of it and the second, and so on
    (itertools.accumulate's, which SCOOP's documentation and its example
    describe; SCOOP's own returns other values past two results)."""
    if not callable(reductionFunc):
        raise TypeError("futures.mapScan: %r is not callable"
                        % (reductionFunc,))
    values = map(mapFunc, *iterables, chunksize=chunksize, timeout=timeout,
                 **kwargs)
    return list(itertools.accumulate(values, reductionFunc))


def as_completed(fs, timeout=None):
    """The futures of fs as they complete (concurrent.futures'); a
    negative timeout waits for ever, as SCOOP's."""
    if timeout is not None and timeout < 0:
        timeout = None
    return _cf.as_completed(fs, timeout)


def wait(fs, timeout=None, return_when=ALL_COMPLETED):
    """(done, not_done) (concurrent.futures'); a negative timeout waits
    for ever, as SCOOP's (whose default is -1)."""
    if timeout is not None and timeout < 0:
        timeout = None
    return _cf.wait(fs, timeout, return_when)


def shutdown(wait=True):
    """Close the client this module made: with wait (as SCOOP's and
    concurrent.futures' shutdown), once its unfinished futures are done;
    without, they are cancelled.  python3 -m r3q calls shutdown() when
    the script ends, shutdown(wait=False) when it raised; so does the
    end of the interpreter for a program that did not."""
    global _client
    with _lock:
        c, owned = _client, _owned
        _client = None
    if c is None or not owned:
        return
    d = c._state.driver
    while wait and d is not None:
        # Chunks sent again (halves, the files) are new tasks: look again.
        with d.lock:
            futs = list(d.pending.values())
        if not futs:
            break
        _cf.wait(futs)
    c.close()


def map_list(client, kind, fn, iterables, chunksize=None):
    """Client.map_any's: the results as a list."""
    chunks = _submit_chunks(fn, _calls(iterables, {}), chunksize,
                            "Client.map_any", client, kind)
    return list(_ordered(chunks, None))

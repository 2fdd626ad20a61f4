"""r3q.Client: run tasks on an R3Q cluster from Python, over libr3q.

A client holds up to two libr3q connections to one masterd, each with one
batch job: one for map() (one call, one batch: a generation), opened when
the client is made, and one for submit() and its futures, opened on the
first submit.  They are two because r3q_signal() wakes whichever wait is
blocked on a connection: the thread waiting on the futures is woken that
way when a task is submitted or a caller comes to wait itself, and an
interrupted map is woken that way too, and neither must ever take the
other's wake-up.
"""
import concurrent.futures
import ctypes
import itertools
import pickle
import sys
import threading
import time
import traceback
import weakref
from array import array

from . import _lib
from .errors import (Cancelled, ClientClosed, ConnectionLost, Error,
                     TaskFailed, UnsafeResult)

_CANCELLED = concurrent.futures._base.CANCELLED
_BUF_WORDS = 3          # struct r3q_buf: data, len, status (+ padding)
assert ctypes.sizeof(_lib.Buf) == 8 * _BUF_WORDS


class _Pickle:
    """codec="pickle": payloads pickled, outputs unpickled against the
    allowlist r3q.futures' results go through (r3q.allow() adds to it,
    r3q.trust_results() lifts it): a worker, or whoever answers as one,
    cannot run code in this process by default."""

    @staticmethod
    def dumps(obj):
        return pickle.dumps(obj, pickle.HIGHEST_PROTOCOL)

    @staticmethod
    def loads(data):
        from . import _ship
        try:
            return _ship.loads(data)
        except _ship.UnsafeResult as e:
            raise UnsafeResult(
                "refused a worker's output: it names %s, which the client "
                "does not unpickle from a worker (r3q.allow(%r) allows "
                "it; r3q.trust_results() allows anything)" % (e, str(e)),
                _lib.EREMOTE) from None


_PICKLE = _Pickle()


def _codec(codec):
    """None (bytes as they are), "pickle" (restricted: see _Pickle), or an
    object with dumps and loads.  The pickle module itself is taken as
    "pickle": unrestricted unpickling is r3q.trust_results() only."""
    if codec is None:
        return None
    if codec == "pickle" or codec is pickle:
        return _PICKLE
    if not (hasattr(codec, "dumps") and hasattr(codec, "loads")):
        raise TypeError("codec must be None, 'pickle' or have dumps and "
                        "loads, not %r" % (codec,))
    return codec


def _payload(obj, codec):
    """The bytes of one task's payload."""
    if codec is not None:
        obj = codec.dumps(obj)
    if isinstance(obj, bytes):
        return obj
    if isinstance(obj, (bytearray, memoryview)):
        return bytes(obj)
    raise TypeError("a payload is bytes (or use codec='pickle'), not %s"
                    % type(obj).__name__)


def _kind(kind):
    if not isinstance(kind, str) or not kind:
        raise TypeError("a kind is a non-empty str, not %r" % (kind,))
    return kind.encode()


def _b(s):
    return None if s is None else str(s).encode()


class _Conn:
    """One libr3q connection and its job: what a Client's map or futures
    use (each its own: see _State.take), closed once (r3q_close tells the
    master the job is over)."""

    def __init__(self, opts, jopts):
        lib = _lib.lib()
        err = ctypes.create_string_buffer(512)
        self.ptr = lib.r3q_connect(ctypes.byref(opts), err, len(err))
        if not self.ptr:
            raise ConnectionLost(err.value.decode("utf-8", "replace"),
                                 _lib.ECONN)
        self.job = lib.r3q_job_open(self.ptr, ctypes.byref(jopts))
        if not self.job:
            text = lib.r3q_error(self.ptr).decode("utf-8", "replace")
            lib.r3q_close(self.ptr)
            self.ptr = None
            raise Error("cannot open a job: " + text, _lib.EDENIED)

    def close(self):
        if self.ptr:
            _lib.lib().r3q_close(self.ptr)
            self.ptr = self.job = None


class _Watch:
    """Why a job's tasks wait, said once on standard error: a wait that
    has seen no outcome for WATCH seconds asks the master (libr3q's
    r3q_job_waiting), which answers when none can run, a kind no
    connected worker offers above all (the tasks wait for one rather than
    fail: workers come and go).  due() with the caller's lock held (one
    caller asks), ask() without it (it waits for the master's answer)."""

    WATCH = 5.0                         # s without an outcome

    def __init__(self, conn):
        self.conn = conn
        self.since = time.monotonic()   # last outcome, sending or asking
        self.said = ""

    def progress(self, now=None):
        self.since = time.monotonic() if now is None else now

    def due(self):
        now = time.monotonic()
        if now - self.since < self.WATCH:
            return False
        self.since = now
        return True

    def ask(self):
        lib = _lib.lib()
        job = self.conn.job
        buf = ctypes.create_string_buffer(512)
        if job is None or lib.r3q_job_waiting(job, buf, len(buf)) != _lib.OK:
            return
        why = buf.value.decode("utf-8", "replace")
        if why and why != self.said:
            hint = ""
            if why == "no worker offers kind python":
                hint = (" (a worker offers it with \"exec python = "
                        "persistent /usr/bin/python3 -m r3q.serve --any\" "
                        "in workerd.conf, see pydoc r3q.futures)")
            sys.stderr.write("r3q: job %d waits: %s%s; r3qctl workers "
                             "lists the workers and their kinds\n"
                             % (lib.r3q_job_id(job), why, hint))
            sys.stderr.flush()
        self.said = why


def _cancel_notified(fut):
    """Cancel fut, a concurrent.futures.Future that no executor runs, and
    tell wait() and as_completed() of it, as an executor's
    set_running_or_notify_cancel() does: once, however many threads and
    done callbacks get here (a cancelled task's callbacks cancel the
    futures built on it, in the thread that cancels, before that thread's
    own cancel() returns).  True if fut is cancelled, now or before;
    False if it is done."""
    if not concurrent.futures.Future.cancel(fut):
        return False
    with fut._condition:                # re-entrant: the notice takes it
        if fut._state == _CANCELLED:
            fut.set_running_or_notify_cancel()
    return True


class _Waiters(list):
    """A future's _waiters, where concurrent.futures.wait() and
    as_completed() put theirs: each one added tells the futures' thread
    that an outcome is awaited other than in libr3q (_Driver.kick)."""

    __slots__ = ("driver",)

    def __init__(self, driver):
        super().__init__()
        self.driver = driver

    def append(self, waiter):
        self.driver.kick()
        super().append(waiter)


class Future(concurrent.futures.Future):
    """The outcome of one task, as concurrent.futures knows it: result(),
    exception(), done(), cancel(), add_done_callback(), and
    concurrent.futures.wait() and as_completed().  A failed task's result()
    raises r3q.TaskFailed with the remote error, a cancelled one
    r3q.Cancelled (a concurrent.futures.CancelledError)."""

    def __init__(self, driver, cfut, codec):
        super().__init__()
        self._driver = driver
        self._cfut = cfut               # None once the driver took it
        self._codec = codec
        self._cancel_text = "cancelled"
        self._t_out = None              # when its outcome was taken
        self._waiters = _Waiters(driver)

    def add_done_callback(self, fn):
        self._driver.kick()             # fn waits on the futures' thread
        super().add_done_callback(fn)

    def cancel(self):
        """Cancel the task: True if it will not give a result (it is
        cancelled on the cluster too), False if it is done or its result
        is on its way."""
        if self.done():
            return self.cancelled()
        if not self._driver.cancel(self):
            return False
        self._cancelled("cancelled")
        return True

    def _cancelled(self, text):
        self._cancel_text = text
        _cancel_notified(self)          # the program and the driver

    def _wait(self, timeout):
        """Wait for the outcome in this thread (_Driver.wait_for); the
        time left of timeout."""
        if self.done():
            return timeout
        t0 = time.monotonic()
        self._driver.wait_for(self, timeout)
        if timeout is None:
            return None
        return max(0.0, timeout - (time.monotonic() - t0))

    def result(self, timeout=None):
        try:
            return super().result(self._wait(timeout))
        except concurrent.futures.CancelledError as e:
            if isinstance(e, Cancelled):
                raise
            raise Cancelled(self._cancel_text, _lib.ECANCELLED) from None

    def exception(self, timeout=None):
        try:
            return super().exception(self._wait(timeout))
        except concurrent.futures.CancelledError as e:
            if isinstance(e, Cancelled):
                raise
            raise Cancelled(self._cancel_text, _lib.ECANCELLED) from None

    def _resolve(self, status, out, text):
        """The driver's: the task's outcome arrived."""
        try:
            if status == _lib.OK:
                try:
                    value = out if self._codec is None else \
                        self._codec.loads(out)
                except Exception as e:
                    self.set_exception(e)
                else:
                    self.set_result(value)
            elif status == _lib.ECANCELLED:
                self._cancelled(text or "cancelled")
            else:
                self.set_exception(_lib.exception(status, text))
        except concurrent.futures.InvalidStateError:
            pass                        # cancelled meanwhile


class _Driver:
    """The futures' connection and the thread that waits on it.

    libr3q has no thread of its own.  A thread that waits for a result
    (Future.result(), r3q.futures' map and submit) waits in libr3q itself,
    with the GIL released, and completes whatever resolves meanwhile, so
    that an outcome reaches it without a hand-off between threads (each
    such hand-off is a wake-up: on a loaded machine each costs as much as
    the master's own work).  The futures' thread waits in libr3q on every
    unresolved task for the others: callbacks, wait(), as_completed().  It
    leaves a GRACE after the last flush or wait for a caller to come and
    wait, so that it is not on a synchronous caller's way, and steps aside
    when one comes while it waits (r3q_signal).  It is woken as little as
    it can be (each wake-up costs CPU and the GIL in the middle of a round
    trip): the end of a caller's wait in libr3q wakes callers waiting for
    their turn (turn), not it, unless tasks are left that nobody waits
    for; and for HOT seconds after the last flush or wait it looks every
    GRACE by itself, so that a flush wakes it only when it sleeps for
    good.  While a caller waits in libr3q (wait_for), which completes
    every task that resolves, the thread looks only every DEFER: a
    program that submits and waits for each result in turn (submit(f,
    x).result()) then never wakes it, which was a tenth of such a round
    trip when it looked every GRACE.  The caller's wait rouses it at its
    end if tasks are left; whoever awaits an outcome another way (a done
    callback, concurrent.futures.wait() or as_completed()) rouses it too
    (kick), since nobody else may wait in libr3q.  One thread at a time
    waits in libr3q, the pumper, on every unresolved task; only the pumper
    frees libr3q's futures, so the array it waits on stays valid while it
    is blocked.  Submitters queue tasks with r3q_submit() from any thread;
    tasks submitted with wake go out when the futures' thread next looks
    (r3q_flush: those since it last looked are one batch).

    A task awaited on its own (r3q.futures.submit) goes out at once into
    the job's open batch, which stays open (send(), r3q_send): masterd
    then ends no batch a task, whose report and journal rows came before
    each answer (a closed batch of one echo task took 207-238 us a round
    trip from C, a task of an open batch 108-175).  But RR and R3Q copy
    only the tail of a closed batch to idle workers, so whoever waits
    closes the open batch (r3q_flush) once LINGER has passed without an
    outcome or a send, the futures' thread when it falls asleep, and
    send() after LOOSE_MAX tasks (masterd holds an open batch's tasks
    until it closes)."""

    GRACE = 0.001                       # s: a synchronous caller's turn
    HOT = 0.05                          # s: busy after a flush or wait
    DEFER = 0.05                        # s: its look while a caller waits
    TICK = 0.25                         # s: a caller's wait at most, so
                                        # that Ctrl-C reaches the program
    LINGER = 0.005                      # s: an open batch's tasks idle
    LOOSE_MAX = 1024                    # tasks sent into an open batch

    def __init__(self, conn):
        self.conn = conn
        self.lock = threading.Lock()    # pending, flags; libr3q calls
        self.idle = threading.Condition(self.lock)  # the thread's sleep
        self.turn = threading.Condition(self.lock)  # callers': the pumper
        self.pending = {}               # libr3q future -> Future
        self.new = False                # submitted since the last flush
        self.loose = 0                  # sent into the open batch (send)
        self.loose_at = 0.0             # their last send or outcome
        self.signalled = False          # one r3q_signal not yet consumed
        self.stopping = False
        self.pumping = None             # the thread waiting in libr3q
        self.direct = 0                 # threads in wait_for()
        self.urgent = False             # the thread must look at once
        self.calm = 0.0                 # last flush or wait_for's end
        self.asleep = False             # the thread waits untimed
        self.roused = threading.Event()  # the thread's sleep in DEFER
        self.keys = []                  # the pumper's: what it waits on
        self.arr = None
        self.watch = _Watch(conn)
        self.thread = threading.Thread(target=self._run, name="r3q-futures",
                                       daemon=True)
        self.thread.start()

    def _signal(self):
        """With the lock: make the thread waiting in libr3q look again."""
        if self.pending and not self.signalled:
            self.signalled = True
            _lib.lib().r3q_signal(self.conn.ptr)

    def _wake(self):
        """With the lock: make the futures' thread look at once."""
        self.urgent = True
        self._signal()
        self._rouse()

    def _rouse(self):
        """With the lock: make the futures' thread look again, however it
        sleeps."""
        self.idle.notify_all()
        self.roused.set()

    def kick(self):
        """An outcome is awaited other than in libr3q (a done callback,
        concurrent.futures.wait()): rouse the futures' thread, which
        completes it unless a caller waiting in libr3q does.  Without the
        lock: a future's condition may be held (wait() adds its waiter
        with it), which wait_for() takes with the lock.  A kick the thread
        misses while it makes up its mind to sleep finds a caller in
        wait_for(), whose end rouses it if tasks are left."""
        self.roused.set()

    def _defer(self):
        """With the lock: a caller waits in libr3q (or for its turn);
        sleep until roused or kicked, DEFER at most."""
        self.roused.clear()
        self.lock.release()
        try:
            self.roused.wait(self.DEFER)
        finally:
            self.lock.acquire()

    def submit(self, kind, payload, codec, priority, copies, wake=True):
        """Queue a task; wake false: the caller flushes (flush()), which
        wakes this thread once the task is on its way."""
        lib = _lib.lib()
        with self.lock:
            if self.stopping:
                raise ClientClosed("the r3q.Client is closed")
            if priority or copies > 1:
                t = _lib.Task(kind, ctypes.cast(ctypes.c_char_p(payload),
                                                ctypes.c_void_p),
                              len(payload), priority, copies)
                cfut = lib.r3q_submit_task(self.conn.job, ctypes.byref(t))
            else:
                cfut = lib.r3q_submit(self.conn.job, kind, payload,
                                      len(payload))
            if not cfut:
                raise MemoryError("libr3q: out of memory")
            fut = Future(self, cfut, codec)
            self.pending[cfut] = fut
            self.new = True
            if wake:
                self._wake()
        return fut

    def flush(self):
        """Send what was submitted, from this thread, now; the futures'
        thread waits on it too, after GRACE unless the caller waits for
        it first."""
        with self.lock:
            # Closed even if another thread's send() sent these tasks.
            if self.stopping or not (self.new or self.loose):
                return
            self.new = False
            self._close()
            self._sent()

    def send(self):
        """flush() for a task awaited on its own: it goes out now, into
        the job's open batch, which stays open (see the class)."""
        with self.lock:
            if self.stopping or not self.new:
                return
            self.new = False
            if self.loose >= self.LOOSE_MAX:
                self._close()
            else:
                self.loose += 1
                _lib.lib().r3q_send(self.conn.job)
            self._sent()
            self.loose_at = self.calm

    def _sent(self):
        """With the lock: tasks went out; the pumper waits on them too."""
        self.calm = time.monotonic()
        self.watch.progress(self.calm)
        if self.pumping is not None:
            self._signal()              # to wait on them too
        elif self.asleep:
            self.idle.notify_all()

    def _close(self):
        """With the lock: close the job's open batches, the one the loose
        tasks went into too, and send what is queued (r3q_flush)."""
        self.loose = 0
        _lib.lib().r3q_flush(self.conn.job)

    def cancel(self, fut):
        """Cancel fut's task; False if its outcome is in already."""
        with self.lock:
            if fut._cfut is None or self.stopping:
                return False
            if _lib.lib().r3q_cancel(fut._cfut) != _lib.OK:
                return False
            self._wake()                # the cancel goes out, cfut is freed
            return True

    def _take(self, cfut):
        """With the lock: a resolved task's outcome, its libr3q future
        freed."""
        lib = _lib.lib()
        data = ctypes.c_void_p()
        size = ctypes.c_size_t()
        status = lib.r3q_future_result(cfut, ctypes.byref(data),
                                       ctypes.byref(size))
        out = text = None
        if status == _lib.OK:
            out = ctypes.string_at(data.value, size.value) \
                if size.value else b""
        else:
            e = lib.r3q_future_error(cfut)
            text = e.decode("utf-8", "replace") if e else None
        lib.r3q_future_free(cfut)
        fut = self.pending.pop(cfut)
        fut._cfut = None
        fut._t_out = time.perf_counter()
        return fut, status, out, text

    def _look(self, ms):
        """The pumper's turn, with the lock held (released while it
        waits): send what was submitted, wait up to ms (-1: for ever) or
        a signal for any unresolved task, and complete those that
        resolved."""
        lib = _lib.lib()
        self.pumping = threading.current_thread()
        # Whoever looks does what a _wake() asked of the futures' thread:
        # left set, it would make the thread take the next task at once,
        # ahead of a caller about to wait for it (its done callbacks would
        # then run in the wrong thread).
        self.urgent = False
        try:
            if self.new:
                self.new = False
                self._close()
            if self.loose:
                # LINGER without an outcome: close their batch.
                left = self.loose_at + self.LINGER - time.monotonic()
                if left <= 0:
                    self._close()
                elif ms < 0 or ms > left * 1000:
                    ms = max(1, int(left * 1000 + 0.999))
            if self.arr is None or len(self.keys) != len(self.pending):
                self.keys = list(self.pending)
                self.arr = (ctypes.c_void_p * len(self.keys))(*self.keys)
            keys, arr = self.keys, self.arr
            idx = ctypes.c_size_t()
            done = []
            self.lock.release()
            try:
                rc = lib.r3q_wait_any(arr, len(keys), ms, ctypes.byref(idx))
                while rc == _lib.OK:
                    i = idx.value
                    with self.lock:
                        done.append(self._take(keys[i]))
                    arr[i] = None
                    # Whatever else resolved meanwhile, without blocking.
                    rc = lib.r3q_wait_any(arr, len(keys), 0,
                                          ctypes.byref(idx))
                with self.lock:
                    if rc == _lib.ESIGNALLED:
                        self.signalled = False
                    elif rc == _lib.ECONN:
                        # Given up: what libr3q did not resolve fails here.
                        text = lib.r3q_error(self.conn.ptr).decode(
                            "utf-8", "replace")
                        for c in list(self.pending):
                            fut, _, _, _ = self._take(c)
                            done.append((fut, _lib.ECONN, None, text))
                    if done:
                        self.arr = None
                        self.watch.progress()
                        if self.loose:
                            self.loose_at = time.monotonic()
                for fut, status, out, text in done:
                    try:
                        fut._resolve(status, out, text)
                    except Exception:       # never lose the thread
                        traceback.print_exc()
            finally:
                self.lock.acquire()
        finally:
            # Callers waiting for their turn, or for a future this
            # pumper completed; not the futures' thread (wait_for()
            # wakes it if tasks are left unwatched).
            self.pumping = None
            self.turn.notify_all()

    def _run(self):
        with self.lock:
            while not self.stopping:
                if self.pending and (self.direct or self.pumping):
                    self._defer()
                    continue
                if not self.pending:
                    if time.monotonic() - self.calm < self.HOT:
                        # Busy: look again in a GRACE, so that a flush
                        # need not wake the thread.
                        self.idle.wait(self.GRACE)
                        continue
                    if self.loose:
                        self._close()
                    self.asleep = True
                    self.idle.wait()
                    self.asleep = False
                    continue
                left = self.calm + self.GRACE - time.monotonic()
                if left > 0 and not self.urgent:
                    self.idle.wait(left)
                    continue
                self.urgent = False
                self._look(int(_Watch.WATCH * 1000))
                self._watch()

    def wait_for(self, fut, timeout=None):
        """Wait in the calling thread until fut is done, timeout seconds
        at most (None: for ever), as the pumper; if the futures' thread
        is waiting in libr3q it is signalled to step aside.  A thread that
        is the pumper already (a callback of a future it completed) leaves
        it to the future's own wait."""
        me = threading.current_thread()
        deadline = None if timeout is None else time.monotonic() + timeout
        with self.lock:
            if self.pumping is me or me is self.thread:
                return
            self.direct += 1
            try:
                while not fut.done() and not self.stopping:
                    ms = int(self.TICK * 1000)
                    if deadline is not None:
                        left = deadline - time.monotonic()
                        if left <= 0:
                            return
                        ms = min(ms, max(1, int(left * 1000 + 0.999)))
                    if self.pumping is not None or fut._cfut is None:
                        # Another thread waits in libr3q, or took fut's
                        # outcome and is completing it: it tells us.
                        if self.pumping is self.thread:
                            self._signal()
                        self.turn.wait(None if ms < 0 else ms / 1000)
                        continue
                    self._look(ms)
                    self._watch()
            finally:
                self.direct -= 1
                self.calm = time.monotonic()
                if self.direct == 0 and self.pending:
                    self._rouse()

    def _watch(self):
        """With the lock: after WATCH seconds without an outcome, ask why
        (without the lock: the answer is a round trip).  The asker holds
        the pumper's place meanwhile: close() waits for it to be out of
        libr3q before it frees the connection, and other callers wait
        their turn (an r3q_signal stays for the next wait)."""
        if self.pending and not self.stopping and self.pumping is None \
                and self.watch.due():
            self.pumping = threading.current_thread()
            self.lock.release()
            try:
                self.watch.ask()
            finally:
                self.lock.acquire()
                self.pumping = None
                self.turn.notify_all()

    def close(self):
        """Stop the thread, cancel what is left, close the connection."""
        with self.lock:
            self.stopping = True
            if self.pending and not self.signalled:
                self.signalled = True
                _lib.lib().r3q_signal(self.conn.ptr)
            self._rouse()
            self.turn.notify_all()
        me = threading.current_thread()
        if self.thread is not me:
            self.thread.join()
        with self.lock:
            # A caller waiting in libr3q (wait_for()) holds the futures
            # in its array: they are freed only once it is out.
            while self.pumping is not None and self.pumping is not me:
                if not self.signalled:
                    self.signalled = True
                    _lib.lib().r3q_signal(self.conn.ptr)
                self.turn.wait(0.1)
            left = [self._take(c) for c in list(self.pending)]
        for fut, _, _, _ in left:
            fut._resolve(_lib.ECANCELLED, None, "the r3q.Client was closed")
        self.conn.close()


class _State:
    """What a Client owns, apart from the Client (weakref.finalize closes
    it at exit if the program did not)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.map_lock = threading.Lock()    # one map at a time
        self.closed = False
        self.mconn = None
        self.driver = None
        self.spare = None       # what Client() opened, not yet taken

    def take(self, opts, jopts):
        """A connection for map or for the futures (called with lock
        held): the one Client() opened, for whichever comes first, so
        that a program using one of them has one connection and one job
        on the master; a new one for the other."""
        conn, self.spare = self.spare, None
        return conn if conn is not None else _Conn(opts, jopts)

    def close(self):
        with self.lock:
            if self.closed:
                return
            self.closed = True
            driver, self.driver = self.driver, None
            spare, self.spare = self.spare, None
        if spare is not None:
            spare.close()
        if driver is not None:
            driver.close()
        with self.map_lock:
            if self.mconn is not None:
                self.mconn.close()
                self.mconn = None


class Client:
    """A connection to an R3Q cluster's masterd.

    Client() connects as libr3q's r3q_connect() does with no options: the
    R3Q_MASTER, R3Q_CA, R3Q_CERT, R3Q_KEY, R3Q_CONTROL and R3Q_CONFIG
    environment variables, else masterd's local control socket.
    R3Q_SPIN (or spin in the config file) is how long a wait for the one
    task in flight polls before it sleeps (r3q(3): 1ms by default, 0
    never), which shortens a submit().result() round trip where waking
    up is slow.
    Client(master="head:7411", ca=..., cert=..., key=...) connects over
    mutual TLS with a client certificate (scripts/mkcerts makes one).
    control= names a control socket, config= a "key = value" file, crl=
    a revocation list (PEM) the master's certificate is checked against;
    reconnect= is how many seconds a broken connection is tried again
    before its tasks fail with r3q.ConnectionLost (default 60, None: for
    ever).  The job's settings (masterd.conf(5)): name, policy ("wq",
    "rr", "rwq", "r3q"), queue_factor (an int or "auto"), max_attempts,
    max_kills, verify, client_timeout (seconds), balance ("none", "one",
    "power", "global": held tasks move between workers).

    A client is a job on the master (r3qctl jobs shows it by its name),
    opened by Client().  One that uses both map (map, map_pickled,
    map_any) and the futures (submit, the Executor, r3q.futures) is two
    jobs: map waits in libr3q on a connection of its own.

    A client is used from any thread, and as a context manager; close()
    (or the end of the with block) cancels what is still running."""

    def __init__(self, master=None, ca=None, cert=None, key=None, *,
                 control=None, config=None, crl=None, reconnect=60.0,
                 name="python",
                 policy=None, queue_factor=None, max_attempts=None,
                 max_kills=None, verify=None, client_timeout=None,
                 balance=None):
        if reconnect is None:
            rms = -1
        else:
            rms = max(1, int(reconnect * 1000))
        self._opts = _lib.Options(_b(master), _b(ca), _b(cert), _b(key),
                                  _b(control), _b(config), rms, _b(crl))
        if queue_factor == "auto":
            queue_factor = _lib.QF_AUTO
        self._jopts = _lib.JobOptions(
            _b(name), _b(policy), queue_factor or 0, max_attempts or 0,
            max_kills or 0, verify or 0,
            int((client_timeout or 0) * 1000), _b(balance))
        self._state = _State()
        # Connected now, so that a wrong address fails here.
        self._state.spare = _Conn(self._opts, self._jopts)
        self._finalizer = weakref.finalize(self, self._state.close)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Close the connections: unfinished futures are cancelled, and
        every later call raises r3q.ClientClosed.  Closing twice is fine."""
        self._finalizer()

    @property
    def closed(self):
        return self._state.closed

    def _check(self):
        if self._state.closed:
            raise ClientClosed("the r3q.Client is closed")

    def map(self, kind, iterable, *, codec=None, timeout=None,
            return_exceptions=False):
        """Run one task of kind for each payload of iterable, as one batch
        (one generation: RR and R3Q replicate its tail), and return their
        outputs as a list in input order.  Payloads and outputs are bytes,
        or with codec="pickle" any picklable objects (outputs unpickled
        against an allowlist: see map_pickled).

        A task that failed raises its exception (r3q.TaskFailed with the
        remote error, and its index) once all are over, or with
        return_exceptions=True takes its place in the list.  timeout (s):
        r3q.Timeout, the tasks left cancelled.  KeyboardInterrupt cancels
        the batch and is raised at once."""
        st = self._state
        codec = _codec(codec)
        kindb = _kind(kind)
        payloads = [_payload(p, codec) for p in iterable]
        n = len(payloads)
        self._check()
        if n == 0:
            return []
        tmo = -1 if timeout is None else max(0, int(timeout * 1000))
        # The inputs as one array of struct r3q_buf over one buffer.
        blob = b"".join(payloads)
        base = ctypes.cast(ctypes.c_char_p(blob), ctypes.c_void_p).value or 0
        lens = array("Q", map(len, payloads))
        inp = array("Q", bytes(8 * _BUF_WORDS * n))
        inp[0::_BUF_WORDS] = array("Q", itertools.accumulate(
            lens[:-1], initial=base))
        inp[1::_BUF_WORDS] = lens
        out = array("Q", bytes(8 * _BUF_WORDS * n))
        with st.map_lock:
            self._check()
            if st.mconn is None:
                with st.lock:
                    self._check()
                    st.mconn = st.take(self._opts, self._jopts)
            conn = st.mconn
            rc = self._run_map(conn, kindb, inp, out, n, tmo)
        results = self._outputs(out, n, codec)
        if rc == _lib.ETIMEDOUT:
            raise _lib.exception(rc, "map timed out after %g s" % timeout)
        if rc == _lib.ECONN and all(isinstance(r, ConnectionLost)
                                    for r in results):
            raise results[0]
        if not return_exceptions:
            for r in results:
                if isinstance(r, Error):
                    raise r
        return results

    def _run_map(self, conn, kindb, inp, out, n, tmo):
        """r3q_map, interruptible: in the main thread it runs in a helper
        thread while this one waits where KeyboardInterrupt can reach it,
        and then r3q_signal() ends the map (its tasks left cancelled)."""
        lib = _lib.lib()
        args = (conn.job, kindb, inp.buffer_info()[0], n,
                out.buffer_info()[0], tmo)
        if threading.current_thread() is not threading.main_thread():
            return lib.r3q_map(*args)
        box = []
        done = threading.Event()

        def run():
            try:
                box.append(lib.r3q_map(*args))
            finally:
                done.set()

        watch = _Watch(conn)
        threading.Thread(target=run, name="r3q-map", daemon=True).start()
        try:
            while not done.wait(_Watch.WATCH):
                if watch.due():
                    watch.ask()
        except BaseException:
            lib.r3q_signal(conn.ptr)
            while True:
                try:
                    done.wait()
                    break
                except BaseException:
                    pass
            self._free_outputs(out, n)
            if box and box[0] != _lib.ESIGNALLED:
                # The map ended by itself: our signal is still pending and
                # would end the next map.  A new connection has none.
                self._state.mconn = None
                conn.close()
            raise
        return box[0]

    @staticmethod
    def _free_outputs(out, n):
        free = _lib.libc_free()
        for p in out[0::_BUF_WORDS]:
            if p:
                free(p)

    @staticmethod
    def _outputs(out, n, codec):
        """r3q_map's outputs as bytes (or decoded) and exceptions; the
        buffers it malloc'd freed."""
        free = _lib.libc_free()
        string_at = ctypes.string_at
        results = []
        i = 0
        for p, size, st in zip(out[0::_BUF_WORDS], out[1::_BUF_WORDS],
                               out[2::_BUF_WORDS]):
            status = st & 0xFFFFFFFF
            if status & 0x80000000:
                status -= 1 << 32
            data = string_at(p, size) if size else b""
            if p:
                free(p)
            if status == _lib.OK:
                if codec is not None:
                    try:
                        data = codec.loads(data)
                    except Error as e:
                        e.index = i
                        data = e
                    except Exception as e:
                        data = TaskFailed("cannot decode the output: %s: %s"
                                          % (type(e).__name__, e),
                                          _lib.EREMOTE, i)
                        data.__cause__ = e
                results.append(data)
            else:
                results.append(_lib.exception(
                    status, data.decode("utf-8", "replace") or None, i))
            i += 1
        return results

    def map_pickled(self, kind, iterable, **kw):
        """map() with codec="pickle": each item is pickled, each output
        unpickled (the worker runs "python3 -m r3q.serve --pickle", which
        runs the code a client's pickle names as the worker's slot user).
        Outputs are unpickled against an allowlist (builtins' containers
        and numbers, the script's, DEAP's and NumPy's classes, what
        r3q.allow() adds): an output naming anything else (os.system,
        builtins.eval...) fails its task with r3q.UnsafeResult, never
        runs.  r3q.trust_results() unpickles anything, for workers and a
        master you trust."""
        return self.map(kind, iterable, codec="pickle", **kw)

    def submit(self, kind, payload, *, codec=None, priority=0, copies=1,
               _wake=True):
        """Submit one task and return its r3q.Future at once.  priority:
        lower runs first; copies: run that many at once (at most 16), the
        first result wins.  Tasks submitted together go out, and are
        replicated, as one batch."""
        codec = _codec(codec)
        kindb = _kind(kind)
        data = _payload(payload, codec)
        st = self._state
        with st.lock:
            self._check()
            if st.driver is None:
                st.driver = _Driver(st.take(self._opts, self._jopts))
            driver = st.driver
        return driver.submit(kindb, data, codec, int(priority), int(copies),
                             _wake)

    def _flush(self):
        """The tasks submitted so far go out now, as one batch (r3q.futures
        calls it once a map's chunks are all submitted)."""
        driver = self._state.driver
        if driver is not None:
            driver.flush()

    def _send(self):
        """The tasks submitted so far go out now into the open batch, left
        open (r3q.futures.submit: see _Driver)."""
        driver = self._state.driver
        if driver is not None:
            driver.send()

    def submit_pickled(self, kind, obj, **kw):
        """submit() with codec="pickle" (outputs against the allowlist:
        see map_pickled)."""
        return self.submit(kind, obj, codec="pickle", **kw)

    def executor(self, kind=None, *, codec=None, kinds=None, ship=None):
        """A concurrent.futures.Executor whose tasks run on the cluster:
        see r3q.Executor."""
        return Executor(self, kind, codec=codec, kinds=kinds, ship=ship)

    def map_any(self, fn, *iterables, chunksize=None, kind="python"):
        """fn(*args) for each args of zip(*iterables) on the generic kind
        (workerd.conf: exec python = persistent /usr/bin/python3 -m
        r3q.serve --any), fn shipped by reference as r3q.futures does;
        the results as a list, in order.  It is what
        scipy.optimize.differential_evolution(..., workers=client.map_any,
        updating="deferred") takes."""
        from . import futures
        self._check()
        return futures.map_list(self, kind, fn, iterables, chunksize)


class Executor(concurrent.futures.Executor):
    """A concurrent.futures.Executor over a Client.

    Two ways.  On the generic kind "python" (the default: kind None or
    "python", or ship=True for another kind served by "python3 -m
    r3q.serve --any"), submit(fn, *args) and map(fn, *iterables) run fn
    itself on the workers, shipped by reference as r3q.futures does: any
    function a module or the script defines at top level, any number of
    arguments and iterables, results unpickled against r3q.futures'
    allowlist; map chunks its calls (chunksize= overrides) into one
    batch, and submit puts its task into the job's open batch, as
    r3q.futures.submit does (see "Batches" in pydoc r3q.futures).

    On a named kind, the workers run what workerd.conf installs for it,
    never a function the client sends: submit(fn, arg) and map(fn,
    iterable) run the kind fn stands for, with arg (or each item) as the
    payload: fn is a kind name, or a callable listed in kinds ({callable:
    kind}).  A callable that is not listed is refused (TypeError naming
    it), even with a default kind: the kind would run its own function,
    not fn.  With codec="pickle" arguments and results are Python objects,
    for "python3 -m r3q.serve --pickle module:function" on the workers.
    map() is one batch (client.map) and returns an iterator, as
    Executor.map does; so a DEAP toolbox takes it as its map:

        ex = client.executor(codec="pickle",
                             kinds={toolbox.evaluate: "evaluate"})
        toolbox.register("map", ex.map)

    shutdown() stops new submissions (and waits for this executor's
    futures unless wait=False); the client stays open."""

    def __init__(self, client, kind=None, *, codec=None, kinds=None,
                 ship=None):
        self._client = client
        self._kinds = dict(kinds or {})
        if ship is None:
            ship = kind == "python" or (kind is None and not self._kinds)
        self._ship = bool(ship)
        self._default = kind if kind is not None or not ship else "python"
        self._codec = _codec(codec)
        if self._ship and self._codec is not None:
            raise TypeError("executor(%r) ships functions with their "
                            "arguments pickled: no codec" % (self._default,))
        self._futures = weakref.WeakSet()
        self._shutdown = False
        self._lock = threading.Lock()

    def _kind_of(self, fn):
        if isinstance(fn, str):
            return fn
        try:
            if fn in self._kinds:
                return self._kinds[fn]
        except TypeError:
            pass
        from ._ship import describe
        if self._default is not None:
            raise TypeError(
                "executor(%r) cannot run %s: the workers run kind %r's own "
                "function, not one the client names; list it "
                "(kinds={fn: %r}) if it is that function, or use the "
                "generic kind (client.executor(\"python\"), workerd.conf: "
                "exec python = persistent /usr/bin/python3 -m r3q.serve "
                "--any) to run any function" % (
                    self._default, describe(fn), self._default,
                    self._default))
        raise TypeError("no kind for %s: name one (kinds={fn: kind}), or "
                        "use the generic kind (client.executor())"
                        % describe(fn))

    def submit(self, fn, /, *args, **kwargs):
        with self._lock:
            if self._shutdown:
                raise RuntimeError("cannot schedule new futures after "
                                   "shutdown")
            if self._ship:
                from . import futures
                chunks = futures._submit_chunks(
                    fn, [(args, kwargs)], 1, "Executor.submit",
                    self._client, self._default, linger=True)
                fut = futures.Future(chunks[0])
            else:
                if kwargs or len(args) != 1:
                    raise TypeError("an r3q task of a named kind takes one "
                                    "argument, its payload")
                fut = self._client.submit(self._kind_of(fn), args[0],
                                          codec=self._codec)
            self._futures.add(fut)
        return fut

    def map(self, fn, *iterables, timeout=None, chunksize=None):
        if self._shutdown:
            raise RuntimeError("cannot schedule new futures after shutdown")
        if self._ship:
            from . import futures
            chunks = futures._submit_chunks(
                fn, futures._calls(iterables, {}), chunksize,
                "Executor.map", self._client, self._default)
            return futures._ordered(chunks, timeout)
        kind = self._kind_of(fn)
        if len(iterables) != 1:
            raise TypeError(
                "kind %r takes one payload a task: map one iterable, or "
                "use the generic kind (client.executor()) to call a "
                "function with several arguments" % (kind,))
        results = self._client.map(kind, iterables[0],
                                   codec=self._codec, timeout=timeout,
                                   return_exceptions=True)

        def each():
            for r in results:
                if isinstance(r, BaseException):
                    raise r
                yield r
        return each()

    def imap(self, fn, iterable, chunksize=None):
        """multiprocessing.Pool.imap: the results in order, as they come
        (the generic kind only)."""
        return self.map(fn, iterable, chunksize=chunksize)

    def imap_unordered(self, fn, iterable, chunksize=None):
        """multiprocessing.Pool.imap_unordered: the results as their
        chunks complete (the generic kind only)."""
        if not self._ship:
            raise TypeError("imap_unordered needs the generic kind")
        from . import futures
        chunks = futures._submit_chunks(
            fn, futures._calls((iterable,), {}), chunksize,
            "Executor.imap_unordered", self._client, self._default)
        return futures._completed(chunks, None)

    def shutdown(self, wait=True, *, cancel_futures=False):
        with self._lock:
            self._shutdown = True
            futs = list(self._futures)
        if cancel_futures:
            for f in futs:
                f.cancel()
        if wait:
            concurrent.futures.wait(futs)

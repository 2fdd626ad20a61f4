# The r3q package's API against a real cluster: tests/regress/python.sh
# starts masterd (max_payload = 64K) and 3 workers serving tests/python/
# kinds.py through "python3 -m r3q.serve" (kinds py-echo, py-square,
# py-fail, py-slow, py-unpicklable) and kinds whose module does not import
# (py-broken, py-missing), then runs this with R3Q_CONTROL, R3Q_LIBRARY
# and PYTHONPATH set, BROKEN_LOG naming the file broken.py writes to, and
# R3QCTL the r3qctl to ask masterd with.
import concurrent.futures as cf
import faulthandler
import functools
import itertools
import multiprocessing
import operator
import os
import pickle
import re
import select
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import unittest

import kinds
import r3q
from r3q import futures, shared

# Time bounds are multiplied by this: python.sh sets it under scripts/check
# --sanitize, where this interpreter runs with ASan preloaded.
SLOW = float(os.environ.get("R3Q_TIME_FACTOR", "1"))


def _interrupted(test, child, outs):
    """Run child, a program that prints "mapping", maps long tasks, says
    "interrupted after ..." on KeyboardInterrupt, then maps 0.1 s tasks
    and prints "then OUTS in T s": SIGINT a second after "mapping" must
    interrupt it at once, and the cancelled tasks must have freed the
    workers (the bound on T is far below the cancelled tasks' time, and
    far above what a loaded 2-core machine needs)."""
    p = subprocess.Popen([sys.executable, "-c", child],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    test.assertEqual(p.stdout.readline().strip(), "mapping")
    time.sleep(1.0)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    line = p.stdout.readline()
    took = time.monotonic() - t0
    rest, err = p.communicate(timeout=60)
    test.assertTrue(line.startswith("interrupted after"), line + err)
    test.assertLess(took, 2.0 * SLOW, line)
    m = re.search(r"then %s in ([0-9.]+) s" % outs, rest)
    test.assertIsNotNone(m, rest + err)
    test.assertLess(float(m.group(1)), 10 * SLOW, rest)
    test.assertEqual(p.returncode, 0, err)


class _Deferred:
    """The futures' thread of client with DEFER made an hour: its sleeps
    counted, and settle() does round trips (roundtrip()) until the thread
    sleeps in DEFER, where only a kick or the end of a wait rouses it."""

    def __init__(self, client, roundtrip):
        self.d = client._state.driver
        self.roundtrip = roundtrip
        self.sleeps = 0
        self.deferring = False

    def _counted(self, real, deferring):
        def wait(*a, **k):
            if threading.current_thread() is not self.d.thread:
                return real(*a, **k)
            self.sleeps += 1
            self.deferring = deferring
            try:
                return real(*a, **k)
            finally:
                self.deferring = False
        return wait

    def __enter__(self):
        self.old = self.d.DEFER
        self.d.DEFER = 3600.0
        self.d.idle.wait = self._counted(self.d.idle.wait, False)
        self.d.roused.wait = self._counted(self.d.roused.wait, True)
        return self

    def settle(self):
        for _ in range(1000):
            self.roundtrip()
            if self.deferring:
                return
        raise AssertionError("the futures' thread never slept in DEFER")

    def __exit__(self, *exc):
        self.d.DEFER = self.old
        del self.d.idle.wait
        del self.d.roused.wait
        self.d.roused.set()             # out of its hour


class ClientTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.c = r3q.Client(name="test_r3q")

    @classmethod
    def tearDownClass(cls):
        cls.c.close()

    def setUp(self):
        # A hang is a failure with every thread's stack, not a stuck test.
        faulthandler.dump_traceback_later(120, exit=True)

    def tearDown(self):
        faulthandler.cancel_dump_traceback_later()

    def test_map_order(self):
        ins = [str(i).encode() * (i % 7) for i in range(500)]
        self.assertEqual(self.c.map("py-echo", ins), ins)
        self.assertEqual(self.c.map("echo", ins), ins)
        self.assertEqual(self.c.map("py-echo", []), [])

    def test_map_pickled(self):
        self.assertEqual(self.c.map_pickled("py-square", range(300)),
                         [i * i for i in range(300)])
        self.assertEqual(self.c.map("py-square", [1.5, 3], codec="pickle"),
                         [2.25, 9])

    def test_submit_result_timeout(self):
        f = self.c.submit("py-echo", b"hello")
        self.assertIsInstance(f, cf.Future)
        self.assertEqual(f.result(timeout=30), b"hello")
        self.assertTrue(f.done())
        slow = self.c.submit_pickled("py-slow", 1.0)
        with self.assertRaises(cf.TimeoutError):
            slow.result(timeout=0.05)
        self.assertFalse(slow.done())
        self.assertEqual(slow.result(timeout=30), 1.0)

    def test_cancel(self):
        f = self.c.submit_pickled("py-slow", 30)
        time.sleep(0.3)
        t0 = time.monotonic()
        self.assertTrue(f.cancel())
        self.assertTrue(f.cancelled())
        self.assertTrue(f.done())
        with self.assertRaises(r3q.Cancelled):
            f.result()
        with self.assertRaises(cf.CancelledError):
            f.result()
        self.assertLess(time.monotonic() - t0, 1 * SLOW)
        g = self.c.submit("py-echo", b"x")
        self.assertEqual(g.result(30), b"x")
        self.assertFalse(g.cancel())            # done already
        # The cancelled task left its worker: three short tasks run now.
        t0 = time.monotonic()
        self.assertEqual(self.c.map_pickled("py-slow", [0.1] * 3), [0.1] * 3)
        self.assertLess(time.monotonic() - t0, 5 * SLOW)

    @staticmethod
    def _sleepy(until, timeout):
        """$SLEEPY_LOG as {"start": [pid...], "done": [...],
        "interrupted": [...]} once until(log) is true, or after timeout."""
        end = time.monotonic() + timeout
        while True:
            log = {"start": [], "done": [], "interrupted": []}
            try:
                with open(os.environ["SLEEPY_LOG"]) as f:
                    for x in f.read().splitlines():
                        what, pid = x.split()
                        log[what].append(int(pid))
            except FileNotFoundError:
                pass
            if until(log) or time.monotonic() > end:
                return log
            time.sleep(0.05)

    def test_cancel_interrupts(self):
        """A running task that never looks at cancelled() is interrupted
        by its cancel: TaskCancelled in the function (its finally runs),
        at once rather than after its 60 s.  (R3Q may run copies of it on
        idle workers: each is interrupted.)"""
        open(os.environ["SLEEPY_LOG"], "w").close()
        f = self.c.submit_pickled("py-sleepy", 60)
        log = self._sleepy(lambda log: log["start"], 30 * SLOW)
        self.assertTrue(log["start"], "py-sleepy did not start")
        t0 = time.monotonic()
        self.assertTrue(f.cancel())
        log = self._sleepy(lambda log: log["start"] and sorted(
            log["interrupted"]) == sorted(log["start"]), 10 * SLOW)
        self.assertEqual(sorted(log["interrupted"]), sorted(log["start"]),
                         "not interrupted: %r" % log)
        self.assertLess(time.monotonic() - t0, 10 * SLOW)
        self.assertEqual(log["done"], [])
        with self.assertRaises(r3q.Cancelled):
            f.result()

    def test_cancel_no_interrupt(self):
        """serve --no-interrupt: a cancelled running task (and each copy
        of it) runs to its end."""
        open(os.environ["SLEEPY_LOG"], "w").close()
        f = self.c.submit_pickled("py-sleepy-ni", 1.0)
        log = self._sleepy(lambda log: log["start"], 30 * SLOW)
        self.assertTrue(log["start"], "py-sleepy-ni did not start")
        self.assertTrue(f.cancel())
        log = self._sleepy(lambda log: sorted(log["done"]) ==
                           sorted(log["start"]), 30 * SLOW)
        self.assertEqual(sorted(log["done"]), sorted(log["start"]),
                         "did not run to its end: %r" % log)
        self.assertEqual(log["interrupted"], [])

    def test_wait_as_completed_callback(self):
        fs = [self.c.submit_pickled("py-slow", s) for s in
              (0.6, 0.3, 0.01, 0.2, 0.01)]
        seen = []
        ev = threading.Event()
        fs[0].add_done_callback(lambda f: (seen.append(f.result()),
                                           ev.set()))
        done, not_done = cf.wait(fs, timeout=30,
                                 return_when=cf.FIRST_COMPLETED)
        self.assertGreaterEqual(len(done), 1)
        got = [f.result() for f in cf.as_completed(fs, timeout=30)]
        self.assertEqual(sorted(got), [0.01, 0.01, 0.2, 0.3, 0.6])
        self.assertTrue(ev.wait(5))
        self.assertEqual(seen, [0.6])
        done, not_done = cf.wait(fs, timeout=30)
        self.assertEqual((len(done), len(not_done)), (5, 0))
        # wait and as_completed hear of a cancel too.
        f = self.c.submit_pickled("py-slow", 30)
        threading.Timer(0.2, f.cancel).start()
        done, _ = cf.wait([f], timeout=10)
        self.assertEqual(done, {f})
        self.assertTrue(f.cancelled())

    def test_result_waits_in_caller(self):
        """result() takes its outcome in the calling thread (no hand-off
        to the futures' thread): with the futures' thread kept out (a
        grace longer than the test), the callback of a submitted task runs
        in the thread that waits; a second thread waiting in result() on
        other tasks meanwhile, and cf.as_completed() over tasks nobody
        waits on, once the grace is back, still get theirs."""
        f = self.c.submit("py-echo", b"warm")
        self.assertEqual(f.result(30), b"warm")
        d = self.c._state.driver
        old = d.GRACE
        d.GRACE = 3600.0
        try:
            where = []
            f = self.c.submit("py-echo", b"one", _wake=False)
            f.add_done_callback(
                lambda f: where.append(threading.current_thread()))
            self.c._flush()
            self.assertEqual(f.result(30), b"one")
            self.assertEqual(where, [threading.current_thread()])
            # Two threads waiting at once, each on its own tasks.
            out = {}

            def other():
                g = self.c.submit_pickled("py-slow", 0.3, _wake=False)
                self.c._flush()
                out["other"] = g.result(30)
            t = threading.Thread(target=other)
            t.start()
            h = self.c.submit_pickled("py-slow", 0.2, _wake=False)
            self.c._flush()
            self.assertEqual(h.result(30), 0.2)
            t.join(30)
            self.assertEqual(out, {"other": 0.3})
        finally:
            d.GRACE = old
            with d.lock:
                d._rouse()              # out of its hour-long grace
        self.assert_thread_takes(20)

    def assert_thread_takes(self, n):
        """n tasks that nobody waits for in result(), flushed: the
        futures' thread takes them (cf.as_completed() gets them all)."""
        fs = [self.c.submit("py-echo", b"%d" % i, _wake=False)
              for i in range(n)]
        self.c._flush()
        got = sorted(f.result() for f in cf.as_completed(fs, timeout=30))
        self.assertEqual(got, sorted(b"%d" % i for i in range(n)))

    def test_sync_loop_leaves_thread_alone(self):
        """A loop of submit, flush and result() in one thread (what
        futures.submit(f).result() does) does not wake the futures'
        thread for each task: the end of a caller's wait in libr3q wakes
        only callers waiting for their turn, and while the client is busy
        the thread looks by itself (every DEFER while a caller waits in
        libr3q, every GRACE otherwise), so a flush need not wake it.
        Counted: the notifications of the thread's condition over 200
        round trips (one or two a round trip before)."""
        self.assertEqual(self.c.submit("py-echo", b"warm").result(30),
                         b"warm")
        d = self.c._state.driver
        calls = []
        real = d.idle.notify_all

        def counting():
            calls.append(1)
            real()
        d.idle.notify_all = counting
        try:
            for i in range(200):
                f = self.c.submit("py-echo", b"%d" % i, _wake=False)
                self.c._flush()
                self.assertEqual(f.result(30), b"%d" % i)
        finally:
            del d.idle.notify_all
        self.assertLess(len(calls), 20)
        self.assert_thread_takes(10)

    def test_thread_sleeps_while_caller_waits(self):
        """While a caller waits in libr3q (result()), the futures' thread
        sleeps DEFER (an hour here) rather than looking every GRACE: 200
        round trips of submit and result() wake it a few times at most
        (every GRACE, about 80 times, before).  Whoever awaits an outcome
        another way rouses it (kick): a done callback, cf.wait() and
        cf.as_completed() still get theirs, within the hour."""
        def roundtrip():
            f = self.c.submit("py-echo", b"rt", _wake=False)
            self.c._flush()
            self.assertEqual(f.result(30), b"rt")
        roundtrip()
        with _Deferred(self.c, roundtrip) as dt:
            dt.settle()
            n = dt.sleeps
            for i in range(200):
                roundtrip()
            self.assertLess(dt.sleeps - n, 10)
            dt.settle()
            ev = threading.Event()
            f = self.c.submit("py-echo", b"cb", _wake=False)
            self.c._flush()
            f.add_done_callback(lambda f: ev.set())
            self.assertTrue(ev.wait(30 * SLOW))
            self.assertEqual(f.result(0), b"cb")
            dt.settle()
            f = self.c.submit("py-echo", b"wait", _wake=False)
            self.c._flush()
            done, _ = cf.wait([f], timeout=30 * SLOW)
            self.assertEqual(done, {f})
            dt.settle()
            fs = [self.c.submit("py-echo", b"%d" % i, _wake=False)
                  for i in range(5)]
            self.c._flush()
            got = sorted(f.result() for f in
                         cf.as_completed(fs, timeout=30 * SLOW))
            self.assertEqual(got, sorted(b"%d" % i for i in range(5)))

    def test_close_while_waiting(self):
        """A client closed while another thread waits in result() (in
        libr3q, on the futures it would free): the waiter gets
        r3q.Cancelled, nothing is freed under it, close() returns."""
        c = r3q.Client(name="test_close_waiting")
        f = c.submit_pickled("py-slow", 30)
        got = []

        def waiter():
            try:
                f.result(60)
            except BaseException as e:
                got.append(e)
        t = threading.Thread(target=waiter)
        t.start()
        time.sleep(0.3)
        c.close()
        t.join(30)
        self.assertFalse(t.is_alive())
        self.assertEqual(len(got), 1)
        self.assertIsInstance(got[0], r3q.Cancelled)

    def test_many_futures(self):
        fs = [self.c.submit("py-echo", b"%d" % i) for i in range(2000)]
        self.assertEqual([f.result(60) for f in fs],
                         [b"%d" % i for i in range(2000)])

    def test_executor(self):
        with self.c.executor("py-square", codec="pickle",
                             kinds={kinds.square: "py-square"}) as ex:
            self.assertIsInstance(ex, cf.Executor)
            self.assertEqual(list(ex.map(kinds.square, range(10))),
                             [i * i for i in range(10)])
            self.assertEqual(ex.submit(kinds.square, 7).result(30), 49)
            self.assertEqual(ex.submit("py-echo", b"raw!").result(30),
                             pickle.loads(pickle.dumps(b"raw!")))
        with self.assertRaises(RuntimeError):
            ex.submit(kinds.square, 1)
        ex = self.c.executor(kinds={len: "py-fail"}, codec="pickle")
        it = ex.map(len, [5])
        with self.assertRaises(r3q.TaskFailed):
            next(it)
        with self.assertRaises(TypeError):
            ex.submit(max, 1)                   # no kind for max

    def test_remote_exception(self):
        with self.assertRaises(r3q.TaskFailed) as cm:
            self.c.map_pickled("py-fail", [41])
        e = cm.exception
        self.assertIn("ValueError: bad input 41", e.text)
        self.assertIn("kinds.py", e.text)
        self.assertEqual(e.index, 0)
        out = self.c.map_pickled("py-square", [2, 3], return_exceptions=True)
        self.assertEqual(out, [4, 9])
        out = self.c.map_pickled("py-fail", [1], return_exceptions=True)
        self.assertIsInstance(out[0], r3q.TaskFailed)
        f = self.c.submit_pickled("py-fail", "x")
        self.assertIsInstance(f.exception(30), r3q.TaskFailed)
        self.assertIn("ValueError: bad input 'x'", str(f.exception()))
        # The job goes on after a failed task.
        self.assertEqual(self.c.map_pickled("py-square", [5]), [25])

    def test_payload_over_limit(self):
        big = b"x" * (100 * 1024)
        with self.assertRaises(r3q.PayloadTooLarge) as cm:
            self.c.map("py-echo", [b"small", big])
        self.assertEqual(cm.exception.index, 1)
        self.assertIsInstance(cm.exception, ValueError)
        f = self.c.submit("py-echo", big)
        self.assertIsInstance(f.exception(30), r3q.PayloadTooLarge)
        self.assertEqual(self.c.map("py-echo", [b"ok"]), [b"ok"])

    def test_unpicklable(self):
        with self.assertRaises((pickle.PicklingError, AttributeError,
                                TypeError)):
            self.c.map_pickled("py-square", [lambda: 1])
        with self.assertRaises((pickle.PicklingError, AttributeError,
                                TypeError)):
            self.c.submit_pickled("py-square", threading.Lock())
        with self.assertRaises(r3q.TaskFailed) as cm:
            self.c.map_pickled("py-unpicklable", [1])
        self.assertIn("cannot pickle the result", cm.exception.text)
        # A class from a module the workers do not have.
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "onlyhere.py"), "w") as f:
                f.write("class Local:\n    pass\n")
            sys.path.insert(0, d)
            try:
                import onlyhere
            finally:
                sys.path.remove(d)
        with self.assertRaises(r3q.TaskFailed) as cm:
            self.c.map_pickled("py-square", [onlyhere.Local()])
        self.assertIn("cannot unpickle the payload", cm.exception.text)
        with self.assertRaises(TypeError):
            self.c.map("py-echo", ["not bytes"])

    def test_module_that_does_not_import(self):
        log = os.environ["BROKEN_LOG"]
        for kind, why in (("py-missing", "ModuleNotFoundError: No module "
                           "named 'no_such_module'"),
                          ("py-broken", "RuntimeError: broken on purpose")):
            with self.assertRaises(r3q.TaskFailed) as cm:
                self.c.map(kind, [b"1"])
            self.assertIn("cannot load", cm.exception.text)
            self.assertIn(why, cm.exception.text)
            # Each worker withdrew the kind ('U') as its task failed
            # there, so these fail at once at the master, with why.
            out = self.c.map(kind, [b"%d" % i for i in range(30)],
                             return_exceptions=True)
            self.assertTrue(all(isinstance(o, r3q.TaskFailed) and
                                why in o.text and
                                "unavailable on every worker" in o.text
                                for o in out), out[0])
        # One process per worker CPU, not one per task: no restart loop.
        with open(log) as f:
            pids = f.read().split()
        self.assertLessEqual(len(pids), 3, pids)
        # The workers serve on.
        self.assertEqual(self.c.map("py-echo", [b"a"]), [b"a"])

    def test_closed(self):
        c = r3q.Client(name="closing")
        self.assertEqual(c.map("echo", [b"1"]), [b"1"])
        f = c.submit_pickled("py-slow", 30)
        time.sleep(0.2)
        c.close()
        self.assertTrue(c.closed)
        self.assertTrue(f.cancelled())
        with self.assertRaises(r3q.Cancelled) as cm:
            f.result(1)
        self.assertIn("closed", str(cm.exception))
        with self.assertRaises(r3q.ClientClosed) as cm:
            c.map("echo", [b"1"])
        self.assertIn("closed", str(cm.exception))
        with self.assertRaises(r3q.ClientClosed):
            c.submit("echo", b"1")
        c.close()                               # twice is fine
        with r3q.Client() as c2:
            self.assertEqual(c2.map("echo", [b"2"]), [b"2"])
        with self.assertRaises(r3q.ClientClosed):
            c2.map("echo", [b"2"])

    def test_connect_failure(self):
        with self.assertRaises(r3q.ConnectionLost) as cm:
            r3q.Client(control="/nonexistent/masterd.sock")
        self.assertIn("/nonexistent/masterd.sock", str(cm.exception))

    def test_map_timeout(self):
        t0 = time.monotonic()
        with self.assertRaises(r3q.Timeout):
            self.c.map_pickled("py-slow", [10] * 3, timeout=0.5)
        self.assertLess(time.monotonic() - t0, 3 * SLOW)
        self.assertEqual(self.c.map("py-echo", [b"after"]), [b"after"])

    def test_keyboard_interrupt(self):
        """SIGINT to a program in map: the batch is cancelled, the
        program has KeyboardInterrupt at once, and maps on."""
        child = textwrap.dedent("""
            import sys, time, r3q
            c = r3q.Client(name="interrupted")
            print("mapping", flush=True)
            t0 = time.monotonic()
            try:
                c.map_pickled("py-slow", [20] * 6)
                print("map returned")
            except KeyboardInterrupt:
                print("interrupted after %.2f s" % (time.monotonic() - t0),
                      flush=True)
            t0 = time.monotonic()
            out = c.map_pickled("py-slow", [0.1] * 3)
            print("then %r in %.2f s" % (out, time.monotonic() - t0),
                  flush=True)
            c.close()
        """)
        _interrupted(self, child, r"\[0\.1, 0\.1, 0\.1\]")


class Locked:
    """An object pickle refuses (it holds a lock): its bound method
    cannot be sent."""

    def __init__(self):
        self.lock = threading.Lock()

    def f(self, x):
        return x


class ShipTest(unittest.TestCase):
    """Functions shipped by reference to the generic kind "python"
    ("python3 -m r3q.serve --any"): Executor.map honours its function,
    r3q.futures (SCOOP's API), the allowlist results go through, and bad
    input refused with its name."""

    @classmethod
    def setUpClass(cls):
        cls.c = r3q.Client(name="test_ship")
        futures.use(cls.c)

    @classmethod
    def tearDownClass(cls):
        cls.c.close()

    def setUp(self):
        faulthandler.dump_traceback_later(120, exit=True)

    def tearDown(self):
        faulthandler.cancel_dump_traceback_later()

    def test_executor_map_honours_fn(self):
        """The function mapped is the one that runs: never the results
        of another (toolbox.map(toolbox.clone, pop) must clone)."""
        ex = self.c.executor("python")
        xs = [[i, i + 1] for i in range(20)]
        self.assertEqual(list(ex.map(kinds.copy_list, xs)),
                         [x + ["copied"] for x in xs])
        self.assertEqual(list(ex.map(kinds.square, range(10))),
                         [i * i for i in range(10)])
        self.assertEqual(list(ex.map(abs, [-3, 4, -5])), [3, 4, 5])
        # Any number of iterables, zip's semantics (the shortest).
        self.assertEqual(list(ex.map(kinds.power, [2, 3, 4], [3, 2])),
                         [8, 9])
        self.assertEqual(list(ex.map(pow, [2, 3], [5, 2], chunksize=1)),
                         [32, 9])
        self.assertEqual(ex.submit(kinds.power, 3, y=3, add=1).result(30),
                         28)
        self.assertEqual(list(self.c.executor().map(kinds.square, [7])),
                         [49])
        # A named kind runs its own function: another is refused, loudly.
        named = self.c.executor("py-square", codec="pickle")
        with self.assertRaises(TypeError) as cm:
            named.map(kinds.copy_list, xs)
        self.assertIn("copy_list", str(cm.exception))
        self.assertIn("exec python = persistent", str(cm.exception))
        with self.assertRaises(TypeError):
            named.submit(abs, 1)

    def test_futures_api(self):
        self.assertEqual(list(futures.map(kinds.square, range(100))),
                         [i * i for i in range(100)])
        self.assertEqual(list(futures.map(kinds.power, range(5), range(5),
                                          add=1)),
                         [i ** i + 1 for i in range(5)])
        self.assertEqual(sorted(futures.map_as_completed(kinds.square,
                                                         range(30))),
                         [i * i for i in range(30)])
        fs = [futures.submit(kinds.power, i, 3) for i in range(10)]
        done, not_done = futures.wait(fs, timeout=60)
        self.assertEqual((len(done), len(not_done)), (10, 0))
        self.assertEqual([f.result() for f in fs],
                         [i ** 3 for i in range(10)])
        got = sorted(f.result() for f in futures.as_completed(fs, 60))
        self.assertEqual(got, sorted(i ** 3 for i in range(10)))
        self.assertEqual(list(futures.map(kinds.square, [])), [])

    def test_scoop_reductions(self):
        """SCOOP's mapReduce reduces in SCOOP's order (the left half, the
        smaller when odd, and the right, each reduced so): a reduction
        that is not associative gives SCOOP's value, not the left fold's;
        mapScan is the running reduction.  wait and as_completed take
        SCOOP's negative timeout as for ever."""
        def scoop(op, data):
            # SCOOP's rule (scoop/futures.py, _recursiveReduce), written
            # on the values: split at half = len // 2, a side of one value
            # is a leaf.
            half = len(data) // 2
            sides = [data[:half], data[half:]]
            return op(*[s[0] if len(s) <= 1 else scoop(op, s)
                        for s in sides])
        for n in range(2, 40):
            vals = [float(i) / 7 for i in range(1, n + 1)]
            self.assertEqual(futures._tree(operator.sub, vals, 0, n),
                             scoop(operator.sub, vals), n)
        xs = list(range(1, 12))
        got = futures.mapReduce(kinds.square, operator.sub, xs)
        self.assertEqual(got, scoop(operator.sub, [x * x for x in xs]))
        self.assertNotEqual(got, functools.reduce(operator.sub,
                                                  [x * x for x in xs]))
        self.assertEqual(futures.mapReduce(kinds.power, operator.add,
                                           range(50), itertools.repeat(3)),
                         sum(i ** 3 for i in range(50)))
        self.assertEqual(futures.mapReduce(kinds.square, operator.add, [7]),
                         49)
        with self.assertRaises(TypeError):
            futures.mapReduce(kinds.square, operator.add, [])
        with self.assertRaises(TypeError):
            futures.mapReduce(kinds.square, None, [1, 2])
        self.assertEqual(futures.mapScan(kinds.square, operator.add,
                                         range(20)),
                         list(itertools.accumulate(i * i
                                                   for i in range(20))))
        self.assertEqual(futures.mapScan(kinds.square, operator.add, []), [])
        fs = [futures.submit(kinds.square, i) for i in range(4)]
        done, left = futures.wait(fs, -1)
        self.assertEqual((len(done), len(left)), (4, 0))
        self.assertEqual(sorted(f.result() for f in
                                futures.as_completed(fs, -1)), [0, 1, 4, 9])

    def test_shared(self):
        """r3q.shared, SCOOP's shared constants: set once in the client,
        read on the workers by the tasks submitted after; a constant set
        after the workers have the first table reaches them (they ask for
        the new one: the tasks are sent again with it)."""
        table = {"a": 1, "z": 26, "nested": [1.5, (2, "x")]}
        shared.setConst(t_table=table, t_fn=kinds.square)
        self.assertEqual(shared.getConst("t_table"), table)
        self.assertIsNone(shared.getConst("t_nothing"))
        self.assertEqual(list(futures.map(kinds.const_get,
                                          ["t_table"] * 6)), [table] * 6)
        self.assertEqual(list(futures.map(kinds.const_call, ["t_fn"] * 3,
                                          range(3))), [0, 1, 4])
        with self.assertRaises(TypeError) as cm:
            shared.setConst(t_table=2)
        self.assertIn("This constant already exists: t_table",
                      str(cm.exception))
        with self.assertRaises(TypeError) as cm:
            shared.setConst(t_lambda=lambda x: x)
        self.assertIn("lambda", str(cm.exception))
        with self.assertRaises(TypeError) as cm:
            shared.setConst(t_lock=threading.Lock())
        self.assertIn("t_lock", str(cm.exception))
        self.assertIsNone(shared.getConst("t_lambda"))
        # A table the workers have never seen, which the client takes them
        # to have (as once a worker has answered a task of it): the tasks
        # carry only its hash, and each worker process asks for it once.
        from r3q import _ship
        # (Unique: the machine keeps the tables its workers were sent.)
        later = "unique %r %f" % (os.urandom(8), time.time())
        resent = futures.stats["resent"]
        shared.setConst(t_later=later)
        _ship.shared.answered.add(_ship.shared.hash)
        self.assertEqual(list(futures.map(kinds.const_get,
                                          ["t_later", "t_table", "t_none"] * 3,
                                          chunksize=1)),
                         [later, table, None] * 3)
        self.assertGreaterEqual(futures.stats["resent"] - resent, 1)
        self.assertLessEqual(futures.stats["resent"] - resent, 9)
        self.assertEqual(futures.submit(kinds.const_get, "t_later").result(),
                         later)

    def test_cache_kept(self):
        """What a machine keeps of the programs (files, constants, writes
        cut short) goes once unused for R3Q_ANY_KEEP seconds (7 days);
        what this process uses stays, and is marked used."""
        from r3q import _ship
        saved = (tempfile.tempdir, _ship._active.root, _ship._consts.hash)
        day = 86400
        with tempfile.TemporaryDirectory() as d:
            tempfile.tempdir = d
            try:
                base = _ship._cache_base()
                now = time.time()

                def make(name, age, isdir=True):
                    p = os.path.join(base, name)
                    if isdir:
                        os.makedirs(os.path.join(p, "sub"))
                        with open(os.path.join(p, "sub", "f"), "w") as f:
                            f.write("x")
                    else:
                        with open(p, "w") as f:
                            f.write("x")
                    os.utime(p, (now - age, now - age))
                    return p
                make("aa" * 32, 8 * day)
                make("bb" * 32, 1 * day)
                make("shared-" + "cc" * 32, 8 * day, False)
                make(".new-x1y2", 9 * day)
                make("shared-" + "cc" * 32 + ".123", 9 * day, False)
                _ship._active.root = make("dd" * 32, 30 * day)
                _ship._consts.hash = bytes.fromhex("ee" * 32)
                make("shared-" + "ee" * 32, 10 * day, False)
                _ship._housekeep(now)
                self.assertEqual(sorted(os.listdir(base)),
                                 ["bb" * 32, "dd" * 32,
                                  "shared-" + "ee" * 32])
                for n in ("dd" * 32, "shared-" + "ee" * 32):
                    self.assertGreater(
                        os.stat(os.path.join(base, n)).st_mtime,
                        now - 3600)
            finally:
                (tempfile.tempdir, _ship._active.root,
                 _ship._consts.hash) = saved

    def test_lambda_by_name(self):
        """A lambda bound to a name at the top level of its module goes
        by that name; one bound nowhere is refused, saying so."""
        self.assertEqual(list(futures.map(kinds.triple, range(5))),
                         [0, 3, 6, 9, 12])
        self.assertEqual(futures.submit(kinds.triple, 7).result(), 21)
        with self.assertRaises(TypeError) as cm:
            futures.submit(lambda x: x, 1)
        self.assertIn("cannot run the lambda", str(cm.exception))
        self.assertIn("has none", str(cm.exception))

    def test_futures_cancel(self):
        """r3q.futures' futures cancel as concurrent.futures' do: wait()
        and as_completed() hear of it; and a map left early (a failed
        call, a break) cancels the calls still out without raising an
        error of its own over the program's."""
        fs = [futures.submit(kinds.slow, 30) for _ in range(4)]
        time.sleep(0.3)
        t0 = time.monotonic()
        self.assertEqual([f.cancel() for f in fs], [True] * 4)
        self.assertTrue(all(f.cancelled() and f.done() for f in fs))
        self.assertEqual([f.cancel() for f in fs], [True] * 4)
        with self.assertRaises(cf.CancelledError):
            fs[0].result()
        done, not_done = futures.wait(fs, timeout=0)
        self.assertEqual((len(done), len(not_done)), (4, 0))
        self.assertEqual(len(list(futures.as_completed(fs, timeout=0))), 4)
        self.assertLess(time.monotonic() - t0, 1 * SLOW)
        g = futures.submit(kinds.square, 3)
        self.assertEqual(g.result(30), 9)
        self.assertFalse(g.cancel())            # done already
        # The first call fails while the others are out: its exception.
        with self.assertRaises(kinds.Boom):
            list(futures.map(kinds.boom_or_slow, [3, 30, 30], chunksize=1))
        with self.assertRaises(kinds.Boom):
            for _ in futures.map_as_completed(kinds.boom_or_slow,
                                              [30, 3, 30], chunksize=1):
                pass
        for x in futures.map(kinds.boom_or_slow, [0.01, 30, 30],
                             chunksize=1):
            self.assertEqual(x, 0.01)
            break
        # The cancelled calls left the workers: short ones run at once.
        t0 = time.monotonic()
        self.assertEqual(list(futures.map(kinds.slow, [0.1] * 3,
                                          chunksize=1)), [0.1] * 3)
        self.assertLess(time.monotonic() - t0, 5 * SLOW)

    def test_chunks(self):
        """600 small calls go as chunks, and every answer is exact."""
        xs = list(range(600))
        self.assertEqual(list(futures.map(kinds.square, xs)),
                         [x * x for x in xs])
        self.assertGreater(futures.last_chunksize, 1)
        self.assertEqual(list(futures.map(kinds.square, xs, chunksize=7)),
                         [x * x for x in xs])
        self.assertEqual(futures.last_chunksize, 7)
        # A failure inside a chunk: the calls before it, then it.
        it = futures.map(kinds.boom, range(10), chunksize=10)
        self.assertEqual([next(it) for _ in range(3)], [0, 1, 2])
        with self.assertRaises(kinds.Boom):
            next(it)

    def test_futures_keyboard_interrupt(self):
        """SIGINT to a program waiting in futures.map for long tasks:
        KeyboardInterrupt at once (the wait is in slices), the tasks
        cancelled, and the program maps on."""
        child = textwrap.dedent("""
            import time
            import kinds
            from r3q import futures
            print("mapping", flush=True)
            t0 = time.monotonic()
            try:
                list(futures.map(kinds.slow, [30] * 2, chunksize=1))
                print("map returned")
            except KeyboardInterrupt:
                print("interrupted after %.2f s" % (time.monotonic() - t0),
                      flush=True)
            t0 = time.monotonic()
            out = list(futures.map(kinds.slow, [0.1] * 2, chunksize=1))
            print("then %r in %.2f s" % (out, time.monotonic() - t0),
                  flush=True)
        """)
        _interrupted(self, child, r"\[0\.1, 0\.1\]")

    def test_chunks_over_limits(self):
        """A chunk whose payload or output is over a limit (masterd's
        max_payload is 64K here) goes again as two halves, as often as
        it takes: every answer comes, in order, and the function's later
        chunks are no larger than the halves that fitted.  One call over
        a limit fails, naming it."""
        split = futures.stats["split"]
        xs = list(range(40000))             # about 300 KB of arguments
        self.assertEqual(list(futures.map(kinds.square, xs, chunksize=40000)),
                         [x * x for x in xs])
        self.assertGreater(futures.stats["split"], split)
        self.assertEqual(futures.last_chunksize, 40000)    # as asked
        split = futures.stats["split"]
        list(futures.map(kinds.square, xs, chunksize=40000))
        self.assertLess(futures.last_chunksize, 40000)     # capped
        self.assertEqual(futures.stats["split"], split)
        # Outputs: 12 of 20 KB are over 64K in one chunk.
        split = futures.stats["split"]
        self.assertEqual([len(b) for b in futures.map(bytes, [20000] * 12,
                                                      chunksize=12)],
                         [20000] * 12)
        self.assertGreater(futures.stats["split"], split)
        self.assertEqual(sorted(futures.map_as_completed(
            kinds.square, xs[:20000], chunksize=20000)),
            sorted(x * x for x in xs[:20000]))
        # A failed call deep in a split chunk: the calls before it, then
        # its exception.
        got = []
        with self.assertRaises(kinds.Boom):
            for v in futures.map(kinds.boom, [0] * 30000 + [3] + [0] * 9999,
                                 chunksize=40000):
                got.append(v)
        self.assertEqual(len(got), 30000)
        # One call over: named, with what to do.
        with self.assertRaises(r3q.TaskFailed) as cm:
            futures.submit(bytes, 100000).result(30)
        self.assertIn("call 0 of builtins.bytes: ", str(cm.exception))
        self.assertIn("output of", str(cm.exception))
        self.assertIn("is over max_payload", str(cm.exception))
        with self.assertRaises(r3q.PayloadTooLarge) as cm:
            futures.submit(len, b"q" * 100000).result(30)
        self.assertIn("its arguments pickle to", str(cm.exception))
        self.assertIn("raise max_payload", str(cm.exception))

    def test_sizer(self):
        """The chunk size from a call's time, a task's cost and the slots:
        k chunks a slot (ceil(n / (k S))) once a slot's share is longer
        than a task's cost, fewer chunks than slots below it."""
        sz = futures._Sizer()
        sz.overhead = 3e-4
        os.environ["R3Q_SLOTS"] = "4"
        try:
            for per_call, want in ((1e-6, 200), (1e-4, 22), (5e-3, 3),
                                   (1e-2, 3)):
                sz.per_call = per_call
                self.assertEqual(sz.chunksize(600), want, per_call)
            sz.per_call = 1e-4          # 28 chunks of 600: 7 a slot
            self.assertEqual(-(-600 // sz.chunksize(600)) % 4, 0)
            os.environ["R3Q_SLOTS"] = "64"
            sz.per_call = 1e-3          # 0.6 s on 64 slots: 6 chunks each
            self.assertEqual(sz.chunksize(600), 2)
            sz.per_call = 1e-6          # 0.6 ms: fewer chunks than slots
            self.assertLess(-(-600 // sz.chunksize(600)), 64)
            sz.per_call = None          # nothing measured: 4 a slot
            self.assertEqual(sz.chunksize(600), 3)
        finally:
            del os.environ["R3Q_SLOTS"]

    def test_sizer_cost(self):
        """A task's cost o: the least wait of a map's chunks beyond their
        work, not from a chunk that paid a start (its worker process's
        first chunk, the program's files sent), and moved at most to
        1.5 o by a map: a stall does not make the next maps one chunk."""
        sz = futures._Sizer()
        sz.measure, sz.overhead = True, 3e-4
        self.assertTrue(sz.note("h:1", 1e-3, 10))      # a new process
        self.assertFalse(sz.note("h:1", 1e-3, 10))
        self.assertTrue(sz.note("h:2", 1e-3, 10))

        class Done:
            def done(self):
                return True

        class Chunk:
            fut = Done()

            def __init__(self, lag, cold=False, files=False, sends=1):
                self.lag, self.cold, self.files, self.sends = \
                    lag, cold, files, sends

            def values(self, timeout):
                return [], None
        saved = futures._sizer
        futures._sizer = sz
        try:
            # Only cold chunks: o stays.
            list(futures._ordered([Chunk(0.03, cold=True),
                                   Chunk(0.02, files=True),
                                   Chunk(0.02, sends=2)], None))
            self.assertEqual(sz.overhead, 3e-4)
            # The least of the others; a stall of 30 ms moves o to 1.5 o.
            list(futures._ordered([Chunk(1e-5, cold=True), Chunk(0.03),
                                   Chunk(0.05)], None))
            self.assertAlmostEqual(sz.overhead, 4.5e-4)
            # Down at once, by half the way.
            list(futures._ordered([Chunk(1.5e-4), Chunk(0.01)], None))
            self.assertAlmostEqual(sz.overhead, 3e-4)
        finally:
            futures._sizer = saved

    def test_pool(self):
        from r3q import multiprocessing as rmp
        with rmp.Pool(4) as pool:
            self.assertEqual(pool.map(kinds.square, range(20)),
                             [i * i for i in range(20)])
            self.assertEqual(list(pool.imap(kinds.square, range(20), 3)),
                             [i * i for i in range(20)])
            self.assertEqual(sorted(pool.imap_unordered(kinds.square,
                                                        range(20))),
                             [i * i for i in range(20)])
            self.assertEqual(pool.starmap(kinds.power, [(2, 2), (3, 3)]),
                             [4, 27])
            self.assertEqual(pool.apply_async(kinds.power, (2, 10)).get(30),
                             1024)
            self.assertEqual(pool.starmap(kinds.power, []), [])
        # The asynchronous calls: callbacks, and join() waits for them.
        got = []
        pool = rmp.Pool()
        with self.assertRaises(ValueError):
            pool.join()                         # before close()
        for x in (0.2, 0.3):
            pool.apply_async(kinds.slow, (x,), callback=got.append)
        m = pool.map_async(kinds.square, range(30), callback=got.append)
        bad = pool.map_async(kinds.boom, range(6), chunksize=1,
                             error_callback=lambda e: got.append(repr(e)))
        st = pool.starmap_async(kinds.power, [(2, 3), (3, 2)],
                                callback=got.append)
        pool.close()
        with self.assertRaises(ValueError):
            pool.apply_async(kinds.square, (1,))    # closed
        pool.join()
        self.assertEqual(sorted(map(repr, got)), sorted(map(repr, [
            0.2, 0.3, [i * i for i in range(30)],
            "Boom('no threes: 3')", [8, 9]])))
        self.assertTrue(m.ready() and m.successful())
        self.assertEqual(m.get(0), [i * i for i in range(30)])
        self.assertEqual(st.get(0), [8, 9])
        self.assertFalse(bad.successful())
        with self.assertRaises(kinds.Boom):
            bad.get(0)
        # multiprocessing's TimeoutError; terminate() cancels what is out.
        with rmp.Pool() as pool:
            slow = pool.map_async(kinds.slow, [0.1, 30])
            with self.assertRaises(rmp.TimeoutError):
                slow.get(0.05)
            self.assertIs(rmp.TimeoutError, multiprocessing.TimeoutError)
            self.assertFalse(slow.ready())
            with self.assertRaises(ValueError):
                slow.successful()               # not ready
        pool.join()
        self.assertTrue(slow.ready())
        self.assertFalse(slow.successful())
        with self.assertRaises(cf.CancelledError):
            slow.get(0)
        ex = self.c.executor()
        self.assertEqual(sorted(ex.imap_unordered(kinds.square, range(9))),
                         [i * i for i in range(9)])

    def _gens(self, name):
        """Once the job called name has ended, the reports masterd kept of
        its batches (r3qctl result): (gen, replicas) each."""
        ctl = os.environ["R3QCTL"]
        deadline = time.monotonic() + 30 * SLOW
        while True:
            jobs = subprocess.run([ctl, "jobs"], capture_output=True,
                                  text=True, check=True).stdout
            rows = [ln.split() for ln in jobs.splitlines()[1:]
                    if re.search(r" %s \(" % re.escape(name), ln)]
            self.assertEqual(len(rows), 1, jobs)
            if rows[0][1] != "running":
                break
            self.assertLess(time.monotonic(), deadline, jobs)
            time.sleep(0.05)
        out = subprocess.run([ctl, "result", rows[0][0]],
                             capture_output=True, text=True,
                             check=True).stdout
        return [(int(r[0]), int(r[6])) for r in
                (ln.split() for ln in out.splitlines()
                 if re.match(r"\s*\d+ ", ln))]

    def _workers_idle(self):
        """Wait until no worker holds or runs a task (what earlier tests
        cancelled may still be ending)."""
        deadline = time.monotonic() + 30 * SLOW
        while True:
            out = subprocess.run([os.environ["R3QCTL"], "workers"],
                                 capture_output=True, text=True,
                                 check=True).stdout
            rows = [r for r in (ln.split() for ln in out.splitlines()[1:])
                    if len(r) > 7 and r[6].isdigit() and r[7].isdigit()]
            if len(rows) == 3 and all(r[6] == r[7] == "0" for r in rows):
                return
            self.assertLess(time.monotonic(), deadline, out)
            time.sleep(0.05)

    def test_lone_tasks_leave_batch_open(self):
        """A task awaited on its own (futures.submit, Executor.submit)
        goes into the job's open batch, left open: masterd ends no batch
        a task.  With LINGER made an hour, 30 round trips make one batch,
        closed when the futures' thread falls asleep (HOT made an hour
        until then; 31 batches before, one a task)."""
        name = "test_linger_open"
        c = r3q.Client(name=name)
        try:
            ex = c.executor()
            self.assertEqual(ex.submit(kinds.square, 2).result(30), 4)
            d = c._state.driver
            d.LINGER = 3600.0
            d.HOT = 3600.0
            for i in range(30):
                self.assertEqual(ex.submit(kinds.square, i).result(30),
                                 i * i)
            self.assertGreaterEqual(d.loose, 30)
            del d.HOT
            deadline = time.monotonic() + 30 * SLOW
            while d.loose and time.monotonic() < deadline:
                time.sleep(0.01)
            self.assertEqual(d.loose, 0, "the thread never closed it")
        finally:
            c.close()
        gens = self._gens(name)
        self.assertGreaterEqual(len(gens), 1)
        self.assertLessEqual(len(gens), 2, gens)

    def test_lone_slow_task_replicated(self):
        """A lone task that takes longer than LINGER has its batch closed
        by whoever waits, so that idle workers copy it, as RR and R3Q do
        with a batch's tail: on three idle workers a lone 1.5 s task is
        replicated.  With LINGER made an hour it is not (its batch closes
        only after its outcome)."""
        for name, linger in (("test_linger_slow", None),
                             ("test_linger_hour", 3600.0)):
            self._workers_idle()
            c = r3q.Client(name=name)
            try:
                ex = c.executor()
                if linger is not None:
                    self.assertEqual(ex.submit(kinds.square, 2).result(30),
                                     4)
                    c._state.driver.LINGER = linger
                self.assertEqual(ex.submit(kinds.slow, 1.5).result(60),
                                 1.5)
            finally:
                c.close()
            gens = self._gens(name)
            copies = sum(r for _, r in gens)
            if linger is None:
                self.assertGreater(copies, 0, gens)
            else:
                self.assertEqual(copies, 0, gens)

    def test_futures_rouse_deferred_thread(self):
        """r3q.futures' ways to await outcomes other than result() rouse
        the futures' thread while it sleeps DEFER (see ClientTest's
        test_thread_sleeps_while_caller_waits): a done callback,
        futures.wait() and cf.wait(), futures.as_completed(),
        map_as_completed(), and multiprocessing.Pool's asynchronous calls
        and their callbacks."""
        from r3q import multiprocessing as rmp

        def roundtrip():
            self.assertEqual(futures.submit(kinds.square, 3).result(30), 9)
        roundtrip()
        t = 30 * SLOW
        with _Deferred(self.c, roundtrip) as dt:
            dt.settle()
            ev = threading.Event()
            futures.submit(kinds.square, 4).add_done_callback(
                lambda f: ev.set())
            self.assertTrue(ev.wait(t))
            dt.settle()
            f = futures.submit(kinds.square, 5)
            self.assertEqual(futures.wait([f], t)[0], {f})
            dt.settle()
            f = futures.submit(kinds.square, 6)
            self.assertEqual(cf.wait([f], t)[0], {f})
            dt.settle()
            fs = [futures.submit(kinds.square, i) for i in range(4)]
            self.assertEqual(sorted(f.result() for f in
                                    futures.as_completed(fs, t)),
                             [0, 1, 4, 9])
            dt.settle()
            self.assertEqual(sorted(futures.map_as_completed(
                kinds.square, range(6), timeout=t)), [0, 1, 4, 9, 16, 25])
            dt.settle()
            pool = rmp.Pool()
            r = pool.map_async(kinds.square, range(5))
            r.wait(t)
            self.assertTrue(r.ready())
            dt.settle()
            got = []
            pool.apply_async(kinds.square, (7,), callback=got.append)
            pool.close()
            pool.join()
            self.assertEqual(got, [49])

    def test_scipy_differential_evolution(self):
        try:
            from scipy.optimize import differential_evolution
        except ImportError:
            self.skipTest("no scipy (python3-scipy)")
        bounds = [(0, 2)] * 3
        here = differential_evolution(kinds.rosen, bounds, seed=1,
                                      maxiter=30, updating="deferred",
                                      polish=False)
        there = differential_evolution(kinds.rosen, bounds, seed=1,
                                       maxiter=30, updating="deferred",
                                       polish=False,
                                       workers=self.c.map_any)
        self.assertEqual(list(here.x), list(there.x))
        self.assertEqual(here.fun, there.fun)

    def test_remote_exception(self):
        """An exception on the worker is raised here, its type kept, with
        the worker's traceback as its cause."""
        with self.assertRaises(kinds.Boom) as cm:
            list(futures.map(kinds.boom, [1, 2, 3, 4]))
        self.assertIn("no threes: 3", str(cm.exception))
        cause = cm.exception.__cause__
        self.assertIsInstance(cause, futures.RemoteTraceback)
        self.assertIn("kinds.py", str(cause))
        self.assertIn("in boom", str(cause))
        f = futures.submit(kinds.power, "x", 2)
        self.assertIsInstance(f.exception(30), TypeError)
        self.assertIn("kinds.power", str(f.exception().__cause__))
        # A call that ends its worker's process fails its chunk, named.
        with self.assertRaises(r3q.TaskFailed) as cm:
            list(futures.map(kinds.exits, range(4), chunksize=2))
        self.assertIn("calls 2-3 of kinds.exits", str(cm.exception))
        self.assertIn("persistent process exited (status 3)",
                      str(cm.exception))
        self.assertEqual(list(futures.map(kinds.square, [4])), [16])

    def test_refused_at_submit(self):
        """What the workers cannot find by reference is refused here, at
        once, naming the function and what to do."""
        def closure(x):
            return x
        def gen(x):
            yield x
        lock = threading.Lock()
        for fn, words in ((lambda x: x, ("lambda", "def")),
                          (closure, ("closure", "test_refused_at_submit."
                                     "<locals>.closure")),
                          (gen, ("generator", "gen")),
                          (Locked().f, ("cannot send", "Locked.f"))):
            for call in (lambda: futures.map(fn, [1]),
                         lambda: futures.submit(fn, 1),
                         lambda: self.c.executor().map(fn, [1])):
                with self.assertRaises(TypeError) as cm:
                    call()
                for w in words:
                    self.assertIn(w, str(cm.exception))
        with self.assertRaises(TypeError) as cm:
            futures.map(kinds.square, [lock])
        self.assertIn("kinds.square", str(cm.exception))

    def test_worker_without_module(self):
        """A function from a module only the client has: the task fails
        naming the module and what to do; the kind serves on."""
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "clientonly.py"), "w") as f:
                f.write("def f(x):\n    return x\n")
            sys.path.insert(0, d)
            try:
                import clientonly
            finally:
                sys.path.remove(d)
        with self.assertRaises(r3q.TaskFailed) as cm:
            list(futures.map(clientonly.f, [1]))
        self.assertIn("No module named 'clientonly'", cm.exception.text)
        self.assertIn("install", cm.exception.text)
        self.assertEqual(list(futures.map(kinds.square, [3])), [9])

    def test_hostile_result(self):
        """A worker-side function returning a pickle that calls os.system:
        refused in the client, the command never run."""
        with tempfile.TemporaryDirectory() as d:
            marker = os.path.join(d, "pwned")
            with self.assertRaises(r3q.UnsafeResult) as cm:
                list(futures.map(kinds.hostile, [marker]))
            self.assertIn("system", cm.exception.text)
            f = futures.submit(kinds.hostile, marker)
            self.assertIsInstance(f.exception(30), r3q.UnsafeResult)
            with self.assertRaises(r3q.UnsafeResult):
                self.c.map_any(kinds.hostile, [marker])
            time.sleep(0.2)
            self.assertFalse(os.path.exists(marker))
        # Classes reached through a module the program imported are not
        # its own: subprocess.Popen is no more allowed as test_r3q's.
        from r3q import _ship
        for mod, name in (("test_r3q", "subprocess.Popen"),
                          ("test_r3q", "os.system"),
                          ("kinds", "os.system"), ("builtins", "eval"),
                          ("builtins", "getattr"), ("posix", "system"),
                          ("test_r3q", "Locked.f")):
            with self.assertRaises(_ship.UnsafeResult, msg=name):
                _ship.allowed(mod, name, ["test_r3q", "kinds"])
        self.assertIs(_ship.allowed("test_r3q", "Locked", ["test_r3q"]),
                      Locked)
        # What a program's results are made of passes.
        self.assertEqual(list(futures.map(kinds.copy_list, [[1.5, "a"]])),
                         [[1.5, "a", "copied"]])

    def test_hostile_pickled(self):
        """A named kind whose worker returns a pickle that calls os.system
        (py-hostile: r3q.serve --pickle kinds:hostile): every pickled
        path of a default client refuses it with r3q.UnsafeResult naming
        it, the command never run; only the documented opt-in
        (r3q.trust_results(), R3Q_TRUST_RESULTS=1) unpickles it."""
        from r3q.multiprocessing import Pool
        with tempfile.TemporaryDirectory() as d:
            marker = os.path.join(d, "pwned")
            ex = self.c.executor(codec="pickle",
                                 kinds={kinds.hostile: "py-hostile"})
            calls = (
                ("map_pickled", lambda: self.c.map_pickled(
                    "py-hostile", [marker])),
                ("codec='pickle'", lambda: self.c.map(
                    "py-hostile", [marker], codec="pickle")),
                ("codec=pickle", lambda: self.c.map(
                    "py-hostile", [marker], codec=pickle)),
                ("submit_pickled", lambda: self.c.submit_pickled(
                    "py-hostile", marker).result(30)),
                ("Executor.map", lambda: list(ex.map(kinds.hostile,
                                                     [marker]))),
                ("Executor.submit", lambda: ex.submit(
                    kinds.hostile, marker).result(30)),
                ("Pool.map", lambda: Pool(2).map(kinds.hostile, [marker])),
            )
            for what, call in calls:
                with self.assertRaises(r3q.UnsafeResult, msg=what) as cm:
                    call()
                # os.system is posix.system to pickle.
                self.assertRegex(str(cm.exception), r"\b(os|posix)\.system\b",
                                 what)
                self.assertIn("trust_results", str(cm.exception), what)
            out = self.c.map_pickled("py-hostile", [marker],
                                     return_exceptions=True)
            self.assertIsInstance(out[0], r3q.UnsafeResult)
            self.assertEqual(out[0].index, 0)
            time.sleep(0.2)
            self.assertFalse(os.path.exists(marker))
            # The opt-in, in programs of their own: the command runs.
            prog = textwrap.dedent("""
                import os, sys, r3q, kinds
                from r3q import futures
                marker, how = sys.argv[1], sys.argv[2]
                if how == "call":
                    r3q.trust_results()
                with r3q.Client() as c:
                    if how == "futures":
                        r3q.trust_results()
                        list(futures.map(kinds.hostile, [marker + "-f"]))
                    else:
                        c.map_pickled("py-hostile", [marker])
                print(os.path.exists(marker) or
                      os.path.exists(marker + "-f"))
            """)
            for how, env in (("call", {}), ("env", {"R3Q_TRUST_RESULTS":
                                                    "1"}),
                             ("futures", {})):
                for m in (marker, marker + "-f"):
                    if os.path.exists(m):
                        os.unlink(m)
                p = subprocess.run([sys.executable, "-c", prog, marker, how],
                                   capture_output=True, text=True,
                                   env=dict(os.environ, **env), timeout=120)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(p.stdout.strip(), "True", how)

    def test_files_skip_special(self):
        """A script's directory that holds a socket and a FIFO (a daemon's
        control socket, a named pipe) ships its regular files only:
        reading the socket failed with ENXIO, and opening the FIFO would
        have waited for a writer for ever."""
        import socket
        from r3q import _ship
        with tempfile.TemporaryDirectory() as d:
            script = os.path.join(d, "prog.py")
            with open(script, "w") as f:
                f.write("x = 1\n")
            with open(os.path.join(d, "data.txt"), "w") as f:
                f.write("data")
            os.mkfifo(os.path.join(d, "fifo"))
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.bind(os.path.join(d, "ctl.sock"))
                ctx = _ship.Context(script, None)
            finally:
                s.close()
            files = pickle.loads(__import__("zlib").decompress(ctx.blob))
            self.assertEqual(sorted(files["files"]), ["data.txt", "prog.py"])

    def test_files_once(self):
        """The program's files travel until a worker has them: a map whose
        tasks carry only their hash (as after the first answer) is sent
        again, with the files, by each worker that lacks them, and reads
        them; later tasks carry files only when a worker asks."""
        from r3q import _ship
        old = futures._ctx
        here = os.getcwd()
        with tempfile.TemporaryDirectory() as d:
            text = "unique %r %f\n" % (os.urandom(8), time.time())
            with open(os.path.join(d, "data.txt"), "w") as f:
                f.write(text)
            os.chdir(d)
            try:
                ctx = _ship.Context(None, ["data.txt"])
            finally:
                os.chdir(here)
            self.assertIsNone(_ship._cached(ctx.hash))
            ctx.answered = True         # as if a worker had it
            futures._ctx = ctx
            try:
                before = dict(futures.stats)
                out = list(futures.map(kinds.cat, ["data.txt"] * 12,
                                       chunksize=1))
                self.assertEqual(out, [text] * 12)
                resent = futures.stats["resent"] - before["resent"]
                self.assertGreaterEqual(resent, 1)
                self.assertLessEqual(resent, 12)
                before = dict(futures.stats)
                out = list(futures.map(kinds.cat, ["data.txt"] * 12,
                                       chunksize=1))
                self.assertEqual(out, [text] * 12)
                self.assertEqual(futures.stats["tasks"] - before["tasks"],
                                 12)
                # Only on a worker's request (a slot that had no task of
                # the first map, if its files are kept apart), at most
                # once a slot.
                resent = futures.stats["resent"] - before["resent"]
                self.assertEqual(futures.stats["with_files"] -
                                 before["with_files"], resent)
                self.assertLessEqual(resent, 3)
            finally:
                futures._ctx = old
        # A context never answered goes with its files, and none is sent
        # again.
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "data.txt"), "w") as f:
                f.write("x")
            os.chdir(d)
            try:
                ctx = _ship.Context(None, ["data.txt"])
            finally:
                os.chdir(here)
            futures._ctx = ctx
            try:
                before = dict(futures.stats)
                self.assertEqual(list(futures.map(kinds.cat, ["data.txt"] * 4,
                                                  chunksize=1)), ["x"] * 4)
                self.assertEqual(futures.stats["with_files"] -
                                 before["with_files"], 4)
                self.assertEqual(futures.stats["resent"], before["resent"])
            finally:
                futures._ctx = old

    def test_script(self):
        """python3 -m r3q SCRIPT: its functions and creator classes made
        in main() resolve on the workers, its guarded block runs only
        here, relative paths read its directory; a script that reads
        standard input at import fails with why."""
        with tempfile.TemporaryDirectory() as d:
            def write(name, text):
                with open(os.path.join(d, name), "w") as f:
                    f.write(textwrap.dedent(text))

            def run(*args, runner=("-m", "r3q"), cwd=d, **kw):
                """python3 -m r3q ARGS in d (runner=(): python3 ARGS)."""
                return subprocess.run([sys.executable, *runner, *args],
                                      cwd=cwd, capture_output=True,
                                      text=True, timeout=120, **kw)

            os.mkdir(os.path.join(d, "data"))
            with open(os.path.join(d, "data", "k.txt"), "w") as f:
                f.write("7\n")
            with open(os.path.join(d, "prog.py"), "w") as f:
                f.write(textwrap.dedent("""
                    import sys
                    from deap import base, creator
                    from r3q import futures
                    with open("data/k.txt") as f:
                        K = int(f.read())

                    class Point:
                        def __init__(self, x):
                            self.x = x

                    def evaluate(ind):
                        return Point(sum(ind) * K), type(ind).__name__

                    def main():
                        creator.create("FitnessMax", base.Fitness,
                                       weights=(1.0,))
                        creator.create("Individual", list,
                                       fitness=creator.FitnessMax)
                        pop = [creator.Individual([i, i]) for i in range(9)]
                        out = list(futures.map(evaluate, pop))
                        print([(p.x, n) for p, n in out])
                        print(type(out[0][0]).__module__)

                    if __name__ == "__main__":
                        main()
                """))
            p = run("prog.py")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stdout.splitlines(), [
                repr([(14 * i, "Individual") for i in range(9)]),
                "__main__"])
            write("stdin.py", """
                import sys
                from r3q import futures
                LINE = sys.stdin.readline()

                def f(x):
                    return x

                if __name__ == "__main__":
                    print(list(futures.map(f, [1])))
            """)
            p = run("stdin.py", input="x\n")
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("read standard input on a worker", p.stderr)
            self.assertIn("stdin.py", p.stderr)
            # r3q.shared at the top level of a script: the workers import
            # it with the client's constants there, its setConst does
            # nothing there; a setConst of another name in a task fails
            # that task, saying why.
            write("consts.py", """
                import os
                from r3q import futures, shared
                shared.setConst(SEED=os.getpid())
                AT_IMPORT = shared.getConst("SEED")

                def f(x):
                    return x + shared.getConst("SEED"), AT_IMPORT

                def g(x):
                    shared.setConst(OTHER=x)

                if __name__ == "__main__":
                    seed = shared.getConst("SEED")
                    out = list(futures.map(f, [1, 2]))
                    print(out == [(1 + seed, seed), (2 + seed, seed)])
                    try:
                        futures.submit(g, 1).result()
                    except RuntimeError as e:
                        print(e)
            """)
            p = run("consts.py")
            self.assertEqual(p.returncode, 0, p.stderr)
            lines = p.stdout.splitlines()
            self.assertEqual(lines[0], "True", p.stdout)
            self.assertIn("r3q.shared.setConst(OTHER) on a worker", lines[1])
            # A script with its work at the top level, no __main__ guard
            # (DEAP's evoknn_jmlr.py): the workers' import stops at its
            # first distributed call, so that they do not run the whole
            # program each; what it defined before is theirs.  A function
            # defined after that call cannot be, and its tasks say why.
            marks = os.path.join(d, "marks")
            os.mkdir(marks)
            write("unguarded.py", """
                import os
                from r3q import futures
                MARKS = %r
                def f(x):
                    return x * 2, os.getpid()
                open(os.path.join(MARKS, "before.%%d" %% os.getpid()),
                     "w").close()
                out = list(futures.map(f, range(8), chunksize=1))
                open(os.path.join(MARKS, "after.%%d" %% os.getpid()),
                     "w").close()
                print([v for v, _ in out], os.getpid() in [p for _, p in out])
                def g(x):
                    return x + 1
                try:
                    print(list(futures.map(g, [1])))
                except Exception as e:
                    print(e)
            """ % marks)
            p = run("unguarded.py")
            self.assertEqual(p.returncode, 0, p.stderr)
            lines = p.stdout.splitlines()
            self.assertEqual(lines[0], "[0, 2, 4, 6, 8, 10, 12, 14] False")
            self.assertIn("cannot load the function", lines[1])
            self.assertIn("its line 9, where it calls futures.map", lines[1])
            self.assertIn('if __name__ == "__main__":', lines[1])
            made = os.listdir(marks)
            afters = [m for m in made if m.startswith("after.")]
            self.assertEqual(len(afters), 1, made)    # the client's only
            self.assertGreater(len(made), 1, made)    # workers imported it
            # A toolbox's evaluate wrapped by toolbox.decorate (DEAP's
            # es/cma_mo.py: the wrapper takes the name of the function it
            # wraps, which pickle then finds to be another object), and a
            # lambda registered in a toolbox: both go as the toolbox's
            # attribute, which the workers' import of the script makes
            # too.  Changed as the script runs (decorated again in its
            # main block), it is another function on the workers: refused,
            # saying so, never run as it was.
            write("deco.py", """
                import functools, threading
                from deap import base
                from r3q import futures
                def evaluate(x):
                    return x * 2
                def penalty(scale):
                    def deco(f):
                        @functools.wraps(f)
                        def wrapper(x):
                            return f(x) + scale
                        return wrapper
                    return deco
                toolbox = base.Toolbox()
                toolbox.register("evaluate", evaluate)
                toolbox.decorate("evaluate", penalty(100))
                toolbox.register("square", lambda x: x * x)
                class Peaks:
                    # A callable with state its calls change (DEAP's
                    # MovingPeaks): each worker's would be its own.
                    def __init__(self):
                        self.lock = threading.Lock()
                        self.calls = 0
                    def __call__(self, x):
                        self.calls += 1
                        return x + self.calls
                toolbox.register("peaks", Peaks())
                if __name__ == "__main__":
                    print(list(futures.map(toolbox.evaluate, range(3))))
                    print(list(futures.map(toolbox.square, range(3))))
                    try:
                        futures.map(toolbox.peaks, range(3))
                    except TypeError as e:
                        print("refused", e)
                    toolbox.decorate("evaluate", penalty(1000))
                    try:
                        print(list(futures.map(toolbox.evaluate, range(3))))
                    except Exception as e:
                        print(type(e).__name__, e)
                    toolbox.register("cube", lambda x: x ** 3)
                    try:
                        print(list(futures.map(toolbox.cube, range(3))))
                    except Exception as e:
                        print(type(e).__name__, e)
            """)
            p = run("deco.py")
            self.assertEqual(p.returncode, 0, p.stderr)
            lines = p.stdout.splitlines()
            self.assertEqual(lines[:2], ["[100, 102, 104]", "[0, 1, 4]"],
                             p.stdout)
            self.assertTrue(lines[2].startswith("refused futures.map: "
                                                "cannot send"), lines[2])
            self.assertIn("TaskFailed", lines[3])
            self.assertIn("toolbox.evaluate is another function on the "
                          "workers than in the client", lines[3])
            self.assertIn("closing over 1000", lines[3])
            self.assertIn("toolbox.cube is not there on the workers: the "
                          "script's import does not make it", lines[4])
            # Two versions of a program with the same constants (so the
            # same table), an instance of the script's own class: the
            # second version's workers see an instance of its class, not
            # of the first's.
            for version in (1, 2):
                write("box.py", """
                    from r3q import futures, shared
                    VERSION = %d
                    class Box:
                        def __init__(self, v):
                            self.v = v
                    def f(x):
                        b = shared.getConst("box")
                        return isinstance(b, Box), b.v + x, VERSION
                    if __name__ == "__main__":
                        shared.setConst(box=Box(10))
                        print(set(futures.map(f, range(9), chunksize=1)) ==
                              {(True, 10 + x, VERSION) for x in range(9)})
                """ % version)
                p = run("box.py")
                self.assertEqual((p.returncode, p.stdout), (0, "True\n"),
                                 p.stderr)
            # Two programs in turn on the same worker processes, each with
            # a GP ephemeral constant of the same name and its own
            # function (DEAP's symbreg.py, then its symbreg_harm.py):
            # deap.gp refuses a second function under a name, so the
            # first program's must go when the second is imported.
            for lo, hi in ((1, 5), (10, 20)):
                write("eph.py", """
                    import operator, random
                    from deap import gp
                    from r3q import futures
                    pset = gp.PrimitiveSet("MAIN", 1)
                    pset.addPrimitive(operator.add, 2)
                    pset.addEphemeralConstant("r3q_eph",
                                              lambda: random.randint(%d, %d))
                    def value(tree):
                        return gp.compile(tree, pset)(1)
                    if __name__ == "__main__":
                        random.seed(1)
                        trees = [gp.PrimitiveTree(gp.genFull(pset, 2, 2))
                                 for _ in range(12)]
                        here = [value(t) for t in trees]
                        print(list(futures.map(value, trees, chunksize=1))
                              == here)
                """ % (lo, hi))
                p = run("eph.py")
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(p.stdout, "True\n", p.stderr)
            # Files past the limit: refused before the script runs.
            with open(os.path.join(d, "data", "big.bin"), "wb") as f:
                f.write(os.urandom(64 * 1024))
            small = dict(os.environ, R3Q_SHIP_LIMIT="32768")
            p = run("prog.py", env=small)
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertEqual(p.stdout, "")
            self.assertIn("over the limit", p.stderr)
            self.assertIn("big.bin", p.stderr)
            self.assertIn("--files", p.stderr)
            p = run("--files", "prog.py,data/k.txt", "prog.py", env=small)
            self.assertEqual(p.returncode, 0, p.stderr)
            # A program that reaches beside its directory (DEAP's
            # coev/hillis.py: sys.path.append("../ga")): --files names
            # those files as it names them, relative to the current
            # directory, which the workers' working directory stands for.
            os.mkdir(os.path.join(d, "proj"))
            os.mkdir(os.path.join(d, "lib"))
            write("lib/helper.py", """
                def triple(x):
                    return 3 * x
            """)
            write("proj/run.py", """
                import sys
                sys.path.append("../lib")
                import helper
                from r3q import futures
                with open("../data/k.txt") as f:
                    K = int(f.read())
                def f(x):
                    return helper.triple(x) + K
                if __name__ == "__main__":
                    print(list(futures.map(f, range(4))))
            """)
            proj = os.path.join(d, "proj")
            p = run("run.py", cwd=proj)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("No module named 'helper'", p.stderr)
            self.assertIn("--files", p.stderr)
            p = run("--files", ".,../lib/helper.py,../data/k.txt", "run.py",
                    cwd=proj)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stdout, "[7, 10, 13, 16]\n")
            # The program changed, its module too: the workers that ran
            # the first version import the module afresh, not the one
            # they hold.
            for k in (1, 100):
                write("lib/helper.py", """
                    def triple(x):
                        return 3 * x + %d
                """ % k)
                p = run("--files", ".,../lib/helper.py,../data/k.txt",
                        "run.py", cwd=proj)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(p.stdout, "%r\n" % [
                    3 * x + k + 7 for x in range(4)])
            p = run("--files", "../nothing.py", "run.py", cwd=proj)
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn("cannot ship ../nothing.py: no such file",
                          p.stderr)
            # A script's own failure reads as under "python3 SCRIPT": its
            # frames only; its exit status is its own.
            write("fails.py", """
                import sys
                def inner():
                    raise KeyError('no such key')
                if sys.argv[1:] == ['exit']:
                    sys.exit(3)
                inner()
            """)
            p = run("fails.py")
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn("in inner", p.stderr)
            self.assertIn("KeyError: 'no such key'", p.stderr)
            self.assertNotIn("__main__.py", p.stderr)
            self.assertNotIn("run_script", p.stderr)
            p = run("fails.py", "exit")
            self.assertEqual((p.returncode, p.stderr), (3, ""))
            # Files under the ship limit but, with a task, over
            # max_payload (64K here): that task fails saying so.
            write("one.py", """
                from r3q import futures
                if __name__ == '__main__':
                    print(futures.submit(abs, -1).result())
            """)
            p = run("one.py")
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn("PayloadTooLarge", p.stderr)
            self.assertIn("the program's files to", p.stderr)
            self.assertIn("--files", p.stderr)
            os.remove(os.path.join(d, "data", "big.bin"))
            # Futures the script left: waited for when it ends well (as
            # SCOOP's shutdown), cancelled when it fails.
            write("leaves.py", """
                import sys, time
                from r3q import futures
                def mark(path):
                    time.sleep(1.5)
                    open(path, "w").close()
                if __name__ == "__main__":
                    futures.submit(mark, sys.argv[1])
                    if sys.argv[2:] == ["fail"]:
                        raise ValueError("failed")
            """)
            # "python3 SCRIPT" the same, at the interpreter's exit.
            for runner in (("-m", "r3q"), ()):
                for how, left in (("ok", True), ("fail", False)):
                    mark = os.path.join(d, "mark.%s.%d" % (how,
                                                           len(runner)))
                    p = run("leaves.py", mark, how, runner=runner)
                    self.assertEqual(p.returncode, 0 if left else 1,
                                     p.stderr)
                    self.assertEqual(os.path.exists(mark), left,
                                     (runner, how))
            time.sleep(2)
            self.assertFalse(os.path.exists(mark))
            # python -m scoop's options: refused, saying why.
            p = run("-n", "4", "prog.py")
            self.assertEqual(p.returncode, 64, p.stderr)
            self.assertIn("-n is an option of python -m scoop", p.stderr)
            self.assertIn("r3qctl workers", p.stderr)


class ServeTest(unittest.TestCase):
    """python3 -m r3q.serve through its pipes, as workerd drives it."""

    def start(self, *args):
        fd, self.log = tempfile.mkstemp(prefix="r3q-serve-test.")
        os.close(fd)
        self.addCleanup(os.unlink, self.log)
        p = subprocess.Popen([sys.executable, "-m", "r3q.serve"] +
                             list(args), stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, bufsize=0,
                             env=dict(os.environ, SLEEPY_LOG=self.log))
        self.addCleanup(p.wait, 30)
        self.addCleanup(p.stdout.close)
        self.addCleanup(p.stdin.close)
        return p

    def started(self, n):
        """Wait until the function has started n times."""
        end = time.monotonic() + 30 * SLOW
        while time.monotonic() < end:
            with open(self.log) as f:
                if sum(x.startswith("start ") for x in f) >= n:
                    return
            time.sleep(0.02)
        self.fail("the function did not start")

    @staticmethod
    def send(p, kind, body=b""):
        p.stdin.write(kind + len(body).to_bytes(4, "big") + body)

    def answer(self, p, timeout):
        """(type, body) of the next frame, or a failure after timeout."""
        fd = p.stdout.fileno()
        data = b""
        end = time.monotonic() + timeout
        while len(data) < 5 or len(data) < 5 + int.from_bytes(data[1:5],
                                                              "big"):
            left = end - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                self.fail("no answer in %g s" % timeout)
            chunk = os.read(fd, 65536)
            self.assertTrue(chunk, "serve closed its output")
            data += chunk
        return data[:1], data[5:]

    def test_interrupt(self):
        p = self.start("--pickle", "kinds:swallow")
        self.send(p, b"T", pickle.dumps(60.0))
        self.started(1)
        t0 = time.monotonic()
        self.send(p, b"C")
        self.assertEqual(self.answer(p, 10 * SLOW), (b"F", b"cancelled"))
        self.assertLess(time.monotonic() - t0, 10 * SLOW)
        # The same process serves on.
        self.send(p, b"T", pickle.dumps(0.01))
        self.assertEqual(self.answer(p, 30 * SLOW),
                         (b"R", pickle.dumps(0.01, pickle.HIGHEST_PROTOCOL)))
        # A cancel that crossed the answer is ignored.
        self.send(p, b"C")
        self.send(p, b"T", pickle.dumps(0.0))
        self.assertEqual(self.answer(p, 30 * SLOW)[0], b"R")

    def test_no_interrupt(self):
        p = self.start("--no-interrupt", "--pickle", "kinds:swallow")
        self.send(p, b"T", pickle.dumps(1.0))
        self.started(1)
        t0 = time.monotonic()
        self.send(p, b"C")
        # It ran to its end (swallow's "done" would be its result).
        self.assertEqual(self.answer(p, 30 * SLOW), (b"F", b"cancelled"))
        self.assertGreater(time.monotonic() - t0, 0.5)


if __name__ == "__main__":
    unittest.main()

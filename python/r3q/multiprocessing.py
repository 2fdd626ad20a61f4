"""multiprocessing.Pool's API over an R3Q cluster.

A program that maps with a process pool runs its calls on the cluster's
generic kind "python" by changing its import:

    from r3q import multiprocessing     # was: import multiprocessing
    pool = multiprocessing.Pool(processes=4)    # processes is ignored
    toolbox.register("map", pool.map)

Pool.map, starmap, imap, imap_unordered, apply, and the asynchronous
apply_async, map_async and starmap_async (with callback and
error_callback) ship the function by reference and its arguments and
results by value, as r3q.futures does (pydoc r3q.futures: what the
workers run, what is refused, the allowlist results are unpickled
against, chunks, batches: a map is one, apply and apply_async leave
theirs open as futures.submit does).  The calls run on the workers, not
in processes of this machine: the pool's size is the cluster's.  As with multiprocessing,
close() then join() waits for every asynchronous call and its callback;
terminate() (and leaving a "with Pool() as pool:" block) cancels the
calls still out, whose get() then raises concurrent.futures'
CancelledError.  AsyncResult.get(timeout) raises multiprocessing's own
TimeoutError (also this module's TimeoutError).  cpu_count() is this
machine's, as multiprocessing's.
"""
import concurrent.futures as _cf
import multiprocessing as _mp
import os
import threading

from . import futures

__all__ = ["Pool", "TimeoutError", "cpu_count"]

TimeoutError = _mp.TimeoutError


def cpu_count():
    return os.cpu_count() or 1


class AsyncResult:
    """apply_async's, map_async's and starmap_async's result: get(),
    wait(), ready(), successful()."""

    def __init__(self, fut):
        self._fut = fut

    def get(self, timeout=None):
        try:
            return self._fut.result(timeout)
        except _cf.TimeoutError:
            raise TimeoutError() from None

    def wait(self, timeout=None):
        futures.wait([self._fut], timeout)

    def ready(self):
        return self._fut.done()

    def successful(self):
        if not self._fut.done():
            raise ValueError("%r not ready" % (self,))
        return not self._fut.cancelled() and self._fut.exception() is None


def _map_future(func, iterables, chunksize, who):
    """A future of the list map() would give, done when its last chunk is
    in, or failed with the first failure to come in (the other chunks
    then cancelled), as multiprocessing's map_async."""
    fut = _cf.Future()
    if futures._on_worker:
        try:
            fut.set_result(list(futures.map(func, *iterables)))
        except Exception as e:
            fut.set_exception(e)
        return fut
    chunks = futures._submit_chunks(func, futures._calls(iterables, {}),
                                    chunksize, who)
    lock = threading.Lock()
    left = [len(chunks)]

    def done(c):
        try:
            vals, err = c.values()
            if err is not None:
                futures._raise(err, c.start)
        except BaseException as e:
            with lock:
                first = not fut.done()
                if first:
                    fut.set_exception(e)
            if first:
                for o in chunks:
                    if not o.fut.done():
                        o.fut.cancel()
            return
        with lock:
            left[0] -= 1
            if left[0] or fut.done():
                return
            fut.set_result([v for o in chunks for v in o.values()[0]])

    if not chunks:
        fut.set_result([])
    futures._kick(chunks)
    for c in chunks:
        c.fut.add_done_callback(lambda f, c=c: done(c))
    return fut


class Pool:
    """multiprocessing.Pool on the cluster (processes, initializer and
    maxtasksperchild are accepted and ignored: an initializer is refused,
    since it would not run on the workers)."""

    def __init__(self, processes=None, initializer=None, initargs=(),
                 maxtasksperchild=None, *, client=None, kind=None):
        if initializer is not None:
            raise TypeError("r3q.multiprocessing.Pool: an initializer "
                            "would not run on the workers; do its work at "
                            "the top level of the module")
        if client is not None or kind is not None:
            futures.use(client, kind)
        self._closed = False
        self._cond = threading.Condition()
        self._out = set()               # asynchronous calls not done

    def _check(self):
        if self._closed:
            raise ValueError("Pool not running")

    def map(self, func, iterable, chunksize=None):
        self._check()
        return list(futures.map(func, iterable, chunksize=chunksize))

    def starmap(self, func, iterable, chunksize=None):
        self._check()
        return list(futures.map(func, *zip(*iterable), chunksize=chunksize))

    def imap(self, func, iterable, chunksize=None):
        self._check()
        return futures.map(func, iterable, chunksize=chunksize)

    def imap_unordered(self, func, iterable, chunksize=None):
        self._check()
        return futures.map_as_completed(func, iterable, chunksize=chunksize)

    def apply(self, func, args=(), kwds=None):
        return self.apply_async(func, args, kwds).get()

    def _async(self, fut, callback, error_callback):
        """fut as an AsyncResult: callback(result) or error_callback(
        exception) when it is done (in the client's futures thread), and
        join() waits for both."""
        with self._cond:
            self._out.add(fut)

        def done(f):
            try:
                if f.cancelled():
                    e = _cf.CancelledError()
                else:
                    e = f.exception()
                if e is None and callback is not None:
                    callback(f.result())
                elif e is not None and error_callback is not None:
                    error_callback(e)
            finally:
                with self._cond:
                    self._out.discard(f)
                    self._cond.notify_all()
        fut.add_done_callback(done)
        return AsyncResult(fut)

    def apply_async(self, func, args=(), kwds=None, callback=None,
                    error_callback=None):
        self._check()
        return self._async(futures.submit(func, *args, **(kwds or {})),
                           callback, error_callback)

    def map_async(self, func, iterable, chunksize=None, callback=None,
                  error_callback=None):
        self._check()
        return self._async(_map_future(func, [iterable], chunksize,
                                       "Pool.map_async"),
                           callback, error_callback)

    def starmap_async(self, func, iterable, chunksize=None, callback=None,
                      error_callback=None):
        self._check()
        return self._async(_map_future(func, list(zip(*iterable)),
                                       chunksize, "Pool.starmap_async"),
                           callback, error_callback)

    def close(self):
        """No more calls; join() then waits for those out."""
        self._closed = True

    def terminate(self):
        """No more calls, and those out are cancelled."""
        self._closed = True
        with self._cond:
            out = list(self._out)
        for f in out:
            f.cancel()

    def join(self):
        """Wait for every asynchronous call and its callback (after
        close() or terminate(), as multiprocessing's)."""
        if not self._closed:
            raise ValueError("Pool is still running")
        with self._cond:
            while self._out:
                self._cond.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.terminate()

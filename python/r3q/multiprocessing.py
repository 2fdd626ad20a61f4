"""multiprocessing.Pool's API over an R3Q cluster.

A program that maps with a process pool runs its calls on the cluster's
generic kind "python" by changing its import:

    from r3q import multiprocessing     # was: import multiprocessing
    pool = multiprocessing.Pool(processes=4)    # processes is ignored
    toolbox.register("map", pool.map)

Pool.map, starmap, imap, imap_unordered, apply and apply_async ship the
function by reference and its arguments and results by value, as
r3q.futures does (pydoc r3q.futures: what the workers run, what is
refused, the allowlist results are unpickled against, chunks).  The calls
run on the workers, not in processes of this machine: the pool's size is
the cluster's.  cpu_count() is this machine's, as multiprocessing's.
"""
import os

from . import futures

__all__ = ["Pool", "cpu_count"]


def cpu_count():
    return os.cpu_count() or 1


class AsyncResult:
    """apply_async's and map_async's result: get(), wait(), ready(),
    successful()."""

    def __init__(self, fut):
        self._fut = fut

    def get(self, timeout=None):
        return self._fut.result(timeout)

    def wait(self, timeout=None):
        futures.wait([self._fut], timeout)

    def ready(self):
        return self._fut.done()

    def successful(self):
        if not self._fut.done():
            raise ValueError("the result is not ready")
        return self._fut.exception() is None


class _Done:
    """A list already computed, as a future."""

    def __init__(self, fn):
        self._fn = fn

    def result(self, timeout=None):
        return self._fn()

    def done(self):
        return True

    def exception(self):
        return None


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

    def apply_async(self, func, args=(), kwds=None, callback=None,
                    error_callback=None):
        self._check()
        fut = futures.submit(func, *args, **(kwds or {}))
        if callback is not None or error_callback is not None:
            def done(f):
                e = f.exception()
                if e is None and callback is not None:
                    callback(f.result())
                elif e is not None and error_callback is not None:
                    error_callback(e)
            fut.add_done_callback(done)
        return AsyncResult(fut)

    def map_async(self, func, iterable, chunksize=None):
        self._check()
        it = futures.map(func, iterable, chunksize=chunksize)
        return AsyncResult(_Done(lambda: list(it)))

    def close(self):
        self._closed = True

    def terminate(self):
        self._closed = True

    def join(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.terminate()

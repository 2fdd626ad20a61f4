"""Run tasks on an R3Q cluster from Python, over libr3q (r3q(3)).

    import r3q

    with r3q.Client() as client:        # R3Q_* environment, else the control socket
        outs = client.map("echo", [b"a", b"b"])     # one batch: a generation
        fut = client.submit("echo", b"c")           # a concurrent.futures.Future
        print(outs, fut.result(timeout=10))

A task is a kind, which the workers offer (workerd.conf(5)), and a payload
of bytes; its output is bytes, or an error.  Client.map_pickled(),
submit_pickled() and codec="pickle" carry Python objects instead, for
workers running "python3 -m r3q.serve --pickle module:function" (see
r3q.serve); unpickling runs code the data names, so pickles are for a
cluster you trust only.  Client.executor() is a concurrent.futures.Executor
whose map a DEAP toolbox, or any code written for Executor.map, can use.

r3q.futures is SCOOP's API (map, submit, as_completed...) for any
function, shipped by reference to the workers' generic kind "python"
("python3 -m r3q.serve --any"); "python3 -m r3q SCRIPT" runs a program
written for it, as "python -m scoop SCRIPT" does.  pydoc r3q.futures.

Errors are r3q.Error: TaskFailed (the remote error text), ConnectionLost,
Cancelled (a concurrent.futures.CancelledError), PayloadTooLarge, Timeout,
ClientClosed.  "python3 -m r3q --help" says more.
"""
from .errors import (Cancelled, ClientClosed, ConnectionLost, Error,
                     PayloadTooLarge, TaskFailed, Timeout, UnsafeResult)
from .client import Client, Executor, Future

try:
    from ._paths import VERSION as __version__
except ImportError:                     # run from the source tree
    __version__ = "unknown"
__all__ = ["Client", "Executor", "Future", "Error", "TaskFailed",
           "ConnectionLost", "Cancelled", "PayloadTooLarge", "Timeout",
           "ClientClosed", "UnsafeResult"]

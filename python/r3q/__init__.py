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
r3q.serve: that worker runs whatever code a client's pickle names, as its
own user).  The other way, a worker's output is unpickled against an
allowlist (builtins' containers and numbers, the classes of the script,
of DEAP and of NumPy, what r3q.allow("module" or "module.name") adds):
an output naming anything else (os.system, builtins.eval...) fails its
task with r3q.UnsafeResult and never runs.  r3q.trust_results() (or
R3Q_TRUST_RESULTS=1 in the environment) unpickles anything, for workers
and a master you trust.  Client.executor() is a concurrent.futures.Executor
whose map a DEAP toolbox, or any code written for Executor.map, can use.

r3q.futures is SCOOP's API (map, submit, as_completed...) for any
function, shipped by reference to the workers' generic kind "python"
("python3 -m r3q.serve --any"); "python3 -m r3q SCRIPT" runs a program
written for it, as "python -m scoop SCRIPT" does; r3q.shared is SCOOP's
shared constants.  pydoc r3q.futures, pydoc r3q.shared.

Errors are r3q.Error: TaskFailed (the remote error text), ConnectionLost,
Cancelled (a concurrent.futures.CancelledError), PayloadTooLarge, Timeout,
ClientClosed.  "python3 -m r3q --help" says more.
"""
from .errors import (Cancelled, ClientClosed, ConnectionLost, Error,
                     PayloadTooLarge, TaskFailed, Timeout, UnsafeResult)
from .client import Client, Executor, Future
from ._ship import allow


def trust_results(on=True):
    """Unpickle workers' outputs (codec="pickle", r3q.futures, Pool)
    without the allowlist when on: any output may then run code in this
    process.  For workers and a master you trust; R3Q_TRUST_RESULTS=1 in
    the environment does the same."""
    from . import _ship
    _ship.trust(on)


try:
    from ._paths import VERSION as __version__
except ImportError:                     # run from the source tree
    __version__ = "unknown"
__all__ = ["Client", "Executor", "Future", "Error", "TaskFailed",
           "ConnectionLost", "Cancelled", "PayloadTooLarge", "Timeout",
           "ClientClosed", "UnsafeResult", "allow", "trust_results"]

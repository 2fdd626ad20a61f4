"""SCOOP's shared constants on an R3Q cluster.

A program written for SCOOP's shared module runs by changing its import
(from scoop import futures, shared -> from r3q import futures, shared):

    def score(word):
        return sum(shared.getConst("values")[c] for c in word)

    if __name__ == "__main__":
        shared.setConst(values={"a": 1, "b": 3})
        print(list(futures.map(score, words)))

setConst(name=value, ...) sets constants in the client, once each: a name
set again raises TypeError ("This constant already exists"), as in SCOOP.
The tasks r3q.futures sends carry the constants set before they were
submitted (by value, as pickle carries arguments; a function by
reference, as futures.map sends one: a lambda only when it is bound to a
name at the top level of its module), content-addressed as the program's
files are: with the tasks until a worker has answered one, then only
their hash, a worker that lacks them asking for them once.  So
getConst(name) in a function run on a worker returns what the client
set, and in the client what it set; a name not set (or set after the
task was submitted) gives None, as SCOOP's getConst gives once its
timeout is over (the timeout is accepted, and not waited: the constants
a task may see came with it).  On a worker, the constants are there
before the script is imported, so its top level may read them; a
setConst at its top level, run again there, does nothing for the names
the client set, and setConst of any other name raises RuntimeError: what
it set would reach no other task.
"""
import os

from . import _ship

__all__ = ["setConst", "getConst"]


def _on_worker():
    return os.environ.get("R3Q_ON_WORKER") == "1"


def setConst(**kwargs):
    """Set constants (name=value, ...) for every later task to read with
    getConst; TypeError for a name already set, or a value the workers
    cannot be sent."""
    if _on_worker():
        _ship.shared_set(kwargs)
        return
    _ship.shared.set("shared.setConst", kwargs)


def getConst(name, timeout=0.1):
    """The constant name: in the client what setConst set, on a worker
    what the task's client had set when it submitted the task; None if
    there is none.  timeout is SCOOP's, and not waited (see the
    module)."""
    if _on_worker():
        return _ship.shared_get(name)
    return _ship.shared.get(name)

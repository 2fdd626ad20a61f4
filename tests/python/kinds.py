# Task kinds for tests/python/test_r3q.py, served on the workers by
# "python3 -m r3q.serve [--pickle] kinds:NAME" (tests/regress/python.sh).
import os
import time

from r3q import serve


def echo(payload):
    """bytes in, the same bytes out."""
    return payload


def square(x):
    """--pickle: x * x."""
    return x * x


def fail(x):
    """--pickle: always raises, with the input in the message."""
    raise ValueError("bad input %r" % (x,))


def slow(seconds):
    """--pickle: sleep, half-way reported, giving up when the task is
    cancelled."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if end - time.monotonic() <= seconds / 2:
            serve.halfway()
        if serve.cancelled():
            return "cancelled"
        time.sleep(0.01)
    return seconds


def unpicklable(x):
    """--pickle: a result pickle refuses."""
    return lambda: x


def note(what):
    """Append "WHAT PID" to $SLEEPY_LOG."""
    with open(os.environ["SLEEPY_LOG"], "a") as f:
        f.write("%s %d\n" % (what, os.getpid()))


def sleepy(seconds):
    """--pickle: time.sleep(seconds) without ever looking at cancelled();
    appends "start PID", then "done PID" or "interrupted PID" (its
    finally clause, when a cancel raised TaskCancelled in it) to
    $SLEEPY_LOG."""
    note("start")
    outcome = "interrupted"
    try:
        time.sleep(seconds)
        outcome = "done"
    finally:
        note(outcome)
    return seconds


def swallow(seconds):
    """--pickle: sleeps, and would take an exception for a result; the
    cancel's TaskCancelled is no Exception, so it is not taken.  Notes
    its start as sleepy does."""
    note("start")
    try:
        time.sleep(seconds)
    except Exception as e:
        return "swallowed %r" % (e,)
    return seconds


def power(x, y=2, *, add=0):
    """For the generic kind: shipped by reference, any arguments."""
    return x ** y + add


def copy_list(xs):
    """Returns a new list: the mapped function's own result, not
    another's."""
    return list(xs) + ["copied"]


class Boom(Exception):
    """An exception class the client may unpickle (this module's)."""


def boom(x):
    """Raises on 3."""
    if x == 3:
        raise Boom("no threes: %r" % (x,))
    return x


def exits(x):
    """Ends its process on 2 (a crash, as far as workerd knows)."""
    if x == 2:
        os._exit(3)
    return x


def boom_or_slow(x):
    """Raises on 3 (boom); otherwise slow(x)."""
    return boom(x) if x == 3 else slow(x)


class _System:
    """A result whose pickle calls os.system on whoever unpickles it."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, ("touch %s" % self.marker,))


def hostile(marker):
    """A hostile worker-side function: returns a pickle that would run a
    shell command in the client."""
    return _System(marker)


def rosen(x):
    """SciPy's differential_evolution target (workers=client.map_any)."""
    return sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def cat(path):
    """A file's text, read where the task runs (the shipped files)."""
    with open(path) as f:
        return f.read()


# A lambda bound at the top level: the workers import this module and
# find it by that name (r3q.futures sends it so).
triple = lambda x: 3 * x  # noqa: E731


def const_get(name):
    """The shared constant name, as the task sees it (r3q.shared)."""
    from r3q import shared
    return shared.getConst(name)


def const_call(name, x):
    """The shared constant name (a function) called on x."""
    from r3q import shared
    return shared.getConst(name)(x)

# Task kinds for tests/python/test_r3q.py, served on the workers by
# "python3 -m r3q.serve [--pickle] kinds:NAME" (tests/regress/python.sh).
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

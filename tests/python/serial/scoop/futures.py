# SCOOP's futures API, serially (see __init__.py): each call runs when it
# is made, as the builtin map runs it.
import builtins
import concurrent.futures as _cf
import functools
import itertools

ALL_COMPLETED = _cf.ALL_COMPLETED
FIRST_COMPLETED = _cf.FIRST_COMPLETED
FIRST_EXCEPTION = _cf.FIRST_EXCEPTION


def map(func, *iterables, **kwargs):
    # SCOOP's map takes timeout and ignores the rest.
    return iter(list(builtins.map(func, *iterables)))


map_as_completed = map


def submit(func, *args, **kwargs):
    f = _cf.Future()
    try:
        f.set_result(func(*args, **kwargs))
    except Exception as e:
        f.set_exception(e)
    return f


def mapReduce(mapFunc, reductionFunc, *iterables, **kwargs):
    return functools.reduce(reductionFunc, builtins.map(mapFunc, *iterables))


def mapScan(mapFunc, reductionFunc, *iterables, **kwargs):
    return list(itertools.accumulate(builtins.map(mapFunc, *iterables),
                                     reductionFunc))


def as_completed(fs, timeout=None):
    return iter(fs)


def wait(fs, timeout=-1, return_when=ALL_COMPLETED):
    return _cf.wait(fs, None, return_when)


def shutdown(wait=True):
    pass

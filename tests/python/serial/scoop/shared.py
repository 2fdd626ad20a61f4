# SCOOP's shared constants, in the one process (see __init__.py).
_consts = {}


def setConst(**kwargs):
    for k in kwargs:
        if k in _consts:
            raise TypeError("This constant already exists: {0}.".format(k))
    _consts.update(kwargs)


def getConst(name, timeout=0.1):
    return _consts.get(name)

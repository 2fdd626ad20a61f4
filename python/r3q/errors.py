"""The exceptions of the r3q package.

Every one is an r3q.Error, which carries libr3q's status code (``code``,
one of r3q(3)'s R3Q_E* values, negative) and, for a task of a map, its
position in the input (``index``).  Each also derives from the standard
exception a Python program would catch for the same trouble.
"""
import concurrent.futures


class Error(Exception):
    """Something libr3q or the cluster refused or could not do."""

    def __init__(self, text, code=None, index=None):
        super().__init__(text)
        self.text = text
        self.code = code
        self.index = index

    def __str__(self):
        if self.index is None:
            return self.text
        return "task %d: %s" % (self.index, self.text)

    def __reduce__(self):
        return (self.__class__, (self.text, self.code, self.index))


class TaskFailed(Error):
    """The task failed on the workers (its kind failed on max_attempts
    machines, or max_kills workers were lost running it).  ``text`` is the
    master's error: for r3q.serve, the last line of the traceback."""


class UnsafeResult(TaskFailed):
    """A worker's result named something the client does not unpickle
    from a worker (os.system, builtins.eval, a function...), with
    r3q.futures or codec="pickle": the task fails rather than run it.
    r3q.allow() and r3q.trust_results() say what else to accept."""


class ConnectionLost(Error, ConnectionError):
    """The master could not be reached, at first or again within the
    client's ``reconnect`` seconds."""


class Cancelled(Error, concurrent.futures.CancelledError):
    """The task was cancelled: by Future.cancel(), by an interrupted map,
    or because its job was (``r3qctl cancel``)."""


class PayloadTooLarge(Error, ValueError):
    """A payload is over the master's max_payload (masterd.conf(5))."""


class Timeout(Error, TimeoutError):
    """map()'s timeout passed; the tasks left were cancelled."""


class ClientClosed(Error, ValueError):
    """The client was closed (Client.close(), or the end of its with
    block); it can run nothing more."""

"""Cancels against "python3 -m r3q.serve --any", spoken to as workerd
speaks to it (workerd.conf(5), "Persistent kinds"): pipelined, two tasks
written at once, then a cancel of the first at a random moment within
200 us, over and over, so that cancels land while the process reads its
input for one (arming the interrupt) and SIGIO's handler reads the same
input.  Every task must be answered, once, in order: 'R' with its exact
result, or 'F' "cancelled" / "cancelled before it started".  A process
that lost or reordered a chunk of its input answered "not a payload of
r3q.futures", or waited for ever for a task it had been sent.  And a
cancel forgets only the modules imported after the function began: the
first task's imports (the script, NumPy) stay, and the script is
imported once (SERVE_CANCEL_LOG counts), NumPy never again (its warning
on the process's standard error).

First, in this process, r3q.serve's guard itself: a SIGIO that comes
while the input is read, blocked or its handler due, interrupts the
function after the read, not inside it, and is not lost.

usage: serve_cancel.py ROUNDS SEED...   (exit 1 with the reason)
"""
import os
import random
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time

from r3q import _ship

try:
    import numpy                        # as a DEAP program's script does
except ImportError:
    numpy = None

# Imported by a worker: say so, once an import.
if __name__ != "__main__" and os.environ.get("SERVE_CANCEL_LOG"):
    with open(os.environ["SERVE_CANCEL_LOG"], "a") as _f:
        _f.write("%d\n" % os.getpid())

WAIT = 30               # s without an answer: the process hangs


def spin(x, seconds):
    """The tasks' function, shipped by reference with this script (the
    workers import it as r3q.futures' scripts are): busy for seconds (no
    sleep: a cancel's SIGIO comes while Python runs), then 2 x."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass
    return 2 * x


def frame(kind, body=b""):
    return kind + len(body).to_bytes(4, "big") + body


class Serve:
    def __init__(self):
        self.log = tempfile.NamedTemporaryFile()
        env = dict(os.environ, R3Q_PIPELINE="1",
                   SERVE_CANCEL_LOG=self.log.name)
        self.err = tempfile.TemporaryFile()
        self.p = subprocess.Popen([sys.executable, "-m", "r3q.serve",
                                   "--any"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE,
                                  stderr=self.err, env=env, bufsize=0)
        self.buf = b""

    def send(self, data):
        os.write(self.p.stdin.fileno(), data)

    def answer(self):
        """The next frame other than 'H', or None after WAIT s."""
        fd = self.p.stdout.fileno()
        while True:
            if len(self.buf) >= 5:
                n = int.from_bytes(self.buf[1:5], "big")
                if len(self.buf) >= 5 + n:
                    kind, body = self.buf[:1], self.buf[5:5 + n]
                    self.buf = self.buf[5 + n:]
                    if kind != b"H":
                        return kind, body
                    continue
            if not select.select([fd], [], [], WAIT)[0]:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            self.buf += chunk

    def close(self):
        """Its standard error, once it has ended."""
        self.p.stdin.close()
        self.p.wait()
        self.err.seek(0)
        return self.err.read().decode("utf-8", "replace")


def run(rounds, seed):
    rnd = random.Random(seed)
    ctx = _ship.Context(os.path.abspath(__file__),
                        [os.path.basename(__file__)])
    fnblob = _ship.check_function(spin, "serve_cancel")
    s = Serve()
    try:
        return rounds_of(s, rnd, ctx, fnblob, rounds, seed)
    finally:
        if s.p.poll() is None:
            s.p.kill()
            s.p.wait()


def rounds_of(s, rnd, ctx, fnblob, rounds, seed):
    first = s.answer()
    if first is None or first[0] != b"P":
        sys.exit("seed %d: r3q.serve did not take pipelining: %r" %
                 (seed, first))
    # The first task, which carries the script and imports it (and
    # NumPy with it), is cancelled while its function runs.
    s.send(frame(b"T", _ship.pack(ctx, fnblob, [((0, 2.0), {})],
                                  True)[0]))
    select.select([], [], [], 0.3)
    s.send(frame(b"C", (1).to_bytes(4, "big")))
    a = s.answer()
    if a != (b"F", b"cancelled"):
        sys.exit("seed %d: a task cancelled as it ran answered %r" %
                 (seed, a))
    seq = 1
    counts = {"R": 0, "cancelled": 0}
    for i in range(rounds):
        xs = (2 * i, 2 * i + 1)
        d = rnd.choice((0.0, 20e-6, 100e-6))
        for x in xs:
            s.send(frame(b"T", _ship.pack(ctx, fnblob, [((x, d), {})],
                                          False)[0]))
        seq += 2
        t = rnd.random() * 200e-6
        if t > 10e-6:
            select.select([], [], [], t)
        s.send(frame(b"C", (seq - 1).to_bytes(4, "big")))
        for x in xs:
            a = s.answer()
            if a is None:
                sys.exit("seed %d, round %d: no answer for task %d in %d s "
                         "(r3q.serve waits for input it was sent)" %
                         (seed, i, x, WAIT))
            kind, body = a
            if kind == b"R":
                _, _, vals, err = _ship.unpack(body)
                if vals != [2 * x] or err is not None:
                    sys.exit("seed %d, round %d: task %d answered %r" %
                             (seed, i, x, (vals, err)))
                counts["R"] += 1
            elif kind == b"F" and body in (b"cancelled",
                                           b"cancelled before it started"):
                counts["cancelled"] += 1
            else:
                sys.exit("seed %d, round %d: task %d answered %r %r" %
                         (seed, i, x, kind, body[:200]))
    err = s.close()
    if "imported a second time" in err or "reloaded" in err:
        sys.exit("seed %d: a module was imported twice: %s" % (
            seed, err.strip().splitlines()[-1]))
    s.log.seek(0)
    n = len(s.log.read().splitlines())
    if n != 1:
        sys.exit("seed %d: the script was imported %d times by one "
                 "process (a cancelled task made it forget it)" % (seed, n))
    return counts


def quiet():
    """In this process: a cancel's SIGIO during r3q.serve's reading of
    its input, blocked there or its handler run there (Python runs it
    between any two bytecodes), interrupts the function once the read is
    over, never inside it."""
    from r3q import serve
    r, w = os.pipe()
    serve._frames = serve._Frames(r)
    signal.signal(signal.SIGIO, serve._on_sigio)
    for how in ("blocked", "due"):
        serve._seq, serve._in_task, serve._interruptible = 1, True, True
        serve._cancel_seen = serve._missed = False
        os.write(w, frame(b"T", b"next") + frame(b"C", (1).to_bytes(4, "big")))
        try:
            with serve._Quiet():
                if how == "blocked":
                    # To this thread, which blocks it (a signal to the
                    # process could go to a thread of NumPy's BLAS).
                    signal.pthread_kill(threading.main_thread().ident,
                                        signal.SIGIO)
                else:
                    serve._on_sigio(signal.SIGIO, None)
                for _ in range(1000):
                    pass
                if serve._frames.buf or serve._frames.pending:
                    sys.exit("quiet, %s: the handler read the input inside "
                             "the block" % how)
            for _ in range(1000):
                pass                    # the handler has run by here
        except serve.TaskCancelled:
            pass
        else:
            sys.exit("quiet, %s: the cancel was lost" % how)
        if serve._frames.pending != [(b"T", b"next")]:
            sys.exit("quiet, %s: the next task was not kept: %r" % (
                how, serve._frames.pending))
        serve._frames.pending = []
    # This process serves nothing more: a SIGIO must not end it (by
    # default it would, silently).
    signal.signal(signal.SIGIO, signal.SIG_IGN)
    serve._frames = None
    os.close(r)
    os.close(w)
    print("quiet: a SIGIO blocked or due during a read interrupts after it",
          flush=True)


def main():
    quiet()
    rounds = int(sys.argv[1])
    for seed in sys.argv[2:]:
        c = run(rounds, int(seed))
        print("seed %s: %d tasks, %d answered, %d cancelled" % (
            seed, 2 * rounds, c["R"], c["cancelled"]), flush=True)
        if c["cancelled"] == 0:
            sys.exit("seed %s: no cancel took: the test tests nothing" %
                     seed)


if __name__ == "__main__":
    main()

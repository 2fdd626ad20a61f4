# A persistent process that takes pipelining (workerd.conf(5)): it sends
# 'P' when workerd offers it (R3Q_PIPELINE=1), keeps frames that come
# while a task runs, and honours cancels by task number.  Each task's
# payload says what to do:
#   pid        answer its pid (to tell a restart)
#   sleep MS   sleep (a cancel ends it: F "cancelled"), then answer "queued=1" if the next task's frame came
#              meanwhile, "queued=0" if not
#   wait       wait for a cancel of this task, answer F "cancelled"
#   half       an 'H' frame, then answer "half"
#   touch PATH make the file PATH (to tell a task that ran), answer "ok"
#   exit N     exit with status N
# A task cancelled before it starts is answered F "cancelled before it
# started".
import os, select, struct, sys, time

buf = b""
frames = []
seq = 0


def fill(block):
    global buf
    while block or select.select([0], [], [], 0)[0]:
        chunk = os.read(0, 65536)
        if not chunk:
            if block:
                sys.exit(0)
            return
        buf += chunk
        block = False
    while len(buf) >= 5:
        n = struct.unpack(">I", buf[1:5])[0]
        if len(buf) < 5 + n:
            break
        frames.append((buf[0:1], buf[5:5 + n]))
        buf = buf[5 + n:]


def cancelled(k):
    """Take the cancels of task k (or older); True if one was for k."""
    global frames
    found = False
    keep = []
    for kind, body in frames:
        if kind == b"C":
            c = struct.unpack(">I", body)[0] if len(body) == 4 else k
            found = found or c == k
            if c <= k:
                continue
        keep.append((kind, body))
    frames = keep
    return found


def send(kind, body=b""):
    data = kind + struct.pack(">I", len(body)) + body
    while data:
        data = data[os.write(1, data):]


if os.environ.get("R3Q_PIPELINE") == "1":
    send(b"P")
while True:
    while not frames:
        fill(True)
    kind, cmd = frames.pop(0)
    if kind != b"T":
        continue
    seq += 1
    fill(False)
    if cancelled(seq):
        send(b"F", b"cancelled before it started")
        continue
    word, _, arg = cmd.partition(b" ")
    if word == b"pid":
        send(b"R", str(os.getpid()).encode())
    elif word == b"sleep":
        end = time.monotonic() + int(arg) / 1000
        while time.monotonic() < end and not cancelled(seq):
            select.select([0], [], [], max(0, end - time.monotonic()))
            fill(False)
        if time.monotonic() < end:
            send(b"F", b"cancelled")
        else:
            send(b"R", b"queued=%d" % any(k == b"T" for k, _ in frames))
    elif word == b"wait":
        while not cancelled(seq):
            fill(True)
        send(b"F", b"cancelled")
    elif word == b"touch":
        open(arg, "w").close()
        send(b"R", b"ok")
    elif word == b"half":
        send(b"H")
        send(b"R", b"half")
    elif word == b"exit":
        sys.exit(int(arg))

#!/usr/bin/python3
# A persistent fitness server for R3Q in Python 3 (standard library only):
# workerd starts one per execution thread and sends it task after task as
# frames on its stdin (workerd.conf(5), "Persistent kinds").  The payload is
# R3Q's es payload (u32 lu, u32 flags, f64 work_ms, then f64 x[], all
# little-endian); the answer is Ridge of x as one little-endian f64, bit for
# bit what the built-in ridge-lu gives.  work_ms is slept (flags and lu are
# ignored), watching for a cancel frame.  In workerd.conf:
#
#	exec ridge-py = persistent /usr/bin/python3 /usr/local/share/r3q/persistent.py
#
# A frame is a type byte, a 4-byte big-endian length, then that many bytes.
# stdout carries frames only: log to stderr.
import os, select, struct, sys, time

def read(n):
    b = b""
    while len(b) < n:
        chunk = os.read(0, n - len(b))
        if not chunk:
            sys.exit(0)  # workerd closed our stdin: stop
        b += chunk
    return b

def send(kind, body=b""):
    data = kind + struct.pack(">I", len(body)) + body
    while data:
        data = data[os.write(1, data):]

def work(ms):
    """Sleep ms milliseconds, 'H' half-way; False if a 'C' frame came."""
    end = time.monotonic() + ms / 1000
    half = ms == 0                      # no work, nothing to report
    while (left := end - time.monotonic()) > 0:
        if not half and left <= ms / 2000:
            send(b"H")
            half = True
        wait = left if half else left - ms / 2000
        if select.select([0], [], [], min(wait, 1.0))[0]:
            read(struct.unpack(">cI", read(5))[1])  # only a 'C' comes now
            return False
    if not half:
        send(b"H")
    return True

while True:
    kind, n = struct.unpack(">cI", read(5))
    p = read(n)
    if kind != b"T":
        continue                        # a 'C' that came after our answer
    if n < 16 or (n - 16) % 8:
        send(b"F", b"not an es payload: %d bytes" % n)
        continue
    lu, flags, work_ms = struct.unpack_from("<IId", p)
    if not work(work_ms):
        send(b"F", b"cancelled")
        continue
    partial = f = 0.0                   # Ridge as task_ridge sums it
    for x in struct.unpack_from("<%dd" % ((n - 16) // 8), p, 16):
        partial += x
        f += partial * partial
    send(b"R", struct.pack("<d", f))

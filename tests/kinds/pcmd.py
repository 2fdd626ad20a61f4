# A persistent process that does what each task's payload says:
#   pid        answer its pid (to tell a restart)
#   wait       wait for the cancel frame, answer F "cancelled"
#   exit N     say "dying" on stderr and exit with status N
#   halfframe  start an 'R' frame of 100 bytes, send 3 and exit
#   big N      answer N bytes
#   fail MSG   answer F MSG
#   unavail MSG  answer U MSG (the kind cannot run here)
#   hbody      an 'H' frame with a body (bad framing)
#   spam       200 KB on stderr, then answer "ok"
#   echo:DATA  answer DATA, streaming it back while it is read
#   early...   answer "early" without reading the rest of the payload
import os, struct, sys, time

def read(n):
    b = b""
    while len(b) < n:
        chunk = os.read(0, n - len(b))
        if not chunk:
            sys.exit(0)
        b += chunk
    return b

def write(data):
    while data:
        data = data[os.write(1, data):]

def send(kind, body=b""):
    write(kind + struct.pack(">I", len(body)) + body)

while True:
    kind, n = struct.unpack(">cI", read(5))
    if kind != b"T":
        read(n)
        continue
    first = read(min(n, 5))
    if first == b"echo:":
        left = n - 5
        write(b"R" + struct.pack(">I", left))
        while left > 0:
            chunk = os.read(0, min(left, 65536))
            write(chunk)
            left -= len(chunk)
        continue
    if first == b"early":
        send(b"R", b"early")
        continue
    cmd = first + read(n - len(first))
    word, _, arg = cmd.partition(b" ")
    if word == b"pid":
        send(b"R", str(os.getpid()).encode())
    elif word == b"sleep":
        time.sleep(int(arg) / 1000)
        send(b"R", b"slept")
    elif word == b"wait":
        read(5)
        send(b"F", b"cancelled")
    elif word == b"exit":
        os.write(2, b"dying\n")
        sys.exit(int(arg))
    elif word == b"halfframe":
        write(b"R" + struct.pack(">I", 100) + b"abc")
        sys.exit(0)
    elif word == b"big":
        send(b"R", b"x" * int(arg))
    elif word == b"fail":
        send(b"F", arg)
    elif word == b"unavail":
        send(b"U", arg)
    elif word == b"hbody":
        send(b"H", b"abc")
    elif word == b"spam":
        for i in range(2000):
            os.write(2, b"%099d\n" % i)
        send(b"R", b"ok")

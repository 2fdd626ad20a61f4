# A persistent process that answers a task with text, not a frame.
import os, struct

while True:
    head = os.read(0, 5)
    if not head:
        break
    os.read(0, struct.unpack(">I", head[1:])[0])
    os.write(1, b"hello, world\n")

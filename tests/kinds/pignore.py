# A persistent process that never answers and ignores the cancel frame.
import os, struct, time

head = os.read(0, 5)
os.read(0, struct.unpack(">I", head[1:])[0])
time.sleep(3600)

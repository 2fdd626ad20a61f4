# A module that fails to import, for r3q.serve (tests/regress/python.sh):
# each import appends the process id to $BROKEN_LOG first, so the test
# can count the processes workerd started.
import os

with open(os.environ["BROKEN_LOG"], "a") as f:
    f.write("%d\n" % os.getpid())
raise RuntimeError("broken on purpose")

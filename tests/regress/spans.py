#!/usr/bin/env python3
# spans.py JOURNAL SQL: run SQL, as the sqlite3 shell would ('|' between
# columns, a line a row), against masterd's journal with the task
# executions unpacked into a table spans of schema version 2's columns
# (job, gen, idx, task, worker, slot, start, "end", outcome, replica).
# Since version 3 (issue 26) masterd packs them into rows of execs
# (masterd/journal.c, journal_exec_put()): the tests and benchmarks that
# count executions in SQL read them through this.  The journal is opened
# read-only and left as it is; read it with masterd stopped.
import sqlite3
import sys


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << shift
        if c < 0x80:
            return v, i
        shift += 7


def unzigzag(base, z):
    d = (z >> 1) ^ -(z & 1)
    return (base + d) & 0xffffffffffffffff


def i64(u):
    return u - (1 << 64) if u >= 1 << 63 else u


def unpack(job, n, blob):
    i, prev, names = 0, 0, []
    for _ in range(n):
        gen, i = varint(blob, i)
        idx, i = varint(blob, i)
        task, i = varint(blob, i)
        k, i = varint(blob, i)
        if k == 0:
            ln, i = varint(blob, i)
            names.append(blob[i:i + ln].decode("utf-8", "replace")[:63])
            i += ln
            k = len(names)
        slot, i = varint(blob, i)
        zs, i = varint(blob, i)
        start = unzigzag(prev, zs)
        ze, i = varint(blob, i)
        end = unzigzag(start, ze)
        outcome, i = varint(blob, i)
        replica, i = varint(blob, i)
        prev = start
        yield (job, gen, idx, i64(task), names[k - 1], slot, i64(start),
               i64(end), outcome, replica)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: spans.py JOURNAL SQL")
    db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
    version = db.execute("PRAGMA user_version").fetchone()[0]
    db.execute("ATTACH ':memory:' AS x")
    if version >= 3:
        db.execute("CREATE TABLE x.spans (job INTEGER, gen INTEGER, "
                   "idx INTEGER, task INTEGER, worker TEXT, slot INTEGER, "
                   "start INTEGER, \"end\" INTEGER, outcome INTEGER, "
                   "replica INTEGER)")
        rows = db.execute("SELECT job, n, spans FROM execs "
                          "ORDER BY job, id").fetchall()
        for job, n, blob in rows:
            db.executemany("INSERT INTO x.spans VALUES "
                           "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           unpack(job, n, blob or b""))
    for row in db.execute(sys.argv[2]):
        print("|".join("" if v is None else str(v) for v in row))


main()

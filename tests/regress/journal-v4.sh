#!/bin/sh
# A journal of schema version 4 (results and executions packed in WITHOUT
# ROWID tables) is upgraded to version 5 (the same rows in rowid tables,
# keyed by job and number) and goes on as it was:
# tests/regress/journal-upgrade.sh.
V=4
COUNT4='SELECT sum(n) FROM results WHERE job = 4'
. "${top_srcdir:-.}/tests/regress/journal-upgrade.sh"

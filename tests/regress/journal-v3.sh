#!/bin/sh
# A journal of schema version 3 (a row of results per accepted result) is
# upgraded to version 5 (results packed a loop pass a row, rowid tables)
# and goes on as it was: tests/regress/journal-upgrade.sh.
V=3
COUNT4='SELECT count(*) FROM results WHERE job = 4'
. "${top_srcdir:-.}/tests/regress/journal-upgrade.sh"

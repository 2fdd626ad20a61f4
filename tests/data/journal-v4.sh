#!/bin/sh
# How tests/data/journal-v4.db and tests/data/journal-v4-report/ were made,
# with the masterd of schema version 4 (results and executions packed in
# WITHOUT ROWID tables), 277ad86:
#   top_builddir=/path/to/a/v4/build top_srcdir=. sh tests/data/journal-v4.sh
# (tests/data/journal-fixture.sh says what the file holds.)
V=4
. "${top_srcdir:-.}/tests/data/journal-fixture.sh"

#!/bin/sh
# How tests/data/journal-v3.db and tests/data/journal-v3-report/ were made,
# with the masterd of schema version 3 (a row of results per accepted
# result), 2bf7fdc:
#   top_builddir=/path/to/a/v3/build top_srcdir=. sh tests/data/journal-v3.sh
# (tests/data/journal-fixture.sh says what the file holds.)
V=3
. "${top_srcdir:-.}/tests/data/journal-fixture.sh"

#!/bin/sh
# Killed by SIGSEGV, after a line on stderr.
echo "about to crash" >&2
kill -SEGV $$

#!/bin/sh
# Fails with exit status 3, after two lines on stderr.
echo "first line" >&2
echo "it went wrong" >&2
exit 3

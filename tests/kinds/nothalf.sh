#!/bin/sh
# Lines that are almost "r3q: half", then the real one twice, then fails.
printf 'r3q: hal\nr3q: halfway\nr3q: half\nr3q: half\n' >&2
exit 1

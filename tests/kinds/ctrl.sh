#!/bin/sh
# Control characters on stderr, then fails.
printf 'bad\001\033[31mred\tx\n' >&2
exit 1

#!/bin/sh
# 200 lines on stderr, more than the tail keeps, then fails.
i=1
while [ $i -le 200 ]; do
	echo "line $i" >&2
	i=$((i + 1))
done
exit 1

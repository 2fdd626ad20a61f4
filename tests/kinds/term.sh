#!/bin/sh
# Ignores SIGTERM (and so does its child): only SIGKILL stops it.  Creates
# $READY, if set, once SIGTERM is ignored.
trap '' TERM
echo started >&2
if [ -n "$READY" ]; then : > "$READY"; fi
sleep 60

#!/bin/sh
# Ignores SIGTERM (and so does its child): only SIGKILL stops it.
trap '' TERM
echo started >&2
sleep 60

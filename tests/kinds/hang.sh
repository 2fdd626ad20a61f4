#!/bin/sh
# Hangs far past any timeout, in a child of the shell (its process group
# must be signalled, not just the shell).
sleep 60 &
wait

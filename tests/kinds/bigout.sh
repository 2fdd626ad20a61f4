#!/bin/sh
# Writes to stdout without end: over any max_output.
exec yes

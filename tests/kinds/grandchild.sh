#!/bin/sh
# Leaves a background process behind and exits at once, printing its pid.
sleep 60 > /dev/null 2>&1 &
echo $!

#!/bin/sh
# Prints its working directory and litters it: a tree it cannot read or
# write, and symbolic links out of it ($OUTSIDE, /), which the cleanup must
# not follow.
pwd
mkdir -p a/b/c
echo x > a/b/c/f
ln -s "$OUTSIDE" link
ln -s / root
ln -s "$(dirname "$OUTSIDE")" dirlink
chmod 000 a/b/c
chmod 500 a/b

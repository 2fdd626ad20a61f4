#!/usr/bin/env bash
# bench/tls-floor.sh [N]: the heap one idle mutual-TLS connection costs its
# server with R3Q's TLS settings (bench/tls-floor.c), the floor under
# masterd's memory per directly connected worker (bench/memory,
# bench/relay-scale.sh).  N connections (default 1000).  Run from the top
# of the tree after a build in build/ (or top_builddir=DIR).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
b=${top_builddir:-$top/build}
[ -x "$b/bench/tls-floor" ] || { echo "build first: make -C $b bench/tls-floor" >&2; exit 1; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
"$top/scripts/mkcerts" "$d" w1 > /dev/null
n=${1:-1000}
ulimit -n $((n + 64)) 2>/dev/null || ulimit -n "$(ulimit -Hn)"
"$b/bench/tls-floor" "$d" "$n"

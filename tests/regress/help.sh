# Help that is asked for is an answer, not an error: -h and --help of
# masterd, workerd and r3qctl, and of every r3qctl command, print the
# usage summary on standard output, nothing on standard error, and exit 0.
# A usage error still prints the summary on standard error, nothing on
# standard output, and exits 64.  --version of every installed program
# (and r3q-sim where it is built) prints one line naming the program, its
# version and the protocol's on standard output, and exits 0.  No daemon
# needs to run.
. "${top_srcdir:-.}/tests/regress/lib.sh"

# asked NAME ARGS...: help asked for.
asked() {
	_name=$1
	shift
	rc=0
	"$@" > "$T/out" 2> "$T/err" || rc=$?
	[ "$rc" -eq 0 ] || fail "$_name: exit $rc, not 0"
	grep -q '^usage: ' "$T/out" || fail "$_name: no usage on stdout"
	[ -s "$T/err" ] && fail "$_name: wrote to stderr: $(cat "$T/err")"
	return 0
}

# refused NAME ARGS...: a usage error.
refused() {
	_name=$1
	shift
	rc=0
	"$@" > "$T/out" 2> "$T/err" || rc=$?
	[ "$rc" -eq 64 ] || fail "$_name: exit $rc, not 64"
	grep -q '^usage: ' "$T/err" || fail "$_name: no usage on stderr"
	[ -s "$T/out" ] && fail "$_name: wrote to stdout: $(cat "$T/out")"
	return 0
}

for d in "$MASTERD" "$WORKERD" "$R3QCTL"; do
	n=$(basename "$d")
	asked "$n -h" "$d" -h
	asked "$n --help" "$d" --help
	refused "$n -Z" "$d" -Z
	refused "$n --bogus" "$d" --bogus
done
refused "masterd extra" "$MASTERD" extra
refused "workerd extra" "$WORKERD" extra
refused "r3qctl" "$R3QCTL"
ok "masterd, workerd and r3qctl: -h and --help on stdout with 0, errors on stderr with 64"

# --version: "NAME VERSION (R3Q protocol N)", N the one of common/frame.h.
proto=$(sed -n 's/^#define R3Q_PROTOCOL[[:space:]]*\([0-9]*\).*/\1/p' \
    "$top_srcdir/common/frame.h")
[ -n "$proto" ] || fail "no R3Q_PROTOCOL in common/frame.h"
ver=$(sed -n "s/^AC_INIT(\[[^]]*\], *\[\([^]]*\)\].*/\1/p" "$top_srcdir/configure.ac")
progs="$MASTERD $WORKERD $R3QCTL"
[ -x "$top_builddir/sim/r3q-sim" ] && progs="$progs $top_builddir/sim/r3q-sim"
for d in $progs; do
	n=$(basename "$d")
	rc=0
	"$d" --version > "$T/out" 2> "$T/err" || rc=$?
	[ "$rc" -eq 0 ] || fail "$n --version: exit $rc"
	[ -s "$T/err" ] && fail "$n --version wrote to stderr: $(cat "$T/err")"
	[ "$(cat "$T/out")" = "$n ${ver:-?} (R3Q protocol $proto)" ] ||
	    fail "$n --version: '$(cat "$T/out")', want '$n $ver (R3Q protocol $proto)'"
	"$d" -h | grep -q -- '--version' || fail "$n -h does not list --version"
done
ok "--version of $(echo "$progs" | wc -w) programs: name, version $ver, protocol $proto, on stdout with 0"

# Help after a command needs no master; the socket must not be touched.
export R3Q_CONTROL="$T/no.sock"
asked "r3qctl help" "$R3QCTL" help
for c in es "submit es" submit wait "wait 3" result "result 3" jobs workers \
    cancel "cancel 3" drain "drain w1" "drain --wait w1" "report 3" map \
    "map echo" bnb "bnb pfsp" \
    "bnb pfsp f --local" islands "islands --local"; do
	# shellcheck disable=SC2086
	asked "r3qctl $c -h" "$R3QCTL" $c -h
	# shellcheck disable=SC2086
	asked "r3qctl $c --help" "$R3QCTL" $c --help
done
asked "r3qctl es --mu 3 --help" "$R3QCTL" es --mu 3 --help
for c in "es --bogus" "es -Z" "jobs extra" "workers extra" wait "wait 1 2" \
    "result --bogus 1" "report -Z 1" "help me" bnb "bnb --bogus" drain \
    "drain a b" "drain --bogus w1" \
    "bnb pfsp" "bnb pfsp f g" "islands --bogus" "islands -Z"; do
	# shellcheck disable=SC2086
	refused "r3qctl $c" "$R3QCTL" $c
done
ok "every r3qctl command: --help on stdout with 0, usage errors on stderr with 64"

# The Python package's commands (python/r3q): argparse's help, and usage
# errors with 64 as above.
PY=${PYTHON:-/usr/bin/python3}
PYTHONPATH=$(cd "$top_srcdir" && pwd)/python
export PYTHONPATH
asked "python3 -m r3q --help" "$PY" -m r3q --help
asked "python3 -m r3q -h" "$PY" -m r3q -h
asked "python3 -m r3q map --help" "$PY" -m r3q map --help
asked "python3 -m r3q.serve --help" "$PY" -m r3q.serve --help
asked "python3 -m r3q serve --help" "$PY" -m r3q serve --help
refused "python3 -m r3q" "$PY" -m r3q
refused "python3 -m r3q --bogus" "$PY" -m r3q --bogus
refused "python3 -m r3q.serve" "$PY" -m r3q.serve
refused "python3 -m r3q.serve a b" "$PY" -m r3q.serve a:b c
ok "python3 -m r3q and python3 -m r3q.serve: --help on stdout with 0, errors on stderr with 64"

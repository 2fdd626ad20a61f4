# Golden configuration tests, as OpenBGPD does them: each tests/conf/X.conf
# is read by its daemon (masterd-* or workerd-*) with -nv, the effective
# configuration printed must equal tests/conf/X.ok, and that output must
# read back to itself.  In X.ok, @r3qconfdir@, @r3qrundir@ and
# @r3qstatedir@ stand for the directories configure chose (make check
# passes them).  -n also checks the TLS files a configuration names, which
# the golden ones do not have here: -nv prints the configuration before
# that check, so a run that stops there (status 78, a TLS file named on
# standard error) still shows what was parsed.  Each is read from a
# private copy (umask 077): a workerd configuration that holds a join
# token is refused when others may read it, and git keeps files 0644.
. "${top_srcdir:-.}/tests/regress/lib.sh"
umask 077

for v in r3qconfdir r3qrundir r3qstatedir; do
	eval "[ -n \"\${$v:-}\" ]" || fail "$v is not set: run me from make check"
done
# nv BIN CONF OUT: BIN -nv CONF into OUT; fails unless it parsed.
nv() {
	_rc=0
	"$1" -nv -f "$2" > "$3" 2> "$3.err" || _rc=$?
	[ "$_rc" -eq 0 ] || { [ "$_rc" -eq 78 ] && [ -s "$3" ] &&
	    grep -qE '\.(pem|key): ' "$3.err"; } ||
	    fail "$(basename "$2"): status $_rc: $(cat "$3.err")"
}

n=0
for conf in "$top_srcdir"/tests/conf/*.conf; do
	name=$(basename "$conf" .conf)
	case $name in
	masterd-*) bin=$MASTERD ;;
	workerd-*) bin=$WORKERD ;;
	*) fail "$conf: name it masterd-* or workerd-*" ;;
	esac
	cp "$conf" "$T/$name.conf"
	nv "$bin" "$T/$name.conf" "$T/$name.out"
	sed -e "s|@r3qconfdir@|$r3qconfdir|g" -e "s|@r3qrundir@|$r3qrundir|g" \
	    -e "s|@r3qstatedir@|$r3qstatedir|g" \
	    "$top_srcdir/tests/conf/$name.ok" > "$T/$name.ok"
	diff -u "$T/$name.ok" "$T/$name.out" > "$T/diff" ||
	    fail "$name: effective config differs from $name.ok: $(cat "$T/diff")"
	nv "$bin" "$T/$name.out" "$T/$name.again"
	cmp -s "$T/$name.out" "$T/$name.again" || fail "$name: not a fixed point"
	n=$((n + 1))
done
[ "$n" -ge 4 ] || fail "only $n golden configs found"
ok "$n golden configs print as expected and read back to themselves"

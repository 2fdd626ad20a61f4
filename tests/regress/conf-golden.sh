# Golden configuration tests, as OpenBGPD does them: each tests/conf/X.conf
# is read by its daemon (masterd-* or workerd-*) with -nv, the effective
# configuration printed must equal tests/conf/X.ok, and that output must
# read back to itself.  In X.ok, @r3qconfdir@, @r3qrundir@ and
# @r3qstatedir@ stand for the directories configure chose (make check
# passes them).
. "${top_srcdir:-.}/tests/regress/lib.sh"

for v in r3qconfdir r3qrundir r3qstatedir; do
	eval "[ -n \"\${$v:-}\" ]" || fail "$v is not set: run me from make check"
done

n=0
for conf in "$top_srcdir"/tests/conf/*.conf; do
	name=$(basename "$conf" .conf)
	case $name in
	masterd-*) bin=$MASTERD ;;
	workerd-*) bin=$WORKERD ;;
	*) fail "$conf: name it masterd-* or workerd-*" ;;
	esac
	"$bin" -nv -f "$conf" > "$T/$name.out" 2>&1 || fail "$name: $(cat "$T/$name.out")"
	sed -e "s|@r3qconfdir@|$r3qconfdir|g" -e "s|@r3qrundir@|$r3qrundir|g" \
	    -e "s|@r3qstatedir@|$r3qstatedir|g" \
	    "$top_srcdir/tests/conf/$name.ok" > "$T/$name.ok"
	diff -u "$T/$name.ok" "$T/$name.out" > "$T/diff" ||
	    fail "$name: effective config differs from $name.ok: $(cat "$T/diff")"
	"$bin" -nv -f "$T/$name.out" > "$T/$name.again" 2>&1 ||
	    fail "$name: the printed config does not parse: $(cat "$T/$name.again")"
	cmp -s "$T/$name.out" "$T/$name.again" || fail "$name: not a fixed point"
	n=$((n + 1))
done
[ "$n" -ge 4 ] || fail "only $n golden configs found"
ok "$n golden configs print as expected and read back to themselves"

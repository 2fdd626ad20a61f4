# The sample configurations etc/masterd.conf and etc/workerd.conf (made
# from their .in, installed by make install) list every key the daemon's
# parser knows, once each, commented out at its built-in default, and
# nothing else: the keys of the "#key = value" lines are the keys -nv
# prints (the parser's table), and the sample with those lines uncommented
# reads to exactly the defaults -nv prints for an empty file.
. "${top_srcdir:-.}/tests/regress/lib.sh"

for d in masterd:"$MASTERD" workerd:"$WORKERD"; do
	name=${d%%:*} bin=${d#*:}
	sample=$top_builddir/etc/$name.conf
	[ -f "$sample" ] || fail "$sample is missing (make builds it)"
	# The effective configuration even if -n finds fault with files
	# that are not there.
	"$bin" -nv -f /dev/null > "$T/$name.defaults" 2> "$T/$name.err" || true
	[ -s "$T/$name.defaults" ] ||
	    fail "$name -nv printed nothing: $(cat "$T/$name.err")"

	sed 's/ =.*//' "$T/$name.defaults" | sort > "$T/$name.keys"
	sed -n 's/^#\([a-z_]*\) = .*/\1/p' "$sample" | sort > "$T/$name.skeys"
	sort -u "$T/$name.skeys" | cmp -s - "$T/$name.skeys" ||
	    fail "$name.conf lists a key twice: $(uniq -d "$T/$name.skeys")"
	diff "$T/$name.keys" "$T/$name.skeys" > "$T/diff" ||
	    fail "keys of $name's parser (<) and of $name.conf (>) differ: $(cat "$T/diff")"
	! grep -nE '^[^#[:space:]]' "$sample" > "$T/set" ||
	    fail "$name.conf sets a key instead of showing it: $(cat "$T/set")"

	sed 's/^#\([a-z_]* = \)/\1/' "$sample" > "$T/$name.uncommented"
	"$bin" -nv -f "$T/$name.uncommented" > "$T/$name.sample" 2> "$T/$name.err" || true
	[ -s "$T/$name.sample" ] ||
	    fail "$name.conf does not read back: $(cat "$T/$name.err")"
	diff "$T/$name.defaults" "$T/$name.sample" > "$T/diff" ||
	    fail "defaults of $name (<) and $name.conf's values (>) differ: $(cat "$T/diff")"
	ok "$name.conf shows every key at its default, and nothing else"
done

# Every fuzz target runs clean on its seed corpus (fuzz/corpus/TARGET) and
# on every input that ever crashed it (fuzz/regress/TARGET): with the
# replay driver of a build without --enable-fuzz, or with libFuzzer, ASan
# and UBSan in one with it.  A crash fixed stays fixed.
. "${top_srcdir:-.}/tests/regress/lib.sh"

TARGETS="frame master-worker master-client workerd conf-masterd conf-workerd
taillard matrix journal lib trace seal"
for t in $TARGETS; do
	bin=$top_builddir/fuzz/$t
	[ -x "$bin" ] || fail "$bin is not built"
	find "$top_srcdir/fuzz/corpus/$t" "$top_srcdir/fuzz/regress/$t" \
	    -type f ! -name 'README*' 2>/dev/null | sort > "$T/$t.files"
	n=$(wc -l < "$T/$t.files")
	[ "$n" -gt 0 ] || fail "$t: no seed inputs in fuzz/corpus/$t"
	# shellcheck disable=SC2046
	if ! "$bin" $(cat "$T/$t.files") > "$T/$t.log" 2>&1; then
		grep -E 'ERROR|SUMMARY|runtime error|replay:|Running' \
		    "$T/$t.log" | tail -5 >&2
		fail "$t: crashed on an input (see above)"
	fi
	# the replay driver says how many it ran; libFuzzer one line each
	ran=$(sed -n 's/^replay: \([0-9]*\) inputs run$/\1/p' "$T/$t.log")
	[ -n "$ran" ] || ran=$(grep -c '^Executed ' "$T/$t.log" || true)
	[ "$ran" = "$n" ] || fail "$t: ran $ran of its $n inputs"
	ok "$t: $n inputs replayed"
done

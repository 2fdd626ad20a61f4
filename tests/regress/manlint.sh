# The man pages are lint-clean, and every flag in a program's --help and
# every key its parser accepts is documented in its page, and the other
# way round.
. "${top_srcdir:-.}/tests/regress/lib.sh"

M=$top_builddir/man
if [ -n "${MANDOC:-}" ] || command -v mandoc > /dev/null; then
	out=$(${MANDOC:-mandoc} -Tlint -Wwarning "$M"/*.[1358] 2>&1 || true)
	[ -z "$out" ] || fail "mandoc -Tlint: $out"
	ok "mandoc -Tlint is clean"
else
	fail "mandoc is not installed (scripts/check installs it)"
fi

# flags PROGRAM: the single-letter flags its usage message lists.
flags() {
	"$1" -h 2>&1 | grep -oE '^ +-[a-zA-Z]' | tr -d ' -' | sort -u
}

# The flags a page documents with .Fl X in its SYNOPSIS or options list.
page_flags() {
	grep -oE '^\.(It )?Fl [a-zA-Z]( |$)' "$1" | sed 's/.*Fl \(.\).*/\1/' |
	    sort -u
}

for p in masterd:"$MASTERD":masterd.8 workerd:"$WORKERD":workerd.8 \
    r3qctl:"$R3QCTL":r3qctl.1; do
	name=${p%%:*}; rest=${p#*:}; bin=${rest%%:*}; page=$M/${rest#*:}
	flags "$bin" > "$T/help"
	[ -s "$T/help" ] || fail "$name -h lists no flags"
	page_flags "$page" > "$T/page"
	diff "$T/help" "$T/page" > "$T/diff" ||
	    fail "$name: flags in -h (<) and $page (>) differ: $(cat "$T/diff")"
	ok "$name: every flag of -h is in its page and back"
done

# Long options.
for p in masterd:"$MASTERD":masterd.8 workerd:"$WORKERD":workerd.8 \
    r3qctl:"$R3QCTL":r3qctl.1; do
	name=${p%%:*}; rest=${p#*:}; bin=${rest%%:*}; page=$M/${rest#*:}
	"$bin" -h 2>&1 | grep -oE -- '--[a-z-]+' | sed 's/^--//' | sort -u > "$T/help"
	[ -s "$T/help" ] || fail "$name -h lists no long options"
	# .It Fl \-x, .Op Fl \-x, and a synonym: .It Fl x , Fl \-y.
	grep -oE '^\.(It|Op) (Fl [a-zA-Z] , )?Fl \\-[a-z][a-z-]*' "$page" |
	    sed 's/.*Fl \\-//' | sort -u > "$T/page"
	diff "$T/help" "$T/page" > "$T/diff" ||
	    fail "$name: long options in -h (<) and $page (>) differ: $(cat "$T/diff")"
	ok "$name: every long option of -h is in its page and back"
done

# Keys: what -nv prints is every key the parser accepts.  workerd's kind
# lines ("exec NAME = ...") print only when there are kinds: a file with
# one of each adds their first words.
cat > "$T/kinds.conf" <<EOF
exec k = /bin/cat
plugin p = $top_builddir/examples/.libs/ridge-plugin.so
timeout k = 1s
kill_grace k = 1s
env k = A=1
env = B=1
EOF
for d in masterd:"$MASTERD" workerd:"$WORKERD"; do
	name=${d%%:*}; bin=${d#*:}
	{
		"$bin" -nv -f /dev/null || true
		[ "$name" = masterd ] ||
		    "$bin" -nv -f "$T/kinds.conf" 2>/dev/null || true
	} | sed 's/[ =].*//' | sort -u > "$T/keys"
	[ -s "$T/keys" ] || fail "$name -nv printed no keys"
	grep -oE '^\.It Ic [a-z_]+' "$M/$name.conf.5" | sed 's/.* //' |
	    sort -u > "$T/pkeys"
	diff "$T/keys" "$T/pkeys" > "$T/diff" ||
	    fail "$name: keys of the parser (<) and $name.conf(5) (>) differ: $(cat "$T/diff")"
	ok "$name: every config key is in $name.conf(5) and back"
done

# make install puts the daemons, r3qctl, the man pages, the sample configs,
# the systemd units, sysusers and tmpfiles where they belong; an installed
# config is never overwritten; the installed units pass systemd-analyze
# verify (with ExecStart pointed at the DESTDIR copy of the daemons).
. "${top_srcdir:-.}/tests/regress/lib.sh"

R=$T/root
make -s -C "$top_builddir" install DESTDIR="$R" > "$T/install.log" 2>&1 ||
    fail "make install: $(tail -n 5 "$T/install.log")"
for f in sbin/masterd sbin/workerd bin/r3qctl etc/r3q/masterd.conf \
    etc/r3q/workerd.conf share/man/man8/masterd.8 share/man/man8/workerd.8 \
    share/man/man1/r3qctl.1 share/man/man5/masterd.conf.5 \
    share/man/man5/workerd.conf.5; do
	[ -n "$(find "$R" -path "*/$f" -print -quit)" ] || fail "not installed: $f"
done
for f in masterd.service workerd.service sysusers.d/r3q.conf tmpfiles.d/r3q.conf; do
	[ -n "$(find "$R" -path "*/$f" -print -quit)" ] || fail "not installed: $f"
done
ok "make install puts every file in place"

conf=$(find "$R" -path '*/etc/r3q/masterd.conf')
echo "policy = wq  # mine" >> "$conf"
make -s -C "$top_builddir" install DESTDIR="$R" > "$T/install.log" 2>&1 ||
    fail "second make install failed"
grep -q "# mine" "$conf" || fail "make install overwrote an installed config"
ok "an installed config is never overwritten"

command -v systemd-analyze > /dev/null ||
    fail "systemd-analyze is missing (scripts/check installs systemd)"
for u in masterd workerd; do
	unit=$(find "$R" -name "$u.service")
	bin=$(find "$R" -path "*/sbin/$u")
	grep -q '^Type=notify$' "$unit" || fail "$u.service is not Type=notify"
	grep -q "^ExecStart=/.*/$u -f /.*/r3q/$u.conf$" "$unit" ||
	    fail "$u.service: paths not substituted: $(grep ExecStart "$unit")"
	sed "s|^ExecStart=[^ ]*|ExecStart=$bin|" "$unit" > "$T/$u.service"
	systemd-analyze verify --man=no "$T/$u.service" > "$T/verify.out" 2>&1 ||
	    fail "systemd-analyze verify $u.service: $(cat "$T/verify.out")"
	[ ! -s "$T/verify.out" ] ||
	    fail "systemd-analyze verify $u.service warns: $(cat "$T/verify.out")"
done
ok "systemd-analyze verify passes on both units"

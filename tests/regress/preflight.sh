# `masterd -n` and `workerd -n` are a real preflight of the TLS files, and
# start-up makes the same checks: a missing file, a key that is not the
# certificate's, a certificate of the other daemon's role, one from another
# CA, one expired and one not yet valid, a file that holds no certificate
# or no key, and a key encrypted with a passphrase (without prompting for
# it) are each refused with status 78 (EX_CONFIG) and `file: what is
# wrong`, by -n and at start-up alike.
# With -u, -n checks that the given user can read the files: a key only
# root may read is refused for user nobody, and passes once nobody owns it.
# Good files pass.
. "${top_srcdir:-.}/tests/regress/lib.sh"

mkcerts w1
"$MKCERTS" "$T/other" w9 > /dev/null
C=$T/certs
issue() {
	"$TESTPEER" issue "$C/ca.pem" "$C/ca.key" "$@" > "$T/issue.out" 2>&1 ||
	    fail "cannot issue $*: $(cat "$T/issue.out")"
}
issue worker old -200000 -100000 "$C/old"
issue worker new 100000 200000 "$C/new"
issue master mold -200000 -100000 "$C/mold"
printf 'not a certificate\n' > "$C/junk.pem"
openssl pkey -in "$C/w1.key" -aes256 -passout pass:secret -out "$C/enc.key" ||
    fail "cannot encrypt a key"

# conf DAEMON CERT KEY [CA]: $T/DAEMON.conf naming those files.
conf() {
	if [ "$1" = masterd ]; then
		printf 'listen = 127.0.0.1:0\ncontrol = %s\njournal = none\n' \
		    "$T/ctl.sock" > "$T/$1.conf"
	else
		printf 'master = 127.0.0.1:1\nreconnect_max = 1s\n' > "$T/$1.conf"
	fi
	printf 'ca = %s\ncert = %s\nkey = %s\n' "${4:-$C/ca.pem}" "$2" "$3" \
	    >> "$T/$1.conf"
}

bin() {
	if [ "$1" = masterd ]; then echo "$MASTERD"; else echo "$WORKERD"; fi
}

# good DAEMON CERT KEY [CA]: -n passes.
good() {
	conf "$@"
	"$(bin "$1")" -n -f "$T/$1.conf" > "$T/out" 2>&1 ||
	    fail "$1 -n refused good files: $(cat "$T/out")"
	ok "$1 -n passes $(basename "$2") and $(basename "$3")"
}

# bad DAEMON CERT KEY CA MESSAGE: -n and start-up both exit 78 saying
# MESSAGE.
bad() {
	conf "$1" "$2" "$3" "$4"
	rc=0
	"$(bin "$1")" -n -f "$T/$1.conf" > "$T/out" 2>&1 || rc=$?
	[ "$rc" -eq 78 ] || fail "$1 -n exited $rc, wanted 78 for '$5': $(cat "$T/out")"
	grep -qF -- "$5" "$T/out" || fail "$1 -n: wanted '$5', got: $(cat "$T/out")"
	rc=0
	timeout 10 "$(bin "$1")" -d -f "$T/$1.conf" > "$T/out" 2>&1 || rc=$?
	[ "$rc" -eq 78 ] || fail "$1 started (status $rc) despite '$5': $(cat "$T/out")"
	grep -qF -- "$5" "$T/out" || fail "$1 start-up: wanted '$5', got: $(cat "$T/out")"
	ok "$1 -n and start-up: $5"
}

good masterd "$C/master.pem" "$C/master.key"
good workerd "$C/w1.pem" "$C/w1.key"

bad masterd "$C/master.pem" "$C/master.kye" "$C/ca.pem" \
    "$C/master.kye: No such file or directory"
bad workerd "$C/w1.pem" "$C/w1.key" "$C/ca.pen" \
    "$C/ca.pen: No such file or directory"
bad masterd "$C/master.pem" "$C/w1.key" "$C/ca.pem" \
    "$C/w1.key: does not match certificate $C/master.pem"
bad workerd "$C/w1.pem" "$C/master.key" "$C/ca.pem" \
    "$C/master.key: does not match certificate $C/w1.pem"
bad masterd "$C/w1.pem" "$C/w1.key" "$C/ca.pem" \
    "$C/w1.pem: role 'worker', masterd needs 'master'"
bad workerd "$C/master.pem" "$C/master.key" "$C/ca.pem" \
    "$C/master.pem: role 'master', workerd needs 'worker'"
bad masterd "$C/master.pem" "$C/master.key" "$T/other/ca.pem" \
    "$C/master.pem: not issued by the CA in $T/other/ca.pem"
bad workerd "$T/other/w9.pem" "$T/other/w9.key" "$C/ca.pem" \
    "$T/other/w9.pem: not issued by the CA in $C/ca.pem"
bad masterd "$C/mold.pem" "$C/mold.key" "$C/ca.pem" "$C/mold.pem: expired on 20"
bad workerd "$C/old.pem" "$C/old.key" "$C/ca.pem" "$C/old.pem: expired on 20"
bad workerd "$C/new.pem" "$C/new.key" "$C/ca.pem" "$C/new.pem: not valid before 20"
bad workerd "$C/junk.pem" "$C/w1.key" "$C/ca.pem" "$C/junk.pem: no certificate in it"
bad masterd "$C/master.pem" "$C/master.pem" "$C/ca.pem" "$C/master.pem: no private key in it"
bad workerd "$C/w1.pem" "$C/enc.key" "$C/ca.pem" \
    "$C/enc.key: the key is encrypted; the daemons need it without a passphrase"

# -u checks as another user, which only root can do.
rc=0
"$WORKERD" -f "$T/workerd.conf" -u nobody > "$T/out" 2>&1 || rc=$?
[ "$rc" -eq 64 ] || fail "-u without -n exited $rc"
ok "-u without -n is a usage error"
if [ "$(id -u)" -ne 0 ] || ! id nobody > /dev/null 2>&1; then
	ok "# SKIP -u: not root, or no user nobody"
	exit 0
fi
chmod 755 "$T" "$C"
chmod 600 "$C/w1.key"
chmod 644 "$C/ca.pem" "$C/w1.pem"
conf workerd "$C/w1.pem" "$C/w1.key"
"$WORKERD" -n -f "$T/workerd.conf" > "$T/out" 2>&1 || fail "root cannot read: $(cat "$T/out")"
rc=0
"$WORKERD" -n -u nobody -f "$T/workerd.conf" > "$T/out" 2>&1 || rc=$?
[ "$rc" -eq 78 ] && grep -qF "$C/w1.key: user nobody cannot read it: Permission denied" "$T/out" ||
    fail "-u nobody: status $rc: $(cat "$T/out")"
ok "workerd -n -u nobody: a key only root may read is refused"
chown nobody "$C/w1.key"
"$WORKERD" -n -u nobody -f "$T/workerd.conf" > "$T/out" 2>&1 ||
    fail "-u nobody refused a key nobody owns: $(cat "$T/out")"
ok "workerd -n -u nobody passes once nobody owns the key"
chmod 600 "$C/master.key"
conf masterd "$C/master.pem" "$C/master.key"
rc=0
"$MASTERD" -n -u nobody -f "$T/masterd.conf" > "$T/out" 2>&1 || rc=$?
[ "$rc" -eq 78 ] && grep -qF "$C/master.key: user nobody cannot read it" "$T/out" ||
    fail "masterd -u nobody: status $rc: $(cat "$T/out")"
ok "masterd -n -u nobody: a key only root may read is refused"

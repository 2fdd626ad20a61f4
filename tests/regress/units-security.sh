# The systemd units' exposure, as systemd-analyze security rates it:
# masterd.service at 2.0 or below ("OK"), and workerd.service at 2.1 or
# below (still "OK"): the 0.7 of the capabilities and system calls it
# needs to run the kinds as slot users (workerd.conf(5), "Slot users")
# took it from 1.4 to 2.1.  Each unit may fail only the checks its comments
# and its man page (FILES) say it must, so a directive dropped by mistake
# fails here even while the score stays under 2.0; every relaxation so
# allowed is named in the daemon's man page.  Offline mode reads the unit
# files built in etc/ and needs no systemd running.  SKIP (77) where
# systemd-analyze is missing or has no offline mode.
. "${top_srcdir:-.}/tests/regress/lib.sh"

if ! command -v systemd-analyze > /dev/null; then
	echo "SKIP: systemd-analyze is not installed (Debian's systemd package)"
	exit 77
fi
if ! systemd-analyze security --help 2>&1 | grep -q -- '--offline'; then
	echo "SKIP: systemd-analyze $(systemd-analyze --version | head -n 1) has no --offline"
	exit 77
fi

# check UNIT MAX ALLOWED...: UNIT (in etc/ of the build tree) is rated at
# MAX or below, and fails no check but the ALLOWED ones.
check() {
	_u=$1 _max=$2
	shift 2
	_f=$top_builddir/etc/$_u.service
	[ -f "$_f" ] || fail "$_f is not built"
	cp "$_f" "$T/$_u.service"
	systemd-analyze security --offline=yes --no-pager "$T/$_u.service" \
	    > "$T/$_u.out" 2>&1 || true
	_lvl=$(sed -n "s/.*Overall exposure level for $_u.service: \([0-9.]*\).*/\1/p" \
	    "$T/$_u.out")
	[ -n "$_lvl" ] || fail "systemd-analyze security $_u.service: $(tail -n 5 "$T/$_u.out")"
	awk -v l="$_lvl" -v m="$_max" 'BEGIN { exit !(l + 0 <= m + 0) }' ||
	    fail "$_u.service is rated $_lvl, above $_max: $(grep '✗' "$T/$_u.out")"
	# The failed checks, by directive (RestrictAddressFamilies=~AF_UNIX
	# -> RestrictAddressFamilies).
	grep '✗' "$T/$_u.out" | awk '{ print $2 }' | sed 's/[=~].*//' |
	    sort -u > "$T/$_u.failed"
	for _a in "$@"; do echo "$_a"; done | sort -u > "$T/$_u.allowed"
	_extra=$(comm -23 "$T/$_u.failed" "$T/$_u.allowed" | tr '\n' ' ')
	[ -z "$_extra" ] ||
	    fail "$_u.service fails checks it should pass: $_extra"
	# Each relaxation is explained in the man page.
	for _a in "$@"; do
		grep -q "$_a" "$top_srcdir/man/$_u.8.in" ||
		    fail "$_u(8) does not say why $_u.service has no $_a"
	done
	ok "$_u.service: exposure $_lvl (at most $_max), relaxed only where $_u(8) says why"
}

# Both: a network daemon (AF_INET, no PrivateNetwork, no IP allow list of
# its own: the site's), not in a chroot, uids seen as they are, the RTC
# readable (ProtectClock), files group-readable.
COMMON="RootDirectory RestrictAddressFamilies PrivateNetwork
	IPAddressDeny PrivateUsers DeviceAllow UMask"
# shellcheck disable=SC2086
check masterd 2.0 $COMMON
# workerd runs users' code: JITs, home directories read, /proc/cpuinfo;
# and runs it as the slot users: CAP_SETUID, CAP_SETGID, CAP_CHOWN and
# CAP_KILL, ambient (it runs as r3q), and setresuid, chown and capset
# back from @privileged.
# shellcheck disable=SC2086
check workerd 2.1 $COMMON MemoryDenyWriteExecute ProtectHome ProcSubset \
    AmbientCapabilities CapabilityBoundingSet SystemCallFilter

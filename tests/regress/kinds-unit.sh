# The persistent Python example runs under the sandbox of workerd.service:
# every hardening property of the unit as built (etc/workerd.service) is
# applied by systemd-run to python3 examples/persistent.py, which is fed
# one task frame and must answer it with Ridge's value.  This needs
# systemd as the init system; without it the test says so and is skipped.
. "${top_srcdir:-.}/tests/regress/lib.sh"

UNIT=$top_builddir/etc/workerd.service
[ -f "$UNIT" ] || fail "$UNIT is not built"
if [ ! -d /run/systemd/system ] || ! command -v systemd-run > /dev/null; then
	echo "SKIP: systemd is not the init system here (no /run/systemd/system), so systemd-run cannot apply workerd.service's sandbox"
	exit 77
fi

# The unit's hardening: every property from its Hardening comment on.
props=$(sed -n '/^# Hardening/,/^\[Install\]/p' "$UNIT" |
    grep -E '^[A-Za-z]+=' | sed 's/^/-p /' | tr '\n' ' ')
[ -n "$props" ] || fail "no hardening properties found in $UNIT"

# One task: the es payload of x = (1, 2, 3), whose Ridge is 46.
python3 -c '
import struct, sys
p = struct.pack("<IId", 0, 0, 0.0) + struct.pack("<3d", 1, 2, 3)
sys.stdout.buffer.write(b"T" + struct.pack(">I", len(p)) + p)
' > "$T/task.bin"
# shellcheck disable=SC2086
systemd-run --quiet --wait --pipe --collect $props \
    /usr/bin/python3 "$(cd "$top_srcdir" && pwd)/examples/persistent.py" \
    < "$T/task.bin" > "$T/answer.bin" 2> "$T/err" ||
    fail "systemd-run failed: $(cat "$T/err")"
python3 -c '
import struct, sys
d = open(sys.argv[1], "rb").read()
while d[:1] == b"H":
    d = d[5:]
assert d[:1] == b"R", d[:40]
n, = struct.unpack(">I", d[1:5])
f, = struct.unpack("<d", d[5:5 + n])
assert f == 46.0, f
' "$T/answer.bin" || fail "the sandboxed server answered wrongly: $(od -c "$T/answer.bin" | head -3)"
ok "the persistent Python example runs under workerd.service's sandbox"

# make install puts the daemons, r3qctl, the man pages, the sample configs,
# the systemd units, sysusers and tmpfiles, the Python package where they
# belong; an installed
# config is never overwritten; the installed units pass systemd-analyze
# verify (with ExecStart pointed at the DESTDIR copy of the daemons).
#
# Then every path agrees, for the default prefix and for --prefix=/usr
# --sysconfdir=/etc --localstatedir=/var --runstatedir=/run: the
# distributed sources are configured and installed into a DESTDIR, and the
# units' ExecStart (-f), the daemons' compiled defaults (-h and -nv),
# r3qctl's default socket, the installed sample configurations, the
# tmpfiles and sysusers files and the man pages (FILES and every other
# path under r3q) all name sysconfdir/r3q, runstatedir/r3q and
# localstatedir/lib/r3q.
. "${top_srcdir:-.}/tests/regress/lib.sh"

R=$T/root
make -s -C "$top_builddir" install DESTDIR="$R" > "$T/install.log" 2>&1 ||
    fail "make install: $(tail -n 5 "$T/install.log")"
for f in sbin/masterd sbin/workerd bin/r3qctl r3q/masterd.conf \
    r3q/workerd.conf man8/masterd.8 man8/workerd.8 man1/r3qctl.1 \
    man5/masterd.conf.5 man5/workerd.conf.5 man3/r3q.3 man3/r3q-plugin.3 include/r3q.h include/r3q-plugin.h \
    pkgconfig/r3q.pc libr3q.so.0 r3q/__init__.py r3q/serve.py r3q/_paths.py; do
	[ -n "$(find "$R" -path "*/$f" -print -quit)" ] || fail "not installed: $f"
done
for f in masterd.service workerd.service sysusers.d/r3q.conf tmpfiles.d/r3q.conf; do
	[ -n "$(find "$R" -path "*/$f" -print -quit)" ] || fail "not installed: $f"
done
# r3q-sim where SimGrid was found and it was built.
if [ -x "$top_builddir/sim/r3q-sim" ] &&
    [ -z "$(find "$R" -path '*/bin/r3q-sim' -print -quit)" ]; then
	fail "not installed: bin/r3q-sim"
fi
ok "make install puts every file in place"

conf=$(find "$R" -path '*/r3q/masterd.conf')
echo "policy = wq  # mine" >> "$conf"
make -s -C "$top_builddir" install DESTDIR="$R" > "$T/install.log" 2>&1 ||
    fail "second make install failed"
grep -q "# mine" "$conf" || fail "make install overwrote an installed config"
ok "an installed config is never overwritten"

command -v systemd-analyze > /dev/null ||
    fail "systemd-analyze is missing (scripts/check installs systemd)"

# verify_units ROOT: both units of the tree installed in ROOT.
verify_units() {
	for u in masterd workerd; do
		unit=$(find "$1" -name "$u.service")
		bin=$(find "$1" -path "*/sbin/$u")
		grep -q '^Type=notify$' "$unit" || fail "$u.service is not Type=notify"
		grep -q "^ExecStart=/.*/$u -f /.*/r3q/$u.conf$" "$unit" ||
		    fail "$u.service: paths not substituted: $(grep ExecStart "$unit")"
		! grep -n '@[a-z]*@' "$unit" > "$T/left" ||
		    fail "$u.service: left unsubstituted: $(cat "$T/left")"
		sed "s|^ExecStart=[^ ]*|ExecStart=$bin|" "$unit" > "$T/$u.service"
		systemd-analyze verify --man=no "$T/$u.service" > "$T/verify.out" 2>&1 ||
		    fail "systemd-analyze verify $u.service: $(cat "$T/verify.out")"
		[ ! -s "$T/verify.out" ] ||
		    fail "systemd-analyze verify $u.service warns: $(cat "$T/verify.out")"
	done
}
verify_units "$R"
ok "systemd-analyze verify passes on both units"

# The rest builds the distributed sources twice, without a sanitizer
# whatever this build is, and checks paths: under scripts/check
# --sanitize it would repeat the plain run's check of the same sources
# (23 of the run's 72 minutes on a loaded machine), so it is left to the
# plain run, saying so.
if [ -n "${R3Q_SANITIZE:-}" ]; then
	echo "# the trees of the distributed sources: not under a sanitizer" \
	    "($R3Q_SANITIZE; they are built without one): the plain run checks them"
	exit 0
fi

# A copy of the distributed sources, so that a tree configured in place
# (./configure in the source directory) does not stop the builds below.
src=$T/src
make -s -C "$top_builddir" distdir distdir="$src" top_distdir="$src" \
    > "$T/distdir.log" 2>&1 || fail "make distdir: $(tail -n 5 "$T/distdir.log")"

# install_tree NAME CONFIGURE-FLAGS...: configure the sources in $T/b-NAME
# and install the daemons, r3qctl, units, configs and pages into $T/r-NAME.
# Without sim/r3q-sim, which compiles no path of ours in and whose
# install the first part (make install of the build under test) checks:
# its C++ was the longest compile of each tree.
install_tree() {
	b=$T/b-$1 r=$T/r-$1
	shift
	mkdir -p "$b"
	(cd "$b" && "$src/configure" --cache-file="$T/config.cache" \
	    --without-simgrid "$@") \
	    > "$b.log" 2>&1 || fail "configure $*: $(tail -n 5 "$b.log")"
	make -C "$b" -j2 proto/r3q.pb-c.h proto/r3q.pb-c.c >> "$b.log" 2>&1 &&
	    make -C "$b" -j2 install-exec install-data DESTDIR="$r" \
	    >> "$b.log" 2>&1 || fail "make install $*: $(tail -n 5 "$b.log")"
}

# nv_value FILE KEY: the value of KEY in -nv output or a sample config line
# "#KEY = VALUE", without quotes.
nv_value() {
	sed -n "s/^#\{0,1\}$2 = \"\{0,1\}\([^\"]*\)\"\{0,1\}$/\1/p" "$1"
}

# page_paths PAGE: every absolute path of ours (one with an r3q directory
# in it) that PAGE names, in macros or literal text; files_paths PAGE: the
# paths of its FILES section.
page_paths() {
	grep -oE '(^|[ :])/[A-Za-z0-9_./@*$-]+' "$1" | sed 's/^[ :]//' |
	    grep -E '/r3q(/|$)' || true
}
files_paths() {
	sed -n '/^\.Sh FILES/,/^\.Sh /p' "$1" | sed -n 's/^\.It Pa \([^ ]*\).*/\1/p'
}

# check_tree NAME PREFIX SYSCONFDIR RUNSTATEDIR LOCALSTATEDIR
check_tree() {
	r=$T/r-$1 prefix=$2
	cdir=$3/r3q rdir=$4/r3q sdir=$5/lib/r3q
	for d in masterd workerd; do
		unit=$(find "$r" -name "$d.service")
		[ -n "$unit" ] || fail "$1: $d.service not installed"
		bin=$r$prefix/sbin/$d
		[ -x "$bin" ] || fail "$1: $d not installed in $prefix/sbin"
		want="$prefix/sbin/$d -f $cdir/$d.conf"
		got=$(sed -n 's/^ExecStart=//p' "$unit")
		[ "$got" = "$want" ] ||
		    fail "$1: $d.service runs '$got', want '$want'"
		got=$("$bin" -h 2>&1 | sed -n 's/.*(default \(.*\))$/\1/p')
		[ "$got" = "$cdir/$d.conf" ] ||
		    fail "$1: $d -h says its default file is '$got', the unit says $cdir/$d.conf"
		# The effective configuration, even if -n finds fault with
		# files that are not there.
		"$bin" -nv -f /dev/null > "$T/$1-$d.nv" 2> "$T/$1-$d.err" || true
		grep -q '^ca = ' "$T/$1-$d.nv" ||
		    fail "$1: $d -nv printed no configuration: $(cat "$T/$1-$d.err")"
		sample=$r$cdir/$d.conf
		[ -f "$sample" ] || fail "$1: no sample config $cdir/$d.conf"
		! grep -n '@[a-z]*@' "$sample" > "$T/left" ||
		    fail "$1: $d.conf: left unsubstituted: $(cat "$T/left")"
		page=$(find "$r" -name "$d.8")
		cpage=$(find "$r" -name "$d.conf.5")
		files_paths "$page" > "$T/files"
		grep -qxF "$cdir/$d.conf" "$T/files" ||
		    fail "$1: $d(8) FILES lacks $cdir/$d.conf: $(cat "$T/files")"
		files_paths "$cpage" | grep -qxF "$cdir/$d.conf" ||
		    fail "$1: $d.conf(5) FILES lacks $cdir/$d.conf"
		grep -qxF ".Nm $cdir/$d.conf" "$cpage" ||
		    fail "$1: $d.conf(5) SYNOPSIS does not name $cdir/$d.conf"
		case $d in
		masterd)
			keys="control=$rdir/masterd.sock ca=$cdir/ca.pem
			    cert=$cdir/master.pem key=$cdir/master.key
			    journal=$sdir/journal.db" ;;
		workerd)
			keys="ca=$cdir/ca.pem cert=$cdir/worker.pem
			    key=$cdir/worker.key" ;;
		esac
		for kv in $keys; do
			k=${kv%%=*} v=${kv#*=}
			got=$(nv_value "$T/$1-$d.nv" "$k")
			[ "$got" = "$v" ] ||
			    fail "$1: $d's compiled default $k is '$got', want '$v'"
			got=$(nv_value "$sample" "$k")
			[ "$got" = "$v" ] ||
			    fail "$1: sample $d.conf says $k = '$got', the daemon '$v'"
			grep -qxF "$v" "$T/files" ||
			    fail "$1: $d(8) FILES lacks the default $k $v"
		done
	done

	ctl=$r$prefix/bin/r3qctl
	# The installed r3qctl finds the installed libr3q, not yet in place.
	got=$(LD_LIBRARY_PATH=$r$prefix/lib "$ctl" -h 2>&1 | sed -n 's/.*\$R3Q_CONTROL, else \(.*\)$/\1/p')
	[ "$got" = "$rdir/masterd.sock" ] ||
	    fail "$1: r3qctl's default socket is '$got', masterd's $rdir/masterd.sock"
	files_paths "$(find "$r" -name r3qctl.1)" | grep -qxF "$rdir/masterd.sock" ||
	    fail "$1: r3qctl(1) FILES lacks $rdir/masterd.sock"

	# The Slurm scripts name the installed workerd and each other.
	ddir=$prefix/share/r3q
	for f in r3q-workers.sbatch r3q-slurm-worker; do
		[ -x "$r$ddir/slurm/$f" ] || fail "$1: $ddir/slurm/$f not installed"
		! grep -n '@[a-z]*@' "$r$ddir/slurm/$f" > "$T/left" ||
		    fail "$1: $f: left unsubstituted: $(cat "$T/left")"
	done
	grep -qx "WORKERD=$prefix/sbin/workerd" "$r$ddir/slurm/r3q-slurm-worker" ||
	    fail "$1: r3q-slurm-worker runs $(grep '^WORKERD=' "$r$ddir/slurm/r3q-slurm-worker")"
	grep -qx "    $ddir/slurm/r3q-slurm-worker" "$r$ddir/slurm/r3q-workers.sbatch" ||
	    fail "$1: r3q-workers.sbatch does not run $ddir/slurm/r3q-slurm-worker"

	# No page names a path of ours outside the three directories and
	# the data directory.
	for page in $(find "$r" -name '*.[1358]'); do
		page_paths "$page" | grep -vE "^($cdir|$rdir|$sdir|$ddir)(/|$)" \
		    > "$T/stray" || true
		[ ! -s "$T/stray" ] ||
		    fail "$1: ${page##*/} names $(tr '\n' ' ' < "$T/stray")outside $cdir, $rdir, $sdir, $ddir"
		! grep -n '@[a-z]*@' "$page" > "$T/left" ||
		    fail "$1: ${page##*/}: left unsubstituted: $(cat "$T/left")"
	done

	# The Python package: where the interpreter imports from when it
	# has a directory under the prefix (Debian: /usr/lib/python3/
	# dist-packages, /usr/local/lib/python3.X/dist-packages), finding
	# the libr3q installed with it, and it runs.
	PY=${PYTHON:-/usr/bin/python3}
	init=$(find "$r" -path '*/r3q/__init__.py')
	[ -n "$init" ] || fail "$1: the Python package is not installed"
	pkg=${init%/r3q/__init__.py}
	pkg=${pkg#"$r"}
	want=$("$PY" -c "import site, sys
for d in site.getsitepackages() + sys.path:
    if d.startswith('$prefix/lib/') and d.endswith('-packages'):
        print(d)
        break")
	[ -z "$want" ] || [ "$pkg" = "$want" ] ||
	    fail "$1: r3q installed in $pkg, $PY imports from $want"
	grep -qx "LIBDIR = \"$prefix/lib\"" "$r$pkg/r3q/_paths.py" ||
	    fail "$1: r3q looks for libr3q in $(cat "$r$pkg/r3q/_paths.py")"
	PYTHONPATH=$r$pkg "$PY" -m r3q --help > /dev/null 2>&1 ||
	    fail "$1: the installed python3 -m r3q --help fails"

	unit=$(find "$r" -name masterd.service)
	[ "$(sed -n 's/^ReadWritePaths=//p' "$unit")" = "$rdir $sdir" ] ||
	    fail "$1: masterd.service may write $(grep ReadWritePaths "$unit"), want $rdir $sdir"
	tmpfiles=$(find "$r" -path '*/tmpfiles.d/r3q.conf')
	for dir in "$rdir" "$sdir"; do
		grep -q "^d $dir 0750 r3q r3q -$" "$tmpfiles" ||
		    fail "$1: tmpfiles.d/r3q.conf does not make $dir: $(cat "$tmpfiles")"
	done
	grep -q "^u r3q - \"R3Q daemons\" $sdir$" \
	    "$(find "$r" -path '*/sysusers.d/r3q.conf')" ||
	    fail "$1: sysusers.d/r3q.conf: r3q's home is not $sdir"
	verify_units "$r"
}

install_tree default
check_tree default /usr/local /usr/local/etc /usr/local/var/run /usr/local/var
unit=$(find "$T/r-default" -name masterd.service)
! grep -qE '^(Runtime|State)Directory=' "$unit" ||
    fail "default: masterd.service makes directories below /run or /var/lib"
ok "default prefix: the units, the daemons, r3qctl, the sample configs and the man pages agree on /usr/local/etc/r3q, /usr/local/var/run/r3q, /usr/local/var/lib/r3q"

install_tree etc --prefix=/usr --sysconfdir=/etc --localstatedir=/var \
    --runstatedir=/run
check_tree etc /usr /etc /run /var
unit=$(find "$T/r-etc" -name masterd.service)
grep -qx 'RuntimeDirectory=r3q' "$unit" && grep -qx 'StateDirectory=r3q' "$unit" ||
    fail "etc: masterd.service lacks RuntimeDirectory=r3q or StateDirectory=r3q"
ok "--prefix=/usr --sysconfdir=/etc --localstatedir=/var --runstatedir=/run: everything agrees on /etc/r3q, /run/r3q, /var/lib/r3q"
ok "the Python package r3q goes where $PY imports from: $(find "$T/r-default" "$T/r-etc" -path '*/r3q/__init__.py' | sed "s|^$T/r-[a-z]*||; s|/r3q/__init__.py||" | tr '\n' ' ')"

# Sourced by scripts/check and scripts/demo: install the Debian packages
# R3Q needs to build and test, only those missing, and build the tree in
# build/ (out of the source tree) if it is not built or out of date.

R3Q_PKGS="build-essential autoconf automake libtool pkg-config
	libevent-dev libssl-dev openssl libprotobuf-c-dev protobuf-c-compiler
	liblapacke-dev libopenblas-dev libsystemd-dev libsqlite3-dev libsimgrid-dev
	libcmocka-dev mandoc procps systemd sqlite3 libxml2-utils
	python3 python3-deap deap-doc python3-scipy clang libfuzzer-14-dev
	debhelper lintian debootstrap systemd-container
	slurm-wlm munge strace"

# Install the packages of R3Q_PKGS that dpkg does not list as installed.
r3q_install_deps() {
	missing=""
	for p in $R3Q_PKGS; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		    grep -q "install ok installed" || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "missing Debian packages:$missing (run as root to install)" >&2
		return 1
	fi
	echo "installing:$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >&2
}

# Configure (once) and build in $top/build; CI builds with -Werror.
# r3q_build TOP [DIR [CONFIGURE-ARGS...]] builds in TOP/DIR instead, with
# those arguments to configure (scripts/check --sanitize, --tsan).
r3q_build() {
	top=$1
	dir=${2:-build}
	[ $# -ge 2 ] && shift 2 || shift $#
	mkdir -p "$top/$dir"
	if [ ! -x "$top/configure" ] || [ "$top/configure.ac" -nt "$top/configure" ] ||
	    [ "$top/Makefile.am" -nt "$top/configure" ]; then
		(cd "$top" && autoreconf -fi) >&2
	fi
	if [ ! -f "$top/$dir/Makefile" ] || [ "$top/configure" -nt "$top/$dir/Makefile" ]; then
		if [ $# -eq 0 ] && [ "${CI:-}" = true ]; then
			set -- --enable-werror
		fi
		(cd "$top/$dir" && ../configure "$@") >&2
	fi
	make -C "$top/$dir" -j"$(nproc)" >&2
}

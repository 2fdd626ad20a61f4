# r3qctl starts without LAPACKE and OpenBLAS (common/task/lapack.h): the
# dynamic loader's log of --version, jobs and a local ES of synth tasks
# names neither, while a local ES with an LU loads both when it runs and
# ends well (es-match.sh checks its answer).  No daemon needs to run.
. "${top_srcdir:-.}/tests/regress/lib.sh"

# loaded ARGS...: the shared objects r3qctl ARGS opened (LD_DEBUG=libs).
loaded() {
	LD_DEBUG=libs LD_DEBUG_OUTPUT=$T/ld "$R3QCTL" "$@" > "$T/out" 2>&1 || :
	cat "$T"/ld.* 2>/dev/null | sed -n 's/.*find library=\([^ ]*\).*/\1/p' | sort -u
	rm -f "$T"/ld.*
}

for args in "--version" "-h" "es --local --mu 2 --lambda 3 --generations 1 --dim 2 --work-ms 0.001"; do
	# shellcheck disable=SC2086
	libs=$(loaded $args)
	# r3qctl links libr3q statically (libr3qclient.a): the loader's log
	# must name protobuf-c, which every r3qctl loads, or it says nothing.
	echo "$libs" | grep -q 'libprotobuf-c' || fail "r3qctl $args: the loader's log names no libprotobuf-c, so it says nothing: $libs"
	echo "$libs" | grep -q -E 'openblas|lapack' &&
	    fail "r3qctl $args loaded LAPACKE or the BLAS: $libs"
done
ok "r3qctl --version, -h and a synth es --local load neither LAPACKE nor the BLAS"

libs=$(loaded es --local --mu 2 --lambda 3 --generations 2 --dim 3 --lu 64 --seed 5)
grep -q '^summary: job 0 done' "$T/out" || fail "es --local with an LU: $(cat "$T/out")"
echo "$libs" | grep -q 'lapacke' || fail "es --local --lu 64 did not load LAPACKE: $libs"
echo "$libs" | grep -q 'openblas' || fail "es --local --lu 64 did not load OpenBLAS: $libs"
ok "es --local with an LU loads LAPACKE and OpenBLAS when it runs"

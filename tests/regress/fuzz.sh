# A short fuzzing run (issue 24): fuzz/run gives every libFuzzer target its
# share of FUZZ_SECONDS (default 60) on one core, starting from the seed
# corpus and the crash inputs, and finds no crash.  It uses this build if
# it was configured with --enable-fuzz, or else builds the targets with
# clang in $top_builddir/fuzz-build; without clang or libFuzzer it skips.
# libFuzzer gets a fixed -seed (FUZZ_SEED, default 1; FUZZ_FLAGS adds
# flags): each run starts from the same corpus (fuzz/corpus, fuzz/regress)
# and makes the same mutations in the same order, so `make check` does not
# find a new crash in a deep path by the luck of the draw; a slower
# machine only goes less far down the same sequence.  Searching for new
# crashes is fuzz/run's job, with a random seed (see fuzz/README).
#
# R3Q_FUZZ_BUILD names a build directory configured with --enable-fuzz to
# use instead of building one: scripts/check --sanitize passes the plain
# run's ($top/build/fuzz-build), whose targets are the same ASan + UBSan
# libFuzzer binaries of the same sources (fuzz/run brings them up to date
# with make), so the second run does not compile them all again.
. "${top_srcdir:-.}/tests/regress/lib.sh"

if grep -q LLVMFuzzerRunDriver "$top_builddir/fuzz/frame" 2>/dev/null; then
	B=$top_builddir
elif [ -n "${R3Q_FUZZ_BUILD:-}" ] && [ -f "$R3Q_FUZZ_BUILD/Makefile" ] &&
    grep -q -- '--enable-fuzz' "$R3Q_FUZZ_BUILD/config.status" 2>/dev/null
then
	B=$R3Q_FUZZ_BUILD
else
	if ! command -v clang > /dev/null 2>&1; then
		echo "SKIP: clang is not installed (apt-get install clang" \
		    "libfuzzer-14-dev; scripts/deps.sh lists them)"
		exit 77
	fi
	printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
	    'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);' \
	    'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)' \
	    '{ (void)d; (void)n; return 0; }' > "$T/t.c"
	if ! clang -fsanitize=fuzzer -o "$T/t" "$T/t.c" > "$T/clang.log" 2>&1
	then
		echo "SKIP: clang cannot link a libFuzzer target (apt-get" \
		    "install libfuzzer-14-dev)"
		exit 77
	fi
	B=$top_builddir/fuzz-build
fi

if ! FUZZ_FLAGS="-seed=${FUZZ_SEED:-1} ${FUZZ_FLAGS:-}" \
    "$top_srcdir/fuzz/run" -B "$B" -w "$T/work" "${FUZZ_SECONDS:-60}" \
    > "$T/table" 2> "$T/run.log"; then
	cat "$T/table" "$T/run.log"
	fail "fuzz/run found a crash or could not run (inputs kept in $T/work" \
	    "with KEEP=1)"
fi
cat "$T/table"
n=$(tail -n +2 "$T/table" | wc -l)
[ "$n" -ge 11 ] || fail "fuzz/run ran $n targets, not 11"
if awk 'NR > 1 && ($2 == "?" || $2 + 0 == 0) { bad = 1 } END { exit !bad }' \
    "$T/table"; then
	fail "a target did not run (no executions in the table)"
fi
ok "fuzz/run: $n targets for ${FUZZ_SECONDS:-60}s, no crash"

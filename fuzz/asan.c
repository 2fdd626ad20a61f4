/*
 * AddressSanitizer's defaults for every fuzz target (an ASAN_OPTIONS in
 * the environment still overrides them).
 *
 * quarantine_size_mb=32, not ASan's 256: freed memory waits in the
 * quarantine (poisoned, so that a use after free is reported) until 32 MB
 * more have been freed.  One input frees far less than that (measured,
 * with a malloc hook over 200 mutated inputs after the seeds: journal
 * 0.3 MB an input, lib 0.34, master-client 0.14, master-worker 0.11,
 * the seeds of master-client 2.3 MB on average), so every use after free
 * within one input -- and inputs share no heap memory -- is caught as
 * before.  What the bigger quarantine cost was memory cycled through
 * 256 MB of fresh pages: page faults and zeroing made 60 to 75 % of the
 * time of journal and master-client (perf record -e cpu-clock), 3 to 4
 * times their CPU time per input.
 */
#include "fuzz.h"

const char *
__asan_default_options(void)
{
	return ("quarantine_size_mb=32");
}

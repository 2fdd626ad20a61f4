/*
 * The task times of r3q-sim --trace (common/report/times.c): the input is
 * the file, a trace-event JSON or a CSV.  Accepted, it gives at least one
 * time, each above 0 and finite (and at most REPORT_TIMES_MAX_MS from a
 * CSV); refused, an error that names the file.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "report/times.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return (0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	double	*ms;
	size_t	 n, i;
	char	 err[512];

	err[0] = '\0';
	if (report_times_parse((const char *)data, size, "input", &ms, &n,
	    err, sizeof(err)) == -1) {
		if (strncmp(err, "input", 5) != 0)
			abort();	/* an error names the file */
		return (0);
	}
	if (n == 0 || ms == NULL)
		abort();
	for (i = 0; i < n; i++)
		if (!(ms[i] > 0) || !isfinite(ms[i]))
			abort();
	free(ms);
	return (0);
}

/*
 * Task times to replay (r3q-sim --trace): the Chrome trace-event JSON of
 * `r3qctl report --trace`, or text with one time in milliseconds a line.
 *
 * Pure: a buffer in, the times out; no I/O.
 */
#ifndef R3Q_REPORT_TIMES_H
#define R3Q_REPORT_TIMES_H

#include <stddef.h>

#define REPORT_TIMES_MAX_MS	3600000.0	/* a CSV time, at most */

/*
 * Parse the len bytes of buf, a file called name: 0 with *ms (malloc'd,
 * the caller frees) and *n > 0 times, each above 0 and finite; or -1 with
 * "name:LINE: what is wrong" in err.
 */
int	report_times_parse(const char *buf, size_t len, const char *name,
	    double **ms, size_t *n, char *err, size_t errlen);

#endif /* R3Q_REPORT_TIMES_H */

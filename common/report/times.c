/*
 * Task times to replay, from r3q-sim --trace FILE.  Either the Chrome
 * trace-event JSON that `r3qctl report --trace` writes (one event a line:
 * the executions whose outcome is "done", their "dur" in microseconds), or
 * text with one time in milliseconds a line, the first comma-separated
 * field (a first line that is no number is a header, skipped; blank lines
 * and '#' comments too).  Each time is taken as reference milliseconds of
 * work.  Pure: it reads only the buffer it is given, and a file of any
 * bytes gets either its times or an error naming the line.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/times.h"

struct times {
	double	*t_v;
	size_t	 t_n, t_cap;
};

static int	times_add(struct times *, double);
static int	times_err(char *, size_t, const char *, ...)
		    __attribute__((format(printf, 3, 4)));

static int
times_add(struct times *t, double v)
{
	double	*nv;
	size_t	 cap;

	if (t->t_n == t->t_cap) {
		cap = t->t_cap ? t->t_cap * 2 : 1024;
		if ((nv = realloc(t->t_v, cap * sizeof(*nv))) == NULL)
			return (-1);
		t->t_v = nv;
		t->t_cap = cap;
	}
	t->t_v[t->t_n++] = v;
	return (0);
}

static int
times_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return (-1);
}

/* One line of a trace-event file: 1 with a time, 0 without, -1 bad. */
static int
times_json(const char *p, double *v)
{
	const char	*d;
	char		*end;

	if (strstr(p, "\"ph\":\"X\"") == NULL ||
	    strstr(p, "\"outcome\":\"done\"") == NULL)
		return (0);
	if ((d = strstr(p, "\"dur\":")) == NULL)
		return (-1);
	errno = 0;
	*v = strtod(d + 6, &end) / 1000;
	if (end == d + 6 || errno != 0 || !(*v > 0) || !isfinite(*v))
		return (-2);
	return (1);
}

int
report_times_parse(const char *buf, size_t len, const char *name,
    double **ms, size_t *n, char *err, size_t errlen)
{
	struct times	 t = { NULL, 0, 0 };
	const char	*nl, *p;
	char		*line = NULL, *nline, *end;
	size_t		 off = 0, l, cap = 0, lineno = 0;
	double		 v;
	int		 json = 0, first = 1, rc;

	*ms = NULL;
	*n = 0;
	while (off < len) {
		nl = memchr(buf + off, '\n', len - off);
		l = nl != NULL ? (size_t)(nl - (buf + off)) + 1 : len - off;
		if (l + 1 > cap) {
			if ((nline = realloc(line, l + 1)) == NULL)
				goto oom;
			line = nline;
			cap = l + 1;
		}
		memcpy(line, buf + off, l);
		line[l] = '\0';
		off += l;
		lineno++;

		p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (first && *p == '{')
			json = 1;
		if (json) {
			first = 0;
			if ((rc = times_json(p, &v)) == 0)
				continue;
			if (rc == -1) {
				times_err(err, errlen, "%s:%zu: an execution "
				    "without \"dur\"", name, lineno);
				goto fail;
			}
			if (rc == -2) {
				times_err(err, errlen, "%s:%zu: \"dur\" is not "
				    "a positive number", name, lineno);
				goto fail;
			}
			if (times_add(&t, v) == -1)
				goto oom;
			continue;
		}
		if (*p == '\n' || *p == '\r' || *p == '#' || *p == '\0')
			continue;
		errno = 0;
		v = strtod(p, &end);
		while (*end == ' ' || *end == '\t')
			end++;
		if (end == p || errno != 0 || (*end != ',' && *end != '\n' &&
		    *end != '\r' && *end != '\0')) {
			if (first) {
				first = 0;
				continue;	/* a header */
			}
			times_err(err, errlen, "%s:%zu: not a time in "
			    "milliseconds", name, lineno);
			goto fail;
		}
		first = 0;
		if (!(v > 0) || !isfinite(v) || v > REPORT_TIMES_MAX_MS) {
			times_err(err, errlen, "%s:%zu: a time must be above 0 "
			    "and at most %.0f ms", name, lineno,
			    REPORT_TIMES_MAX_MS);
			goto fail;
		}
		if (times_add(&t, v) == -1)
			goto oom;
	}
	free(line);
	if (t.t_n == 0)
		return (times_err(err, errlen, "%s: no task times (no "
		    "executions done in a trace, no times in a CSV)", name));
	*ms = t.t_v;
	*n = t.t_n;
	return (0);

oom:
	times_err(err, errlen, "%s: out of memory", name);
fail:
	free(line);
	free(t.t_v);
	return (-1);
}

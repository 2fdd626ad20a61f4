/*
 * The matrices of a total exchange: the cost model, the lower bound t_tb,
 * the generators (the paper's random matrices and its fatal matrix) and
 * the parser of the matrix file format (r3qctl(1), EXCHANGE MATRIX FILES):
 *
 *	# comment
 *	p 3
 *	startup 0.0001			one value: every off-diagonal entry
 *	bandwidth
 *	-   1e8 1e8			or p rows of p values; the diagonal
 *	1e8 -   5e7			is '-' (or any number, ignored)
 *	1e8 1e8 -
 *	bytes 1048576
 *
 * startup is in seconds (finite, >= 0), bandwidth in bytes a second
 * (finite, > 0), bytes a whole number of bytes (0: no message).  p comes
 * first, from 2 to XCHG_MAX_P; each section exactly once.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "xchg/xchg.h"

#define nitems(a)	(sizeof(a) / sizeof((a)[0]))

#define XCHG_RNG_DOMAIN	UINT64_C(0x78636867)	/* "xchg" */
#define RANDOM_BYTES	UINT64_C(1048576)	/* m of a random matrix */

#define FATAL_B		1e8			/* 100 MB/s */
#define FATAL_T		1e-4			/* 100 us */
#define FATAL_X_BYTES	UINT64_C(100000000)	/* x: about 1 s */
#define FATAL_D_BYTES	UINT64_C(100000)	/* delta: about 1.1 ms */

enum { SEC_T = 0, SEC_B, SEC_M, SEC_N };

static const char *const sec_names[SEC_N] = {
	"startup", "bandwidth", "bytes"
};

/* The state of one parse: where we are and where to say it. */
struct parse {
	const char	*pa_buf;
	size_t		 pa_len;
	size_t		 pa_off;
	size_t		 pa_line;
	const char	*pa_name;
	char		*pa_err;
	size_t		 pa_errlen;
};

static int	 parse_error(struct parse *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));
static int	 parse_next(struct parse *, char *, size_t, char **, size_t,
		    size_t *);
static int	 parse_value(struct parse *, int, const char *, unsigned,
		    unsigned, struct xchg_matrix *);
static void	 xchg_err(char *, size_t, const char *, ...)
		    __attribute__((format(printf, 3, 4)));

/* Say what went wrong into a caller's buffer, if it gave one. */
static void
xchg_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list	 ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* A p x p matrix, all zero; NULL if p is out of range or memory is short. */
struct xchg_matrix *
xchg_matrix_new(unsigned p)
{
	struct xchg_matrix	*mx;
	size_t			 n = (size_t)p * p;

	if (p < 2 || p > XCHG_MAX_P)
		return (NULL);
	if ((mx = calloc(1, sizeof(*mx))) == NULL)
		return (NULL);
	mx->xm_p = p;
	mx->xm_t = calloc(n, sizeof(*mx->xm_t));
	mx->xm_b = calloc(n, sizeof(*mx->xm_b));
	mx->xm_m = calloc(n, sizeof(*mx->xm_m));
	if (mx->xm_t == NULL || mx->xm_b == NULL || mx->xm_m == NULL) {
		xchg_matrix_free(mx);
		return (NULL);
	}
	return (mx);
}

/* Free a matrix. */
void
xchg_matrix_free(struct xchg_matrix *mx)
{
	if (mx == NULL)
		return;
	free(mx->xm_t);
	free(mx->xm_b);
	free(mx->xm_m);
	free(mx);
}

/*
 * A matrix the schedulers accept: p from 2 to XCHG_MAX_P, and off the
 * diagonal finite start-ups >= 0, finite bandwidths > 0 and sizes below
 * XCHG_MAX_BYTES.
 */
int
xchg_matrix_check(const struct xchg_matrix *mx, char *err, size_t errlen)
{
	unsigned	 p, i, j;
	size_t		 k;

	if (mx == NULL) {
		xchg_err(err, errlen, "no matrix");
		return (-1);
	}
	p = mx->xm_p;
	if (p < 2 || p > XCHG_MAX_P) {
		xchg_err(err, errlen, "p is %u, not from 2 to %d", p,
		    XCHG_MAX_P);
		return (-1);
	}
	for (i = 0; i < p; i++) {
		for (j = 0; j < p; j++) {
			if (i == j)
				continue;
			k = (size_t)i * p + j;
			if (!isfinite(mx->xm_t[k]) || mx->xm_t[k] < 0) {
				xchg_err(err, errlen, "startup %u->%u is %g, "
				    "not a finite number >= 0", i, j,
				    mx->xm_t[k]);
				return (-1);
			}
			if (!isfinite(mx->xm_b[k]) || mx->xm_b[k] <= 0) {
				xchg_err(err, errlen, "bandwidth %u->%u is "
				    "%g, not a finite number > 0", i, j,
				    mx->xm_b[k]);
				return (-1);
			}
			if (mx->xm_m[k] > XCHG_MAX_BYTES) {
				xchg_err(err, errlen, "bytes %u->%u is over "
				    "2^53", i, j);
				return (-1);
			}
		}
	}
	return (0);
}

/* C_ij = T_ij + m_ij / B_ij, or 0 if i has nothing for j. */
double
xchg_cost(const struct xchg_matrix *mx, unsigned i, unsigned j)
{
	size_t	 k = (size_t)i * mx->xm_p + j;

	if (i == j || mx->xm_m[k] == 0)
		return (0);
	return (mx->xm_t[k] + (double)mx->xm_m[k] / mx->xm_b[k]);
}

/* The cost of one piece of n bytes from i to j: it pays its own start-up. */
double
xchg_piece_cost(const struct xchg_matrix *mx, unsigned i, unsigned j,
    uint64_t n)
{
	size_t	 k = (size_t)i * mx->xm_p + j;

	return (mx->xm_t[k] + (double)n / mx->xm_b[k]);
}

/* t_tb: the largest row or column sum of C (paper section 2). */
double
xchg_lower_bound(const struct xchg_matrix *mx)
{
	unsigned	 p = mx->xm_p, i, j;
	double		 row, col, lb = 0;

	for (i = 0; i < p; i++) {
		row = col = 0;
		for (j = 0; j < p; j++) {
			row += xchg_cost(mx, i, j);
			col += xchg_cost(mx, j, i);
		}
		if (row > lb)
			lb = row;
		if (col > lb)
			lb = col;
	}
	return (lb);
}

/*
 * A random matrix as the paper's experiments draw them (section 6): every
 * message is RANDOM_BYTES (1 MiB); for each ordered pair (i, j) the
 * bandwidth is log-uniform from 10 MB/s to 1 GB/s,
 * B_ij = 10^(7 + 2 u1), and the start-up's share of the event's cost is
 * uniform from 0.1 % to 50 %, s = 0.001 + 0.499 u2, so that
 * T_ij = s / (1 - s) * m / B_ij.  u1 and u2 are rng_uniform(seed,
 * "xchg", i p + j, 0 or 1): the same seed gives the same matrix.
 */
struct xchg_matrix *
xchg_random(unsigned p, uint64_t seed, char *err, size_t errlen)
{
	struct xchg_matrix	*mx;
	unsigned		 i, j;
	size_t			 k;
	double			 u1, u2, s;

	if (p < 2 || p > XCHG_MAX_P) {
		xchg_err(err, errlen, "p must be from 2 to %d", XCHG_MAX_P);
		return (NULL);
	}
	if ((mx = xchg_matrix_new(p)) == NULL) {
		xchg_err(err, errlen, "out of memory");
		return (NULL);
	}
	for (i = 0; i < p; i++) {
		for (j = 0; j < p; j++) {
			if (i == j)
				continue;
			k = (size_t)i * p + j;
			u1 = rng_uniform(seed, XCHG_RNG_DOMAIN, k, 0);
			u2 = rng_uniform(seed, XCHG_RNG_DOMAIN, k, 1);
			s = 0.001 + 0.499 * u2;
			mx->xm_m[k] = RANDOM_BYTES;
			mx->xm_b[k] = pow(10.0, 7.0 + 2.0 * u1);
			mx->xm_t[k] = s / (1.0 - s) *
			    (double)RANDOM_BYTES / mx->xm_b[k];
		}
	}
	return (mx);
}

/*
 * The fatal matrix of section 4: row i < p - 1 costs h to i + 1 and delta
 * elsewhere; the last row costs delta to 0 and x to 1 .. p - 2, with
 * h = (p - 2) x and delta << x.  Every link is FATAL_B with start-up
 * FATAL_T; x is FATAL_X_BYTES (1.0001 s), delta FATAL_D_BYTES (1.1 ms),
 * and h carries exactly the bytes that make C = (p - 2) x.  Needs p >= 3
 * (for p = 3, h = x).
 */
struct xchg_matrix *
xchg_fatal(unsigned p, char *err, size_t errlen)
{
	struct xchg_matrix	*mx;
	unsigned		 i, j;
	size_t			 k;
	uint64_t		 hbytes;

	if (p < 3 || p > XCHG_MAX_P) {
		xchg_err(err, errlen, "the fatal matrix needs p from 3 to %d",
		    XCHG_MAX_P);
		return (NULL);
	}
	if ((mx = xchg_matrix_new(p)) == NULL) {
		xchg_err(err, errlen, "out of memory");
		return (NULL);
	}
	/* (p - 2) (T + x / B) = T + hbytes / B. */
	hbytes = (uint64_t)(p - 2) * FATAL_X_BYTES +
	    (uint64_t)llround((double)(p - 3) * FATAL_T * FATAL_B);
	for (i = 0; i < p; i++) {
		for (j = 0; j < p; j++) {
			if (i == j)
				continue;
			k = (size_t)i * p + j;
			mx->xm_t[k] = FATAL_T;
			mx->xm_b[k] = FATAL_B;
			if (i < p - 1)
				mx->xm_m[k] = j == i + 1 ? hbytes :
				    FATAL_D_BYTES;
			else
				mx->xm_m[k] = j == 0 ? FATAL_D_BYTES :
				    FATAL_X_BYTES;
		}
	}
	return (mx);
}

/* h of a fatal matrix: the cost of 0 -> 1. */
double
xchg_fatal_h(const struct xchg_matrix *mx)
{
	return (xchg_cost(mx, 0, 1));
}

/* Report a parse error as file:line: message; returns -1. */
static int
parse_error(struct parse *pa, const char *fmt, ...)
{
	char	 msg[256];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	xchg_err(pa->pa_err, pa->pa_errlen, "%s:%zu: %s", pa->pa_name,
	    pa->pa_line > 0 ? pa->pa_line : 1, msg);
	return (-1);
}

/*
 * The next line that is not blank nor only a comment, split into at most
 * max words in buf; returns 1, 0 at the end of the input, -1 for a line
 * too long or with a NUL byte.
 */
static int
parse_next(struct parse *pa, char *buf, size_t size, char **words,
    size_t max, size_t *nwords)
{
	const char	*line, *nl;
	size_t		 len, n;
	char		*s, *c;

	for (;;) {
		if (pa->pa_off >= pa->pa_len)
			return (0);
		line = pa->pa_buf + pa->pa_off;
		nl = memchr(line, '\n', pa->pa_len - pa->pa_off);
		len = nl != NULL ? (size_t)(nl - line) :
		    pa->pa_len - pa->pa_off;
		pa->pa_off += len + (nl != NULL);
		pa->pa_line++;
		if (len >= size)
			return (parse_error(pa, "line too long"));
		if (memchr(line, '\0', len) != NULL)
			return (parse_error(pa, "NUL byte"));
		memcpy(buf, line, len);
		buf[len] = '\0';
		if ((c = strchr(buf, '#')) != NULL)
			*c = '\0';
		n = 0;
		for (s = strtok(buf, " \t\r"); s != NULL;
		    s = strtok(NULL, " \t\r")) {
			if (n == max)
				return (parse_error(pa, "more than %zu values "
				    "on a line", max));
			words[n++] = s;
		}
		if (n == 0)
			continue;
		*nwords = n;
		return (1);
	}
}

/* One entry of a section, checked and stored at (i, j). */
static int
parse_value(struct parse *pa, int sec, const char *w, unsigned i, unsigned j,
    struct xchg_matrix *mx)
{
	size_t		 k = (size_t)i * mx->xm_p + j;
	char		*end;
	double		 d;
	unsigned long long u;
	const char	*c;

	if (i == j && strcmp(w, "-") == 0)
		return (0);
	if (sec == SEC_M) {
		for (c = w; *c != '\0'; c++)
			if (!isdigit((unsigned char)*c))
				break;
		errno = 0;
		u = strtoull(w, &end, 10);
		if (*w == '\0' || *c != '\0' || errno != 0 ||
		    u > XCHG_MAX_BYTES)
			return (parse_error(pa, "bytes: '%s' is not a whole "
			    "number of bytes up to 2^53", w));
		if (i != j)
			mx->xm_m[k] = u;
		return (0);
	}
	errno = 0;
	d = strtod(w, &end);
	if (*w == '\0' || *end != '\0' || errno == ERANGE || !isfinite(d))
		return (parse_error(pa, "%s: '%s' is not a finite number",
		    sec_names[sec], w));
	if (sec == SEC_T && d < 0)
		return (parse_error(pa, "startup: '%s' is negative", w));
	if (sec == SEC_B && d <= 0 && i != j)
		return (parse_error(pa, "bandwidth: '%s' is not above 0", w));
	if (i == j)
		return (0);
	if (sec == SEC_T)
		mx->xm_t[k] = d;
	else
		mx->xm_b[k] = d;
	return (0);
}

/*
 * Parse a matrix file held in buf (see the top of this file); name is
 * what errors call it.  NULL with "name:line: message" in err on any
 * error, the matrix otherwise.
 */
struct xchg_matrix *
xchg_parse(const char *buf, size_t len, const char *name, char *err,
    size_t errlen)
{
	struct parse		 pa;
	struct xchg_matrix	*mx = NULL;
	char			 line[65536], *w[XCHG_MAX_P + 1], *end;
	size_t			 n;
	unsigned		 p = 0, i, j;
	unsigned long		 ul;
	int			 r, sec, seen[SEC_N] = { 0 };

	memset(&pa, 0, sizeof(pa));
	pa.pa_buf = buf;
	pa.pa_len = len;
	pa.pa_name = name;
	pa.pa_err = err;
	pa.pa_errlen = errlen;

	while ((r = parse_next(&pa, line, sizeof(line), w, nitems(w), &n))
	    == 1) {
		if (mx == NULL) {
			if (strcmp(w[0], "p") != 0 || n != 2) {
				parse_error(&pa, "expected 'p N' first");
				goto fail;
			}
			errno = 0;
			ul = strtoul(w[1], &end, 10);
			if (!isdigit((unsigned char)*w[1]) || *end != '\0' ||
			    errno != 0 || ul < 2 || ul > XCHG_MAX_P) {
				parse_error(&pa, "p: '%s' is not a whole "
				    "number from 2 to %d (a total exchange "
				    "needs two processors)", w[1], XCHG_MAX_P);
				goto fail;
			}
			p = (unsigned)ul;
			if ((mx = xchg_matrix_new(p)) == NULL) {
				parse_error(&pa, "out of memory");
				goto fail;
			}
			continue;
		}
		for (sec = 0; sec < SEC_N; sec++)
			if (strcmp(w[0], sec_names[sec]) == 0)
				break;
		if (sec == SEC_N) {
			if (strcmp(w[0], "p") == 0)
				parse_error(&pa, "p given twice");
			else
				parse_error(&pa, "unknown keyword '%s' "
				    "(startup, bandwidth or bytes)", w[0]);
			goto fail;
		}
		if (seen[sec]++) {
			parse_error(&pa, "%s given twice", sec_names[sec]);
			goto fail;
		}
		if (n > 2) {
			parse_error(&pa, "%s: one value for every entry, or "
			    "none and %u rows after it", sec_names[sec], p);
			goto fail;
		}
		if (n == 2) {
			for (i = 0; i < p; i++)
				for (j = 0; j < p; j++)
					if (i != j && parse_value(&pa, sec,
					    w[1], i, j, mx) == -1)
						goto fail;
			continue;
		}
		for (i = 0; i < p; i++) {
			if ((r = parse_next(&pa, line, sizeof(line), w,
			    nitems(w), &n)) == -1)
				goto fail;
			if (r == 0) {
				parse_error(&pa, "%s: %u rows, expected %u",
				    sec_names[sec], i, p);
				goto fail;
			}
			if (n != p) {
				parse_error(&pa, "%s: row %u has %zu values, "
				    "expected %u", sec_names[sec], i + 1, n,
				    p);
				goto fail;
			}
			for (j = 0; j < p; j++)
				if (parse_value(&pa, sec, w[j], i, j, mx) ==
				    -1)
					goto fail;
		}
	}
	if (r == -1)
		goto fail;
	if (mx == NULL) {
		parse_error(&pa, "no 'p N' line");
		goto fail;
	}
	for (sec = 0; sec < SEC_N; sec++) {
		if (!seen[sec]) {
			parse_error(&pa, "no %s section", sec_names[sec]);
			goto fail;
		}
	}
	return (mx);
fail:
	xchg_matrix_free(mx);
	return (NULL);
}

/*
 * Flow-shop instances and bounds: Taillard's file format, makespans, and
 * the one- and two-machine lower bounds of a node.
 * Pure.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bnb/bnb-int.h"
#include "bnb/pfsp.h"

#define BNB_TOKMAX	32	/* a token quoted in an error */

/* A reader of a buffer a line at a time, for file:line errors. */
struct bnb_lines {
	const char	*buf;
	size_t		 len;
	size_t		 off;
	uint32_t	 lineno;
	const char	*line;		/* the current line, not terminated */
	size_t		 linelen;
	const char	*file;
	char		*err;
	size_t		 errlen;
};

static int	 bnb_next_line(struct bnb_lines *, int);
static int	 bnb_lerr(struct bnb_lines *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));
static int	 bnb_ints(struct bnb_lines *, long long *, size_t,
		    size_t *, const char *);
static int	 bnb_text_is(const struct bnb_lines *, const char *);
static void	 bnb_johnson(struct bnb_problem *, uint32_t);

/* Say "file:line: message" into the reader's error buffer; returns -1. */
static int
bnb_lerr(struct bnb_lines *lr, const char *fmt, ...)
{
	va_list	 ap;
	int	 w;

	w = snprintf(lr->err, lr->errlen, "%s:%u: ", lr->file,
	    lr->lineno > 0 ? lr->lineno : 1);
	if (w < 0 || (size_t)w >= lr->errlen)
		return (-1);
	va_start(ap, fmt);
	vsnprintf(lr->err + w, lr->errlen - (size_t)w, fmt, ap);
	va_end(ap);
	return (-1);
}

/*
 * Move to the next line that is not blank.  Returns 1 with lr->line set,
 * 0 at the end of the buffer (lineno is then the last line's), -1 on a
 * NUL byte (when nul_ok is clear: not a text file).
 */
static int
bnb_next_line(struct bnb_lines *lr, int nul_ok)
{
	const char	*s, *e;
	size_t		 i;

	while (lr->off < lr->len) {
		s = lr->buf + lr->off;
		e = memchr(s, '\n', lr->len - lr->off);
		lr->linelen = e != NULL ? (size_t)(e - s) : lr->len - lr->off;
		lr->off += lr->linelen + (e != NULL ? 1 : 0);
		lr->lineno++;
		lr->line = s;
		if (!nul_ok && memchr(s, '\0', lr->linelen) != NULL)
			return (bnb_lerr(lr, "NUL byte: not a text file"));
		for (i = 0; i < lr->linelen; i++)
			if (!isspace((unsigned char)s[i]))
				return (1);
	}
	return (0);
}

/* Does the current line start, after blanks, with text (any case)? */
static int
bnb_text_is(const struct bnb_lines *lr, const char *text)
{
	size_t	 i = 0, tl = strlen(text);

	while (i < lr->linelen && isspace((unsigned char)lr->line[i]))
		i++;
	return (lr->linelen - i >= tl &&
	    strncasecmp(lr->line + i, text, tl) == 0);
}

/*
 * Read the integers of the current line into v (at most max of them, their
 * number in *nv), what names them in errors.  A token that is not a
 * decimal integer, or more than max of them, is an error.
 */
static int
bnb_ints(struct bnb_lines *lr, long long *v, size_t max, size_t *nv,
    const char *what)
{
	char		 tok[BNB_TOKMAX + 1], *end;
	size_t		 i = 0, s, tl;
	long long	 x;

	*nv = 0;
	for (;;) {
		while (i < lr->linelen && isspace((unsigned char)lr->line[i]))
			i++;
		if (i == lr->linelen)
			return (0);
		s = i;
		while (i < lr->linelen && !isspace((unsigned char)lr->line[i]))
			i++;
		tl = i - s > BNB_TOKMAX ? BNB_TOKMAX : i - s;
		memcpy(tok, lr->line + s, tl);
		tok[tl] = '\0';
		if (*nv == max)
			return (bnb_lerr(lr, "more than %zu %s", max, what));
		errno = 0;
		x = strtoll(tok, &end, 10);
		if (i - s > BNB_TOKMAX || *end != '\0' || end == tok ||
		    !(isdigit((unsigned char)tok[0]) || ((tok[0] == '-' ||
		    tok[0] == '+') && isdigit((unsigned char)tok[1]))))
			return (bnb_lerr(lr, "'%s' is not an integer (%s)",
			    tok, what));
		if (errno == ERANGE)
			return (bnb_lerr(lr, "%s is out of range (%s)", tok,
			    what));
		v[(*nv)++] = x;
	}
}

/*
 * Parse instance index (1-based) of a Taillard file held in buf: blocks of
 *   number of jobs, number of machines, initial seed, upper bound and ...
 *   n m [seed [upper [lower]]]
 *   processing times :
 *   m lines of n integers (machine k's times for jobs 1..n)
 * Earlier blocks are checked as well; later ones are not read.  file
 * names the buffer in errors, "file:line: message".  On success the caller
 * frees inst with bnb_instance_free().
 */
int
bnb_parse_taillard(const char *buf, size_t len, const char *file,
    uint32_t index, struct bnb_instance *inst, char *err, size_t errlen)
{
	struct bnb_lines	 lr;
	long long		 hdr[5], *row = NULL;
	size_t			 nv, hnv = 0;
	uint32_t		 cur, k, j, n, m;
	int32_t			*p = NULL;
	int			 r;

	memset(inst, 0, sizeof(*inst));
	memset(&lr, 0, sizeof(lr));
	lr.buf = buf;
	lr.len = len;
	lr.file = file;
	lr.err = err;
	lr.errlen = errlen;
	if (index < 1) {
		snprintf(err, errlen, "%s: instance %u: they count from 1",
		    file, index);
		return (-1);
	}
	if ((row = calloc(BNB_MAX_JOBS, sizeof(*row))) == NULL) {
		snprintf(err, errlen, "%s: out of memory", file);
		return (-1);
	}
	for (cur = 1; cur <= index; cur++) {
		if ((r = bnb_next_line(&lr, 0)) == -1)
			goto fail;
		if (r == 0) {
			if (cur == 1)
				bnb_lerr(&lr, "no instance in the file");
			else
				bnb_lerr(&lr, "the file has %u instance%s, "
				    "not %u", cur - 1, cur == 2 ? "" : "s",
				    index);
			goto fail;
		}
		if (!bnb_text_is(&lr, "number of jobs")) {
			bnb_lerr(&lr, "expected the header 'number of jobs, "
			    "number of machines, ...' of instance %u", cur);
			goto fail;
		}
		if ((r = bnb_next_line(&lr, 0)) == -1)
			goto fail;
		if (r == 0) {
			bnb_lerr(&lr, "instance %u: no jobs and machines line",
			    cur);
			goto fail;
		}
		if (bnb_ints(&lr, hdr, 5, &nv, "jobs, machines, seed, upper "
		    "and lower bound") == -1)
			goto fail;
		if ((hnv = nv) < 2) {
			bnb_lerr(&lr, "expected the numbers of jobs and "
			    "machines");
			goto fail;
		}
		if (hdr[0] < 1 || hdr[0] > BNB_MAX_JOBS) {
			bnb_lerr(&lr, "%lld jobs: from 1 to %d", hdr[0],
			    BNB_MAX_JOBS);
			goto fail;
		}
		if (hdr[1] < 1 || hdr[1] > BNB_MAX_MACHINES) {
			bnb_lerr(&lr, "%lld machines: from 1 to %d", hdr[1],
			    BNB_MAX_MACHINES);
			goto fail;
		}
		if ((nv > 3 && (hdr[3] < 0 || hdr[3] > INT32_MAX - 1)) ||
		    (nv > 4 && (hdr[4] < 0 || hdr[4] > INT32_MAX - 1))) {
			bnb_lerr(&lr, "a bound is negative or too large");
			goto fail;
		}
		n = (uint32_t)hdr[0];
		m = (uint32_t)hdr[1];
		if ((r = bnb_next_line(&lr, 0)) == -1)
			goto fail;
		if (r == 0 || !bnb_text_is(&lr, "processing times")) {
			bnb_lerr(&lr, "expected 'processing times :' of "
			    "instance %u", cur);
			goto fail;
		}
		if (cur == index &&
		    (p = calloc((size_t)n * m, sizeof(*p))) == NULL) {
			bnb_lerr(&lr, "out of memory");
			goto fail;
		}
		for (k = 0; k < m; k++) {
			if ((r = bnb_next_line(&lr, 0)) == -1)
				goto fail;
			if (r == 0) {
				bnb_lerr(&lr, "instance %u: the file ends "
				    "before machine %u's times", cur, k + 1);
				goto fail;
			}
			if (bnb_text_is(&lr, "number of jobs")) {
				bnb_lerr(&lr, "instance %u: expected %u rows "
				    "of times, found %u", cur, m, k);
				goto fail;
			}
			if (bnb_ints(&lr, row, n, &nv, "processing times") ==
			    -1)
				goto fail;
			if (nv != n) {
				bnb_lerr(&lr, "machine %u has %zu processing "
				    "times, not %u", k + 1, nv, n);
				goto fail;
			}
			for (j = 0; j < n; j++) {
				if (row[j] < 0) {
					bnb_lerr(&lr, "negative processing "
					    "time %lld (job %u)", row[j],
					    j + 1);
					goto fail;
				}
				if (row[j] > BNB_MAX_TIME) {
					bnb_lerr(&lr, "processing time %lld "
					    "(job %u) is over %d, the most "
					    "the bounds' int32 sums allow",
					    row[j], j + 1, BNB_MAX_TIME);
					goto fail;
				}
				if (p != NULL)
					p[(size_t)k * n + j] = (int32_t)row[j];
			}
		}
		if (cur == index) {
			inst->n = n;
			inst->m = m;
			inst->p = p;
			inst->index = index;
			inst->seed = hnv > 2 ? hdr[2] : -1;
			inst->ub = hnv > 3 ? (int32_t)hdr[3] : -1;
			inst->lb = hnv > 4 ? (int32_t)hdr[4] : -1;
		}
	}
	free(row);
	return (0);
fail:
	free(row);
	free(p);
	memset(inst, 0, sizeof(*inst));
	return (-1);
}

/* Check an instance built by hand against the module's limits. */
int
bnb_instance_check(const struct bnb_instance *inst, char *err,
    size_t errlen)
{
	size_t	 i;

	if (inst->n < 1 || inst->n > BNB_MAX_JOBS) {
		snprintf(err, errlen, "%u jobs: from 1 to %d", inst->n,
		    BNB_MAX_JOBS);
		return (-1);
	}
	if (inst->m < 1 || inst->m > BNB_MAX_MACHINES) {
		snprintf(err, errlen, "%u machines: from 1 to %d", inst->m,
		    BNB_MAX_MACHINES);
		return (-1);
	}
	if (inst->p == NULL) {
		snprintf(err, errlen, "no processing times");
		return (-1);
	}
	for (i = 0; i < (size_t)inst->n * inst->m; i++)
		if (inst->p[i] < 0 || inst->p[i] > BNB_MAX_TIME) {
			snprintf(err, errlen, "processing time %d is not "
			    "from 0 to %d", inst->p[i], BNB_MAX_TIME);
			return (-1);
		}
	return (0);
}

/* Free an instance's times. */
void
bnb_instance_free(struct bnb_instance *inst)
{
	free(inst->p);
	inst->p = NULL;
}

/*
 * Is v[0 .. len - 1] made of distinct jobs below n?  (A permutation when
 * len is n.)  Returns 0 or -1.
 */
int
bnb_perm_check(const uint16_t *v, uint32_t len, uint32_t n)
{
	uint8_t		 seen[BNB_MAX_JOBS];
	uint32_t	 i;

	if (n > BNB_MAX_JOBS || len > n)
		return (-1);
	memset(seen, 0, n);
	for (i = 0; i < len; i++) {
		if (v[i] >= n || seen[v[i]])
			return (-1);
		seen[v[i]] = 1;
	}
	return (0);
}

/* Machine completion times f after appending job j to a prefix with f0. */
void
bnb_front_add(const struct bnb_instance *inst, const int32_t *f0,
    uint16_t j, int32_t *f)
{
	const int32_t	*p = inst->p + j;
	int32_t		 c = 0;
	uint32_t	 k;

	for (k = 0; k < inst->m; k++, p += inst->n) {
		c = (c > f0[k] ? c : f0[k]) + *p;
		f[k] = c;
	}
}

/*
 * Machine tails b after putting job j in front of a suffix with tails b0:
 * b[k] is the time from the suffix's start on machine k to its end when
 * it runs as early as it can (the flow shop run backwards, last machine
 * first).
 */
void
bnb_back_add(const struct bnb_instance *inst, const int32_t *b0,
    uint16_t j, int32_t *b)
{
	const int32_t	*p = inst->p + (size_t)(inst->m - 1) * inst->n + j;
	int32_t		 c = 0;
	uint32_t	 k;

	for (k = inst->m; k-- > 0; p -= inst->n) {
		c = (c > b0[k] ? c : b0[k]) + *p;
		b[k] = c;
	}
}

/*
 * The makespan of a prefix with completion times f followed by a suffix
 * with tails b (Taillard's insertion formula): max over k of f[k] + b[k].
 */
int32_t
bnb_join(const int32_t *f, const int32_t *b, uint32_t m)
{
	int32_t		 c = 0;
	uint32_t	 k;

	for (k = 0; k < m; k++)
		if (f[k] + b[k] > c)
			c = f[k] + b[k];
	return (c);
}

/* The makespan of the first len jobs of perm. */
int32_t
bnb_makespan(const struct bnb_instance *inst, const uint16_t *perm,
    uint32_t len)
{
	int32_t		 f[BNB_MAX_MACHINES];
	uint32_t	 i;

	memset(f, 0, sizeof(f));
	for (i = 0; i < len; i++)
		bnb_front_add(inst, f, perm[i], f);
	return (len > 0 ? f[inst->m - 1] : 0);
}

/*
 * Johnson's order for machine pair i (Mitten's rule with the lags): the
 * jobs with a + lag <= b + lag by increasing a, then the others by
 * decreasing b; ties by job number.
 */
static void
bnb_johnson(struct bnb_problem *pb, uint32_t i)
{
	const struct bnb_instance	*inst = &pb->inst;
	uint16_t			*o = pb->order + (size_t)i * inst->n;
	uint32_t			 n = inst->n, j, r, s, nfirst = 0;
	const int32_t			*a = inst->p + (size_t)pb->pk[i] * n;
	const int32_t			*b = inst->p + (size_t)pb->pl[i] * n;
	const int32_t			*lag = pb->lag + (size_t)i * n;
	uint16_t			 t;

	for (j = 0; j < n; j++)
		if (a[j] <= b[j])
			o[nfirst++] = (uint16_t)j;
	s = nfirst;
	for (j = 0; j < n; j++)
		if (a[j] > b[j])
			o[s++] = (uint16_t)j;
	for (r = 1; r < nfirst; r++) {
		t = o[r];
		for (s = r; s > 0 && a[o[s - 1]] + lag[o[s - 1]] >
		    a[t] + lag[t]; s--)
			o[s] = o[s - 1];
		o[s] = t;
	}
	for (r = nfirst + 1; r < n; r++) {
		t = o[r];
		for (s = r; s > nfirst && b[o[s - 1]] + lag[o[s - 1]] <
		    b[t] + lag[t]; s--)
			o[s] = o[s - 1];
		o[s] = t;
	}
}

/* Make a problem with forward branching: bnb_problem_make(). */
struct bnb_problem *
bnb_problem_new(const struct bnb_instance *inst, int lb, char *err,
    size_t errlen)
{
	return (bnb_problem_make(inst, lb, BNB_FORWARD, err, errlen));
}

/*
 * Make a problem of an instance (copied), a bound (enum bnb_lb) and a
 * branching rule (enum bnb_branch): the heads and tails, and for LB2 the
 * lags and Johnson's order of every machine pair.
 */
struct bnb_problem *
bnb_problem_make(const struct bnb_instance *inst, int lb, int branch,
    char *err, size_t errlen)
{
	struct bnb_problem	*pb;
	size_t			 n, m, nm, i;
	uint32_t		 k, l, j, q;
	int32_t			 s;

	if (bnb_instance_check(inst, err, errlen) == -1)
		return (NULL);
	if (lb != BNB_LB1 && lb != BNB_LB2) {
		snprintf(err, errlen, "lower bound %d: 1 or 2", lb);
		return (NULL);
	}
	if (branch != BNB_FORWARD && branch != BNB_BIDIR) {
		snprintf(err, errlen, "branching %d: 1 or 2", branch);
		return (NULL);
	}
	n = inst->n;
	m = inst->m;
	nm = n * m;
	if ((pb = calloc(1, sizeof(*pb))) == NULL)
		goto nomem;
	pb->inst = *inst;
	pb->lb = lb;
	pb->branch = branch;
	pb->npairs = lb == BNB_LB2 ? (uint32_t)(m * (m - 1) / 2) : 0;
	if ((pb->inst.p = calloc(nm, sizeof(int32_t))) == NULL ||
	    (pb->tail = calloc(nm, sizeof(int32_t))) == NULL ||
	    (pb->head = calloc(nm, sizeof(int32_t))) == NULL ||
	    (pb->pk = calloc(pb->npairs + 1, sizeof(uint16_t))) == NULL ||
	    (pb->pl = calloc(pb->npairs + 1, sizeof(uint16_t))) == NULL ||
	    (pb->lag = calloc(pb->npairs * n + 1, sizeof(int32_t))) == NULL ||
	    (pb->order = calloc(pb->npairs * n + 1, sizeof(uint16_t))) ==
	    NULL)
		goto nomem;
	memcpy(pb->inst.p, inst->p, nm * sizeof(int32_t));
	for (j = 0; j < n; j++) {
		s = 0;
		for (k = (uint32_t)m; k-- > 0;) {
			pb->tail[k * n + j] = s;
			s += inst->p[k * n + j];
		}
		s = 0;
		for (k = 0; k < m; k++) {
			pb->head[k * n + j] = s;
			s += inst->p[k * n + j];
		}
	}
	i = 0;
	for (k = 0; k < pb->npairs && k < m; k++)
		for (l = k + 1; l < m; l++, i++) {
			pb->pk[i] = (uint16_t)k;
			pb->pl[i] = (uint16_t)l;
			for (j = 0; j < n; j++) {
				s = 0;
				for (q = k + 1; q < l; q++)
					s += inst->p[q * n + j];
				pb->lag[i * n + j] = s;
			}
		}
	for (i = 0; i < pb->npairs; i++)
		bnb_johnson(pb, (uint32_t)i);
	return (pb);
nomem:
	bnb_problem_free(pb);
	snprintf(err, errlen, "out of memory");
	return (NULL);
}

/* Free a problem. */
void
bnb_problem_free(struct bnb_problem *pb)
{
	if (pb == NULL)
		return;
	free(pb->inst.p);
	free(pb->tail);
	free(pb->head);
	free(pb->pk);
	free(pb->pl);
	free(pb->lag);
	free(pb->order);
	free(pb);
}

/* A problem's instance (its own copy). */
const struct bnb_instance *
bnb_problem_instance(const struct bnb_problem *pb)
{
	return (&pb->inst);
}

/* A problem's bound, enum bnb_lb. */
int
bnb_problem_lb(const struct bnb_problem *pb)
{
	return (pb->lb);
}

/* A problem's branching rule, enum bnb_branch. */
int
bnb_problem_branch(const struct bnb_problem *pb)
{
	return (pb->branch);
}

/* The name of a branching rule, as r3qctl takes it. */
const char *
bnb_branch_name(int branch)
{
	return (branch == BNB_FORWARD ? "forward" : branch == BNB_BIDIR ?
	    "bidir" : "?");
}

/* The name of a bound, as r3qctl takes it. */
const char *
bnb_lb_name(int lb)
{
	return (lb == BNB_LB1 ? "lb1" : lb == BNB_LB2 ? "lb2" : "?");
}

/*
 * Sum up the jobs not in used (nleft of them, listed in left) for the
 * bounds of a node's children.
 */
void
bnb_agg_make(const struct bnb_problem *pb, const uint16_t *left,
    uint32_t nleft, struct bnb_agg *ag)
{
	const struct bnb_instance	*inst = &pb->inst;
	const int32_t			*p, *t, *h;
	uint32_t			 k, i;
	uint16_t			 j;
	int32_t				 v;

	for (k = 0; k < inst->m; k++) {
		p = inst->p + (size_t)k * inst->n;
		t = pb->tail + (size_t)k * inst->n;
		h = pb->head + (size_t)k * inst->n;
		ag->sum[k] = 0;
		ag->minp[k] = ag->minp2[k] = INT32_MAX / 4;
		ag->mint[k] = ag->mint2[k] = INT32_MAX / 4;
		ag->minh[k] = ag->minh2[k] = INT32_MAX / 4;
		ag->argp[k] = ag->argt[k] = ag->argh[k] = BNB_NOJOB;
		for (i = 0; i < nleft; i++) {
			j = left[i];
			ag->sum[k] += p[j];
			if ((v = p[j]) < ag->minp[k]) {
				ag->minp2[k] = ag->minp[k];
				ag->minp[k] = v;
				ag->argp[k] = j;
			} else if (v < ag->minp2[k])
				ag->minp2[k] = v;
			if ((v = t[j]) < ag->mint[k]) {
				ag->mint2[k] = ag->mint[k];
				ag->mint[k] = v;
				ag->argt[k] = j;
			} else if (v < ag->mint2[k])
				ag->mint2[k] = v;
			if ((v = h[j]) < ag->minh[k]) {
				ag->minh2[k] = ag->minh[k];
				ag->minh[k] = v;
				ag->argh[k] = j;
			} else if (v < ag->minh2[k])
				ag->minh2[k] = v;
		}
	}
}

/*
 * The lower bound of a child: the node summed up in ag (its nleft
 * unscheduled jobs, used marking the others) with job skip placed
 * (BNB_NOJOB: the node itself), f the child's machine completion times
 * after its prefix, b its tails before its suffix.
 *
 * Each machine k has a release r[k] for the unscheduled jobs and a tail
 * q[k] after them.  r[k] = max(f[k], r[k - 1] + the shortest time on
 * k - 1, the shortest head before k): the first unscheduled job starts
 * on k no earlier.  q[k] = max(b[k], q[k + 1] + the shortest time on
 * k + 1, the shortest tail after k): from the last one's end on k, the
 * suffix still has b[k] to run, and that job itself the machines after
 * k.  LB1: r[k] + the remaining work on k + q[k].  LB2: for each machine
 * pair, the two-machine relaxation with lags solved by Johnson's order
 * from r[k] and r[l], plus q[l].  The pairs stop once the bound reaches
 * enough (the incumbent: the child is pruned whatever the rest say).
 */
int32_t
bnb_child_bound(const struct bnb_problem *pb, const struct bnb_agg *ag,
    const uint8_t *used, uint32_t nleft, const int32_t *f, const int32_t *b,
    uint16_t skip, int32_t enough)
{
	const struct bnb_instance	*inst = &pb->inst;
	const uint16_t			*o;
	const int32_t			*pa, *pbb, *lag;
	int32_t				 r[BNB_MAX_MACHINES], lb = 0, v, mp;
	int32_t				 q[BNB_MAX_MACHINES], c1, c2;
	uint32_t			 n = inst->n, m = inst->m, k, i, l, s;
	uint16_t			 j;

	if (skip != BNB_NOJOB)
		nleft--;
	if (nleft == 0)
		return (bnb_join(f, b, m));
	for (k = m; k-- > 0;) {
		q[k] = skip == ag->argt[k] ? ag->mint2[k] : ag->mint[k];
		if (b[k] > q[k])
			q[k] = b[k];
		if (k + 1 < m) {
			mp = skip == ag->argp[k + 1] ? ag->minp2[k + 1] :
			    ag->minp[k + 1];
			if (q[k + 1] + mp > q[k])
				q[k] = q[k + 1] + mp;
		}
	}
	for (k = 0; k < m; k++) {
		r[k] = skip == ag->argh[k] ? ag->minh2[k] : ag->minh[k];
		if (f[k] > r[k])
			r[k] = f[k];
		if (k > 0) {
			mp = skip == ag->argp[k - 1] ? ag->minp2[k - 1] :
			    ag->minp[k - 1];
			if (r[k - 1] + mp > r[k])
				r[k] = r[k - 1] + mp;
		}
		v = r[k] + ag->sum[k] + q[k];
		if (skip != BNB_NOJOB)
			v -= inst->p[(size_t)k * n + skip];
		if (v > lb)
			lb = v;
	}
	for (i = 0; i < pb->npairs && lb < enough; i++) {
		k = pb->pk[i];
		l = pb->pl[i];
		pa = inst->p + (size_t)k * n;
		pbb = inst->p + (size_t)l * n;
		lag = pb->lag + (size_t)i * n;
		o = pb->order + (size_t)i * n;
		c1 = r[k];
		c2 = r[l];
		for (s = 0; s < n; s++) {
			j = o[s];
			if (used[j] || j == skip)
				continue;
			c1 += pa[j];
			if (c1 + lag[j] > c2)
				c2 = c1 + lag[j];
			c2 += pbb[j];
		}
		if ((v = c2 + q[l]) > lb)
			lb = v;
	}
	return (lb);
}

/*
 * The lower bound of the node with prefix[0 .. depth - 1] first and
 * suffix[0 .. back - 1] last (its makespan when they hold every job).
 */
static int32_t
bnb_bound_ps(const struct bnb_problem *pb, const uint16_t *prefix,
    uint32_t depth, const uint16_t *suffix, uint32_t back)
{
	const struct bnb_instance	*inst = &pb->inst;
	struct bnb_agg			 ag;
	int32_t				 f[BNB_MAX_MACHINES];
	int32_t				 b[BNB_MAX_MACHINES];
	uint8_t				 used[BNB_MAX_JOBS];
	uint16_t			 left[BNB_MAX_JOBS];
	uint32_t			 i, nleft = 0;

	memset(f, 0, sizeof(f));
	memset(b, 0, sizeof(b));
	memset(used, 0, sizeof(used));
	for (i = 0; i < depth; i++) {
		bnb_front_add(inst, f, prefix[i], f);
		used[prefix[i]] = 1;
	}
	for (i = back; i-- > 0;) {
		bnb_back_add(inst, b, suffix[i], b);
		used[suffix[i]] = 1;
	}
	if (depth + back >= inst->n)
		return (bnb_join(f, b, inst->m));
	for (i = 0; i < inst->n; i++)
		if (!used[i])
			left[nleft++] = (uint16_t)i;
	bnb_agg_make(pb, left, nleft, &ag);
	return (bnb_child_bound(pb, &ag, used, nleft, f, b, BNB_NOJOB,
	    BNB_NONE));
}

/* The lower bound of the prefix's first depth jobs (its makespan at n). */
int32_t
bnb_bound(const struct bnb_problem *pb, const uint16_t *prefix,
    uint32_t depth)
{
	return (bnb_bound_ps(pb, prefix, depth, NULL, 0));
}

/* The lower bound of a subproblem, its prefix and suffix. */
int32_t
bnb_bound_sub(const struct bnb_problem *pb, const struct bnb_sub *sub)
{
	return (bnb_bound_ps(pb, sub->prefix, sub->depth,
	    sub->prefix + sub->depth, sub->back));
}

/*
 * The validator every test runs on every schedule: a schedule is only as
 * good as the model it keeps.  It checks that each processor sends one
 * and receives one message at a time, that every byte of every (i, j) is
 * delivered exactly once across its pieces (numbered 0 .. k - 1 in start
 * order), that each piece lasts its own start-up plus its bytes over the
 * bandwidth, and that the completion time reported is the last end.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xchg/xchg.h"

static int	 val_fail(char *, size_t, const char *, ...)
		    __attribute__((format(printf, 3, 4)));
static int	 val_by_src(const void *, const void *);
static int	 val_by_dst(const void *, const void *);

/* Say which rule was broken; returns -1. */
static int
val_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list	 ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return (-1);
}

/*
 * Two events of one sender or one receiver by start, then end, then piece
 * number: with costs many orders of magnitude apart, an event can be
 * shorter than the rounding of the times around it and so end where it
 * starts; placed first among those that start at the same time, it
 * overlaps nothing.
 */
static int
val_by_time(const struct xchg_event *x, const struct xchg_event *y)
{
	if (x->ev_start != y->ev_start)
		return (x->ev_start < y->ev_start ? -1 : 1);
	if (x->ev_end != y->ev_end)
		return (x->ev_end < y->ev_end ? -1 : 1);
	return (x->ev_piece < y->ev_piece ? -1 : x->ev_piece > y->ev_piece);
}

/* Order event pointers by sender, then time. */
static int
val_by_src(const void *a, const void *b)
{
	const struct xchg_event	*x = *(const struct xchg_event *const *)a;
	const struct xchg_event	*y = *(const struct xchg_event *const *)b;

	if (x->ev_src != y->ev_src)
		return (x->ev_src < y->ev_src ? -1 : 1);
	return (val_by_time(x, y));
}

/* Order event pointers by receiver, then time. */
static int
val_by_dst(const void *a, const void *b)
{
	const struct xchg_event	*x = *(const struct xchg_event *const *)a;
	const struct xchg_event	*y = *(const struct xchg_event *const *)b;

	if (x->ev_dst != y->ev_dst)
		return (x->ev_dst < y->ev_dst ? -1 : 1);
	return (val_by_time(x, y));
}

/*
 * 0 if xs is a valid schedule of mx, -1 with the first violation named in
 * err otherwise.  Times compare within a relative 1e-9 of the completion.
 */
int
xchg_validate(const struct xchg_matrix *mx, const struct xchg_sched *xs,
    char *err, size_t errlen)
{
	const struct xchg_event	*ev, **v = NULL;
	unsigned		 p, side;
	uint64_t		*got = NULL;
	unsigned		*next = NULL;
	size_t			 n, k, nn;
	double			 eps, last = 0, want;
	int			 rc = -1;

	if (xchg_matrix_check(mx, err, errlen) == -1)
		return (-1);
	p = mx->xm_p;
	nn = (size_t)p * p;
	if (xs->xs_p != p)
		return (val_fail(err, errlen, "schedule for %u processors, "
		    "matrix of %u", xs->xs_p, p));
	if (!isfinite(xs->xs_time) || xs->xs_time < 0)
		return (val_fail(err, errlen, "completion time %g", xs->xs_time));
	eps = 1e-9 * (1.0 + xs->xs_time);
	got = calloc(nn, sizeof(*got));
	next = calloc(nn, sizeof(*next));
	v = calloc(xs->xs_n + 1, sizeof(*v));
	if (got == NULL || next == NULL || v == NULL) {
		val_fail(err, errlen, "out of memory");
		goto done;
	}

	/* Each event on its own. */
	for (n = 0; n < xs->xs_n; n++) {
		ev = &xs->xs_ev[n];
		v[n] = ev;
		if (ev->ev_src >= p || ev->ev_dst >= p ||
		    ev->ev_src == ev->ev_dst) {
			val_fail(err, errlen, "event %zu: %u->%u is not a "
			    "message between two of %u processors", n,
			    ev->ev_src, ev->ev_dst, p);
			goto done;
		}
		k = (size_t)ev->ev_src * p + ev->ev_dst;
		if (ev->ev_bytes == 0) {
			val_fail(err, errlen, "event %zu (%u->%u): no bytes",
			    n, ev->ev_src, ev->ev_dst);
			goto done;
		}
		if (!isfinite(ev->ev_start) || !isfinite(ev->ev_end) ||
		    ev->ev_start < -eps) {
			val_fail(err, errlen, "event %zu (%u->%u): times %g "
			    "to %g", n, ev->ev_src, ev->ev_dst, ev->ev_start,
			    ev->ev_end);
			goto done;
		}
		want = xchg_piece_cost(mx, ev->ev_src, ev->ev_dst,
		    ev->ev_bytes);
		if (fabs(ev->ev_end - ev->ev_start - want) > eps) {
			val_fail(err, errlen, "event %zu (%u->%u, %llu bytes): "
			    "lasts %.9g s, but its start-up and transfer "
			    "take %.9g s", n, ev->ev_src, ev->ev_dst,
			    (unsigned long long)ev->ev_bytes,
			    ev->ev_end - ev->ev_start, want);
			goto done;
		}
		got[k] += ev->ev_bytes;
		if (ev->ev_end > last)
			last = ev->ev_end;
	}

	/* Every byte exactly once. */
	for (k = 0; k < nn; k++) {
		if (k / p == k % p)
			continue;
		if (got[k] != mx->xm_m[k]) {
			val_fail(err, errlen, "%zu->%zu: %llu bytes delivered, "
			    "%llu to send", k / p, k % p,
			    (unsigned long long)got[k],
			    (unsigned long long)mx->xm_m[k]);
			goto done;
		}
	}

	/* One send and one receive at a time; pieces in start order. */
	for (side = 0; side < 2; side++) {
		qsort(v, xs->xs_n, sizeof(*v), side == 0 ? val_by_src :
		    val_by_dst);
		for (n = 0; n < xs->xs_n; n++) {
			ev = v[n];
			if (side == 0) {
				k = (size_t)ev->ev_src * p + ev->ev_dst;
				if (ev->ev_piece != next[k]++) {
					val_fail(err, errlen, "%u->%u: piece "
					    "%u is number %u in start order",
					    ev->ev_src, ev->ev_dst,
					    ev->ev_piece, next[k] - 1);
					goto done;
				}
			}
			if (n == 0 || (side == 0 ? v[n - 1]->ev_src !=
			    ev->ev_src : v[n - 1]->ev_dst != ev->ev_dst))
				continue;
			if (ev->ev_start < v[n - 1]->ev_end - eps) {
				val_fail(err, errlen, "P%u %s two messages at "
				    "once: %u->%u [%.9g, %.9g) and %u->%u "
				    "[%.9g, %.9g)", side == 0 ? ev->ev_src :
				    ev->ev_dst, side == 0 ? "sends" :
				    "receives", v[n - 1]->ev_src,
				    v[n - 1]->ev_dst, v[n - 1]->ev_start,
				    v[n - 1]->ev_end, ev->ev_src, ev->ev_dst,
				    ev->ev_start, ev->ev_end);
				goto done;
			}
		}
	}

	if (fabs(last - xs->xs_time) > eps) {
		val_fail(err, errlen, "completion time %.9g, but the last "
		    "event ends at %.9g", xs->xs_time, last);
		goto done;
	}
	rc = 0;
done:
	free(got);
	free(next);
	free(v);
	return (rc);
}

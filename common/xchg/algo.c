/*
 * The total-exchange schedulers of Nakahira and Fujiwara, "Scheduling
 * Algorithms for the Total Exchange on the Grid Environment"
 * (doc/algorithms.md §2), two of our own and a portfolio of them.
 *
 * All of them build the schedule on one engine: per processor a send line
 * and a receive line, each the sorted list of its busy intervals, and a
 * placement that either appends an event after both lines' last interval
 * (a list schedule: caterpillar, open shop, static split) or walks the
 * idle gaps the two lines have in common from time 0 and fills them with
 * pieces of the event, the rest going after both lines (dynamic split:
 * "when idle time appears while waiting for communication, split the
 * event so as to remove the idle time", section 3).  A piece pays its own
 * start-up; a gap is filled only by a piece whose transfer time is at
 * least its start-up, so a split never more than doubles what it costs.
 * With re-merging on (improved split, section 5), a piece that starts
 * where the previous piece of the same (i, j) ends extends it instead and
 * pays no start-up again.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "xchg/xchg.h"

#define XCHG_MAX_PIECES	64	/* pieces of one (i, j) made to fill gaps */
#define LBOS_DOMAIN	UINT64_C(0x6c626f73)	/* "lbos" */
#define LBOS_NOISE	0.3	/* urgency jitter of a restart, +-15 % */
#define LBOS_PF_RESTART	64	/* the portfolio restarts lbos up to this p */
#define LBOS_PF_MAXP	128	/* and leaves it out above: O(p^4) */

/* The X and Y grid of the portfolio's improved split runs. */
static const double	pf_x[] = { 1.0, 1.25, 1.5, 2.0 };
static const double	pf_y[] = { 0.2, 0.5, 0.8 };

#define nitems(a)	(sizeof(a) / sizeof((a)[0]))

static const char *const algo_names[XCHG_NALGO] = {
	"caterpillar", "openshop", "static", "dynamic", "improved", "lbos",
	"insertion", "portfolio"
};

/* The busy intervals of one direction of one processor, sorted. */
struct line {
	double		*l_iv;		/* start, end, start, end, ... */
	size_t		 l_n;
	size_t		 l_cap;
};

/*
 * One schedule being built: the lines, what is left of each (i, j) and in
 * how many pieces it is still to go (a static split), the last event of
 * each (i, j) for re-merging, and the events so far.  Lives for one
 * algorithm run.
 */
struct eng {
	const struct xchg_matrix *e_mx;
	unsigned		 e_p;
	struct line		*e_snd;
	struct line		*e_rcv;
	uint64_t		*e_rem;		/* bytes left */
	unsigned		*e_kleft;	/* pieces left, >= 1 */
	unsigned		*e_npieces;	/* pieces made */
	long			*e_last;	/* event index, -1 */
	struct xchg_sched	*e_xs;
	int			 e_fill;	/* place into gaps (dynamic) */
	int			 e_merge;	/* re-merge (improved) */
	int			 e_oom;
};

static double	 tol(double);
static double	 line_end(const struct line *);
static int	 line_insert(struct line *, double, double);
static void	 gap_next(const struct line *, const struct line *, double,
		    double *, double *);
static int	 eng_init(struct eng *, const struct xchg_matrix *,
		    struct xchg_sched *);
static void	 eng_free(struct eng *);
static void	 eng_add(struct eng *, unsigned, unsigned, double, uint64_t);
static void	 eng_place(struct eng *, unsigned, unsigned, uint64_t);
static uint64_t	 eng_take(struct eng *, unsigned, unsigned);
static void	 eng_openshop(struct eng *, const unsigned char *);
static int	 eng_finish(struct eng *);
static int	 sched_caterpillar(const struct xchg_matrix *,
		    struct xchg_sched *);
static int	 sched_openshop(const struct xchg_matrix *, int, int,
		    struct xchg_sched *);
static int	 sched_improved(const struct xchg_matrix *, double, double,
		    struct xchg_sched *);
static int	 sched_insert(const struct xchg_matrix *, struct xchg_sched *);
static double	 small_cut(const double *, size_t);
static int	 sched_lbos(const struct xchg_matrix *, uint64_t, unsigned,
		    struct xchg_sched *);
static int	 sched_portfolio(const struct xchg_matrix *,
		    const struct xchg_params *, struct xchg_sched *);
static int	 event_cmp(const void *, const void *);
static void	 sched_take(struct xchg_sched *, struct xchg_sched *);

/* How close two times must be to count as equal. */
static double
tol(double t)
{
	return (1e-12 * (1.0 + fabs(t)));
}

/* The end of the last busy interval, 0 if none. */
static double
line_end(const struct line *l)
{
	return (l->l_n == 0 ? 0 : l->l_iv[2 * l->l_n - 1]);
}

/* Mark [a, b) busy; the caller has checked that it is free. */
static int
line_insert(struct line *l, double a, double b)
{
	size_t	 lo = 0, hi = l->l_n, mid;
	double	*iv;

	if (l->l_n == l->l_cap) {
		l->l_cap = l->l_cap == 0 ? 16 : l->l_cap * 2;
		if ((iv = reallocarray(l->l_iv, l->l_cap, 2 *
		    sizeof(*iv))) == NULL)
			return (-1);
		l->l_iv = iv;
	}
	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (l->l_iv[2 * mid] < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	memmove(l->l_iv + 2 * lo + 2, l->l_iv + 2 * lo,
	    (l->l_n - lo) * 2 * sizeof(*l->l_iv));
	l->l_iv[2 * lo] = a;
	l->l_iv[2 * lo + 1] = b;
	l->l_n++;
	return (0);
}

/*
 * The first interval [*a, *b) from time t on in which both s and r are
 * idle; *b is INFINITY after the last busy interval of both.
 */
static void
gap_next(const struct line *s, const struct line *r, double t, double *a,
    double *b)
{
	size_t	 is = 0, ir = 0, lo, hi, mid;
	int	 moved;

	/* Skip, by bisection on the ends, the intervals over before t. */
	for (lo = 0, hi = s->l_n; lo < hi; ) {
		mid = (lo + hi) / 2;
		if (s->l_iv[2 * mid + 1] <= t + tol(t))
			lo = mid + 1;
		else
			hi = mid;
	}
	is = lo;
	for (lo = 0, hi = r->l_n; lo < hi; ) {
		mid = (lo + hi) / 2;
		if (r->l_iv[2 * mid + 1] <= t + tol(t))
			lo = mid + 1;
		else
			hi = mid;
	}
	ir = lo;
	do {
		moved = 0;
		while (is < s->l_n && s->l_iv[2 * is] <= t + tol(t)) {
			if (s->l_iv[2 * is + 1] > t)
				t = s->l_iv[2 * is + 1];
			is++;
			moved = 1;
		}
		while (ir < r->l_n && r->l_iv[2 * ir] <= t + tol(t)) {
			if (r->l_iv[2 * ir + 1] > t)
				t = r->l_iv[2 * ir + 1];
			ir++;
			moved = 1;
		}
	} while (moved);
	*a = t;
	*b = INFINITY;
	if (is < s->l_n)
		*b = s->l_iv[2 * is];
	if (ir < r->l_n && r->l_iv[2 * ir] < *b)
		*b = r->l_iv[2 * ir];
}

/* An empty schedule over mx, every message whole and still to go. */
static int
eng_init(struct eng *e, const struct xchg_matrix *mx, struct xchg_sched *xs)
{
	size_t	 n = (size_t)mx->xm_p * mx->xm_p, k;

	memset(e, 0, sizeof(*e));
	e->e_mx = mx;
	e->e_p = mx->xm_p;
	e->e_xs = xs;
	e->e_snd = calloc(e->e_p, sizeof(*e->e_snd));
	e->e_rcv = calloc(e->e_p, sizeof(*e->e_rcv));
	e->e_rem = calloc(n, sizeof(*e->e_rem));
	e->e_kleft = calloc(n, sizeof(*e->e_kleft));
	e->e_npieces = calloc(n, sizeof(*e->e_npieces));
	e->e_last = calloc(n, sizeof(*e->e_last));
	if (e->e_snd == NULL || e->e_rcv == NULL || e->e_rem == NULL ||
	    e->e_kleft == NULL || e->e_npieces == NULL || e->e_last == NULL) {
		eng_free(e);
		return (-1);
	}
	for (k = 0; k < n; k++) {
		e->e_rem[k] = k / e->e_p == k % e->e_p ? 0 : mx->xm_m[k];
		e->e_kleft[k] = 1;
		e->e_last[k] = -1;
	}
	xchg_sched_free(xs);
	xs->xs_p = e->e_p;
	return (0);
}

/* Free the engine (not the schedule it built). */
static void
eng_free(struct eng *e)
{
	unsigned	 i;

	for (i = 0; e->e_snd != NULL && i < e->e_p; i++)
		free(e->e_snd[i].l_iv);
	for (i = 0; e->e_rcv != NULL && i < e->e_p; i++)
		free(e->e_rcv[i].l_iv);
	free(e->e_snd);
	free(e->e_rcv);
	free(e->e_rem);
	free(e->e_kleft);
	free(e->e_npieces);
	free(e->e_last);
	memset(e, 0, sizeof(*e));
}

/*
 * Put n bytes of (i, j) on the wire at time t: a new piece paying T_ij,
 * or with re-merging, if the last piece of (i, j) ends at t, that piece
 * made longer (improved split: "merging them cancels the split overhead").
 */
static void
eng_add(struct eng *e, unsigned i, unsigned j, double t, uint64_t n)
{
	const struct xchg_matrix *mx = e->e_mx;
	struct xchg_sched	*xs = e->e_xs;
	struct xchg_event	*ev, *nev;
	size_t			 k = (size_t)i * e->e_p + j;
	double			 end;

	if (e->e_merge && e->e_last[k] >= 0) {
		ev = &xs->xs_ev[e->e_last[k]];
		if (fabs(ev->ev_end - t) <= tol(t)) {
			end = ev->ev_end + (double)n / mx->xm_b[k];
			if (line_insert(&e->e_snd[i], ev->ev_end, end) == -1 ||
			    line_insert(&e->e_rcv[j], ev->ev_end, end) == -1)
				e->e_oom = 1;
			ev->ev_end = end;
			ev->ev_bytes += n;
			return;
		}
	}
	if (xs->xs_n == xs->xs_cap) {
		xs->xs_cap = xs->xs_cap == 0 ? 64 : xs->xs_cap * 2;
		if ((nev = reallocarray(xs->xs_ev, xs->xs_cap,
		    sizeof(*nev))) == NULL) {
			e->e_oom = 1;
			return;
		}
		xs->xs_ev = nev;
	}
	ev = &xs->xs_ev[xs->xs_n];
	memset(ev, 0, sizeof(*ev));
	ev->ev_src = i;
	ev->ev_dst = j;
	ev->ev_start = t;
	ev->ev_end = t + xchg_piece_cost(mx, i, j, n);
	ev->ev_bytes = n;
	if (line_insert(&e->e_snd[i], ev->ev_start, ev->ev_end) == -1 ||
	    line_insert(&e->e_rcv[j], ev->ev_start, ev->ev_end) == -1)
		e->e_oom = 1;
	e->e_last[k] = (long)xs->xs_n++;
	e->e_npieces[k]++;
}

/*
 * Place n bytes of (i, j): after the last interval of both lines, or with
 * filling on, first into the idle gaps the two lines share (dynamic
 * split), a piece a gap where it carries at least its start-up's worth.
 */
static void
eng_place(struct eng *e, unsigned i, unsigned j, uint64_t n)
{
	const struct xchg_matrix *mx = e->e_mx;
	size_t			 k = (size_t)i * e->e_p + j;
	double			 t, a, b, room, sn, rn, B = mx->xm_b[k];
	double			 T = mx->xm_t[k];
	uint64_t		 fit;
	int			 merging;

	if (!e->e_fill) {
		sn = line_end(&e->e_snd[i]);
		rn = line_end(&e->e_rcv[j]);
		eng_add(e, i, j, sn > rn ? sn : rn, n);
		return;
	}
	for (t = 0; n > 0 && !e->e_oom; t = b) {
		gap_next(&e->e_snd[i], &e->e_rcv[j], t, &a, &b);
		if (isinf(b)) {
			eng_add(e, i, j, a, n);
			return;
		}
		merging = e->e_merge && e->e_last[k] >= 0 &&
		    fabs(e->e_xs->xs_ev[e->e_last[k]].ev_end - a) <= tol(a);
		room = b - a - (merging ? 0 : T);
		if ((double)n / B <= room + tol(b)) {
			eng_add(e, i, j, a, n);
			return;
		}
		if (e->e_npieces[k] >= XCHG_MAX_PIECES - 1 && !merging)
			continue;
		/* Shave a little so that rounding never overruns b. */
		if (room <= 0 || (fit = (uint64_t)floor(room * B *
		    (1 - 1e-9))) == 0)
			continue;
		if (!merging && (double)fit / B < T)
			continue;
		eng_add(e, i, j, a, fit);
		n -= fit;
	}
}

/* The next piece of (i, j): its remaining bytes over its pieces left. */
static uint64_t
eng_take(struct eng *e, unsigned i, unsigned j)
{
	size_t		 k = (size_t)i * e->e_p + j;
	uint64_t	 n;

	n = (e->e_rem[k] + e->e_kleft[k] - 1) / e->e_kleft[k];
	e->e_rem[k] -= n;
	if (e->e_kleft[k] > 1)
		e->e_kleft[k]--;
	return (n);
}

/*
 * The open shop of section 3, over the (i, j) with in[] set: repeatedly
 * the sender whose send line ends first (ties: the one with the most cost
 * left to send, then the lower number) sends,
 * to the receiver among those it still has something for whose receive
 * line ends first (ties: the costlier next piece, then the lower number),
 * the next piece of that message; until nothing is left.
 */
static void
eng_openshop(struct eng *e, const unsigned char *in)
{
	const struct xchg_matrix *mx = e->e_mx;
	unsigned	 p = e->e_p, i, j, bi, bj, *cnt;
	size_t		 k;
	double		 f, bf, c, bc, *left;
	uint64_t	 n;

	cnt = calloc(p, sizeof(*cnt));
	left = calloc(p, sizeof(*left));
	if (cnt == NULL || left == NULL) {
		free(cnt);
		free(left);
		e->e_oom = 1;
		return;
	}
	for (k = 0; k < (size_t)p * p; k++) {
		if (in[k] && e->e_rem[k] > 0) {
			cnt[k / p]++;
			left[k / p] += e->e_kleft[k] * mx->xm_t[k] +
			    (double)e->e_rem[k] / mx->xm_b[k];
		}
	}
	while (!e->e_oom) {
		bi = p;
		bf = INFINITY;
		for (i = 0; i < p; i++) {
			if (cnt[i] == 0)
				continue;
			f = line_end(&e->e_snd[i]);
			if (bi == p || f < bf - tol(bf) ||
			    (f <= bf + tol(bf) && left[i] > left[bi])) {
				bi = i;
				bf = f;
			}
		}
		if (bi == p)
			break;
		bj = p;
		bf = INFINITY;
		bc = 0;
		for (j = 0; j < p; j++) {
			k = (size_t)bi * p + j;
			if (!in[k] || e->e_rem[k] == 0)
				continue;
			f = line_end(&e->e_rcv[j]);
			c = xchg_piece_cost(mx, bi, j, (e->e_rem[k] +
			    e->e_kleft[k] - 1) / e->e_kleft[k]);
			if (bj == p || f < bf - tol(bf) ||
			    (f <= bf + tol(bf) && c > bc)) {
				bj = j;
				bf = f;
				bc = c;
			}
		}
		k = (size_t)bi * p + bj;
		n = eng_take(e, bi, bj);
		left[bi] -= xchg_piece_cost(mx, bi, bj, n);
		eng_place(e, bi, bj, n);
		if (e->e_rem[k] == 0)
			cnt[bi]--;
	}
	free(cnt);
	free(left);
}

/* Order events by start, then sender. */
static int
event_cmp(const void *a, const void *b)
{
	const struct xchg_event	*x = a, *y = b;

	if (x->ev_start != y->ev_start)
		return (x->ev_start < y->ev_start ? -1 : 1);
	if (x->ev_src != y->ev_src)
		return (x->ev_src < y->ev_src ? -1 : 1);
	return (x->ev_dst < y->ev_dst ? -1 : x->ev_dst > y->ev_dst);
}

/*
 * Finish the schedule: events sorted by start, each piece numbered in
 * start order within its (i, j), the completion time the last end.
 */
static int
eng_finish(struct eng *e)
{
	struct xchg_sched	*xs = e->e_xs;
	size_t			 n;
	unsigned		*next;

	if (e->e_oom)
		return (-1);
	if ((next = calloc((size_t)e->e_p * e->e_p, sizeof(*next))) == NULL)
		return (-1);
	if (xs->xs_n > 0)
		qsort(xs->xs_ev, xs->xs_n, sizeof(*xs->xs_ev), event_cmp);
	xs->xs_time = 0;
	for (n = 0; n < xs->xs_n; n++) {
		xs->xs_ev[n].ev_piece = next[(size_t)xs->xs_ev[n].ev_src *
		    e->e_p + xs->xs_ev[n].ev_dst]++;
		if (xs->xs_ev[n].ev_end > xs->xs_time)
			xs->xs_time = xs->xs_ev[n].ev_end;
	}
	free(next);
	return (0);
}

/*
 * Caterpillar (Bhat et al., section 3): in step s = 1 .. p - 1 every P_i
 * sends to P_(i+s) mod p.  Without barriers: each event starts as soon as
 * its sender and receiver are done with their events of earlier steps.
 */
static int
sched_caterpillar(const struct xchg_matrix *mx, struct xchg_sched *xs)
{
	struct eng	 e;
	unsigned	 p = mx->xm_p, s, i, j;
	int		 rc;

	if (eng_init(&e, mx, xs) == -1)
		return (-1);
	for (s = 1; s < p; s++) {
		for (i = 0; i < p; i++) {
			j = (i + s) % p;
			if (mx->xm_m[(size_t)i * p + j] > 0)
				eng_place(&e, i, j, eng_take(&e, i, j));
		}
	}
	rc = eng_finish(&e);
	eng_free(&e);
	return (rc);
}

/*
 * Open shop (fill = 0, presplit = 0), static split (presplit = 1) and
 * dynamic split (fill = 1).  Static split (Jinno et al., as section 3
 * names it: "split some events in advance, then open shop"; the seed does
 * not say which, so this is our rule): every event costing more than twice
 * the mean event cost is sent as two halves, each paying its start-up.
 */
static int
sched_openshop(const struct xchg_matrix *mx, int fill, int presplit,
    struct xchg_sched *xs)
{
	struct eng	 e;
	unsigned char	*in;
	unsigned	 p = mx->xm_p, i, j;
	size_t		 k, nev = 0;
	double		 mean = 0;
	int		 rc;

	if ((in = calloc((size_t)p * p, 1)) == NULL)
		return (-1);
	if (eng_init(&e, mx, xs) == -1) {
		free(in);
		return (-1);
	}
	e.e_fill = fill;
	for (i = 0; i < p; i++) {
		for (j = 0; j < p; j++) {
			k = (size_t)i * p + j;
			in[k] = e.e_rem[k] > 0;
			if (in[k]) {
				mean += xchg_cost(mx, i, j);
				nev++;
			}
		}
	}
	mean = nev > 0 ? mean / nev : 0;
	for (i = 0; presplit && i < p; i++)
		for (j = 0; j < p; j++)
			if (in[(size_t)i * p + j] &&
			    mx->xm_m[(size_t)i * p + j] >= 2 &&
			    xchg_cost(mx, i, j) > 2 * mean)
				e.e_kleft[(size_t)i * p + j] = 2;
	eng_openshop(&e, in);
	rc = eng_finish(&e);
	eng_free(&e);
	free(in);
	return (rc);
}

/* Compare costs for qsort. */
static int
cost_cmp(const void *a, const void *b)
{
	double	 x = *(const double *)a, y = *(const double *)b;

	return (x < y ? -1 : x > y);
}

/*
 * Where C_small ends in the sorted costs cs: at the largest ratio between
 * neighbours if it is at least 2, else nowhere (-1: everything is large).
 */
static double
small_cut(const double *cs, size_t nc)
{
	double	 cut = -1, ratio = 2;
	size_t	 a;

	for (a = 1; a < nc; a++) {
		if (cs[a - 1] > 0 && cs[a] / cs[a - 1] >= ratio) {
			ratio = cs[a] / cs[a - 1];
			cut = cs[a - 1];
		}
	}
	return (cut);
}

/*
 * Improved split (section 5), with thresholds X and Y:
 *  1. Divide the events into C_small and C_large.  The paper does it for
 *     the fatal matrix (delta against h and x); in general we cut the
 *     sorted costs at their largest ratio between neighbours, if that
 *     ratio is at least 2, and call everything large otherwise.
 *  2. Split a large event when its cost is above Y times the largest
 *     event cost, into as many pieces as the smallest large cost goes
 *     into it (at most p - 1), fewer if the start-ups the pieces add
 *     would take its row or column sum over X t_tb (sums kept up to date
 *     as events are split, the costliest first).
 *  3. Schedule C_large first, by dynamic split, re-merging consecutive
 *     pieces of one (i, j) to cancel their split overhead.
 *  4. Then C_small, by dynamic split, into the gaps left.
 */
static int
sched_improved(const struct xchg_matrix *mx, double X, double Y,
    struct xchg_sched *xs)
{
	struct eng	 e;
	unsigned	 p = mx->xm_p, i, j, kk, *order = NULL;
	size_t		 k, n = (size_t)p * p, nc = 0, a, b;
	unsigned char	*large = NULL, *small = NULL;
	double		*cs = NULL, *row = NULL, *col = NULL, cut = 0, cmax,
			 cref = INFINITY, ttb, T, c;
	int		 rc = -1;

	if (eng_init(&e, mx, xs) == -1)
		return (-1);
	e.e_fill = 1;
	large = calloc(n, 1);
	small = calloc(n, 1);
	cs = calloc(n, sizeof(*cs));
	row = calloc(p, sizeof(*row));
	col = calloc(p, sizeof(*col));
	order = calloc(n, sizeof(*order));
	if (large == NULL || small == NULL || cs == NULL || row == NULL ||
	    col == NULL || order == NULL)
		goto done;

	/* Step 1: C_small and C_large. */
	for (i = 0; i < p; i++) {
		for (j = 0; j < p; j++) {
			c = xchg_cost(mx, i, j);
			row[i] += c;
			col[j] += c;
			if (e.e_rem[(size_t)i * p + j] > 0)
				cs[nc++] = c;
		}
	}
	ttb = xchg_lower_bound(mx);
	if (nc == 0) {
		rc = eng_finish(&e);
		goto done;
	}
	qsort(cs, nc, sizeof(*cs), cost_cmp);
	cmax = cs[nc - 1];
	cut = small_cut(cs, nc);
	for (k = 0, b = 0; k < n; k++) {
		if (e.e_rem[k] == 0)
			continue;
		c = xchg_cost(mx, (unsigned)(k / p), (unsigned)(k % p));
		if (c > cut) {
			large[k] = 1;
			order[b++] = (unsigned)k;
			if (c < cref)
				cref = c;
		} else
			small[k] = 1;
	}

	/* Step 2: split the large events above Y max within X t_tb. */
	for (a = 1; a < b; a++) {
		/* Insertion sort, costliest first: b is at most p^2. */
		kk = order[a];
		c = xchg_cost(mx, kk / p, kk % p);
		for (k = a; k > 0 && xchg_cost(mx, order[k - 1] / p,
		    order[k - 1] % p) < c; k--)
			order[k] = order[k - 1];
		order[k] = kk;
	}
	for (a = 0; a < b; a++) {
		i = order[a] / p;
		j = order[a] % p;
		k = order[a];
		c = xchg_cost(mx, i, j);
		if (!(c > Y * cmax))
			continue;
		T = mx->xm_t[k];
		kk = (unsigned)fmin(ceil(c / cref - 1e-9), (double)p - 1);
		if ((uint64_t)kk > mx->xm_m[k])
			kk = (unsigned)mx->xm_m[k];
		while (kk > 1 && (row[i] + (kk - 1) * T > X * ttb ||
		    col[j] + (kk - 1) * T > X * ttb))
			kk--;
		if (kk < 2)
			continue;
		e.e_kleft[k] = kk;
		row[i] += (kk - 1) * T;
		col[j] += (kk - 1) * T;
	}

	/* Steps 3 and 4. */
	e.e_merge = 1;
	eng_openshop(&e, large);
	e.e_merge = 0;
	eng_openshop(&e, small);
	rc = eng_finish(&e);
done:
	eng_free(&e);
	free(large);
	free(small);
	free(cs);
	free(row);
	free(col);
	free(order);
	return (rc);
}

/*
 * lbos, our lower-bound-guided open shop.  A dense list schedule: at the
 * earliest time t at which some sender and some receiver it has a
 * message for are both free, among all such pairs send the one whose
 * sender or receiver has the most cost left (the processor that defines
 * the remaining lower bound; ties: the costlier message), placed by
 * dynamic split with re-merging.  Restart r > 0 multiplies each pair's
 * urgency by a factor drawn from the counter-based RNG (seed, r, pair)
 * within +-15 %; the shortest of the restarts wins.
 */
static int
sched_lbos(const struct xchg_matrix *mx, uint64_t seed, unsigned restarts,
    struct xchg_sched *xs)
{
	struct eng		 e;
	struct xchg_sched	 cur;
	unsigned		 p = mx->xm_p, i, j, bi, bj, r;
	size_t			 k, n = (size_t)p * p, left;
	double			*srem = NULL, *rrem = NULL, *jit = NULL, *fs,
				 *fr, t, bt, u, bu, c, bc;
	unsigned		*cnt = NULL;
	int			 rc = -1, have = 0;

	memset(&cur, 0, sizeof(cur));
	srem = calloc(2 * (size_t)p, sizeof(*srem));
	jit = calloc(n, sizeof(*jit));
	cnt = calloc(p, sizeof(*cnt));
	if (srem == NULL || jit == NULL || cnt == NULL)
		goto done;
	rrem = srem + p;
	for (r = 0; r <= restarts; r++) {
		if (eng_init(&e, mx, &cur) == -1)
			goto done;
		e.e_fill = e.e_merge = 1;
		memset(srem, 0, 2 * (size_t)p * sizeof(*srem));
		memset(cnt, 0, p * sizeof(*cnt));
		left = 0;
		for (k = 0; k < n; k++) {
			jit[k] = r == 0 ? 1.0 : 1.0 + LBOS_NOISE *
			    (rng_uniform(seed, LBOS_DOMAIN, r, k) - 0.5);
			if (e.e_rem[k] == 0)
				continue;
			c = xchg_cost(mx, (unsigned)(k / p),
			    (unsigned)(k % p));
			srem[k / p] += c;
			rrem[k % p] += c;
			cnt[k / p]++;
			left++;
		}
		fs = calloc(2 * (size_t)p, sizeof(*fs));
		if (fs == NULL) {
			eng_free(&e);
			goto done;
		}
		fr = fs + p;
		for (; left > 0 && !e.e_oom; left--) {
			for (i = 0; i < p; i++) {
				fs[i] = line_end(&e.e_snd[i]);
				fr[i] = line_end(&e.e_rcv[i]);
			}
			bi = bj = p;
			bt = bu = bc = 0;
			for (i = 0; i < p; i++) {
				if (cnt[i] == 0)
					continue;
				for (j = 0; j < p; j++) {
					k = (size_t)i * p + j;
					if (e.e_rem[k] == 0)
						continue;
					t = fs[i] > fr[j] ? fs[i] : fr[j];
					u = (srem[i] > rrem[j] ? srem[i] :
					    rrem[j]) * jit[k];
					c = xchg_cost(mx, i, j);
					if (bi == p || t < bt - tol(bt) ||
					    (t <= bt + tol(bt) && (u > bu ||
					    (u == bu && c > bc)))) {
						bi = i;
						bj = j;
						bt = t;
						bu = u;
						bc = c;
					}
				}
			}
			k = (size_t)bi * p + bj;
			c = xchg_cost(mx, bi, bj);
			eng_place(&e, bi, bj, eng_take(&e, bi, bj));
			srem[bi] -= c;
			rrem[bj] -= c;
			cnt[bi]--;
		}
		free(fs);
		if (eng_finish(&e) == -1) {
			eng_free(&e);
			goto done;
		}
		eng_free(&e);
		if (!have || cur.xs_time < xs->xs_time) {
			sched_take(xs, &cur);
			have = 1;
		}
	}
	rc = 0;
done:
	xchg_sched_free(&cur);
	free(srem);
	free(jit);
	free(cnt);
	return (rc);
}

/* A message and its place in the insertion order. */
struct ins_key {
	unsigned	 ik_k;
	int		 ik_small;
	double		 ik_conflict;
	double		 ik_cost;
};

/* C_large first, then the most conflicted, the costlier, the lower k. */
static int
ins_cmp(const void *a, const void *b)
{
	const struct ins_key	*x = a, *y = b;

	if (x->ik_small != y->ik_small)
		return (x->ik_small - y->ik_small);
	if (x->ik_conflict != y->ik_conflict)
		return (x->ik_conflict > y->ik_conflict ? -1 : 1);
	if (x->ik_cost != y->ik_cost)
		return (x->ik_cost > y->ik_cost ? -1 : 1);
	return (x->ik_k < y->ik_k ? -1 : x->ik_k > y->ik_k);
}

/*
 * insertion, ours: the most constrained message first.  A message i -> j
 * must fit around everything else i sends and j receives, row_i + col_j -
 * C_ij; the messages are placed in that order, largest first (C_large
 * before C_small as in improved split, by the same division), each by
 * dynamic split with re-merging: into the idle gaps its sender and
 * receiver share, from time 0, split around what is already there.  On
 * the fatal matrix the last row's x messages go first, one after the
 * other, and each h message is then split around the one x its receiver
 * gets: t_tb = h + x.
 */
static int
sched_insert(const struct xchg_matrix *mx, struct xchg_sched *xs)
{
	struct eng	 e;
	struct ins_key	*keys = NULL;
	unsigned	 p = mx->xm_p, i, j;
	size_t		 k, n = (size_t)p * p, nk = 0;
	double		*row = NULL, *col = NULL, *cs = NULL, cut, c;
	int		 rc = -1;

	if (eng_init(&e, mx, xs) == -1)
		return (-1);
	e.e_fill = e.e_merge = 1;
	keys = calloc(n, sizeof(*keys));
	cs = calloc(n, sizeof(*cs));
	row = calloc(p, sizeof(*row));
	col = calloc(p, sizeof(*col));
	if (keys == NULL || cs == NULL || row == NULL || col == NULL)
		goto done;
	for (i = 0; i < p; i++) {
		for (j = 0; j < p; j++) {
			c = xchg_cost(mx, i, j);
			row[i] += c;
			col[j] += c;
			if (e.e_rem[(size_t)i * p + j] > 0)
				cs[nk++] = c;
		}
	}
	qsort(cs, nk, sizeof(*cs), cost_cmp);
	cut = small_cut(cs, nk);
	for (k = 0, nk = 0; k < n; k++) {
		if (e.e_rem[k] == 0)
			continue;
		i = (unsigned)(k / p);
		j = (unsigned)(k % p);
		c = xchg_cost(mx, i, j);
		keys[nk].ik_k = (unsigned)k;
		keys[nk].ik_small = c <= cut;
		keys[nk].ik_conflict = row[i] + col[j] - c;
		keys[nk].ik_cost = c;
		nk++;
	}
	qsort(keys, nk, sizeof(*keys), ins_cmp);
	for (k = 0; k < nk && !e.e_oom; k++) {
		i = keys[k].ik_k / p;
		j = keys[k].ik_k % p;
		eng_place(&e, i, j, eng_take(&e, i, j));
	}
	rc = eng_finish(&e);
done:
	eng_free(&e);
	free(keys);
	free(cs);
	free(row);
	free(col);
	return (rc);
}

/* Move src's schedule into dst, leaving src empty. */
static void
sched_take(struct xchg_sched *dst, struct xchg_sched *src)
{
	xchg_sched_free(dst);
	*dst = *src;
	memset(src, 0, sizeof(*src));
}

/*
 * The portfolio: caterpillar, open shop, static split, dynamic split,
 * improved split over X in pf_x times Y in pf_y, lbos and insertion; the
 * shortest schedule wins (ties: the first in that order), so it is never
 * worse than any of them.  lbos costs O(p^4) a run: the portfolio runs it
 * without restarts above p = 64 and not at all above p = 128.  Its name says which one won.
 */
static int
sched_portfolio(const struct xchg_matrix *mx, const struct xchg_params *xp,
    struct xchg_sched *xs)
{
	struct xchg_sched	 cur;
	struct xchg_params	 mp;
	enum xchg_algo		 a;
	size_t			 ix, iy;
	int			 have = 0;
	char			 name[64];

	memset(&cur, 0, sizeof(cur));
	for (a = 0; a < XCHG_PORTFOLIO; a++) {
		for (ix = 0; ix < nitems(pf_x); ix++) {
			for (iy = 0; iy < nitems(pf_y); iy++) {
				if (a != XCHG_IMPROVED && (ix > 0 || iy > 0))
					break;
				if (a == XCHG_LBOS && mx->xm_p > LBOS_PF_MAXP)
					break;
				mp = *xp;
				mp.xp_x = pf_x[ix];
				mp.xp_y = pf_y[iy];
				if (mx->xm_p > LBOS_PF_RESTART)
					mp.xp_restarts = 0;
				if (xchg_schedule(mx, a, &mp, &cur, NULL, 0) ==
				    -1) {
					xchg_sched_free(&cur);
					return (-1);
				}
				if (have && !(cur.xs_time < xs->xs_time))
					continue;
				snprintf(name, sizeof(name), "portfolio: %.50s",
				    cur.xs_name);
				sched_take(xs, &cur);
				snprintf(xs->xs_name, sizeof(xs->xs_name), "%s",
				    name);
				have = 1;
			}
		}
	}
	xchg_sched_free(&cur);
	return (0);
}

/* X = 1.5, Y = 0.5, seed 1, 8 restarts. */
void
xchg_params_default(struct xchg_params *xp)
{
	memset(xp, 0, sizeof(*xp));
	xp->xp_x = 1.5;
	xp->xp_y = 0.5;
	xp->xp_seed = 1;
	xp->xp_restarts = 8;
}

/* The name of an algorithm, as r3qctl's --algo takes it. */
const char *
xchg_algo_name(enum xchg_algo a)
{
	if ((unsigned)a >= XCHG_NALGO)
		return ("?");
	return (algo_names[a]);
}

/* An algorithm by name, -1 if there is none. */
int
xchg_algo_lookup(const char *s)
{
	int	 a;

	for (a = 0; a < XCHG_NALGO; a++)
		if (strcmp(s, algo_names[a]) == 0)
			return (a);
	return (-1);
}

/*
 * Schedule the exchange of mx with algorithm a into xs (emptied first);
 * xp may be NULL for the defaults.  -1 with a message for a bad matrix,
 * bad parameters or no memory.
 */
int
xchg_schedule(const struct xchg_matrix *mx, enum xchg_algo a,
    const struct xchg_params *xp, struct xchg_sched *xs, char *err,
    size_t errlen)
{
	struct xchg_params	 def;
	int			 rc;

	if (xp == NULL) {
		xchg_params_default(&def);
		xp = &def;
	}
	if (xchg_matrix_check(mx, err, errlen) == -1)
		return (-1);
	if (!(xp->xp_x >= 0 && xp->xp_x <= 1e6 && xp->xp_y >= 0 &&
	    xp->xp_y <= 1e6)) {
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "X and Y must be numbers >= 0");
		return (-1);
	}
	switch (a) {
	case XCHG_CATERPILLAR:
		rc = sched_caterpillar(mx, xs);
		break;
	case XCHG_OPENSHOP:
		rc = sched_openshop(mx, 0, 0, xs);
		break;
	case XCHG_STATIC:
		rc = sched_openshop(mx, 0, 1, xs);
		break;
	case XCHG_DYNAMIC:
		rc = sched_openshop(mx, 1, 0, xs);
		break;
	case XCHG_IMPROVED:
		rc = sched_improved(mx, xp->xp_x, xp->xp_y, xs);
		break;
	case XCHG_LBOS:
		rc = sched_lbos(mx, xp->xp_seed, xp->xp_restarts, xs);
		break;
	case XCHG_INSERT:
		rc = sched_insert(mx, xs);
		break;
	case XCHG_PORTFOLIO:
		rc = sched_portfolio(mx, xp, xs);
		break;
	default:
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "no algorithm %d", (int)a);
		return (-1);
	}
	if (rc == -1) {
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "out of memory");
		return (-1);
	}
	if (a == XCHG_IMPROVED)
		snprintf(xs->xs_name, sizeof(xs->xs_name),
		    "improved X=%g Y=%g", xp->xp_x, xp->xp_y);
	else if (a == XCHG_LBOS)
		snprintf(xs->xs_name, sizeof(xs->xs_name), "lbos restarts=%u",
		    xp->xp_restarts);
	else if (a != XCHG_PORTFOLIO)
		snprintf(xs->xs_name, sizeof(xs->xs_name), "%s",
		    xchg_algo_name(a));
	return (0);
}

/* Free a schedule's events and empty it. */
void
xchg_sched_free(struct xchg_sched *xs)
{
	if (xs == NULL)
		return;
	free(xs->xs_ev);
	memset(xs, 0, sizeof(*xs));
}

/*
 * Unit tests of the total-exchange schedulers (common/xchg).  Every
 * schedule any test makes goes through xchg_validate().  The fatal matrix
 * of seed 001 for p = 4 .. 16: the known algorithms take about 2h, improved
 * split and the portfolio at most 1.55h; caterpillar on a uniform matrix
 * takes exactly (p - 1) C; random matrices of many seeds and sizes are
 * scheduled validly by every algorithm, never below t_tb, and the
 * portfolio is never worse than any algorithm; the validator catches each
 * kind of broken schedule; the parser refuses bad files with file:line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "xchg/xchg.h"

#define nitems(a)	(sizeof(a) / sizeof((a)[0]))

static void	 must_schedule(const struct xchg_matrix *, enum xchg_algo,
		    const struct xchg_params *, struct xchg_sched *);
static struct xchg_matrix *uniform(unsigned, double, double, uint64_t);

/* Schedule with a, and fail the test unless the schedule is valid. */
static void
must_schedule(const struct xchg_matrix *mx, enum xchg_algo a,
    const struct xchg_params *xp, struct xchg_sched *xs)
{
	char	 err[512];

	if (xchg_schedule(mx, a, xp, xs, err, sizeof(err)) == -1)
		fail_msg("%s: %s", xchg_algo_name(a), err);
	if (xchg_validate(mx, xs, err, sizeof(err)) == -1)
		fail_msg("%s, p %u: invalid schedule: %s", xchg_algo_name(a),
		    mx->xm_p, err);
	/* Never below the lower bound. */
	assert_true(xs->xs_time >= xchg_lower_bound(mx) * (1 - 1e-9));
}

/* Every link the same: start-up t, bandwidth b, m bytes. */
static struct xchg_matrix *
uniform(unsigned p, double t, double b, uint64_t m)
{
	struct xchg_matrix	*mx;
	size_t			 k;

	mx = xchg_matrix_new(p);
	assert_non_null(mx);
	for (k = 0; k < (size_t)p * p; k++) {
		mx->xm_t[k] = t;
		mx->xm_b[k] = b;
		mx->xm_m[k] = k / p == k % p ? 0 : m;
	}
	return (mx);
}

/*
 * The fatal matrix (section 4).  Caterpillar, open shop and dynamic
 * split take 2h.  Static split: the seed does not say which events Jinno
 * et al. split; ours halves the events above twice the mean cost, the h
 * events here, and one x then fits between the halves: (2 - 1/(p - 2))h,
 * which is 1.9h and more from p = 12 on and about 2h as the paper's p = 8
 * .. 64 grow.  Improved split with the default X = 1.5, Y = 0.5: 1.5h for
 * even p, as the paper finds (its p are 8 .. 64, all even); for odd p
 * the open shop inside it keeps ceil((p - 2) / 2) of the p - 2 x messages
 * after their receiver's h (re-merging joins the h pieces sent back to
 * back): (3/2 + 1/(2(p - 2)))h, within 1.55h from p = 13.  Insertion, ours:
 * within 1 % of t_tb = h + x + (p - 3) delta.  The portfolio: at most
 * 1.55h for every p.
 */
static void
test_fatal(void **state)
{
	struct xchg_sched	 xs;
	struct xchg_matrix	*mx;
	unsigned		 p;
	double			 h, lb, want;
	char			 err[256];
	enum xchg_algo		 known[] = { XCHG_CATERPILLAR, XCHG_OPENSHOP,
				    XCHG_DYNAMIC };
	size_t			 a;

	(void)state;
	memset(&xs, 0, sizeof(xs));
	for (p = 4; p <= 16; p++) {
		mx = xchg_fatal(p, err, sizeof(err));
		assert_non_null(mx);
		h = xchg_fatal_h(mx);
		lb = xchg_lower_bound(mx);
		/* t_tb = h + x + (p - 3) delta: a column 1 .. p - 2. */
		assert_true(lb > h * (1 + 1.0 / (p - 2)));
		assert_true(lb < h * (1 + 1.0 / (p - 2)) + 0.01 * h);
		for (a = 0; a < nitems(known); a++) {
			must_schedule(mx, known[a], NULL, &xs);
			if (xs.xs_time < 1.9 * h)
				fail_msg("%s, p %u: %.4fh, not >= 1.9h",
				    xchg_algo_name(known[a]), p,
				    xs.xs_time / h);
		}
		must_schedule(mx, XCHG_STATIC, NULL, &xs);
		assert_true(xs.xs_time >= (2 - 1.0 / (p - 2)) * h - 1e-6);
		if (p >= 12)
			assert_true(xs.xs_time >= 1.9 * h);
		must_schedule(mx, XCHG_IMPROVED, NULL, &xs);
		want = p % 2 == 0 ? 1.55 : 1.5 + 0.5 / (p - 2) + 0.001;
		if (xs.xs_time > want * h)
			fail_msg("improved, p %u: %.4fh, not <= %.4fh", p,
			    xs.xs_time / h, want);
		if (p >= 13 && xs.xs_time > 1.55 * h)
			fail_msg("improved, p %u: %.4fh, not <= 1.55h", p,
			    xs.xs_time / h);
		must_schedule(mx, XCHG_INSERT, NULL, &xs);
		if (xs.xs_time > lb + 0.01 * h)
			fail_msg("insertion, p %u: %.4fh, t_tb %.4fh", p,
			    xs.xs_time / h, lb / h);
		must_schedule(mx, XCHG_PORTFOLIO, NULL, &xs);
		if (xs.xs_time > 1.55 * h)
			fail_msg("portfolio, p %u: %.4fh, not <= 1.55h", p,
			    xs.xs_time / h);
		xchg_matrix_free(mx);
	}
	xchg_sched_free(&xs);
}

/*
 * Improved split with Y = 0.2 splits only the h events in advance (the
 * paper's Fig. 2 finding for Y in 0.2 .. 0.8), and re-merges what it
 * sends back to back: some h messages go in several pieces, but fewer
 * than the p - 2 it split each into.
 */
static void
test_fatal_split_h_only(void **state)
{
	struct xchg_sched	 xs;
	struct xchg_matrix	*mx;
	struct xchg_params	 xp;
	size_t			 n, hpieces = 0;
	unsigned		 p = 10;
	char			 err[256];

	(void)state;
	memset(&xs, 0, sizeof(xs));
	mx = xchg_fatal(p, err, sizeof(err));
	assert_non_null(mx);
	xchg_params_default(&xp);
	xp.xp_y = 0.2;
	must_schedule(mx, XCHG_IMPROVED, &xp, &xs);
	for (n = 0; n < xs.xs_n; n++) {
		if (xs.xs_ev[n].ev_dst == xs.xs_ev[n].ev_src + 1 &&
		    xs.xs_ev[n].ev_src < p - 1)
			hpieces++;
		else if (xs.xs_ev[n].ev_src == p - 1)
			assert_int_equal(xs.xs_ev[n].ev_piece, 0);
	}
	assert_true(hpieces > p - 1);
	assert_true(hpieces < (p - 1) * (p - 2));
	xchg_sched_free(&xs);
	xchg_matrix_free(mx);
}

/* Caterpillar on a uniform matrix takes exactly (p - 1) C, which is t_tb. */
static void
test_caterpillar_uniform(void **state)
{
	struct xchg_sched	 xs;
	struct xchg_matrix	*mx;
	unsigned		 p;
	double			 c;

	(void)state;
	memset(&xs, 0, sizeof(xs));
	for (p = 2; p <= 12; p++) {
		mx = uniform(p, 0.001, 1e6, 1000);
		c = xchg_cost(mx, 0, 1);
		assert_true(c > 0.002 - 1e-15 && c < 0.002 + 1e-15);
		must_schedule(mx, XCHG_CATERPILLAR, NULL, &xs);
		assert_true(xs.xs_time > (p - 1) * c * (1 - 1e-12));
		assert_true(xs.xs_time < (p - 1) * c * (1 + 1e-12));
		assert_int_equal(xs.xs_n, (size_t)p * (p - 1));
		xchg_matrix_free(mx);
	}
	xchg_sched_free(&xs);
}

/*
 * Random matrices: 40 seeds at p = 2, 3, 5, 8 and 13, 3 at p = 32; every
 * algorithm valid and at or above t_tb; the portfolio at or below every
 * algorithm, including improved split at its defaults.
 */
static void
test_random(void **state)
{
	static const unsigned	 ps[] = { 2, 3, 5, 8, 13, 32 };
	struct xchg_sched	 xs;
	struct xchg_matrix	*mx;
	double			 t[XCHG_NALGO];
	size_t			 i;
	uint64_t		 seed;
	int			 a;
	char			 err[256];

	(void)state;
	memset(&xs, 0, sizeof(xs));
	for (i = 0; i < nitems(ps); i++) {
		for (seed = 1; seed <= (ps[i] > 16 ? 3 : 40); seed++) {
			mx = xchg_random(ps[i], seed, err, sizeof(err));
			assert_non_null(mx);
			for (a = 0; a < XCHG_NALGO; a++) {
				must_schedule(mx, a, NULL, &xs);
				t[a] = xs.xs_time;
			}
			for (a = 0; a < XCHG_PORTFOLIO; a++)
				if (t[XCHG_PORTFOLIO] > t[a])
					fail_msg("p %u seed %llu: portfolio "
					    "%.9g > %s %.9g", ps[i],
					    (unsigned long long)seed,
					    t[XCHG_PORTFOLIO],
					    xchg_algo_name(a), t[a]);
			xchg_matrix_free(mx);
		}
	}
	xchg_sched_free(&xs);
}

/*
 * The generators are functions of their arguments; the start-up share of
 * a random matrix is within 0.1 % .. 50 %.  p = 1 is refused: a total
 * exchange needs two processors.
 */
static void
test_generators(void **state)
{
	struct xchg_matrix	*a, *b, *c;
	size_t			 k;
	double			 s;
	char			 err[256];

	(void)state;
	a = xchg_random(16, 7, err, sizeof(err));
	b = xchg_random(16, 7, err, sizeof(err));
	c = xchg_random(16, 8, err, sizeof(err));
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	assert_memory_equal(a->xm_b, b->xm_b, 256 * sizeof(double));
	assert_memory_equal(a->xm_t, b->xm_t, 256 * sizeof(double));
	assert_memory_not_equal(a->xm_b, c->xm_b, 256 * sizeof(double));
	for (k = 0; k < 256; k++) {
		if (k / 16 == k % 16)
			continue;
		s = a->xm_t[k] / xchg_cost(a, k / 16, k % 16);
		assert_true(s >= 0.001 - 1e-12 && s <= 0.5 + 1e-12);
		assert_true(a->xm_b[k] >= 1e7 && a->xm_b[k] <= 1e9);
	}
	assert_int_equal(xchg_matrix_check(a, err, sizeof(err)), 0);
	xchg_matrix_free(a);
	xchg_matrix_free(b);
	xchg_matrix_free(c);

	assert_null(xchg_random(1, 1, err, sizeof(err)));
	assert_non_null(strstr(err, "p must be from 2"));
	assert_null(xchg_fatal(2, err, sizeof(err)));
	assert_null(xchg_matrix_new(1));
	assert_null(xchg_matrix_new(XCHG_MAX_P + 1));
}

/*
 * p = 2: both messages go at once, so every algorithm finishes at
 * max(C_01, C_10) = t_tb.  Zero-byte messages are no events.
 */
static void
test_small(void **state)
{
	struct xchg_sched	 xs;
	struct xchg_matrix	*mx;
	int			 a;
	size_t			 n;

	(void)state;
	memset(&xs, 0, sizeof(xs));
	mx = uniform(2, 0.01, 1e3, 500);
	mx->xm_m[1] = 2000;
	for (a = 0; a < XCHG_NALGO; a++) {
		must_schedule(mx, a, NULL, &xs);
		assert_true(xs.xs_time > 2.01 - 1e-9 && xs.xs_time < 2.01 +
		    1e-9);
	}
	xchg_matrix_free(mx);

	mx = uniform(5, 0.01, 1e3, 500);
	mx->xm_m[0 * 5 + 3] = 0;
	mx->xm_m[4 * 5 + 1] = 0;
	for (a = 0; a < XCHG_NALGO; a++) {
		must_schedule(mx, a, NULL, &xs);
		for (n = 0; n < xs.xs_n; n++)
			assert_false((xs.xs_ev[n].ev_src == 0 &&
			    xs.xs_ev[n].ev_dst == 3) ||
			    (xs.xs_ev[n].ev_src == 4 &&
			    xs.xs_ev[n].ev_dst == 1));
	}
	xchg_matrix_free(mx);
	xchg_sched_free(&xs);
}

/* expect_invalid: the validator refuses xs saying what. */
static void
expect_invalid(const struct xchg_matrix *mx, const struct xchg_sched *xs,
    const char *what)
{
	char	 err[512];

	if (xchg_validate(mx, xs, err, sizeof(err)) != -1)
		fail_msg("validator accepted a schedule with %s", what);
	if (strstr(err, what) == NULL)
		fail_msg("wanted '%s' in '%s'", what, err);
}

/* Copy a schedule so that a test can break the copy. */
static void
sched_copy(struct xchg_sched *dst, const struct xchg_sched *src)
{
	*dst = *src;
	dst->xs_ev = malloc(src->xs_n * sizeof(*src->xs_ev));
	assert_non_null(dst->xs_ev);
	memcpy(dst->xs_ev, src->xs_ev, src->xs_n * sizeof(*src->xs_ev));
	dst->xs_cap = src->xs_n;
}

/* Each kind of broken schedule is caught and named. */
static void
test_validator(void **state)
{
	struct xchg_sched	 xs, bad;
	struct xchg_matrix	*mx;
	struct xchg_event	*ev;
	size_t			 n;
	char			 err[256];

	(void)state;
	memset(&xs, 0, sizeof(xs));
	mx = uniform(4, 0.001, 1e6, 1000);
	must_schedule(mx, XCHG_CATERPILLAR, NULL, &xs);

	/* Two sends of P0 at once. */
	sched_copy(&bad, &xs);
	for (n = 0; n < bad.xs_n; n++) {
		ev = &bad.xs_ev[n];
		if (ev->ev_src == 0 && ev->ev_start > 0) {
			ev->ev_end -= ev->ev_start;
			ev->ev_start = 0;
			break;
		}
	}
	expect_invalid(mx, &bad, "two messages at once");
	free(bad.xs_ev);

	/* A byte short, then a byte too many (and the piece's time with it). */
	sched_copy(&bad, &xs);
	bad.xs_ev[0].ev_bytes--;
	bad.xs_ev[0].ev_end -= 1e-6;
	expect_invalid(mx, &bad, "999 bytes delivered, 1000 to send");
	bad.xs_ev[0].ev_bytes += 2;
	bad.xs_ev[0].ev_end += 2e-6;
	expect_invalid(mx, &bad, "1001 bytes delivered");
	free(bad.xs_ev);

	/* A piece that skips its start-up. */
	sched_copy(&bad, &xs);
	bad.xs_ev[2].ev_end -= 0.001;
	expect_invalid(mx, &bad, "start-up and transfer take");
	free(bad.xs_ev);

	/* The same bytes twice: a duplicated event. */
	sched_copy(&bad, &xs);
	bad.xs_ev = realloc(bad.xs_ev, (bad.xs_n + 1) * sizeof(*ev));
	assert_non_null(bad.xs_ev);
	bad.xs_ev[bad.xs_n] = bad.xs_ev[0];
	bad.xs_ev[bad.xs_n].ev_start += 10;
	bad.xs_ev[bad.xs_n].ev_end += 10;
	bad.xs_ev[bad.xs_n].ev_piece = 1;
	bad.xs_n++;
	expect_invalid(mx, &bad, "2000 bytes delivered");
	free(bad.xs_ev);

	/* A completion time that is not the last end. */
	sched_copy(&bad, &xs);
	bad.xs_time *= 0.5;
	expect_invalid(mx, &bad, "completion time");
	free(bad.xs_ev);

	/* A message to itself; a processor that does not exist. */
	sched_copy(&bad, &xs);
	bad.xs_ev[1].ev_dst = bad.xs_ev[1].ev_src;
	expect_invalid(mx, &bad, "is not a message between");
	bad.xs_ev[1].ev_dst = 9;
	expect_invalid(mx, &bad, "is not a message between");
	free(bad.xs_ev);

	/* Pieces numbered out of start order. */
	sched_copy(&bad, &xs);
	bad.xs_ev[3].ev_piece = 1;
	expect_invalid(mx, &bad, "piece 1 is number 0");
	free(bad.xs_ev);

	/* The valid one still is, and a wrong-sized one is not. */
	assert_int_equal(xchg_validate(mx, &xs, err, sizeof(err)), 0);
	xs.xs_p = 5;
	expect_invalid(mx, &xs, "schedule for 5 processors");
	xs.xs_p = 4;
	xchg_sched_free(&xs);
	xchg_matrix_free(mx);
}

/* Parse text as file "m.txt". */
static struct xchg_matrix *
parse(const char *text, char *err, size_t errlen)
{
	return (xchg_parse(text, strlen(text), "m.txt", err, errlen));
}

/* A file in the documented format: rows, one-value sections, comments. */
static void
test_parse_good(void **state)
{
	struct xchg_matrix	*mx;
	struct xchg_sched	 xs;
	char			 err[256];

	(void)state;
	memset(&xs, 0, sizeof(xs));
	mx = parse("# three nodes\n\np 3\nstartup 0.001  # seconds\n"
	    "bandwidth\n-   1e8 1e8\n1e8 -   5e7\n2e8 1e8 0\n"
	    "bytes\n- 100 200\n300 - 400\n500 600 -\n", err, sizeof(err));
	if (mx == NULL)
		fail_msg("%s", err);
	assert_int_equal(mx->xm_p, 3);
	assert_true(mx->xm_t[1] == 0.001 && mx->xm_t[5] == 0.001);
	assert_true(mx->xm_b[5] == 5e7 && mx->xm_b[6] == 2e8);
	assert_int_equal(mx->xm_m[7], 600);
	assert_int_equal(mx->xm_m[0], 0);
	must_schedule(mx, XCHG_PORTFOLIO, NULL, &xs);
	xchg_sched_free(&xs);
	xchg_matrix_free(mx);
}

/* Bad files are refused with m.txt:line: and what is wrong. */
static void
test_parse_bad(void **state)
{
	static const struct {
		const char	*text;
		const char	*want;
	} bad[] = {
		{ "", "m.txt:1: no 'p N' line" },
		{ "startup 1\n", "m.txt:1: expected 'p N' first" },
		{ "p 1\n", "m.txt:1: p: '1' is not a whole number from 2" },
		{ "p 0\n", "m.txt:1: p: '0'" },
		{ "p -3\n", "m.txt:1: p: '-3'" },
		{ "p 99999\n", "m.txt:1: p: '99999'" },
		{ "p 2\nstartup 0\nbandwidth\n- 1\n1\n",
		    "m.txt:5: bandwidth: row 2 has 1 values, expected 2" },
		{ "p 2\nstartup 0\nbandwidth\n- 1 1\n1 -\n",
		    "m.txt:4: bandwidth: row 1 has 3 values" },
		{ "p 2\nstartup 0\nbandwidth\n- 1\n",
		    "m.txt:4: bandwidth: 1 rows, expected 2" },
		{ "p 2\nbandwidth -5\n", "m.txt:2: bandwidth: '-5' is not "
		    "above 0" },
		{ "p 2\nbandwidth 0\n", "m.txt:2: bandwidth: '0' is not above "
		    "0" },
		{ "p 2\nbandwidth\n- 1e8\n0 -\n", "m.txt:4: bandwidth: '0'" },
		{ "p 2\nstartup nan\n", "m.txt:2: startup: 'nan' is not a "
		    "finite number" },
		{ "p 2\nstartup inf\n", "m.txt:2: startup: 'inf' is not a "
		    "finite number" },
		{ "p 2\nstartup -1\n", "m.txt:2: startup: '-1' is negative" },
		{ "p 2\nstartup 1x\n", "m.txt:2: startup: '1x'" },
		{ "p 2\nbytes 1.5\n", "m.txt:2: bytes: '1.5' is not a whole "
		    "number" },
		{ "p 2\nbytes -1\n", "m.txt:2: bytes: '-1'" },
		{ "p 2\nlatency 1\n", "m.txt:2: unknown keyword 'latency'" },
		{ "p 2\nstartup 1\n\n# again\nstartup 2\n",
		    "m.txt:5: startup given twice" },
		{ "p 2\np 2\n", "m.txt:2: p given twice" },
		{ "p 2\nstartup 1 2\n", "m.txt:2: startup: one value" },
		{ "p 2\nstartup 0\nbandwidth 1\n",
		    "m.txt:3: no bytes section" },
		{ "p 2\nstartup 0\nbytes 1\n", "no bandwidth section" },
	};
	struct xchg_matrix	*mx;
	size_t			 i;
	char			 err[256];

	(void)state;
	for (i = 0; i < nitems(bad); i++) {
		err[0] = '\0';
		mx = parse(bad[i].text, err, sizeof(err));
		if (mx != NULL)
			fail_msg("accepted: %s", bad[i].text);
		if (strstr(err, bad[i].want) == NULL)
			fail_msg("for %s wanted '%s', got '%s'", bad[i].text,
			    bad[i].want, err);
	}
}

/* Names round-trip; bad parameters are refused. */
static void
test_names(void **state)
{
	struct xchg_matrix	*mx;
	struct xchg_sched	 xs;
	struct xchg_params	 xp;
	int			 a;
	char			 err[256];

	(void)state;
	for (a = 0; a < XCHG_NALGO; a++)
		assert_int_equal(xchg_algo_lookup(xchg_algo_name(a)), a);
	assert_int_equal(xchg_algo_lookup("fastest"), -1);
	memset(&xs, 0, sizeof(xs));
	mx = xchg_random(4, 1, err, sizeof(err));
	assert_non_null(mx);
	xchg_params_default(&xp);
	xp.xp_x = -1;
	assert_int_equal(xchg_schedule(mx, XCHG_IMPROVED, &xp, &xs, err,
	    sizeof(err)), -1);
	assert_int_equal(xchg_schedule(mx, XCHG_NALGO, NULL, &xs, err,
	    sizeof(err)), -1);
	mx->xm_b[1] = 0;
	assert_int_equal(xchg_schedule(mx, XCHG_OPENSHOP, NULL, &xs, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "bandwidth 0->1"));
	xchg_matrix_free(mx);
	xchg_sched_free(&xs);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fatal),
		cmocka_unit_test(test_fatal_split_h_only),
		cmocka_unit_test(test_caterpillar_uniform),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_generators),
		cmocka_unit_test(test_small),
		cmocka_unit_test(test_validator),
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_names),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}

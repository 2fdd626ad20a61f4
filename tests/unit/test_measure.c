/*
 * Unit tests for the paper's measurements (common/report/measure.c):
 * hand-made executions on hand-made workers, and the figures they must
 * give; the efficiency LB / E and its unknown cases.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "report/measure.h"

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * Four worker ids, one of them free; a generation from 1,000 to 15,000
 * whose synchronisation wait began at 11,000: the window is 10,000.
 */
static const struct measure_worker four[] = {
	{ 1, 1.0 },		/* 0 */
	{ 2, 0.5 },		/* 1: two CPUs */
	{ 0, 3.0 },		/* 2: no worker with this id */
	{ 1, 2.0 },		/* 3 */
};

static const struct measure_span spans[] = {
	{ 0, 1000, 5000 },	/* 4,000 */
	{ 0, 6000, 13000 },	/* clipped at t_sync: 5,000 */
	{ 1, 500, 3000 },	/* clipped at t_submit: 2,000 */
	{ 1, 1000, 9000 },	/* 8,000: 10,000 over 2 CPUs = 5,000 */
	{ 2, 1000, 11000 },	/* a free id: not counted */
	{ 3, 12000, 14000 },	/* after t_sync: nothing */
	{ 3, 8000, 7000 },	/* ends before it starts: nothing */
	{ 7, 1000, 11000 },	/* an id beyond the table: not counted */
};

static struct sched_batch_report
report(uint64_t submit, uint64_t sync, uint64_t done)
{
	struct sched_batch_report	 r;

	memset(&r, 0, sizeof(r));
	r.t_submit = submit;
	r.t_sync = sync;
	r.t_done = done;
	r.replicas = 5;
	r.cancelled_held = 3;
	r.cancelled_running = 2;
	r.failed = 9;		/* not one of the figures */
	return (r);
}

/* Every figure of a generation with a synchronisation wait. */
static void
test_generation(void **state)
{
	struct sched_batch_report	 r = report(1000, 11000, 15000);
	struct measure			 m;

	(void)state;
	assert_int_equal(measure_gen(&r, spans, NELEM(spans), four,
	    NELEM(four), &m), 0);
	assert_int_equal(m.m_total, 14000);
	assert_int_equal(m.m_sync, 4000);
	/* idle 1,000 + 5,000 + 10,000 over the 3 workers */
	assert_int_equal(m.m_workers, 3);
	assert_int_equal(m.m_comm, 16000 / 3);
	assert_int_equal(m.m_compute, 14000 - 4000 - 16000 / 3);
	assert_int_equal(m.m_replicas, 5);
	assert_int_equal(m.m_killed_held, 3);
	assert_int_equal(m.m_killed_running, 2);
	assert_true(m.m_speed == 1.0 * 1 + 0.5 * 2 + 2.0 * 1);
	assert_true(m.m_speed_time == 4.0 * 14000);
}

/* The executions' order does not matter. */
static void
test_order(void **state)
{
	struct sched_batch_report	 r = report(1000, 11000, 15000);
	struct measure_span		 rev[NELEM(spans)];
	struct measure			 a, b;
	size_t				 i;

	(void)state;
	for (i = 0; i < NELEM(spans); i++)
		rev[i] = spans[NELEM(spans) - 1 - i];
	assert_int_equal(measure_gen(&r, spans, NELEM(spans), four,
	    NELEM(four), &a), 0);
	assert_int_equal(measure_gen(&r, rev, NELEM(rev), four, NELEM(four),
	    &b), 0);
	assert_memory_equal(&a, &b, sizeof(a));
}

/* No synchronisation wait: the window runs to the last result. */
static void
test_no_sync(void **state)
{
	struct sched_batch_report	 r = report(0, 0, 1000);
	struct measure_span		 s[] = { { 0, 0, 600 }, { 0, 700, 1000 } };
	struct measure_worker		 w[] = { { 1, 1.5 } };
	struct measure			 m;

	(void)state;
	assert_int_equal(measure_gen(&r, s, NELEM(s), w, NELEM(w), &m), 0);
	assert_int_equal(m.m_total, 1000);
	assert_int_equal(m.m_sync, 0);
	assert_int_equal(m.m_comm, 100);
	assert_int_equal(m.m_compute, 900);
	assert_true(m.m_speed_time == 1.5 * 1000);
}

/*
 * Executions that overlap on one CPU (a worker that reports more than it
 * has) leave no communication, not a negative one; no worker at all
 * leaves none either.
 */
static void
test_edges(void **state)
{
	struct sched_batch_report	 r = report(0, 800, 1000);
	struct measure_span		 s[] = { { 0, 0, 800 }, { 0, 100, 700 } };
	struct measure_worker		 w[] = { { 1, 1.0 } };
	struct measure			 m;

	(void)state;
	assert_int_equal(measure_gen(&r, s, NELEM(s), w, NELEM(w), &m), 0);
	assert_int_equal(m.m_comm, 0);
	assert_int_equal(m.m_sync, 200);
	assert_int_equal(m.m_compute, 800);
	assert_int_equal(measure_gen(&r, s, NELEM(s), NULL, 0, &m), 0);
	assert_int_equal(m.m_workers, 0);
	assert_int_equal(m.m_comm, 0);
	assert_int_equal(m.m_compute, 800);
	assert_true(m.m_speed == 0 && m.m_speed_time == 0);
	assert_int_equal(measure_gen(&r, NULL, 0, w, NELEM(w), &m), 0);
	assert_int_equal(m.m_comm, 800);
	assert_int_equal(m.m_compute, 0);
}

/* LB = work / sum of speeds, the efficiency LB / E; 0 where unknown. */
static void
test_efficiency(void **state)
{
	struct measure_eff	 e;

	(void)state;
	/* 2 s of work at a speed of 4 over the 1 s measured, in 1.25 s */
	measure_efficiency(2000, 4.0 * 1e9, 1000000000, 1250000000, &e);
	assert_true(e.me_speed_sum == 4.0);
	assert_true(e.me_lower_bound_s == 0.5);
	assert_true(fabs(e.me_efficiency - 0.4) < 1e-15);
	/* no generation measured */
	measure_efficiency(2000, 0, 0, 1250000000, &e);
	assert_true(e.me_speed_sum == 0 && e.me_lower_bound_s == 0 &&
	    e.me_efficiency == 0);
	/* no reference work known (not a synthetic load) */
	measure_efficiency(0, 4.0 * 1e9, 1000000000, 1250000000, &e);
	assert_true(e.me_speed_sum == 4.0);
	assert_true(e.me_lower_bound_s == 0 && e.me_efficiency == 0);
	/* no time elapsed yet */
	measure_efficiency(2000, 4.0 * 1e9, 1000000000, 0, &e);
	assert_true(e.me_lower_bound_s == 0.5 && e.me_efficiency == 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_generation),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_no_sync),
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_efficiency),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}

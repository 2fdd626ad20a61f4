/*
 * Unit tests of the scheduling core in virtual time.  Each scenario drives
 * the core with joins, submits, starts, results, failures and losses, and
 * asserts the exact sequence of actions it answers with.  Two randomised
 * runs (a fixed-seed xorshift) check that no task is lost or counted twice
 * under random result orders, worker losses and joins.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sched/sched.h"

#define nitems(a)	(sizeof(a) / sizeof((a)[0]))

#define expect_assign(s, w, t, r)					\
	expect_at((s), SCHED_ASSIGN, (w), (t), 0, (r), __FILE__, __LINE__)
#define expect_cancel(s, w, t, run)					\
	expect_at((s), SCHED_CANCEL, (w), (t), 0, (run), __FILE__, __LINE__)
#define expect_task_failed(s, b, t)					\
	expect_at((s), SCHED_TASK_FAILED, 0, (t), (b), 0, __FILE__, __LINE__)
#define expect_batch_done(s, b)						\
	expect_at((s), SCHED_BATCH_DONE, 0, 0, (b), 0, __FILE__, __LINE__)
#define expect_none(s)		expect_none_at((s), __FILE__, __LINE__)
#define expect_report(s, b, want) do {					\
	const struct sched_batch_report want_ = (want);			\
									\
	expect_batch_done((s), (b));					\
	check_report(&seen.last.report, &want_, __FILE__, __LINE__);	\
} while (0)

/*
 * What the expect_* helpers have popped since seen_reset(): the last
 * action, and per batch (ids below 16) the replicas, cancels and failures
 * among them, so a batch report can be checked against the actions it
 * summarises.
 */
struct seen_counts {
	unsigned		 replicas;
	unsigned		 cancelled_held;
	unsigned		 cancelled_running;
	unsigned		 failed;
};

static struct {
	struct sched_action	 last;
	struct seen_counts	 batch[16];
} seen;

static void
seen_reset(void)
{
	memset(&seen, 0, sizeof(seen));
}

/* Describe an action for a failure message. */
static const char *
action_str(const struct sched_action *a, char *buf, size_t len)
{
	switch (a->type) {
	case SCHED_ASSIGN:
		snprintf(buf, len, "ASSIGN w%u task %llu%s", a->wid,
		    (unsigned long long)a->task, a->replica ? " replica" : "");
		break;
	case SCHED_CANCEL:
		snprintf(buf, len, "CANCEL w%u task %llu running=%d", a->wid,
		    (unsigned long long)a->task, a->running);
		break;
	case SCHED_TASK_FAILED:
		snprintf(buf, len, "TASK_FAILED task %llu batch %llu",
		    (unsigned long long)a->task, (unsigned long long)a->batch);
		break;
	case SCHED_BATCH_DONE:
		snprintf(buf, len, "BATCH_DONE batch %llu",
		    (unsigned long long)a->batch);
		break;
	default:
		snprintf(buf, len, "action type %d", (int)a->type);
		break;
	}
	return (buf);
}

/*
 * Pop the next action and compare it with what is wanted: for ASSIGN the
 * worker, task and replica flag; for CANCEL the worker, task and running
 * flag; for TASK_FAILED the task and batch; for BATCH_DONE the batch.
 */
static void
expect_at(struct sched *s, enum sched_action_type type, uint32_t wid,
    uint64_t task, uint64_t batch, int flag, const char *file, int line)
{
	struct sched_action	 want, got;
	struct seen_counts	*sc;
	char			 wbuf[128], gbuf[128];
	int			 ok;

	memset(&want, 0, sizeof(want));
	want.type = type;
	want.wid = wid;
	want.task = task;
	want.batch = batch;
	if (type == SCHED_ASSIGN)
		want.replica = flag;
	else
		want.running = flag;
	action_str(&want, wbuf, sizeof(wbuf));

	if (!sched_next_action(s, &got))
		fail_msg("%s:%d: want %s, got no action", file, line, wbuf);
	switch (type) {
	case SCHED_ASSIGN:
		ok = got.type == type && got.wid == wid && got.task == task &&
		    got.replica == flag;
		break;
	case SCHED_CANCEL:
		ok = got.type == type && got.wid == wid && got.task == task &&
		    got.running == flag;
		break;
	case SCHED_TASK_FAILED:
		ok = got.type == type && got.task == task &&
		    got.batch == batch;
		break;
	default:
		ok = got.type == type && got.batch == batch;
		break;
	}
	if (!ok)
		fail_msg("%s:%d: want %s, got %s", file, line, wbuf,
		    action_str(&got, gbuf, sizeof(gbuf)));
	seen.last = got;
	if (got.batch >= nitems(seen.batch))
		return;
	sc = &seen.batch[got.batch];
	if (got.type == SCHED_ASSIGN && got.replica)
		sc->replicas++;
	else if (got.type == SCHED_CANCEL && got.running)
		sc->cancelled_running++;
	else if (got.type == SCHED_CANCEL)
		sc->cancelled_held++;
	else if (got.type == SCHED_TASK_FAILED)
		sc->failed++;
}

/* Compare a batch report with the wanted one, field by field. */
static void
check_report(const struct sched_batch_report *got,
    const struct sched_batch_report *want, const char *file, int line)
{
	if (got->t_submit != want->t_submit || got->t_empty != want->t_empty ||
	    got->t_sync != want->t_sync || got->t_done != want->t_done ||
	    got->replicas != want->replicas ||
	    got->cancelled_held != want->cancelled_held ||
	    got->cancelled_running != want->cancelled_running ||
	    got->failed != want->failed)
		fail_msg("%s:%d: want report submit %llu empty %llu sync %llu "
		    "done %llu replicas %u held %u running %u failed %u, got "
		    "submit %llu empty %llu sync %llu done %llu replicas %u "
		    "held %u running %u failed %u", file, line,
		    (unsigned long long)want->t_submit,
		    (unsigned long long)want->t_empty,
		    (unsigned long long)want->t_sync,
		    (unsigned long long)want->t_done, want->replicas,
		    want->cancelled_held, want->cancelled_running,
		    want->failed, (unsigned long long)got->t_submit,
		    (unsigned long long)got->t_empty,
		    (unsigned long long)got->t_sync,
		    (unsigned long long)got->t_done, got->replicas,
		    got->cancelled_held, got->cancelled_running, got->failed);
}

/*
 * The counts of the report just popped equal its batch's actions popped
 * since seen_reset().
 */
static void
expect_seen_counts(void)
{
	const struct seen_counts	*sc;

	assert_int_equal(seen.last.type, SCHED_BATCH_DONE);
	assert_true(seen.last.batch < nitems(seen.batch));
	sc = &seen.batch[seen.last.batch];
	assert_int_equal(seen.last.report.replicas, sc->replicas);
	assert_int_equal(seen.last.report.cancelled_held,
	    sc->cancelled_held);
	assert_int_equal(seen.last.report.cancelled_running,
	    sc->cancelled_running);
	assert_int_equal(seen.last.report.failed, sc->failed);
}

/* No action may be pending. */
/* The next action says worker wid became suspect of task, for why. */
#define expect_suspect(s, w, t, why)					\
	expect_suspect_at((s), (w), (t), (why), __FILE__, __LINE__)
static void
expect_suspect_at(struct sched *s, uint32_t wid, uint64_t task,
    enum sched_suspect_why why, const char *file, int line)
{
	struct sched_action	 got;
	char			 gbuf[128];

	if (!sched_next_action(s, &got))
		fail_msg("%s:%d: want SUSPECT w%u, got no action", file, line,
		    wid);
	if (got.type != SCHED_SUSPECT || got.wid != wid || got.task != task ||
	    got.why != why)
		fail_msg("%s:%d: want SUSPECT w%u task %llu why %d, got %s "
		    "(why %d)", file, line, wid, (unsigned long long)task,
		    (int)why, action_str(&got, gbuf, sizeof(gbuf)),
		    (int)got.why);
	seen.last = got;
}

static void
expect_none_at(struct sched *s, const char *file, int line)
{
	struct sched_action	 got;
	char			 buf[128];

	if (sched_next_action(s, &got))
		fail_msg("%s:%d: want no action, got %s", file, line,
		    action_str(&got, buf, sizeof(buf)));
}

static struct sched_batch_config
config(enum sched_policy policy, unsigned factor, unsigned kind,
    unsigned attempts)
{
	struct sched_batch_config	 c;

	memset(&c, 0, sizeof(c));
	c.policy = policy;
	c.queue_factor = factor;
	c.kind = kind;
	c.max_attempts = attempts;
	return (c);
}

/* Submit tasks first..first+n-1 as one batch at time now. */
static int
submit_at(struct sched *s, uint64_t batch,
    const struct sched_batch_config *c, uint64_t first, size_t n,
    uint64_t now)
{
	uint64_t	*ids;
	size_t		 i;
	int		 rv;

	ids = calloc(n > 0 ? n : 1, sizeof(*ids));
	assert_non_null(ids);
	for (i = 0; i < n; i++)
		ids[i] = first + i;
	rv = sched_submit(s, batch, c, ids, n, now);
	free(ids);
	return (rv);
}

/* Submit tasks first..first+n-1 as one batch at time 0. */
static int
submit_range(struct sched *s, uint64_t batch,
    const struct sched_batch_config *c, uint64_t first, size_t n)
{
	return (submit_at(s, batch, c, first, n, 0));
}

static struct sched *
new_with_workers(const uint32_t *ncpu, size_t n)
{
	struct sched	*s;
	size_t		 i;

	assert_non_null(s = sched_new());
	for (i = 0; i < n; i++)
		assert_int_equal(sched_worker_join(s, (uint32_t)i + 1, ncpu[i],
		    ~0U, 0), 0);
	expect_none(s);
	return (s);
}

/* A batch report, fields in the order of struct sched_batch_report. */
static struct sched_batch_report
report(uint64_t t_submit, uint64_t t_empty, uint64_t t_sync, uint64_t t_done,
    uint32_t replicas, uint32_t cancelled_held, uint32_t cancelled_running,
    uint32_t failed)
{
	struct sched_batch_report	 r;

	r.t_submit = t_submit;
	r.t_empty = t_empty;
	r.t_sync = t_sync;
	r.t_done = t_done;
	r.replicas = replicas;
	r.cancelled_held = cancelled_held;
	r.cancelled_running = cancelled_running;
	r.failed = failed;
	return (r);
}

/* A result's timing as a worker reports it. */
static struct sched_timing
timing(uint64_t at_worker_ns, uint64_t exec_ns)
{
	struct sched_timing	 t;

	t.at_worker_ns = at_worker_ns;
	t.exec_ns = exec_ns;
	return (t);
}

static void
expect_estimate(const struct sched *s, uint32_t wid, uint64_t rtt,
    uint64_t task, uint32_t cap)
{
	struct sched_estimate	 e;

	assert_int_equal(sched_worker_estimate(s, wid, &e), 0);
	assert_int_equal(e.rtt_ns, rtt);
	assert_int_equal(e.task_ns, task);
	assert_int_equal(e.cap, cap);
}

static void
expect_load(const struct sched *s, uint32_t wid, uint32_t held,
    uint32_t running)
{
	uint32_t	 h, r;

	assert_int_equal(sched_worker_load(s, wid, &h, &r), 0);
	assert_int_equal(h, held);
	assert_int_equal(r, running);
}

static void
test_policy_names(void **state)
{
	static const struct {
		const char		*name;
		enum sched_policy	 policy;
	} tab[] = {
		{ "wq", SCHED_POLICY_WQ }, { "RR", SCHED_POLICY_RR }, { "rWq", SCHED_POLICY_RWQ },
		{ "R3Q", SCHED_POLICY_R3Q }
	};
	enum sched_policy	 p;
	size_t			 i;

	(void)state;
	for (i = 0; i < nitems(tab); i++) {
		assert_int_equal(sched_policy_parse(tab[i].name, &p), 0);
		assert_int_equal(p, tab[i].policy);
	}
	assert_string_equal(sched_policy_name(SCHED_POLICY_WQ), "wq");
	assert_string_equal(sched_policy_name(SCHED_POLICY_RR), "rr");
	assert_string_equal(sched_policy_name(SCHED_POLICY_RWQ), "rwq");
	assert_string_equal(sched_policy_name(SCHED_POLICY_R3Q), "r3q");
	assert_int_equal(sched_policy_parse("wqr", &p), -1);
	assert_int_equal(sched_policy_parse("", &p), -1);
}

/* Bad calls are refused and change nothing. */
static void
test_bad_input(void **state)
{
	struct sched_batch_config	 c = config(SCHED_POLICY_WQ, 0, 0, 0);
	struct sched_stats		 st;
	struct sched			*s;
	uint64_t			 dup[] = { 5, 6, 5 };
	uint64_t			 one = 1;

	(void)state;
	assert_non_null(s = sched_new());
	assert_int_equal(sched_worker_join(s, 1, 0, ~0U, 0), -1);
	assert_int_equal(sched_worker_join(s, 1, 1, ~0U, 0), 0);
	assert_int_equal(sched_worker_join(s, 1, 4, ~0U, 0), -1);
	assert_int_equal(sched_worker_load(s, 9, NULL, NULL), -1);

	assert_int_equal(sched_submit(s, 1, &c, &one, 0, 0), -1);
	assert_int_equal(sched_submit(s, 1, &c, dup, nitems(dup), 0), -1);
	c.policy = SCHED_POLICY_COUNT;
	assert_int_equal(sched_submit(s, 1, &c, &one, 1, 0), -1);
	c.policy = SCHED_POLICY_WQ;
	c.verify = SCHED_VERIFY_MAX + 1;
	assert_int_equal(sched_submit(s, 1, &c, &one, 1, 0), -1);
	c.verify = 0;
	expect_none(s);
	sched_get_stats(s, &st);
	assert_int_equal(st.queued, 0);

	assert_int_equal(sched_submit(s, 1, &c, &one, 1, 0), 0);
	expect_assign(s, 1, 1, 0);
	assert_int_equal(sched_submit(s, 1, &c, dup, 2, 0), -1);
	assert_int_equal(sched_submit(s, 2, &c, &one, 1, 0), -1);
	expect_none(s);

	sched_started(s, 1, 77, 0);
	sched_started(s, 8, 1, 0);
	sched_worker_lost(s, 8, 0);
	sched_batch_abort(s, 8, 0);
	sched_tick(s, 100);
	expect_none(s);
	assert_true(sched_deadline(s) == UINT64_MAX);
	expect_load(s, 1, 1, 0);
	sched_free(s);
}

/* WQ: one task per CPU; a result brings its worker the head of Q. */
static void
test_wq_three_workers(void **state)
{
	static const uint32_t		 ncpu[] = { 1, 1, 1 };
	struct sched_batch_config	 c = config(SCHED_POLICY_WQ, 0, 0, 0);
	struct sched_stats		 st;
	struct sched			*s;

	(void)state;
	s = new_with_workers(ncpu, nitems(ncpu));
	assert_int_equal(submit_range(s, 1, &c, 1, 7), 0);
	expect_assign(s, 1, 1, 0);
	expect_assign(s, 2, 2, 0);
	expect_assign(s, 3, 3, 0);
	expect_none(s);

	assert_int_equal(sched_done(s, 2, 2, 10), SCHED_ACCEPT);
	expect_assign(s, 2, 4, 0);
	expect_none(s);
	assert_int_equal(sched_done(s, 1, 1, 11), SCHED_ACCEPT);
	expect_assign(s, 1, 5, 0);
	assert_int_equal(sched_done(s, 3, 3, 12), SCHED_ACCEPT);
	expect_assign(s, 3, 6, 0);
	assert_int_equal(sched_done(s, 1, 5, 13), SCHED_ACCEPT);
	expect_assign(s, 1, 7, 0);
	expect_none(s);
	assert_int_equal(sched_done(s, 2, 4, 14), SCHED_ACCEPT);
	expect_none(s);
	assert_int_equal(sched_done(s, 3, 6, 15), SCHED_ACCEPT);
	expect_none(s);
	assert_int_equal(sched_done(s, 1, 7, 16), SCHED_ACCEPT);
	expect_batch_done(s, 1);
	expect_none(s);

	sched_get_stats(s, &st);
	assert_int_equal(st.done, 7);
	assert_int_equal(st.replicas, 0);
	assert_int_equal(st.held + st.running + st.queued, 0);
	assert_int_equal(st.workers, 3);
	sched_free(s);
}

/* WQ with a 2-CPU worker: passes go one task per worker. */
static void
test_wq_two_cpus(void **state)
{
	static const uint32_t		 ncpu[] = { 2, 1 };
	struct sched_batch_config	 c = config(SCHED_POLICY_WQ, 0, 0, 0);
	struct sched			*s;

	(void)state;
	s = new_with_workers(ncpu, nitems(ncpu));
	assert_int_equal(submit_range(s, 1, &c, 1, 5), 0);
	expect_assign(s, 1, 1, 0);
	expect_assign(s, 2, 2, 0);
	expect_assign(s, 1, 3, 0);
	expect_none(s);
	expect_load(s, 1, 2, 0);
	sched_started(s, 1, 3, 1);
	expect_load(s, 1, 1, 1);

	assert_int_equal(sched_done(s, 1, 1, 2), SCHED_ACCEPT);
	expect_assign(s, 1, 4, 0);
	assert_int_equal(sched_done(s, 1, 3, 3), SCHED_ACCEPT);
	expect_assign(s, 1, 5, 0);
	expect_none(s);
	expect_load(s, 1, 2, 0);
	expect_load(s, 2, 1, 0);
	sched_free(s);
}

/* A worker only gets tasks of the kinds in its mask, replicas included. */
static void
test_kind_mask(void **state)
{
	struct sched_batch_config	 a = config(SCHED_POLICY_RR, 0, 1, 0);
	struct sched_batch_config	 b = config(SCHED_POLICY_WQ, 0, 0, 0);
	struct sched_batch_config	 c = config(SCHED_POLICY_WQ, 0, 5, 0);
	struct sched			*s;

	(void)state;
	assert_non_null(s = sched_new());
	assert_int_equal(sched_worker_join(s, 1, 1, 1U << 0, 0), 0);
	assert_int_equal(sched_worker_join(s, 2, 1, 1U << 1, 0), 0);
	assert_int_equal(sched_worker_join(s, 3, 4, 0, 0), 0);

	assert_int_equal(submit_range(s, 1, &a, 1, 3), 0);
	expect_assign(s, 2, 1, 0);
	expect_none(s);
	assert_int_equal(submit_range(s, 2, &b, 10, 2), 0);
	expect_assign(s, 1, 10, 0);
	expect_none(s);
	assert_int_equal(submit_range(s, 3, &c, 20, 1), 0);
	expect_none(s);

	assert_int_equal(sched_done(s, 2, 1, 1), SCHED_ACCEPT);
	expect_assign(s, 2, 2, 0);
	assert_int_equal(sched_done(s, 2, 2, 2), SCHED_ACCEPT);
	expect_assign(s, 2, 3, 0);
	expect_none(s);
	/* Batch 1 is replicating now, but w1 cannot run kind 1. */
	assert_int_equal(sched_done(s, 1, 10, 3), SCHED_ACCEPT);
	expect_assign(s, 1, 11, 0);
	expect_none(s);
	assert_int_equal(sched_done(s, 1, 11, 4), SCHED_ACCEPT);
	expect_batch_done(s, 2);
	expect_none(s);
	expect_load(s, 3, 0, 0);

	/* Kind 5 waits for a worker that can run it. */
	assert_int_equal(sched_worker_join(s, 4, 1, 1U << 5, 5), 0);
	expect_assign(s, 4, 20, 0);
	expect_none(s);
	sched_free(s);
}

/*
 * A lost worker's tasks go back to the front of the queue and to the next
 * free worker; a result from the lost worker still counts if it is first.
 */
static void
test_worker_lost(void **state)
{
	static const uint32_t		 ncpu[] = { 2, 1, 1 };
	struct sched_batch_config	 c = config(SCHED_POLICY_WQ, 0, 0, 0);
	struct sched_stats		 st;
	struct sched			*s;

	(void)state;
	s = new_with_workers(ncpu, nitems(ncpu));
	assert_int_equal(submit_range(s, 1, &c, 1, 8), 0);
	expect_assign(s, 1, 1, 0);
	expect_assign(s, 2, 2, 0);
	expect_assign(s, 3, 3, 0);
	expect_assign(s, 1, 4, 0);
	expect_none(s);
	sched_started(s, 1, 1, 1);

	sched_worker_lost(s, 1, 2);
	expect_none(s);
	sched_get_stats(s, &st);
	assert_int_equal(st.queued, 6);
	assert_int_equal(st.held, 2);
	assert_int_equal(st.running, 0);
	assert_int_equal(st.workers, 2);
	assert_int_equal(sched_worker_load(s, 1, NULL, NULL), -1);

	assert_int_equal(sched_done(s, 2, 2, 3), SCHED_ACCEPT);
	expect_assign(s, 2, 1, 0);
	assert_int_equal(sched_done(s, 3, 3, 4), SCHED_ACCEPT);
	expect_assign(s, 3, 4, 0);
	assert_int_equal(sched_worker_join(s, 4, 1, ~0U, 5), 0);
	expect_assign(s, 4, 5, 0);
	expect_none(s);

	/* The lost worker's late result for task 1 wins over w2's copy. */
	assert_int_equal(sched_done(s, 1, 1, 6), SCHED_ACCEPT);
	expect_cancel(s, 2, 1, 0);
	expect_assign(s, 2, 6, 0);
	expect_none(s);

	assert_int_equal(sched_done(s, 3, 4, 7), SCHED_ACCEPT);
	expect_assign(s, 3, 7, 0);
	assert_int_equal(sched_done(s, 4, 5, 8), SCHED_ACCEPT);
	expect_assign(s, 4, 8, 0);
	assert_int_equal(sched_done(s, 2, 6, 9), SCHED_ACCEPT);
	assert_int_equal(sched_done(s, 3, 7, 10), SCHED_ACCEPT);
	expect_none(s);
	assert_int_equal(sched_done(s, 4, 8, 11), SCHED_ACCEPT);
	expect_batch_done(s, 1);
	expect_none(s);
	sched_get_stats(s, &st);
	assert_int_equal(st.done, 8);
	assert_int_equal(st.cancelled_held, 1);
	sched_free(s);
}

/* RWQ, factor 2: 2 x CPUs at the start, then one per result (RWQ 3, 5). */
static void
test_rwq_factor2(void **state)
{
	static const uint32_t		 ncpu[] = { 1, 2 };
	struct sched_batch_config	 c = config(SCHED_POLICY_RWQ, 2, 0, 0);
	struct sched_stats		 st;
	struct sched			*s;

	(void)state;
	s = new_with_workers(ncpu, nitems(ncpu));
	assert_int_equal(submit_range(s, 1, &c, 1, 10), 0);
	expect_assign(s, 1, 1, 0);
	expect_assign(s, 2, 2, 0);
	expect_assign(s, 1, 3, 0);
	expect_assign(s, 2, 4, 0);
	expect_assign(s, 2, 5, 0);
	expect_assign(s, 2, 6, 0);
	expect_none(s);
	expect_load(s, 1, 2, 0);
	expect_load(s, 2, 4, 0);

	assert_int_equal(sched_done(s, 2, 2, 1), SCHED_ACCEPT);
	expect_assign(s, 2, 7, 0);
	assert_int_equal(sched_done(s, 1, 1, 2), SCHED_ACCEPT);
	expect_assign(s, 1, 8, 0);
	sched_started(s, 2, 4, 3);
	expect_load(s, 2, 3, 1);
	assert_int_equal(sched_done(s, 2, 4, 4), SCHED_ACCEPT);
	expect_assign(s, 2, 9, 0);
	assert_int_equal(sched_done(s, 2, 5, 5), SCHED_ACCEPT);
	expect_assign(s, 2, 10, 0);
	expect_none(s);

	/* The queue is empty: RWQ does not replicate. */
	assert_int_equal(sched_done(s, 2, 6, 6), SCHED_ACCEPT);
	assert_int_equal(sched_done(s, 2, 7, 7), SCHED_ACCEPT);
	assert_int_equal(sched_done(s, 2, 9, 8), SCHED_ACCEPT);
	assert_int_equal(sched_done(s, 2, 10, 9), SCHED_ACCEPT);
	assert_int_equal(sched_done(s, 1, 3, 10), SCHED_ACCEPT);
	expect_none(s);
	assert_int_equal(sched_done(s, 1, 8, 11), SCHED_ACCEPT);
	expect_batch_done(s, 1);
	expect_none(s);
	sched_get_stats(s, &st);
	assert_int_equal(st.replicas, 0);
	assert_int_equal(st.done, 10);
	sched_free(s);
}

/*
 * RR: list scheduling until Q is empty (steps 2-5), then each result
 * replicates the next task of R to every idle worker (step 10) and the
 * first result of a task cancels its other copies (step 8).
 */
static void
test_rr_replication(void **state)
{
	static const uint32_t		 ncpu[] = { 1, 1, 1 };
	struct sched_batch_config	 c = config(SCHED_POLICY_RR, 0, 0, 0);
	struct sched_stats		 st;
	struct sched			*s;

	(void)state;
	s = new_with_workers(ncpu, nitems(ncpu));
	assert_int_equal(submit_range(s, 1, &c, 1, 5), 0);
	expect_assign(s, 1, 1, 0);
	expect_assign(s, 2, 2, 0);
	expect_assign(s, 3, 3, 0);
	expect_none(s);
	assert_int_equal(sched_done(s, 1, 1, 1), SCHED_ACCEPT);
	expect_assign(s, 1, 4, 0);
	assert_int_equal(sched_done(s, 2, 2, 2), SCHED_ACCEPT);
	expect_assign(s, 2, 5, 0);
	expect_none(s);
	sched_started(s, 3, 3, 3);
	sched_started(s, 1, 4, 3);
	sched_started(s, 2, 5, 3);

	/* R = {3, 4, 5}; 3 is done, 4 is next in round-robin order. */
	assert_int_equal(sched_done(s, 3, 3, 4), SCHED_ACCEPT);
	expect_assign(s, 3, 4, 1);
	expect_none(s);

	/* The replica wins: the running original is killed. */
	assert_int_equal(sched_done(s, 3, 4, 5), SCHED_ACCEPT);
	expect_cancel(s, 1, 4, 1);
	expect_assign(s, 1, 5, 1);
	expect_assign(s, 3, 5, 1);
	expect_none(s);

	/* The killed copy's result arrives anyway: dropped. */
	assert_int_equal(sched_done(s, 1, 4, 6), SCHED_STALE);
	expect_none(s);

	assert_int_equal(sched_done(s, 1, 5, 7), SCHED_ACCEPT);
	expect_cancel(s, 2, 5, 1);
	expect_cancel(s, 3, 5, 0);
	expect_batch_done(s, 1);
	expect_none(s);

	sched_get_stats(s, &st);
	assert_int_equal(st.done, 5);
	assert_int_equal(st.replicas, 3);
	assert_int_equal(st.cancelled_running, 2);
	assert_int_equal(st.cancelled_held, 1);
	assert_int_equal(st.held + st.running, 0);
	/* The batch is forgotten: a late result is unknown. */
	assert_int_equal(sched_done(s, 2, 5, 8), SCHED_UNKNOWN);
	sched_free(s);
}

/* RR walks R round-robin in send order and wraps around. */
static void
test_rr_round_robin(void **state)
{
	static const uint32_t		 ncpu[] = { 1, 1, 1, 1, 1 };
	struct sched_batch_config	 c = config(SCHED_POLICY_RR, 0, 0, 0);
	struct sched_stats		 st;
	struct sched			*s;

	(void)state;
	s = new_with_workers(ncpu, nitems(ncpu));
	assert_int_equal(submit_range(s, 1, &c, 1, 5), 0);
	expect_assign(s, 1, 1, 0);
	expect_assign(s, 2, 2, 0);
	expect_assign(s, 3, 3, 0);
	expect_assign(s, 4, 4, 0);
	expect_assign(s, 5, 5, 0);
	expect_none(s);
	sched_started(s, 1, 1, 1);

	assert_int_equal(sched_done(s, 5, 5, 2), SCHED_ACCEPT);
	expect_assign(s, 5, 1, 1);
	expect_none(s);
	assert_int_equal(sched_done(s, 4, 4, 3), SCHED_ACCEPT);
	expect_assign(s, 4, 2, 1);
	expect_none(s);
	/* The original of 2 wins; its held replica is just withdrawn. */
	assert_int_equal(sched_done(s, 2, 2, 4), SCHED_ACCEPT);
	expect_cancel(s, 4, 2, 0);
	expect_assign(s, 2, 3, 1);
	expect_assign(s, 4, 3, 1);
	expect_none(s);
	sched_started(s, 2, 3, 5);
	/* Round-robin wraps: R = {1, 3}, 1 is done, 3 comes again. */
	assert_int_equal(sched_done(s, 5, 1, 6), SCHED_ACCEPT);
	expect_cancel(s, 1, 1, 1);
	expect_assign(s, 1, 3, 1);
	expect_assign(s, 5, 3, 1);
	expect_none(s);
	assert_int_equal(sched_done(s, 3, 3, 7), SCHED_ACCEPT);
	expect_cancel(s, 2, 3, 1);
	expect_cancel(s, 4, 3, 0);
	expect_cancel(s, 1, 3, 0);
	expect_cancel(s, 5, 3, 0);
	expect_batch_done(s, 1);
	expect_none(s);
	sched_get_stats(s, &st);
	assert_int_equal(st.replicas, 6);
	assert_int_equal(st.cancelled_running, 2);
	assert_int_equal(st.cancelled_held, 4);
	sched_free(s);
}

/*
 * R3Q: replicas are chosen in the reverse of the send order, one per free
 * queue slot; a losing held copy is withdrawn (running=0), a started one
 * killed (running=1).
 */
static void
test_r3q_reverse_order(void **state)
{
	static const uint32_t		 ncpu[] = { 1, 1, 1 };
	struct sched_batch_config	 c = config(SCHED_POLICY_R3Q, 0, 0, 0);
	struct sched_stats		 st;
	struct sched			*s;

	(void)state;
	s = new_with_workers(ncpu, nitems(ncpu));
	assert_int_equal(submit_range(s, 1, &c, 1, 6), 0);
	expect_assign(s, 1, 1, 0);
	expect_assign(s, 2, 2, 0);
	expect_assign(s, 3, 3, 0);
	expect_assign(s, 1, 4, 0);
	expect_assign(s, 2, 5, 0);
	expect_assign(s, 3, 6, 0);
	expect_none(s);
	sched_started(s, 1, 1, 1);
	sched_started(s, 2, 2, 1);
	sched_started(s, 3, 3, 1);

	/* Sent last first: 6, then 5 (w2 has it, so 4), then 5. */
	assert_int_equal(sched_done(s, 1, 1, 2), SCHED_ACCEPT);
	expect_assign(s, 1, 6, 1);
	expect_none(s);
	assert_int_equal(sched_done(s, 2, 2, 3), SCHED_ACCEPT);
	expect_assign(s, 2, 4, 1);
	expect_none(s);
	assert_int_equal(sched_done(s, 3, 3, 4), SCHED_ACCEPT);
	expect_assign(s, 3, 5, 1);
	expect_none(s);
	expect_load(s, 1, 2, 0);

	sched_started(s, 1, 4, 5);
	sched_started(s, 2, 5, 5);
	sched_started(s, 3, 6, 5);
	/* 4's replica on w2 is still held: withdrawn from w2's queue. */
	assert_int_equal(sched_done(s, 1, 4, 6), SCHED_ACCEPT);
	expect_cancel(s, 2, 4, 0);
	expect_assign(s, 1, 5, 1);
	expect_assign(s, 2, 6, 1);
	expect_none(s);

	sched_started(s, 1, 6, 7);
	assert_int_equal(sched_done(s, 1, 6, 8), SCHED_ACCEPT);
	expect_cancel(s, 3, 6, 1);
	expect_cancel(s, 2, 6, 0);
	expect_none(s);		/* every free slot already has 5 */

	assert_int_equal(sched_done(s, 3, 5, 9), SCHED_ACCEPT);
	expect_cancel(s, 2, 5, 1);
	expect_cancel(s, 1, 5, 0);
	expect_batch_done(s, 1);
	expect_none(s);

	sched_get_stats(s, &st);
	assert_int_equal(st.done, 6);
	assert_int_equal(st.replicas, 5);
	assert_int_equal(st.cancelled_held, 3);
	assert_int_equal(st.cancelled_running, 2);
	assert_int_equal(st.held + st.running + st.queued, 0);
	sched_free(s);
}

/* Duplicate results are dropped and counted once; unknown ids rejected. */
static void
test_duplicate_and_unknown(void **state)
{
	static const uint32_t		 ncpu[] = { 1, 1 };
	struct sched_batch_config	 c = config(SCHED_POLICY_WQ, 0, 0, 0);
	struct sched_stats		 st;
	struct sched			*s;

	(void)state;
	s = new_with_workers(ncpu, nitems(ncpu));
	assert_int_equal(submit_range(s, 1, &c, 1, 3), 0);
	expect_assign(s, 1, 1, 0);
	expect_assign(s, 2, 2, 0);
	assert_int_equal(sched_done(s, 1, 1, 1), SCHED_ACCEPT);
	expect_assign(s, 1, 3, 0);
	/* Nobody holds a copy of task 1 any more: stale. */
	assert_int_equal(sched_done(s, 1, 1, 2), SCHED_STALE);
	assert_int_equal(sched_done(s, 2, 1, 2), SCHED_STALE);
	assert_int_equal(sched_done(s, 9, 1, 2), SCHED_STALE);
	assert_int_equal(sched_done(s, 1, 999, 2), SCHED_UNKNOWN);
	expect_none(s);
	sched_get_stats(s, &st);
	assert_int_equal(st.done, 1);
	expect_load(s, 2, 1, 0);
	expect_load(s, 1, 1, 0);

	assert_int_equal(sched_done(s, 2, 2, 3), SCHED_ACCEPT);
	assert_int_equal(sched_done(s, 2, 2, 3), SCHED_STALE);
	assert_int_equal(sched_done(s, 1, 3, 4), SCHED_ACCEPT);
	expect_batch_done(s, 1);
	expect_none(s);
	assert_int_equal(sched_done(s, 1, 3, 5), SCHED_UNKNOWN);
	sched_get_stats(s, &st);
	assert_int_equal(st.done, 3);
	sched_free(s);
}

/*
 * A failure puts the task back at the front of the queue for another
 * machine: it is never sent back where it failed, the same failure said
 * three times in one frame counts once, and the task gives up once it has
 * failed on max_attempts machines.
 */
static void
test_failure(void **state)
{
	static const uint32_t		 ncpu[] = { 1, 1, 1 };
	struct sched_batch_config	 c = config(SCHED_POLICY_WQ, 0, 0, 2);
	struct sched_stats		 st;
	struct sched			*s;

	(void)state;
	s = new_with_workers(ncpu, nitems(ncpu));
	assert_int_equal(submit_range(s, 1, &c, 1, 4), 0);
	expect_assign(s, 1, 1, 0);
	expect_assign(s, 2, 2, 0);
	expect_assign(s, 3, 3, 0);
	assert_int_equal(sched_failed(s, 1, 1, 1), 1);
	expect_assign(s, 1, 4, 0);	/* not task 1 again */
	expect_none(s);
	assert_int_equal(sched_failed(s, 1, 1, 1), -1);	/* said again */
	assert_int_equal(sched_failed(s, 1, 1, 1), -1);
	expect_none(s);
	assert_int_equal(sched_done(s, 2, 2, 2), SCHED_ACCEPT);
	expect_assign(s, 2, 1, 0);	/* another machine */
	expect_none(s);
	assert_int_equal(sched_failed(s, 2, 1, 3), 2);
	expect_task_failed(s, 1, 1);
	expect_none(s);
	assert_int_equal(sched_failed(s, 2, 1, 4), -1);	/* already failed */
	assert_int_equal(sched_done(s, 2, 1, 4), SCHED_STALE);
	assert_int_equal(sched_failed(s, 1, 77, 4), -1);
	assert_int_equal(sched_done(s, 3, 3, 5), SCHED_ACCEPT);
	assert_int_equal(sched_done(s, 1, 4, 5), SCHED_ACCEPT);
	expect_batch_done(s, 1);
	expect_none(s);
	sched_get_stats(s, &st);
	assert_int_equal(st.done, 3);
	assert_int_equal(st.failed, 1);
	assert_int_equal(st.held + st.running + st.queued, 0);
	sched_free(s);
}

/*
 * A task that failed on every connected machine able to run it gives up
 * at once rather than wait, even below max_attempts; so does one put back
 * in the queue when the last other machine leaves.
 */
static void
test_failure_everywhere(void **state)
{
	static const uint32_t		 ncpu[] = { 1, 1 };
	struct sched_batch_config	 c = config(SCHED_POLICY_WQ, 0, 0, 5);
	struct sched			*s;

	(void)state;
	s = new_with_workers(ncpu, nitems(ncpu));
	assert_int_equal(submit_range(s, 1, &c, 1, 3), 0);
	expect_assign(s, 1, 1, 0);
	expect_assign(s, 2, 2, 0);
	assert_int_equal(sched_failed(s, 1, 1, 1), 1);
	expect_assign(s, 1, 3, 0);	/* task 1 waits for w2 */
	expect_none(s);
	assert_int_equal(sched_done(s, 2, 2, 2), SCHED_ACCEPT);
	expect_assign(s, 2, 1, 0);
	assert_int_equal(sched_failed(s, 2, 1, 3), 2);
	expect_task_failed(s, 1, 1);	/* failed on both machines */
	expect_none(s);
	assert_int_equal(sched_failed(s, 1, 3, 4), 1);
	expect_assign(s, 2, 3, 0);
	expect_none(s);
	sched_worker_lost(s, 2, 5);	/* task 3 is back in the queue */
	expect_task_failed(s, 1, 3);	/* w1 failed it: nowhere to go */
	expect_batch_done(s, 1);
	expect_none(s);
	sched_free(s);
}

/*
 * A machine is known by its node, not its id: a worker whose copy failed
 * and that comes back under a new id does not get the task again.
 */
static void
test_failure_node(void **state)
{
	struct sched_batch_config	 c = config(SCHED_POLICY_WQ, 0, 0, 3);
	struct sched			*s;

	(void)state;
	assert_non_null(s = sched_new());
	assert_int_equal(sched_worker_join_node(s, 1, 1001, 1, ~0U, 0), 0);
	assert_int_equal(sched_worker_join_node(s, 2, 1002, 1, ~0U, 0), 0);
	assert_int_equal(submit_range(s, 1, &c, 1, 2), 0);
	expect_assign(s, 1, 1, 0);
	expect_assign(s, 2, 2, 0);
	assert_int_equal(sched_failed(s, 1, 1, 1), 1);
	expect_none(s);
	sched_worker_lost(s, 1, 2);
	assert_int_equal(sched_worker_join_node(s, 3, 1001, 1, ~0U, 3), 0);
	expect_none(s);			/* task 1 failed on that machine */
	assert_int_equal(sched_failed(s, 3, 1, 4), -1);	/* holds no copy */
	assert_int_equal(sched_done(s, 2, 2, 5), SCHED_ACCEPT);
	expect_assign(s, 2, 1, 0);
	assert_int_equal(sched_done(s, 2, 1, 6), SCHED_ACCEPT);
	expect_suspect(s, 3, 1, SCHED_WHY_FAILED);
	expect_batch_done(s, 1);
	expect_none(s);
	sched_free(s);
}

/* Drain the actions of test_failure_blamed: copies held, verdicts. */
static void
blamed_drain(struct sched *s, uint8_t held[4][31], unsigned *suspects,
    unsigned *cooldowns)
{
	struct sched_action	 a;

	while (sched_next_action(s, &a)) {
		switch (a.type) {
		case SCHED_ASSIGN:
			held[a.wid][a.task] = 1;
			break;
		case SCHED_CANCEL:
			held[a.wid][a.task] = 0;
			break;
		case SCHED_SUSPECT:
			assert_int_equal(a.wid, 1);
			assert_int_equal(a.why, SCHED_WHY_FAILED);
			(*suspects)++;
			break;
		case SCHED_COOLDOWN:
			assert_int_equal(a.wid, 1);
			(*cooldowns)++;
			break;
		case SCHED_TASK_FAILED:
			fail_msg("task %llu gave up",
			    (unsigned long long)a.task);
			break;
		default:
			break;
		}
	}
}

/*
 * A worker whose copies fail where the same tasks succeed elsewhere is
 * suspect each time, and cools down like a slow one; every task ends on
 * the healthy workers.
 */
static void
test_failure_blamed(void **state)
{
	static const uint32_t		 ncpu[] = { 1, 1, 1 };
	struct sched_batch_config	 c = config(SCHED_POLICY_R3Q, 2, 0, 3);
	struct sched_fault_config	 f;
	struct sched_fault_info		 fi;
	struct sched_stats		 st;
	struct sched			*s;
	uint64_t			 now = 0, t;
	uint8_t				 held[4][31];
	unsigned			 suspects = 0, cooldowns = 0, i, k;

	(void)state;
	s = new_with_workers(ncpu, nitems(ncpu));
	memset(&f, 0, sizeof(f));
	f.grace_ns = 1000000000ULL;
	f.suspect_limit = 2;
	f.suspect_window_ns = 600000000000ULL;
	f.cooldown_ns = 300000000000ULL;
	sched_set_fault(s, &f);
	memset(held, 0, sizeof(held));
	assert_int_equal(submit_range(s, 1, &c, 1, 30), 0);
	blamed_drain(s, held, &suspects, &cooldowns);
	/* Each step w1 fails what it holds, w2 and w3 finish theirs. */
	for (k = 0; k < 200; k++) {
		sched_get_stats(s, &st);
		if (st.done + st.failed == 30)
			break;
		now += 1000;
		for (i = 1; i <= 3; i++)
			for (t = 1; t <= 30; t++) {
				if (!held[i][t])
					continue;
				held[i][t] = 0;
				if (i == 1)
					assert_int_equal(sched_failed(s, i, t,
					    now), 1);
				else
					(void)sched_done(s, i, t, now);
				blamed_drain(s, held, &suspects, &cooldowns);
			}
	}
	sched_get_stats(s, &st);
	assert_int_equal(st.done, 30);
	assert_int_equal(st.failed, 0);
	assert_true(suspects >= 3);
	assert_int_equal(cooldowns, 1);
	assert_int_equal(sched_worker_fault(s, 1, &fi), 0);
	assert_true(fi.cooldown_until > now);
	sched_free(s);
}

/*
 * A failing copy does not give up the task while another copy runs, and
 * the slot it frees is not refilled with the task it failed.
 */
static void
test_failure_other_copy(void **state)
{
	static const uint32_t		 ncpu[] = { 1, 1 };
	struct sched_batch_config	 c = config(SCHED_POLICY_R3Q, 1, 0, 1);
	struct sched			*s;

	(void)state;
	s = new_with_workers(ncpu, nitems(ncpu));
	assert_int_equal(submit_range(s, 1, &c, 1, 2), 0);
	expect_assign(s, 1, 1, 0);
	expect_assign(s, 2, 2, 0);
	assert_int_equal(sched_done(s, 1, 1, 1), SCHED_ACCEPT);
	expect_assign(s, 1, 2, 1);
	expect_none(s);
	assert_int_equal(sched_failed(s, 3, 2, 2), -1);	/* no such worker */
	assert_int_equal(sched_failed(s, 2, 2, 2), 1);
	expect_none(s);			/* w1's copy still runs */
	assert_int_equal(sched_done(s, 1, 2, 3), SCHED_ACCEPT);
	expect_suspect(s, 2, 2, SCHED_WHY_FAILED);
	expect_batch_done(s, 1);
	expect_none(s);
	sched_free(s);
}

/*
 * verify = 2: each task runs on two machines at once and is done when two
 * outputs agree bit for bit; a disagreement brings a third machine, whose
 * output settles it, and the machine outvoted is suspect.
 */
static void
test_verify(void **state)
{
	static const uint32_t		 ncpu[] = { 1, 1, 1 };
	struct sched_batch_config	 c = config(SCHED_POLICY_WQ, 0, 0, 0);
	struct sched_stats		 st;
	struct sched			*s;

	(void)state;
	c.verify = 2;
	s = new_with_workers(ncpu, nitems(ncpu));
	assert_int_equal(submit_range(s, 1, &c, 1, 2), 0);
	expect_assign(s, 1, 1, 0);
	expect_assign(s, 2, 2, 0);	/* fresh work first, */
	expect_assign(s, 3, 1, 0);	/* then a second machine */
	expect_none(s);
	assert_int_equal(sched_vote(s, 1, 1, 77, NULL, 1), SCHED_PENDING);
	expect_assign(s, 1, 2, 0);	/* task 2's second machine */
	expect_none(s);
	assert_int_equal(sched_vote(s, 1, 1, 77, NULL, 1), SCHED_STALE);
	assert_int_equal(sched_vote(s, 3, 1, 77, NULL, 2), SCHED_ACCEPT);
	expect_none(s);
	/* Task 2: w2 and w1 disagree; w3 settles it for w1. */
	assert_int_equal(sched_vote(s, 2, 2, 66, NULL, 3), SCHED_PENDING);
	expect_none(s);
	assert_int_equal(sched_vote(s, 1, 2, 55, NULL, 4), SCHED_PENDING);
	expect_assign(s, 3, 2, 0);
	expect_none(s);
	assert_int_equal(sched_vote(s, 3, 2, 55, NULL, 5), SCHED_ACCEPT);
	expect_suspect(s, 2, 2, SCHED_WHY_DISAGREED);
	expect_batch_done(s, 1);
	expect_none(s);
	sched_get_stats(s, &st);
	assert_int_equal(st.done, 2);
	assert_int_equal(st.verify_copies, 3);
	assert_int_equal(st.disagreed, 1);
	assert_int_equal(st.replicas, 0);
	sched_free(s);
}

/*
 * Under verify, a task whose votes cannot reach agreement gives up: three
 * different outputs, or two machines that disagree and no third one.
 */
static void
test_verify_no_quorum(void **state)
{
	static const uint32_t		 ncpu[] = { 1, 1, 1 };
	struct sched_batch_config	 c = config(SCHED_POLICY_WQ, 0, 0, 0);
	struct sched_action		 a;
	struct sched			*s;

	(void)state;
	c.verify = 2;
	s = new_with_workers(ncpu, nitems(ncpu));
	assert_int_equal(submit_range(s, 1, &c, 1, 1), 0);
	expect_assign(s, 1, 1, 0);
	expect_assign(s, 2, 1, 0);
	assert_int_equal(sched_vote(s, 1, 1, 1, NULL, 1), SCHED_PENDING);
	assert_int_equal(sched_vote(s, 2, 1, 2, NULL, 2), SCHED_PENDING);
	expect_assign(s, 3, 1, 0);
	assert_int_equal(sched_vote(s, 3, 1, 3, NULL, 3), SCHED_PENDING);
	assert_int_equal(sched_next_action(s, &a), 1);
	assert_int_equal(a.type, SCHED_TASK_FAILED);
	assert_int_equal(a.reason, SCHED_FAIL_DISAGREE);
	expect_batch_done(s, 1);
	expect_none(s);
	/* Two machines only. */
	sched_worker_lost(s, 3, 4);
	assert_int_equal(submit_range(s, 2, &c, 10, 1), 0);
	expect_assign(s, 1, 10, 0);
	expect_assign(s, 2, 10, 0);
	assert_int_equal(sched_vote(s, 1, 10, 1, NULL, 5), SCHED_PENDING);
	assert_int_equal(sched_vote(s, 2, 10, 2, NULL, 6), SCHED_PENDING);
	assert_int_equal(sched_next_action(s, &a), 1);
	assert_int_equal(a.type, SCHED_TASK_FAILED);
	assert_int_equal(a.reason, SCHED_FAIL_DISAGREE);
	expect_batch_done(s, 2);
	expect_none(s);
	c.verify = SCHED_VERIFY_MAX + 1;
	assert_int_equal(submit_range(s, 3, &c, 20, 1), -1);
	sched_free(s);
}

/*
 * Workers of one group (masterd: those behind one relay, whose names rest
 * on its word) give one vote under verify: two of them that agree do not
 * verify a task, the second vote is stale and, no other group being
 * there, the task gives up rather than wait; beside a worker of another
 * group they cannot outvote it; and a copy goes to another group first.
 */
static void
test_verify_group(void **state)
{
	static const uint32_t		 k0[] = { 0 };
	struct sched_batch_config	 c = config(SCHED_POLICY_WQ, 0, 0, 0);
	struct sched_action		 a;
	struct sched			*s;

	(void)state;
	c.verify = 2;
	assert_non_null(s = sched_new());
	assert_int_equal(sched_worker_join_group(s, 1, 1, 100, 1, k0, 1, 0),
	    0);
	assert_int_equal(sched_worker_join_group(s, 2, 2, 100, 1, k0, 1, 0),
	    0);
	assert_int_equal(submit_range(s, 1, &c, 1, 1), 0);
	expect_assign(s, 1, 1, 0);
	expect_assign(s, 2, 1, 0);	/* no other group: the same one */
	expect_none(s);
	assert_int_equal(sched_vote(s, 1, 1, 9, NULL, 1), SCHED_PENDING);
	assert_int_equal(sched_vote(s, 2, 1, 9, NULL, 2), SCHED_STALE);
	assert_int_equal(sched_next_action(s, &a), 1);
	assert_int_equal(a.type, SCHED_TASK_FAILED);
	assert_int_equal(a.reason, SCHED_FAIL_DISAGREE);
	expect_batch_done(s, 1);
	expect_none(s);
	/* A machine of its own: the verify copy goes there, not to w2. */
	assert_int_equal(sched_worker_join_group(s, 3, 3, 3, 1, k0, 1, 3), 0);
	expect_none(s);
	assert_int_equal(submit_range(s, 2, &c, 10, 1), 0);
	expect_assign(s, 1, 10, 0);
	expect_assign(s, 3, 10, 0);
	expect_none(s);
	/* The group's two workers forge alike; w3 is not outvoted. */
	assert_int_equal(sched_vote(s, 1, 10, 9, NULL, 4), SCHED_PENDING);
	assert_int_equal(sched_vote(s, 3, 10, 5, NULL, 5), SCHED_PENDING);
	assert_int_equal(sched_next_action(s, &a), 1);
	assert_int_equal(a.type, SCHED_TASK_FAILED);
	assert_int_equal(a.reason, SCHED_FAIL_DISAGREE);
	expect_batch_done(s, 2);
	expect_none(s);
	/* An honest output from the group and w3 agree: verified. */
	assert_int_equal(submit_range(s, 3, &c, 20, 1), 0);
	expect_assign(s, 1, 20, 0);
	expect_assign(s, 3, 20, 0);
	expect_none(s);
	assert_int_equal(sched_vote(s, 1, 20, 5, NULL, 6), SCHED_PENDING);
	assert_int_equal(sched_vote(s, 3, 20, 5, NULL, 7), SCHED_ACCEPT);
	expect_batch_done(s, 3);
	expect_none(s);
	sched_free(s);
}

/* A lost copy is not a failed attempt. */
static void
test_lost_not_an_attempt(void **state)
{
	static const uint32_t		 ncpu[] = { 1, 1 };
	struct sched_batch_config	 c = config(SCHED_POLICY_WQ, 0, 0, 1);
	struct sched			*s;

	(void)state;
	s = new_with_workers(ncpu, nitems(ncpu));
	assert_int_equal(submit_range(s, 1, &c, 1, 2), 0);
	expect_assign(s, 1, 1, 0);
	expect_assign(s, 2, 2, 0);
	sched_worker_lost(s, 1, 1);
	expect_none(s);
	assert_int_equal(sched_done(s, 2, 2, 2), SCHED_ACCEPT);
	expect_assign(s, 2, 1, 0);
	assert_int_equal(sched_failed(s, 2, 1, 3), 1);
	expect_task_failed(s, 1, 1);
	expect_batch_done(s, 1);
	expect_none(s);
	/* Rejoining under the same id is a new worker. */
	assert_int_equal(sched_worker_join(s, 1, 1, ~0U, 4), 0);
	expect_none(s);
	sched_free(s);
}

/* Aborting a batch cancels its copies and lets the next batch in. */
static void
test_batch_abort(void **state)
{
	static const uint32_t		 ncpu[] = { 1, 1 };
	struct sched_batch_config	 c = config(SCHED_POLICY_WQ, 0, 0, 0);
	struct sched_stats		 st;
	struct sched			*s;

	(void)state;
	s = new_with_workers(ncpu, nitems(ncpu));
	assert_int_equal(submit_range(s, 1, &c, 1, 4), 0);
	assert_int_equal(submit_range(s, 2, &c, 10, 2), 0);
	expect_assign(s, 1, 1, 0);
	expect_assign(s, 2, 2, 0);
	expect_none(s);
	sched_started(s, 1, 1, 1);

	sched_batch_abort(s, 1, 2);
	expect_cancel(s, 1, 1, 1);
	expect_cancel(s, 2, 2, 0);
	expect_assign(s, 1, 10, 0);
	expect_assign(s, 2, 11, 0);
	expect_none(s);
	sched_get_stats(s, &st);
	assert_int_equal(st.queued, 0);
	assert_int_equal(st.held, 2);
	assert_int_equal(st.running, 0);
	assert_int_equal(st.cancelled_running, 1);
	assert_int_equal(st.cancelled_held, 1);
	assert_int_equal(sched_done(s, 1, 1, 3), SCHED_UNKNOWN);
	sched_batch_abort(s, 1, 3);
	expect_none(s);

	/* Its task ids are free again. */
	assert_int_equal(submit_range(s, 1, &c, 1, 1), 0);
	expect_none(s);
	sched_batch_abort(s, 2, 4);
	expect_cancel(s, 1, 10, 0);
	expect_cancel(s, 2, 11, 0);
	expect_assign(s, 1, 1, 0);
	expect_none(s);
	sched_free(s);
}

/* Batches are served in submit order. */
static void
test_two_batches(void **state)
{
	static const uint32_t		 ncpu[] = { 1 };
	struct sched_batch_config	 c = config(SCHED_POLICY_WQ, 0, 0, 0);
	struct sched			*s;

	(void)state;
	s = new_with_workers(ncpu, nitems(ncpu));
	assert_int_equal(submit_range(s, 7, &c, 1, 2), 0);
	assert_int_equal(submit_range(s, 8, &c, 10, 2), 0);
	expect_assign(s, 1, 1, 0);
	expect_none(s);
	assert_int_equal(sched_done(s, 1, 1, 1), SCHED_ACCEPT);
	expect_assign(s, 1, 2, 0);
	assert_int_equal(sched_done(s, 1, 2, 2), SCHED_ACCEPT);
	expect_batch_done(s, 7);
	expect_assign(s, 1, 10, 0);
	assert_int_equal(sched_done(s, 1, 10, 3), SCHED_ACCEPT);
	expect_assign(s, 1, 11, 0);
	assert_int_equal(sched_done(s, 1, 11, 4), SCHED_ACCEPT);
	expect_batch_done(s, 8);
	expect_none(s);
	sched_free(s);
}

#define MS	1000000ULL	/* nanoseconds */

/*
 * WQ report: the queue empties when the last task is sent (120); the
 * synchronisation wait begins at the first result after that which
 * leaves a worker with nothing to do (130).
 */
static void
test_report_wq(void **state)
{
	static const uint32_t		 ncpu[] = { 1, 1, 1 };
	struct sched_batch_config	 c = config(SCHED_POLICY_WQ, 0, 0, 0);
	struct sched			*s;

	(void)state;
	seen_reset();
	s = new_with_workers(ncpu, nitems(ncpu));
	assert_int_equal(submit_at(s, 1, &c, 1, 5, 100), 0);
	expect_assign(s, 1, 1, 0);
	expect_assign(s, 2, 2, 0);
	expect_assign(s, 3, 3, 0);
	assert_int_equal(sched_done(s, 1, 1, 110), SCHED_ACCEPT);
	expect_assign(s, 1, 4, 0);
	assert_int_equal(sched_done(s, 2, 2, 120), SCHED_ACCEPT);
	expect_assign(s, 2, 5, 0);	/* queue empty, nobody idle */
	assert_int_equal(sched_done(s, 3, 3, 130), SCHED_ACCEPT);
	expect_none(s);			/* w3 idle: sync wait begins */
	assert_int_equal(sched_done(s, 1, 4, 140), SCHED_ACCEPT);
	expect_none(s);
	assert_int_equal(sched_done(s, 2, 5, 150), SCHED_ACCEPT);
	expect_report(s, 1, report(100, 120, 130, 150, 0, 0, 0, 0));
	expect_none(s);
	sched_free(s);
}

/*
 * RR report: t_sync is the first replica (1040); the counts are those of
 * the ASSIGN replica and CANCEL actions seen.
 */
static void
test_report_rr(void **state)
{
	static const uint32_t		 ncpu[] = { 1, 1, 1 };
	struct sched_batch_config	 c = config(SCHED_POLICY_RR, 0, 0, 0);
	struct sched			*s;

	(void)state;
	seen_reset();
	s = new_with_workers(ncpu, nitems(ncpu));
	assert_int_equal(submit_at(s, 1, &c, 1, 5, 1000), 0);
	expect_assign(s, 1, 1, 0);
	expect_assign(s, 2, 2, 0);
	expect_assign(s, 3, 3, 0);
	assert_int_equal(sched_done(s, 1, 1, 1010), SCHED_ACCEPT);
	expect_assign(s, 1, 4, 0);
	assert_int_equal(sched_done(s, 2, 2, 1020), SCHED_ACCEPT);
	expect_assign(s, 2, 5, 0);
	sched_started(s, 3, 3, 1030);
	sched_started(s, 1, 4, 1030);
	sched_started(s, 2, 5, 1030);
	assert_int_equal(sched_done(s, 3, 3, 1040), SCHED_ACCEPT);
	expect_assign(s, 3, 4, 1);
	assert_int_equal(sched_done(s, 3, 4, 1050), SCHED_ACCEPT);
	expect_cancel(s, 1, 4, 1);
	expect_assign(s, 1, 5, 1);
	expect_assign(s, 3, 5, 1);
	assert_int_equal(sched_done(s, 1, 4, 1060), SCHED_STALE);
	assert_int_equal(sched_done(s, 1, 5, 1070), SCHED_ACCEPT);
	expect_cancel(s, 2, 5, 1);
	expect_cancel(s, 3, 5, 0);
	expect_report(s, 1, report(1000, 1020, 1040, 1070, 3, 1, 2, 0));
	expect_seen_counts();
	expect_none(s);
	sched_free(s);
}

/*
 * R3Q report: every task is sent at submit, so the queue empties then;
 * t_sync is the first replica (510).
 */
static void
test_report_r3q(void **state)
{
	static const uint32_t		 ncpu[] = { 1, 1, 1 };
	struct sched_batch_config	 c = config(SCHED_POLICY_R3Q, 0, 0, 0);
	struct sched			*s;

	(void)state;
	seen_reset();
	s = new_with_workers(ncpu, nitems(ncpu));
	assert_int_equal(submit_at(s, 1, &c, 1, 6, 500), 0);
	expect_assign(s, 1, 1, 0);
	expect_assign(s, 2, 2, 0);
	expect_assign(s, 3, 3, 0);
	expect_assign(s, 1, 4, 0);
	expect_assign(s, 2, 5, 0);
	expect_assign(s, 3, 6, 0);
	sched_started(s, 1, 1, 501);
	sched_started(s, 2, 2, 501);
	sched_started(s, 3, 3, 501);
	assert_int_equal(sched_done(s, 1, 1, 510), SCHED_ACCEPT);
	expect_assign(s, 1, 6, 1);
	assert_int_equal(sched_done(s, 2, 2, 520), SCHED_ACCEPT);
	expect_assign(s, 2, 4, 1);
	assert_int_equal(sched_done(s, 3, 3, 530), SCHED_ACCEPT);
	expect_assign(s, 3, 5, 1);
	sched_started(s, 1, 4, 540);
	sched_started(s, 2, 5, 540);
	sched_started(s, 3, 6, 540);
	assert_int_equal(sched_done(s, 1, 4, 550), SCHED_ACCEPT);
	expect_cancel(s, 2, 4, 0);
	expect_assign(s, 1, 5, 1);
	expect_assign(s, 2, 6, 1);
	sched_started(s, 1, 6, 560);
	assert_int_equal(sched_done(s, 1, 6, 570), SCHED_ACCEPT);
	expect_cancel(s, 3, 6, 1);
	expect_cancel(s, 2, 6, 0);
	assert_int_equal(sched_done(s, 3, 5, 580), SCHED_ACCEPT);
	expect_cancel(s, 2, 5, 1);
	expect_cancel(s, 1, 5, 0);
	expect_report(s, 1, report(500, 500, 510, 580, 5, 3, 2, 0));
	expect_seen_counts();
	expect_none(s);
	sched_free(s);
}

/*
 * RR and R3Q without a replica fall back on the first idle CPU; with
 * neither, t_sync is 0.
 */
static void
test_report_no_replica(void **state)
{
	static const uint32_t		 two[] = { 2 }, one[] = { 1 };
	struct sched_batch_config	 rr = config(SCHED_POLICY_RR, 0, 0, 0);
	struct sched_batch_config	 r3q = config(SCHED_POLICY_R3Q, 0, 0, 0);
	struct sched			*s;

	(void)state;
	/* RR, one 2-CPU worker with both tasks: nothing to replicate. */
	s = new_with_workers(two, nitems(two));
	assert_int_equal(submit_at(s, 1, &rr, 1, 2, 10), 0);
	expect_assign(s, 1, 1, 0);
	expect_assign(s, 1, 2, 0);
	assert_int_equal(sched_done(s, 1, 1, 20), SCHED_ACCEPT);
	expect_none(s);			/* one CPU idle */
	assert_int_equal(sched_done(s, 1, 2, 30), SCHED_ACCEPT);
	expect_report(s, 1, report(10, 10, 20, 30, 0, 0, 0, 0));
	sched_free(s);

	/* R3Q, one 1-CPU worker holding both tasks: never idle. */
	s = new_with_workers(one, nitems(one));
	assert_int_equal(submit_at(s, 1, &r3q, 1, 2, 10), 0);
	expect_assign(s, 1, 1, 0);
	expect_assign(s, 1, 2, 0);
	assert_int_equal(sched_done(s, 1, 1, 20), SCHED_ACCEPT);
	expect_none(s);
	assert_int_equal(sched_done(s, 1, 2, 30), SCHED_ACCEPT);
	expect_report(s, 1, report(10, 10, 0, 30, 0, 0, 0, 0));
	sched_free(s);
}

/*
 * The edge of "no idle moment".  Idle moments are judged at the end of an
 * event while the batch lives, so: as many tasks as CPUs all finishing at
 * the same now give t_sync = t_done (the first result leaves a CPU idle;
 * a wait of length 0); a batch whose only result ends it, or whose
 * workers go straight on to the next batch, never idles: t_sync 0.
 */
static void
test_report_no_idle_moment(void **state)
{
	static const uint32_t		 three[] = { 1, 1, 1 }, one[] = { 1 };
	struct sched_batch_config	 c = config(SCHED_POLICY_WQ, 0, 0, 0);
	struct sched			*s;

	(void)state;
	s = new_with_workers(three, nitems(three));
	assert_int_equal(submit_at(s, 1, &c, 1, 3, 5), 0);
	expect_assign(s, 1, 1, 0);
	expect_assign(s, 2, 2, 0);
	expect_assign(s, 3, 3, 0);
	assert_int_equal(sched_done(s, 1, 1, 40), SCHED_ACCEPT);
	assert_int_equal(sched_done(s, 2, 2, 40), SCHED_ACCEPT);
	assert_int_equal(sched_done(s, 3, 3, 40), SCHED_ACCEPT);
	expect_report(s, 1, report(5, 5, 40, 40, 0, 0, 0, 0));
	sched_free(s);

	s = new_with_workers(one, nitems(one));
	assert_int_equal(submit_at(s, 1, &c, 1, 1, 5), 0);
	expect_assign(s, 1, 1, 0);
	assert_int_equal(sched_done(s, 1, 1, 40), SCHED_ACCEPT);
	expect_report(s, 1, report(5, 5, 0, 40, 0, 0, 0, 0));

	/* Batch 2 keeps the worker busy until batch 3 comes to an end. */
	assert_int_equal(submit_at(s, 2, &c, 10, 1, 50), 0);
	assert_int_equal(submit_at(s, 3, &c, 20, 1, 51), 0);
	expect_assign(s, 1, 10, 0);
	expect_none(s);
	assert_int_equal(sched_done(s, 1, 10, 60), SCHED_ACCEPT);
	expect_report(s, 2, report(50, 50, 0, 60, 0, 0, 0, 0));
	expect_assign(s, 1, 20, 0);
	assert_int_equal(sched_done(s, 1, 20, 70), SCHED_ACCEPT);
	expect_report(s, 3, report(51, 60, 0, 70, 0, 0, 0, 0));
	expect_none(s);
	sched_free(s);
}

/*
 * A lost worker's task goes back to the queue: t_empty is the last time
 * the queue became empty (40), t_sync the first idle moment (30).
 */
static void
test_report_requeue(void **state)
{
	static const uint32_t		 ncpu[] = { 1, 1 };
	struct sched_batch_config	 c = config(SCHED_POLICY_WQ, 0, 0, 0);
	struct sched			*s;

	(void)state;
	s = new_with_workers(ncpu, nitems(ncpu));
	assert_int_equal(submit_at(s, 1, &c, 1, 3, 10), 0);
	expect_assign(s, 1, 1, 0);
	expect_assign(s, 2, 2, 0);
	assert_int_equal(sched_done(s, 1, 1, 20), SCHED_ACCEPT);
	expect_assign(s, 1, 3, 0);
	assert_int_equal(sched_done(s, 2, 2, 30), SCHED_ACCEPT);
	expect_none(s);
	sched_worker_lost(s, 1, 40);
	expect_assign(s, 2, 3, 0);
	assert_int_equal(sched_done(s, 2, 3, 50), SCHED_ACCEPT);
	expect_report(s, 1, report(10, 40, 30, 50, 0, 0, 0, 0));
	expect_none(s);
	sched_free(s);
}

/*
 * Two RR batches interleaved: each report counts only its own replicas,
 * cancels and failures, while the global stats count them all.
 */
static void
test_report_two_batches(void **state)
{
	static const uint32_t		 ncpu[] = { 1, 1, 1 };
	struct sched_batch_config	 a = config(SCHED_POLICY_RR, 0, 0, 0);
	struct sched_batch_config	 b = config(SCHED_POLICY_RR, 0, 0, 1);
	struct sched_stats		 st;
	struct sched			*s;

	(void)state;
	seen_reset();
	s = new_with_workers(ncpu, nitems(ncpu));
	/* Batch 1 leaves w3 idle at once: a replica at submit. */
	assert_int_equal(submit_at(s, 1, &a, 1, 2, 100), 0);
	expect_assign(s, 1, 1, 0);
	expect_assign(s, 2, 2, 0);
	expect_assign(s, 3, 1, 1);
	assert_int_equal(submit_at(s, 2, &b, 10, 3, 110), 0);
	expect_none(s);
	assert_int_equal(sched_done(s, 3, 1, 120), SCHED_ACCEPT);
	expect_cancel(s, 1, 1, 0);
	expect_assign(s, 1, 10, 0);
	expect_assign(s, 3, 11, 0);
	assert_int_equal(sched_failed(s, 1, 10, 130), 1);
	expect_task_failed(s, 2, 10);
	expect_assign(s, 1, 12, 0);	/* batch 2's queue is empty */
	expect_none(s);
	assert_int_equal(sched_done(s, 2, 2, 140), SCHED_ACCEPT);
	expect_report(s, 1, report(100, 100, 100, 140, 1, 1, 0, 0));
	expect_seen_counts();
	expect_assign(s, 2, 11, 1);	/* batch 2's first replica */
	sched_started(s, 3, 11, 145);
	assert_int_equal(sched_done(s, 2, 11, 150), SCHED_ACCEPT);
	expect_cancel(s, 3, 11, 1);
	expect_assign(s, 2, 12, 1);
	expect_assign(s, 3, 12, 1);
	assert_int_equal(sched_done(s, 1, 12, 160), SCHED_ACCEPT);
	expect_cancel(s, 2, 12, 0);
	expect_cancel(s, 3, 12, 0);
	expect_report(s, 2, report(110, 130, 140, 160, 3, 2, 1, 1));
	expect_seen_counts();
	expect_none(s);

	sched_get_stats(s, &st);
	assert_int_equal(st.replicas, 4);
	assert_int_equal(st.cancelled_held, 3);
	assert_int_equal(st.cancelled_running, 1);
	assert_int_equal(st.failed, 1);
	sched_free(s);
}

/*
 * sched_done_timed() folds each result's timing into its worker's
 * estimates: rtt = time since that copy was assigned less the time at the
 * worker, EWMA weight 1/4; a worker claiming more time than has passed
 * gives no rtt sample; untimed and unknown results change nothing.  With
 * queue_factor auto the capacity follows at the same event's fill.
 */
static void
test_done_timed_ewma(void **state)
{
	static const uint32_t		 ncpu[] = { 1 };
	struct sched_batch_config	 c;
	struct sched_timing		 tm;
	struct sched			*s;
	uint64_t			 i;

	(void)state;
	c = config(SCHED_POLICY_RWQ, SCHED_QF_AUTO, 0, 0);
	s = new_with_workers(ncpu, nitems(ncpu));
	expect_estimate(s, 1, 0, 0, 1);		/* no batch: ncpu */
	assert_int_equal(submit_at(s, 1, &c, 1, 10, 0), 0);
	expect_assign(s, 1, 1, 0);
	expect_assign(s, 1, 2, 0);
	expect_none(s);
	expect_estimate(s, 1, 0, 0, 2);

	/* 300 ms at the worker, 60 ms since sent: task time only. */
	tm = timing(300 * MS, 8 * MS);
	assert_int_equal(sched_done_timed(s, 1, 1, &tm, 60 * MS),
	    SCHED_ACCEPT);
	expect_assign(s, 1, 3, 0);		/* sent at 60 ms */
	expect_none(s);
	expect_estimate(s, 1, 0, 8 * MS, 2);

	/* Sent at 0, back at 100 ms, 60 ms at the worker: rtt 40 ms. */
	tm = timing(60 * MS, 16 * MS);
	assert_int_equal(sched_done_timed(s, 1, 2, &tm, 100 * MS),
	    SCHED_ACCEPT);
	for (i = 4; i <= 7; i++)		/* cap 1 x (1 + 40/10) */
		expect_assign(s, 1, i, 0);
	expect_none(s);
	expect_estimate(s, 1, 40 * MS, 10 * MS, 5);

	/* Sent at 60 ms, back at 200 ms, 60 ms at the worker: 80 ms. */
	tm = timing(60 * MS, 6 * MS);
	assert_int_equal(sched_done_timed(s, 1, 3, &tm, 200 * MS),
	    SCHED_ACCEPT);
	for (i = 8; i <= 10; i++)		/* cap 1 x (1 + ceil(50/9)) */
		expect_assign(s, 1, i, 0);
	expect_none(s);
	expect_estimate(s, 1, 50 * MS, 9 * MS, 7);

	assert_int_equal(sched_done(s, 1, 4, 300 * MS), SCHED_ACCEPT);
	expect_estimate(s, 1, 50 * MS, 9 * MS, 7);
	for (i = 5; i <= 10; i++)
		assert_int_equal(sched_done(s, 1, i, 400 * MS), SCHED_ACCEPT);
	expect_batch_done(s, 1);
	expect_none(s);
	tm = timing(0, 1);
	assert_int_equal(sched_done_timed(s, 1, 5, &tm, 500 * MS),
	    SCHED_UNKNOWN);
	expect_estimate(s, 1, 50 * MS, 9 * MS, 1);	/* no batch left */
	sched_free(s);
}

/*
 * queue_factor auto under RWQ: a worker with rtt 50 ms and task 10 ms
 * holds 1 + 5 per CPU and gets them at the next fill; rtt 1 ms and task
 * 100 ms keeps the paper's 2 per CPU; a huge ratio stops at
 * SCHED_QF_AUTO_MAX held per CPU; a shrinking cap cancels nothing.
 */
static void
test_qf_auto(void **state)
{
	static const uint32_t		 ncpu[] = { 2, 1, 1 };
	struct sched_batch_config	 c;
	struct sched_timing		 tm;
	struct sched			*s;
	uint64_t			 i;

	(void)state;
	c = config(SCHED_POLICY_RWQ, SCHED_QF_AUTO, 0, 0);
	s = new_with_workers(ncpu, nitems(ncpu));
	assert_int_equal(submit_at(s, 1, &c, 1, 100, 0), 0);
	expect_assign(s, 1, 1, 0);
	expect_assign(s, 2, 2, 0);
	expect_assign(s, 3, 3, 0);
	expect_assign(s, 1, 4, 0);
	expect_assign(s, 2, 5, 0);
	expect_assign(s, 3, 6, 0);
	expect_assign(s, 1, 7, 0);
	expect_assign(s, 1, 8, 0);
	expect_none(s);
	expect_estimate(s, 1, 0, 0, 4);
	expect_estimate(s, 2, 0, 0, 2);

	tm = timing(10 * MS, 10 * MS);
	assert_int_equal(sched_done_timed(s, 1, 1, &tm, 60 * MS),
	    SCHED_ACCEPT);
	for (i = 9; i <= 17; i++)		/* 3 held, cap 2 x 6 */
		expect_assign(s, 1, i, 0);
	expect_none(s);
	expect_estimate(s, 1, 50 * MS, 10 * MS, 12);
	expect_load(s, 1, 12, 0);

	tm = timing(100 * MS, 100 * MS);
	assert_int_equal(sched_done_timed(s, 2, 2, &tm, 101 * MS),
	    SCHED_ACCEPT);
	expect_assign(s, 2, 18, 0);
	expect_none(s);
	expect_estimate(s, 2, 1 * MS, 100 * MS, 2);

	tm = timing(0, 1000);
	assert_int_equal(sched_done_timed(s, 3, 3, &tm, 1000 * MS),
	    SCHED_ACCEPT);
	for (i = 19; i <= 34; i++)		/* cap 1 x (1 + 16) */
		expect_assign(s, 3, i, 0);
	expect_none(s);
	expect_estimate(s, 3, 1000 * MS, 1000, 1 + SCHED_QF_AUTO_MAX);
	expect_load(s, 3, 17, 0);

	/* Tasks turn slow: cap 2, but the 16 held copies stay. */
	tm = timing(0, 4000 * MS);
	assert_int_equal(sched_done_timed(s, 3, 6, &tm, 1000 * MS),
	    SCHED_ACCEPT);
	expect_none(s);
	expect_estimate(s, 3, 1000 * MS, 1000 + (4000 * MS - 1000) / 4, 2);
	expect_load(s, 3, 16, 0);
	sched_free(s);
}

/*
 * Give workers 1..n estimates (a round trip of 0, exec[i] ns a task): a
 * WQ batch 1 of tasks 1..n, task i on worker i, started at 0 and done
 * at exec[i] (ascending).  Returns the time the batch ends.
 */
static uint64_t
warm_up(struct sched *s, const uint64_t *exec, size_t n)
{
	struct sched_batch_config	 c = config(SCHED_POLICY_WQ, 0, 0, 0);
	struct sched_timing		 tm;
	size_t				 i;

	assert_int_equal(submit_at(s, 1, &c, 1, n, 0), 0);
	for (i = 0; i < n; i++)
		expect_assign(s, i + 1, i + 1, 0);
	expect_none(s);
	for (i = 0; i < n; i++)
		sched_started(s, i + 1, i + 1, 0);
	for (i = 0; i < n; i++) {
		tm = timing(exec[i], exec[i]);
		assert_int_equal(sched_done_timed(s, i + 1, i + 1, &tm,
		    exec[i]), SCHED_ACCEPT);
	}
	expect_batch_done(s, 1);
	expect_none(s);
	return (exec[n - 1]);
}

/* The next action is batch b's SCHED_BATCH_DONE with that many replicas. */
static void
expect_done_replicas(struct sched *s, uint64_t b, uint32_t replicas)
{
	struct sched_action	 a;

	assert_true(sched_next_action(s, &a));
	assert_int_equal(a.type, SCHED_BATCH_DONE);
	assert_int_equal(a.batch, b);
	assert_int_equal(a.report.replicas, replicas);
}

/*
 * The start of the speed-aware tail's tests: two one-CPU workers whose
 * estimates say exec[0] and exec[1] a task, and a closed R3Q batch of n
 * tasks (3, 4, ...) under queue_factor auto, whose first two are sent
 * one to each worker.
 */
static struct sched *
tail_start(const uint64_t exec[2], size_t n, uint64_t *t0)
{
	static const uint32_t		 ncpu[] = { 1, 1 };
	struct sched_batch_config	 c;
	struct sched			*s;

	s = new_with_workers(ncpu, nitems(ncpu));
	*t0 = warm_up(s, exec, 2);
	c = config(SCHED_POLICY_R3Q, SCHED_QF_AUTO, 0, 0);
	assert_int_equal(submit_at(s, 2, &c, 3, n, *t0), 0);
	expect_assign(s, 1, 3, 0);
	expect_assign(s, 2, 4, 0);
	return (s);
}

/*
 * The speed-aware tail of R3Q under queue_factor auto: two workers
 * equally fast (100 ms a task), three tasks, two on worker 1.  Worker
 * 2's free slot would bring task 5 back no sooner than worker 1 will,
 * neither while both hold theirs nor once worker 2 is idle: no replica,
 * and the batch ends as soon as it could.  The paper's R3Q (queue factor
 * 2) gives that slot a replica of task 5 at once, as before.
 */
static void
test_tail_equal(void **state)
{
	static const uint32_t		 ncpu[] = { 1, 1 };
	static const uint64_t		 exec[] = { 100 * MS, 100 * MS };
	struct sched_batch_config	 c;
	struct sched_timing		 tm = timing(100 * MS, 100 * MS);
	struct sched			*s;
	uint64_t			 t0;

	(void)state;
	s = tail_start(exec, 3, &t0);
	expect_assign(s, 1, 5, 0);
	expect_none(s);			/* worker 2: 300 ms, not < 300 */
	sched_started(s, 1, 3, t0 + 10 * MS);
	sched_started(s, 2, 4, t0 + 10 * MS);
	expect_none(s);
	assert_int_equal(sched_done_timed(s, 2, 4, &tm, t0 + 110 * MS),
	    SCHED_ACCEPT);
	expect_none(s);			/* idle, and still no sooner */
	assert_int_equal(sched_done_timed(s, 1, 3, &tm, t0 + 110 * MS),
	    SCHED_ACCEPT);
	expect_none(s);
	sched_started(s, 1, 5, t0 + 110 * MS);
	assert_int_equal(sched_done_timed(s, 1, 5, &tm, t0 + 210 * MS),
	    SCHED_ACCEPT);
	expect_done_replicas(s, 2, 0);
	expect_none(s);
	sched_free(s);

	/* The paper's R3Q: the free slot gets the newest task. */
	s = new_with_workers(ncpu, nitems(ncpu));
	t0 = warm_up(s, exec, nitems(exec));
	c = config(SCHED_POLICY_R3Q, 2, 0, 0);
	assert_int_equal(submit_at(s, 2, &c, 3, 3, t0), 0);
	expect_assign(s, 1, 3, 0);
	expect_assign(s, 2, 4, 0);
	expect_assign(s, 1, 5, 0);
	expect_assign(s, 2, 5, 1);
	expect_none(s);
	sched_free(s);
}

/*
 * A task on a slow worker (400 ms a task) is replicated onto a fast one
 * (100 ms) that has room, since its copy there, queued behind the fast
 * worker's own task, comes back at 200 ms instead of 400; the slow
 * worker's free slot gets nothing (it would take 800 ms).  The fast copy
 * wins and the slow one is cancelled while it runs.
 */
static void
test_tail_slow(void **state)
{
	static const uint64_t		 exec[] = { 100 * MS, 400 * MS };
	struct sched_timing		 tm = timing(100 * MS, 100 * MS);
	struct sched			*s;
	uint64_t			 t0;

	(void)state;
	s = tail_start(exec, 2, &t0);
	expect_assign(s, 1, 4, 1);
	expect_none(s);
	sched_started(s, 1, 3, t0);
	sched_started(s, 2, 4, t0);
	assert_int_equal(sched_done_timed(s, 1, 3, &tm, t0 + 100 * MS),
	    SCHED_ACCEPT);
	expect_none(s);
	sched_started(s, 1, 4, t0 + 100 * MS);
	assert_int_equal(sched_done_timed(s, 1, 4, &tm, t0 + 200 * MS),
	    SCHED_ACCEPT);
	expect_cancel(s, 2, 4, 1);
	expect_done_replicas(s, 2, 1);
	expect_none(s);
	sched_free(s);
}

/*
 * A copy that runs late is replicated all the same: two equally fast
 * workers, one task each; worker 1 is done on time, worker 2's copy is
 * due at 100 ms after its start and nothing is sent for it while it
 * could still win.  A quarter of a task past that (the deadline says
 * when), it counts as not known and goes to the idle worker 1, whose
 * copy wins.
 */
static void
test_tail_late(void **state)
{
	static const uint64_t		 exec[] = { 100 * MS, 100 * MS };
	struct sched_timing		 tm = timing(100 * MS, 100 * MS);
	struct sched			*s;
	uint64_t			 t0, late;

	(void)state;
	s = tail_start(exec, 2, &t0);
	expect_none(s);
	sched_started(s, 1, 3, t0);
	sched_started(s, 2, 4, t0);
	assert_int_equal(sched_done_timed(s, 1, 3, &tm, t0 + 100 * MS),
	    SCHED_ACCEPT);
	expect_none(s);			/* due at t0 + 100 ms: may win */
	late = t0 + 125 * MS + 1;
	assert_int_equal(sched_deadline(s), late);
	sched_tick(s, late - 1);
	expect_none(s);
	sched_tick(s, late);
	expect_assign(s, 1, 4, 1);
	expect_none(s);
	sched_started(s, 1, 4, late);
	assert_int_equal(sched_done_timed(s, 1, 4, &tm, late + 100 * MS),
	    SCHED_ACCEPT);
	expect_cancel(s, 2, 4, 1);
	expect_done_replicas(s, 2, 1);
	expect_none(s);
	sched_free(s);
}

/*
 * A lone copy held by a silent worker: one worker (10 us a task) holds the
 * one task of a closed batch and says nothing (no start: a short task's
 * result is its first word).  Its estimate then slides with the clock, so
 * the tail has no deadline for it after the one it was due at: no look
 * again and again, a slack apart (masterd's timer fired every few
 * microseconds, busy, until the result came).  The result ends the batch
 * as usual.
 */
static void
test_tail_silent(void **state)
{
	static const uint32_t		 ncpu[] = { 1 };
	static const uint64_t		 exec[] = { 10000 };
	struct sched_batch_config	 c;
	struct sched_timing		 tm = timing(10000, 10000);
	struct sched			*s;
	uint64_t			 t0, now, d;
	int				 looks;

	(void)state;
	s = new_with_workers(ncpu, nitems(ncpu));
	t0 = warm_up(s, exec, 1);
	c = config(SCHED_POLICY_R3Q, SCHED_QF_AUTO, 0, 0);
	assert_int_equal(submit_at(s, 2, &c, 2, 1, t0), 0);
	expect_assign(s, 1, 2, 0);
	expect_none(s);
	/*
	 * Due back at t0 + 10 us, late a quarter task later: one look then;
	 * after it only the periodic look for copies that stand still,
	 * half a second apart.
	 */
	now = t0;
	for (looks = 0; looks < 4; looks++) {
		d = sched_deadline(s);
		if (looks == 0)
			assert_true(d == t0 + 12501);
		else
			assert_true(d != UINT64_MAX && d >= now + 100 * MS);
		now = d;
		sched_tick(s, now);
		expect_none(s);
	}
	assert_int_equal(sched_done_timed(s, 1, 2, &tm, now), SCHED_ACCEPT);
	expect_done_replicas(s, 2, 0);
	expect_none(s);
	sched_free(s);
}

/*
 * A fast worker's queue is worked through during the round trip, not
 * after it (sched_eta_held()).  Round trips of 400 ms; worker 1 runs a
 * task in 100 ms and holds 1 + 4, worker 2 in 500 ms and holds 1 + 1.  A
 * batch of seven: tasks 3, 5, 7, 8 and 9 on worker 1, 4 and 6 on worker
 * 2, where task 6 is due back at 2,300 ms (at the worker 1,600-2,100).
 * When task 3 comes back at 1,400 ms, worker 1 holds four tasks that it
 * runs back to back from 1,200 (its clock, 200 ms behind the master's
 * hearing), so a copy sent now reaches it at 1,600, as its queue ends,
 * and is back at 1,900: sooner, so task 6 is replicated there, wins, and
 * the batch ends at 1,900 instead of 2,300.  Counting the four held
 * tasks after the round trip put that copy at 2,300, no sooner.
 */
static void
test_tail_deep_queue(void **state)
{
	static const uint32_t		 ncpu[] = { 1, 1 };
	static const uint64_t		 exec[] = { 100 * MS, 500 * MS };
	static const struct {
		uint32_t	 w;
		uint64_t	 id, sent, heard;
	} res[] = {
		{ 1, 5, 900, 1500 }, { 1, 7, 900, 1600 }, { 1, 8, 900, 1700 },
		{ 2, 4, 900, 1800 }, { 1, 9, 900, 1800 },
	};
	const uint64_t			 rtt = 400 * MS;
	struct sched_batch_config	 c;
	struct sched_timing		 tm;
	struct sched			*s;
	size_t				 i;

	(void)state;
	s = new_with_workers(ncpu, nitems(ncpu));
	/* Estimates: a round trip of 400 ms, exec[i] a task. */
	c = config(SCHED_POLICY_WQ, 0, 0, 0);
	assert_int_equal(submit_at(s, 1, &c, 1, 2, 0), 0);
	expect_assign(s, 1, 1, 0);
	expect_assign(s, 2, 2, 0);
	for (i = 0; i < 2; i++) {
		tm = timing(exec[i], exec[i]);
		assert_int_equal(sched_done_timed(s, i + 1, i + 1, &tm,
		    exec[i] + rtt), SCHED_ACCEPT);
	}
	expect_batch_done(s, 1);
	expect_none(s);
	expect_estimate(s, 1, rtt, exec[0], 1);	/* no auto batch yet */
	expect_estimate(s, 2, rtt, exec[1], 1);

	c = config(SCHED_POLICY_R3Q, SCHED_QF_AUTO, 0, 0);
	assert_int_equal(submit_at(s, 2, &c, 3, 7, 900 * MS), 0);
	expect_assign(s, 1, 3, 0);
	expect_assign(s, 2, 4, 0);
	expect_assign(s, 1, 5, 0);
	expect_assign(s, 2, 6, 0);
	expect_assign(s, 1, 7, 0);
	expect_assign(s, 1, 8, 0);
	expect_assign(s, 1, 9, 0);
	expect_none(s);			/* nobody has room */

	/* Task 3: ran 1,100-1,200 at worker 1, 100 ms there. */
	tm = timing(100 * MS, exec[0]);
	assert_int_equal(sched_done_timed(s, 1, 3, &tm, 1400 * MS),
	    SCHED_ACCEPT);
	expect_assign(s, 1, 6, 1);	/* back at 1,900, not 2,300 */
	expect_none(s);
	for (i = 0; i < nitems(res); i++) {
		/* At the worker: all but the round trip. */
		tm = timing((res[i].heard - res[i].sent) * MS - rtt,
		    exec[res[i].w - 1]);
		assert_int_equal(sched_done_timed(s, res[i].w, res[i].id,
		    &tm, res[i].heard * MS), SCHED_ACCEPT);
		expect_none(s);
	}
	tm = timing(1900 * MS - 1400 * MS - rtt, exec[0]);
	assert_int_equal(sched_done_timed(s, 1, 6, &tm, 1900 * MS),
	    SCHED_ACCEPT);
	expect_cancel(s, 2, 6, 0);
	expect_done_replicas(s, 2, 1);
	expect_none(s);
	sched_free(s);
}

/*
 * No task is lost when a worker leaves during the speed-aware tail: the
 * fast worker 1 holds task 3 and a replica of task 4 when it is lost;
 * task 3 goes back to the queue and on to the slow worker 2, task 4
 * keeps worker 2's copy, and both finish there.
 */
static void
test_tail_lost(void **state)
{
	static const uint64_t		 exec[] = { 100 * MS, 400 * MS };
	struct sched_timing		 tm = timing(400 * MS, 400 * MS);
	struct sched			*s;
	uint64_t			 t0;

	(void)state;
	s = tail_start(exec, 2, &t0);
	expect_assign(s, 1, 4, 1);
	expect_none(s);
	sched_started(s, 1, 3, t0);
	sched_started(s, 2, 4, t0);
	sched_worker_lost(s, 1, t0 + 50 * MS);
	expect_assign(s, 2, 3, 0);
	expect_none(s);
	assert_int_equal(sched_done_timed(s, 2, 4, &tm, t0 + 400 * MS),
	    SCHED_ACCEPT);
	expect_none(s);
	sched_started(s, 2, 3, t0 + 400 * MS);
	assert_int_equal(sched_done_timed(s, 2, 3, &tm, t0 + 800 * MS),
	    SCHED_ACCEPT);
	expect_done_replicas(s, 2, 1);
	expect_none(s);
	sched_free(s);
}

/*
 * Blind replicas are capped and go round (the speed-aware tail, "a worker
 * without an estimate yet gets the paper's replicas"): 300 one-CPU
 * workers, none with an estimate, and an R3Q batch of 2 tasks under
 * queue_factor auto.  Each task gets 64 copies (SCHED_BLIND_COPIES), not
 * one on every worker with room: the paper's walk gave every one of them
 * a copy of each task (600), and since a losing copy is killed before it
 * ends its worker stayed blind and took another, 97,792 replicas for a
 * 20-task generation on 10,000 workers (r3q-sim).  The next batch's
 * blind replicas start where the last ones stopped: on workers that have
 * had none yet, not on the first in join order again.
 */
#define BLIND_WORKERS	300
#define BLIND_COPIES	64	/* SCHED_BLIND_COPIES in sched.c */

/* Drain the actions: copies assigned of task id, and the last worker. */
static size_t
blind_drain(struct sched *s, uint64_t id, uint32_t *maxw, uint32_t *minw)
{
	struct sched_action	 a;
	size_t			 n = 0;

	*maxw = 0;
	*minw = UINT32_MAX;
	while (sched_next_action(s, &a)) {
		if (a.type != SCHED_ASSIGN || a.task != id)
			continue;
		n++;
		if (!a.replica)
			continue;
		if (a.wid > *maxw)
			*maxw = a.wid;
		if (a.wid < *minw)
			*minw = a.wid;
	}
	return (n);
}

static void
test_tail_blind_cap(void **state)
{
	uint32_t			 ncpu[BLIND_WORKERS], maxw, minw, maxw2;
	struct sched_batch_config	 c;
	struct sched			*s;
	struct sched_action		 a;
	size_t				 i, n3, n4;

	(void)state;
	for (i = 0; i < BLIND_WORKERS; i++)
		ncpu[i] = 1;
	s = new_with_workers(ncpu, BLIND_WORKERS);
	c = config(SCHED_POLICY_R3Q, SCHED_QF_AUTO, 0, 0);
	assert_int_equal(submit_at(s, 2, &c, 3, 2, MS), 0);
	n3 = n4 = 0;
	maxw = 0;
	while (sched_next_action(s, &a)) {
		if (a.type != SCHED_ASSIGN)
			continue;
		if (a.task == 3)
			n3++;
		else if (a.task == 4)
			n4++;
		else
			fail_msg("assigned task %llu",
			    (unsigned long long)a.task);
		if (a.replica && a.wid > maxw)
			maxw = a.wid;
	}
	assert_int_equal(n3, BLIND_COPIES);
	assert_int_equal(n4, BLIND_COPIES);
	assert_true(maxw < BLIND_WORKERS / 2);
	/* Done on the original's worker (1): the other copies go. */
	assert_int_equal(sched_done(s, 1, 3, 2 * MS), SCHED_ACCEPT);
	assert_int_equal(sched_done(s, 2, 4, 2 * MS), SCHED_ACCEPT);
	while (sched_next_action(s, &a))
		;
	/* The next batch: its replicas on workers past the first ones. */
	assert_int_equal(submit_at(s, 3, &c, 5, 1, 3 * MS), 0);
	assert_int_equal(blind_drain(s, 5, &maxw2, &minw), BLIND_COPIES);
	assert_true(minw > maxw);
	assert_true(maxw2 <= BLIND_WORKERS);
	expect_none(s);
	sched_free(s);
}

/*
 * sched_worker_estimate(): -1 for an unknown worker; the cap is that of
 * the first batch with queued tasks the worker can run, else of the last
 * batch submitted, else one per CPU.
 */
static void
test_worker_estimate(void **state)
{
	static const uint32_t		 ncpu[] = { 2 };
	struct sched_batch_config	 a = config(SCHED_POLICY_RWQ, 3, 0, 0);
	struct sched_batch_config	 b = config(SCHED_POLICY_RWQ, 4, 0, 0);
	struct sched_batch_config	 c = config(SCHED_POLICY_WQ, 0, 0, 0);
	struct sched_estimate		 e;
	struct sched			*s;

	(void)state;
	s = new_with_workers(ncpu, nitems(ncpu));
	assert_int_equal(sched_worker_estimate(s, 9, &e), -1);
	expect_estimate(s, 1, 0, 0, 2);
	assert_int_equal(submit_range(s, 1, &a, 1, 4), 0);
	expect_load(s, 1, 4, 0);
	expect_estimate(s, 1, 0, 0, 6);		/* queue empty: last batch */
	assert_int_equal(submit_range(s, 2, &b, 10, 10), 0);
	expect_load(s, 1, 8, 0);
	expect_estimate(s, 1, 0, 0, 8);		/* head of the queue */
	assert_int_equal(submit_range(s, 3, &c, 30, 1), 0);
	expect_estimate(s, 1, 0, 0, 8);
	sched_batch_abort(s, 2, 1);
	expect_estimate(s, 1, 0, 0, 2);		/* batch 3 now */
	sched_batch_abort(s, 1, 1);
	sched_batch_abort(s, 3, 1);
	expect_estimate(s, 1, 0, 0, 2);
	sched_free(s);
}

/* A fixed-seed xorshift64 for the randomised runs. */
static uint64_t
xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return (*x);
}

/* A copy the simulated workers hold. */
struct simcopy {
	uint32_t	 wid;
	uint64_t	 task;
	int		 started;
	int		 half;
};

/*
 * The worker side of a randomised run: the copies the workers hold, as
 * told by the actions, and per task how often its result was accepted.
 */
struct sim {
	struct sched	*s;
	uint64_t	 batch;
	size_t		 ntasks;
	unsigned char	*accepted;
	struct simcopy	*copies;
	size_t		 ncopies;
	size_t		 maxcopies;
	struct simcopy	*stale;		/* held by workers since lost */
	size_t		 nstale;
	size_t		 maxstale;
	unsigned	 batchdone;
	struct sched_batch_report report;	/* of its BATCH_DONE */
	uint64_t	 now;			/* of the last event */
	unsigned	 nlost, njoined, nlate;	/* churn coverage */
	unsigned	 nsuspect, ncooldown, nhalf;
	int		 alive[256];	/* ncpu by wid, 0 if gone */
};

static void
sim_push(struct simcopy **v, size_t *n, size_t *max, struct simcopy c)
{
	if (*n == *max) {
		*max = *max > 0 ? *max * 2 : 64;
		*v = realloc(*v, *max * sizeof(**v));
		assert_non_null(*v);
	}
	(*v)[(*n)++] = c;
}

static size_t
sim_find(const struct sim *m, uint32_t wid, uint64_t task)
{
	size_t	 i;

	for (i = 0; i < m->ncopies; i++)
		if (m->copies[i].wid == wid && m->copies[i].task == task)
			return (i);
	return (SIZE_MAX);
}

static void
sim_remove(struct sim *m, size_t i)
{
	m->copies[i] = m->copies[--m->ncopies];
}

/* Apply every pending action to the simulated workers, checking each. */
static void
sim_drain(struct sim *m)
{
	struct sched_action	 a;
	struct simcopy		 c;
	size_t			 i;

	while (sched_next_action(m->s, &a)) {
		switch (a.type) {
		case SCHED_ASSIGN:
			assert_true(a.wid < 256 && m->alive[a.wid] > 0);
			assert_int_equal(a.batch, m->batch);
			assert_true(a.task < m->ntasks);
			assert_int_equal(m->accepted[a.task], 0);
			assert_true(sim_find(m, a.wid, a.task) == SIZE_MAX);
			c.wid = a.wid;
			c.task = a.task;
			c.started = 0;
			c.half = 0;
			sim_push(&m->copies, &m->ncopies, &m->maxcopies, c);
			break;
		case SCHED_CANCEL:
			i = sim_find(m, a.wid, a.task);
			assert_true(i != SIZE_MAX);
			assert_int_equal(a.running, m->copies[i].started);
			sim_remove(m, i);
			break;
		case SCHED_BATCH_DONE:
			assert_int_equal(a.batch, m->batch);
			m->batchdone++;
			m->report = a.report;
			break;
		case SCHED_SUSPECT:
			assert_true(a.wid < 256 && m->alive[a.wid] > 0);
			assert_true(a.by != a.wid);
			assert_true(a.why != SCHED_WHY_STILL ||
			    sim_find(m, a.wid, a.task) != SIZE_MAX);
			m->nsuspect++;
			break;
		case SCHED_COOLDOWN:
			assert_true(a.wid < 256 && m->alive[a.wid] > 0);
			assert_true(a.until > m->now);
			m->ncooldown++;
			break;
		default:
			fail_msg("unexpected action type %d", (int)a.type);
		}
	}
}

/* Deliver a result and check the verdict against the books. */
static void
sim_result(struct sim *m, uint32_t wid, uint64_t task, uint64_t now)
{
	enum sched_verdict	 v;

	m->now = now;
	v = sched_done(m->s, wid, task, now);
	if (m->accepted[task])
		assert_true(v == SCHED_DUPLICATE || v == SCHED_UNKNOWN ||
		    v == SCHED_STALE);
	else {
		assert_int_equal(v, SCHED_ACCEPT);
		m->accepted[task] = 1;
	}
}

/*
 * No worker holds more copies than the cap of the batch's policy, and
 * while tasks wait in the queue none that can take one holds fewer: the
 * core never leaves a worker short while it has work (RWQ step 3).
 */
static void
sim_check_caps(const struct sim *m, unsigned factor)
{
	struct sched_fault_info	 fi;
	struct sched_stats	 st;
	uint32_t		 wid, held, running, cap;

	sched_get_stats(m->s, &st);
	for (wid = 0; wid < 256; wid++) {
		if (m->alive[wid] == 0)
			continue;
		assert_int_equal(sched_worker_load(m->s, wid, &held, &running),
		    0);
		cap = factor * (uint32_t)m->alive[wid];
		assert_true(held + running <= cap);
		assert_int_equal(sched_worker_fault(m->s, wid, &fi), 0);
		if (st.queued > 0 && fi.cooldown_until == 0)
			assert_int_equal(held + running, cap);
	}
}

static void
sim_init(struct sim *m, size_t ntasks)
{
	memset(m, 0, sizeof(*m));
	assert_non_null(m->s = sched_new());
	m->ntasks = ntasks;
	m->accepted = calloc(ntasks, 1);
	assert_non_null(m->accepted);
	m->batch = 42;
}

/*
 * Everything was accepted exactly once and the books are empty; the
 * batch's report, the only batch, agrees with the global stats.
 */
static void
sim_finish(struct sim *m)
{
	struct sched_stats	 st;
	size_t			 i;

	assert_int_equal(m->batchdone, 1);
	sched_get_stats(m->s, &st);
	assert_int_equal(m->report.t_submit, 0);
	assert_int_equal(m->report.t_done, m->now);
	assert_true(m->report.t_empty <= m->report.t_done);
	assert_true(m->report.t_sync <= m->report.t_done);
	assert_int_equal(m->report.replicas, st.replicas);
	assert_int_equal(m->report.cancelled_held, st.cancelled_held);
	assert_int_equal(m->report.cancelled_running, st.cancelled_running);
	assert_int_equal(m->report.failed, 0);
	for (i = 0; i < m->ntasks; i++)
		assert_int_equal(m->accepted[i], 1);
	assert_int_equal(st.done, m->ntasks);
	assert_int_equal(st.failed, 0);
	assert_int_equal(st.queued + st.held + st.running, 0);
	assert_int_equal(m->ncopies, 0);
	for (i = 0; i < m->nstale; i++)
		assert_int_equal(sched_done(m->s, m->stale[i].wid,
		    m->stale[i].task, 0), SCHED_UNKNOWN);
	sched_free(m->s);
	free(m->accepted);
	free(m->copies);
	free(m->stale);
}

/* 100,000 WQ tasks, 8 workers, results in random order. */
static void
test_wq_random_100k(void **state)
{
	struct sched_batch_config	 c = config(SCHED_POLICY_WQ, 0, 0, 0);
	struct sim			 m;
	uint64_t			 rng = 0x9e3779b97f4a7c15ULL, now = 0;
	uint64_t			 task;
	uint32_t			 wid;
	size_t				 i;

	(void)state;
	sim_init(&m, 100000);
	for (wid = 1; wid <= 8; wid++) {
		m.alive[wid] = 1 + (int)(wid % 3);
		assert_int_equal(sched_worker_join(m.s, wid,
		    (uint32_t)m.alive[wid], ~0U, now), 0);
	}
	assert_int_equal(submit_range(m.s, m.batch, &c, 0, m.ntasks), 0);
	sim_drain(&m);
	while (m.ncopies > 0) {
		i = xorshift(&rng) % m.ncopies;
		wid = m.copies[i].wid;
		task = m.copies[i].task;
		sim_remove(&m, i);
		sim_result(&m, wid, task, ++now);
		if (xorshift(&rng) % 1000 == 0)
			sim_result(&m, wid, task, now);	/* a duplicate */
		sim_drain(&m);
		if (now % 4096 == 0)
			sim_check_caps(&m, 1);
	}
	sim_finish(&m);
}

/*
 * A randomised run with churn: results in random order, copies started at
 * random, workers lost and joining, and lost workers' results arriving
 * late.  No task may be lost or counted twice.
 */
static void
churn(enum sched_policy policy, size_t ntasks, uint64_t seed)
{
	struct sched_batch_config	 c = config(policy, 0, 0, 0);
	struct sched_fault_config	 f;
	struct sim			 m;
	struct simcopy			 sc;
	struct sched_stats		 st;
	uint64_t			 rng = seed, now = 0, r, steps;
	uint32_t			 wid, nextwid = 1, nalive = 0;
	size_t				 i;
	unsigned			 factor;

	factor = policy == SCHED_POLICY_RWQ || policy == SCHED_POLICY_R3Q ? 2 : 1;
	sim_init(&m, ntasks);
	/*
	 * Suspicions at every turn (a copy that stood still 20 steps while
	 * another was done), and cool-downs of 200 steps.
	 */
	memset(&f, 0, sizeof(f));
	f.grace_ns = 20;
	f.suspect_limit = 3;
	f.suspect_window_ns = 1000;
	f.cooldown_ns = 200;
	sched_set_fault(m.s, &f);
	c.max_kills = 1000;
	for (; nextwid <= 6; nextwid++) {
		m.alive[nextwid] = 1 + (int)(xorshift(&rng) % 3);
		assert_int_equal(sched_worker_join(m.s, nextwid,
		    (uint32_t)m.alive[nextwid], ~0U, now), 0);
		nalive++;
	}
	assert_int_equal(submit_range(m.s, m.batch, &c, 0, m.ntasks), 0);
	sim_drain(&m);

	for (steps = 0; m.batchdone == 0; steps++) {
		assert_true(steps < 50 * (uint64_t)ntasks);
		/* With a live worker, unfinished work is always out. */
		assert_true(m.ncopies > 0);
		now++;
		r = xorshift(&rng) % 1000;
		if (r < 3 && nalive > 1) {
			/* Lose a random live worker. */
			do
				wid = 1 + (uint32_t)(xorshift(&rng) %
				    (nextwid - 1));
			while (m.alive[wid] == 0);
			for (i = 0; i < m.ncopies;) {
				if (m.copies[i].wid != wid) {
					i++;
					continue;
				}
				sim_push(&m.stale, &m.nstale, &m.maxstale,
				    m.copies[i]);
				sim_remove(&m, i);
			}
			m.alive[wid] = 0;
			nalive--;
			m.nlost++;
			sched_worker_lost(m.s, wid, now);
		} else if (r < 6 && nextwid < 256) {
			/* A new worker joins. */
			m.alive[nextwid] = 1 + (int)(xorshift(&rng) % 3);
			assert_int_equal(sched_worker_join(m.s, nextwid,
			    (uint32_t)m.alive[nextwid], ~0U, now), 0);
			nextwid++;
			nalive++;
			m.njoined++;
		} else if (r < 10 && m.nstale > 0) {
			/* A lost worker's result arrives late. */
			i = xorshift(&rng) % m.nstale;
			sc = m.stale[i];
			m.stale[i] = m.stale[--m.nstale];
			sim_result(&m, sc.wid, sc.task, now);
			m.nlate++;
		} else {
			i = xorshift(&rng) % m.ncopies;
			if (!m.copies[i].started && (r & 1)) {
				m.copies[i].started = 1;
				sched_started(m.s, m.copies[i].wid,
				    m.copies[i].task, now);
			} else if (m.copies[i].started && !m.copies[i].half &&
			    (r & 2)) {
				m.copies[i].half = 1;
				m.nhalf++;
				sched_progress(m.s, m.copies[i].wid,
				    m.copies[i].task, now);
			} else {
				sc = m.copies[i];
				sim_remove(&m, i);
				sim_result(&m, sc.wid, sc.task, now);
			}
		}
		if (now >= sched_deadline(m.s))
			sched_tick(m.s, now);
		sim_drain(&m);
		sim_check_caps(&m, factor);
	}
	sched_get_stats(m.s, &st);
	print_message("%s: %llu replicas (%llu for suspects), %llu+%llu "
	    "cancelled, %u suspicions, %u cool-downs\n",
	    sched_policy_name(policy), (unsigned long long)st.replicas,
	    (unsigned long long)st.suspect_replicas,
	    (unsigned long long)st.cancelled_held,
	    (unsigned long long)st.cancelled_running, m.nsuspect,
	    m.ncooldown);
	/*
	 * RR and R3Q fill every free slot with replicas of the tail, so a
	 * suspect's task rarely finds room of its own there.
	 */
	if (policy == SCHED_POLICY_RR || policy == SCHED_POLICY_R3Q)
		assert_true(st.replicas > st.suspect_replicas &&
		    st.cancelled_held + st.cancelled_running > 0);
	else
		assert_true(st.replicas == st.suspect_replicas &&
		    st.replicas > 0);
	assert_true(m.nlost > 0 && m.njoined > 0 && m.nlate > 0);
	assert_true(m.nhalf > 0 && m.nsuspect > 0 && m.ncooldown > 0);
	assert_int_equal(st.suspects, m.nsuspect);
	sim_finish(&m);
}

static void
test_r3q_random_churn(void **state)
{
	(void)state;
	churn(SCHED_POLICY_R3Q, 20000, 0x2545f4914f6cdd1dULL);
}

static void
test_rr_random_churn(void **state)
{
	(void)state;
	churn(SCHED_POLICY_RR, 20000, 0x5851f42d4c957f2dULL);
}

static void
test_rwq_random_churn(void **state)
{
	(void)state;
	churn(SCHED_POLICY_RWQ, 5000, 0x14057b7ef767814fULL);
}


/*
 * Relative suspect detection in virtual time (doc/algorithms.md 3.2).
 * A time-stepped run, 1 ms a step: one-CPU workers under WQ execute tasks
 * of TASK_MS of work at a speed that may change at a given moment; a
 * worker reports the start, the half-way point and the end of each task
 * at once.  A speed of 0 is a hung worker.
 */
#define TASK_MS		1000
#define MS		1000000ULL

struct vworker {
	double		 speed, speed2;	/* before and after change_ms */
	uint64_t	 change_ms;
	uint64_t	 nostart_ms;	/* starts nothing from then on */
	uint64_t	 queue[8];	/* held copies, oldest first */
	size_t		 nq;
	uint64_t	 cur;		/* running task, if busy */
	int		 busy;
	double		 work;		/* done of cur, ms */
	int		 half;
	uint64_t	 start_ms;	/* of cur */
	unsigned	 suspects, cooldowns, done, slow;
};

struct vrun {
	struct sched	*s;
	struct vworker	 w[8];
	size_t		 nw;
	uint64_t	 ms;
	int		 batchdone;
	int		 timed;		/* results carry their timing */
	unsigned	 failed;
	unsigned	 replicas_to[8];	/* ASSIGN replica per worker */
	uint64_t	 first_suspect_ms[8];
};

static void
vrun_drain(struct vrun *v)
{
	struct sched_action	 a;
	struct vworker		*w;
	size_t			 i;

	while (sched_next_action(v->s, &a)) {
		if (a.type == SCHED_BATCH_DONE) {
			v->batchdone = 1;
			continue;
		}
		if (a.type == SCHED_TASK_FAILED) {
			v->failed++;
			continue;
		}
		assert_true(a.wid >= 1 && a.wid <= v->nw);
		w = &v->w[a.wid - 1];
		switch (a.type) {
		case SCHED_ASSIGN:
			assert_true(w->nq < nitems(w->queue));
			w->queue[w->nq++] = a.task;
			if (a.replica)
				v->replicas_to[a.wid - 1]++;
			break;
		case SCHED_CANCEL:
			if (w->busy && w->cur == a.task) {
				assert_int_equal(a.running, 1);
				w->busy = 0;
				break;
			}
			for (i = 0; i < w->nq && w->queue[i] != a.task; i++)
				;
			assert_true(i < w->nq);
			memmove(&w->queue[i], &w->queue[i + 1],
			    (w->nq - i - 1) * sizeof(w->queue[0]));
			w->nq--;
			break;
		case SCHED_SUSPECT:
			if (w->suspects++ == 0)
				v->first_suspect_ms[a.wid - 1] = v->ms;
			if (a.why == SCHED_WHY_SLOW)
				w->slow++;
			break;
		case SCHED_COOLDOWN:
			w->cooldowns++;
			break;
		default:
			fail_msg("unexpected action %d", (int)a.type);
		}
	}
}

/* Start the next held task of every idle worker that is not hung. */
static void
vrun_start(struct vrun *v)
{
	struct vworker	*w;
	size_t		 i;

	for (i = 0; i < v->nw; i++) {
		w = &v->w[i];
		if (w->busy || w->nq == 0)
			continue;
		if ((v->ms < w->change_ms ? w->speed : w->speed2) == 0 ||
		    v->ms >= w->nostart_ms)
			continue;
		w->cur = w->queue[0];
		memmove(&w->queue[0], &w->queue[1],
		    (--w->nq) * sizeof(w->queue[0]));
		w->busy = 1;
		w->work = 0;
		w->half = 0;
		w->start_ms = v->ms;
		sched_started(v->s, (uint32_t)i + 1, w->cur, v->ms * MS);
		vrun_drain(v);
	}
}

/* One millisecond of work everywhere. */
static void
vrun_step(struct vrun *v)
{
	struct vworker	*w;
	size_t		 i;

	v->ms++;
	for (i = 0; i < v->nw; i++) {
		w = &v->w[i];
		if (!w->busy)
			continue;
		w->work += v->ms < w->change_ms ? w->speed : w->speed2;
		if (!w->half && w->work >= TASK_MS / 2) {
			w->half = 1;
			sched_progress(v->s, (uint32_t)i + 1, w->cur,
			    v->ms * MS);
			vrun_drain(v);
		}
		if (w->busy && w->work >= TASK_MS) {
			w->busy = 0;
			w->done++;
			if (v->timed) {
				struct sched_timing	tm;

				tm.exec_ns = (v->ms - w->start_ms) * MS;
				tm.at_worker_ns = tm.exec_ns;
				(void)sched_done_timed(v->s, (uint32_t)i + 1,
				    w->cur, &tm, v->ms * MS);
			} else
				(void)sched_done(v->s, (uint32_t)i + 1,
				    w->cur, v->ms * MS);
			vrun_drain(v);
		}
	}
	if (v->ms * MS >= sched_deadline(v->s)) {
		sched_tick(v->s, v->ms * MS);
		vrun_drain(v);
	}
	vrun_start(v);
}

/* nw workers at the given speeds; ntasks tasks of one WQ batch. */
static void
vrun_init(struct vrun *v, const double *speed, size_t nw, size_t ntasks,
    const struct sched_fault_config *f)
{
	struct sched_batch_config	 c = config(SCHED_POLICY_WQ, 0, 0, 0);
	size_t				 i;

	memset(v, 0, sizeof(*v));
	assert_non_null(v->s = sched_new());
	if (f != NULL)
		sched_set_fault(v->s, f);
	v->nw = nw;
	for (i = 0; i < nw; i++) {
		v->w[i].speed = v->w[i].speed2 = speed[i];
		v->w[i].change_ms = UINT64_MAX;
		v->w[i].nostart_ms = UINT64_MAX;
		assert_int_equal(sched_worker_join(v->s, (uint32_t)i + 1, 1,
		    ~0U, 0), 0);
	}
	assert_int_equal(submit_range(v->s, 1, &c, 0, ntasks), 0);
	vrun_drain(v);
	vrun_start(v);
}

/* Run until the batch is done, or limit_ms. */
static void
vrun_until_done(struct vrun *v, uint64_t limit_ms)
{
	while (!v->batchdone && v->ms < limit_ms)
		vrun_step(v);
}

/* Equal workers: nobody is ever suspect. */
static void
test_suspect_none_equal(void **state)
{
	const double	 speed[] = { 1, 1, 1, 1 };
	struct vrun	 v;
	size_t		 i;

	(void)state;
	vrun_init(&v, speed, 4, 40, NULL);
	vrun_until_done(&v, 100000);
	assert_true(v.batchdone);
	for (i = 0; i < 4; i++)
		assert_int_equal(v.w[i].suspects, 0);
	sched_free(v.s);
}

/* Every worker slows down 3x at once: still nobody is suspect. */
static void
test_suspect_all_slow_down(void **state)
{
	const double	 speed[] = { 1, 1, 1, 1 };
	struct vrun	 v;
	size_t		 i;

	(void)state;
	vrun_init(&v, speed, 4, 60, NULL);
	for (i = 0; i < 4; i++) {
		v.w[i].change_ms = 3300;
		v.w[i].speed2 = 1.0 / 3;
	}
	vrun_until_done(&v, 200000);
	assert_true(v.batchdone);
	for (i = 0; i < 4; i++)
		assert_int_equal(v.w[i].suspects, 0);
	sched_free(v.s);
}

/*
 * One worker 3x slower than the others: it is suspect, its task is also
 * given to another worker, and nobody else is suspect.
 */
static void
test_suspect_one_slow(void **state)
{
	const double		 speed[] = { 1, 1, 1, 1.0 / 3 };
	struct sched_fault_info	 fi;
	struct sched_stats	 st;
	struct vrun		 v;
	size_t			 i;

	(void)state;
	vrun_init(&v, speed, 4, 30, NULL);
	vrun_until_done(&v, 100000);
	assert_true(v.batchdone);
	assert_true(v.w[3].suspects > 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(v.w[i].suspects, 0);
	sched_get_stats(v.s, &st);
	assert_true(st.suspects == v.w[3].suspects);
	assert_true(st.suspect_replicas > 0);
	assert_int_equal(v.replicas_to[3], 0);
	assert_int_equal(sched_worker_fault(v.s, 4, &fi), 0);
	assert_int_equal(fi.suspects, v.w[3].suspects);
	sched_free(v.s);
}

/*
 * A worker hangs (speed 0) for good: it is suspect within a task time
 * plus the grace period, its task runs elsewhere and the batch ends
 * without it.
 */
static void
test_suspect_hung(void **state)
{
	const double		 speed[] = { 1, 1, 1 };
	struct sched_fault_info	 fi;
	struct vrun		 v;

	(void)state;
	vrun_init(&v, speed, 3, 12, NULL);
	v.w[1].change_ms = 1600;	/* hangs in the second half */
	v.w[1].speed2 = 0;
	vrun_until_done(&v, 100000);
	assert_true(v.batchdone);
	assert_int_equal(v.w[1].suspects, 1);
	/* It last moved at 1500 ms (half-way of its second task). */
	assert_true(v.first_suspect_ms[1] >= 1500 + 1000);
	assert_true(v.first_suspect_ms[1] <= 1500 + 2 * TASK_MS + 1000);
	assert_int_equal(sched_worker_fault(v.s, 2, &fi), 0);
	assert_int_equal(fi.suspects, 1);
	assert_int_equal(v.w[0].suspects + v.w[2].suspects, 0);
	sched_free(v.s);
}

/*
 * A worker stops between two tasks (its link goes silent, say): the task
 * it was sent never starts.  It runs nothing, so no running copy of it
 * can stand still, but it gave no sign of life while the others did
 * whole tasks: suspect all the same, and its held task runs elsewhere.
 */
static void
test_suspect_idle_stop(void **state)
{
	const double		 speed[] = { 1, 1, 1 };
	struct sched_stats	 st;
	struct vrun		 v;

	(void)state;
	vrun_init(&v, speed, 3, 12, NULL);
	v.w[2].nostart_ms = 500;	/* finishes its first task, then stops */
	vrun_until_done(&v, 100000);
	assert_true(v.batchdone);
	assert_int_equal(v.w[2].suspects, 1);
	assert_int_equal(v.w[2].done, 1);
	/* Its last sign of life was its result at 1000 ms. */
	assert_true(v.first_suspect_ms[2] >= 1000 + 1000);
	assert_true(v.first_suspect_ms[2] <= 1000 + 2 * TASK_MS + 1000);
	assert_int_equal(v.w[0].suspects + v.w[1].suspects, 0);
	sched_get_stats(v.s, &st);
	assert_true(st.suspect_replicas >= 1);
	sched_free(v.s);
}

/*
 * A worker that joins, takes its tasks and never starts them, while the
 * job is shorter than the grace period: at the other worker's results its
 * copies are too young to judge, and no result follows.  The periodic
 * look at sched_deadline() catches it once the grace period is over, and
 * the batch ends on the healthy worker.
 */
static void
test_suspect_silent_holder(void **state)
{
	const double			 speed[] = { 1, 0 };	/* w2 never
								   starts */
	struct sched_fault_config	 f;
	struct vrun			 v;

	(void)state;
	memset(&f, 0, sizeof(f));
	f.grace_ns = 5000 * MS;
	vrun_init(&v, speed, 2, 3, &f);
	vrun_until_done(&v, 100000);
	assert_true(v.batchdone);
	assert_int_equal(v.w[1].suspects, 1);
	assert_int_equal(v.w[1].done, 0);
	/* Held since 0 ms, judged once the grace period is over. */
	assert_true(v.first_suspect_ms[1] >= 5000);
	assert_true(v.first_suspect_ms[1] <= 5000 + 2500 + 1);
	assert_int_equal(v.w[0].suspects, 0);
	assert_int_equal(v.w[0].done, 3);
	sched_free(v.s);
}

/*
 * The same with a running copy: the worker starts its task and hangs at
 * once, inside the grace period of every result that follows.
 */
static void
test_suspect_silent_runner(void **state)
{
	const double			 speed[] = { 1, 1 };
	struct sched_fault_config	 f;
	struct vrun			 v;

	(void)state;
	memset(&f, 0, sizeof(f));
	f.grace_ns = 3000 * MS;
	vrun_init(&v, speed, 2, 3, &f);
	v.w[1].change_ms = 1;		/* hangs after its start */
	v.w[1].speed2 = 0;
	vrun_until_done(&v, 100000);
	assert_true(v.batchdone);
	assert_int_equal(v.w[1].suspects, 1);
	assert_true(v.first_suspect_ms[1] >= 3000);
	assert_true(v.first_suspect_ms[1] <= 3000 + 1500 + 1);
	assert_int_equal(v.w[0].suspects, 0);
	sched_free(v.s);
}

/* A copy that stood still for less than the grace period is not suspect. */
static void
test_suspect_grace(void **state)
{
	const double			 speed[] = { 1, 1.0 / 3 };
	struct sched_fault_config	 f;
	struct vrun			 v;

	(void)state;
	memset(&f, 0, sizeof(f));
	f.grace_ns = 60000 * MS;	/* longer than the run */
	vrun_init(&v, speed, 2, 10, &f);
	vrun_until_done(&v, 100000);
	assert_true(v.batchdone);
	assert_int_equal(v.w[1].suspects, 0);
	sched_free(v.s);
}

/*
 * Suspect more than suspect_limit times within the window: no new tasks
 * for the cool-down, then work again.  The worker is 4x slower, so it is
 * suspected on every task it starts.
 */
static void
test_suspect_cooldown(void **state)
{
	const double			 speed[] = { 1, 1, 0.25 };
	struct sched_fault_config	 f;
	struct sched_fault_info		 fi;
	struct sched_estimate		 est;
	struct vrun			 v;
	unsigned			 done_at_cool;
	uint64_t			 until;

	(void)state;
	memset(&f, 0, sizeof(f));
	f.grace_ns = 100 * MS;
	f.suspect_limit = 1;
	f.suspect_window_ns = 60000 * MS;
	f.cooldown_ns = 20000 * MS;
	vrun_init(&v, speed, 3, 200, &f);
	while (v.w[2].cooldowns == 0 && v.ms < 100000)
		vrun_step(&v);
	assert_int_equal(v.w[2].cooldowns, 1);
	assert_int_equal(v.w[2].suspects, 2);
	assert_int_equal(sched_worker_fault(v.s, 3, &fi), 0);
	until = fi.cooldown_until;
	assert_int_equal(until, v.ms * MS + f.cooldown_ns);
	/* The core asks to be woken by the cool-down's end at the latest. */
	assert_true(sched_deadline(v.s) <= until);
	assert_int_equal(sched_worker_estimate(v.s, 3, &est), 0);
	assert_int_equal(est.cap, 0);
	/* Whatever it holds it may finish, but it gets nothing new. */
	done_at_cool = v.w[2].done;
	while (v.ms * MS < until - MS)
		vrun_step(&v);
	assert_true(v.w[2].done <= done_at_cool + 1);
	assert_int_equal(v.w[2].nq, 0);
	assert_false(v.w[2].busy);
	/* The cool-down ends on time and work flows to it again. */
	vrun_step(&v);
	vrun_step(&v);
	assert_int_equal(sched_worker_fault(v.s, 3, &fi), 0);
	assert_int_equal(fi.cooldown_until, 0);
	assert_true(v.w[2].busy || v.w[2].nq > 0);
	vrun_until_done(&v, 1000000);
	assert_true(v.batchdone);
	sched_free(v.s);
}

/* Suspect detection for the own-pace tests: limit suspicions, 20 s off. */
static struct sched_fault_config
pace_fault(uint32_t limit)
{
	struct sched_fault_config	 f;

	memset(&f, 0, sizeof(f));
	f.grace_ns = 100 * MS;
	f.suspect_limit = limit;
	f.suspect_window_ns = 600000 * MS;
	f.cooldown_ns = 20000 * MS;
	return (f);
}

/*
 * The same 4x slower worker, its results timed: once the core knows its
 * own pace, its running tasks that stand still no longer than a whole
 * task of its own are "slow, not stuck" (SCHED_WHY_SLOW): suspected, so
 * replicated when someone is idle, but not counted toward suspect_limit,
 * and it never cools down; it does its share of the tasks to the end.
 * Before its first result nothing is known of it: the two suspicions of
 * its first task count (hence a limit of 2 here).
 */
static void
test_suspect_slow_steady(void **state)
{
	const double			 speed[] = { 1, 1, 0.25 };
	struct sched_fault_config	 f;
	struct sched_fault_info		 fi;
	struct sched_stats		 st;
	struct vrun			 v;

	(void)state;
	f = pace_fault(2);
	vrun_init(&v, speed, 3, 200, &f);
	v.timed = 1;
	vrun_until_done(&v, 1000000);
	assert_true(v.batchdone);
	assert_int_equal(v.w[2].cooldowns, 0);
	/* Suspect on nearly every task, and all but its first are slow. */
	assert_true(v.w[2].suspects >= 10);
	assert_int_equal(v.w[2].slow, v.w[2].suspects - 2);
	assert_int_equal(v.w[0].slow + v.w[1].slow, 0);
	/* About its share: 0.25 / 2.25 of 200 tasks. */
	assert_true(v.w[2].done >= 15);
	assert_int_equal(sched_worker_fault(v.s, 3, &fi), 0);
	assert_int_equal(fi.recent, 2);
	sched_get_stats(v.s, &st);
	assert_int_equal(st.slow_suspects, v.w[2].slow);
	assert_int_equal(st.cooling_workers, 0);
	sched_free(v.s);
}

/*
 * A worker that turns 5x slower than its own pace is stuck by that
 * measure: its suspicions count, and it cools down as before.
 */
static void
test_suspect_slower_than_itself(void **state)
{
	const double			 speed[] = { 1, 1, 1 };
	struct sched_fault_config	 f;
	struct vrun			 v;

	(void)state;
	f = pace_fault(1);
	vrun_init(&v, speed, 3, 200, &f);
	v.timed = 1;
	v.w[2].change_ms = 10000;
	v.w[2].speed2 = 0.2;
	while (v.w[2].cooldowns == 0 && !v.batchdone && v.ms < 100000)
		vrun_step(&v);
	assert_int_equal(v.w[2].cooldowns, 1);
	assert_true(v.first_suspect_ms[2] >= 10000);
	assert_true(v.w[2].suspects > v.w[2].slow);
	vrun_until_done(&v, 1000000);
	assert_true(v.batchdone);
	sched_free(v.s);
}

/*
 * A task whose copies keep dying with their workers gives up after
 * max_kills, with the reason; a held copy lost does not count.
 */
static void
test_max_kills(void **state)
{
	struct sched_batch_config	 c = config(SCHED_POLICY_WQ, 0, 0, 0);
	struct sched_action		 a;
	struct sched			*s;
	uint32_t			 wid;

	(void)state;
	c.max_kills = 2;
	assert_non_null(s = sched_new());
	assert_int_equal(submit_range(s, 7, &c, 100, 1), 0);
	/* Lost while held: no kill. */
	assert_int_equal(sched_worker_join(s, 1, 1, ~0U, 0), 0);
	expect_assign(s, 1, 100, 0);
	sched_worker_lost(s, 1, 1);
	expect_none(s);
	for (wid = 2; wid <= 3; wid++) {
		assert_int_equal(sched_worker_join(s, wid, 1, ~0U, wid), 0);
		expect_assign(s, wid, 100, 0);
		sched_started(s, wid, 100, wid);
		sched_worker_lost(s, wid, wid);
	}
	assert_int_equal(sched_next_action(s, &a), 1);
	assert_int_equal(a.type, SCHED_TASK_FAILED);
	assert_int_equal(a.task, 100);
	assert_int_equal(a.reason, SCHED_FAIL_KILLS);
	expect_batch_done(s, 7);
	expect_none(s);
	sched_free(s);
}

/* One task of sched_batch_add(). */
static struct sched_task
task(uint64_t id, int32_t priority, uint32_t copies)
{
	struct sched_task	 t;

	t.id = id;
	t.priority = priority;
	t.copies = copies;
	return (t);
}

/* Lower priorities run first within a batch; equal ones in add order. */
static void
test_priority_one_batch(void **state)
{
	static const uint32_t		 ncpu[] = { 1 };
	struct sched_batch_config	 c = config(SCHED_POLICY_WQ, 0, 0, 0);
	const struct sched_task		 v[] = {
		task(1, 5, 0), task(2, 1, 0), task(3, 3, 0), task(4, 1, 0),
		task(5, 0, 0), task(6, -2, 0)
	};
	static const uint64_t		 order[] = { 6, 5, 2, 4, 3, 1 };
	struct sched			*s;
	size_t				 i;

	(void)state;
	s = new_with_workers(ncpu, nitems(ncpu));
	assert_int_equal(sched_batch_open(s, 1, &c, 0), 0);
	assert_int_equal(sched_batch_add(s, 1, v, nitems(v), 0), 0);
	assert_int_equal(sched_batch_close(s, 1, 0), 0);
	for (i = 0; i < nitems(order); i++) {
		expect_assign(s, 1, order[i], 0);
		expect_none(s);
		assert_int_equal(sched_done(s, 1, order[i], i + 1),
		    SCHED_ACCEPT);
	}
	expect_batch_done(s, 1);
	expect_none(s);
	sched_free(s);
}

/*
 * Priorities hold across batches: a later batch's urgent task overtakes
 * an earlier batch's; equal priorities go in global add order, however
 * the adds to two open batches interleave.
 */
static void
test_priority_two_batches(void **state)
{
	struct sched_batch_config	 c = config(SCHED_POLICY_WQ, 0, 0, 0);
	const struct sched_task		 a1[] = { task(1, 5, 0), task(2, 0, 0) };
	const struct sched_task		 b1[] = { task(3, 0, 0) };
	const struct sched_task		 a2[] = { task(4, 0, 0) };
	const struct sched_task		 b2[] = { task(5, -1, 0) };
	static const uint64_t		 order[] = { 5, 2, 3, 4, 1 };
	struct sched			*s;
	size_t				 i;

	(void)state;
	assert_non_null(s = sched_new());
	assert_int_equal(sched_batch_open(s, 1, &c, 0), 0);
	assert_int_equal(sched_batch_open(s, 2, &c, 0), 0);
	assert_int_equal(sched_batch_add(s, 1, a1, nitems(a1), 0), 0);
	assert_int_equal(sched_batch_add(s, 2, b1, nitems(b1), 0), 0);
	assert_int_equal(sched_batch_add(s, 1, a2, nitems(a2), 0), 0);
	assert_int_equal(sched_batch_add(s, 2, b2, nitems(b2), 0), 0);
	assert_int_equal(sched_batch_close(s, 1, 0), 0);
	assert_int_equal(sched_batch_close(s, 2, 0), 0);
	expect_none(s);
	assert_int_equal(sched_worker_join(s, 1, 1, ~0U, 0), 0);
	for (i = 0; i < nitems(order); i++) {
		expect_assign(s, 1, order[i], 0);
		expect_none(s);
		assert_int_equal(sched_done(s, 1, order[i], i + 1),
		    SCHED_ACCEPT);
		if (order[i] == 3)
			expect_batch_done(s, 2);
	}
	expect_batch_done(s, 1);
	expect_none(s);
	sched_free(s);
}

/*
 * Ties keep add order across sched_submit() batches too: the second
 * batch's tasks wait behind the first's, as before priorities.
 */
static void
test_priority_ties_fifo(void **state)
{
	static const uint32_t		 ncpu[] = { 1 };
	struct sched_batch_config	 c = config(SCHED_POLICY_WQ, 0, 0, 0);
	struct sched			*s;
	uint64_t			 id;

	(void)state;
	s = new_with_workers(ncpu, nitems(ncpu));
	assert_int_equal(submit_range(s, 1, &c, 10, 3), 0);
	assert_int_equal(submit_range(s, 2, &c, 20, 3), 0);
	for (id = 10; id < 13; id++) {
		expect_assign(s, 1, id, 0);
		assert_int_equal(sched_done(s, 1, id, 1), SCHED_ACCEPT);
	}
	expect_batch_done(s, 1);
	for (id = 20; id < 23; id++) {
		expect_assign(s, 1, id, 0);
		assert_int_equal(sched_done(s, 1, id, 1), SCHED_ACCEPT);
	}
	expect_batch_done(s, 2);
	expect_none(s);
	sched_free(s);
}

/*
 * A task put back (its worker lost) goes before the queued tasks of its
 * priority, here an earlier batch's too, but not before a more urgent
 * task.
 */
static void
test_priority_requeue_first(void **state)
{
	static const uint32_t		 ncpu[] = { 1, 1 };
	struct sched_batch_config	 c = config(SCHED_POLICY_WQ, 0, 0, 0);
	const struct sched_task		 v[] = {
		task(1, 0, 0), task(2, 0, 0), task(3, 0, 0), task(4, 1, 0)
	};
	const struct sched_task		 urgent[] = { task(9, -1, 0) };
	struct sched			*s;

	(void)state;
	s = new_with_workers(ncpu, nitems(ncpu));
	assert_int_equal(submit_range(s, 1, &c, 100, 1), 0);
	expect_assign(s, 1, 100, 0);
	assert_int_equal(sched_batch_open(s, 2, &c, 0), 0);
	assert_int_equal(sched_batch_add(s, 2, v, nitems(v), 0), 0);
	expect_assign(s, 2, 1, 0);
	expect_none(s);
	/* Batch 3 comes first in add order after 100 went out. */
	assert_int_equal(submit_range(s, 3, &c, 200, 1), 0);
	expect_none(s);
	sched_worker_lost(s, 2, 1);
	expect_none(s);
	assert_int_equal(sched_batch_open(s, 4, &c, 1), 0);
	assert_int_equal(sched_batch_add(s, 4, urgent, 1, 1), 0);
	expect_none(s);
	assert_int_equal(sched_done(s, 1, 100, 2), SCHED_ACCEPT);
	expect_batch_done(s, 1);
	expect_assign(s, 1, 9, 0);
	assert_int_equal(sched_done(s, 1, 9, 3), SCHED_ACCEPT);
	expect_assign(s, 1, 1, 0);	/* put back: before 2, 3 and 200 */
	assert_int_equal(sched_done(s, 1, 1, 4), SCHED_ACCEPT);
	expect_assign(s, 1, 2, 0);
	expect_none(s);
	sched_free(s);
}

/*
 * Exclusion and priorities together: a task that failed on w1 goes back
 * first in its priority, so w1 takes the next task of that priority, not
 * a less urgent one, and the failed task goes to the next other worker.
 */
static void
test_exclusion_priorities(void **state)
{
	static const uint32_t		 ncpu[] = { 1, 1 };
	struct sched_batch_config	 c = config(SCHED_POLICY_WQ, 0, 0, 0);
	const struct sched_task		 v[] = {
		task(1, 0, 0), task(2, 0, 0), task(3, 1, 0), task(4, 0, 0)
	};
	struct sched			*s;

	(void)state;
	s = new_with_workers(ncpu, nitems(ncpu));
	assert_int_equal(sched_batch_open(s, 1, &c, 0), 0);
	assert_int_equal(sched_batch_add(s, 1, v, nitems(v), 0), 0);
	expect_assign(s, 1, 1, 0);
	expect_assign(s, 2, 2, 0);
	expect_none(s);
	assert_int_equal(sched_failed(s, 1, 1, 1), 1);
	expect_assign(s, 1, 4, 0);
	expect_none(s);
	assert_int_equal(sched_done(s, 2, 2, 2), SCHED_ACCEPT);
	expect_assign(s, 2, 1, 0);
	assert_int_equal(sched_done(s, 1, 4, 3), SCHED_ACCEPT);
	expect_assign(s, 1, 3, 0);
	assert_int_equal(sched_done(s, 2, 1, 4), SCHED_ACCEPT);
	/* w1 failed where w2 succeeded. */
	expect_suspect(s, 1, 1, SCHED_WHY_FAILED);
	expect_assign(s, 2, 3, 1);	/* its held task, replicated */
	assert_int_equal(sched_done(s, 1, 3, 5), SCHED_ACCEPT);
	expect_cancel(s, 2, 3, 0);
	expect_none(s);
	assert_int_equal(sched_batch_close(s, 1, 6), 0);
	expect_batch_done(s, 1);
	expect_none(s);
	sched_free(s);
}

/*
 * copies = 3: three copies at once on three workers, on machines that
 * have none yet before a second worker of the same machine; the first
 * result wins and the other two are cancelled.  The extra copies are
 * replicas but do not start the synchronisation wait.
 */
static void
test_copies_three(void **state)
{
	struct sched_batch_config	 c = config(SCHED_POLICY_WQ, 0, 0, 0);
	const struct sched_task		 v[] = { task(1, 0, 3), task(2, 0, 1) };
	struct sched_stats		 st;
	struct sched			*s;

	(void)state;
	assert_non_null(s = sched_new());
	/* w1 and w2 share a machine. */
	assert_int_equal(sched_worker_join_node(s, 1, 100, 1, ~0U, 0), 0);
	assert_int_equal(sched_worker_join_node(s, 2, 100, 1, ~0U, 0), 0);
	assert_int_equal(sched_worker_join_node(s, 3, 300, 1, ~0U, 0), 0);
	assert_int_equal(sched_worker_join_node(s, 4, 400, 1, ~0U, 0), 0);
	assert_int_equal(sched_worker_join_node(s, 5, 500, 1, ~0U, 0), 0);
	seen_reset();
	assert_int_equal(sched_batch_open(s, 1, &c, 0), 0);
	assert_int_equal(sched_batch_add(s, 1, v, nitems(v), 0), 0);
	assert_int_equal(sched_batch_close(s, 1, 0), 0);
	expect_assign(s, 1, 1, 0);
	expect_assign(s, 3, 1, 1);
	expect_assign(s, 4, 1, 1);
	expect_assign(s, 2, 2, 0);
	expect_none(s);
	sched_started(s, 3, 1, 1);
	assert_int_equal(sched_done(s, 4, 1, 2), SCHED_ACCEPT);
	expect_cancel(s, 1, 1, 0);
	expect_cancel(s, 3, 1, 1);
	expect_none(s);
	assert_int_equal(sched_done(s, 1, 1, 3), SCHED_STALE);
	assert_int_equal(sched_done(s, 2, 2, 4), SCHED_ACCEPT);
	/* w5 idled from the start: the copies are not the tail's. */
	expect_report(s, 1, report(0, 0, 0, 4, 2, 1, 1, 0));
	expect_none(s);
	sched_get_stats(s, &st);
	assert_int_equal(st.replicas, 2);
	assert_int_equal(st.cancelled_held + st.cancelled_running, 2);
	sched_free(s);
}

/*
 * More copies than workers: one per worker, and the rest wait for room,
 * before fresh work; a worker that joins later gets one.
 */
static void
test_copies_more_than_workers(void **state)
{
	static const uint32_t		 ncpu[] = { 1, 1 };
	struct sched_batch_config	 c = config(SCHED_POLICY_WQ, 0, 0, 0);
	const struct sched_task		 v[] = { task(1, 0, 5), task(2, 0, 0) };
	struct sched			*s;

	(void)state;
	s = new_with_workers(ncpu, nitems(ncpu));
	assert_int_equal(sched_batch_open(s, 1, &c, 0), 0);
	assert_int_equal(sched_batch_add(s, 1, v, nitems(v), 0), 0);
	expect_assign(s, 1, 1, 0);
	expect_assign(s, 2, 1, 1);
	expect_none(s);
	assert_int_equal(sched_worker_join(s, 3, 1, ~0U, 1), 0);
	expect_assign(s, 3, 1, 1);
	expect_none(s);
	assert_int_equal(sched_done(s, 3, 1, 2), SCHED_ACCEPT);
	expect_cancel(s, 1, 1, 0);
	expect_cancel(s, 2, 1, 0);
	expect_assign(s, 1, 2, 0);
	expect_none(s);
	sched_free(s);
}

/*
 * An open batch: tasks added after work started are sent as they come,
 * and SCHED_BATCH_DONE waits for the close even when every task is done;
 * the close then says it at once.  Bad adds and closes change nothing.
 */
static void
test_open_batch(void **state)
{
	static const uint32_t		 ncpu[] = { 1 };
	struct sched_batch_config	 c = config(SCHED_POLICY_R3Q, 0, 0, 0);
	const struct sched_task		 one[] = { task(1, 0, 0) };
	const struct sched_task		 two[] = { task(2, 0, 0), task(3, 0, 0) };
	const struct sched_task		 dup[] = { task(4, 0, 0), task(2, 0, 0) };
	const struct sched_task		 many[] = { task(5, 0, 17) };
	struct sched_stats		 st;
	struct sched			*s;

	(void)state;
	s = new_with_workers(ncpu, nitems(ncpu));
	assert_int_equal(sched_batch_add(s, 1, one, 1, 0), -1);
	assert_int_equal(sched_batch_close(s, 1, 0), -1);
	assert_int_equal(sched_batch_open(s, 1, &c, 0), 0);
	assert_int_equal(sched_batch_open(s, 1, &c, 0), -1);
	expect_none(s);
	assert_int_equal(sched_batch_add(s, 1, one, 1, 1), 0);
	expect_assign(s, 1, 1, 0);
	assert_int_equal(sched_done(s, 1, 1, 2), SCHED_ACCEPT);
	expect_none(s);
	assert_int_equal(sched_batch_add(s, 1, two, nitems(two), 3), 0);
	expect_assign(s, 1, 2, 0);
	expect_assign(s, 1, 3, 0);
	assert_int_equal(sched_batch_add(s, 1, dup, nitems(dup), 3), -1);
	assert_int_equal(sched_batch_add(s, 1, many, nitems(many), 3), -1);
	assert_int_equal(sched_batch_add(s, 1, NULL, 0, 3), 0);
	sched_get_stats(s, &st);
	assert_int_equal(st.queued, 0);
	assert_int_equal(sched_done(s, 1, 2, 4), SCHED_ACCEPT);
	assert_int_equal(sched_done(s, 1, 3, 5), SCHED_ACCEPT);
	expect_none(s);
	assert_int_equal(sched_batch_close(s, 1, 6), 0);
	expect_report(s, 1, report(0, 3, 0, 6, 0, 0, 0, 0));
	expect_none(s);
	assert_int_equal(sched_batch_close(s, 1, 7), -1);
	assert_int_equal(sched_batch_add(s, 1, one, 1, 7), -1);
	sched_free(s);
}

/* An empty batch, closed, is done at once. */
static void
test_empty_batch(void **state)
{
	struct sched_batch_config	 c = config(SCHED_POLICY_WQ, 0, 0, 0);
	struct sched			*s;

	(void)state;
	assert_non_null(s = sched_new());
	assert_int_equal(sched_batch_open(s, 3, &c, 5), 0);
	expect_none(s);
	assert_int_equal(sched_batch_close(s, 3, 7), 0);
	expect_report(s, 3, report(5, 0, 0, 7, 0, 0, 0, 0));
	expect_none(s);
	sched_free(s);
}

/*
 * R3Q does not replicate the tail of an open batch, whose client may
 * still add work; once it is closed it does, in reverse send order.
 */
static void
test_open_no_tail_replication(void **state)
{
	static const uint32_t		 ncpu[] = { 1, 1 };
	struct sched_batch_config	 c = config(SCHED_POLICY_R3Q, 2, 0, 0);
	const struct sched_task		 v[] = { task(1, 0, 0), task(2, 0, 0) };
	struct sched			*s;

	(void)state;
	s = new_with_workers(ncpu, nitems(ncpu));
	seen_reset();
	assert_int_equal(sched_batch_open(s, 1, &c, 0), 0);
	assert_int_equal(sched_batch_add(s, 1, v, nitems(v), 0), 0);
	expect_assign(s, 1, 1, 0);
	expect_assign(s, 2, 2, 0);
	expect_none(s);
	sched_started(s, 1, 1, 1);
	sched_started(s, 2, 2, 1);
	expect_none(s);
	assert_int_equal(sched_batch_close(s, 1, 2), 0);
	expect_assign(s, 1, 2, 1);
	expect_assign(s, 2, 1, 1);
	expect_none(s);
	assert_int_equal(sched_done(s, 1, 1, 3), SCHED_ACCEPT);
	expect_cancel(s, 2, 1, 0);
	expect_none(s);
	assert_int_equal(sched_done(s, 1, 2, 4), SCHED_ACCEPT);
	expect_cancel(s, 2, 2, 1);
	expect_report(s, 1, report(0, 0, 2, 4, 2, 1, 1, 0));
	expect_none(s);
	sched_free(s);
}

/*
 * sched_task_cancel(): a queued task leaves its queue, a sent one has
 * every copy cancelled; either counts as finished, without TASK_FAILED.
 * Unknown and finished tasks are ENOENT.
 */
static void
test_task_cancel(void **state)
{
	static const uint32_t		 ncpu[] = { 1, 1 };
	struct sched_batch_config	 c = config(SCHED_POLICY_WQ, 0, 0, 0);
	const struct sched_task		 v[] = { task(1, 0, 2) };
	struct sched_stats		 st;
	struct sched			*s;

	(void)state;
	s = new_with_workers(ncpu, nitems(ncpu));
	assert_int_equal(submit_range(s, 1, &c, 10, 4), 0);
	expect_assign(s, 1, 10, 0);
	expect_assign(s, 2, 11, 0);
	expect_none(s);
	/* Queued. */
	assert_int_equal(sched_task_cancel(s, 12, 1), 0);
	expect_none(s);
	/* Running: cancelled there, and the worker gets the next task. */
	sched_started(s, 1, 10, 1);
	assert_int_equal(sched_task_cancel(s, 10, 2), 0);
	expect_cancel(s, 1, 10, 1);
	expect_assign(s, 1, 13, 0);
	expect_none(s);
	assert_int_equal(sched_task_cancel(s, 10, 2), -1);
	assert_int_equal(sched_task_cancel(s, 999, 2), -1);
	assert_int_equal(sched_done(s, 1, 10, 3), SCHED_STALE);
	assert_int_equal(sched_done(s, 2, 11, 3), SCHED_ACCEPT);
	assert_int_equal(sched_task_cancel(s, 11, 3), -1);
	assert_int_equal(sched_done(s, 1, 13, 4), SCHED_ACCEPT);
	expect_report(s, 1, report(0, 2, 3, 4, 0, 0, 1, 0));
	expect_none(s);
	assert_int_equal(seen.last.report.cancelled, 2);

	/* Every copy of a task with copies; its open batch waits for close. */
	assert_int_equal(sched_batch_open(s, 2, &c, 5), 0);
	assert_int_equal(sched_batch_add(s, 2, v, nitems(v), 5), 0);
	expect_assign(s, 1, 1, 0);
	expect_assign(s, 2, 1, 1);
	assert_int_equal(sched_task_cancel(s, 1, 6), 0);
	expect_cancel(s, 1, 1, 0);
	expect_cancel(s, 2, 1, 0);
	expect_none(s);
	assert_int_equal(sched_batch_close(s, 2, 7), 0);
	expect_batch_done(s, 2);
	expect_none(s);
	sched_get_stats(s, &st);
	assert_int_equal(st.cancelled, 3);
	assert_int_equal(st.failed, 0);
	sched_free(s);
}

/*
 * Run every task the core hands out to completion at once, each result
 * one event; returns how many results there were.
 */
static size_t
run_out(struct sched *s, uint64_t now)
{
	struct sched_action	 a;
	uint32_t		 wid[4096];
	uint64_t		 tid[4096];
	size_t			 n = 0, head = 0, tail = 0;

	for (;;) {
		while (sched_next_action(s, &a))
			if (a.type == SCHED_ASSIGN) {
				assert_true(tail < nitems(tid));
				wid[tail] = a.wid;
				tid[tail++] = a.task;
			}
		if (head == tail)
			return (n);
		(void)sched_done(s, wid[head], tid[head], now++);
		head++;
		n++;
	}
}

/*
 * Idle batches cost nothing: 3,000 closed one-task batches of a kind no
 * worker runs and 3,000 open empty ones stay beside a job of 300 tasks
 * under each policy.  The batches the core looks at per result stay a
 * few (the job's own), where a walk of every batch would look at 6,000
 * per event; batches are found by id all the same.
 */
static void
test_idle_batches(void **state)
{
	static const uint32_t		 k0[] = { 0 };
	struct sched_batch_config	 idle = config(SCHED_POLICY_R3Q, 0, 9,
					    0), c;
	struct sched_stats		 st;
	struct sched			*s;
	uint64_t			 id, before;
	enum sched_policy		 p;
	size_t				 n;

	(void)state;
	assert_non_null(s = sched_new());
	for (id = 1; id <= 4; id++)
		assert_int_equal(sched_worker_join_kinds(s, (uint32_t)id,
		    id, 2, k0, 1, 0), 0);
	for (id = 1; id <= 3000; id++)
		assert_int_equal(submit_range(s, id, &idle, id, 1), 0);
	for (id = 3001; id <= 6000; id++)
		assert_int_equal(sched_batch_open(s, id, &idle, 0), 0);
	expect_none(s);
	assert_int_equal(sched_kind_workers(s, 9), 0);
	for (p = 0; p < SCHED_POLICY_COUNT; p++) {
		c = config(p, 0, 0, 0);
		sched_get_stats(s, &st);
		before = st.batches_visited;
		assert_int_equal(submit_range(s, 10000 + p, &c,
		    100000 + 1000 * p, 300), 0);
		n = run_out(s, 1000 * (p + 1));
		assert_true(n >= 300);		/* replicas' results too */
		sched_get_stats(s, &st);
		assert_int_equal(st.done, 300 * (p + 1));
		/* A few per result: the job's own batch, not 6,000. */
		assert_true(st.batches_visited - before < 10 * n);
	}
	/* Found by id: the first and the last of them. */
	assert_int_equal(submit_range(s, 1, &idle, 999999, 1), -1);
	assert_int_equal(errno, EEXIST);
	assert_int_equal(sched_batch_close(s, 6000, 9000), 0);
	expect_batch_done(s, 6000);
	for (id = 1; id < 6000; id++)
		sched_batch_abort(s, id, 9000);
	sched_get_stats(s, &st);
	assert_int_equal(st.queued, 0);
	expect_none(s);
	sched_free(s);
}

/*
 * Kinds are any numbers: a worker that runs {5, 1000} takes batches of
 * kind 1000, not of kind 7; sched_kind_workers() counts workers per kind
 * through joins and losses.
 */
static void
test_kinds_large(void **state)
{
	struct sched_batch_config	 c7 = config(SCHED_POLICY_WQ, 0, 7, 0);
	struct sched_batch_config	 ck = config(SCHED_POLICY_WQ, 0, 1000, 0);
	static const uint32_t		 k1[] = { 1000, 5 };
	static const uint32_t		 k2[] = { 7, 1000, 7, 70000 };
	struct sched			*s;

	(void)state;
	assert_non_null(s = sched_new());
	assert_int_equal(sched_kind_workers(s, 1000), 0);
	assert_int_equal(sched_worker_join_kinds(s, 1, 1, 2, k1, nitems(k1),
	    0), 0);
	assert_int_equal(sched_worker_join_kinds(s, 1, 1, 2, k1, nitems(k1),
	    0), -1);
	assert_int_equal(sched_kind_workers(s, 1000), 1);
	assert_int_equal(sched_kind_workers(s, 5), 1);
	assert_int_equal(sched_kind_workers(s, 7), 0);
	assert_int_equal(submit_range(s, 1, &c7, 1, 1), 0);
	expect_none(s);
	assert_int_equal(submit_range(s, 2, &ck, 2, 1), 0);
	expect_assign(s, 1, 2, 0);
	expect_none(s);
	assert_int_equal(sched_worker_join_kinds(s, 2, 2, 1, k2, nitems(k2),
	    1), 0);
	expect_assign(s, 2, 1, 0);
	expect_none(s);
	assert_int_equal(sched_kind_workers(s, 1000), 2);
	assert_int_equal(sched_kind_workers(s, 7), 1);
	assert_int_equal(sched_kind_workers(s, 70000), 1);
	/* The old mask: bit k is kind k. */
	assert_int_equal(sched_worker_join(s, 3, 1, 0x5, 2), 0);
	assert_int_equal(sched_kind_workers(s, 0), 1);
	assert_int_equal(sched_kind_workers(s, 1), 0);
	assert_int_equal(sched_kind_workers(s, 2), 1);
	sched_worker_lost(s, 1, 3);
	assert_int_equal(sched_kind_workers(s, 1000), 1);
	assert_int_equal(sched_kind_workers(s, 5), 0);
	/* Its task goes to the other worker of kind 1000 once it has room. */
	expect_none(s);
	assert_int_equal(sched_done(s, 2, 1, 4), SCHED_ACCEPT);
	expect_batch_done(s, 1);
	expect_assign(s, 2, 2, 0);
	sched_worker_lost(s, 2, 5);
	sched_worker_lost(s, 3, 5);
	assert_int_equal(sched_kind_workers(s, 1000), 0);
	assert_int_equal(sched_kind_workers(s, 7), 0);
	assert_int_equal(sched_kind_workers(s, 0), 0);
	sched_free(s);
}

/*
 * A worker's kinds change (workerd reloaded): the copy it holds of a kind
 * it dropped stays and may finish; new tasks of that kind wait for a
 * worker that offers it, and tasks of a kind it gained come to it.
 */
static void
test_kinds_change(void **state)
{
	struct sched_batch_config	 ca = config(SCHED_POLICY_WQ, 0, 100, 0);
	struct sched_batch_config	 cb = config(SCHED_POLICY_WQ, 0, 200, 0);
	static const uint32_t		 ka[] = { 100 };
	static const uint32_t		 kb[] = { 200, 200 };
	struct sched			*s;

	(void)state;
	assert_non_null(s = sched_new());
	assert_int_equal(sched_worker_kinds(s, 1, ka, 1, 0), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(sched_worker_join_kinds(s, 1, 1, 1, ka, 1, 0), 0);
	assert_int_equal(submit_range(s, 1, &ca, 1, 2), 0);
	expect_assign(s, 1, 1, 0);
	expect_none(s);
	assert_int_equal(submit_range(s, 2, &cb, 3, 1), 0);
	expect_none(s);
	assert_int_equal(sched_worker_kinds(s, 1, kb, nitems(kb), 1), 0);
	assert_int_equal(sched_kind_workers(s, 100), 0);
	assert_int_equal(sched_kind_workers(s, 200), 1);
	/* Its copy of task 1 (kind 100) still counts when it finishes. */
	expect_none(s);
	assert_int_equal(sched_done(s, 1, 1, 2), SCHED_ACCEPT);
	expect_assign(s, 1, 3, 0);
	expect_none(s);
	assert_int_equal(sched_done(s, 1, 3, 3), SCHED_ACCEPT);
	expect_batch_done(s, 2);
	expect_none(s);
	/* Task 2 (kind 100) waits; it goes once the kind is back. */
	assert_int_equal(sched_worker_kinds(s, 1, ka, 1, 4), 0);
	expect_assign(s, 1, 2, 0);
	expect_none(s);
	assert_int_equal(sched_done(s, 1, 2, 5), SCHED_ACCEPT);
	expect_batch_done(s, 1);
	expect_none(s);
	assert_int_equal(sched_kind_workers(s, 100), 1);
	assert_int_equal(sched_kind_workers(s, 200), 0);
	sched_free(s);
}

/*
 * A paused worker (its output is full) gets no new copy; its own copy may
 * still finish, and once it goes on it takes tasks again.
 */
static void
test_worker_pause(void **state)
{
	struct sched_batch_config	 c = config(SCHED_POLICY_WQ, 0, 100, 0);
	static const uint32_t		 k[] = { 100 };
	struct sched			*s;

	(void)state;
	assert_non_null(s = sched_new());
	assert_int_equal(sched_worker_pause(s, 1, 1, 0), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(sched_worker_join_kinds(s, 1, 1, 1, k, 1, 0), 0);
	assert_int_equal(submit_range(s, 1, &c, 1, 3), 0);
	expect_assign(s, 1, 1, 0);
	expect_none(s);
	assert_int_equal(sched_worker_pause(s, 1, 1, 1), 0);
	assert_int_equal(sched_worker_pause(s, 1, 1, 1), 0);
	assert_int_equal(sched_done(s, 1, 1, 2), SCHED_ACCEPT);
	expect_none(s);
	assert_int_equal(sched_kind_workers(s, 100), 1);
	assert_int_equal(sched_worker_pause(s, 1, 0, 3), 0);
	expect_assign(s, 1, 2, 0);
	expect_none(s);
	sched_free(s);
}

/*
 * A draining worker (issue 25) gets no new copy, for good; what it gives
 * back, held or running, goes to the front of the queue with no failure
 * and no kill counted, and a copy it no longer holds is refused.
 */
static void
test_worker_drain(void **state)
{
	struct sched_batch_config	 c = config(SCHED_POLICY_RWQ, 2, 100, 1);
	static const uint32_t		 k[] = { 100 };
	struct sched_stats		 st;
	struct sched			*s;

	(void)state;
	c.max_kills = 1;
	assert_non_null(s = sched_new());
	assert_int_equal(sched_worker_drain(s, 1, 0), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(sched_worker_join_kinds(s, 1, 1, 1, k, 1, 0), 0);
	assert_int_equal(submit_range(s, 1, &c, 1, 4), 0);
	expect_assign(s, 1, 1, 0);
	expect_assign(s, 1, 2, 0);
	expect_none(s);
	sched_started(s, 1, 1, 1);
	assert_int_equal(sched_worker_drain(s, 1, 2), 0);
	/* A pause lifted does not lift a drain. */
	assert_int_equal(sched_worker_pause(s, 1, 1, 2), 0);
	assert_int_equal(sched_worker_pause(s, 1, 0, 2), 0);
	expect_none(s);
	assert_int_equal(sched_handback(s, 1, 2, 3), 1);
	expect_none(s);
	assert_int_equal(sched_handback(s, 1, 2, 3), -1);
	assert_int_equal(sched_handback(s, 1, 99, 3), -1);
	assert_int_equal(sched_worker_join_kinds(s, 2, 2, 1, k, 1, 4), 0);
	expect_assign(s, 2, 2, 0);
	expect_assign(s, 2, 3, 0);
	expect_none(s);
	/* The running copy, interrupted: back first in the queue. */
	assert_int_equal(sched_handback(s, 1, 1, 5), 1);
	expect_none(s);
	sched_get_stats(s, &st);
	assert_int_equal(st.handed_back, 2);
	assert_int_equal(st.killed, 0);
	assert_int_equal(st.failed, 0);
	assert_int_equal(st.queued, 2);
	sched_worker_lost(s, 1, 6);
	expect_none(s);
	assert_int_equal(sched_done(s, 2, 2, 7), SCHED_ACCEPT);
	expect_assign(s, 2, 1, 0);
	expect_none(s);
	assert_int_equal(sched_done(s, 2, 1, 8), SCHED_ACCEPT);
	expect_assign(s, 2, 4, 0);
	assert_int_equal(sched_done(s, 2, 3, 9), SCHED_ACCEPT);
	assert_int_equal(sched_done(s, 2, 4, 9), SCHED_ACCEPT);
	expect_batch_done(s, 1);
	expect_none(s);
	sched_free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_names),
		cmocka_unit_test(test_worker_pause),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_wq_three_workers),
		cmocka_unit_test(test_wq_two_cpus),
		cmocka_unit_test(test_kind_mask),
		cmocka_unit_test(test_worker_lost),
		cmocka_unit_test(test_rwq_factor2),
		cmocka_unit_test(test_rr_replication),
		cmocka_unit_test(test_rr_round_robin),
		cmocka_unit_test(test_r3q_reverse_order),
		cmocka_unit_test(test_duplicate_and_unknown),
		cmocka_unit_test(test_failure),
		cmocka_unit_test(test_failure_other_copy),
		cmocka_unit_test(test_failure_everywhere),
		cmocka_unit_test(test_failure_node),
		cmocka_unit_test(test_failure_blamed),
		cmocka_unit_test(test_verify),
		cmocka_unit_test(test_verify_no_quorum),
		cmocka_unit_test(test_verify_group),
		cmocka_unit_test(test_lost_not_an_attempt),
		cmocka_unit_test(test_batch_abort),
		cmocka_unit_test(test_two_batches),
		cmocka_unit_test(test_report_wq),
		cmocka_unit_test(test_report_rr),
		cmocka_unit_test(test_report_r3q),
		cmocka_unit_test(test_report_no_replica),
		cmocka_unit_test(test_report_no_idle_moment),
		cmocka_unit_test(test_report_requeue),
		cmocka_unit_test(test_report_two_batches),
		cmocka_unit_test(test_done_timed_ewma),
		cmocka_unit_test(test_qf_auto),
		cmocka_unit_test(test_tail_equal),
		cmocka_unit_test(test_tail_slow),
		cmocka_unit_test(test_tail_deep_queue),
		cmocka_unit_test(test_tail_late),
		cmocka_unit_test(test_tail_silent),
		cmocka_unit_test(test_tail_lost),
		cmocka_unit_test(test_tail_blind_cap),
		cmocka_unit_test(test_worker_estimate),
		cmocka_unit_test(test_wq_random_100k),
		cmocka_unit_test(test_r3q_random_churn),
		cmocka_unit_test(test_rr_random_churn),
		cmocka_unit_test(test_rwq_random_churn),
		cmocka_unit_test(test_suspect_none_equal),
		cmocka_unit_test(test_suspect_all_slow_down),
		cmocka_unit_test(test_suspect_one_slow),
		cmocka_unit_test(test_suspect_hung),
		cmocka_unit_test(test_suspect_idle_stop),
		cmocka_unit_test(test_suspect_silent_holder),
		cmocka_unit_test(test_suspect_silent_runner),
		cmocka_unit_test(test_suspect_grace),
		cmocka_unit_test(test_suspect_cooldown),
		cmocka_unit_test(test_suspect_slow_steady),
		cmocka_unit_test(test_suspect_slower_than_itself),
		cmocka_unit_test(test_max_kills),
		cmocka_unit_test(test_priority_one_batch),
		cmocka_unit_test(test_priority_two_batches),
		cmocka_unit_test(test_priority_ties_fifo),
		cmocka_unit_test(test_priority_requeue_first),
		cmocka_unit_test(test_exclusion_priorities),
		cmocka_unit_test(test_copies_three),
		cmocka_unit_test(test_copies_more_than_workers),
		cmocka_unit_test(test_open_batch),
		cmocka_unit_test(test_empty_batch),
		cmocka_unit_test(test_open_no_tail_replication),
		cmocka_unit_test(test_task_cancel),
		cmocka_unit_test(test_kinds_large),
		cmocka_unit_test(test_idle_batches),
		cmocka_unit_test(test_kinds_change),
		cmocka_unit_test(test_worker_drain),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}

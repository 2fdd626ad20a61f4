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
}

/* No action may be pending. */
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

/* Submit tasks first..first+n-1 as one batch. */
static int
submit_range(struct sched *s, uint64_t batch,
    const struct sched_batch_config *c, uint64_t first, size_t n)
{
	uint64_t	*ids;
	size_t		 i;
	int		 rv;

	ids = calloc(n > 0 ? n : 1, sizeof(*ids));
	assert_non_null(ids);
	for (i = 0; i < n; i++)
		ids[i] = first + i;
	rv = sched_submit(s, batch, c, ids, n, 0);
	free(ids);
	return (rv);
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
	c.kind = 32;
	assert_int_equal(sched_submit(s, 1, &c, &one, 1, 0), -1);
	c.kind = 0;
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
	assert_int_equal(sched_done(s, 1, 4, 6), SCHED_DUPLICATE);
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
	assert_int_equal(sched_done(s, 1, 1, 2), SCHED_DUPLICATE);
	assert_int_equal(sched_done(s, 2, 1, 2), SCHED_DUPLICATE);
	assert_int_equal(sched_done(s, 9, 1, 2), SCHED_DUPLICATE);
	assert_int_equal(sched_done(s, 1, 999, 2), SCHED_UNKNOWN);
	expect_none(s);
	sched_get_stats(s, &st);
	assert_int_equal(st.done, 1);
	expect_load(s, 2, 1, 0);
	expect_load(s, 1, 1, 0);

	assert_int_equal(sched_done(s, 2, 2, 3), SCHED_ACCEPT);
	assert_int_equal(sched_done(s, 2, 2, 3), SCHED_DUPLICATE);
	assert_int_equal(sched_done(s, 1, 3, 4), SCHED_ACCEPT);
	expect_batch_done(s, 1);
	expect_none(s);
	assert_int_equal(sched_done(s, 1, 3, 5), SCHED_UNKNOWN);
	sched_get_stats(s, &st);
	assert_int_equal(st.done, 3);
	sched_free(s);
}

/* Failures retry at the front of the queue, then give up. */
static void
test_failure(void **state)
{
	static const uint32_t		 ncpu[] = { 1 };
	struct sched_batch_config	 c = config(SCHED_POLICY_WQ, 0, 0, 2);
	struct sched_stats		 st;
	struct sched			*s;

	(void)state;
	s = new_with_workers(ncpu, nitems(ncpu));
	assert_int_equal(submit_range(s, 1, &c, 1, 3), 0);
	expect_assign(s, 1, 1, 0);
	assert_int_equal(sched_done(s, 1, 1, 1), SCHED_ACCEPT);
	expect_assign(s, 1, 2, 0);
	assert_int_equal(sched_failed(s, 1, 2, 2), 1);
	expect_assign(s, 1, 2, 0);	/* front of the queue, before 3 */
	expect_none(s);
	assert_int_equal(sched_failed(s, 1, 2, 3), 2);
	expect_task_failed(s, 1, 2);
	expect_assign(s, 1, 3, 0);
	expect_none(s);
	assert_int_equal(sched_failed(s, 1, 2, 4), -1);	/* already failed */
	assert_int_equal(sched_done(s, 1, 2, 4), SCHED_DUPLICATE);
	assert_int_equal(sched_failed(s, 1, 77, 4), -1);
	assert_int_equal(sched_failed(s, 1, 3, 4), 1);
	expect_assign(s, 1, 3, 0);
	assert_int_equal(sched_failed(s, 1, 3, 5), 2);
	expect_task_failed(s, 1, 3);
	expect_batch_done(s, 1);
	expect_none(s);
	sched_get_stats(s, &st);
	assert_int_equal(st.done, 1);
	assert_int_equal(st.failed, 2);
	assert_int_equal(st.held + st.running + st.queued, 0);
	sched_free(s);
}

/* A failing copy does not give up the task while another copy runs. */
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
	expect_assign(s, 2, 2, 1);	/* replication refills the slot */
	expect_none(s);
	assert_int_equal(sched_done(s, 2, 2, 3), SCHED_ACCEPT);
	expect_cancel(s, 1, 2, 0);
	expect_batch_done(s, 1);
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
	unsigned	 nlost, njoined, nlate;	/* churn coverage */
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

	v = sched_done(m->s, wid, task, now);
	if (m->accepted[task])
		assert_true(v == SCHED_DUPLICATE || v == SCHED_UNKNOWN);
	else {
		assert_int_equal(v, SCHED_ACCEPT);
		m->accepted[task] = 1;
	}
}

/* No worker holds more copies than the cap of the batch's policy. */
static void
sim_check_caps(const struct sim *m, unsigned factor)
{
	uint32_t	 wid, held, running;

	for (wid = 0; wid < 256; wid++) {
		if (m->alive[wid] == 0)
			continue;
		assert_int_equal(sched_worker_load(m->s, wid, &held, &running),
		    0);
		assert_true(held + running <= factor * (uint32_t)m->alive[wid]);
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

/* Everything was accepted exactly once and the books are empty. */
static void
sim_finish(struct sim *m)
{
	struct sched_stats	 st;
	size_t			 i;

	assert_int_equal(m->batchdone, 1);
	for (i = 0; i < m->ntasks; i++)
		assert_int_equal(m->accepted[i], 1);
	sched_get_stats(m->s, &st);
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
	struct sim			 m;
	struct simcopy			 sc;
	struct sched_stats		 st;
	uint64_t			 rng = seed, now = 0, r, steps;
	uint32_t			 wid, nextwid = 1, nalive = 0;
	size_t				 i;
	unsigned			 factor;

	factor = policy == SCHED_POLICY_RWQ || policy == SCHED_POLICY_R3Q ? 2 : 1;
	sim_init(&m, ntasks);
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
			} else {
				sc = m.copies[i];
				sim_remove(&m, i);
				sim_result(&m, sc.wid, sc.task, now);
			}
		}
		sim_drain(&m);
		if (steps % 512 == 0)
			sim_check_caps(&m, factor);
	}
	sched_get_stats(m.s, &st);
	if (policy == SCHED_POLICY_RR || policy == SCHED_POLICY_R3Q)
		assert_true(st.replicas > 0 &&
		    st.cancelled_held + st.cancelled_running > 0);
	else
		assert_int_equal(st.replicas, 0);
	assert_true(m.nlost > 0 && m.njoined > 0 && m.nlate > 0);
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_names),
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
		cmocka_unit_test(test_lost_not_an_attempt),
		cmocka_unit_test(test_batch_abort),
		cmocka_unit_test(test_two_batches),
		cmocka_unit_test(test_wq_random_100k),
		cmocka_unit_test(test_r3q_random_churn),
		cmocka_unit_test(test_rr_random_churn),
		cmocka_unit_test(test_rwq_random_churn),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}

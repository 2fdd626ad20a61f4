/*
 * The scheduling core against its reference build (issue 23).  The core
 * walks sets of workers (with room, with a free CPU, cooling down) where
 * it walked every worker; tests/unit/sched_ref.c builds the same source
 * with SCHED_REFERENCE, whose walks go over every worker as before.  Random
 * event sequences (fixed-seed xorshift) go to both: joins with one to
 * three CPUs and several kinds, losses, pauses, kind changes, batches of
 * every policy and queue factor (auto too) with priorities, copies,
 * verify and balancing, starts, half-way notes, results with timings
 * (some disagreeing), failures, cancels, aborts, answers to withdrawals,
 * ticks at the deadline, suspects and cool-downs; and batches of kinds no
 * worker runs, which the core's indexes of live batches skip while the
 * reference walks every batch.  Every action, return
 * value, deadline and count must be the same.  One run has 4,200 workers,
 * so that the sets have three levels.
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
#include "sched_api.h"

static const struct sched_api real_api = SCHED_API_INIT;

static uint64_t	 rs;
static int	 wide;		/* batches of kinds 70 and of kinds no
				   worker runs too (the core's indexes) */

static uint64_t
rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return (rs);
}

/* A number in [0, n). */
static uint64_t
rn(uint64_t n)
{
	return (n > 0 ? rnd() % n : 0);
}

/* A copy out, as the actions said. */
struct out {
	uint32_t	 wid;
	uint64_t	 task;
	int		 state;		/* 0 held, 1 running, 2 half-way */
	int		 withdraw;	/* SCHED_WITHDRAW not yet answered */
};

struct batchm {
	uint64_t	 id;
	int		 open;
	uint64_t	 first, n;	/* its task ids: [first, first + n) */
};

struct model {
	struct sched	*a, *b;		/* real, reference */
	uint64_t	 now;
	uint32_t	*wids;
	size_t		 nw, maxw;
	uint32_t	 nextwid;
	struct out	*out;
	size_t		 nout, outsize;
	struct batchm	 bat[64];
	size_t		 nbat;
	uint64_t	 nextbatch, nexttask;
	unsigned long	 nactions, nevents;
};

static void
out_add(struct model *m, uint32_t wid, uint64_t task)
{
	if (m->nout == m->outsize) {
		m->outsize = m->outsize ? m->outsize * 2 : 256;
		m->out = realloc(m->out, m->outsize * sizeof(*m->out));
		assert_non_null(m->out);
	}
	m->out[m->nout].wid = wid;
	m->out[m->nout].task = task;
	m->out[m->nout].state = 0;
	m->out[m->nout].withdraw = 0;
	m->nout++;
}

static struct out *
out_find(struct model *m, uint32_t wid, uint64_t task)
{
	size_t	 i;

	for (i = 0; i < m->nout; i++)
		if (m->out[i].wid == wid && m->out[i].task == task)
			return (&m->out[i]);
	return (NULL);
}

static void
out_del(struct model *m, struct out *o)
{
	if (o != NULL)
		*o = m->out[--m->nout];
}

static void
batch_del(struct model *m, uint64_t id)
{
	size_t	 i;

	for (i = 0; i < m->nbat; i++)
		if (m->bat[i].id == id) {
			m->bat[i] = m->bat[--m->nbat];
			return;
		}
}

static void
check_action(const struct sched_action *x, const struct sched_action *y,
    unsigned long ev)
{
	if (x->type == y->type && x->wid == y->wid && x->task == y->task &&
	    x->batch == y->batch && x->replica == y->replica &&
	    x->running == y->running && x->active == y->active &&
	    x->reason == y->reason && x->by == y->by && x->why == y->why &&
	    x->silent_ns == y->silent_ns && x->until == y->until &&
	    x->count == y->count &&
	    x->report.t_submit == y->report.t_submit &&
	    x->report.t_empty == y->report.t_empty &&
	    x->report.t_sync == y->report.t_sync &&
	    x->report.t_done == y->report.t_done &&
	    x->report.replicas == y->report.replicas &&
	    x->report.cancelled_held == y->report.cancelled_held &&
	    x->report.cancelled_running == y->report.cancelled_running &&
	    x->report.failed == y->report.failed &&
	    x->report.cancelled == y->report.cancelled)
		return;
	fail_msg("event %lu: action %d wid %u task %llu batch %llu, "
	    "reference %d wid %u task %llu batch %llu", ev, x->type, x->wid,
	    (unsigned long long)x->task, (unsigned long long)x->batch,
	    y->type, y->wid, (unsigned long long)y->task,
	    (unsigned long long)y->batch);
}

/* Drain both cores, compare, and follow the actions in the model. */
static void
drain(struct model *m)
{
	struct sched_action	 x, y;
	struct sched_stats	 sa, sb;
	int			 ha, hb;

	for (;;) {
		ha = real_api.next(m->a, &x);
		hb = sched_ref_api.next(m->b, &y);
		if (ha != hb)
			fail_msg("event %lu: %s has more actions", m->nevents,
			    ha ? "the core" : "the reference");
		if (!ha)
			break;
		check_action(&x, &y, m->nevents);
		m->nactions++;
		switch (x.type) {
		case SCHED_ASSIGN:
			out_add(m, x.wid, x.task);
			break;
		case SCHED_CANCEL:
			out_del(m, out_find(m, x.wid, x.task));
			break;
		case SCHED_WITHDRAW: {
			struct out *o = out_find(m, x.wid, x.task);

			/* the model may have let go of a copy too soon */
			if (o == NULL) {
				out_add(m, x.wid, x.task);
				o = &m->out[m->nout - 1];
			}
			o->withdraw = 1;
			break;
		}
		case SCHED_BATCH_DONE:
			batch_del(m, x.batch);
			break;
		default:
			break;
		}
	}
	assert_true(real_api.deadline(m->a) ==
	    sched_ref_api.deadline(m->b));
	real_api.stats(m->a, &sa);
	sched_ref_api.stats(m->b, &sb);
	assert_true(sa.queued == sb.queued && sa.held == sb.held &&
	    sa.running == sb.running && sa.done == sb.done &&
	    sa.failed == sb.failed && sa.replicas == sb.replicas &&
	    sa.suspects == sb.suspects &&
	    sa.cooling_workers == sb.cooling_workers &&
	    sa.withdrawals == sb.withdrawals && sa.moved == sb.moved &&
	    sa.workers == sb.workers);
}

static void
ev_join(struct model *m)
{
	static const uint32_t	 kindsets[][3] = {
		{ 0, 0, 0 }, { 0, 1, 0 }, { 1, 0, 0 }, { 0, 70, 0 }
	};
	size_t			 k = rn(10) < 7 ? 0 : rn(4), nk = k == 0 ||
				    k == 2 ? 1 : 2;
	uint32_t		 wid = m->nextwid++, ncpu = 1 + (uint32_t)rn(3);
	uint64_t		 node = rn(4) == 0 && wid > 0 ? rn(wid) : wid;

	if (m->nw == m->maxw)
		return;
	assert_int_equal(real_api.join(m->a, wid, node, ncpu, kindsets[k],
	    nk, m->now), sched_ref_api.join(m->b, wid, node, ncpu,
	    kindsets[k], nk, m->now));
	m->wids[m->nw++] = wid;
}

static void
ev_lost(struct model *m)
{
	size_t		 i, k;
	uint32_t	 wid;

	if (m->nw == 0)
		return;
	k = rn(m->nw);
	wid = m->wids[k];
	m->wids[k] = m->wids[--m->nw];
	real_api.lost(m->a, wid, m->now);
	sched_ref_api.lost(m->b, wid, m->now);
	for (i = 0; i < m->nout;)
		if (m->out[i].wid == wid)
			out_del(m, &m->out[i]);
		else
			i++;
}

static void
ev_batch(struct model *m)
{
	struct sched_batch_config	 cfg;
	struct sched_task		 t[40];
	static const unsigned		 qfs[] = { 0, 1, 2, 3, SCHED_QF_AUTO,
					    SCHED_QF_AUTO };
	size_t				 i, n = 1 + rn(sizeof(t) / sizeof(t[0]));
	struct batchm			*b;
	int				 r;

	if (m->nbat == sizeof(m->bat) / sizeof(m->bat[0]))
		return;
	memset(&cfg, 0, sizeof(cfg));
	cfg.policy = (enum sched_policy)rn(SCHED_POLICY_COUNT);
	cfg.queue_factor = qfs[rn(sizeof(qfs) / sizeof(qfs[0]))];
	cfg.kind = rn(8) == 0 ? 1 : 0;
	if (wide && rn(3) == 0) {
		static const uint32_t	 wk[] = { 70, 5, 300, 1 };

		cfg.kind = wk[rn(sizeof(wk) / sizeof(wk[0]))];
	}
	cfg.verify = rn(10) == 0 ? 2 : 0;
	cfg.balance = rn(6) == 0 ? (enum sched_balance)(1 + rn(3)) :
	    SCHED_BALANCE_NONE;
	b = &m->bat[m->nbat++];
	b->id = ++m->nextbatch;
	b->open = 1;
	b->first = m->nexttask;
	b->n = n;
	for (i = 0; i < n; i++) {
		t[i].id = m->nexttask++;
		t[i].priority = rn(3) == 0 ? (int32_t)rn(5) : 0;
		t[i].copies = rn(12) == 0 ? 2 + (uint32_t)rn(2) : 1;
	}
	r = real_api.open(m->a, b->id, &cfg, m->now);
	assert_int_equal(r, sched_ref_api.open(m->b, b->id, &cfg, m->now));
	assert_int_equal(r, 0);
	drain(m);
	assert_int_equal(real_api.add(m->a, b->id, t, n, m->now),
	    sched_ref_api.add(m->b, b->id, t, n, m->now));
	if (rn(4) != 0) {
		drain(m);
		b->open = 0;
		assert_int_equal(real_api.close(m->a, b->id, m->now),
		    sched_ref_api.close(m->b, b->id, m->now));
	}
}

static void
ev_copy(struct model *m, int what)
{
	struct out		*o;
	uint32_t		 wid;
	uint64_t		 task;

	if (m->nout == 0)
		return;
	o = &m->out[rn(m->nout)];
	wid = o->wid;
	task = o->task;
	switch (what) {
	case 0:
		real_api.started(m->a, wid, task, m->now);
		sched_ref_api.started(m->b, wid, task, m->now);
		if (o->state == 0)
			o->state = 1;
		break;
	case 1:
		real_api.progress(m->a, wid, task, m->now);
		sched_ref_api.progress(m->b, wid, task, m->now);
		o->state = 2;
		break;
	case 3:
		out_del(m, o);
		assert_int_equal(real_api.failed(m->a, wid, task, m->now),
		    sched_ref_api.failed(m->b, wid, task, m->now));
		break;
	}
}

/* A result, with a timing or without, agreeing or (1 in 8) not. */
static void
ev_result(struct model *m)
{
	struct sched_timing	 tm, *tp;
	struct out		*o;
	uint32_t		 wid;
	uint64_t		 task, digest;

	if (m->nout == 0)
		return;
	o = &m->out[rn(m->nout)];
	wid = o->wid;
	task = o->task;
	memset(&tm, 0, sizeof(tm));
	tm.exec_ns = rn(40000000);
	tm.at_worker_ns = tm.exec_ns + rn(10000000);
	tp = rn(5) ? &tm : NULL;
	digest = rn(8) == 0 ? rnd() : task * 7;
	out_del(m, o);
	assert_int_equal(real_api.vote(m->a, wid, task, digest, tp, m->now),
	    sched_ref_api.vote(m->b, wid, task, digest, tp, m->now));
}

static void
ev_released(struct model *m)
{
	size_t	 i;
	int	 rel = rn(4) != 0;

	for (i = 0; i < m->nout; i++)
		if (m->out[i].withdraw)
			break;
	if (i == m->nout)
		return;
	if (m->out[i].state != 0)
		rel = 0;
	m->out[i].withdraw = 0;
	assert_int_equal(real_api.released(m->a, m->out[i].wid,
	    m->out[i].task, rel, m->now), sched_ref_api.released(m->b,
	    m->out[i].wid, m->out[i].task, rel, m->now));
	if (rel)
		out_del(m, &m->out[i]);
}

static void
ev_batch_other(struct model *m, int what)
{
	struct batchm	*b;
	uint64_t	 task;

	if (m->nbat == 0)
		return;
	b = &m->bat[rn(m->nbat)];
	switch (what) {
	case 0:
		if (!b->open)
			return;
		b->open = 0;
		assert_int_equal(real_api.close(m->a, b->id, m->now),
		    sched_ref_api.close(m->b, b->id, m->now));
		break;
	case 1:
		task = b->first + rn(b->n);
		assert_int_equal(real_api.cancel(m->a, task, m->now),
		    sched_ref_api.cancel(m->b, task, m->now));
		break;
	case 2: {
		uint64_t id = b->id;
		size_t	 i;

		real_api.abort(m->a, id, m->now);
		sched_ref_api.abort(m->b, id, m->now);
		for (i = 0; i < m->nout;)
			if (m->out[i].task >= b->first &&
			    m->out[i].task < b->first + b->n)
				out_del(m, &m->out[i]);
			else
				i++;
		batch_del(m, id);
		break;
	}
	}
}

static void
ev_worker_other(struct model *m, int what)
{
	static const uint32_t	 k01[] = { 0, 1 }, k1[] = { 1 }, k0[] = { 0 };
	uint32_t		 wid;
	int			 on = (int)rn(2);

	if (m->nw == 0)
		return;
	wid = m->wids[rn(m->nw)];
	if (what == 0)
		assert_int_equal(real_api.pause(m->a, wid, on, m->now),
		    sched_ref_api.pause(m->b, wid, on, m->now));
	else {
		const uint32_t *k = rn(3) == 0 ? k01 : rn(2) ? k0 : k1;
		size_t nk = k == k01 ? 2 : 1;

		assert_int_equal(real_api.kinds(m->a, wid, k, nk, m->now),
		    sched_ref_api.kinds(m->b, wid, k, nk, m->now));
	}
}

static void
ev_time(struct model *m)
{
	uint64_t	 dl = real_api.deadline(m->a);

	if (dl != UINT64_MAX && rn(2) == 0) {
		if (dl > m->now)
			m->now = dl;
		real_api.tick(m->a, m->now);
		sched_ref_api.tick(m->b, m->now);
	} else
		m->now += rn(30000000);
}

static void
run(uint64_t seed, size_t maxw, size_t startw, unsigned long events)
{
	struct sched_fault_config	 f;
	struct model			 m;
	enum sched_topology		 topo;
	size_t				 i;

	memset(&m, 0, sizeof(m));
	rs = seed;
	m.now = 1000000000ULL;
	m.maxw = maxw;
	m.wids = calloc(maxw, sizeof(*m.wids));
	m.nexttask = 1;
	assert_non_null(m.wids);
	m.a = real_api.mk();
	m.b = sched_ref_api.mk();
	assert_non_null(m.a);
	assert_non_null(m.b);
	memset(&f, 0, sizeof(f));
	f.grace_ns = 20000000;
	f.suspect_limit = 1 + (uint32_t)rn(3);
	f.suspect_window_ns = 2000000000ULL;
	f.cooldown_ns = 50000000 + rn(400000000);
	real_api.fault(m.a, &f);
	sched_ref_api.fault(m.b, &f);
	topo = (enum sched_topology)rn(SCHED_TOPO_COUNT);
	real_api.balance(m.a, 100000000, topo, m.now);
	sched_ref_api.balance(m.b, 100000000, topo, m.now);
	for (i = 0; i < startw; i++)
		ev_join(&m);
	drain(&m);
	for (m.nevents = 0; m.nevents < events; m.nevents++) {
		switch (rn(40)) {
		case 0: case 1:
			ev_join(&m);
			break;
		case 2:
			ev_lost(&m);
			break;
		case 3:
			ev_worker_other(&m, 0);
			break;
		case 4:
			if (rn(4) == 0)
				ev_worker_other(&m, 1);
			break;
		case 5: case 6:
			if (m.nbat < 3 || rn(4) == 0)
				ev_batch(&m);
			break;
		case 7:
			ev_batch_other(&m, 0);
			break;
		case 8:
			ev_batch_other(&m, 1);
			break;
		case 9:
			if (rn(10) == 0)
				ev_batch_other(&m, 2);
			break;
		case 10: case 11: case 12: case 13: case 14:
			ev_copy(&m, 0);
			break;
		case 15: case 16: case 17:
			ev_copy(&m, 1);
			break;
		case 18:
			ev_copy(&m, 3);
			break;
		case 19: case 20:
			ev_released(&m);
			break;
		case 21: case 22: case 23: case 24: case 25:
			ev_time(&m);
			break;
		default:
			ev_result(&m);
			break;
		}
		drain(&m);
	}
	real_api.fr(m.a);
	sched_ref_api.fr(m.b);
	free(m.wids);
	free(m.out);
	print_message("seed %llu: %lu events, %lu actions the same\n",
	    (unsigned long long)seed, events, m.nactions);
}

/* Few workers: kinds, pauses and losses matter more than numbers. */
static void
test_ref_small(void **state)
{
	uint64_t	 seed;

	(void)state;
	for (seed = 1; seed <= 40; seed++)
		run(seed * 0x9e3779b97f4a7c15ULL, 12, 3, 3000);
}

/*
 * Batches of kinds no worker runs, or few do, beside the others: the
 * core finds work, drained batches and stranded tasks through its
 * indexes, the reference by walking every batch.
 */
static void
test_ref_kinds(void **state)
{
	uint64_t	 seed;

	(void)state;
	wide = 1;
	for (seed = 1; seed <= 30; seed++)
		run(seed * 0xd1b54a32d192ed03ULL, 12, 4, 3000);
	wide = 0;
}

/* Over 64 workers: the sets have two levels. */
static void
test_ref_medium(void **state)
{
	uint64_t	 seed;

	(void)state;
	for (seed = 1; seed <= 6; seed++)
		run(seed * 0x2545f4914f6cdd1dULL, 300, 150, 6000);
}

/* Over 4,096 workers: three levels. */
static void
test_ref_large(void **state)
{
	(void)state;
	run(0x5eed, 4300, 4200, 1500);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ref_small),
		cmocka_unit_test(test_ref_kinds),
		cmocka_unit_test(test_ref_medium),
		cmocka_unit_test(test_ref_large),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}

/*
 * The bnb job driver: branch and bound for the permutation flow shop
 * (common/bnb/pfsp.h, "How the master's bnb driver is meant to use it").
 * The master keeps the pool of open subproblems, best bound first; a job
 * has one open batch of "pfsp" tasks, and a subproblem popped from the
 * pool becomes a task of it, its bound as priority (the core runs lower
 * priorities first).  At most bj_cap subproblems are out at once, so that
 * the pool, not the workers' queues, decides what is explored next.  A
 * task's payload is encoded when it is sent, with the incumbent known
 * then.  Its output gives the nodes it explored, a better permutation if
 * it found one, and its open frontier, which goes back into the pool.
 * The job is done, and the makespan proved optimal, when the pool is
 * empty and nothing is out.
 *
 * Protocol 6: a worker's better makespan comes as news
 * (TaskNews) before its task ends; checked, it prunes the pool and is
 * pushed (TaskPush) at once to every worker for every task out, which
 * prune with it at their next node (incumbent exchange, by push).  When the pool is empty and CPUs offering
 * pfsp are idle, running tasks are asked to donate the open nodes
 * nearest their root (they stop exploring them): no node is explored
 * twice (BnbStats.duplicated stays 0 without copies).  --resplit keeps
 * the older way instead, for the comparison: a running task's
 * subproblem is split at the master and its children sent while it runs
 * on, its frontier thrown away when it ends, its nodes counted as
 * duplicated.  Multiplicity (doc/algorithms.md §3.1) is the core's copies
 * of a task; no_interrupt leaves the losers running (keep_copies), and
 * the nodes of the outputs of copies that lost count as duplicated.
 *
 * The journal keeps the job's parameters and, every BJ_SAVE_NS at most,
 * a snapshot of the search (BnbState): the incumbent and every open
 * subproblem, in the pool or out.  A resumed job starts again from the
 * last snapshot: what was explored after it is explored again, nothing
 * is lost, and the answer is still optimal.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bnb/pfsp.h"
#include "journal.h"
#include "log.h"
#include "masterd.h"
#include "util.h"

#include "job_bnb.h"

extern const struct job_driver job_bnb_driver;

static void	bnb_job_pump(struct job *);

/* The CPUs of the workers that offer pfsp now. */
static size_t
bnb_job_cpus(void)
{
	const struct worker	*w;
	size_t			 cpus = 0, k;
	uint32_t		 i, kind;

	if (kind_find("pfsp", &kind) == 0)
		for (i = 0; (w = worker_next(&i)) != NULL;) {
			for (k = 0; k < w->w_nkinds; k++)
				if (w->w_kinds[k] == kind) {
					cpus += w->w_cpus;
					break;
				}
		}
	return (cpus);
}

/*
 * How many subproblems may be out at once: max_out, or twice the CPUs of
 * the workers that offer pfsp now (one running and one waiting on each),
 * at least BJ_CAP_MIN.
 */
static size_t
bnb_job_cap(const struct job *j)
{
	size_t	 cpus;

	if (BJ(j)->bj_params.max_out > 0)
		return (BJ(j)->bj_params.max_out);
	cpus = bnb_job_cpus();
	return (2 * cpus > BJ_CAP_MIN ? 2 * cpus : BJ_CAP_MIN);
}

/* Task idx (id) is out. */
static void
bnb_live_add(struct bnb_job *bj, size_t idx, uint64_t id, uint32_t copies)
{
	if (bj->bj_nout >= bj->bj_livecap) {
		bj->bj_livecap = bj->bj_livecap ? 2 * bj->bj_livecap : 64;
		if ((bj->bj_live = reallocarray(bj->bj_live, bj->bj_livecap,
		    sizeof(*bj->bj_live))) == NULL)
			fatal("%s", __func__);
	}
	bj->bj_live[bj->bj_nout].l_idx = idx;
	bj->bj_live[bj->bj_nout].l_id = id;
	bj->bj_live[bj->bj_nout].l_copies = copies;
	bj->bj_ncopies += copies;
	bj->bj_nout++;
}

/* Task idx is over: out of bj_out and bj_live. */
static void
bnb_live_del(struct bnb_job *bj, size_t idx)
{
	size_t	 i;

	bj->bj_out[idx] = NULL;
	if (bj->bj_flags[idx] & BJF_ASKED)
		bj->bj_nasked--;
	bj->bj_flags[idx] = 0;
	for (i = 0; i < bj->bj_nout; i++)
		if (bj->bj_live[i].l_idx == idx) {
			bj->bj_ncopies -= bj->bj_live[i].l_copies;
			memmove(bj->bj_live + i, bj->bj_live + i + 1,
			    (bj->bj_nout - i - 1) * sizeof(*bj->bj_live));
			bj->bj_nout--;
			return;
		}
	fatalx("%s: task %zu is not out", __func__, idx);
}

/*
 * Send a TaskPush to every worker that offers pfsp: the incumbent for
 * every task out (a worker applies it to those it has), and the tasks in
 * donate asked to donate.  Pushed to all rather than to the holders: the
 * core keeps where copies are, and a push is a few bytes a task.
 */
static void
bnb_job_push(struct job *j, const uint64_t *donate, size_t ndonate)
{
	struct bnb_job	*bj = BJ(j);
	struct worker	*w;
	uint64_t	*ids;
	uint32_t	 i, kind;
	size_t		 k, n = bj->bj_nout;

	if (n == 0 || kind_find("pfsp", &kind) == -1)
		return;
	ids = xcalloc(n, sizeof(*ids));
	for (k = 0; k < n; k++)
		ids[k] = bj->bj_live[k].l_id;
	for (i = 0; (w = worker_next(&i)) != NULL;) {
		for (k = 0; k < w->w_nkinds; k++)
			if (w->w_kinds[k] == kind)
				break;
		if (k == w->w_nkinds)
			continue;
		job_push(w, ids, n, bj->bj_inc != BNB_NONE ?
		    (uint32_t)bj->bj_inc : 0, donate, ndonate);
		bj->bj_stats.pushes++;
	}
	free(ids);
}

/*
 * The pool ran dry and CPUs are idle: ask that many running tasks to
 * donate (the oldest first, not asked yet, of one copy), or, under
 * resplit, re-split them here (the older way); returns how many were
 * re-split.
 */
static size_t
bnb_job_starve(struct job *j)
{
	struct bnb_job	*bj = BJ(j);
	struct bnb_sub	*s;
	uint64_t	*ask, nodes = 0;
	size_t		 cpus, want, n = 0, i, k;
	int32_t		 inc;
	char		 err[128];

	cpus = bnb_job_cpus();
	if (bnb_pool_size(bj->bj_pool) > 0 || bj->bj_nout == 0 ||
	    bj->bj_ncopies + bj->bj_nasked >= cpus)
		return (0);
	want = cpus - bj->bj_ncopies - bj->bj_nasked;
	ask = xcalloc(bj->bj_nout, sizeof(*ask));
	for (i = 0; i < bj->bj_nout && n < want; i++) {
		k = bj->bj_live[i].l_idx;
		if (bj->bj_flags[k] & (BJF_ASKED | BJF_RESPLIT | BJF_COPIES))
			continue;
		if (!bj->bj_params.resplit) {
			bj->bj_flags[k] |= BJF_ASKED;
			bj->bj_nasked++;
			ask[n++] = bj->bj_live[i].l_id;
			continue;
		}
		/* --resplit (doc/algorithms.md §5): split it as it runs. */
		s = bj->bj_out[k];
		inc = bj->bj_inc;
		if (bnb_split(bj->bj_pb, s, s->depth + s->back + 1, &inc,
		    bj->bj_perm, bj->bj_pool, &nodes, err, sizeof(err)) == -1)
			fatalx("%s: %s", __func__, err);
		bj->bj_inc = inc;
		bj->bj_flags[k] |= BJF_RESPLIT;
		bj->bj_stats.resplits++;
		n++;
	}
	bj->bj_nodes += nodes;
	if (n > 0 && !bj->bj_params.resplit)
		bnb_job_push(j, ask, n);
	free(ask);
	return (bj->bj_params.resplit ? n : 0);
}

/* Room in bj_out for task index idx. */
static void
bnb_job_grow(struct bnb_job *bj, size_t idx)
{
	size_t	 cap;

	if (idx < bj->bj_outcap)
		return;
	for (cap = bj->bj_outcap ? bj->bj_outcap : 64; cap <= idx; cap *= 2)
		;
	if ((bj->bj_out = reallocarray(bj->bj_out, cap,
	    sizeof(*bj->bj_out))) == NULL ||
	    (bj->bj_flags = realloc(bj->bj_flags, cap)) == NULL)
		fatal("%s", __func__);
	memset(bj->bj_out + bj->bj_outcap, 0, (cap - bj->bj_outcap) *
	    sizeof(*bj->bj_out));
	memset(bj->bj_flags + bj->bj_outcap, 0, cap - bj->bj_outcap);
	bj->bj_outcap = cap;
}

/* Journal the job's row with a snapshot of its search. */
void
bnb_job_save(struct job *j)
{
	BJ(j)->bj_saved = mono_ns();
	job_journal_put(j);
}

/*
 * Send subproblems from the pool until bj_cap are out; with none out and
 * none left, the search is over: close the batch, and the job ends when
 * the core says it is done.
 */
static void
bnb_job_pump(struct job *j)
{
	struct bnb_job		*bj = BJ(j);
	const R3q__BnbParams	*p = &bj->bj_params;
	struct job_batch	*b;
	struct sched_task	 t;
	struct bnb_sub		*s;
	size_t			 cap, idx, i, rank;
	uint32_t		 copies;

	if (j->j_state != JOB_RUNNING || bj->bj_batch == NULL ||
	    bj->bj_batch->b_closed)
		return;
	bnb_pool_prune(bj->bj_pool, bj->bj_inc);
	cap = bnb_job_cap(j);
	/* Copies count: a task's copies need room on the workers too. */
	while (bj->bj_ncopies < cap && (s = bnb_pool_pop(bj->bj_pool)) !=
	    NULL) {
		if (s->lb >= bj->bj_inc) {
			free(s);
			continue;
		}
		/* Copies by the bound's rank among those open (§3.1). */
		copies = 1;
		if (p->n_multiplicity > 0) {
			for (i = rank = 0; i < bj->bj_nout; i++)
				if (bj->bj_out[bj->bj_live[i].l_idx]->lb <
				    s->lb)
					rank++;
			copies = p->multiplicity[rank < p->n_multiplicity ?
			    rank : p->n_multiplicity - 1];
		}
		if (bj->bj_nout > 0 && bj->bj_ncopies + copies > cap) {
			if (bnb_pool_push(bj->bj_pool, s) == -1)
				fatal("%s", __func__);
			break;
		}
		idx = bj->bj_batch->b_n;
		bnb_job_grow(bj, idx);
		bj->bj_out[idx] = s;
		bj->bj_flags[idx] = copies > 1 ? BJF_COPIES : 0;
		memset(&t, 0, sizeof(t));
		t.id = job_batch_reserve(bj->bj_batch, 0, 1);
		t.priority = s->lb;
		t.copies = copies;
		bnb_live_add(bj, idx, t.id, copies);
		bj->bj_stats.copies += copies - 1;
		job_batch_submit(bj->bj_batch, &t, 1);
	}
	/* A re-split fills the pool: send its children. */
	if (bnb_job_starve(j) > 0 && bnb_pool_size(bj->bj_pool) > 0) {
		bnb_job_pump(j);
		return;
	}
	if (bj->bj_nout > 0)
		return;
	bj->bj_proved = 1;
	log_info("job %llu: search over, makespan %" PRId32 " proved after "
	    "%" PRIu64 " nodes in %" PRIu64 " tasks",
	    (unsigned long long)j->j_id, bj->bj_inc, bj->bj_nodes,
	    bj->bj_tasks);
	if (bj->bj_batch->b_n == 0) {
		/* Nothing was ever sent: the known bound was the root's. */
		b = bj->bj_batch;
		bj->bj_batch = NULL;
		job_batch_finished(b);
		return;
	}
	job_batch_close(bj->bj_batch);
}

/* Open the job's batch and send its first subproblems. */
void
bnb_job_start(struct job *j)
{
	struct bnb_job	*bj = BJ(j);

	bj->bj_batch = job_batch_open(j, kind_intern("pfsp"), 0);
	bnb_job_pump(j);
}

/* Check a client's parameters and start a bnb job; NULL with a message. */
static struct job *
job_bnb_submit(const Envelope *env, const char *owner, char *err,
    size_t errlen)
{
	const R3q__BnbParams	*p = env->submit_bnb->params;
	struct job_sched	 js;
	struct job		*j;
	struct bnb_job		*bj;
	struct bnb_sub		*root;
	uint64_t		 nodes = 0;
	int32_t			 inc;
	size_t			 len;

	(void)owner;
	if (p == NULL) {
		snprintf(err, errlen, "submit without parameters");
		return (NULL);
	}
	/* Not the master's default policy: rwq suits a search. */
	job_sched_default(&js);
	js.js_policy = SCHED_POLICY_RWQ;
	js.js_verify = 1;
	if (job_sched_parse(&js, p->policy, p->queue_factor, NULL, 0, err,
	    errlen) == -1)
		return (NULL);
	if ((len = bnb_payload_len(p->jobs, p->machines, p->jobs)) >
	    md->conf.max_payload) {
		snprintf(err, errlen, "a task of %u jobs and %u machines is "
		    "up to %zu bytes, over max_payload (%llu)", p->jobs,
		    p->machines, len, (unsigned long long)md->conf.max_payload);
		return (NULL);
	}
	/* An output: a permutation, a path and a whole DFS stack at most. */
	if ((len = BNB_RESULT_HEAD + 4 * (size_t)p->jobs + 8 *
	    ((size_t)p->jobs * (p->jobs + 1) / 2)) > md->conf.max_payload) {
		snprintf(err, errlen, "the output of a task of %u jobs is up "
		    "to %zu bytes, over max_payload (%llu)", p->jobs, len,
		    (unsigned long long)md->conf.max_payload);
		return (NULL);
	}
	bj = xcalloc(1, sizeof(*bj));
	r3q__bnb_stats__init(&bj->bj_stats);
	bnb_job_copy(bj, p);
	if (bnb_job_problem(bj, err, errlen) == -1) {
		bnb_job_free_ds(bj);
		return (NULL);
	}
	if ((bj->bj_pool = bnb_pool_new()) == NULL ||
	    (root = bnb_sub_new(NULL, 0, bnb_bound(bj->bj_pb, NULL, 0))) ==
	    NULL)
		fatal("%s", __func__);
	/* The root split to split_depth into the first pool. */
	inc = bj->bj_inc;
	if (bnb_split(bj->bj_pb, root, bj->bj_params.split_depth, &inc,
	    bj->bj_perm, bj->bj_pool, &nodes, err, errlen) == -1)
		fatalx("%s: %s", __func__, err);
	free(root);
	bj->bj_inc = inc;
	bj->bj_nodes = nodes;
	bj->bj_stats.root_subproblems = (uint32_t)bnb_pool_size(bj->bj_pool);
	j = job_new(&job_bnb_driver, &js);
	j->j_ds = bj;
	j->j_keep_copies = bj->bj_params.no_interrupt;
	bnb_job_settle(j);
	bnb_job_start(j);
	return (j);
}

/* The payload of task idx: its subproblem with the incumbent of now. */
static void
bnb_job_task(struct job *j, struct job_batch *b, size_t idx, R3q__Task *t)
{
	struct bnb_job		*bj = BJ(j);
	const struct bnb_sub	*s;
	size_t			 len;

	(void)b;
	if (idx >= bj->bj_outcap || (s = bj->bj_out[idx]) == NULL) {
		/*
		 * A copy assigned earlier in this drain of a task whose
		 * result came since (multiplicity): the core's cancel of it
		 * follows and unsends it.  Were it sent, the worker would
		 * refuse the empty payload and its result be stale.
		 */
		log_debug("job %llu: task %zu is over: an empty payload",
		    (unsigned long long)j->j_id, idx);
		t->payload.len = 0;
		t->payload.data = NULL;
		return;
	}
	len = bnb_payload_len(bj->bj_inst.n, bj->bj_inst.m,
	    s->depth + s->back);
	t->payload.len = len;
	t->payload.data = job_scratch(len);
	if (bnb_payload_encode(t->payload.data, len, &bj->bj_inst,
	    (int)bj->bj_params.lb, (int)bj->bj_params.branching, bj->bj_inc,
	    bj->bj_params.node_budget, s) == -1)
		fatalx("%s: job %llu task %zu: payload", __func__,
		    (unsigned long long)j->j_id, idx);
	bnb_payload_set_exchange(t->payload.data, len,
	    bj->bj_params.exchange_ms);
}

/*
 * A permutation of makespan c (said by a worker) becomes the incumbent
 * if it is one and better: recomputed here first.  Returns 1 if it did,
 * 0 if not better, -1 with a message if it lies.
 */
static int
bnb_job_better(struct job *j, int32_t c, const uint16_t *perm, char *err,
    size_t errlen)
{
	struct bnb_job	*bj = BJ(j);
	int32_t		 cmax;

	if (c == BNB_NONE || c >= bj->bj_inc)
		return (0);
	cmax = bnb_makespan(&bj->bj_inst, perm, bj->bj_inst.n);
	if (cmax != c) {
		snprintf(err, errlen, "its permutation's makespan is %" PRId32
		    ", not %" PRId32, cmax, c);
		return (-1);
	}
	bj->bj_inc = c;
	memcpy(bj->bj_perm, perm, bj->bj_inst.n * sizeof(*bj->bj_perm));
	bnb_pool_prune(bj->bj_pool, bj->bj_inc);
	return (1);
}

/* Open nodes of res under the incumbent into the pool; how many. */
static size_t
bnb_job_take_frontier(struct bnb_job *bj, const struct bnb_result *res)
{
	struct bnb_sub	*c;
	size_t		 i, n = 0;

	for (i = 0; i < res->frontier.n; i++) {
		if (res->frontier.v[i].lb >= bj->bj_inc)
			continue;
		if ((c = bnb_frontier_sub(&res->frontier, i)) == NULL ||
		    bnb_pool_push(bj->bj_pool, c) == -1)
			fatal("%s", __func__);
		n++;
	}
	return (n);
}

/* The job fails: a task's output cannot be trusted or the kind fails. */
static void
bnb_job_fail(struct job *j, const char *what, size_t idx, const char *why)
{
	snprintf(j->j_error, sizeof(j->j_error), "task %zu: %s%s", idx, what,
	    why);
	log_warnx("job %llu failed: %s", (unsigned long long)j->j_id,
	    j->j_error);
	job_abort(j, JOB_FAILED);
}

/*
 * Task idx ended.  An output: its nodes count, a better permutation (its
 * makespan checked) becomes the incumbent and prunes the pool, and the
 * open nodes under the incumbent go back into the pool.  Lost (killed)
 * or cancelled: its subproblem goes back whole.  A kind that failed on
 * every machine would fail again: the job fails.
 */
static void
bnb_job_result(struct job *j, struct job_batch *b, size_t idx, uint64_t seq,
    uint32_t st, const void *out, size_t len, const char *why)
{
	struct bnb_job		*bj = BJ(j);
	struct bnb_result	*res;
	struct bnb_sub		*s;
	char			 err[160];
	int			 better;
	uint8_t			 flags;

	(void)b;
	(void)seq;
	if (idx >= bj->bj_outcap || (s = bj->bj_out[idx]) == NULL)
		return;
	flags = bj->bj_flags[idx];
	bnb_live_del(bj, idx);
	if (j->j_state != JOB_RUNNING || bj->bj_pool == NULL) {
		free(s);
		return;
	}
	switch (st) {
	case OUTCOME_OK:
		break;
	case OUTCOME_KILLED:
	case OUTCOME_CANCELLED:
		log_info("job %llu: task %zu lost (%s); its subproblem goes "
		    "back to the pool", (unsigned long long)j->j_id, idx,
		    why != NULL ? why : "cancelled");
		if ((flags & BJF_RESPLIT) != 0)
			free(s);	/* its children are out already */
		else if (bnb_pool_push(bj->bj_pool, s) == -1)
			fatal("%s", __func__);
		bnb_job_pump(j);
		return;
	default:
		free(s);
		bnb_job_fail(j, "", idx, why != NULL ? why : "failed");
		return;
	}
	res = xcalloc(1, sizeof(*res));
	if (bnb_result_decode(out, len, bj->bj_inst.n, s, res, err,
	    sizeof(err)) == -1 || res->stop == BNB_SHARED) {
		if (res->stop == BNB_SHARED)
			snprintf(err, sizeof(err), "news, not an output");
		free(s);
		bnb_result_free(res);
		free(res);
		bnb_job_fail(j, "unreadable output: ", idx, err);
		return;
	}
	free(s);
	bj->bj_nodes += res->nodes;
	bj->bj_tasks++;
	bj->bj_stats.pruned_pushed += res->pruned;
	if ((better = bnb_job_better(j, res->best, res->perm, err,
	    sizeof(err))) == -1) {
		bnb_result_free(res);
		free(res);
		bnb_job_fail(j, "", idx, err);
		return;
	}
	if (better)
		log_info("job %llu: makespan %" PRId32 " (task %zu)",
		    (unsigned long long)j->j_id, bj->bj_inc, idx);
	if (flags & BJF_RESPLIT) {
		/*
		 * --resplit (doc/algorithms.md §5): its subtree went out
		 * again split, so what it explored is explored twice (but
		 * its own root) and what it left open is open there too.
		 */
		bj->bj_stats.duplicated += res->nodes > 0 ? res->nodes - 1 :
		    0;
	} else
		(void)bnb_job_take_frontier(bj, res);
	bnb_result_free(res);
	free(res);
	bnb_job_pump(j);
	if (better)
		bnb_job_push(j, NULL, 0);
	if (j->j_state == JOB_RUNNING && mono_ns() - bj->bj_saved >=
	    BJ_SAVE_NS)
		bnb_job_save(j);
}

/*
 * News of running task idx from worker w: a better makespan, checked,
 * becomes the incumbent and goes to every worker at once; nodes it gave
 * away on request go into the pool (decoded against its subproblem, so
 * they are its own).  A worker whose news does not decode or lies is
 * named and ignored: its task's output is checked again at its end.
 */
static void
bnb_job_news(struct job *j, struct job_batch *b, size_t idx,
    struct worker *w, const void *data, size_t len)
{
	struct bnb_job		*bj = BJ(j);
	struct bnb_result	*res;
	struct bnb_sub		*s;
	char			 err[160];
	size_t			 n;
	int			 better;

	(void)b;
	if (j->j_state != JOB_RUNNING || bj->bj_pool == NULL ||
	    idx >= bj->bj_outcap || (s = bj->bj_out[idx]) == NULL)
		return;
	res = xcalloc(1, sizeof(*res));
	if (bnb_result_decode(data, len, bj->bj_inst.n, s, res, err,
	    sizeof(err)) == -1 || res->stop != BNB_SHARED ||
	    (better = bnb_job_better(j, res->best, res->perm, err,
	    sizeof(err))) == -1) {
		if (res->stop != BNB_SHARED)
			snprintf(err, sizeof(err), "not news");
		log_warnx("job %llu: worker %s: news of task %zu: %s",
		    (unsigned long long)j->j_id, w->w_name, idx, err);
		bnb_result_free(res);
		free(res);
		return;
	}
	bj->bj_stats.news++;
	if (better) {
		bj->bj_stats.improved++;
		log_info("job %llu: makespan %" PRId32 " (news of task %zu "
		    "from %s)", (unsigned long long)j->j_id, bj->bj_inc, idx,
		    w->w_name);
	}
	if (res->frontier.n > 0) {
		n = bnb_job_take_frontier(bj, res);
		bj->bj_stats.donations++;
		bj->bj_stats.donated += n;
		if (bj->bj_flags[idx] & BJF_ASKED) {
			bj->bj_flags[idx] &= ~BJF_ASKED;
			bj->bj_nasked--;
		}
		log_debug("job %llu: task %zu donated %zu nodes",
		    (unsigned long long)j->j_id, idx, n);
	}
	bnb_result_free(res);
	free(res);
	bnb_job_pump(j);
	if (better)
		bnb_job_push(j, NULL, 0);
}

/* A copy that lost the race gave its output: its nodes were twice. */
static void
bnb_job_lost(struct job *j, struct job_batch *b, size_t idx,
    const void *out, size_t len)
{
	uint64_t	 nodes;

	(void)b;
	(void)idx;
	if (bnb_result_nodes(out, len, &nodes) == -1)
		return;
	BJ(j)->bj_stats.lost_copies++;
	BJ(j)->bj_stats.duplicated += nodes;
}

/* The search's batch is over. */
static void
bnb_job_batch_done(struct job *j, struct job_batch *b, struct gen_report *g)
{
	(void)b;
	g->g_best = BJ(j)->bj_inc != BNB_NONE ? BJ(j)->bj_inc : 0;
}

/* ... and the job with it: the search is over. */
static void
bnb_job_next(struct job *j, struct job_batch *b)
{
	(void)b;
	BJ(j)->bj_batch = NULL;
	if (j->j_state == JOB_RUNNING)
		job_end(j, JOB_DONE);
}

/* Open subproblems: the pool's and those out. */
static uint64_t
bnb_job_open(const struct bnb_job *bj)
{
	return ((bj->bj_pool != NULL ? bnb_pool_size(bj->bj_pool) : 0) +
	    bj->bj_nout);
}

/* Its parameters and its answer so far (permutation: 0-based jobs). */
static void
bnb_job_info(const struct job *j, R3q__JobInfo *info, int full)
{
	struct bnb_job	*bj = BJ(j);
	uint32_t	 i;

	(void)full;
	info->bnb = &bj->bj_params;
	info->nodes = bj->bj_nodes;
	info->bnb_tasks = bj->bj_tasks;
	info->proved = bj->bj_proved;
	info->pool = bnb_job_open(bj);
	info->bnb_stats = &bj->bj_stats;
	if (bj->bj_inc == BNB_NONE)
		return;
	info->makespan = (uint32_t)bj->bj_inc;
	info->best = bj->bj_inc;
	for (i = 0; i < bj->bj_inst.n; i++)
		bj->bj_perm32[i] = bj->bj_perm[i];
	info->n_permutation = bj->bj_inst.n;
	info->permutation = bj->bj_perm32;
}

/* The job ended: the search's memory goes, the answer stays. */
static void
bnb_job_end(struct job *j)
{
	struct bnb_job	*bj = BJ(j);
	size_t		 i;

	for (i = 0; i < bj->bj_outcap; i++) {
		free(bj->bj_out[i]);
		bj->bj_out[i] = NULL;
		bj->bj_flags[i] = 0;
	}
	bj->bj_nout = 0;
	bj->bj_nasked = 0;
	bj->bj_ncopies = 0;
	bnb_pool_free(bj->bj_pool);
	bj->bj_pool = NULL;
	bnb_problem_free(bj->bj_pb);
	bj->bj_pb = NULL;
	bj->bj_batch = NULL;
}

/* Free a driver state, attached to a job or not. */
void
bnb_job_free_ds(struct bnb_job *bj)
{
	size_t		 i;

	for (i = 0; i < bj->bj_outcap; i++)
		free(bj->bj_out[i]);
	free(bj->bj_out);
	free(bj->bj_flags);
	free(bj->bj_live);
	free(bj->bj_params.multiplicity);
	bnb_pool_free(bj->bj_pool);
	bnb_problem_free(bj->bj_pb);
	bnb_instance_free(&bj->bj_inst);
	free(bj->bj_params.problem);
	free(bj->bj_params.times);
	free(bj->bj_params.name);
	free(bj->bj_params.upper_perm);
	free(bj->bj_params.policy);
	free(bj);
}

/* The job is forgotten. */
static void
bnb_job_free(struct job *j)
{
	if (BJ(j) == NULL)
		return;
	bnb_job_free_ds(BJ(j));
	j->j_ds = NULL;
}

const struct job_driver job_bnb_driver = {
	.d_name = "bnb",
	.d_flags = JD_DROP_RESULTS,
	.d_body = R3Q__ENVELOPE__BODY_SUBMIT_BNB,
	.d_submit = job_bnb_submit,
	.d_task = bnb_job_task,
	.d_result = bnb_job_result,
	.d_batch_done = bnb_job_batch_done,
	.d_next = bnb_job_next,
	.d_info = bnb_job_info,
	.d_params = bnb_job_pack,
	.d_state = bnb_job_state,
	.d_load = job_bnb_load,
	.d_end = bnb_job_end,
	.d_free = bnb_job_free,
	.d_news = bnb_job_news,
	.d_lost = bnb_job_lost,
};

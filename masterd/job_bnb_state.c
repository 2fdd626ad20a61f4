/*
 * The bnb driver's parameters and journal: a client's BnbParams copied
 * and checked into the problem (bnb_job_problem()), packed as the job's
 * parameters, and the search's snapshot (BnbState) a resumed job starts
 * again from (job_bnb_load()).  The search itself is job_bnb.c's.
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

/* Copy what a client sent into bj's own parameters. */
void
bnb_job_copy(struct bnb_job *bj, const R3q__BnbParams *p)
{
	R3q__BnbParams	*q = &bj->bj_params;

	r3q__bnb_params__init(q);
	q->problem = xstrdup("pfsp");
	q->jobs = p->jobs;
	q->machines = p->machines;
	q->n_times = p->n_times;
	q->times = xcalloc(p->n_times + 1, sizeof(*q->times));
	if (p->n_times > 0)
		memcpy(q->times, p->times, p->n_times * sizeof(*q->times));
	q->name = xstrdup(p->name != NULL ? p->name : "");
	q->lb = p->lb;
	q->branching = p->branching;
	q->node_budget = p->node_budget;
	q->upper_bound = p->upper_bound;
	q->n_upper_perm = p->n_upper_perm;
	q->upper_perm = xcalloc(p->n_upper_perm + 1, sizeof(*q->upper_perm));
	if (p->n_upper_perm > 0)
		memcpy(q->upper_perm, p->upper_perm,
		    p->n_upper_perm * sizeof(*q->upper_perm));
	q->policy = NULL;	/* not protobuf-c's empty string: freed */
	q->queue_factor = p->queue_factor;
	q->max_out = p->max_out;
	q->instance = p->instance;
	q->n_multiplicity = p->n_multiplicity;
	q->multiplicity = xcalloc(p->n_multiplicity + 1,
	    sizeof(*q->multiplicity));
	if (p->n_multiplicity > 0)
		memcpy(q->multiplicity, p->multiplicity, p->n_multiplicity *
		    sizeof(*q->multiplicity));
	q->no_interrupt = p->no_interrupt;
	q->split_depth = p->split_depth;
	q->exchange_ms = p->exchange_ms;
	q->resplit = p->resplit;
}

/* The job's own settings into its parameters, as journaled. */
void
bnb_job_settle(struct job *j)
{
	R3q__BnbParams	*q = &BJ(j)->bj_params;

	free(q->policy);
	q->policy = xstrdup(sched_policy_name(j->j_policy));
	q->queue_factor = j->j_qf;
	snprintf(j->j_name, sizeof(j->j_name), "%s", q->name);
}

/*
 * The instance and the problem of the job's parameters, and the known
 * upper bound as incumbent; -1 with a message if they make no problem.
 */
int
bnb_job_problem(struct bnb_job *bj, char *err, size_t errlen)
{
	const R3q__BnbParams	*p = &bj->bj_params;
	uint32_t		 i;
	int32_t			 c;

	if (p->problem == NULL || strcmp(p->problem, "pfsp") != 0) {
		snprintf(err, errlen, "unknown problem '%s' (pfsp)",
		    p->problem != NULL ? p->problem : "");
		return (-1);
	}
	if (p->jobs < 1 || p->jobs > BNB_MAX_JOBS || p->machines < 1 ||
	    p->machines > BNB_MAX_MACHINES) {
		snprintf(err, errlen, "%u jobs and %u machines: from 1 to %d "
		    "jobs and 1 to %d machines", p->jobs, p->machines,
		    BNB_MAX_JOBS, BNB_MAX_MACHINES);
		return (-1);
	}
	if (p->n_times != (size_t)p->jobs * p->machines) {
		snprintf(err, errlen, "%zu processing times for %u jobs and "
		    "%u machines", p->n_times, p->jobs, p->machines);
		return (-1);
	}
	if (p->lb != BNB_LB1 && p->lb != BNB_LB2) {
		snprintf(err, errlen, "lb must be 1 or 2");
		return (-1);
	}
	if (p->branching != BNB_FORWARD && p->branching != BNB_BIDIR) {
		snprintf(err, errlen, "branching must be 1 (forward) or 2 "
		    "(bidir)");
		return (-1);
	}
	if (p->max_out > BJ_CAP_MAX) {
		snprintf(err, errlen, "max_out must be at most %d",
		    BJ_CAP_MAX);
		return (-1);
	}
	if (p->n_multiplicity > BJ_MULT_MAX) {
		snprintf(err, errlen, "multiplicity has %zu entries, at most "
		    "%d", p->n_multiplicity, BJ_MULT_MAX);
		return (-1);
	}
	for (i = 0; i < p->n_multiplicity; i++)
		if (p->multiplicity[i] < 1 ||
		    p->multiplicity[i] > SCHED_COPIES_MAX) {
			snprintf(err, errlen, "multiplicity %u: copies of a "
			    "task go from 1 to %d", p->multiplicity[i],
			    SCHED_COPIES_MAX);
			return (-1);
		}
	if (p->split_depth > BJ_SPLIT_MAX) {
		snprintf(err, errlen, "split_depth %u: at most %d",
		    p->split_depth, BJ_SPLIT_MAX);
		return (-1);
	}
	memset(&bj->bj_inst, 0, sizeof(bj->bj_inst));
	bj->bj_inst.n = p->jobs;
	bj->bj_inst.m = p->machines;
	bj->bj_inst.seed = -1;
	bj->bj_inst.ub = -1;
	bj->bj_inst.lb = -1;
	bj->bj_inst.index = p->instance;
	bj->bj_inst.p = xcalloc(p->n_times, sizeof(int32_t));
	for (i = 0; i < p->n_times; i++) {
		if (p->times[i] > BNB_MAX_TIME) {
			snprintf(err, errlen, "processing time %u is over %d",
			    p->times[i], BNB_MAX_TIME);
			return (-1);
		}
		bj->bj_inst.p[i] = (int32_t)p->times[i];
	}
	if ((bj->bj_pb = bnb_problem_make(&bj->bj_inst, (int)p->lb,
	    (int)p->branching, err, errlen)) == NULL)
		return (-1);
	bj->bj_inc = BNB_NONE;
	if (p->n_upper_perm == 0)
		return (0);
	/* A known permutation: its makespan, recomputed, is the incumbent. */
	if (p->n_upper_perm != p->jobs) {
		snprintf(err, errlen, "upper_perm has %zu jobs, not %u",
		    p->n_upper_perm, p->jobs);
		return (-1);
	}
	for (i = 0; i < p->jobs; i++) {
		if (p->upper_perm[i] >= p->jobs)
			break;
		bj->bj_perm[i] = (uint16_t)p->upper_perm[i];
	}
	if (i < p->jobs || bnb_perm_check(bj->bj_perm, p->jobs,
	    p->jobs) == -1) {
		snprintf(err, errlen, "upper_perm is not a permutation of the "
		    "%u jobs", p->jobs);
		return (-1);
	}
	c = bnb_makespan(&bj->bj_inst, bj->bj_perm, p->jobs);
	if (p->upper_bound != 0 && (uint32_t)c != p->upper_bound) {
		snprintf(err, errlen, "upper_perm's makespan is %" PRId32
		    ", not upper_bound %u", c, p->upper_bound);
		return (-1);
	}
	bj->bj_inc = c;
	return (0);
}

/* Its parameters for the journal: BnbParams, settled. */
uint8_t *
bnb_job_pack(const struct job *j, size_t *len)
{
	uint8_t	*p;

	*len = r3q__bnb_params__get_packed_size(&BJ(j)->bj_params);
	p = xcalloc(1, *len + 1);
	r3q__bnb_params__pack(&BJ(j)->bj_params, p);
	return (p);
}

/* Append subproblem s to the snapshot at *p. */
static uint8_t *
bnb_job_put_sub(uint8_t *p, const struct bnb_sub *s)
{
	uint32_t	 v = (uint32_t)s->lb, i;

	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
	p[4] = (uint8_t)s->depth;
	p[5] = (uint8_t)(s->depth >> 8);
	p[6] = (uint8_t)s->back;
	p[7] = (uint8_t)(s->back >> 8);
	p += 8;
	for (i = 0; i < s->depth + s->back; i++, p += 2) {
		p[0] = (uint8_t)s->prefix[i];
		p[1] = (uint8_t)(s->prefix[i] >> 8);
	}
	return (p);
}

/*
 * The search's snapshot.  The memory stays until the next one (a
 * JobState is packed at once by the caller).
 */
void
bnb_job_state(const struct job *j, R3q__JobState *st)
{
	static R3q__BnbState	 bs;
	static uint32_t		*perm;
	static uint8_t		*subs;
	struct bnb_job		*bj = BJ(j);
	const struct bnb_sub	*s;
	size_t			 i, n, len = 0;
	uint8_t			*p;

	r3q__bnb_state__init(&bs);
	free(perm);
	free(subs);
	perm = NULL;
	subs = NULL;
	bs.nodes = bj->bj_nodes;
	bs.tasks = bj->bj_tasks;
	bs.proved = bj->bj_proved;
	bs.stats = &bj->bj_stats;
	if (bj->bj_inc != BNB_NONE) {
		bs.incumbent = (uint32_t)bj->bj_inc;
		perm = xcalloc(bj->bj_inst.n + 1, sizeof(*perm));
		for (i = 0; i < bj->bj_inst.n; i++)
			perm[i] = bj->bj_perm[i];
		bs.n_perm = bj->bj_inst.n;
		bs.perm = perm;
	}
	if (j->j_state == JOB_RUNNING && bj->bj_pool != NULL) {
		n = bnb_pool_size(bj->bj_pool);
		for (i = 0; i < n; i++) {
			s = bnb_pool_at(bj->bj_pool, i);
			len += 8 + 2 * (size_t)(s->depth + s->back);
		}
		for (i = 0; i < bj->bj_outcap; i++)
			if ((s = bj->bj_out[i]) != NULL)
				len += 8 + 2 * (size_t)(s->depth + s->back);
		p = subs = xcalloc(1, len + 1);
		for (i = 0; i < n; i++)
			p = bnb_job_put_sub(p, bnb_pool_at(bj->bj_pool, i));
		for (i = 0; i < bj->bj_outcap; i++)
			if ((s = bj->bj_out[i]) != NULL)
				p = bnb_job_put_sub(p, s);
		bs.subs.data = subs;
		bs.subs.len = len;
		bs.nsubs = n + bj->bj_nout;
	}
	st->bnb = &bs;
}

/*
 * The open subproblems of a snapshot into the pool; -1 with a message if
 * one is not a subproblem of an n-job instance.
 */
static int
bnb_job_load_subs(struct bnb_job *bj, const R3q__BnbState *bs, char *err,
    size_t errlen)
{
	const uint8_t	*p = bs->subs.data, *end = p + bs->subs.len;
	uint16_t	 jobs[BNB_MAX_JOBS];
	uint8_t		 seen[BNB_MAX_JOBS];
	uint32_t	 n = bj->bj_inst.n, depth, back, i;
	int32_t		 lb;
	struct bnb_sub	*s;
	size_t		 k = 0;

	while (p < end) {
		if (end - p < 8)
			goto bad;
		lb = (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 |
		    (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
		depth = (uint32_t)p[4] | (uint32_t)p[5] << 8;
		back = (uint32_t)p[6] | (uint32_t)p[7] << 8;
		p += 8;
		if (depth + back > n || (size_t)(end - p) < 2 * (depth + back))
			goto bad;
		memset(seen, 0, sizeof(seen));
		for (i = 0; i < depth + back; i++, p += 2) {
			jobs[i] = (uint16_t)(p[0] | p[1] << 8);
			if (jobs[i] >= n || seen[jobs[i]]++)
				goto bad;
		}
		if ((s = bnb_sub_make(jobs, depth, jobs + depth, back,
		    lb)) == NULL || bnb_pool_push(bj->bj_pool, s) == -1)
			fatal("%s", __func__);
		k++;
	}
	if (k != bs->nsubs)
		goto bad;
	return (0);
 bad:
	snprintf(err, errlen, "the snapshot's subproblem %zu is not one of "
	    "a %u-job instance", k, n);
	return (-1);
}

/*
 * A bnb job from the journal: its parameters, its answer and, if it
 * runs, its search from the last snapshot (the root's if none).
 */
int
job_bnb_load(struct job *j, const struct journal_job *row,
    const R3q__JobState *st, char *err, size_t errlen)
{
	struct bnb_job		*bj;
	const R3q__BnbState	*bs = st != NULL ? st->bnb : NULL;
	R3q__BnbParams		*p;
	enum sched_policy	 pol = SCHED_POLICY_R3Q;
	struct bnb_sub		*root;
	uint32_t		 i;

	j->j_ds = bj = xcalloc(1, sizeof(*bj));
	r3q__bnb_stats__init(&bj->bj_stats);
	bj->bj_inc = BNB_NONE;
	if ((p = r3q__bnb_params__unpack(NULL, row->paramslen,
	    row->params)) == NULL) {
		r3q__bnb_params__init(&bj->bj_params);
		/* ours to free (bnb_free), as job_es.c does */
		bj->bj_params.problem = xstrdup("?");
		bj->bj_params.name = xstrdup("?");
		bj->bj_params.policy = xstrdup("?");
		snprintf(err, errlen, "unreadable parameters");
		return (-1);
	}
	(void)sched_policy_parse(p->policy, &pol);
	j->j_policy = pol;
	j->j_qf = p->queue_factor;
	j->j_verify = 1;
	bnb_job_copy(bj, p);
	r3q__bnb_params__free_unpacked(p, NULL);
	j->j_keep_copies = bj->bj_params.no_interrupt;
	bnb_job_settle(j);
	if (st != NULL && st->name != NULL && st->name[0] != '\0')
		snprintf(j->j_name, sizeof(j->j_name), "%s", st->name);
	if (bnb_job_problem(bj, err, errlen) == -1)
		return (-1);
	if (bs != NULL && bs->stats != NULL) {
		bj->bj_stats.duplicated = bs->stats->duplicated;
		bj->bj_stats.donations = bs->stats->donations;
		bj->bj_stats.donated = bs->stats->donated;
		bj->bj_stats.news = bs->stats->news;
		bj->bj_stats.improved = bs->stats->improved;
		bj->bj_stats.pushes = bs->stats->pushes;
		bj->bj_stats.resplits = bs->stats->resplits;
		bj->bj_stats.lost_copies = bs->stats->lost_copies;
		bj->bj_stats.pruned_pushed = bs->stats->pruned_pushed;
		bj->bj_stats.root_subproblems = bs->stats->root_subproblems;
		bj->bj_stats.copies = bs->stats->copies;
	}
	if (bs != NULL) {
		bj->bj_nodes = bs->nodes;
		bj->bj_tasks = bs->tasks;
		bj->bj_proved = bs->proved;
		if (bs->incumbent != 0 && bs->n_perm == bj->bj_inst.n) {
			for (i = 0; i < bs->n_perm; i++)
				bj->bj_perm[i] = (uint16_t)(bs->perm[i] <
				    bj->bj_inst.n ? bs->perm[i] : 0);
			if (bnb_perm_check(bj->bj_perm, bj->bj_inst.n,
			    bj->bj_inst.n) == 0 && bnb_makespan(&bj->bj_inst,
			    bj->bj_perm, bj->bj_inst.n) ==
			    (int32_t)bs->incumbent)
				bj->bj_inc = (int32_t)bs->incumbent;
		}
	}
	if (j->j_state != JOB_RUNNING) {
		bnb_problem_free(bj->bj_pb);
		bj->bj_pb = NULL;
		return (0);
	}
	if ((bj->bj_pool = bnb_pool_new()) == NULL)
		fatal("%s", __func__);
	if (bs != NULL && bs->subs.len > 0) {
		if (bnb_job_load_subs(bj, bs, err, errlen) == -1)
			return (-1);
	} else if (bs == NULL || !bs->proved) {
		if ((root = bnb_sub_new(NULL, 0, bnb_bound(bj->bj_pb, NULL,
		    0))) == NULL || bnb_pool_push(bj->bj_pool, root) == -1)
			fatal("%s", __func__);
	}
	log_info("job %llu resumed with %zu open subproblems, makespan "
	    "%" PRId32 ", %" PRIu64 " nodes", (unsigned long long)j->j_id,
	    bnb_pool_size(bj->bj_pool), bj->bj_inc, bj->bj_nodes);
	bnb_job_start(j);
	if (j->j_state == JOB_RUNNING)
		bnb_job_save(j);
	return (0);
}

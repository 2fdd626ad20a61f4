/*
 * The es job driver: the (mu+lambda)-ES of the R3Q paper.  Each generation
 * is one batch of ridge-lu (or synth) tasks whose payload is an individual
 * (common/es/payload.h); when the batch is over the ES selects and the
 * next generation is submitted.  The ES draws its numbers from (seed,
 * generation, index) alone, so a job's answer does not depend on the
 * policy, the workers, their timing or a restart.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "es/es.h"
#include "es/payload.h"
#include "journal.h"
#include "log.h"
#include "masterd.h"
#include "util.h"

extern const struct job_driver job_es_driver;

#define LU_MAX		20000

/* The driver's state of a job. */
struct es_job {
	R3q__EsParams	 ej_params;
	struct es	*ej_es;
	double		 ej_best;	/* once finished */
	double		*ej_best_x;	/* once finished, dim doubles */
	/* A generation given to the core a chunk a loop pass: */
	struct job_batch *ej_pb;	/* its batch, NULL: none pending */
	uint64_t	*ej_pend;	/* its task ids */
	size_t		 ej_npend, ej_pendoff;
};

#define EJ_CHUNK	8192	/* tasks to the core in one loop pass, at
				   least (EJ_CHUNK_CPU a CPU when more) */
#define EJ_CHUNK_CPU	64
#define EJ_FIRST_MIN	256	/* a generation's first chunk: what the
				   CPUs can hold (EJ_CHUNK_CPU a CPU), at
				   least this */

#define EJ(j)	((struct es_job *)(j)->j_ds)

/* The ES's own parameters from a job's; -1 with a message if invalid. */
static int
job_es_params(const R3q__EsParams *p, struct es_params *ep, char *err,
    size_t errlen)
{
	memset(ep, 0, sizeof(*ep));
	ep->mu = p->mu;
	ep->lambda = p->lambda;
	ep->dim = p->dim;
	ep->generations = p->generations;
	ep->seed = p->seed;
	ep->reevaluate_parents = p->reevaluate_parents;
	return (es_params_check(ep, err, errlen));
}

/* The job's own copy of its parameters, with the policy settled. */
static void
job_es_set_params(struct job *j, const R3q__EsParams *p)
{
	R3q__EsParams	*q = &EJ(j)->ej_params;

	r3q__es_params__init(q);
	q->mu = p->mu;
	q->lambda = p->lambda;
	q->generations = p->generations;
	q->dim = p->dim;
	q->lu = p->lu;
	q->seed = p->seed;
	q->reevaluate_parents = p->reevaluate_parents;
	q->queue_factor = j->j_qf;
	q->work_ms = p->work_ms;
	q->spin = p->spin;
	q->verify = j->j_verify;
	q->policy = xstrdup(sched_policy_name(j->j_policy));
	q->balance = xstrdup(sched_balance_name(j->j_balance));
	j->j_work_ms = p->work_ms;
}

/*
 * Tasks given to the core at once: EJ_CHUNK, or more with many CPUs.  A
 * generation's first chunk is only what the CPUs can hold, so that its
 * first task goes out as soon as the ES has made it, and the cost before
 * it follows the cluster, not lambda.
 */
static size_t
job_es_chunk(int first)
{
	struct worker	*w;
	size_t		 cpus = 0, n;
	uint32_t	 i = 0;

	while ((w = worker_next(&i)) != NULL)
		cpus += w->w_cpus;
	n = cpus * EJ_CHUNK_CPU;
	if (first)
		return (n > EJ_FIRST_MIN ? n : EJ_FIRST_MIN);
	return (n > EJ_CHUNK ? n : EJ_CHUNK);
}

static void
job_es_pend_clear(struct es_job *ej)
{
	free(ej->ej_pend);
	ej->ej_pend = NULL;
	ej->ej_pb = NULL;
	ej->ej_npend = ej->ej_pendoff = 0;
}

/*
 * The next chunk of a generation's tasks to the core; the batch closes
 * with the last.  A chunk is what every CPU can hold several times over:
 * the core leaves a batch's workers idle rather than replicate while it
 * is open, and the next chunk comes in the next loop pass.
 */
static void
job_es_feed(struct job *j)
{
	struct es_job		*ej = EJ(j);
	struct sched_task	*t;
	size_t			 i, n, chunk;

	if (ej->ej_pb == NULL)
		return;
	n = ej->ej_npend - ej->ej_pendoff;
	if (n > (chunk = job_es_chunk(ej->ej_pendoff == 0)))
		n = chunk;
	t = xcalloc(n, sizeof(*t));
	for (i = 0; i < n; i++)
		t[i].id = ej->ej_pend[ej->ej_pendoff + i];
	ej->ej_pendoff += n;
	job_batch_submit(ej->ej_pb, t, n);
	free(t);
	if (ej->ej_pendoff < ej->ej_npend) {
		job_more(j);
		return;
	}
	job_batch_close(ej->ej_pb);
	job_es_pend_clear(ej);
}

/* The next chunk, from the loop's next pass (job_more()). */
static void
job_es_more(struct job *j)
{
	if (j->j_state != JOB_RUNNING) {
		job_es_pend_clear(EJ(j));
		return;
	}
	job_es_feed(j);
}

/*
 * Submit the current generation as one batch.  Its task ids start at
 * first, or at the next free id if first is 0; when a job resumes from the
 * journal, the individuals marked in have already have their result and
 * only the others are submitted.  A large generation goes to the core a
 * chunk a loop pass (job_es_feed): its first tasks go out at once, not
 * after all lambda have been added (lambda = 200,000 took 130 ms of
 * masterd's CPU before the first went out).
 */
static void
job_es_start(struct job *j, uint64_t first, const uint8_t *have)
{
	struct es_job		*ej = EJ(j);
	struct job_batch	*b;
	uint64_t		*t;
	uint32_t		 kind;
	size_t			 i, n, nt = 0;

	n = es_batch_size(ej->ej_es);
	/* A synthetic load makes the evaluation a synth task (Ridge + sleep). */
	kind = kind_intern(ej->ej_params.work_ms > 0 ? "synth" : "ridge-lu");
	j->j_nbatches = es_generation(ej->ej_es);
	b = job_batch_open(j, kind, 0);
	first = job_batch_reserve(b, first, n);
	/* Journal the generation and its ids before any task goes out. */
	job_journal_put(j);
	t = xcalloc(n + 1, sizeof(*t));
	for (i = 0; i < n; i++)
		if (have == NULL || !have[i])
			t[nt++] = first + i;
	b->b_nover = n - nt;
	if (nt == 0) {
		/* Every result was in the journal: the generation is over. */
		free(t);
		job_batch_finished(b);
		return;
	}
	job_es_pend_clear(ej);
	ej->ej_pb = b;
	ej->ej_pend = t;
	ej->ej_npend = nt;
	job_es_feed(j);
}

/* Tasks of an es job's first generation: lambda offspring, mu parents. */
static uint64_t
job_es_first(const Envelope *env)
{
	const R3q__EsParams	*p = env->submit_es->params;

	return (p != NULL ? (uint64_t)p->lambda + p->mu : 0);
}

/* Check a client's parameters and start an es job; NULL with a message. */
static struct job *
job_es_submit(const Envelope *env, const char *owner, char *err,
    size_t errlen)
{
	const R3q__EsParams	*p = env->submit_es->params;
	struct es_params	 ep;
	struct job_sched	 js;
	struct job		*j;
	struct es		*es;

	if (p == NULL) {
		snprintf(err, errlen, "submit without parameters");
		return (NULL);
	}
	if (job_es_params(p, &ep, err, errlen) == -1)
		return (NULL);
	if (p->lu > LU_MAX) {
		snprintf(err, errlen, "lu must be at most %d", LU_MAX);
		return (NULL);
	}
	job_sched_default(&js);
	if (job_sched_parse(&js, p->policy, p->queue_factor, p->balance,
	    p->verify, err, errlen) == -1)
		return (NULL);
	if (!(p->work_ms >= 0) || p->work_ms > 3600000) {
		snprintf(err, errlen, "work_ms must be from 0 to 3600000");
		return (NULL);
	}
	if (es_payload_len(p->dim) > md->conf.max_payload) {
		snprintf(err, errlen, "an individual of dimension %u is %zu "
		    "bytes, over max_payload (%llu)", p->dim,
		    es_payload_len(p->dim),
		    (unsigned long long)md->conf.max_payload);
		return (NULL);
	}
	if (job_admit_memory(NULL, owner, es_mem_bytes(&ep), err,
	    errlen) == -1)
		return (NULL);
	if ((es = es_new(&ep)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (NULL);
	}
	j = job_new(&job_es_driver, &js);
	j->j_mem = es_mem_bytes(&ep);
	j->j_ds = xcalloc(1, sizeof(struct es_job));
	EJ(j)->ej_es = es;
	job_es_set_params(j, p);
	job_es_start(j, 0, NULL);
	return (j);
}

/*
 * The payload of individual idx, encoded as it is sent (into memory that
 * lives until the frame leaves), so that a queued task costs no more than
 * its genome in the ES.
 */
static void
job_es_task(struct job *j, struct job_batch *b, size_t idx, R3q__Task *t)
{
	struct es_job	*ej = EJ(j);
	size_t		 len = es_payload_len(ej->ej_params.dim);

	(void)b;
	t->payload.len = len;
	t->payload.data = job_scratch(len);
	es_payload_encode(t->payload.data, ej->ej_params.lu,
	    ej->ej_params.spin ? ES_PAYLOAD_SPIN : 0, ej->ej_params.work_ms,
	    es_batch_x(ej->ej_es, idx), ej->ej_params.dim);
}

/*
 * Individual idx's fitness came, or its task gave up: then the job fails,
 * as a generation cannot be selected without every fitness.
 */
static void
job_es_result(struct job *j, struct job_batch *b, size_t idx, uint64_t seq,
    uint32_t st, const void *out, size_t len, const char *why)
{
	double	 f;

	(void)seq;
	if (st == OUTCOME_OK && es_output_decode(out, len, &f) == 0) {
		es_set_fitness(EJ(j)->ej_es, idx, f);
		return;
	}
	if (j->j_state != JOB_RUNNING)
		return;
	if (st == OUTCOME_OK)
		snprintf(j->j_error, sizeof(j->j_error), "generation %u, "
		    "individual %zu: an output of %zu bytes is not a fitness",
		    b->b_gen, idx, len);
	else
		snprintf(j->j_error, sizeof(j->j_error), "generation %u, "
		    "individual %zu: %s", b->b_gen, idx,
		    why != NULL ? why : "failed");
	log_warnx("job %llu failed: %s", (unsigned long long)j->j_id,
	    j->j_error);
	job_abort(j, JOB_FAILED);
}

/* A generation is over: select. */
static void
job_es_batch_done(struct job *j, struct job_batch *b, struct gen_report *g)
{
	struct es_job	*ej = EJ(j);
	uint32_t	 gen = es_generation(ej->ej_es);

	if (es_advance(ej->ej_es) == -1) {
		/* The core said done, so every result must be in. */
		fatalx("job %llu: batch %llu done with results missing",
		    (unsigned long long)j->j_id, (unsigned long long)b->b_id);
	}
	g->g_best = es_gen_best(ej->ej_es, gen);
	log_debug("job %llu generation %u best %.17g",
	    (unsigned long long)j->j_id, gen, g->g_best);
}

/* The next generation, or the end. */
static void
job_es_next(struct job *j, struct job_batch *b)
{
	struct es_job	*ej = EJ(j);

	(void)b;
	if (j->j_state != JOB_RUNNING)
		return;
	if (es_finished(ej->ej_es)) {
		log_info("job %llu done: best %.17g after %u generations",
		    (unsigned long long)j->j_id, es_best_f(ej->ej_es),
		    es_generation(ej->ej_es) - 1);
		job_end(j, JOB_DONE);
		return;
	}
	job_es_start(j, 0, NULL);
}

static void
job_es_info(const struct job *j, R3q__JobInfo *info, int full)
{
	struct es_job	*ej = EJ(j);

	info->params = &ej->ej_params;
	if (ej->ej_es != NULL)
		info->best = j->j_ngens ? es_best_f(ej->ej_es) : 0;
	else
		info->best = ej->ej_best;
	if (!full || j->j_ngens == 0)
		return;
	if (ej->ej_es != NULL) {
		info->n_best_x = ej->ej_params.dim;
		info->best_x = (double *)(uintptr_t)es_best_x(ej->ej_es);
	} else if (ej->ej_best_x != NULL) {
		info->n_best_x = ej->ej_params.dim;
		info->best_x = ej->ej_best_x;
	}
}

static uint8_t *
job_es_pack(const struct job *j, size_t *len)
{
	uint8_t	*p;

	*len = r3q__es_params__get_packed_size(&EJ(j)->ej_params);
	p = xcalloc(1, *len + 1);
	r3q__es_params__pack(&EJ(j)->ej_params, p);
	return (p);
}

static void
job_es_state(const struct job *j, R3q__JobState *st)
{
	struct es_job	*ej = EJ(j);

	if (j->j_state == JOB_RUNNING)
		return;
	st->best = ej->ej_best;
	if (ej->ej_best_x != NULL) {
		st->n_best_x = ej->ej_params.dim;
		st->best_x = ej->ej_best_x;
	}
}

/* The job ended: keep its best; the population goes (480 B a task). */
static void
job_es_end(struct job *j)
{
	struct es_job	*ej = EJ(j);
	const double	*x;

	if (ej->ej_es != NULL && j->j_ngens > 0 &&
	    (x = es_best_x(ej->ej_es)) != NULL) {
		ej->ej_best = es_best_f(ej->ej_es);
		free(ej->ej_best_x);
		ej->ej_best_x = xcalloc(ej->ej_params.dim, sizeof(double));
		memcpy(ej->ej_best_x, x, ej->ej_params.dim * sizeof(double));
	}
	job_es_pend_clear(ej);
	es_free(ej->ej_es);
	ej->ej_es = NULL;
}

static void
job_es_free(struct job *j)
{
	struct es_job	*ej = EJ(j);

	if (ej == NULL)
		return;
	job_es_pend_clear(ej);
	es_free(ej->ej_es);
	free(ej->ej_params.policy);
	free(ej->ej_params.balance);
	free(ej->ej_best_x);
	free(ej);
	j->j_ds = NULL;
}

/* A job's results, in (gen, idx) order, as the journal gives them. */
struct es_load {
	uint32_t	*gen;
	uint32_t	*idx;
	double		*fit;
	size_t		 n, cap;
};

static int
job_es_load_result(void *arg, const struct journal_result *r)
{
	struct es_load	*el = arg;
	double		 f;

	if (r->status != OUTCOME_OK ||
	    es_output_decode(r->output, r->outlen, &f) == -1)
		return (0);
	if (el->n == el->cap) {
		el->cap = el->cap ? el->cap * 2 : 256;
		if ((el->gen = reallocarray(el->gen, el->cap,
		    sizeof(*el->gen))) == NULL ||
		    (el->idx = reallocarray(el->idx, el->cap,
		    sizeof(*el->idx))) == NULL ||
		    (el->fit = reallocarray(el->fit, el->cap,
		    sizeof(*el->fit))) == NULL)
			fatal("%s", __func__);
	}
	el->gen[el->n] = r->gen;
	el->idx[el->n] = r->idx;
	el->fit[el->n] = f;
	el->n++;
	return (0);
}

/*
 * Replay a running job's ES from its journaled results: every generation
 * before the current one must be complete; the current one is submitted
 * again with the individuals that have no result yet.  The replay is
 * exact, as the ES's numbers depend on (seed, generation, index) alone.
 */
static int
job_es_replay(struct job *j, const struct journal_job *row, char *err,
    size_t errlen)
{
	struct journal	*jl = job_journal_handle();
	struct es_job	*ej = EJ(j);
	struct es_load	 el;
	uint8_t		*have;
	size_t		 k = 0, n, got;
	uint32_t	 gen;
	int		 rc = -1;

	memset(&el, 0, sizeof(el));
	if (journal_load_results(jl, j->j_id, job_es_load_result,
	    &el) == -1) {
		snprintf(err, errlen, "%s", journal_error(jl));
		goto out;
	}
	for (gen = 0; gen < row->gen; gen++) {
		n = es_batch_size(ej->ej_es);
		for (got = 0; k < el.n && el.gen[k] == gen; k++)
			if (el.idx[k] < n) {
				es_set_fitness(ej->ej_es, el.idx[k], el.fit[k]);
				got++;
			}
		if (got != n || es_advance(ej->ej_es) == -1) {
			snprintf(err, errlen, "generation %u has %zu of its "
			    "%zu results", gen, got, n);
			goto out;
		}
	}
	n = es_batch_size(ej->ej_es);
	have = xcalloc(n, 1);
	for (; k < el.n && el.gen[k] == row->gen; k++)
		if (el.idx[k] < n && !have[el.idx[k]]) {
			es_set_fitness(ej->ej_es, el.idx[k], el.fit[k]);
			have[el.idx[k]] = 1;
		}
	/* The generation reports beyond the replayed ones are stale. */
	while (j->j_ngens > 0 && j->j_gens[j->j_ngens - 1].g_gen >= row->gen)
		j->j_ngens--;
	log_info("job %llu resumed at generation %u with %zu results from "
	    "the journal", (unsigned long long)j->j_id, row->gen, el.n);
	job_es_start(j, row->first_task, have);
	free(have);
	rc = 0;
 out:
	free(el.gen);
	free(el.idx);
	free(el.fit);
	return (rc);
}

/* An es job from the journal. */
static int
job_es_load(struct job *j, const struct journal_job *row,
    const R3q__JobState *st, char *err, size_t errlen)
{
	struct es_params	 ep;
	struct es_job		*ej;
	R3q__EsParams		*p;
	enum sched_policy	 pol = SCHED_POLICY_R3Q;

	j->j_ds = ej = xcalloc(1, sizeof(*ej));
	if ((p = r3q__es_params__unpack(NULL, row->paramslen,
	    row->params)) == NULL) {
		/* job_es_free() frees both strings: neither may be init's. */
		r3q__es_params__init(&ej->ej_params);
		ej->ej_params.policy = xstrdup("?");
		ej->ej_params.balance = xstrdup("?");
		snprintf(err, errlen, "unreadable parameters");
		return (-1);
	}
	(void)sched_policy_parse(p->policy, &pol);
	j->j_policy = pol;
	j->j_qf = p->queue_factor;
	j->j_verify = p->verify;
	(void)sched_balance_parse(p->balance, &j->j_balance);
	job_es_set_params(j, p);
	r3q__es_params__free_unpacked(p, NULL);
	if (j->j_state != JOB_RUNNING) {
		if (st != NULL) {
			ej->ej_best = st->best;
			if (st->n_best_x == ej->ej_params.dim &&
			    st->n_best_x > 0) {
				ej->ej_best_x = xcalloc(st->n_best_x,
				    sizeof(double));
				memcpy(ej->ej_best_x, st->best_x,
				    st->n_best_x * sizeof(double));
			}
		}
		return (0);
	}
	if (job_es_params(&ej->ej_params, &ep, err, errlen) == -1 ||
	    job_admit_memory(j, NULL, es_mem_bytes(&ep), err, errlen) == -1)
		return (-1);
	j->j_mem = es_mem_bytes(&ep);
	if ((ej->ej_es = es_new(&ep)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (-1);
	}
	return (job_es_replay(j, row, err, errlen));
}

const struct job_driver job_es_driver = {
	.d_name = "es",
	.d_flags = JD_DROP_RESULTS,
	.d_body = R3Q__ENVELOPE__BODY_SUBMIT_ES,
	.d_first = job_es_first,
	.d_submit = job_es_submit,
	.d_task = job_es_task,
	.d_result = job_es_result,
	.d_batch_done = job_es_batch_done,
	.d_next = job_es_next,
	.d_info = job_es_info,
	.d_params = job_es_pack,
	.d_state = job_es_state,
	.d_load = job_es_load,
	.d_end = job_es_end,
	.d_free = job_es_free,
	.d_more = job_es_more,
};

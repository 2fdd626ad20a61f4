/*
 * The es job driver: each generation of the (mu+lambda)-ES is one batch of
 * ridge-lu tasks submitted to the core; when the core says the batch is
 * done, the ES selects and the next generation is submitted.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/event.h>

#include "es/es.h"
#include "journal.h"
#include "log.h"
#include "masterd.h"
#include "task/task.h"
#include "util.h"

#define JOBS_KEEP	1000	/* finished jobs remembered */
#define LU_MAX		20000
#define TRACE_MAX	1000000	/* executions kept in memory per job */

static void	job_start_batch(struct job *, uint64_t, const uint8_t *);
static void	job_gen_done(struct job *, const struct sched_batch_report *);
static void	job_journal_put(struct job *);
static void	job_set_params(struct job *, const R3q__EsParams *,
		    enum sched_policy, unsigned);
static void	job_roster_free(struct job *);
static void	job_trace_free(struct job *);

const char *
job_state_name(enum job_state st)
{
	switch (st) {
	case JOB_RUNNING:
		return ("running");
	case JOB_DONE:
		return ("done");
	case JOB_FAILED:
		return ("failed");
	case JOB_CANCELLED:
		return ("cancelled");
	}
	return ("?");
}

/* A job by id. */
struct job *
job_find(uint64_t id)
{
	struct job	*j;

	TAILQ_FOREACH(j, &md->jobs, j_entry)
		if (j->j_id == id)
			return (j);
	return (NULL);
}

/* The running job whose current batch holds task tid, and its index. */
struct job *
job_by_task(uint64_t tid, size_t *idx)
{
	struct job	*j;

	TAILQ_FOREACH(j, &md->jobs, j_entry) {
		if (j->j_state == JOB_RUNNING && tid >= j->j_first &&
		    tid < j->j_first + j->j_n) {
			*idx = tid - j->j_first;
			return (j);
		}
	}
	return (NULL);
}

/*
 * A job's task tid in its current batch or one of its last JOB_PAST ones,
 * running or not: the reports of copies interrupted or losing a race
 * arrive after their batch is over, and still count as executions.
 */
struct job *
job_by_any_task(uint64_t tid, size_t *idx, uint32_t *gen)
{
	struct job		*j;
	const struct job_past	*p;
	size_t			 i;

	if ((j = job_by_task(tid, idx)) != NULL) {
		*gen = j->j_gen;
		return (j);
	}
	TAILQ_FOREACH(j, &md->jobs, j_entry) {
		for (i = 0; i < j->j_npast && i < JOB_PAST; i++) {
			p = &j->j_past[i];
			if (tid >= p->p_first && tid < p->p_first + p->p_n) {
				*idx = tid - p->p_first;
				*gen = p->p_gen;
				return (j);
			}
		}
	}
	return (NULL);
}

/* The current batch is over: remember its ids among the past ones. */
static void
job_release_batch(struct job *j)
{
	struct job_past	*p;

	if (j->j_n == 0)
		return;
	p = &j->j_past[j->j_npast++ % JOB_PAST];
	p->p_first = j->j_first;
	p->p_n = j->j_n;
	p->p_gen = j->j_gen;
	j->j_n = 0;
}

/* Free one job. */
static void
job_free(struct job *j)
{
	TAILQ_REMOVE(&md->jobs, j, j_entry);
	job_release_batch(j);
	es_free(j->j_es);
	free(j->j_params.policy);
	free(j->j_gens);
	free(j->j_spans);
	free(j->j_best_x);
	job_roster_free(j);
	job_trace_free(j);
	free(j);
}

/* Forget the oldest finished jobs beyond JOBS_KEEP. */
static void
job_trim(void)
{
	struct job	*j, *next;
	size_t		 n = 0;

	TAILQ_FOREACH(j, &md->jobs, j_entry)
		if (j->j_state != JOB_RUNNING)
			n++;
	for (j = TAILQ_FIRST(&md->jobs); j != NULL && n > JOBS_KEEP;
	    j = next) {
		next = TAILQ_NEXT(j, j_entry);
		if (j->j_state != JOB_RUNNING) {
			job_free(j);
			n--;
		}
	}
}

/*
 * A job ends: keep its best, journal its end (its results were only
 * needed to resume it), free its population, tell its followers.
 */
static void
job_end(struct job *j, enum job_state st)
{
	const double	*x;

	j->j_state = st;
	j->j_end = mono_ns();
	if (j->j_es != NULL && j->j_ngens > 0 &&
	    (x = es_best_x(j->j_es)) != NULL) {
		j->j_best = es_best_f(j->j_es);
		free(j->j_best_x);
		j->j_best_x = xcalloc(j->j_params.dim, sizeof(double));
		memcpy(j->j_best_x, x, j->j_params.dim * sizeof(double));
	}
	job_release_batch(j);
	job_journal_put(j);
	if (md->journal != NULL &&
	    journal_results_drop(md->journal, j->j_id) == -1)
		log_warnx("%s", journal_error(md->journal));
	job_journal_commit();
	/* Its best is kept: the population goes (480 B a task at dim 30). */
	es_free(j->j_es);
	j->j_es = NULL;
	control_job_event(j, NULL);
	masterd_status();
}

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

/* Check a client's parameters and start an es job; NULL with a message. */
struct job *
job_submit(const R3q__EsParams *p, char *err, size_t errlen)
{
	struct es_params	 ep;
	enum sched_policy	 pol = md->policy;
	struct job		*j;

	if (job_es_params(p, &ep, err, errlen) == -1)
		return (NULL);
	if (p->lu > LU_MAX) {
		snprintf(err, errlen, "lu must be at most %d", LU_MAX);
		return (NULL);
	}
	if (p->policy != NULL && p->policy[0] != '\0' &&
	    sched_policy_parse(p->policy, &pol) == -1) {
		snprintf(err, errlen, "unknown policy '%s' (wq, rr, rwq, r3q)",
		    p->policy);
		return (NULL);
	}
	if (p->queue_factor > 64 && p->queue_factor != SCHED_QF_AUTO) {
		snprintf(err, errlen, "queue factor must be at most 64");
		return (NULL);
	}
	if (!(p->work_ms >= 0) || p->work_ms > 3600000) {
		snprintf(err, errlen, "work_ms must be from 0 to 3600000");
		return (NULL);
	}
	if (p->verify > SCHED_VERIFY_MAX) {
		snprintf(err, errlen, "verify must be from 1 to %d",
		    SCHED_VERIFY_MAX);
		return (NULL);
	}
	job_trim();
	j = xcalloc(1, sizeof(*j));
	if ((j->j_es = es_new(&ep)) == NULL) {
		free(j);
		snprintf(err, errlen, "out of memory");
		return (NULL);
	}
	j->j_id = md->next_job++;
	j->j_state = JOB_RUNNING;
	job_set_params(j, p, pol,
	    p->queue_factor ? p->queue_factor : md->queue_factor);
	j->j_start = mono_ns();
	j->j_start_wall = j->j_start + md->wall_off;
	j->j_submitted = wall_ns() / NS_PER_SEC;
	TAILQ_INSERT_TAIL(&md->jobs, j, j_entry);
	job_start_batch(j, 0, NULL);
	return (j);
}

/* The job's own copy of its parameters, with the policy settled. */
static void
job_set_params(struct job *j, const R3q__EsParams *p, enum sched_policy pol,
    unsigned qf)
{
	j->j_policy = pol;
	j->j_qf = qf;
	r3q__es_params__init(&j->j_params);
	j->j_params.mu = p->mu;
	j->j_params.lambda = p->lambda;
	j->j_params.generations = p->generations;
	j->j_params.dim = p->dim;
	j->j_params.lu = p->lu;
	j->j_params.seed = p->seed;
	j->j_params.reevaluate_parents = p->reevaluate_parents;
	j->j_params.queue_factor = qf;
	j->j_params.work_ms = p->work_ms;
	j->j_params.spin = p->spin;
	j->j_params.verify = p->verify ? p->verify : md->conf.verify;
	j->j_params.policy = xstrdup(sched_policy_name(pol));
}

/* Cast away const for a protobuf field we only read from. */
static double *
unconst(const double *p)
{
	union { const double *c; double *m; } u = { .c = p };

	return (u.m);
}

/*
 * Submit the current generation as one batch.  Its task ids start at
 * first, or at the next free id if first is 0; when a job resumes from the
 * journal, the individuals marked in have already have their result and
 * only the others are submitted.
 */
static void
job_start_batch(struct job *j, uint64_t first, const uint8_t *have)
{
	struct sched_batch_config	 cfg;
	const struct task_kind		*k;
	uint64_t			*ids;
	size_t				 i, n, nids = 0;

	n = es_batch_size(j->j_es);
	/* A synthetic load makes the evaluation a synth task (Ridge + sleep). */
	k = task_kind_lookup(j->j_params.work_ms > 0 ? "synth" : "ridge-lu");
	j->j_kind = k;
	ids = xcalloc(n, sizeof(*ids));
	if (first == 0) {
		first = md->next_task;
		md->next_task += n;
	} else if (first + n > md->next_task)
		md->next_task = first + n;
	j->j_first = first;
	j->j_n = n;
	j->j_gen = es_generation(j->j_es);
	for (i = 0; i < n; i++)
		if (have == NULL || !have[i])
			ids[nids++] = j->j_first + i;
	/* Journal the generation and its ids before any task goes out. */
	job_journal_put(j);
	memset(&cfg, 0, sizeof(cfg));
	cfg.policy = j->j_policy;
	cfg.queue_factor = j->j_qf;
	cfg.kind = k->index;
	cfg.max_attempts = md->conf.max_attempts;
	cfg.max_kills = md->conf.max_kills;
	cfg.verify = j->j_params.verify;
	j->j_batch = md->next_batch++;
	j->j_nspans = 0;
	if (nids == 0) {
		/* Every result was in the journal: the generation is over. */
		free(ids);
		job_gen_done(j, NULL);
		return;
	}
	if (sched_submit(md->sched, j->j_batch, &cfg, ids, nids,
	    mono_ns()) == -1)
		fatalx("%s: core refused batch %llu", __func__,
		    (unsigned long long)j->j_batch);
	free(ids);
}

/*
 * The message of task idx of the current batch, made when it is sent
 * rather than kept for every queued task (80 bytes each); the genome
 * stays in the ES.
 */
void
job_task(const struct job *j, size_t idx, R3q__Task *t)
{
	r3q__task__init(t);
	t->id = j->j_first + idx;
	t->kind = (char *)(uintptr_t)j->j_kind->name;
	t->n_x = j->j_params.dim;
	t->x = unconst(es_batch_x(j->j_es, idx));
	t->lu = j->j_params.lu;
	t->work_ms = j->j_params.work_ms;
	t->spin = j->j_params.spin;
}

/*
 * The accepted result of task idx of the current batch.  It is journaled
 * in the transaction that is committed before anything else leaves
 * masterd (job_journal_commit() from server_flush()).
 */
void
job_result(struct job *j, size_t idx, double fitness)
{
	struct journal_result	 jr;

	es_set_fitness(j->j_es, idx, fitness);
	j->j_done++;
	if (md->journal == NULL)
		return;
	jr.job = j->j_id;
	jr.gen = es_generation(j->j_es);
	jr.idx = (uint32_t)idx;
	jr.fitness = fitness;
	if (journal_result_add(md->journal, &jr) == -1)
		log_warnx("%s", journal_error(md->journal));
}

/* Note that worker name (cpus, speed) ran tasks of j. */
static R3q__WorkerSeen *
job_roster_add(struct job *j, const char *name, uint32_t cpus, double speed)
{
	R3q__WorkerSeen	*r;
	size_t		 i;

	for (i = 0; i < j->j_nroster; i++)
		if (strcmp(j->j_roster[i].name, name) == 0) {
			j->j_roster[i].cpus = cpus;
			j->j_roster[i].speed = speed;
			j->j_roster_last = i;
			return (&j->j_roster[i]);
		}
	if ((j->j_roster = reallocarray(j->j_roster, j->j_nroster + 1,
	    sizeof(*j->j_roster))) == NULL)
		fatal("%s", __func__);
	j->j_roster_last = j->j_nroster;
	r = &j->j_roster[j->j_nroster++];
	r3q__worker_seen__init(r);
	r->name = xstrdup(name);
	r->cpus = cpus;
	r->speed = speed;
	return (r);
}

static void
job_roster_free(struct job *j)
{
	size_t	 i;

	for (i = 0; i < j->j_nroster; i++)
		free(j->j_roster[i].name);
	free(j->j_roster);
	j->j_roster = NULL;
	j->j_nroster = 0;
}

static void
job_trace_free(struct job *j)
{
	free(j->j_trace);	/* the names belong to the roster */
	j->j_trace = NULL;
	j->j_ntrace = j->j_tracecap = 0;
}

/* The id of task idx of generation gen: the current batch or a past one. */
static uint64_t
job_task_id(const struct job *j, uint32_t gen, size_t idx)
{
	size_t	 i;

	if (j->j_n > 0 && gen == j->j_gen)
		return (j->j_first + idx);
	for (i = 0; i < j->j_npast && i < JOB_PAST; i++)
		if (j->j_past[i].p_gen == gen)
			return (j->j_past[i].p_first + idx);
	return (0);
}

/*
 * Record one execution (or withdrawal) of task idx for the reports: in the
 * journal, or in memory when there is none.
 */
static void
job_journal_span(struct job *j, struct worker *w, uint32_t gen, size_t idx,
    uint32_t slot, uint64_t start, uint64_t end, enum span_outcome o,
    int replica)
{
	struct journal_span	 js;
	R3q__Span		*sp;

	/* The worker remembers its place in the roster of the job. */
	if (w->w_roster_job != j->j_id || w->w_roster_idx >= j->j_nroster ||
	    strcmp(j->j_roster[w->w_roster_idx].name, w->w_name) != 0) {
		job_roster_add(j, w->w_name, w->w_cpus, w->w_speed)->delay_ms =
		    w->w_delay_ms;
		w->w_roster_job = j->j_id;
		w->w_roster_idx = j->j_roster_last;
	}
	if (o != SPAN_WITHDRAWN)
		j->j_execs++;
	if (md->journal == NULL) {
		/* Without a journal, memory bounds what a report can draw. */
		if (j->j_ntrace >= TRACE_MAX) {
			if (j->j_ntrace == TRACE_MAX) {
				log_warnx("job %llu: more than %d task "
				    "executions; r3qctl report will draw the "
				    "first ones only (a journal keeps them all)",
				    (unsigned long long)j->j_id, TRACE_MAX);
				j->j_ntrace++;	/* said once */
			}
			return;
		}
		if (j->j_ntrace == j->j_tracecap) {
			j->j_tracecap = j->j_tracecap ? j->j_tracecap * 2 : 256;
			if ((j->j_trace = reallocarray(j->j_trace,
			    j->j_tracecap, sizeof(*j->j_trace))) == NULL)
				fatal("%s", __func__);
		}
		sp = &j->j_trace[j->j_ntrace++];
		r3q__span__init(sp);
		sp->gen = gen;
		sp->idx = (uint32_t)idx;
		sp->task = job_task_id(j, gen, idx);
		/* the roster owns the name */
		sp->worker = j->j_roster[w->w_roster_idx].name;
		sp->slot = slot;
		sp->start_ns = start;
		sp->end_ns = end;
		sp->outcome = (uint32_t)o;
		sp->replica = replica != 0;
		return;
	}
	memset(&js, 0, sizeof(js));
	js.job = j->j_id;
	js.gen = gen;
	js.idx = (uint32_t)idx;
	js.task = job_task_id(j, gen, idx);
	memcpy(js.worker, w->w_name, strnlen(w->w_name,
	    sizeof(js.worker) - 1));	/* js is zeroed */
	js.slot = slot;
	js.start_ns = start;
	js.end_ns = end;
	js.outcome = (uint32_t)o;
	js.replica = replica != 0;
	if (journal_span_add(md->journal, &js) == -1)
		log_warnx("%s", journal_error(md->journal));
}

/*
 * A held copy of task idx of generation gen was withdrawn before it ran;
 * replica says whether it was an extra copy.
 */
void
job_withdrawn(struct job *j, struct worker *w, uint32_t gen, size_t idx,
    int replica)
{
	uint64_t	 now = wall_ns();

	job_journal_span(j, w, gen, idx, UINT32_MAX, now, now, SPAN_WITHDRAWN,
	    replica);
}

/*
 * One execution of task idx of generation gen, as the result r tells it:
 * journaled for the reports (in wall-clock time) and, while its batch
 * runs, kept for the measurements (in masterd's clock).
 */
void
job_span(struct job *j, struct worker *w, uint32_t gen, size_t idx,
    const R3q__Result *r, enum span_outcome o)
{
	struct exec_span	*ns;
	uint64_t		 start, end;

	if (r->start_ns == 0 || r->end_ns < r->start_ns)
		return;
	job_journal_span(j, w, gen, idx, r->slot, r->start_ns, r->end_ns, o,
	    r->replica);
	if (j->j_state != JOB_RUNNING || j->j_n == 0 || gen != j->j_gen)
		return;		/* its generation is measured already */
	start = r->start_ns > md->wall_off ? r->start_ns - md->wall_off : 0;
	end = r->end_ns > md->wall_off ? r->end_ns - md->wall_off : 0;
	if (j->j_nspans == j->j_spancap) {
		j->j_spancap = j->j_spancap ? j->j_spancap * 2 : 128;
		ns = reallocarray(j->j_spans, j->j_spancap, sizeof(*ns));
		if (ns == NULL)
			fatal("%s", __func__);
		j->j_spans = ns;
	}
	j->j_spans[j->j_nspans].x_wid = w->w_id;
	j->j_spans[j->j_nspans].x_start = start;
	j->j_spans[j->j_nspans].x_end = end;
	j->j_nspans++;
}

/*
 * The paper's measurements of one generation (doc/algorithms.md 1.6):
 * synchronisation wait runs from the core's t_sync to the last result;
 * communication time is the average, over the workers, of the time before
 * t_sync in which a worker's CPUs were not executing a task; computation
 * is what remains.  Worker times were converted to our clock on arrival.
 */
static void
job_measure(struct job *j, const struct sched_batch_report *r,
    struct gen_report *g)
{
	struct exec_span	*x;
	struct worker		*w;
	uint64_t		 end, busy, win, comm = 0, a, b, *busyv;
	double			 speed = 0;
	uint32_t		 i, nw = 0;
	size_t			 k;

	g->g_total = r->t_done - r->t_submit;
	g->g_sync = r->t_sync ? r->t_done - r->t_sync : 0;
	g->g_replicas = r->replicas;
	g->g_killed_held = r->cancelled_held;
	g->g_killed_running = r->cancelled_running;
	end = r->t_sync ? r->t_sync : r->t_done;
	win = end - r->t_submit;
	/* One pass over the executions, by worker id. */
	busyv = xcalloc(md->maxworkers + 1, sizeof(*busyv));
	for (k = 0; k < j->j_nspans; k++) {
		x = &j->j_spans[k];
		if (x->x_wid >= md->maxworkers)
			continue;
		a = x->x_start > r->t_submit ? x->x_start : r->t_submit;
		b = x->x_end < end ? x->x_end : end;
		if (b > a)
			busyv[x->x_wid] += b - a;
	}
	for (i = 0; i < md->maxworkers; i++) {
		if ((w = md->workers[i]) == NULL)
			continue;
		busy = busyv[i] / w->w_cpus;
		comm += busy < win ? win - busy : 0;
		speed += w->w_speed * w->w_cpus;
		nw++;
	}
	free(busyv);
	g->g_comm = nw ? comm / nw : 0;
	g->g_compute = g->g_total > g->g_sync + g->g_comm ?
	    g->g_total - g->g_sync - g->g_comm : 0;
	j->j_speed_time += speed * (double)g->g_total;
}

/*
 * End a running job before its batch is done.  Assigns of its tasks that
 * are still being built leave first: their genomes live in the ES that
 * job_end() frees, and the cancels of the abort must come after them.
 */
static void
job_abort(struct job *j, enum job_state st)
{
	server_flush();
	sched_batch_abort(md->sched, j->j_batch, mono_ns());
	job_end(j, st);
}

/* A task gave up after too many failures: the job fails. */
void
job_task_failed(struct job *j, size_t idx, const char *why)
{
	snprintf(j->j_error, sizeof(j->j_error), "generation %u, individual "
	    "%zu: %s", es_generation(j->j_es), idx, why);
	log_warnx("job %llu failed: %s", (unsigned long long)j->j_id,
	    j->j_error);
	job_abort(j, JOB_FAILED);
}

/* Stop a running job; its outstanding copies are withdrawn. */
void
job_cancel(struct job *j, const char *why)
{
	snprintf(j->j_error, sizeof(j->j_error), "%s", why);
	job_abort(j, JOB_CANCELLED);
}

/* The core says a batch is complete: select, report, go on. */
void
job_batch_done(uint64_t batch, const struct sched_batch_report *rep)
{
	struct job		*j;

	TAILQ_FOREACH(j, &md->jobs, j_entry)
		if (j->j_state == JOB_RUNNING && j->j_batch == batch)
			break;
	if (j != NULL)
		job_gen_done(j, rep);
}

/* Pack a generation's report for the journal or a client. */
static void
job_gen_pb(const struct job *j, const struct gen_report *g,
    R3q__GenReport *pb)
{
	r3q__gen_report__init(pb);
	pb->job = j->j_id;
	pb->generation = g->g_gen;
	pb->best = g->g_best;
	pb->elapsed_ns = g->g_elapsed;
	pb->tasks = g->g_tasks;
	pb->total_ns = g->g_total;
	pb->sync_ns = g->g_sync;
	pb->comm_ns = g->g_comm;
	pb->compute_ns = g->g_compute;
	pb->replicas = g->g_replicas;
	pb->killed_held = g->g_killed_held;
	pb->killed_running = g->g_killed_running;
}

/* Journal a finished generation's report. */
static void
job_journal_gen(const struct job *j, const struct gen_report *g)
{
	R3q__GenReport	 pb;
	uint8_t		 buf[256];
	size_t		 len;

	if (md->journal == NULL)
		return;
	job_gen_pb(j, g, &pb);
	if ((len = r3q__gen_report__get_packed_size(&pb)) > sizeof(buf))
		fatalx("%s: report of %zu bytes", __func__, len);
	r3q__gen_report__pack(&pb, buf);
	if (journal_gen_put(md->journal, j->j_id, g->g_gen, buf, len) == -1)
		log_warnx("%s", journal_error(md->journal));
}

/*
 * Every result of j's generation is in (rep: what the core saw of its
 * batch; NULL when the results all came from the journal).
 */
static void
job_gen_done(struct job *j, const struct sched_batch_report *rep)
{
	struct sched_batch_report	 none;
	struct gen_report		*g, *ng;
	uint32_t			 gen;

	if (rep == NULL) {
		memset(&none, 0, sizeof(none));
		none.t_submit = none.t_done = mono_ns();
		rep = &none;
	}
	gen = es_generation(j->j_es);
	if (es_advance(j->j_es) == -1) {
		/* The core said done, so every result must be in. */
		fatalx("job %llu: batch %llu done with results missing",
		    (unsigned long long)j->j_id, (unsigned long long)j->j_batch);
	}
	ng = reallocarray(j->j_gens, j->j_ngens + 1, sizeof(*ng));
	if (ng == NULL)
		fatal("%s", __func__);
	j->j_gens = ng;
	g = &j->j_gens[j->j_ngens++];
	g->g_gen = gen;
	g->g_best = es_gen_best(j->j_es, gen);
	g->g_elapsed = mono_ns() - j->j_start;
	g->g_tasks = (uint32_t)j->j_n;
	job_measure(j, rep, g);
	job_journal_gen(j, g);
	log_debug("job %llu generation %u best %.17g",
	    (unsigned long long)j->j_id, gen, g->g_best);
	job_release_batch(j);
	control_job_event(j, g);
	masterd_status();
	if (es_finished(j->j_es)) {
		log_info("job %llu done: best %.17g after %u generations",
		    (unsigned long long)j->j_id, es_best_f(j->j_es), gen);
		job_end(j, JOB_DONE);
		return;
	}
	job_start_batch(j, 0, NULL);
}

/*
 * Job totals, and the parallel efficiency LB / E of the paper: LB is the
 * job's reference work over the sum of the speeds of its workers (averaged
 * over the job's time, as workers may come and go), E the elapsed time.
 * Only a synthetic load has a known reference work.
 */
static void
job_totals(const struct job *j, R3q__JobInfo *info)
{
	const struct gen_report	*g;
	uint64_t		 t = 0;
	size_t			 i;

	for (i = 0; i < j->j_ngens; i++) {
		g = &j->j_gens[i];
		info->sync_ns += g->g_sync;
		info->comm_ns += g->g_comm;
		info->compute_ns += g->g_compute;
		info->replicas += g->g_replicas;
		info->killed_held += g->g_killed_held;
		info->killed_running += g->g_killed_running;
		info->work_ms += g->g_tasks * j->j_params.work_ms;
		t += g->g_total;
	}
	if (t > 0)
		info->speed_sum = j->j_speed_time / (double)t;
	if (info->work_ms > 0 && info->speed_sum > 0) {
		info->lower_bound_s = info->work_ms / 1000.0 / info->speed_sum;
		if (info->elapsed_ns > 0)
			info->efficiency = info->lower_bound_s /
			    ((double)info->elapsed_ns / 1e9);
	}
}

/* Fill a JobInfo; with full, the best individual and every generation. */
void
job_info(const struct job *j, R3q__JobInfo *info, int full)
{
	size_t	 i;

	r3q__job_info__init(info);
	info->id = j->j_id;
	info->state = (char *)(uintptr_t)job_state_name(j->j_state);
	info->policy = j->j_params.policy;
	info->params = (R3q__EsParams *)(uintptr_t)&j->j_params;
	info->generation = j->j_ngens ? j->j_gens[j->j_ngens - 1].g_gen : 0;
	if (j->j_es != NULL)
		info->best = j->j_ngens ? es_best_f(j->j_es) : 0;
	else
		info->best = j->j_best;
	info->error = (char *)(uintptr_t)j->j_error;
	info->elapsed_ns = (j->j_state == JOB_RUNNING ? mono_ns() :
	    j->j_end) - j->j_start;
	info->tasks_done = j->j_done;
	info->results_dropped = j->j_dropped;
	info->submitted_unix = j->j_submitted;
	info->executions = j->j_execs;
	job_totals(j, info);
	if (!full || j->j_ngens == 0)
		return;
	if (j->j_es != NULL) {
		info->n_best_x = j->j_params.dim;
		info->best_x = unconst(es_best_x(j->j_es));
	} else if (j->j_best_x != NULL) {
		info->n_best_x = j->j_params.dim;
		info->best_x = j->j_best_x;
	}
	info->n_gens = j->j_ngens;
	info->gens = xcalloc(j->j_ngens, sizeof(*info->gens));
	for (i = 0; i < j->j_ngens; i++) {
		info->gens[i] = xcalloc(1, sizeof(**info->gens));
		job_gen_pb(j, &j->j_gens[i], info->gens[i]);
	}
}

/* Free what job_info allocated. */
void
job_info_clear(R3q__JobInfo *info)
{
	size_t	 i;

	for (i = 0; i < info->n_gens; i++)
		free(info->gens[i]);
	free(info->gens);
}

/* At exit. */
void
job_free_all(void)
{
	struct job	*j;

	while ((j = TAILQ_FIRST(&md->jobs)) != NULL)
		job_free(j);
}

/*
 * The journal (masterd.conf journal): each job's row, its generation
 * reports, its accepted results until it ends, and its task executions.
 * Writes pile up in one transaction that job_journal_commit() ends before
 * anything leaves masterd, so a result counts only once it is on disk as
 * far as a crash of masterd goes (WAL, synchronous=NORMAL: a power loss
 * may still take the last commits).
 */

/* Write j's row: parameters, state, generation, first task id. */
static void
job_journal_put(struct job *j)
{
	struct journal_job	 jj;
	R3q__JobState		 st = R3Q__JOB_STATE__INIT;
	R3q__WorkerSeen		**roster;
	uint8_t			*params, *extra;
	size_t			 i;

	if (md->journal == NULL)
		return;
	roster = xcalloc(j->j_nroster + 1, sizeof(*roster));
	for (i = 0; i < j->j_nroster; i++)
		roster[i] = &j->j_roster[i];
	st.n_workers = j->j_nroster;
	st.workers = roster;
	st.executions = j->j_execs;
	memset(&jj, 0, sizeof(jj));
	jj.id = j->j_id;
	jj.paramslen = r3q__es_params__get_packed_size(&j->j_params);
	params = xcalloc(1, jj.paramslen + 1);
	r3q__es_params__pack(&j->j_params, params);
	jj.params = params;
	snprintf(jj.state, sizeof(jj.state), "%s", job_state_name(j->j_state));
	jj.submitted_ns = j->j_start_wall;
	jj.ended_ns = j->j_state == JOB_RUNNING ? 0 : j->j_end + md->wall_off;
	jj.gen = j->j_es != NULL ? es_generation(j->j_es) : 0;
	jj.first_task = j->j_first;
	snprintf(jj.error, sizeof(jj.error), "%s", j->j_error);
	st.done = j->j_done;
	st.dropped = j->j_dropped;
	st.speed_time = j->j_speed_time;
	if (j->j_state != JOB_RUNNING) {
		st.best = j->j_best;
		st.elapsed_ns = j->j_end - j->j_start;
		if (j->j_best_x != NULL) {
			st.n_best_x = j->j_params.dim;
			st.best_x = j->j_best_x;
		}
	}
	jj.extralen = r3q__job_state__get_packed_size(&st);
	extra = xcalloc(1, jj.extralen + 1);
	r3q__job_state__pack(&st, extra);
	jj.extra = extra;
	if (journal_job_put(md->journal, &jj) == -1 ||
	    journal_meta_set(md->journal, "next_job", md->next_job) == -1 ||
	    journal_meta_set(md->journal, "next_task", md->next_task) == -1)
		log_warnx("%s", journal_error(md->journal));
	free(params);
	free(extra);
	free(roster);
}

/* End the journal's transaction: what was accepted is now kept. */
void
job_journal_commit(void)
{
	if (md->journal != NULL && journal_commit(md->journal) == -1)
		log_warnx("%s", journal_error(md->journal));
}

/* Drop the finished jobs older than journal_retention (0: keep them). */
static void
job_journal_prune(evutil_socket_t fd, short ev, void *arg)
{
	uint64_t	 keep = md->conf.journal_retention * NS_PER_MS;
	uint64_t	 now = wall_ns();
	size_t		 n;

	(void)fd;
	(void)ev;
	(void)arg;
	if (md->journal == NULL || keep == 0 || keep >= now)
		return;
	if (journal_prune(md->journal, now - keep, &n) == -1 ||
	    journal_commit(md->journal) == -1) {
		log_warnx("%s", journal_error(md->journal));
		return;
	}
	if (n > 0)
		log_info("journal: dropped %zu jobs finished more than %llus "
		    "ago (journal_retention)", n, (unsigned long long)
		    (md->conf.journal_retention / 1000));
}

/* A job's results, in (gen, idx) order, as the journal gives them. */
struct job_load {
	struct journal_result	*res;
	size_t			 n, cap;
	struct job		*job;
	int			 bad;
};

static int
job_load_result(void *arg, const struct journal_result *r)
{
	struct job_load	*jl = arg;

	if (jl->n == jl->cap) {
		jl->cap = jl->cap ? jl->cap * 2 : 256;
		if ((jl->res = reallocarray(jl->res, jl->cap,
		    sizeof(*jl->res))) == NULL)
			fatal("%s", __func__);
	}
	jl->res[jl->n++] = *r;
	return (0);
}

static int
job_load_gen(void *arg, uint32_t gen, const void *blob, size_t len)
{
	struct job_load		*jl = arg;
	struct job		*j = jl->job;
	struct gen_report	*g;
	R3q__GenReport		*pb;

	if ((pb = r3q__gen_report__unpack(NULL, len, blob)) == NULL) {
		jl->bad = 1;
		return (0);
	}
	if ((j->j_gens = reallocarray(j->j_gens, j->j_ngens + 1,
	    sizeof(*j->j_gens))) == NULL)
		fatal("%s", __func__);
	g = &j->j_gens[j->j_ngens++];
	memset(g, 0, sizeof(*g));
	g->g_gen = gen;
	g->g_best = pb->best;
	g->g_elapsed = pb->elapsed_ns;
	g->g_tasks = pb->tasks;
	g->g_total = pb->total_ns;
	g->g_sync = pb->sync_ns;
	g->g_comm = pb->comm_ns;
	g->g_compute = pb->compute_ns;
	g->g_replicas = pb->replicas;
	g->g_killed_held = pb->killed_held;
	g->g_killed_running = pb->killed_running;
	r3q__gen_report__free_unpacked(pb, NULL);
	return (0);
}

/*
 * Replay a running job's ES from its journaled results: every generation
 * before the current one must be complete; the current one is submitted
 * again with the individuals that have no result yet.  The ES draws its
 * numbers from (seed, generation, index) alone, so the replay is exact.
 * Returns -1 with a message if the journal cannot explain the job.
 */
static int
job_replay(struct job *j, const struct journal_job *row,
    const struct job_load *jl, char *err, size_t errlen)
{
	struct es_params	 ep;
	uint8_t			*have;
	size_t			 k = 0, n, got;
	uint32_t		 gen;

	if (job_es_params(&j->j_params, &ep, err, errlen) == -1 ||
	    (j->j_es = es_new(&ep)) == NULL)
		return (-1);
	for (gen = 0; gen < row->gen; gen++) {
		n = es_batch_size(j->j_es);
		for (got = 0; k < jl->n && jl->res[k].gen == gen; k++)
			if (jl->res[k].idx < n) {
				es_set_fitness(j->j_es, jl->res[k].idx,
				    jl->res[k].fitness);
				got++;
			}
		if (got != n || es_advance(j->j_es) == -1) {
			snprintf(err, errlen, "generation %u has %zu of its "
			    "%zu results", gen, got, n);
			return (-1);
		}
	}
	n = es_batch_size(j->j_es);
	have = xcalloc(n, 1);
	for (; k < jl->n && jl->res[k].gen == row->gen; k++)
		if (jl->res[k].idx < n && !have[jl->res[k].idx]) {
			es_set_fitness(j->j_es, jl->res[k].idx,
			    jl->res[k].fitness);
			have[jl->res[k].idx] = 1;
		}
	/* The generation reports beyond the replayed ones are stale. */
	while (j->j_ngens > 0 && j->j_gens[j->j_ngens - 1].g_gen >= row->gen)
		j->j_ngens--;
	job_start_batch(j, row->first_task, have);
	free(have);
	return (0);
}

/* One job from the journal: kept as it ended, or resumed. */
static int
job_load(void *arg, const struct journal_job *row)
{
	struct job_load	 jl;
	struct job	*j;
	R3q__EsParams	*p;
	R3q__JobState	*st = NULL;
	enum sched_policy pol = SCHED_POLICY_R3Q;
	uint64_t	 now = mono_ns(), wnow = wall_ns();
	char		 err[160];
	size_t		 i;

	(void)arg;
	if ((p = r3q__es_params__unpack(NULL, row->paramslen,
	    row->params)) == NULL) {
		log_warnx("%s: job %llu has unreadable parameters; skipped",
		    journal_path(md->journal), (unsigned long long)row->id);
		return (0);
	}
	if (row->extra != NULL)
		st = r3q__job_state__unpack(NULL, row->extralen, row->extra);
	if (row->id >= md->next_job)
		md->next_job = row->id + 1;
	j = xcalloc(1, sizeof(*j));
	j->j_id = row->id;
	(void)sched_policy_parse(p->policy, &pol);
	job_set_params(j, p, pol, p->queue_factor);
	r3q__es_params__free_unpacked(p, NULL);
	j->j_start = now - (wnow > row->submitted_ns ? wnow -
	    row->submitted_ns : 0);
	j->j_start_wall = row->submitted_ns;
	j->j_submitted = row->submitted_ns / NS_PER_SEC;
	snprintf(j->j_error, sizeof(j->j_error), "%s", row->error);
	if (st != NULL) {
		j->j_done = st->done;
		j->j_dropped = st->dropped;
		j->j_speed_time = st->speed_time;
		j->j_execs = st->executions;
		for (i = 0; i < st->n_workers; i++)
			job_roster_add(j, st->workers[i]->name,
			    st->workers[i]->cpus, st->workers[i]->speed)->delay_ms =
			    st->workers[i]->delay_ms;
	}
	memset(&jl, 0, sizeof(jl));
	jl.job = j;
	if (journal_load_gens(md->journal, j->j_id, job_load_gen, &jl) == -1)
		goto fail;
	TAILQ_INSERT_TAIL(&md->jobs, j, j_entry);
	if (strcmp(row->state, "running") != 0) {
		j->j_state = strcmp(row->state, "done") == 0 ? JOB_DONE :
		    strcmp(row->state, "cancelled") == 0 ? JOB_CANCELLED :
		    JOB_FAILED;
		if (st != NULL) {
			j->j_end = j->j_start + st->elapsed_ns;
			j->j_best = st->best;
			if (st->n_best_x == j->j_params.dim) {
				j->j_best_x = xcalloc(st->n_best_x,
				    sizeof(double));
				memcpy(j->j_best_x, st->best_x,
				    st->n_best_x * sizeof(double));
			}
		} else
			j->j_end = j->j_start;
		r3q__job_state__free_unpacked(st, NULL);
		return (0);
	}
	if (st != NULL)
		r3q__job_state__free_unpacked(st, NULL);
	j->j_state = JOB_RUNNING;
	if (journal_load_results(md->journal, j->j_id, job_load_result,
	    &jl) == -1)
		goto fail;
	if (job_replay(j, row, &jl, err, sizeof(err)) == -1) {
		log_warnx("%s: job %llu cannot resume: %s",
		    journal_path(md->journal), (unsigned long long)j->j_id,
		    err);
		snprintf(j->j_error, sizeof(j->j_error), "cannot resume "
		    "from the journal: %s", err);
		j->j_end = now;
		j->j_state = JOB_FAILED;
		job_journal_put(j);
	} else
		log_info("job %llu resumed at generation %u with %zu results "
		    "from the journal", (unsigned long long)j->j_id,
		    row->gen, jl.n);
	free(jl.res);
	return (0);
 fail:
	free(jl.res);
	return (-1);
}

/* Take a key word from the journal, or put ours there; -1 on error. */
static int
job_journal_key(const char *name, uint64_t *k)
{
	uint64_t	 v;
	int		 rc;

	if ((rc = journal_meta_get(md->journal, name, &v)) == -1)
		return (-1);
	if (rc == 0 && v != 0) {
		*k = v;
		return (0);
	}
	return (journal_meta_set(md->journal, name, *k));
}

/*
 * Open the journal at startup and resume what it holds: the epoch (so the
 * results workers finished while masterd was down still count), the id
 * counters, and every job.  -1 (logged) if it cannot be used.
 */
int
job_journal_open(void)
{
	struct timeval	 tv = { 3600, 0 };
	char		 err[512];
	uint64_t	 v;
	int		 rc;

	if (strcmp(md->conf.journal, "none") == 0)
		return (0);
	masterd_mkparent(md->conf.journal, 0750, "journal");
	if ((md->journal = journal_open(md->conf.journal, err,
	    sizeof(err))) == NULL) {
		log_warnx("%s", err);
		return (-1);
	}
	if ((rc = journal_meta_get(md->journal, "epoch", &v)) == -1)
		goto fail;
	if (rc == 0 && v != 0)
		md->epoch = v;
	else if (journal_meta_set(md->journal, "epoch", md->epoch) == -1)
		goto fail;
	/* The key of the copies' tags: a restart keeps them valid. */
	if (job_journal_key("tag_key0", &md->mac.k0) == -1 ||
	    job_journal_key("tag_key1", &md->mac.k1) == -1)
		goto fail;
	if ((rc = journal_meta_get(md->journal, "next_job", &v)) == -1)
		goto fail;
	if (rc == 0 && v > md->next_job)
		md->next_job = v;
	if ((rc = journal_meta_get(md->journal, "next_task", &v)) == -1)
		goto fail;
	if (rc == 0 && v > md->next_task)
		md->next_task = v;
	job_journal_prune(-1, 0, NULL);
	if (journal_load_jobs(md->journal, job_load, NULL) == -1)
		goto fail;
	job_journal_commit();
	md->prune = event_new(md->base, -1, EV_PERSIST, job_journal_prune,
	    NULL);
	if (md->prune == NULL || evtimer_add(md->prune, &tv) == -1)
		fatalx("cannot arm the journal_retention timer");
	return (0);
 fail:
	log_warnx("%s", journal_error(md->journal));
	journal_close(md->journal);
	md->journal = NULL;
	return (-1);
}

/* At exit: commit and close. */
void
job_journal_close(void)
{
	if (md->prune != NULL)
		event_free(md->prune);
	md->prune = NULL;
	if (md->journal == NULL)
		return;
	job_journal_commit();
	journal_close(md->journal);
	md->journal = NULL;
}

/* Collect the journal's spans of a job into a JobTrace. */
static int
job_trace_span(void *arg, const struct journal_span *js)
{
	R3q__JobTrace	*t = arg;
	R3q__Span	*sp;

	if ((t->spans = reallocarray(t->spans, t->n_spans + 1,
	    sizeof(*t->spans))) == NULL)
		fatal("%s", __func__);
	sp = xcalloc(1, sizeof(*sp));
	r3q__span__init(sp);
	sp->gen = js->gen;
	sp->idx = js->idx;
	sp->task = js->task;
	sp->worker = xstrdup(js->worker);
	sp->slot = js->slot;
	sp->start_ns = js->start_ns;
	sp->end_ns = js->end_ns;
	sp->outcome = js->outcome;
	sp->replica = js->replica != 0;
	t->spans[t->n_spans++] = sp;
	return (0);
}

/*
 * Everything r3qctl report draws: the job with its generations, every
 * task execution (from the journal, or from memory without one) and the
 * workers that ran them.  -1 with a message.
 */
int
job_trace(const struct job *j, R3q__JobTrace *t, char *err, size_t errlen)
{
	size_t	 i, n;

	r3q__job_trace__init(t);
	t->info = xcalloc(1, sizeof(*t->info));
	job_info(j, t->info, 1);
	t->start_ns = j->j_start_wall;
	t->n_workers = j->j_nroster;
	t->workers = xcalloc(j->j_nroster + 1, sizeof(*t->workers));
	for (i = 0; i < j->j_nroster; i++)
		t->workers[i] = &j->j_roster[i];
	if (md->journal == NULL) {
		n = j->j_ntrace < TRACE_MAX ? j->j_ntrace : TRACE_MAX;
		t->spans = xcalloc(n + 1, sizeof(*t->spans));
		for (i = 0; i < n; i++) {
			t->spans[i] = xcalloc(1, sizeof(*t->spans[i]));
			*t->spans[i] = j->j_trace[i];
			t->spans[i]->worker = xstrdup(j->j_trace[i].worker);
		}
		t->n_spans = n;
		return (0);
	}
	if (journal_load_spans(md->journal, j->j_id, job_trace_span, t) ==
	    -1) {
		snprintf(err, errlen, "%s", journal_error(md->journal));
		job_trace_clear(t);
		return (-1);
	}
	return (0);
}

/* Free what job_trace() allocated. */
void
job_trace_clear(R3q__JobTrace *t)
{
	size_t	 i;

	for (i = 0; i < t->n_spans; i++) {
		free(t->spans[i]->worker);
		free(t->spans[i]);
	}
	free(t->spans);
	free(t->workers);
	if (t->info != NULL) {
		job_info_clear(t->info);
		free(t->info);
	}
	r3q__job_trace__init(t);
}

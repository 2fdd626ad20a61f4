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

#include "es/es.h"
#include "log.h"
#include "masterd.h"
#include "task/task.h"
#include "util.h"

#define JOBS_KEEP	1000	/* finished jobs remembered */
#define LU_MAX		20000

static void	job_start_batch(struct job *);

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

/* Drop the payloads of the current batch. */
static void
job_release_batch(struct job *j)
{
	free(j->j_tasks);
	j->j_tasks = NULL;
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

/* A job ends: tell its followers. */
static void
job_end(struct job *j, enum job_state st)
{
	j->j_state = st;
	j->j_end = mono_ns();
	job_release_batch(j);
	control_job_event(j, NULL);
	masterd_status();
}

/* Check a client's parameters and start an es job; NULL with a message. */
struct job *
job_submit(const R3q__EsParams *p, char *err, size_t errlen)
{
	struct es_params	 ep;
	enum sched_policy	 pol = md->policy;
	struct job		*j;

	memset(&ep, 0, sizeof(ep));
	ep.mu = p->mu;
	ep.lambda = p->lambda;
	ep.dim = p->dim;
	ep.generations = p->generations;
	ep.seed = p->seed;
	ep.reevaluate_parents = p->reevaluate_parents;
	if (es_params_check(&ep, err, errlen) == -1)
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
	job_trim();
	j = xcalloc(1, sizeof(*j));
	if ((j->j_es = es_new(&ep)) == NULL) {
		free(j);
		snprintf(err, errlen, "out of memory");
		return (NULL);
	}
	j->j_id = md->next_job++;
	j->j_state = JOB_RUNNING;
	j->j_policy = pol;
	j->j_qf = p->queue_factor ? p->queue_factor : md->queue_factor;
	r3q__es_params__init(&j->j_params);
	j->j_params.mu = p->mu;
	j->j_params.lambda = p->lambda;
	j->j_params.generations = p->generations;
	j->j_params.dim = p->dim;
	j->j_params.lu = p->lu;
	j->j_params.seed = p->seed;
	j->j_params.reevaluate_parents = p->reevaluate_parents;
	j->j_params.queue_factor = j->j_qf;
	j->j_params.work_ms = p->work_ms;
	j->j_params.spin = p->spin;
	j->j_params.policy = xstrdup(sched_policy_name(pol));
	j->j_start = mono_ns();
	j->j_submitted = wall_ns() / NS_PER_SEC;
	TAILQ_INSERT_TAIL(&md->jobs, j, j_entry);
	job_start_batch(j);
	return (j);
}

/* Cast away const for a protobuf field we only read from. */
static double *
unconst(const double *p)
{
	union { const double *c; double *m; } u = { .c = p };

	return (u.m);
}

/* Submit the current generation as one batch. */
static void
job_start_batch(struct job *j)
{
	struct sched_batch_config	 cfg;
	const struct task_kind		*k;
	uint64_t			*ids;
	size_t				 i, n;

	n = es_batch_size(j->j_es);
	/* A synthetic load makes the evaluation a synth task (Ridge + sleep). */
	k = task_kind_lookup(j->j_params.work_ms > 0 ? "synth" : "ridge-lu");
	j->j_tasks = xcalloc(n, sizeof(*j->j_tasks));
	ids = xcalloc(n, sizeof(*ids));
	j->j_first = md->next_task;
	j->j_n = n;
	md->next_task += n;
	for (i = 0; i < n; i++) {
		r3q__task__init(&j->j_tasks[i]);
		j->j_tasks[i].id = j->j_first + i;
		j->j_tasks[i].kind = (char *)(uintptr_t)k->name;
		j->j_tasks[i].n_x = j->j_params.dim;
		j->j_tasks[i].x = unconst(es_batch_x(j->j_es, i));
		j->j_tasks[i].lu = j->j_params.lu;
		j->j_tasks[i].work_ms = j->j_params.work_ms;
		j->j_tasks[i].spin = j->j_params.spin;
		ids[i] = j->j_first + i;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.policy = j->j_policy;
	cfg.queue_factor = j->j_qf;
	cfg.kind = k->index;
	cfg.max_attempts = md->conf.max_attempts;
	j->j_batch = md->next_batch++;
	j->j_nspans = 0;
	if (sched_submit(md->sched, j->j_batch, &cfg, ids, n, mono_ns()) == -1)
		fatalx("%s: core refused batch %llu", __func__,
		    (unsigned long long)j->j_batch);
	free(ids);
}

/* The accepted result of task idx of the current batch. */
void
job_result(struct job *j, size_t idx, double fitness)
{
	es_set_fitness(j->j_es, idx, fitness);
	j->j_done++;
}

/* One execution of a task of the current batch, for the measurements. */
void
job_span(struct job *j, uint32_t wid, uint64_t start, uint64_t end)
{
	struct exec_span	*ns;

	if (j->j_nspans == j->j_spancap) {
		j->j_spancap = j->j_spancap ? j->j_spancap * 2 : 128;
		ns = reallocarray(j->j_spans, j->j_spancap, sizeof(*ns));
		if (ns == NULL)
			fatal("%s", __func__);
		j->j_spans = ns;
	}
	j->j_spans[j->j_nspans].x_wid = wid;
	j->j_spans[j->j_nspans].x_start = start;
	j->j_spans[j->j_nspans].x_end = end;
	j->j_nspans++;
}

/*
 * The paper's measurements of one generation (ALGORITHMS.md section 1):
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
	uint64_t		 end, busy, win, comm = 0, a, b;
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
	for (i = 0; i < md->maxworkers; i++) {
		if ((w = md->workers[i]) == NULL)
			continue;
		busy = 0;
		for (k = 0; k < j->j_nspans; k++) {
			x = &j->j_spans[k];
			if (x->x_wid != w->w_id)
				continue;
			a = x->x_start > r->t_submit ? x->x_start : r->t_submit;
			b = x->x_end < end ? x->x_end : end;
			if (b > a)
				busy += b - a;
		}
		busy /= w->w_cpus;
		comm += busy < win ? win - busy : 0;
		speed += w->w_speed * w->w_cpus;
		nw++;
	}
	g->g_comm = nw ? comm / nw : 0;
	g->g_compute = g->g_total > g->g_sync + g->g_comm ?
	    g->g_total - g->g_sync - g->g_comm : 0;
	j->j_speed_time += speed * (double)g->g_total;
}

/* A task gave up after too many failures: the job fails. */
void
job_task_failed(struct job *j, size_t idx, const char *why)
{
	snprintf(j->j_error, sizeof(j->j_error), "generation %u, individual "
	    "%zu: %s", es_generation(j->j_es), idx, why);
	log_warnx("job %llu failed: %s", (unsigned long long)j->j_id,
	    j->j_error);
	sched_batch_abort(md->sched, j->j_batch, mono_ns());
	job_end(j, JOB_FAILED);
}

/* Stop a running job; its outstanding copies are withdrawn. */
void
job_cancel(struct job *j, const char *why)
{
	snprintf(j->j_error, sizeof(j->j_error), "%s", why);
	sched_batch_abort(md->sched, j->j_batch, mono_ns());
	job_end(j, JOB_CANCELLED);
}

/* The core says a batch is complete: select, report, go on. */
void
job_batch_done(uint64_t batch, const struct sched_batch_report *rep)
{
	struct gen_report	*g, *ng;
	struct job		*j;
	uint32_t		 gen;

	TAILQ_FOREACH(j, &md->jobs, j_entry)
		if (j->j_state == JOB_RUNNING && j->j_batch == batch)
			break;
	if (j == NULL)
		return;
	gen = es_generation(j->j_es);
	if (es_advance(j->j_es) == -1) {
		/* The core said done, so every result must be in. */
		fatalx("job %llu: batch %llu done with results missing",
		    (unsigned long long)j->j_id, (unsigned long long)batch);
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
	job_start_batch(j);
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
	info->best = j->j_ngens ? es_best_f(j->j_es) : 0;
	info->error = (char *)(uintptr_t)j->j_error;
	info->elapsed_ns = (j->j_state == JOB_RUNNING ? mono_ns() :
	    j->j_end) - j->j_start;
	info->tasks_done = j->j_done;
	info->results_dropped = j->j_dropped;
	info->submitted_unix = j->j_submitted;
	job_totals(j, info);
	if (!full || j->j_ngens == 0)
		return;
	info->n_best_x = j->j_params.dim;
	info->best_x = unconst(es_best_x(j->j_es));
	info->n_gens = j->j_ngens;
	info->gens = xcalloc(j->j_ngens, sizeof(*info->gens));
	for (i = 0; i < j->j_ngens; i++) {
		info->gens[i] = xcalloc(1, sizeof(**info->gens));
		r3q__gen_report__init(info->gens[i]);
		info->gens[i]->job = j->j_id;
		info->gens[i]->generation = j->j_gens[i].g_gen;
		info->gens[i]->best = j->j_gens[i].g_best;
		info->gens[i]->elapsed_ns = j->j_gens[i].g_elapsed;
		info->gens[i]->tasks = j->j_gens[i].g_tasks;
		info->gens[i]->total_ns = j->j_gens[i].g_total;
		info->gens[i]->sync_ns = j->j_gens[i].g_sync;
		info->gens[i]->comm_ns = j->j_gens[i].g_comm;
		info->gens[i]->compute_ns = j->j_gens[i].g_compute;
		info->gens[i]->replicas = j->j_gens[i].g_replicas;
		info->gens[i]->killed_held = j->j_gens[i].g_killed_held;
		info->gens[i]->killed_running = j->j_gens[i].g_killed_running;
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

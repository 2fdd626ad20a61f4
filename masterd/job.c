/*
 * The generic job layer: the job list, a job's batches (their task ids'
 * ranges are job_range.c's), the executions (spans) and
 * the paper's measurements of each batch (job_measure(), doc/algorithms.md
 * §1.6), the rosters, and the settings a client may choose.  What a job
 * computes is its driver's business (struct job_driver, the table in
 * job_drivers.c); what clients read is job_info.c's, the journal's rows
 * job_journal.c's, the kinds kind.c's, the caps limits.c's.
 *
 * The layer calls down only: the core, the journal, its drivers.  What
 * the server and the control side must do it marks (job_mark()): news
 * for those who follow a job, told at the flush by control_tell; the
 * core's actions to carry out, the frames to send, a driver's clients to
 * serve, a driver to go on at the next pass (job_more()), a TaskPush
 * (job_push()), which the control side does through the wake it
 * registered.  Payloads built as tasks are sent live in job_scratch()
 * until the flush.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "journal.h"
#include "log.h"
#include "masterd.h"
#include "report/measure.h"
#include "util.h"

#define JOBS_KEEP	1000	/* finished jobs remembered */
#define TRACE_MAX	1000000	/* executions kept in memory per job */

/* The core's next batch id. */
static uint64_t	 next_batch = 1;

/*
 * The job list and the ids handed out, owned by this file (others walk
 * the list with job_first() and job_next()), the offset of the wall
 * clock from the monotonic one, and what the layer was given at start
 * (job_init()): the core, and the configuration, which a reload
 * overwrites in place.
 */
static struct {
	struct joblist			 list;
	uint64_t			 next_job;
	uint64_t			 next_task;
	uint64_t			 wall_off;	/* wall ns - mono ns */
	struct sched			*sched;
	const struct masterd_config	*conf;
	uint64_t			 pending;	/* job_pending_all() */
	struct u64map			 bybid;		/* core batch id ->
							   live batch */
} jobs;

/*
 * What the job layer leaves the control side to do (job_mark()): news
 * kept for control_tell at the flush, and wake, which the control side
 * registered (job_wake_set()) and which is told at once of any mark.
 */
static struct {
	unsigned	  n_news;	/* JOB_NEWS_TELL, JOB_NEWS_STATUS */
	void		(*n_wake)(unsigned);
} news;

/* TaskPushes for workers, kept until the flush (job_push()). */
static struct {
	struct job_push	*pu_v;
	size_t		 pu_n, pu_cap;
} pu;

/*
 * Memory for payloads built as tasks are sent (job_scratch()): it lives
 * until the frames leave, at the next flush (job_scratch_reset()).
 */
struct scratch {
	struct scratch	*sc_next;
	size_t		 sc_cap;
	size_t		 sc_used;
	uint8_t		 sc_data[];
};
#define SCRATCH_CHUNK	65536
static struct scratch	*scratch;

static void	job_trace_free(struct job *);
static void	job_batch_free(struct job_batch *);

/* Start the job layer over the core sched, under configuration c. */
void
job_init(struct sched *sched, const struct masterd_config *c)
{
	TAILQ_INIT(&jobs.list);
	jobs.next_job = 1;
	jobs.next_task = 1;
	jobs.wall_off = wall_ns() - mono_ns();
	jobs.sched = sched;
	jobs.conf = c;
}

/* Take task idx of b out of the core; -1 if the core had it no more. */
int
job_task_cancel(struct job_batch *b, size_t idx)
{
	return (sched_task_cancel(jobs.sched, job_task_id(b, idx),
	    mono_ns()));
}

/* How many workers offer kind now, as the core counts them. */
size_t
job_kind_workers(uint32_t kind)
{
	return (jobs.sched != NULL ? sched_kind_workers(jobs.sched, kind) : 0);
}

/* The first job of the list (the oldest); NULL if there is none. */
struct job *
job_first(void)
{
	return (TAILQ_FIRST(&jobs.list));
}

/* The job after j on the list; NULL after the last. */
struct job *
job_next(const struct job *j)
{
	return (TAILQ_NEXT(j, j_entry));
}

/* A job made from the journal (job_journal.c) joins the list. */
void
job_adopt(struct job *j)
{
	TAILQ_INSERT_TAIL(&jobs.list, j, j_entry);
}

/* The next job id and the next task id to hand out. */
void
job_ids(uint64_t *next_job, uint64_t *next_task)
{
	*next_job = jobs.next_job;
	*next_task = jobs.next_task;
}

/* Hand out no job id below next_job and no task id below next_task. */
void
job_ids_raise(uint64_t next_job, uint64_t next_task)
{
	if (next_job > jobs.next_job)
		jobs.next_job = next_job;
	if (next_task > jobs.next_task)
		jobs.next_task = next_task;
}

/* The wall clock's ns at monotonic ns mono, as the journal keeps it. */
uint64_t
job_wall(uint64_t mono)
{
	return (mono + jobs.wall_off);
}

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

/*
 * No connected worker offers kind id, and the last to withdraw it said
 * why it cannot run: the tasks of that kind in live batches would wait
 * for ever, so they fail now with that reason, each reported to its
 * driver as a task that gave up.  (A kind no worker offers for want of
 * workers is waited for: workers come and go.)
 */
void
job_kind_unavailable(uint32_t id)
{
	struct job		*j;
	struct job_batch	*b;
	const char		*why;
	uint64_t		 now = mono_ns();
	size_t			 i, n = 0;

	if ((why = kind_why(id)) == NULL ||
	    sched_kind_workers(jobs.sched, id) > 0)
		return;
	TAILQ_FOREACH(j, &jobs.list, j_entry) {
		if (j->j_state != JOB_RUNNING)
			continue;
		TAILQ_FOREACH(b, &j->j_batches, b_entry) {
			if (!b->b_live || b->b_kind != id)
				continue;
			for (i = 0; i < b->b_n; i++)
				if (sched_task_cancel(jobs.sched,
				    job_task_id(b, i), now) == 0) {
					job_outcome(b, i, OUTCOME_FAILED,
					    why);
					n++;
				}
		}
	}
	if (n > 0)
		log_warnx("%zu task%s failed: %s", n, n == 1 ? "" : "s",
		    why);
}

/* The control side's: what to do when the job layer marks work. */
void
job_wake_set(void (*wake)(unsigned))
{
	news.n_wake = wake;
}

/*
 * Mark work for the control side: JOB_NEWS_TELL (a generation, or an
 * end, for those who follow the job) and JOB_NEWS_STATUS wait for the
 * flush; JOB_NEWS_DRAIN (the core has work: carry out its actions) and
 * JOB_NEWS_FLUSH (send the frames being built, before the payloads they
 * borrow go) are done at once.
 */
void
job_mark(unsigned what)
{
	news.n_news |= what & (JOB_NEWS_TELL | JOB_NEWS_STATUS);
	if (news.n_wake != NULL)
		news.n_wake(what);
}

/*
 * Have j's driver go on from the loop's next pass (d_more): a large
 * generation fed to the core a chunk a pass, an epoch after an exchange.
 */
void
job_more(struct job *j)
{
	j->j_more = 1;
	job_mark(JOB_NEWS_MORE);
}

/* The loop's next pass: the drivers that asked to go on do. */
void
job_go_on(void)
{
	struct job	*j;

	TAILQ_FOREACH(j, &jobs.list, j_entry)
		if (j->j_more) {
			j->j_more = 0;
			j->j_drv->d_more(j);
		}
}

/*
 * Send worker w a TaskPush at the flush, after the Assign being built (a
 * push may name tasks it carries): bound (0: none) for tasks ids, and the
 * tasks in donate asked to give part of their work back.
 */
void
job_push(const struct worker *w, const uint64_t *ids, size_t n,
    uint32_t bound, const uint64_t *donate, size_t ndonate)
{
	struct job_push	*p;

	if (pu.pu_n == pu.pu_cap) {
		pu.pu_cap = pu.pu_cap ? pu.pu_cap * 2 : 8;
		if ((pu.pu_v = reallocarray(pu.pu_v, pu.pu_cap,
		    sizeof(*pu.pu_v))) == NULL)
			fatal("%s", __func__);
	}
	p = &pu.pu_v[pu.pu_n++];
	p->p_wid = w->w_id;
	p->p_node = w->w_node;
	p->p_ids = xcalloc(n + 1, sizeof(*ids));
	if (n > 0)
		memcpy(p->p_ids, ids, n * sizeof(*ids));
	p->p_n = n;
	p->p_bound = bound;
	p->p_donate = xcalloc(ndonate + 1, sizeof(*donate));
	if (ndonate > 0)
		memcpy(p->p_donate, donate, ndonate * sizeof(*donate));
	p->p_ndonate = ndonate;
	job_mark(JOB_NEWS_CLIENTS);
}

/* The TaskPushes kept for the flush; job_pushes_clear() once sent. */
struct job_push *
job_pushes(size_t *n)
{
	*n = pu.pu_n;
	return (pu.pu_v);
}

/* The TaskPushes were sent (or their workers are gone): forget them. */
void
job_pushes_clear(void)
{
	size_t	 i;

	for (i = 0; i < pu.pu_n; i++) {
		free(pu.pu_v[i].p_ids);
		free(pu.pu_v[i].p_donate);
	}
	pu.pu_n = 0;
}

/* Take the news kept for control_tell. */
unsigned
job_news_take(void)
{
	unsigned	 n = news.n_news;

	news.n_news = 0;
	return (n);
}

/* n bytes that live until the frames being built have left. */
void *
job_scratch(size_t n)
{
	struct scratch	*sc;
	void		*p;

	n = (n + 15) & ~(size_t)15;
	if (scratch == NULL || scratch->sc_cap - scratch->sc_used < n) {
		sc = xcalloc(1, sizeof(*sc) + (n > SCRATCH_CHUNK ? n :
		    SCRATCH_CHUNK));
		sc->sc_cap = n > SCRATCH_CHUNK ? n : SCRATCH_CHUNK;
		sc->sc_next = scratch;
		scratch = sc;
	}
	p = scratch->sc_data + scratch->sc_used;
	scratch->sc_used += n;
	return (p);
}

/* The frames left: the scratch is free again (all: give it all back). */
void
job_scratch_reset(int all)
{
	struct scratch	*sc;

	while (scratch != NULL && (all || scratch->sc_next != NULL ||
	    scratch->sc_cap != SCRATCH_CHUNK)) {
		sc = scratch;
		scratch = sc->sc_next;
		free(sc);
	}
	if (scratch != NULL)
		scratch->sc_used = 0;
}

/* A job by id. */
struct job *
job_find(uint64_t id)
{
	struct job	*j;

	TAILQ_FOREACH(j, &jobs.list, j_entry)
		if (j->j_id == id)
			return (j);
	return (NULL);
}

/* Free one job. */
void
job_free(struct job *j)
{
	struct job_batch	*b;

	TAILQ_REMOVE(&jobs.list, j, j_entry);
	while ((b = TAILQ_FIRST(&j->j_batches)) != NULL)
		job_batch_free(b);
	/* Its batches gone, it counts no pending task. */
	u64map_free(&j->j_bygen);
	if (j->j_drv->d_free != NULL)
		j->j_drv->d_free(j);
	free(j->j_gens);
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

	TAILQ_FOREACH(j, &jobs.list, j_entry)
		if (j->j_state != JOB_RUNNING)
			n++;
	for (j = TAILQ_FIRST(&jobs.list); j != NULL && n > JOBS_KEEP;
	    j = next) {
		next = TAILQ_NEXT(j, j_entry);
		if (j->j_state != JOB_RUNNING) {
			job_free(j);
			n--;
		}
	}
}

/*
 * The settings of a job whose client chose none: masterd.conf's (its
 * names checked when the file was read).
 */
void
job_sched_default(struct job_sched *js)
{
	js->js_policy = SCHED_POLICY_R3Q;
	(void)sched_policy_parse(jobs.conf->policy, &js->js_policy);
	js->js_qf = SCHED_QF_AUTO;
	(void)masterd_parse_qf(jobs.conf->queue_factor, &js->js_qf);
	js->js_balance = SCHED_BALANCE_NONE;
	(void)sched_balance_parse(jobs.conf->balance, &js->js_balance);
	js->js_verify = jobs.conf->verify;
}

/*
 * A client's choice of scheduling settings over the defaults in js, for
 * every driver: policy and balance by name (NULL or "": the default), a
 * queue factor and verify (0: the default).  -1 with a message.
 */
int
job_sched_parse(struct job_sched *js, const char *policy, uint32_t qf,
    const char *balance, uint32_t verify, char *err, size_t errlen)
{
	if (policy != NULL && policy[0] != '\0' &&
	    sched_policy_parse(policy, &js->js_policy) == -1) {
		snprintf(err, errlen, "unknown policy '%s' (%s)", policy,
		    sched_policy_list());
		return (-1);
	}
	if (qf > SCHED_QF_MAX && qf != SCHED_QF_AUTO) {
		snprintf(err, errlen, "queue factor must be at most %d",
		    SCHED_QF_MAX);
		return (-1);
	}
	if (balance != NULL && balance[0] != '\0' &&
	    sched_balance_parse(balance, &js->js_balance) == -1) {
		snprintf(err, errlen, "unknown balance '%s' (none, one, power, "
		    "global)", balance);
		return (-1);
	}
	if (verify > SCHED_VERIFY_MAX) {
		snprintf(err, errlen, "verify must be from 1 to %d",
		    SCHED_VERIFY_MAX);
		return (-1);
	}
	if (qf != 0)
		js->js_qf = qf;
	if (verify != 0)
		js->js_verify = verify;
	return (0);
}

/* A new running job of driver drv with settings js, on the job list. */
struct job *
job_new(const struct job_driver *drv, const struct job_sched *js)
{
	struct job	*j;

	job_trim();
	j = xcalloc(1, sizeof(*j));
	j->j_drv = drv;
	j->j_id = jobs.next_job++;
	j->j_state = JOB_RUNNING;
	j->j_policy = js->js_policy;
	j->j_qf = js->js_qf;
	j->j_verify = js->js_verify;
	j->j_balance = js->js_balance;
	TAILQ_INIT(&j->j_batches);
	j->j_start = mono_ns();
	j->j_start_wall = job_wall(j->j_start);
	j->j_submitted = wall_ns() / NS_PER_SEC;
	TAILQ_INSERT_TAIL(&jobs.list, j, j_entry);
	job_pending_state(j);
	return (j);
}

/*
 * j counted in job_pending_all() while it runs, out of it otherwise:
 * called where j_state changes (a job loaded from the journal comes in
 * at its first batch's job_pending_sync()).
 */
void
job_pending_state(struct job *j)
{
	int	 want = j->j_state == JOB_RUNNING;

	if (want == j->j_pcounted)
		return;
	if (want)
		jobs.pending += j->j_pending;
	else
		jobs.pending -= j->j_pending;
	j->j_pcounted = want;
}

/*
 * b's tasks not yet ended counted anew, in its job's j_pending and, if
 * the job runs, in the total: called wherever b_n, b_nover or b_live
 * change, so that the admission of every submit costs O(1) rather than a
 * walk of every batch of every job.
 */
void
job_pending_sync(struct job_batch *b)
{
	struct job	*j = b->b_job;
	size_t		 n;

	job_pending_state(j);
	n = b->b_live && b->b_n > b->b_nover ? b->b_n - b->b_nover : 0;
	if (n == b->b_pendc)
		return;
	j->j_pending += n;
	j->j_pending -= b->b_pendc;
	if (j->j_pcounted) {
		jobs.pending += n;
		jobs.pending -= b->b_pendc;
	}
	b->b_pendc = n;
}

/* Tasks of every running job not yet ended, counted as they change. */
uint64_t
job_pending_total(void)
{
	return (jobs.pending);
}

/* b is no longer live: out of the pending count and the map by core id. */
static void
job_batch_unlive(struct job_batch *b)
{
	b->b_live = 0;
	b->b_job->j_nlive--;
	(void)u64map_del(&jobs.bybid, b->b_id, NULL);
	job_pending_sync(b);
}

static void
job_batch_free(struct job_batch *b)
{
	struct job	*j = b->b_job;
	uint64_t	 v;
	size_t		 i;

	if (b->b_live) {
		sched_batch_abort(jobs.sched, b->b_id, mono_ns());
		job_batch_unlive(b);
	} else {
		/* A past one. */
		if (j->j_past == b)
			j->j_past = TAILQ_NEXT(b, b_entry);
		j->j_npast--;
	}
	if (u64map_get(&j->j_bygen, b->b_gen, &v) &&
	    v == (uint64_t)(uintptr_t)b)
		(void)u64map_del(&j->j_bygen, b->b_gen, NULL);
	kind_release(b->b_kind, b->b_kowner);
	if (j->j_drv->d_batch_free != NULL)
		j->j_drv->d_batch_free(j, b);
	else
		free(b->b_ds);
	TAILQ_REMOVE(&j->j_batches, b, b_entry);
	job_range_drop(b);
	for (i = 0; i < b->b_why.m_nslots; i++)
		if (b->b_why.m_slots[i].used)
			free((char *)(uintptr_t)b->b_why.m_slots[i].v);
	u64map_free(&b->b_why);
	free(b->b_spans);
	free(b->b_ended);
	free(b);
}

/*
 * Open a batch of j with tasks of kind: in the core at once, so that the
 * tasks added run while the client adds more.  Its number is the job's
 * next one.
 */
struct job_batch *
job_batch_open(struct job *j, uint32_t kind, uint64_t client)
{
	struct sched_batch_config	 cfg;
	struct job_batch		*b;

	b = xcalloc(1, sizeof(*b));
	b->b_job = j;
	b->b_gen = j->j_nbatches++;
	b->b_client = client;
	b->b_kind = kind;
	b->b_id = next_batch++;
	memset(&cfg, 0, sizeof(cfg));
	cfg.policy = j->j_policy;
	cfg.queue_factor = j->j_qf;
	cfg.kind = kind;
	cfg.max_attempts = jobs.conf->max_attempts;
	cfg.max_kills = jobs.conf->max_kills;
	cfg.verify = j->j_verify;
	cfg.balance = j->j_balance;
	cfg.keep_copies = j->j_keep_copies;
	if (sched_batch_open(jobs.sched, b->b_id, &cfg, mono_ns()) == -1)
		fatal("%s: core refused batch %llu", __func__,
		    (unsigned long long)b->b_id);
	b->b_live = 1;
	j->j_nlive++;
	b->b_kowner = kind_hold(kind, j->j_owner);
	if (u64map_put(&jobs.bybid, b->b_id, (uint64_t)(uintptr_t)b) == -1 ||
	    u64map_put(&j->j_bygen, b->b_gen, (uint64_t)(uintptr_t)b) == -1)
		fatal("%s", __func__);
	job_pending_sync(b);
	/* Live batches first, in number order. */
	TAILQ_INSERT_HEAD(&j->j_batches, b, b_entry);
	return (b);
}

/* j's batch number gen, live or recent; NULL if forgotten.  O(1). */
struct job_batch *
job_batch_by_gen(const struct job *j, uint32_t gen)
{
	uint64_t	 v;

	if (!u64map_get(&j->j_bygen, gen, &v))
		return (NULL);
	return ((struct job_batch *)(uintptr_t)v);
}

/*
 * Give the core n tasks of b, whose ids job_batch_reserve() gave (its
 * driver may have counted some over meanwhile: the pending count anew).
 */
void
job_batch_submit(struct job_batch *b, const struct sched_task *t, size_t n)
{
	job_pending_sync(b);
	if (n > 0 && sched_batch_add(jobs.sched, b->b_id, t, n,
	    mono_ns()) == -1)
		fatal("%s: core refused tasks of batch %llu", __func__,
		    (unsigned long long)b->b_id);
}

/*
 * Reserve n ids for b's next indices b_n..: first.., or the next free
 * ones if first is 0 (a batch resumed from the journal keeps its ids, so
 * that results the workers finished meanwhile still count).  Returns the
 * first.  The tasks go to the core with job_batch_submit().
 */
uint64_t
job_batch_reserve(struct job_batch *b, uint64_t first, size_t n)
{
	if (first == 0)
		first = jobs.next_task;
	if (first + n > jobs.next_task)
		jobs.next_task = first + n;
	job_journal_mark(jobs.next_task);
	if (n > 0)
		job_range_add(b, first, n, b->b_n);
	b->b_n += n;
	job_pending_sync(b);
	return (first);
}

/* b takes no more tasks: it is done once they are. */
void
job_batch_close(struct job_batch *b)
{
	if (b->b_closed)
		return;
	b->b_closed = 1;
	if (b->b_live)
		sched_batch_close(jobs.sched, b->b_id, mono_ns());
}

/*
 * Has task idx of b ended (its outcome taken)?  A copy of it the core
 * handed out before that, still in the actions not yet drained, must not
 * be packed: its driver may have freed the payload with the outcome.
 */
int
job_task_ended(const struct job_batch *b, size_t idx)
{
	return (idx / 8 < b->b_endedlen &&
	    (b->b_ended[idx / 8] & (1u << (idx % 8))) != 0);
}

/* The message of task idx (id tid) of b: its driver's payload, sent now. */
void
job_task(struct job_batch *b, size_t idx, uint64_t tid, R3q__Task *t)
{
	r3q__task__init(t);
	t->id = tid;
	t->kind = (char *)(uintptr_t)kind_name(b->b_kind);
	b->b_job->j_drv->d_task(b->b_job, b, idx, t);
}

/*
 * The accepted output of task idx of b.  It is journaled in the
 * transaction that is committed before anything else leaves masterd
 * (job_journal_commit() from the server's flush), then its driver takes it.
 */
static void
job_ended(struct job_batch *b, size_t idx, enum job_outcome o,
    const void *out, size_t len, const char *why)
{
	struct journal_result	 jr;
	struct job		*j = b->b_job;
	uint64_t		 seq = ++j->j_seq;
	char			*old;
	size_t			 n;

	b->b_nover++;
	job_pending_sync(b);
	if (idx / 8 >= b->b_endedlen) {
		n = b->b_n > idx ? (b->b_n + 7) / 8 : idx / 8 + 1;
		b->b_ended = xreallocarray(b->b_ended, n, 1);
		memset(b->b_ended + b->b_endedlen, 0, n - b->b_endedlen);
		b->b_endedlen = n;
	}
	b->b_ended[idx / 8] |= 1u << (idx % 8);
	if ((old = job_task_why(b, idx, NULL)) != NULL)
		free(old);
	if (job_journal_handle() != NULL) {
		memset(&jr, 0, sizeof(jr));
		jr.job = j->j_id;
		jr.gen = b->b_gen;
		jr.idx = (uint32_t)idx;
		jr.status = o;
		jr.seq = seq;
		jr.output = out;
		jr.outlen = len;
		jr.error = why;
		if (journal_result_add(job_journal_handle(), &jr) == -1)
			job_journal_error();
	}
	j->j_drv->d_result(j, b, idx, seq, o, out, len, why);
}

void
job_output(struct job_batch *b, size_t idx, const void *out, size_t len)
{
	b->b_job->j_done++;
	job_ended(b, idx, OUTCOME_OK, out, len, NULL);
}

/* Task idx of b gave up or was cancelled: its driver decides. */
void
job_outcome(struct job_batch *b, size_t idx, enum job_outcome o,
    const char *why)
{
	if (o != OUTCOME_CANCELLED)
		b->b_job->j_failed++;
	job_ended(b, idx, o, NULL, 0, why);
}

/*
 * Why task idx of b last failed: with text, remember it (the task may
 * give up later, on another event, and its own reason must go with it);
 * without, take it (malloc'd) or NULL.
 */
char *
job_task_why(struct job_batch *b, size_t idx, const char *text)
{
	uint64_t	 v;

	if (text == NULL)
		return (u64map_del(&b->b_why, idx, &v) ? (char *)(uintptr_t)v :
		    NULL);
	if (u64map_del(&b->b_why, idx, &v))
		free((char *)(uintptr_t)v);
	if (u64map_put(&b->b_why, idx, (uintptr_t)xstrdup(text)) == -1)
		fatal("%s", __func__);
	return (NULL);
}

/* Note that worker name (cpus, speed) ran tasks of j. */
R3q__WorkerSeen *
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

/* Forget the workers that ran tasks of j. */
void
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

/*
 * Record one execution (or withdrawal) of task idx for the reports: in the
 * journal, or in memory when there is none.
 */
static void
job_journal_span(struct job *j, struct worker *w, uint32_t gen, size_t idx,
    uint64_t tid, uint32_t slot, uint64_t start, uint64_t end,
    enum span_outcome o, int replica)
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
	if (job_journal_handle() == NULL) {
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
		sp->task = tid;
		/* the roster owns the name */
		sp->worker = j->j_roster[w->w_roster_idx].name;
		sp->slot = slot;
		sp->start_ns = start;
		sp->end_ns = end;
		sp->outcome = (uint32_t)o;
		sp->replica = (replica & SPAN_F_REPLICA) != 0;
		sp->moved = (replica & SPAN_F_MOVED) != 0;
		return;
	}
	memset(&js, 0, sizeof(js));
	js.job = j->j_id;
	js.gen = gen;
	js.idx = (uint32_t)idx;
	js.task = tid;
	memcpy(js.worker, w->w_name, strnlen(w->w_name,
	    sizeof(js.worker) - 1));	/* js is zeroed */
	js.slot = slot;
	js.start_ns = start;
	js.end_ns = end;
	js.outcome = (uint32_t)o;
	js.replica = (uint32_t)replica & (SPAN_F_REPLICA | SPAN_F_MOVED);
	if (journal_span_add(job_journal_handle(), &js) == -1)
		job_journal_error();
}

/*
 * A held copy of task idx (id tid) of batch gen was withdrawn before it
 * ran; replica says whether it was an extra copy.
 */
void
job_withdrawn(struct job *j, struct worker *w, uint32_t gen, size_t idx,
    uint64_t tid, int replica)
{
	uint64_t	 now = wall_ns();

	job_journal_span(j, w, gen, idx, tid, UINT32_MAX, now, now,
	    SPAN_WITHDRAWN, replica);
}

/*
 * One execution of task idx of batch gen, as the result r tells it:
 * journaled for the reports (in wall-clock time) and, while its batch
 * runs, kept for the measurements (in masterd's clock).
 */
void
job_span(struct job *j, struct worker *w, uint32_t gen, size_t idx,
    const R3q__Result *r, enum span_outcome o)
{
	struct job_batch	*b;
	struct exec_span	*ns;
	uint64_t		 start, end;

	if (o == SPAN_DONE)
		j->j_out_wid = w->w_id;
	if (r->start_ns == 0 || r->end_ns < r->start_ns)
		return;
	job_journal_span(j, w, gen, idx, r->id, r->slot, r->start_ns,
	    r->end_ns, o, (r->replica ? SPAN_F_REPLICA : 0) |
	    (r->active ? SPAN_F_MOVED : 0));
	if (j->j_state != JOB_RUNNING || (b = job_batch_by_gen(j, gen)) ==
	    NULL || !b->b_live)
		return;		/* its batch is measured already */
	start = r->start_ns > jobs.wall_off ? r->start_ns - jobs.wall_off : 0;
	end = r->end_ns > jobs.wall_off ? r->end_ns - jobs.wall_off : 0;
	if (b->b_nspans == b->b_spancap) {
		b->b_spancap = b->b_spancap ? b->b_spancap * 2 : 128;
		ns = reallocarray(b->b_spans, b->b_spancap, sizeof(*ns));
		if (ns == NULL)
			fatal("%s", __func__);
		b->b_spans = ns;
	}
	b->b_spans[b->b_nspans].x_wid = w->w_id;
	b->b_spans[b->b_nspans].x_start = start;
	b->b_spans[b->b_nspans].x_end = end;
	b->b_nspans++;
}

/*
 * The paper's measurements of one generation (doc/algorithms.md §1.6, as
 * measure_gen() takes them) over the workers connected now.  Worker times
 * were converted to our clock on arrival.
 */
static void
job_measure(struct job *j, struct job_batch *bt,
    const struct sched_batch_report *r, struct gen_report *g)
{
	struct measure_span	*xs;
	struct measure_worker	*ws;
	struct measure		 m;
	struct worker		*w;
	uint32_t		 i;
	size_t			 k;

	xs = xcalloc(bt->b_nspans + 1, sizeof(*xs));
	for (k = 0; k < bt->b_nspans; k++) {
		xs[k].ms_wid = bt->b_spans[k].x_wid;
		xs[k].ms_start = bt->b_spans[k].x_start;
		xs[k].ms_end = bt->b_spans[k].x_end;
	}
	ws = xcalloc(worker_ids() + 1, sizeof(*ws));
	i = 0;
	while ((w = worker_next(&i)) != NULL) {	/* the others' mw_cpus 0 */
		ws[w->w_id].mw_cpus = w->w_cpus;
		ws[w->w_id].mw_speed = w->w_speed;
	}
	if (measure_gen(r, xs, bt->b_nspans, ws, worker_ids(), &m) == -1)
		fatal("%s", __func__);
	free(xs);
	free(ws);
	g->g_total = m.m_total;
	g->g_sync = m.m_sync;
	g->g_comm = m.m_comm;
	g->g_compute = m.m_compute;
	g->g_replicas = m.m_replicas;
	g->g_killed_held = m.m_killed_held;
	g->g_killed_running = m.m_killed_running;
	j->j_speed_time += m.m_speed_time;
}

/*
 * A batch left the core: keep it among the job's last JOB_PAST, for the
 * reports of copies that come late, and forget older ones.
 */
static void
job_batch_retire(struct job_batch *b)
{
	struct job		*j = b->b_job;
	struct job_batch	*p, *prev;

	if (b->b_live)
		job_batch_unlive(b);
	else {
		/* Past already: out of the past ones, back in below. */
		if (j->j_past == b)
			j->j_past = TAILQ_NEXT(b, b_entry);
		j->j_npast--;
	}
	/* No copy of its tasks is sent again: its payloads can go. */
	if (j->j_drv->d_batch_free != NULL)
		j->j_drv->d_batch_free(j, b);
	else
		free(b->b_ds);
	b->b_ds = NULL;
	free(b->b_spans);
	b->b_spans = NULL;
	b->b_nspans = b->b_spancap = 0;
	/*
	 * Past batches go last, newest first: before the first past one,
	 * which j_past keeps, so that retiring costs O(1) however many
	 * batches live.
	 */
	TAILQ_REMOVE(&j->j_batches, b, b_entry);
	if ((p = j->j_past) != NULL)
		TAILQ_INSERT_BEFORE(p, b, b_entry);
	else
		TAILQ_INSERT_TAIL(&j->j_batches, b, b_entry);
	j->j_past = b;
	j->j_npast++;
	for (p = TAILQ_LAST(&j->j_batches, batchlist); p != NULL &&
	    j->j_npast > JOB_PAST && !p->b_live; p = prev) {
		prev = TAILQ_PREV(p, batchlist, b_entry);
		job_batch_free(p);
	}
}

/*
 * A job ends: journal its end (its results were only needed to resume
 * it), let its driver free what it can, tell its followers.  Its batches
 * leave the core.
 */
void
job_end(struct job *j, enum job_state st)
{
	struct journal		*jl = job_journal_handle();
	struct job_batch	*b, *next;

	j->j_state = st;
	job_pending_state(j);
	j->j_end = mono_ns();
	/* First the driver, which may end the tasks still out. */
	if (j->j_drv->d_end != NULL)
		j->j_drv->d_end(j);
	for (b = TAILQ_FIRST(&j->j_batches); b != NULL; b = next) {
		next = TAILQ_NEXT(b, b_entry);
		if (b->b_live) {
			sched_batch_abort(jobs.sched, b->b_id, mono_ns());
			job_batch_retire(b);
		}
	}
	job_journal_put(j);
	/* Its results were only needed to resume it. */
	if (jl != NULL && (j->j_drv->d_flags & JD_DROP_RESULTS) &&
	    journal_results_drop(jl, j->j_id) == -1)
		job_journal_error();
	job_journal_commit();
	job_mark(JOB_NEWS_TELL | JOB_NEWS_STATUS);
}

/*
 * End a running job before its batches are done.  Assigns of its tasks
 * that are still being built leave first: their payloads belong to the
 * driver, and the cancels of the abort must come after them.
 */
void
job_abort(struct job *j, enum job_state st)
{
	job_mark(JOB_NEWS_FLUSH);
	job_end(j, st);
}

/* Stop a running job; its outstanding copies are withdrawn. */
void
job_cancel(struct job *j, const char *why)
{
	snprintf(j->j_error, sizeof(j->j_error), "%s", why);
	job_abort(j, JOB_CANCELLED);
}


/* Add the sums of g to f, the report of the batches folded. */
static void
job_gen_fold(struct gen_report *f, const struct gen_report *g)
{
	f->g_gen = g->g_gen;
	f->g_elapsed = g->g_elapsed;
	f->g_tasks += g->g_tasks;
	f->g_total += g->g_total;
	f->g_sync += g->g_sync;
	f->g_comm += g->g_comm;
	f->g_compute += g->g_compute;
	f->g_replicas += g->g_replicas;
	f->g_killed_held += g->g_killed_held;
	f->g_killed_running += g->g_killed_running;
}

/*
 * Keep g, the report of j's latest batch or generation, after the others;
 * a JD_FOLD_GENS job that has 2 x JOB_GENS_KEPT folds its oldest
 * JOB_GENS_KEPT first.
 */
void
job_gen_keep(struct job *j, const struct gen_report *g)
{
	struct gen_report	*ng;
	size_t			 i;

	if ((j->j_drv->d_flags & JD_FOLD_GENS) &&
	    j->j_ngens >= 2 * JOB_GENS_KEPT) {
		for (i = 0; i < JOB_GENS_KEPT; i++)
			job_gen_fold(&j->j_gfold, &j->j_gens[i]);
		j->j_ngens -= JOB_GENS_KEPT;
		memmove(j->j_gens, j->j_gens + JOB_GENS_KEPT,
		    j->j_ngens * sizeof(*j->j_gens));
		j->j_nfolded += JOB_GENS_KEPT;
	}
	ng = reallocarray(j->j_gens, j->j_ngens + 1, sizeof(*ng));
	if (ng == NULL)
		fatal("%s", __func__);
	j->j_gens = ng;
	j->j_gens[j->j_ngens++] = *g;
}

/* The number of j's batches or generations reported, folded ones too. */
uint64_t
job_gens_done(const struct job *j)
{
	return (j->j_nfolded + j->j_ngens);
}

/*
 * Every task of b is over (rep: what the core saw of it; NULL when its
 * results all came from the journal): measure it, tell the driver, and
 * keep the report.  The driver fills g_best and may start the next batch
 * or end the job.
 */
static void
job_batch_over(struct job_batch *b, const struct sched_batch_report *rep)
{
	struct sched_batch_report	 none;
	struct job			*j = b->b_job;
	struct gen_report		 g;

	if (rep == NULL) {
		memset(&none, 0, sizeof(none));
		none.t_submit = none.t_done = mono_ns();
		rep = &none;
	}
	memset(&g, 0, sizeof(g));
	g.g_gen = b->b_gen;
	g.g_elapsed = mono_ns() - j->j_start;
	g.g_tasks = b->b_n;
	job_measure(j, b, rep, &g);
	job_batch_retire(b);
	j->j_drv->d_batch_done(j, b, &g);
	job_gen_keep(j, &g);
	job_journal_gen(j, &g);
	job_mark(JOB_NEWS_TELL | JOB_NEWS_STATUS);
	if (j->j_drv->d_next != NULL)
		j->j_drv->d_next(j, b);
}

/* b's tasks were all over before it reached the core (the journal). */
void
job_batch_finished(struct job_batch *b)
{
	if (b->b_live)
		sched_batch_abort(jobs.sched, b->b_id, mono_ns());
	job_batch_over(b, NULL);
}

/* The core says a batch is complete. */
void
job_batch_done(uint64_t batch, const struct sched_batch_report *rep)
{
	struct job_batch	*b;
	uint64_t		 v;

	if (!u64map_get(&jobs.bybid, batch, &v))
		return;
	b = (struct job_batch *)(uintptr_t)v;
	if (b->b_live && b->b_job->j_state == JOB_RUNNING)
		job_batch_over(b, rep);
}

/* Free every job, without a word to anyone (a rewind of the journal). */
void
job_forget_all(void)
{
	struct job	*j;

	while ((j = TAILQ_FIRST(&jobs.list)) != NULL)
		job_free(j);
}

/* At exit. */
void
job_free_all(void)
{
	struct job	*j;

	while ((j = TAILQ_FIRST(&jobs.list)) != NULL)
		job_free(j);
	job_scratch_reset(1);
	job_pushes_clear();
	free(pu.pu_v);
	memset(&pu, 0, sizeof(pu));
	job_range_free_all();
	u64map_free(&jobs.bybid);
	kind_free_all();
}

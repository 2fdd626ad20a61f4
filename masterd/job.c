/*
 * The generic job layer: the job list, a job's batches and the ranges of
 * task ids that find a task's batch and index, the executions (spans) and
 * the paper's measurements of each batch, the rosters, the journal rows,
 * and what clients read (JobInfo, JobTrace).  What a job computes is its
 * driver's business (struct job_driver): job_es.c, job_batch.c.
 */
#include "config.h"

#include <sys/statvfs.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/bufferevent.h>
#include <event2/event.h>

#include "journal.h"
#include "log.h"
#include "masterd.h"
#include "task/task.h"
#include "util.h"

#define JOBS_KEEP	1000	/* finished jobs remembered */
#define TRACE_MAX	1000000	/* executions kept in memory per job */
#define KINDS_MAX	65536	/* distinct kind names interned */
#define TASK_MARK_BLOCK	(1ULL << 20)	/* task ids journaled ahead */
#define JOURNAL_ROOM	(1ULL << 20)	/* free bytes to resume after a
					   full disk */

static void	job_trace_free(struct job *);
static void	job_roster_free(struct job *);
static void	job_batch_free(struct job_batch *);
static int	job_load(void *, const struct journal_job *);

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
 * Kinds are names interned at run time: a worker advertises any names, a
 * client asks for any; the core sees their numbers.  There is no cap but
 * KINDS_MAX, which only a hostile peer reaches.
 */
int
kind_find(const char *name, uint32_t *id)
{
	uint32_t	 i;

	for (i = 0; i < md->nkinds; i++)
		if (strcmp(md->kinds[i], name) == 0) {
			*id = i;
			return (0);
		}
	return (-1);
}

/* Is name a kind's name: 1 to KIND_NAME_MAX printable characters? */
int
kind_check(const char *name)
{
	size_t	 i;

	for (i = 0; name[i] != '\0'; i++)
		if (i >= KIND_NAME_MAX || name[i] <= ' ' || name[i] > '~')
			return (-1);
	return (i > 0 ? 0 : -1);
}

/* The number of kind name, interned if new; UINT32_MAX if full. */
uint32_t
kind_intern(const char *name)
{
	uint32_t	 id;

	if (kind_find(name, &id) == 0)
		return (id);
	if (md->nkinds >= KINDS_MAX)
		return (UINT32_MAX);
	if (md->nkinds == md->kindcap) {
		md->kindcap = md->kindcap ? md->kindcap * 2 : 16;
		if ((md->kinds = reallocarray(md->kinds, md->kindcap,
		    sizeof(*md->kinds))) == NULL ||
		    (md->kind_why = reallocarray(md->kind_why, md->kindcap,
		    sizeof(*md->kind_why))) == NULL)
			fatal("%s", __func__);
	}
	md->kind_why[md->nkinds] = NULL;
	md->kinds[md->nkinds] = xstrdup(name);
	return (md->nkinds++);
}

/*
 * Worker wname withdrew kind id: it cannot run there (why, from the
 * kind's own process).  Remember why; should no connected worker offer
 * the kind now, its waiting tasks fail with it (job_kind_unavailable()).
 */
void
kind_withdrawn(uint32_t id, const char *wname, const char *why)
{
	char	 buf[768];

	if (id >= md->nkinds)
		return;
	snprintf(buf, sizeof(buf), "kind %s is unavailable on every worker "
	    "that offered it (%s: %s)", md->kinds[id], wname, why);
	free(md->kind_why[id]);
	md->kind_why[id] = xstrdup(buf);
	job_kind_unavailable(id);
}

/* A worker offers kind id: its tasks wait for workers again. */
void
kind_offered(uint32_t id)
{
	if (id < md->nkinds && md->kind_why[id] != NULL) {
		free(md->kind_why[id]);
		md->kind_why[id] = NULL;
	}
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
	uint64_t		 now = mono_ns();
	size_t			 i, n = 0;

	if (id >= md->nkinds || md->kind_why[id] == NULL ||
	    sched_kind_workers(md->sched, id) > 0)
		return;
	TAILQ_FOREACH(j, &md->jobs, j_entry) {
		if (j->j_state != JOB_RUNNING)
			continue;
		TAILQ_FOREACH(b, &j->j_batches, b_entry) {
			if (!b->b_live || b->b_kind != id)
				continue;
			for (i = 0; i < b->b_n; i++)
				if (sched_task_cancel(md->sched,
				    job_task_id(b, i), now) == 0) {
					job_outcome(b, i, OUTCOME_FAILED,
					    md->kind_why[id]);
					n++;
				}
		}
	}
	if (n > 0)
		log_warnx("%zu task%s failed: %s", n, n == 1 ? "" : "s",
		    md->kind_why[id]);
}

const char *
kind_name(uint32_t id)
{
	return (id < md->nkinds ? md->kinds[id] : "?");
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

/*
 * May owner start another job (max_jobs, max_jobs_per_client)?  Only
 * running jobs count.  0, or -1 with the error for the client, the
 * refusal counted and logged.
 */
int
job_admit(const char *owner, char *err, size_t len)
{
	struct job	*j;
	unsigned	 n = 0, mine = 0;

	TAILQ_FOREACH(j, &md->jobs, j_entry) {
		if (j->j_state != JOB_RUNNING)
			continue;
		n++;
		if (strcmp(j->j_owner, owner) == 0)
			mine++;
	}
	if (n >= md->conf.max_jobs) {
		snprintf(err, len, "too many jobs: %u running (max_jobs); try "
		    "again when one has ended", n);
		server_refused(CAP_JOBS, owner, "a new job: %u running "
		    "(max_jobs)", n);
		return (-1);
	}
	if (mine >= md->conf.max_jobs_per_client) {
		snprintf(err, len, "too many jobs: %s has %u running "
		    "(max_jobs_per_client); try again when one has ended",
		    owner, mine);
		server_refused(CAP_JOBS_CLIENT, owner, "a new job: %u of its "
		    "own running (max_jobs_per_client)", mine);
		return (-1);
	}
	return (0);
}

/* Tasks of j not yet ended (queued, held or running). */
uint64_t
job_pending(const struct job *j)
{
	const struct job_batch	*b;
	uint64_t		 n = 0;

	TAILQ_FOREACH(b, &j->j_batches, b_entry)
		if (b->b_live)
			n += b->b_n - b->b_nover;
	return (n);
}

/* Tasks of every running job not yet ended. */
uint64_t
job_pending_all(void)
{
	const struct job	*j;
	uint64_t		 n = 0;

	TAILQ_FOREACH(j, &md->jobs, j_entry)
		if (j->j_state == JOB_RUNNING)
			n += job_pending(j);
	return (n);
}

/*
 * May n more tasks be added to j (j NULL: to a new job)?  max_job_tasks
 * and max_queued_tasks bound the tasks not yet ended.  0, or -1 with the
 * error for the client, the refusal counted and logged.
 */
int
job_admit_tasks(const struct job *j, uint64_t n, char *err, size_t len)
{
	uint64_t	 mine = j != NULL ? job_pending(j) : 0;
	uint64_t	 all = job_pending_all();
	const char	*owner = j != NULL ? j->j_owner : "a client";

	if (mine + n > md->conf.max_job_tasks) {
		snprintf(err, len, "too many tasks: %llu more would make %llu "
		    "not yet ended in this job, more than max_job_tasks (%u)",
		    (unsigned long long)n, (unsigned long long)(mine + n),
		    md->conf.max_job_tasks);
		server_refused(CAP_JOB_TASKS, owner, "%llu tasks: %llu would "
		    "wait in one job (max_job_tasks)", (unsigned long long)n,
		    (unsigned long long)(mine + n));
		return (-1);
	}
	if (all + n > md->conf.max_queued_tasks) {
		snprintf(err, len, "too many tasks: %llu more would make %llu "
		    "not yet ended in all, more than max_queued_tasks (%u); "
		    "try again later", (unsigned long long)n,
		    (unsigned long long)(all + n), md->conf.max_queued_tasks);
		server_refused(CAP_QUEUED, owner, "%llu tasks: %llu would "
		    "wait in all (max_queued_tasks)", (unsigned long long)n,
		    (unsigned long long)(all + n));
		return (-1);
	}
	return (0);
}

/*
 * Bytes of running jobs' state and of every job's outcomes not yet
 * acknowledged: an ended batch job keeps those until its client takes
 * them or client_timeout passes (max_memory).
 */
uint64_t
job_memory_all(void)
{
	const struct job	*j;
	uint64_t		 n = 0;

	TAILQ_FOREACH(j, &md->jobs, j_entry) {
		if (j->j_state == JOB_RUNNING)
			n += j->j_mem;
		n += j->j_held;
	}
	return (n);
}

/*
 * May j (NULL: a new job of owner's) hold bytes more of state: an
 * evolution strategy's populations, an island model's states, a batch
 * job's payloads?  max_job_memory and max_memory bound what the clients'
 * parameters make masterd allocate, so that no request can exhaust its
 * memory.  A batch job's outcomes not yet acknowledged count too: they
 * cannot be refused, but a client that takes its outcomes without ever
 * acknowledging them can submit no more once they fill the job's share.
 * 0, or -1 with the error for the client, the refusal counted and logged.
 */
int
job_admit_memory(const struct job *j, const char *owner, uint64_t bytes,
    char *err, size_t len)
{
	uint64_t	 mine = j != NULL ? j->j_mem + j->j_held : 0;
	uint64_t	 all = job_memory_all();
	int		 n;

	if (j != NULL)
		owner = j->j_owner;
	if (mine > md->conf.max_job_memory ||
	    bytes > md->conf.max_job_memory - mine) {
		n = snprintf(err, len, "too much memory: %llu more bytes would "
		    "make this job's state %llu bytes, more than "
		    "max_job_memory (%llu)", (unsigned long long)bytes,
		    (unsigned long long)(mine + bytes),
		    (unsigned long long)md->conf.max_job_memory);
		if (j != NULL && j->j_held > 0 && n > 0 && (size_t)n < len)
			snprintf(err + n, len - n, "; %llu bytes of it are "
			    "outcomes not yet acknowledged",
			    (unsigned long long)j->j_held);
		server_refused(CAP_JOB_MEMORY, owner, "%llu bytes: one job "
		    "would hold %llu (max_job_memory)",
		    (unsigned long long)bytes,
		    (unsigned long long)(mine + bytes));
		return (-1);
	}
	if (bytes > md->conf.max_memory - (all < md->conf.max_memory ?
	    all : md->conf.max_memory)) {
		snprintf(err, len, "too much memory: %llu more bytes would "
		    "make the jobs' state %llu bytes, more than "
		    "max_memory (%llu); try again later",
		    (unsigned long long)bytes, (unsigned long long)(all + bytes),
		    (unsigned long long)md->conf.max_memory);
		server_refused(CAP_MEMORY, owner, "%llu bytes: the jobs would "
		    "hold %llu (max_memory)", (unsigned long long)bytes,
		    (unsigned long long)(all + bytes));
		return (-1);
	}
	return (0);
}

/* Free one job. */
static void
job_free(struct job *j)
{
	struct job_batch	*b;

	TAILQ_REMOVE(&md->jobs, j, j_entry);
	while ((b = TAILQ_FIRST(&j->j_batches)) != NULL)
		job_batch_free(b);
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

/* A new running job of driver drv, on the job list. */
struct job *
job_new(const struct job_driver *drv, enum sched_policy pol, unsigned qf,
    unsigned verify)
{
	struct job	*j;

	job_trim();
	j = xcalloc(1, sizeof(*j));
	j->j_drv = drv;
	j->j_id = md->next_job++;
	j->j_state = JOB_RUNNING;
	j->j_policy = pol;
	j->j_qf = qf;
	j->j_verify = verify;
	j->j_balance = md->balance;	/* a driver may set its own */
	TAILQ_INIT(&j->j_batches);
	j->j_start = mono_ns();
	j->j_start_wall = j->j_start + md->wall_off;
	j->j_submitted = wall_ns() / NS_PER_SEC;
	TAILQ_INSERT_TAIL(&md->jobs, j, j_entry);
	return (j);
}

/*
 * The ranges of task ids, sorted by first id, a task found by binary
 * search.  Ids are handed out in increasing order, so a range is nearly
 * always appended, or extends the last one of the same batch.  Not when
 * jobs resume from the journal: a batch job's tasks take new ids while an
 * es job's generation keeps its old ones (job_batch_reserve()), and a
 * batch job loaded before an es job of a lower id put its ranges first
 * (masterd died at start on such a journal: "task id 80 out of order").
 * Such a range goes in its place; ranges never overlap.
 */
static void
job_range_add(struct job_batch *b, uint64_t first, size_t n, size_t idx0)
{
	struct task_range	*r;
	size_t			 lo = 0, hi = md->nranges, mid;

	if (md->nranges > 0) {
		r = &md->ranges[md->nranges - 1];
		if (r->r_batch == b && r->r_first + r->r_n == first &&
		    r->r_idx0 + r->r_n == idx0 && r->r_n + n <= UINT32_MAX) {
			r->r_n += (uint32_t)n;
			return;
		}
		if (first < r->r_first + r->r_n) {
			while (lo < hi) {
				mid = lo + (hi - lo) / 2;
				if (md->ranges[mid].r_first < first)
					lo = mid + 1;
				else
					hi = mid;
			}
			if ((lo < md->nranges && first + n >
			    md->ranges[lo].r_first) || (lo > 0 && first <
			    md->ranges[lo - 1].r_first +
			    md->ranges[lo - 1].r_n))
				fatalx("%s: task ids %llu.. overlap another "
				    "batch's", __func__,
				    (unsigned long long)first);
		} else
			lo = md->nranges;
	}
	if (md->nranges == md->rangecap) {
		md->rangecap = md->rangecap ? md->rangecap * 2 : 64;
		if ((md->ranges = reallocarray(md->ranges, md->rangecap,
		    sizeof(*md->ranges))) == NULL)
			fatal("%s", __func__);
	}
	if (lo < md->nranges)
		memmove(&md->ranges[lo + 1], &md->ranges[lo],
		    (md->nranges - lo) * sizeof(*md->ranges));
	md->nranges++;
	r = &md->ranges[lo];
	r->r_first = first;
	r->r_n = (uint32_t)n;
	r->r_idx0 = (uint32_t)idx0;
	r->r_batch = b;
}

/* Forget b's ranges. */
static void
job_range_drop(const struct job_batch *b)
{
	size_t	 i, n;

	for (i = n = 0; i < md->nranges; i++)
		if (md->ranges[i].r_batch != b)
			md->ranges[n++] = md->ranges[i];
	md->nranges = n;
}

/*
 * The batch (live, or one of its job's last JOB_PAST) holding task tid,
 * and the task's index in it; NULL if none does.
 */
struct job_batch *
job_task_find(uint64_t tid, size_t *idx)
{
	size_t			 lo = 0, hi = md->nranges, mid;
	const struct task_range	*r;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		r = &md->ranges[mid];
		if (tid < r->r_first)
			hi = mid;
		else if (tid >= r->r_first + r->r_n)
			lo = mid + 1;
		else {
			*idx = r->r_idx0 + (size_t)(tid - r->r_first);
			return (r->r_batch);
		}
	}
	return (NULL);
}

/* The id of task idx of b; 0 if its range is gone. */
uint64_t
job_task_id(const struct job_batch *b, size_t idx)
{
	size_t	 i;

	for (i = 0; i < md->nranges; i++)
		if (md->ranges[i].r_batch == b && idx >= md->ranges[i].r_idx0 &&
		    idx < (size_t)md->ranges[i].r_idx0 + md->ranges[i].r_n)
			return (md->ranges[i].r_first + (idx -
			    md->ranges[i].r_idx0));
	return (0);
}

static void
job_batch_free(struct job_batch *b)
{
	struct job	*j = b->b_job;
	size_t		 i;

	if (b->b_live) {
		sched_batch_abort(md->sched, b->b_id, mono_ns());
		j->j_nlive--;
	}
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
	b->b_id = md->next_batch++;
	memset(&cfg, 0, sizeof(cfg));
	cfg.policy = j->j_policy;
	cfg.queue_factor = j->j_qf;
	cfg.kind = kind;
	cfg.max_attempts = md->conf.max_attempts;
	cfg.max_kills = md->conf.max_kills;
	cfg.verify = j->j_verify;
	cfg.balance = j->j_balance;
	cfg.keep_copies = j->j_keep_copies;
	if (sched_batch_open(md->sched, b->b_id, &cfg, mono_ns()) == -1)
		fatal("%s: core refused batch %llu", __func__,
		    (unsigned long long)b->b_id);
	b->b_live = 1;
	j->j_nlive++;
	/* Live batches first, in number order. */
	TAILQ_INSERT_HEAD(&j->j_batches, b, b_entry);
	return (b);
}

/* j's batch number gen, live or recent; NULL if forgotten. */
struct job_batch *
job_batch_by_gen(const struct job *j, uint32_t gen)
{
	struct job_batch	*b;

	TAILQ_FOREACH(b, &j->j_batches, b_entry)
		if (b->b_gen == gen)
			return (b);
	return (NULL);
}

/* Give the core n tasks of b, whose ids job_batch_reserve() gave. */
void
job_batch_submit(struct job_batch *b, const struct sched_task *t, size_t n)
{
	if (n > 0 && sched_batch_add(md->sched, b->b_id, t, n,
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
		first = md->next_task;
	if (first + n > md->next_task)
		md->next_task = first + n;
	/*
	 * The journal keeps a mark ahead of the ids handed out, moved a
	 * block at a time: after a restart no id is handed out again, so a
	 * worker still holding a copy from before cannot take a new task for
	 * it.  (A resumed es batch keeps its own ids, on purpose.)
	 */
	if (md->journal != NULL && md->next_task > md->task_mark) {
		md->task_mark = md->next_task + TASK_MARK_BLOCK;
		if (journal_meta_set(md->journal, "next_task",
		    md->task_mark) == -1)
			job_journal_error();
	}
	if (n > 0)
		job_range_add(b, first, n, b->b_n);
	b->b_n += n;
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
		sched_batch_close(md->sched, b->b_id, mono_ns());
}

/* The message of task idx (id tid) of b: its driver's payload, sent now. */
void
job_task(struct job_batch *b, size_t idx, uint64_t tid, R3q__Task *t)
{
	r3q__task__init(t);
	t->id = tid;
	t->kind = md->kinds[b->b_kind];
	b->b_job->j_drv->d_task(b->b_job, b, idx, t);
}

/*
 * The accepted output of task idx of b.  It is journaled in the
 * transaction that is committed before anything else leaves masterd
 * (job_journal_commit() from server_flush()), then its driver takes it.
 */
static void
job_ended(struct job_batch *b, size_t idx, enum job_outcome o,
    const void *out, size_t len, const char *why)
{
	struct journal_result	 jr;
	struct job		*j = b->b_job;
	uint64_t		 seq = ++j->j_seq;
	char			*old;

	b->b_nover++;
	if ((old = job_task_why(b, idx, NULL)) != NULL)
		free(old);
	if (md->journal != NULL) {
		memset(&jr, 0, sizeof(jr));
		jr.job = j->j_id;
		jr.gen = b->b_gen;
		jr.idx = (uint32_t)idx;
		jr.status = o;
		jr.seq = seq;
		jr.output = out;
		jr.outlen = len;
		jr.error = why;
		if (journal_result_add(md->journal, &jr) == -1)
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
	if (journal_span_add(md->journal, &js) == -1)
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
	start = r->start_ns > md->wall_off ? r->start_ns - md->wall_off : 0;
	end = r->end_ns > md->wall_off ? r->end_ns - md->wall_off : 0;
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
 * The paper's measurements of one generation (doc/algorithms.md 1.6):
 * synchronisation wait runs from the core's t_sync to the last result;
 * communication time is the average, over the workers, of the time before
 * t_sync in which a worker's CPUs were not executing a task; computation
 * is what remains.  Worker times were converted to our clock on arrival.
 */
static void
job_measure(struct job *j, struct job_batch *bt,
    const struct sched_batch_report *r, struct gen_report *g)
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
	for (k = 0; k < bt->b_nspans; k++) {
		x = &bt->b_spans[k];
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
 * A batch left the core: keep it among the job's last JOB_PAST, for the
 * reports of copies that come late, and forget older ones.
 */
static void
job_batch_retire(struct job_batch *b)
{
	struct job		*j = b->b_job;
	struct job_batch	*p, *prev;
	size_t			 n = 0;

	if (b->b_live) {
		b->b_live = 0;
		j->j_nlive--;
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
	/* Past batches go last, newest first. */
	TAILQ_REMOVE(&j->j_batches, b, b_entry);
	TAILQ_FOREACH(p, &j->j_batches, b_entry)
		if (!p->b_live)
			break;
	if (p != NULL)
		TAILQ_INSERT_BEFORE(p, b, b_entry);
	else
		TAILQ_INSERT_TAIL(&j->j_batches, b, b_entry);
	TAILQ_FOREACH(p, &j->j_batches, b_entry)
		if (!p->b_live)
			n++;
	for (p = TAILQ_LAST(&j->j_batches, batchlist); p != NULL &&
	    n > JOB_PAST && !p->b_live; p = prev) {
		prev = TAILQ_PREV(p, batchlist, b_entry);
		job_batch_free(p);
		n--;
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
	struct job_batch	*b, *next;

	j->j_state = st;
	j->j_end = mono_ns();
	/* First the driver, which may end the tasks still out. */
	if (j->j_drv->d_end != NULL)
		j->j_drv->d_end(j);
	for (b = TAILQ_FIRST(&j->j_batches); b != NULL; b = next) {
		next = TAILQ_NEXT(b, b_entry);
		if (b->b_live) {
			sched_batch_abort(md->sched, b->b_id, mono_ns());
			job_batch_retire(b);
		}
	}
	job_journal_put(j);
	/* A bnb job resumes from its snapshot, never from its results. */
	if (md->journal != NULL && (strcmp(j->j_drv->d_name, "es") == 0 ||
	    strcmp(j->j_drv->d_name, "bnb") == 0 ||
	    strcmp(j->j_drv->d_name, "islands") == 0) &&
	    journal_results_drop(md->journal, j->j_id) == -1)
		job_journal_error();
	job_journal_commit();
	control_job_event(j, NULL);
	masterd_status();
}

/*
 * End a running job before its batches are done.  Assigns of its tasks
 * that are still being built leave first: their payloads belong to the
 * driver, and the cancels of the abort must come after them.
 */
void
job_abort(struct job *j, enum job_state st)
{
	server_flush();
	job_end(j, st);
}

/* Stop a running job; its outstanding copies are withdrawn. */
void
job_cancel(struct job *j, const char *why)
{
	snprintf(j->j_error, sizeof(j->j_error), "%s", why);
	job_abort(j, JOB_CANCELLED);
}

/* Pack a generation's report for the journal or a client. */
void
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
		job_journal_error();
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
	struct gen_report		 g, *ng;

	if (rep == NULL) {
		memset(&none, 0, sizeof(none));
		none.t_submit = none.t_done = mono_ns();
		rep = &none;
	}
	memset(&g, 0, sizeof(g));
	g.g_gen = b->b_gen;
	g.g_elapsed = mono_ns() - j->j_start;
	g.g_tasks = (uint32_t)b->b_n;
	job_measure(j, b, rep, &g);
	job_batch_retire(b);
	ng = reallocarray(j->j_gens, j->j_ngens + 1, sizeof(*ng));
	if (ng == NULL)
		fatal("%s", __func__);
	j->j_gens = ng;
	j->j_gens[j->j_ngens] = g;
	j->j_drv->d_batch_done(j, b, &j->j_gens[j->j_ngens]);
	j->j_ngens++;
	job_journal_gen(j, &j->j_gens[j->j_ngens - 1]);
	control_job_event(j, &j->j_gens[j->j_ngens - 1]);
	masterd_status();
	if (j->j_drv->d_next != NULL)
		j->j_drv->d_next(j, b);
}

/* b's tasks were all over before it reached the core (the journal). */
void
job_batch_finished(struct job_batch *b)
{
	if (b->b_live)
		sched_batch_abort(md->sched, b->b_id, mono_ns());
	job_batch_over(b, NULL);
}

/* The core says a batch is complete. */
void
job_batch_done(uint64_t batch, const struct sched_batch_report *rep)
{
	struct job		*j;
	struct job_batch	*b;

	TAILQ_FOREACH(j, &md->jobs, j_entry) {
		if (j->j_state != JOB_RUNNING || j->j_nlive == 0)
			continue;
		TAILQ_FOREACH(b, &j->j_batches, b_entry)
			if (b->b_live && b->b_id == batch) {
				job_batch_over(b, rep);
				return;
			}
	}
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
		info->work_ms += g->g_tasks * j->j_work_ms;
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

/*
 * Why none of a running job's tasks can run, if so: a live batch whose
 * kind no connected worker offers.  "" otherwise.
 */
static void
job_waiting(const struct job *j, char *buf, size_t len)
{
	const struct job_batch	*b;

	buf[0] = '\0';
	if (j->j_state != JOB_RUNNING)
		return;
	if (md->jstalled) {
		snprintf(buf, len, "the journal cannot be written (%s); "
		    "nothing is assigned until it can", journal_errstr(md->jcode));
		return;
	}
	TAILQ_FOREACH(b, &j->j_batches, b_entry)
		if (b->b_live && b->b_nover < b->b_n &&
		    sched_kind_workers(md->sched, b->b_kind) == 0) {
			snprintf(buf, len, "no worker offers kind %s",
			    kind_name(b->b_kind));
			return;
		}
}

/* Fill a JobInfo; with full, everything its driver has (and gens). */
void
job_info(const struct job *j, R3q__JobInfo *info, int full)
{
	const struct job_batch	*b;
	char			 wait[512];
	size_t			 i;

	r3q__job_info__init(info);
	info->id = j->j_id;
	info->state = (char *)(uintptr_t)job_state_name(j->j_state);
	info->policy = (char *)(uintptr_t)sched_policy_name(j->j_policy);
	info->balance = (char *)(uintptr_t)sched_balance_name(j->j_balance);
	info->moved = j->j_moved;
	info->driver = (char *)(uintptr_t)j->j_drv->d_name;
	info->name = (char *)(uintptr_t)j->j_name;
	info->owner = (char *)(uintptr_t)j->j_owner;
	job_waiting(j, wait, sizeof(wait));
	info->waiting = xstrdup(wait);
	info->generation = j->j_ngens ? j->j_gens[j->j_ngens - 1].g_gen : 0;
	info->error = (char *)(uintptr_t)j->j_error;
	info->elapsed_ns = (j->j_state == JOB_RUNNING ? mono_ns() :
	    j->j_end) - j->j_start;
	info->tasks_done = j->j_done;
	info->tasks_failed = j->j_failed;
	info->results_dropped = j->j_dropped;
	info->submitted_unix = j->j_submitted;
	info->executions = j->j_execs;
	TAILQ_FOREACH(b, &j->j_batches, b_entry) {
		if (b->b_live && !b->b_closed)
			info->batches_open++;
	}
	job_totals(j, info);
	j->j_drv->d_info(j, info, full);
	if (!full || j->j_ngens == 0)
		return;
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
	free(info->waiting);
	info->waiting = NULL;
}

/* At exit. */
void
job_free_all(void)
{
	struct job	*j;
	size_t		 i;

	while ((j = TAILQ_FIRST(&md->jobs)) != NULL)
		job_free(j);
	free(md->ranges);
	md->ranges = NULL;
	md->nranges = md->rangecap = 0;
	for (i = 0; i < md->nkinds; i++) {
		free(md->kinds[i]);
		free(md->kind_why[i]);
	}
	free(md->kinds);
	free(md->kind_why);
	md->kinds = NULL;
	md->kind_why = NULL;
	md->nkinds = md->kindcap = 0;
}

/*
 * The journal (masterd.conf journal): each job's row, its batch reports,
 * its accepted results, a batch job's tasks, and the task executions.
 * Writes pile up in one transaction that job_journal_commit() ends before
 * anything leaves masterd, so a result counts only once it is on disk as
 * far as a crash of masterd goes (WAL, synchronous=NORMAL: a power loss
 * may still take the last commits).
 */

/* Write j's row: driver, parameters, state, current batch, first id. */
void
job_journal_put(struct job *j)
{
	struct journal_job	 jj;
	struct job_batch	*b, *cur = NULL;
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
	st.done = j->j_done;
	st.failed = j->j_failed;
	st.dropped = j->j_dropped;
	st.speed_time = j->j_speed_time;
	st.name = j->j_name;
	st.owner = j->j_owner;
	st.batches = j->j_nbatches;
	st.seq = j->j_seq;
	if (j->j_state != JOB_RUNNING)
		st.elapsed_ns = j->j_end - j->j_start;
	if (j->j_drv->d_state != NULL)
		j->j_drv->d_state(j, &st);
	memset(&jj, 0, sizeof(jj));
	jj.id = j->j_id;
	snprintf(jj.driver, sizeof(jj.driver), "%s", j->j_drv->d_name);
	params = j->j_drv->d_params(j, &jj.paramslen);
	jj.params = params;
	snprintf(jj.state, sizeof(jj.state), "%s", job_state_name(j->j_state));
	jj.submitted_ns = j->j_start_wall;
	jj.ended_ns = j->j_state == JOB_RUNNING ? 0 : j->j_end + md->wall_off;
	/* The oldest live batch: where a resumed es job starts again. */
	TAILQ_FOREACH(b, &j->j_batches, b_entry)
		if (b->b_live && (cur == NULL || b->b_gen < cur->b_gen))
			cur = b;
	jj.gen = cur != NULL ? cur->b_gen : j->j_nbatches;
	jj.first_task = cur != NULL ? job_task_id(cur, 0) : 0;
	snprintf(jj.error, sizeof(jj.error), "%s", j->j_error);
	jj.extralen = r3q__job_state__get_packed_size(&st);
	extra = xcalloc(1, jj.extralen + 1);
	r3q__job_state__pack(&st, extra);
	jj.extra = extra;
	if (journal_job_put(md->journal, &jj) == -1 ||
	    journal_meta_set(md->journal, "next_job", md->next_job) == -1 ||
	    journal_meta_set(md->journal, "next_task", md->next_task >
	    md->task_mark ? md->next_task : md->task_mark) == -1)
		job_journal_error();
	free(params);
	free(extra);
	free(roster);
}

/*
 * End the journal's transaction: what was accepted is now kept.  -1 if it
 * is not (the journal cannot be written, see job_journal_stall()): then
 * nothing built on it may leave masterd.
 */
int
job_journal_commit(void)
{
	if (md->journal == NULL)
		return (0);
	if (journal_commit(md->journal) == -1) {
		job_journal_error();
		return (-1);
	}
	if (md->jcommit != NULL && evtimer_pending(md->jcommit, NULL))
		evtimer_del(md->jcommit);
	return (0);
}

/*
 * Commit, unless what is pending may wait a little (issue 26, "durability
 * for free").  A frame to a worker rests on nothing a crash could make
 * untrue: a worker keeps nothing because masterd told it so (it forgets a
 * result once sent, acknowledged or not), and whatever it does in answer
 * reaches the journal after what it answers, in the same transaction or a
 * later one.  So frames to workers do not wait for the commit; only those
 * to a client or r3qctl do (session_send()): nothing said to anyone
 * outside rests on what is not journaled.  What is pending is committed
 * journal_delay after it is first found open, at the latest; a crash
 * before loses that much accepted work, which the restart does again as
 * it does the tasks that were running.  journal_delay 0: before every
 * frame, as for clients.
 */
void
job_journal_due(void)
{
	struct timeval	 tv;

	/* Stalled: the rewind and its retries (md->jretry) see to it. */
	if (md->journal == NULL || md->jstalled ||
	    !journal_pending(md->journal))
		return;
	if (md->conf.journal_delay == 0 || md->jcommit == NULL) {
		(void)job_journal_commit();
		return;
	}
	/* Armed already: it fires within journal_delay of the first write. */
	if (!evtimer_pending(md->jcommit, NULL)) {
		tv.tv_sec = (time_t)(md->conf.journal_delay / 1000);
		tv.tv_usec = (suseconds_t)(md->conf.journal_delay % 1000) *
		    1000;
		if (evtimer_add(md->jcommit, &tv) == -1)
			(void)job_journal_commit();
	}
}

/* journal_delay is over: commit what waited (not while stalled). */
static void
job_journal_due_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	if (!md->jstalled)
		(void)job_journal_commit();
}

/*
 * A journal write failed: a refusal of that one write (a duplicate) is
 * logged; a failure of the journal itself (journal_failed()) stalls.
 */
void
job_journal_error(void)
{
	if (journal_failed(md->journal)) {
		job_journal_stall();
		return;
	}
	log_warnx("%s", journal_error(md->journal));
}

/*
 * A journal that cannot write (issue 24): a full disk, an I/O error, a
 * failed commit.  session_send() promises that nothing leaves masterd
 * before what it rests on is journaled, so masterd stalls: it stops taking
 * results and assigning tasks until a write goes through again.
 *
 * Workers hold a result only until they have sent it (workerd/link.c
 * keeps an outbox while disconnected, and nothing is acknowledged), so
 * withholding an acknowledgement would keep nothing anywhere.  Instead
 * masterd does in place what a restart from the journal does, the path
 * every durability test already covers: it rolls back what was pending,
 * drops the workers (their running tasks finish into their outboxes, and
 * the copies' tags stay valid, so those results still count when they
 * come back), frees every job and loads them again as the journal holds
 * them.  What was accepted but not committed is simply done again; the
 * answer is the undisturbed one.  Until writes go through, workers that
 * say hello are closed (without an error, which workerd would take as
 * permanent) and try again after their backoff; clients keep the control
 * socket, but requests that write are refused.
 *
 * The rewind and the retries run from md->jretry, never in the middle of
 * the callback that met the failure; until then session_send() withholds
 * every frame (job_journal_commit() fails).  One line is logged when the
 * journal stalls, one when it resumes.
 */
void
job_journal_stall(void)
{
	struct timeval	 now = { 0, 0 };
	char		 retry[32];

	/* A reload's own writes: rolled back after it, see the rewind. */
	if (md->jreloading)
		return;
	md->jrewound = 0;
	if (!md->jstalled) {
		md->jstalled = 1;
		md->jstall_since = mono_ns();
		md->jstalls++;
		md->jcode = journal_failed(md->journal);
		snprintf(md->jwhy, sizeof(md->jwhy), "%s",
		    journal_error(md->journal));
		conf_format_duration(retry, sizeof(retry),
		    md->conf.journal_retry);
		log_warnx("%s: the journal is stalled: no result is taken and "
		    "no task assigned until it can be written again (tried "
		    "every %s)", md->jwhy, retry);
		masterd_status();
	}
	/* The rewind, at once; then the retries. */
	if (md->jretry != NULL)
		evtimer_add(md->jretry, &now);
}

/* Is the journal stalled? */
int
job_journal_stalled(void)
{
	return (md->jstalled);
}

/*
 * Should session s wait before its next frame is read?  While the journal
 * cannot be written, a batch job's client would submit, acknowledge or
 * close what cannot be journaled; refusing it would fail its tasks, and
 * dropping it would have it reconnect at once, again and again.  So its
 * frames wait, unread, until the journal resumes.
 */
int
job_journal_hold(struct session *s)
{
	if (!md->jstalled || s->s_role != ROLE_CLIENT ||
	    !job_batch_attached(s))
		return (0);
	if (!s->s_jheld) {
		s->s_jheld = 1;
		bufferevent_disable(s->s_bev, EV_READ);
	}
	return (1);
}

/* The journal resumed: read the clients that waited. */
static void
job_journal_release(void)
{
	struct session	*s;

	TAILQ_FOREACH(s, &md->sessions, s_entry) {
		if (!s->s_jheld)
			continue;
		s->s_jheld = 0;
		if (s->s_paused || s->s_closing)
			continue;
		bufferevent_enable(s->s_bev, EV_READ);
		bufferevent_trigger(s->s_bev, EV_READ,
		    BEV_TRIG_IGNORE_WATERMARKS | BEV_TRIG_DEFER_CALLBACKS);
	}
}

/* Free every job, without a word to anyone. */
static void
job_forget_all(void)
{
	struct job	*j;

	while ((j = TAILQ_FIRST(&md->jobs)) != NULL)
		job_free(j);
	server_drain();
}

/*
 * Bring the jobs back to what the journal holds: drop the peers that
 * hold or were sent what may rest on the lost writes (every worker, every
 * batch job's client: it reattaches and gets again what it has not
 * acknowledged), roll back, and load every job again, as at start-up.
 * -1 if the journal cannot even be rolled back or read: tried again at
 * the next retry.
 */
static int
job_journal_rewind(void)
{
	struct session	*s;
	uint64_t	 v;
	size_t		 nw = 0, nc = 0, njobs = 0;
	struct job	*j;
	int		 rc;

 again:
	TAILQ_FOREACH(s, &md->sessions, s_entry) {
		if (s->s_worker != NULL || job_batch_attached(s)) {
			if (s->s_worker != NULL)
				nw++;
			else
				nc++;
			session_free(s);
			goto again;
		}
	}
	job_forget_all();
	if (journal_rollback(md->journal) == -1) {
		log_debug("%s", journal_error(md->journal));
		return (-1);
	}
	/*
	 * Load the jobs as at start-up.  What the load writes (a resumed
	 * job's row, the mark of the ids) only restates what the journal
	 * holds, and would fail again on a full disk: it is rolled back,
	 * and written for real by the first commit after resuming.
	 */
	md->jreloading = 1;
	rc = journal_load_jobs(md->journal, job_load, NULL);
	md->jreloading = 0;
	if (rc == -1)
		log_warnx("%s", journal_error(md->journal));
	if (journal_rollback(md->journal) == -1 || rc == -1) {
		job_forget_all();
		return (-1);
	}
	/* The mark of the ids handed out, as journaled: moved past again. */
	if (journal_meta_get(md->journal, "next_task", &v) == 0)
		md->task_mark = v;
	else
		md->task_mark = 0;
	md->jrewound = 1;
	TAILQ_FOREACH(j, &md->jobs, j_entry)
		njobs++;
	log_info("journal %s: back to what it holds: %zu jobs reloaded, %zu "
	    "workers and %zu clients dropped", journal_path(md->journal),
	    njobs, nw, nc);
	masterd_status();
	return (0);
}

/*
 * Enough room to go on after a full disk?  A write of a page may go
 * through where a generation's results will not: ask for JOURNAL_ROOM
 * free, or resuming would only stall again at once.
 */
static int
job_journal_room(void)
{
	struct statvfs	 sv;
	char		 dir[CONF_STRMAX], *slash;

	if (!journal_is_full(md->jcode))
		return (1);
	snprintf(dir, sizeof(dir), "%s", md->conf.journal);
	if ((slash = strrchr(dir, '/')) == NULL)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	if (statvfs(dir, &sv) == -1)
		return (1);
	return ((uint64_t)sv.f_bavail * sv.f_frsize >= JOURNAL_ROOM);
}

/* The stalled journal's timer: rewind if needed, then try a write. */
static void
job_journal_retry(evutil_socket_t fd, short ev, void *arg)
{
	struct timeval	 tv;
	char		 took[32];

	(void)fd;
	(void)ev;
	(void)arg;
	if (!md->jstalled)
		return;
	if (md->jrewound || job_journal_rewind() == 0) {
		if ((!journal_failed(md->journal) ||
		    journal_rollback(md->journal) == 0) &&
		    job_journal_room() &&
		    journal_probe(md->journal) == 0) {
			md->jstalled = 0;
			conf_format_duration(took, sizeof(took),
			    (mono_ns() - md->jstall_since) / NS_PER_MS);
			log_info("journal %s can be written again, after %s: "
			    "resuming (workers are welcome, tasks assigned)",
			    journal_path(md->journal), took);
			masterd_status();
			job_journal_release();
			return;
		}
	}
	tv.tv_sec = md->conf.journal_retry / 1000;
	tv.tv_usec = (md->conf.journal_retry % 1000) * 1000;
	evtimer_add(md->jretry, &tv);
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
	if (md->jstalled)
		return;
	if (journal_prune(md->journal, now - keep, &n) == -1 ||
	    journal_commit(md->journal) == -1) {
		job_journal_error();
		return;
	}
	if (n > 0)
		log_info("journal: dropped %zu jobs finished more than %llus "
		    "ago (journal_retention)", n, (unsigned long long)
		    (md->conf.journal_retention / 1000));
}

static int
job_load_gen(void *arg, uint32_t gen, const void *blob, size_t len)
{
	struct job		*j = arg;
	struct gen_report	*g;
	R3q__GenReport		*pb;

	if ((pb = r3q__gen_report__unpack(NULL, len, blob)) == NULL) {
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


/* The driver of a journal row; NULL if this masterd has no such one. */
static const struct job_driver *
job_driver_find(const char *name)
{
	if (strcmp(name, job_es_driver.d_name) == 0)
		return (&job_es_driver);
	if (strcmp(name, job_batch_driver.d_name) == 0)
		return (&job_batch_driver);
	if (strcmp(name, job_bnb_driver.d_name) == 0)
		return (&job_bnb_driver);
	if (strcmp(name, job_island_driver.d_name) == 0)
		return (&job_island_driver);
	return (NULL);
}

/* One job from the journal: kept as it ended, or resumed. */
static int
job_load(void *arg, const struct journal_job *row)
{
	const struct job_driver	*drv;
	struct job		*j;
	R3q__JobState		*st = NULL;
	uint64_t		 now = mono_ns(), wnow = wall_ns();
	char			 err[160];
	size_t			 i;

	(void)arg;
	if ((drv = job_driver_find(row->driver)) == NULL) {
		log_warnx("%s: job %llu has unknown driver '%s'; skipped",
		    journal_path(md->journal), (unsigned long long)row->id,
		    row->driver);
		return (0);
	}
	if (row->extra != NULL)
		st = r3q__job_state__unpack(NULL, row->extralen, row->extra);
	if (row->id >= md->next_job)
		md->next_job = row->id + 1;
	j = xcalloc(1, sizeof(*j));
	j->j_id = row->id;
	j->j_drv = drv;
	TAILQ_INIT(&j->j_batches);
	j->j_start = now - (wnow > row->submitted_ns ? wnow -
	    row->submitted_ns : 0);
	j->j_start_wall = row->submitted_ns;
	j->j_submitted = row->submitted_ns / NS_PER_SEC;
	snprintf(j->j_error, sizeof(j->j_error), "%s", row->error);
	j->j_state = JOB_RUNNING;
	if (strcmp(row->state, "running") != 0)
		j->j_state = strcmp(row->state, "done") == 0 ? JOB_DONE :
		    strcmp(row->state, "cancelled") == 0 ? JOB_CANCELLED :
		    JOB_FAILED;
	if (st != NULL) {
		j->j_done = st->done;
		j->j_failed = st->failed;
		j->j_dropped = st->dropped;
		j->j_speed_time = st->speed_time;
		j->j_execs = st->executions;
		j->j_nbatches = st->batches;
		j->j_seq = st->seq;
		snprintf(j->j_name, sizeof(j->j_name), "%s", st->name);
		snprintf(j->j_owner, sizeof(j->j_owner), "%s", st->owner);
		for (i = 0; i < st->n_workers; i++)
			job_roster_add(j, st->workers[i]->name,
			    st->workers[i]->cpus, st->workers[i]->speed)->delay_ms =
			    st->workers[i]->delay_ms;
		j->j_end = j->j_start + st->elapsed_ns;
	} else
		j->j_end = j->j_start;
	if (journal_load_gens(md->journal, j->j_id, job_load_gen, j) == -1) {
		if (st != NULL)
			r3q__job_state__free_unpacked(st, NULL);
		free(j->j_gens);
		job_roster_free(j);
		free(j);
		return (-1);
	}
	TAILQ_INSERT_TAIL(&md->jobs, j, j_entry);
	if (drv->d_load(j, row, st, err, sizeof(err)) == -1) {
		log_warnx("%s: job %llu cannot resume: %s",
		    journal_path(md->journal), (unsigned long long)j->j_id,
		    err);
		snprintf(j->j_error, sizeof(j->j_error), "cannot resume "
		    "from the journal: %s", err);
		if (j->j_state == JOB_RUNNING)
			job_end(j, JOB_FAILED);
	}
	if (st != NULL)
		r3q__job_state__free_unpacked(st, NULL);
	return (0);
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
	if ((md->jretry = evtimer_new(md->base, job_journal_retry,
	    NULL)) == NULL)
		fatalx("cannot make the journal's retry timer");
	if ((md->jcommit = evtimer_new(md->base, job_journal_due_cb,
	    NULL)) == NULL)
		fatalx("cannot make the journal's commit timer");
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
		md->next_task = md->task_mark = v;
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
	if (md->journal != NULL) {
		job_journal_commit();
		journal_close(md->journal);
		md->journal = NULL;
	}
	if (md->jretry != NULL)
		event_free(md->jretry);
	md->jretry = NULL;
	if (md->jcommit != NULL)
		event_free(md->jcommit);
	md->jcommit = NULL;
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
	sp->replica = (js->replica & SPAN_F_REPLICA) != 0;
	sp->moved = (js->replica & SPAN_F_MOVED) != 0;
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

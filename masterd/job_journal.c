/*
 * The journal (masterd.conf journal), the job side: each job's row, its
 * batch reports, its accepted results, a batch job's tasks, and the task
 * executions.  Writes pile up in one transaction that job_journal_commit()
 * ends before anything leaves masterd, so a result counts only once it is
 * on disk as far as a crash of masterd goes (WAL, synchronous=NORMAL: a
 * power loss may still take the last commits).
 *
 * A journal that cannot be written stalls masterd (job_journal_stall());
 * this file keeps the state of the stall and brings the jobs back to what
 * the journal holds (job_journal_reload()).  The timers that commit late
 * and retry, and the sessions held meanwhile, are the control side's
 * (control_journal.c), which registers its hooks here.
 */
#include "config.h"

#include <sys/statvfs.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "journal.h"
#include "log.h"
#include "masterd.h"
#include "notify.h"
#include "u64map.h"
#include "util.h"

#define TASK_MARK_BLOCK	(1ULL << 20)	/* task ids journaled ahead */
#define JOURNAL_ROOM	(1ULL << 20)	/* free bytes to resume after a
					   full disk */
/*
 * While the jobs load at start-up, systemd's start timeout (90 s by
 * default) is pushed EXTEND_MS ahead every EVERY_MS: a load that takes
 * longer is not killed and started again for ever.
 */
#define JOURNAL_EXTEND_MS	30000
#define JOURNAL_EVERY_MS	5000

/*
 * The journal's state, owned by this file: its handle (others take it
 * from job_journal_handle()), the mark of the task ids journaled ahead,
 * and the stall, which the status, the metrics and the joins read
 * through job_journal_stalled() and job_journal_stall_text().  The hooks
 * are the control side's (job_journal_hooks()).
 */
static struct {
	struct journal	 *jj_journal;	/* NULL: journal = none */
	int		  jj_stall;	/* cannot be written:
					   job_journal_stall() */
	uint64_t	  jj_stalls;	/* times it stalled */
	char		  jj_why[1024];	/* what failed, path and all */
	uint64_t	  jj_mark;	/* ids below it may have been handed
					   out */
	int		  jj_code;	/* SQLite's code of the stall */
	uint64_t	  jj_since;	/* mono ns it stalled */
	int		  jj_reloading;	/* the jobs are being reloaded */
	/* the configuration job_journal_load() was given */
	const struct masterd_config *jj_conf;
	void		(*jj_stalled)(int);
	void		(*jj_committed)(void);
	struct u64map	  jj_compacted;	/* job -> acked at its last
					   compaction (job_journal_admit) */
	/*
	 * meta's next_job and next_task as last written, in the pending
	 * transaction or before (0: not known): a job's row is put at every
	 * batch's end, and they seldom change.  Forgotten at a stall, whose
	 * rollback may take them back.
	 */
	uint64_t	  jj_meta_job;
	uint64_t	  jj_meta_task;
} jst;

static int	job_load(void *, const struct journal_job *);
static void	job_load_compact(const struct job *,
		    const struct journal_job *, const R3q__JobState *);

/*
 * The control side's hooks: stalled(first) once a write failed (first:
 * the journal was not stalled yet), to arm its retries; committed() after
 * each commit, to drop a commit that waited for journal_delay.
 */
void
job_journal_hooks(void (*stalled)(int), void (*committed)(void))
{
	jst.jj_stalled = stalled;
	jst.jj_committed = committed;
}

/*
 * Set a meta value unless the journal holds it already (*last: the value
 * last written, 0 if not known), which saves each batch's commit two
 * pages of the meta table.
 */
static int
job_journal_meta(struct journal *jl, const char *key, uint64_t val,
    uint64_t *last)
{
	if (val != 0 && *last == val)
		return (0);
	if (journal_meta_set(jl, key, val) == -1) {
		*last = 0;
		return (-1);
	}
	*last = val;
	return (0);
}

/* Write j's row: driver, parameters, state, current batch, first id. */
void
job_journal_put(struct job *j)
{
	struct journal		*jl = jst.jj_journal;
	struct journal_job	 jj;
	struct job_batch	*b, *cur = NULL;
	R3q__JobState		 st = R3Q__JOB_STATE__INIT;
	R3q__WorkerSeen		**roster;
	uint8_t			*params, *extra;
	uint64_t		 nj, nt;
	size_t			 i;

	if (jl == NULL)
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
	jj.ended_ns = j->j_state == JOB_RUNNING ? 0 : job_wall(j->j_end);
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
	job_ids(&nj, &nt);
	/*
	 * An ended batch job whose client took every outcome: what it kept
	 * for the client (payloads, outputs) goes now, unless keep_acked.
	 */
	if (j->j_state != JOB_RUNNING && strcmp(jj.driver, "batch") == 0 &&
	    st.seq <= st.acked && !jst.jj_conf->keep_acked &&
	    journal_bytes(jl, j->j_id) > 0 &&
	    journal_rows_drop(jl, j->j_id) == -1)
		job_journal_error();
	if (journal_job_put(jl, &jj) == -1 ||
	    job_journal_meta(jl, "next_job", nj, &jst.jj_meta_job) == -1 ||
	    job_journal_meta(jl, "next_task", nt > jst.jj_mark ? nt :
	    jst.jj_mark, &jst.jj_meta_task) == -1)
		job_journal_error();
	free(params);
	free(extra);
	free(roster);
}

/* Journal a finished generation's report. */
void
job_journal_gen(const struct job *j, const struct gen_report *g)
{
	R3q__GenReport	 pb;
	uint8_t		 buf[256];
	size_t		 len;

	if (jst.jj_journal == NULL)
		return;
	job_gen_pb(j, g, &pb);
	if ((len = r3q__gen_report__get_packed_size(&pb)) > sizeof(buf))
		fatalx("%s: report of %zu bytes", __func__, len);
	r3q__gen_report__pack(&pb, buf);
	if (journal_gen_put(jst.jj_journal, j->j_id, g->g_gen, buf, len) == -1)
		job_journal_error();
}

/*
 * Task ids up to next were handed out.  The journal keeps a mark ahead of
 * them, moved a block at a time: after a restart no id is handed out
 * again, so a worker still holding a copy from before cannot take a new
 * task for it.  (A resumed es batch keeps its own ids, on purpose.)
 */
void
job_journal_mark(uint64_t next)
{
	if (jst.jj_journal == NULL || next <= jst.jj_mark)
		return;
	jst.jj_mark = next + TASK_MARK_BLOCK;
	if (job_journal_meta(jst.jj_journal, "next_task", jst.jj_mark,
	    &jst.jj_meta_task) == -1)
		job_journal_error();
}

/*
 * End the journal's transaction: what was accepted is now kept.  -1 if it
 * is not (the journal cannot be written, see job_journal_stall()): then
 * nothing built on it may leave masterd.
 */
int
job_journal_commit(void)
{
	if (jst.jj_journal == NULL)
		return (0);
	if (journal_commit(jst.jj_journal) == -1) {
		job_journal_error();
		return (-1);
	}
	if (jst.jj_committed != NULL)
		jst.jj_committed();
	return (0);
}

/*
 * A journal write failed: a refusal of that one write (a duplicate) is
 * logged; a failure of the journal itself (journal_failed()) stalls.
 */
void
job_journal_error(void)
{
	if (journal_failed(jst.jj_journal)) {
		job_journal_stall();
		return;
	}
	log_warnx("%s", journal_error(jst.jj_journal));
}

/*
 * A journal that cannot write: a full disk, an I/O error, a
 * failed commit.  session_send promises that nothing leaves masterd
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
 * The rewind and the retries run from the control side's timer
 * (control_journal.c), never in the middle of the callback that met the
 * failure; until then session_send withholds every frame
 * (job_journal_commit() fails).  One line is logged when the
 * journal stalls, one when it resumes.
 */
void
job_journal_stall(void)
{
	char		 retry[32];
	int		 first = 0;

	/* What the rollback may take back is no longer known to be held. */
	jst.jj_meta_job = jst.jj_meta_task = 0;
	/* A reload's own writes: rolled back after it, see the rewind. */
	if (jst.jj_reloading)
		return;
	if (!jst.jj_stall) {
		first = 1;
		jst.jj_stall = 1;
		jst.jj_since = mono_ns();
		jst.jj_stalls++;
		jst.jj_code = journal_failed(jst.jj_journal);
		snprintf(jst.jj_why, sizeof(jst.jj_why), "%s",
		    journal_error(jst.jj_journal));
		conf_format_duration(retry, sizeof(retry),
		    jst.jj_conf->journal_retry);
		log_warnx("%s: the journal is stalled: no result is taken and "
		    "no task assigned until it can be written again (tried "
		    "every %s)", jst.jj_why, retry);
	}
	/* The rewind, at once; then the retries. */
	if (jst.jj_stalled != NULL)
		jst.jj_stalled(first);
}

/* The journal, or NULL if masterd runs without one (journal = none). */
struct journal *
job_journal_handle(void)
{
	return (jst.jj_journal);
}

/* Is the journal stalled? */
int
job_journal_stalled(void)
{
	return (jst.jj_stall);
}

/* Times the journal stalled since masterd started (metrics). */
uint64_t
job_journal_stalls(void)
{
	return (jst.jj_stalls);
}

/* What failed, path and all, while the journal is stalled; else NULL. */
const char *
job_journal_stall_text(void)
{
	return (jst.jj_stall ? jst.jj_why : NULL);
}

/* SQLite's words for why the journal is stalled; NULL if it is not. */
const char *
job_journal_stall_why(void)
{
	return (jst.jj_stall ? journal_errstr(jst.jj_code) : NULL);
}

/*
 * Bring the jobs back to what the journal holds, once the control side
 * has dropped the peers that hold or were sent what may rest on the lost
 * writes and freed the jobs (job_forget_all()): roll back and load every
 * job again, as at start-up.  -1 if the journal cannot even be rolled back
 * or read (the jobs are forgotten again): tried again at the next retry.
 */
int
job_journal_reload(size_t *njobs)
{
	struct journal	*jl = jst.jj_journal;
	struct job	*j;
	uint64_t	 v;
	int		 rc;

	*njobs = 0;
	jst.jj_meta_job = jst.jj_meta_task = 0;
	if (journal_rollback(jl) == -1) {
		log_debug("%s", journal_error(jl));
		return (-1);
	}
	/*
	 * Load the jobs as at start-up.  What the load writes (a resumed
	 * job's row, the mark of the ids) only restates what the journal
	 * holds, and would fail again on a full disk: it is rolled back,
	 * and written for real by the first commit after resuming.
	 */
	jst.jj_reloading = 1;
	rc = journal_load_jobs(jl, job_load, NULL);
	jst.jj_reloading = 0;
	if (rc == -1)
		log_warnx("%s", journal_error(jl));
	if (journal_rollback(jl) == -1 || rc == -1) {
		job_forget_all();
		return (-1);
	}
	/* The mark of the ids handed out, as journaled: moved past again. */
	if (journal_meta_get(jl, "next_task", &v) == 0)
		jst.jj_mark = v;
	else
		jst.jj_mark = 0;
	for (j = job_first(); j != NULL; j = job_next(j))
		(*njobs)++;
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

	if (!journal_is_full(jst.jj_code))
		return (1);
	snprintf(dir, sizeof(dir), "%s", jst.jj_conf->journal);
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

/*
 * May the stalled journal be written again: rolled back, room enough, a
 * write that goes through?  Then the stall ends (logged) and 0; else -1.
 */
int
job_journal_resume(void)
{
	struct journal	*jl = jst.jj_journal;
	char		 took[32];

	jst.jj_meta_job = jst.jj_meta_task = 0;
	if ((journal_failed(jl) &&
	    journal_rollback(jl) == -1) ||
	    !job_journal_room() || journal_probe(jl) == -1)
		return (-1);
	jst.jj_stall = 0;
	conf_format_duration(took, sizeof(took),
	    (mono_ns() - jst.jj_since) / NS_PER_MS);
	log_info("journal %s can be written again, after %s: resuming "
	    "(workers are welcome, tasks assigned)",
	    journal_path(jl), took);
	return (0);
}

/* A size for people: "512 MiB", "1.5 GiB", "300 B". */
static void
job_journal_size(char *buf, size_t len, uint64_t n)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB",
	    "TiB", "PiB" };
	size_t		 u = 0;
	uint64_t	 div = 1;

	while (u + 1 < sizeof(units) / sizeof(units[0]) && n >= div * 1024) {
		div *= 1024;
		u++;
	}
	if (n % div == 0)
		snprintf(buf, len, "%llu %s", (unsigned long long)(n / div),
		    units[u]);
	else
		snprintf(buf, len, "%.1f %s", (double)n / (double)div,
		    units[u]);
}

/*
 * Compact the running batch jobs of owner (NULL: every owner) whose
 * client acknowledged outcomes since their last compaction: their
 * batches over and acknowledged leave the journal now rather than at the
 * next start, with their payloads and outputs.  Run when a submission
 * would be refused.  It reads a job's rows, so a job is compacted again
 * only once its client has acknowledged more: a refusal costs nothing
 * until the client has taken outcomes.
 */
static void
job_journal_compact(const char *owner)
{
	struct journal		*jl = jst.jj_journal;
	const struct job	*o;
	R3q__JobState		 st;
	uint64_t		 last;
	size_t			 n;

	if (jst.jj_conf->keep_acked || jst.jj_stall)
		return;
	for (o = job_first(); o != NULL; o = job_next(o)) {
		if (o->j_state != JOB_RUNNING ||
		    strcmp(o->j_drv->d_name, "batch") != 0 ||
		    o->j_drv->d_state == NULL ||
		    (owner != NULL && strcmp(o->j_owner, owner) != 0))
			continue;
		r3q__job_state__init(&st);
		o->j_drv->d_state(o, &st);
		if (u64map_get(&jst.jj_compacted, o->j_id, &last) &&
		    st.acked <= last)
			continue;
		if (journal_compact(jl, o->j_id, st.acked, &n) == -1) {
			job_journal_error();
			return;
		}
		if (u64map_put(&jst.jj_compacted, o->j_id, st.acked) == -1)
			fatal("%s", __func__);
		if (n > 0)
			log_debug("batch job %llu: %zu batches over and "
			    "acknowledged dropped from the journal",
			    (unsigned long long)o->j_id, n);
	}
}

/*
 * Disk as a budget: may j's client journal bytes more (a frame's
 * payloads)?  max_journal bounds what the journal keeps in all,
 * max_journal_client what one client's jobs keep (0: no bound), so that
 * one client cannot fill the disk and stall every other (a journal that
 * cannot be written stalls masterd).  What a job keeps is counted by the
 * journal (journal_bytes()): the payloads of its tasks, its outputs and
 * outcomes, until they are acknowledged and the job ends (keep_acked),
 * or journal_retention passes; a running job's batches over and
 * acknowledged leave it at the next start, or here when a submission
 * would be refused (job_journal_compact()).  Outputs are never refused:
 * they count against the next submission.  0, or -1 with the error for
 * the client, naming the key (the session logs the refusal).
 */
int
job_journal_admit(const struct job *j, uint64_t bytes, char *err,
    size_t len)
{
	struct journal		*jl = jst.jj_journal;
	const struct job	*o;
	const char		*key = NULL;
	uint64_t		 mine = 0, all, max = 0;
	char			 has[32], of[32];
	int			 again = 1;

	if (jl == NULL)
		return (0);
 retry:
	all = journal_bytes_all(jl);
	mine = 0;
	if (jst.jj_conf->max_journal_client != 0) {
		for (o = job_first(); o != NULL; o = job_next(o))
			if (strcmp(o->j_owner, j->j_owner) == 0)
				mine += journal_bytes(jl, o->j_id);
		if (mine + bytes > jst.jj_conf->max_journal_client) {
			key = "max_journal_client";
			max = jst.jj_conf->max_journal_client;
		}
	}
	if (key == NULL && jst.jj_conf->max_journal != 0 &&
	    all + bytes > jst.jj_conf->max_journal) {
		key = "max_journal";
		max = jst.jj_conf->max_journal;
	}
	if (key == NULL)
		return (0);
	/* What the clients have taken may free room: then look again. */
	if (again) {
		again = 0;
		job_journal_compact(strcmp(key, "max_journal") == 0 ? NULL :
		    j->j_owner);
		key = NULL;
		goto retry;
	}
	job_journal_size(of, sizeof(of), max);
	if (strcmp(key, "max_journal") == 0) {
		job_journal_size(has, sizeof(has), all);
		snprintf(err, len, "the journal has %s of %s; %llu more bytes "
		    "refused (%s); try again once jobs end and their outcomes "
		    "are taken", has, of, (unsigned long long)bytes, key);
	} else {
		job_journal_size(has, sizeof(has), mine);
		snprintf(err, len, "client %s has %s of %s journal; %llu more "
		    "bytes refused (%s); close jobs and take their outcomes to "
		    "free it", j->j_owner, has, of, (unsigned long long)bytes,
		    key);
	}
	return (-1);
}

/* Drop the finished jobs older than journal_retention (0: keep them). */
void
job_journal_prune(void)
{
	struct journal	*jl = jst.jj_journal;
	uint64_t	 keep, now = wall_ns();
	size_t		 n;

	if (jl == NULL)
		return;
	keep = jst.jj_conf->journal_retention * NS_PER_MS;
	if (keep == 0 || keep >= now)
		return;
	if (jst.jj_stall)
		return;
	if (journal_prune(jl, now - keep, &n) == -1 ||
	    journal_commit(jl) == -1) {
		job_journal_error();
		return;
	}
	if (n > 0)
		log_info("journal: dropped %zu jobs finished more than %llus "
		    "ago (journal_retention)", n, (unsigned long long)
		    (jst.jj_conf->journal_retention / 1000));
}

static int
job_load_gen(void *arg, uint32_t gen, const void *blob, size_t len)
{
	struct job		*j = arg;
	struct gen_report	 g;
	R3q__GenReport		*pb;

	if ((pb = r3q__gen_report__unpack(NULL, len, blob)) == NULL) {
		return (0);
	}
	memset(&g, 0, sizeof(g));
	g.g_gen = gen;
	g.g_best = pb->best;
	g.g_elapsed = pb->elapsed_ns;
	g.g_tasks = pb->tasks;
	g.g_total = pb->total_ns;
	g.g_sync = pb->sync_ns;
	g.g_comm = pb->comm_ns;
	g.g_compute = pb->compute_ns;
	g.g_replicas = pb->replicas;
	g.g_killed_held = pb->killed_held;
	g.g_killed_running = pb->killed_running;
	r3q__gen_report__free_unpacked(pb, NULL);
	job_gen_keep(j, &g);
	return (0);
}

/*
 * Before a batch job loads: what only its client needed and the client
 * has taken goes (keep_acked = no).  An ended job whose every outcome was
 * acknowledged keeps none of its tasks, results or batches; a running
 * one loses its batches that are closed, over and acknowledged, which
 * would only be made again in the core to end at once (a client that
 * left 60,000 made a restart take minutes).  A failure (logged) leaves
 * the rows to load as they are.
 */
static void
job_load_compact(const struct job *j, const struct journal_job *row,
    const R3q__JobState *st)
{
	struct journal	*jl = jst.jj_journal;
	size_t		 n;

	/* A reload's writes are rolled back after it: none to make. */
	if (st == NULL || jst.jj_conf->keep_acked || jst.jj_reloading ||
	    strcmp(row->driver, "batch") != 0)
		return;
	if (j->j_state != JOB_RUNNING) {
		if (st->seq <= st->acked && journal_bytes(jl, j->j_id) > 0 &&
		    journal_rows_drop(jl, j->j_id) == -1)
			log_warnx("%s", journal_error(jl));
		return;
	}
	if (journal_compact(jl, j->j_id, st->acked, &n) == -1)
		log_warnx("%s", journal_error(jl));
	else if (n > 0)
		log_info("batch job %llu: %zu batches over and acknowledged "
		    "dropped from the journal", (unsigned long long)j->j_id,
		    n);
}

/* One job from the journal: kept as it ended, or resumed. */
static int
job_load(void *arg, const struct journal_job *row)
{
	struct journal		*jl = jst.jj_journal;
	const struct job_driver	*drv;
	struct job		*j;
	R3q__JobState		*st = NULL;
	uint64_t		 now = mono_ns(), wnow = wall_ns();
	char			 err[160];
	size_t			 i;

	(void)arg;
	if ((drv = job_driver_find(row->driver)) == NULL) {
		log_warnx("%s: job %llu has unknown driver '%s'; skipped",
		    journal_path(jl), (unsigned long long)row->id,
		    row->driver);
		return (0);
	}
	if (row->extra != NULL)
		st = r3q__job_state__unpack(NULL, row->extralen, row->extra);
	job_ids_raise(row->id + 1, 0);
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
		job_owner_load(j->j_owner, sizeof(j->j_owner), st->owner);
		for (i = 0; i < st->n_workers; i++)
			job_roster_add(j, st->workers[i]->name,
			    st->workers[i]->cpus, st->workers[i]->speed)->delay_ms =
			    st->workers[i]->delay_ms;
		j->j_end = j->j_start + st->elapsed_ns;
	} else
		j->j_end = j->j_start;
	if (journal_load_gens(jl, j->j_id, job_load_gen, j) == -1) {
		if (st != NULL)
			r3q__job_state__free_unpacked(st, NULL);
		free(j->j_gens);
		job_roster_free(j);
		free(j);
		return (-1);
	}
	job_load_compact(j, row, st);
	job_adopt(j);
	if (drv->d_load(j, row, st, err, sizeof(err)) == -1) {
		log_warnx("%s: job %llu cannot resume: %s",
		    journal_path(jl), (unsigned long long)j->j_id,
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

/*
 * The thread that keeps systemd waiting while the jobs load (the loop
 * does not run yet, and one job's load is one call): EXTEND_TIMEOUT_USEC
 * at once and every JOURNAL_EVERY_MS until told to stop, with a STATUS.
 * Without NOTIFY_SOCKET sd_notify() does nothing.
 */
static struct {
	pthread_t	 ex_thread;
	pthread_mutex_t	 ex_mtx;
	pthread_cond_t	 ex_cv;
	int		 ex_stop;
	int		 ex_running;
} jex = { .ex_mtx = PTHREAD_MUTEX_INITIALIZER,
    .ex_cv = PTHREAD_COND_INITIALIZER };

static void *
job_journal_extend_main(void *arg)
{
	struct timespec	 ts;
	uint64_t	 t0 = mono_ns(), s;

	(void)arg;
	pthread_mutex_lock(&jex.ex_mtx);
	while (!jex.ex_stop) {
		s = (mono_ns() - t0) / NS_PER_SEC;
		notify_status("loading the journal (%llus so far)",
		    (unsigned long long)s);
		notify_extend_timeout(JOURNAL_EXTEND_MS);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += JOURNAL_EVERY_MS / 1000;
		while (!jex.ex_stop && pthread_cond_timedwait(&jex.ex_cv,
		    &jex.ex_mtx, &ts) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&jex.ex_mtx);
	return (NULL);
}

/* Start the thread (nothing if it cannot be made: logged). */
static void
job_journal_extend_start(void)
{
	int	 rc;

	jex.ex_stop = 0;
	if ((rc = pthread_create(&jex.ex_thread, NULL,
	    job_journal_extend_main, NULL)) != 0) {
		log_warnx("cannot start the thread that tells systemd the "
		    "journal is loading: %s", strerror(rc));
		return;
	}
	jex.ex_running = 1;
}

/* Stop it, before READY=1. */
static void
job_journal_extend_stop(void)
{
	if (!jex.ex_running)
		return;
	pthread_mutex_lock(&jex.ex_mtx);
	jex.ex_stop = 1;
	pthread_cond_signal(&jex.ex_cv);
	pthread_mutex_unlock(&jex.ex_mtx);
	pthread_join(jex.ex_thread, NULL);
	jex.ex_running = 0;
}

/* Take a key word from the journal, or put ours there; -1 on error. */
static int
job_journal_key(const char *name, uint64_t *k)
{
	struct journal	*jl = jst.jj_journal;
	uint64_t	 v;
	int		 rc;

	if ((rc = journal_meta_get(jl, name, &v)) == -1)
		return (-1);
	if (rc == 0 && v != 0) {
		*k = v;
		return (0);
	}
	return (journal_meta_set(jl, name, *k));
}

/*
 * Open the journal at startup (its directory made already), under
 * configuration c (a reload overwrites it in place), and resume what it
 * holds: the epoch (so the results workers finished while
 * masterd was down still count), the id counters, and every job.  -1
 * (logged) if it cannot be used.
 */
int
job_journal_load(const struct masterd_config *c)
{
	struct journal	*jl;
	char		 err[512];
	uint64_t	 v, nj, nt;
	int		 rc;

	jst.jj_conf = c;
	if ((jl = jst.jj_journal = journal_open(c->journal, err,
	    sizeof(err))) == NULL) {
		log_warnx("%s", err);
		return (-1);
	}
	if ((rc = journal_meta_get(jl, "epoch", &v)) == -1)
		goto fail;
	if (rc == 0 && v != 0)
		md->epoch = v;
	else if (journal_meta_set(jl, "epoch", md->epoch) == -1)
		goto fail;
	/* The key of the copies' tags: a restart keeps them valid. */
	if (job_journal_key("tag_key0", &md->mac.k0) == -1 ||
	    job_journal_key("tag_key1", &md->mac.k1) == -1)
		goto fail;
	if ((rc = journal_meta_get(jl, "next_job", &v)) == -1)
		goto fail;
	if (rc == 0)
		job_ids_raise(v, 0);
	if ((rc = journal_meta_get(jl, "next_task", &v)) == -1)
		goto fail;
	job_ids(&nj, &nt);
	if (rc == 0 && v > nt) {
		job_ids_raise(0, v);
		jst.jj_mark = v;
	}
	job_journal_extend_start();
	job_journal_prune();
	rc = journal_load_jobs(jl, job_load, NULL);
	if (rc == 0)
		job_journal_commit();
	job_journal_extend_stop();
	if (rc == -1)
		goto fail;
	return (0);
 fail:
	log_warnx("%s", journal_error(jl));
	journal_close(jl);
	jst.jj_journal = NULL;
	return (-1);
}

/* At exit: commit and close. */
void
job_journal_unload(void)
{
	if (jst.jj_journal != NULL) {
		job_journal_commit();
		journal_close(jst.jj_journal);
		jst.jj_journal = NULL;
	}
	u64map_free(&jst.jj_compacted);
}

/*
 * What clients read of a job: its JobInfo (totals, the paper's
 * efficiency, why it waits, its driver's fields), its generations'
 * reports, and the JobTrace that r3qctl report draws; and its owner
 * as a journal of an older masterd named it.  Marshalling only: nothing
 * here changes a job.
 */
#include "config.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "journal.h"
#include "log.h"
#include "masterd.h"
#include "report/measure.h"
#include "util.h"

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
	pb->tasks = (uint32_t)g->g_tasks;
	pb->total_ns = g->g_total;
	pb->sync_ns = g->g_sync;
	pb->comm_ns = g->g_comm;
	pb->compute_ns = g->g_compute;
	pb->replicas = g->g_replicas;
	pb->killed_held = g->g_killed_held;
	pb->killed_running = g->g_killed_running;
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
	struct measure_eff	 e;
	uint64_t		 t = 0;
	size_t			 i;

	for (i = 0; i <= j->j_ngens; i++) {
		/* The folded ones' sums (JOB_GENS_KEPT) first. */
		g = i == 0 ? &j->j_gfold : &j->j_gens[i - 1];
		info->sync_ns += g->g_sync;
		info->comm_ns += g->g_comm;
		info->compute_ns += g->g_compute;
		info->replicas += g->g_replicas;
		info->killed_held += g->g_killed_held;
		info->killed_running += g->g_killed_running;
		info->work_ms += g->g_tasks * j->j_work_ms;
		t += g->g_total;
	}
	measure_efficiency(info->work_ms, j->j_speed_time, t,
	    info->elapsed_ns, &e);
	info->speed_sum = e.me_speed_sum;
	info->lower_bound_s = e.me_lower_bound_s;
	info->efficiency = e.me_efficiency;
}

/*
 * Why none of a running job's tasks can run, if so: a live batch whose
 * kind no connected worker offers.  "" otherwise.
 */
static void
job_waiting(const struct job *j, char *buf, size_t len)
{
	const struct job_batch	*b;
	const char		*why;

	buf[0] = '\0';
	if (j->j_state != JOB_RUNNING)
		return;
	if ((why = job_journal_stall_why()) != NULL) {
		snprintf(buf, len, "the journal cannot be written (%s); "
		    "nothing is assigned until it can", why);
		return;
	}
	TAILQ_FOREACH(b, &j->j_batches, b_entry)
		if (b->b_live && b->b_nover < b->b_n &&
		    job_kind_workers(b->b_kind) == 0) {
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
	info->gens_folded = j->j_nfolded;
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
	struct journal	*jl = job_journal_handle();
	size_t		 i, n;

	r3q__job_trace__init(t);
	t->info = xcalloc(1, sizeof(*t->info));
	job_info(j, t->info, 1);
	t->start_ns = j->j_start_wall;
	t->n_workers = j->j_nroster;
	t->workers = xcalloc(j->j_nroster + 1, sizeof(*t->workers));
	for (i = 0; i < j->j_nroster; i++)
		t->workers[i] = &j->j_roster[i];
	if (jl == NULL) {
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
	if (journal_load_spans(jl, j->j_id, job_trace_span, t) ==
	    -1) {
		snprintf(err, errlen, "%s", journal_error(jl));
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

/* Bare owners of an older journal whose kind job_owner_load() keeps. */
#define JOB_OWNERS_SEEN	16

/*
 * A job's owner as the journal holds it, in dst.  Owners say how their
 * client authenticated: unix:NAME on the control socket, tls:CN with a
 * client certificate.  An older masterd wrote the bare name, which a
 * certificate's CN could match: uid:N and control came only from the
 * control socket, so does a name that is a user of this host (root
 * first); any other bare name was a certificate's.  A name that is both
 * a user and some CN is the user's: its job is then the operators' (who
 * see every job on the control socket), never the certificate holder's.
 */
void
job_owner_load(char *dst, size_t len, const char *owner)
{
	/*
	 * The names asked of the user database (which may be a network
	 * service) so far: an old journal's many jobs have few owners, and
	 * its finished jobs keep their bare names until they are pruned.
	 */
	static struct {
		char	name[64];
		int	user;
	}		 seen[JOB_OWNERS_SEEN];
	static size_t	 nseen;
	size_t		 i;
	int		 user;

	if (owner[0] == '\0' || strncmp(owner, "unix:", 5) == 0 ||
	    strncmp(owner, "tls:", 4) == 0) {
		snprintf(dst, len, "%s", owner);
		return;
	}
	for (i = 0; i < nseen && i < JOB_OWNERS_SEEN; i++)
		if (strcmp(seen[i].name, owner) == 0)
			break;
	if (i < nseen && i < JOB_OWNERS_SEEN)
		user = seen[i].user;
	else {
		user = strncmp(owner, "uid:", 4) == 0 ||
		    strcmp(owner, "control") == 0 || getpwnam(owner) != NULL;
		i = nseen++ % JOB_OWNERS_SEEN;
		snprintf(seen[i].name, sizeof(seen[i].name), "%s", owner);
		seen[i].user = user;
		log_info("jobs of an older masterd's journal owned by %s are "
		    "now %s%s's", owner, user ? "unix:" : "tls:", owner);
	}
	snprintf(dst, len, "%s%s", user ? "unix:" : "tls:", owner);
}

/*
 * Dispatch: the glue between the scheduling core and the network, as
 * OpenSMTPD's scheduler.c is to its backend.  It alone calls the core
 * (sched_*()) for what workers say and do (the worker protocol and the
 * session layer tell it through dispatch_*()), drains the core's actions
 * into the frames each worker is to be sent (its w_out, w_cancel,
 * ...), and flushes them once a pass of the event loop: the journal's
 * commit first, then each worker's Cancel, Assign, Withdraw and TaskPush,
 * then what clients following their jobs are told (control_tell()).  One
 * timer, armed from sched_deadline(), calls the core back at its next
 * deadline.
 *
 * Calls go down from here to the session layer (session_send()), to the
 * worker protocol for a worker's id and tags (worker_get(), worker_tag()),
 * and to the job layer for what an action means for a job (job_task(),
 * job_outcome(), job_batch_done(), ...).  The job layer asks for a flush
 * by server_flush_later() and for the core's actions by server_drain().
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "log.h"
#include "masterd.h"
#include "util.h"

static void	server_tick_arm(void);
static void	server_flush_workers(void);
static const char *dispatch_action_name(enum sched_action_type);
static void	worker_dirty(struct worker *);
static void	server_push_clear(struct worker *);
static void	scratch_reset(int);

/*
 * Memory for what the frames being built borrow (the payloads a driver
 * makes as a task is sent): a bump allocator in chunks, emptied once the
 * frames are sent, so that a payload costs nothing while its task waits
 * in the queue.
 */
struct scratch {
	struct scratch	*sc_next;
	size_t		 sc_used, sc_cap;
	uint8_t		 sc_data[];
};
#define SCRATCH_CHUNK	65536

/*
 * Dispatch's own state: what it was given at start (the event base, the
 * configuration, which a reload overwrites in place, and the core it
 * drives, which masterd.c made and frees), the workers with frames to
 * send, the events that flush them and call the core back, and the
 * scratch memory the frames borrow.
 */
static struct {
	struct event_base		*base;
	const struct masterd_config	*conf;
	struct sched			*core;
	struct workerlist		 dirty;		/* frames to send */
	struct event			*flush;		/* sends them */
	struct event			*tick;		/* the core's deadline */
	uint64_t			 tick_at;	/* when it is armed for */
	int				 draining;	/* in server_drain() */
	char				 last_lost[64];	/* the last worker
							   lost */
	struct scratch			*scratch;
} dp = {
	.dirty = TAILQ_HEAD_INITIALIZER(dp.dirty),
	.tick_at = UINT64_MAX
};

/* Start dispatch on base, under configuration c, driving core. */
void
dispatch_init(struct event_base *base, const struct masterd_config *c,
    struct sched *core)
{
	dp.base = base;
	dp.conf = c;
	dp.core = core;
}

/* Free dispatch's events and scratch memory: masterd exits. */
void
dispatch_close(void)
{
	scratch_reset(1);
	if (dp.tick != NULL) {
		event_free(dp.tick);
		dp.tick = NULL;
	}
	if (dp.flush != NULL) {
		event_free(dp.flush);
		dp.flush = NULL;
	}
	dp.tick_at = UINT64_MAX;
}

/*
 * The core found worker a->wid suspect (doc/algorithms.md §3.2): its
 * task stood still while a->by did a whole task, or failed where a->by's
 * copy succeeded.  Say so, and keep the evidence for r3qctl workers.  The
 * core has already handed its tasks to other workers.
 */
static void
dispatch_suspect(const struct sched_action *a)
{
	struct worker	*w, *by;
	const char	*byname;

	if ((w = worker_get(a->wid)) == NULL)
		return;
	by = worker_get(a->by);
	byname = by != NULL ? by->w_name : "another worker";
	switch (a->why) {
	case SCHED_WHY_FAILED:
		str_setf(&w->w_why, "task %llu failed on it "
		    "and succeeded on %s", (unsigned long long)a->task,
		    byname);
		break;
	case SCHED_WHY_DISAGREED:
		str_setf(&w->w_why, "its output for task "
		    "%llu disagreed with the verified one",
		    (unsigned long long)a->task);
		break;
	case SCHED_WHY_SLOW:
		/*
		 * Slow, not stuck (sched_worker_suspected()): its task is
		 * replicated, nothing counted; a slow machine is suspected
		 * this way up to twice a task (once each half), so not a
		 * warning.
		 */
		str_setf(&w->w_why, "task %llu did not move "
		    "for %.1fs while %s did a whole task, within its own "
		    "%.1fs a task (slow, not counted)",
		    (unsigned long long)a->task, (double)a->silent_ns / 1e9,
		    byname, (double)a->own_ns / 1e9);
		log_info("worker %s suspect: %s", w->w_name, w->w_why);
		return;
	default:
		str_setf(&w->w_why, "task %llu did not move "
		    "for %.1fs while %s did a whole task",
		    (unsigned long long)a->task, (double)a->silent_ns / 1e9,
		    byname);
		break;
	}
	log_warnx("worker %s suspect: %s (%u within suspect_window)",
	    w->w_name, w->w_why, a->count);
}

/*
 * The core's next deadline (a cool-down's end, its periodic look for
 * copies that stand still), on a timer.
 */
static void
server_tick(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	dp.tick_at = UINT64_MAX;
	sched_tick(dp.core, mono_ns());
	server_drain();
}

/*
 * Arm the timer for the core's deadline, if it has one.  The deadline
 * mostly stays put from one loop pass to the next (the periodic look is
 * due every half second or so while tasks are out): re-arm only when it
 * moved.
 */
static void
server_tick_arm(void)
{
	struct timeval	 tv;
	uint64_t	 when, now;

	if (dp.tick == NULL) {
		if ((dp.tick = evtimer_new(dp.base, server_tick,
		    NULL)) == NULL)
			fatal("evtimer_new");
		dp.tick_at = UINT64_MAX;
	}
	if ((when = sched_deadline(dp.core)) == dp.tick_at)
		return;
	dp.tick_at = when;
	if (when == UINT64_MAX) {
		evtimer_del(dp.tick);
		return;
	}
	now = mono_ns();
	when = when > now ? when - now : 0;
	tv.tv_sec = (time_t)(when / 1000000000);
	tv.tv_usec = (suseconds_t)((when % 1000000000) / 1000 + 1);
	evtimer_add(dp.tick, &tv);
}

/* Forget w's pending pushes. */
static void
server_push_clear(struct worker *w)
{
	size_t	 i;

	for (i = 0; i < w->w_npush; i++) {
		free(w->w_push[i].pp_ids);
		free(w->w_push[i].pp_donate);
	}
	w->w_npush = 0;
}

/*
 * Send worker w a TaskPush at the next flush, after the Assign being
 * built (a push may name tasks it carries): bound (0: none) for tasks
 * ids, and the tasks in donate asked to give part of their work back.
 */
void
server_push(struct worker *w, const uint64_t *ids, size_t n, uint32_t bound,
    const uint64_t *donate, size_t ndonate)
{
	struct push_pending	*pp;

	if (w->w_session == NULL || (n == 0 && ndonate == 0))
		return;
	if (w->w_npush == w->w_pushcap) {
		w->w_pushcap = w->w_pushcap ? 2 * w->w_pushcap : 4;
		if ((w->w_push = reallocarray(w->w_push, w->w_pushcap,
		    sizeof(*w->w_push))) == NULL)
			fatal("%s", __func__);
	}
	pp = &w->w_push[w->w_npush++];
	pp->pp_ids = xcalloc(n + 1, sizeof(*ids));
	if (n > 0)
		memcpy(pp->pp_ids, ids, n * sizeof(*ids));
	pp->pp_n = n;
	pp->pp_bound = bound;
	pp->pp_donate = xcalloc(ndonate + 1, sizeof(*donate));
	if (ndonate > 0)
		memcpy(pp->pp_donate, donate, ndonate * sizeof(*donate));
	pp->pp_ndonate = ndonate;
	worker_dirty(w);
}

/*
 * A copy withdrawn before its Assign left: take it out of the Assign
 * being built rather than send a Cancel the worker would get before the
 * task.  Returns whether it was there.
 */
int
dispatch_unsend(struct worker *w, uint64_t task)
{
	size_t	 i, k;

	for (i = 0; i < w->w_nout && w->w_outv[i].id != task; i++)
		;
	if (i == w->w_nout)
		return (0);
	memmove(&w->w_outv[i], &w->w_outv[i + 1],
	    (--w->w_nout - i) * sizeof(*w->w_outv));
	for (k = 0; k < w->w_nrepl && w->w_repl[k] != task; k++)
		;
	if (k < w->w_nrepl)
		w->w_repl[k] = w->w_repl[--w->w_nrepl];
	for (k = 0; k < w->w_nactive && w->w_active[k] != task; k++)
		;
	if (k < w->w_nactive)
		w->w_active[k] = w->w_active[--w->w_nactive];
	return (1);
}

/* w has frames being built: send them at the next flush. */
static void
worker_dirty(struct worker *w)
{
	if (w->w_dirty)
		return;
	w->w_dirty = 1;
	TAILQ_INSERT_TAIL(&dp.dirty, w, w_dirty_entry);
}

/* n bytes valid until the frames being built are sent. */
void *
server_scratch(size_t n)
{
	struct scratch	*sc;
	void		*p;
	size_t		 cap;

	n = (n + 15) & ~(size_t)15;
	if (dp.scratch == NULL || dp.scratch->sc_cap - dp.scratch->sc_used <
	    n) {
		cap = n > SCRATCH_CHUNK ? n : SCRATCH_CHUNK;
		sc = xcalloc(1, sizeof(*sc) + cap);
		sc->sc_cap = cap;
		sc->sc_next = dp.scratch;
		dp.scratch = sc;
	}
	p = dp.scratch->sc_data + dp.scratch->sc_used;
	dp.scratch->sc_used += n;
	return (p);
}

/* The frames are sent: keep one chunk, empty. */
static void
scratch_reset(int all)
{
	struct scratch	*sc;

	while (dp.scratch != NULL && (all || dp.scratch->sc_next != NULL ||
	    dp.scratch->sc_cap != SCRATCH_CHUNK)) {
		sc = dp.scratch;
		dp.scratch = sc->sc_next;
		free(sc);
	}
	if (dp.scratch != NULL)
		dp.scratch->sc_used = 0;
}

/*
 * Take out of w's Assign the copies of tasks that ended after the copy
 * was drained into it: a result read since, whose cancel of this copy is
 * not drained yet when a flush comes in the middle of a drain (a batch
 * done, a task failed).  Their payloads may be gone with the outcome, or
 * with the batch; the worker is told of the cancel, which it ignores.
 */
static void
server_drop_ended(struct worker *w)
{
	struct job_batch	*b;
	size_t			 i, idx;

	for (i = 0; i < w->w_nout;) {
		if ((b = job_task_find(w->w_outv[i].id, &idx)) == NULL ||
		    !b->b_live || job_task_ended(b, idx))
			(void)dispatch_unsend(w, w->w_outv[i].id);
		else
			i++;
	}
}

/*
 * Send what the drained actions left for each worker: cancels first.  The
 * journal's transaction is committed now, or within journal_delay if only
 * workers are told (job_journal_due()); what goes to a client waits for
 * the commit (session_send()).
 */
void
server_flush(void)
{
	job_journal_due();
	job_batch_flush();
	server_flush_workers();
	/* After the workers' tasks: what r3qctl is told waits for a commit. */
	control_tell();
	scratch_reset(0);
}

/*
 * The workers' part of the flush: each dirty worker's Cancel, Assign,
 * Withdraw and TaskPushes (the drivers' pushes taken first).  Alone,
 * before a batch is done (server_drain()): what the workers were to be
 * sent goes before the batch's end changes the jobs, while the batch's
 * outcomes and its BatchDone wait for the end of the pass and go to the
 * client in one commit and one write, not two.
 */
static void
server_flush_workers(void)
{
	Envelope	 env;
	R3q__Assign	 a;
	R3q__Cancel	 c;
	R3q__Withdraw	 wd;
	R3q__TaskPush	 tp;
	struct worker	*w;
	size_t		 i;

	job_journal_due();
	job_batch_pushes();
	while ((w = TAILQ_FIRST(&dp.dirty)) != NULL) {
		TAILQ_REMOVE(&dp.dirty, w, w_dirty_entry);
		w->w_dirty = 0;
		if (w->w_ncancel > 0) {
			r3q__envelope__init(&env);
			r3q__cancel__init(&c);
			c.n_ids = w->w_ncancel;
			c.ids = w->w_cancel;
			env.body_case = R3Q__ENVELOPE__BODY_CANCEL;
			env.cancel = &c;
			session_send(w->w_session, &env);
			w->w_ncancel = 0;
		}
		server_drop_ended(w);
		if (w->w_nout > 0) {
			r3q__envelope__init(&env);
			r3q__assign__init(&a);
			a.epoch = md->epoch;
			for (i = 0; i < w->w_nout; i++)
				w->w_out[i] = &w->w_outv[i];
			a.n_tasks = w->w_nout;
			a.tasks = w->w_out;
			a.n_replicas = w->w_nrepl;
			a.replicas = w->w_repl;
			a.n_active = w->w_nactive;
			a.active = w->w_active;
			env.body_case = R3Q__ENVELOPE__BODY_ASSIGN;
			env.assign = &a;
			session_send(w->w_session, &env);
			w->w_nout = 0;
			w->w_nrepl = 0;
			w->w_nactive = 0;
		}
		/* After the Assign, so the worker has what it is asked for. */
		if (w->w_nwithdraw > 0) {
			r3q__envelope__init(&env);
			r3q__withdraw__init(&wd);
			wd.n_ids = w->w_nwithdraw;
			wd.ids = w->w_withdraw;
			env.body_case = R3Q__ENVELOPE__BODY_WITHDRAW;
			env.withdraw = &wd;
			session_send(w->w_session, &env);
			w->w_nwithdraw = 0;
		}
		for (i = 0; i < w->w_npush; i++) {
			r3q__envelope__init(&env);
			r3q__task_push__init(&tp);
			tp.n_ids = w->w_push[i].pp_n;
			tp.ids = w->w_push[i].pp_ids;
			tp.bound = w->w_push[i].pp_bound;
			tp.n_donate = w->w_push[i].pp_ndonate;
			tp.donate = w->w_push[i].pp_donate;
			env.body_case = R3Q__ENVELOPE__BODY_TASK_PUSH;
			env.task_push = &tp;
			session_send(w->w_session, &env);
		}
		server_push_clear(w);
	}
}

/* The flush event: send the frames built in this pass of the loop. */
static void
server_flush_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	server_flush();
}

/*
 * Commit and send the frames at the end of this pass of the event loop,
 * after the other sessions' frames that have arrived: the results of
 * several workers then share one journal commit, and each worker gets one
 * Assign.  Activating an event already active does nothing.
 */
void
server_flush_later(void)
{
	if (dp.flush == NULL &&
	    (dp.flush = event_new(dp.base, -1, 0, server_flush_cb,
	    NULL)) == NULL)
		fatal("event_new");
	event_active(dp.flush, 0, 0);
}

/*
 * Carry out the core's decisions.  A batch that ends may start the next
 * generation, which makes more actions: the loop runs until the core has
 * nothing more to say.
 */
void
server_drain(void)
{
	struct sched_action	 a;
	struct worker		*w;
	struct job_batch	*b;
	enum job_outcome	 o;
	size_t			 idx;
	char			 buf1[32], buf2[32], buf[512], *why;

	if (dp.draining)
		return;
	dp.draining = 1;
	while (sched_next_action(dp.core, &a)) {
		log_trace(TRACE_SCHED, "%s task %llu worker %s%s%s%s",
		    dispatch_action_name(a.type), (unsigned long long)a.task,
		    (w = worker_get(a.wid)) != NULL ? w->w_name : "-",
		    a.replica ? " replica" : "", a.running ? " running" : "",
		    a.active ? " active" : "");
		switch (a.type) {
		case SCHED_ASSIGN:
			if ((w = worker_get(a.wid)) == NULL) {
				log_warnx("%s: assign of task %llu to unknown "
				    "worker %u", __func__,
				    (unsigned long long)a.task, a.wid);
				break;
			}
			/*
			 * A job that ended in this drain takes its tasks; a
			 * task whose outcome was taken after the core handed
			 * this copy out (a result read before this drain) is
			 * not sent: its payload may be gone, and the core's
			 * cancel of the copy follows.
			 */
			if ((b = job_task_find(a.task, &idx)) == NULL ||
			    !b->b_live || job_task_ended(b, idx))
				break;
			if (w->w_nout == w->w_outcap) {
				w->w_outcap = w->w_outcap ? w->w_outcap * 2 :
				    16;
				if ((w->w_outv = reallocarray(w->w_outv,
				    w->w_outcap, sizeof(*w->w_outv))) == NULL ||
				    (w->w_out = reallocarray(w->w_out,
				    w->w_outcap, sizeof(*w->w_out))) == NULL)
					fatal("reallocarray");
			}
			job_task(b, idx, a.task, &w->w_outv[w->w_nout]);
			w->w_outv[w->w_nout++].tag = worker_tag(w, a.task);
			if (a.replica)
				APPEND(w->w_repl, w->w_nrepl, w->w_replcap,
				    a.task);
			if (a.active) {
				/* Balancing moved it here (doc/algorithms.md §4). */
				APPEND(w->w_active, w->w_nactive,
				    w->w_activecap, a.task);
				b->b_job->j_moved++;
			}
			worker_dirty(w);
			break;
		case SCHED_WITHDRAW:
			if ((w = worker_get(a.wid)) == NULL)
				break;
			APPEND(w->w_withdraw, w->w_nwithdraw,
			    w->w_withdrawcap, a.task);
			worker_dirty(w);
			break;
		case SCHED_CANCEL:
			if ((w = worker_get(a.wid)) == NULL)
				break;
			if (!a.running && (b = job_task_find(a.task,
			    &idx)) != NULL)
				job_withdrawn(b->b_job, w, b->b_gen, idx,
				    a.task, a.replica);
			if (!a.running && dispatch_unsend(w, a.task))
				break;
			if (a.running)
				worker_killed_add(w, a.task);
			APPEND(w->w_cancel, w->w_ncancel, w->w_cancelcap,
			    a.task);
			worker_dirty(w);
			break;
		case SCHED_TASK_FAILED:
			server_flush();
			if ((b = job_task_find(a.task, &idx)) == NULL)
				break;
			why = job_task_why(b, idx, NULL);
			if (a.reason == SCHED_FAIL_KILLS) {
				o = OUTCOME_KILLED;
				snprintf(buf, sizeof(buf), "task %llu was "
				    "running on %u workers that were lost "
				    "(max_kills); the last was %s",
				    (unsigned long long)a.task,
				    dp.conf->max_kills, dp.last_lost);
			} else if (a.reason == SCHED_FAIL_DISAGREE) {
				o = OUTCOME_DISAGREED;
				snprintf(buf, sizeof(buf), "task %llu: too "
				    "few outputs agreed (verify): they "
				    "differed, or no other machine here could "
				    "vote (the workers behind one relay are "
				    "one)", (unsigned long long)a.task);
			} else {
				o = OUTCOME_FAILED;
				snprintf(buf, sizeof(buf), "%s", why != NULL ?
				    why : "it failed on every machine that "
				    "could run it");
			}
			free(why);
			job_outcome(b, idx, o, buf);
			break;
		case SCHED_SUSPECT:
			dispatch_suspect(&a);
			break;
		case SCHED_COOLDOWN:
			if ((w = worker_get(a.wid)) == NULL)
				break;
			log_warnx("worker %s suspect %u times within %s: no new "
			    "tasks for %s (suspect_cooldown)", w->w_name,
			    a.count, session_fmt_ms(dp.conf->suspect_window, buf1,
			    sizeof(buf1)), session_fmt_ms(dp.conf->suspect_cooldown,
			    buf2, sizeof(buf2)));
			break;
		case SCHED_BATCH_DONE:
			server_flush_workers();
			job_batch_done(a.batch, &a.report);
			break;
		}
	}
	server_flush_later();
	server_tick_arm();
	dp.draining = 0;
}

/* An action's name, for the sched trace. */
static const char *
dispatch_action_name(enum sched_action_type t)
{
	switch (t) {
	case SCHED_ASSIGN:
		return ("assign");
	case SCHED_WITHDRAW:
		return ("withdraw");
	case SCHED_CANCEL:
		return ("cancel");
	case SCHED_TASK_FAILED:
		return ("failed");
	case SCHED_SUSPECT:
		return ("suspect");
	case SCHED_COOLDOWN:
		return ("cooldown");
	case SCHED_BATCH_DONE:
		return ("batch-done");
	}
	return ("?");
}

/* Worker w joined: the core may give it tasks of its kinds. */
int
dispatch_worker_join(struct worker *w)
{
	return (sched_worker_join_group(dp.core, w->w_id, w->w_node,
	    w->w_group, w->w_cpus, w->w_kinds, w->w_nkinds, mono_ns()));
}

/*
 * Worker w is being freed: the core puts its tasks back in the queue, and
 * the frames being built for it go.
 */
void
dispatch_worker_gone(struct worker *w)
{
	snprintf(dp.last_lost, sizeof(dp.last_lost), "%s", w->w_name);
	sched_worker_lost(dp.core, w->w_id, mono_ns());
	if (w->w_dirty)
		TAILQ_REMOVE(&dp.dirty, w, w_dirty_entry);
	w->w_dirty = 0;
	free(w->w_outv);
	free(w->w_out);
	free(w->w_cancel);
	free(w->w_repl);
	free(w->w_active);
	free(w->w_withdraw);
	server_push_clear(w);
	free(w->w_push);
}

/* Worker w offers kinds (nk of them) from now on; -1 if the core refused. */
int
dispatch_worker_kinds(struct worker *w, const uint32_t *kinds, size_t nk)
{
	return (sched_worker_kinds(dp.core, w->w_id, kinds, nk, mono_ns()));
}

/*
 * Worker w's output went over its mark (paused: no new tasks for it) or
 * back down (it takes tasks again, and the core is asked for them).
 */
void
dispatch_worker_pause(struct worker *w, int paused)
{
	sched_worker_pause(dp.core, w->w_id, paused, mono_ns());
	if (!paused)
		server_drain();
}

/* Worker w drains: nothing new for it from now on. */
void
dispatch_worker_drain(struct worker *w, uint64_t now)
{
	(void)sched_worker_drain(dp.core, w->w_id, now);
}

/* What worker w holds and runs now, as the core counts. */
void
dispatch_worker_load(const struct worker *w, uint32_t *held, uint32_t *running)
{
	sched_worker_load(dp.core, w->w_id, held, running);
}

/* The core's counts, for /metrics and /status. */
void
dispatch_stats(struct sched_stats *st)
{
	sched_get_stats(dp.core, st);
}

/* The core's estimates of worker w (its rate, round trip); -1: none. */
int
dispatch_worker_estimate(const struct worker *w, struct sched_estimate *est)
{
	return (sched_worker_estimate(dp.core, w->w_id, est));
}

/* The core's suspicions of worker w; -1: none. */
int
dispatch_worker_fault(const struct worker *w, struct sched_fault_info *fi)
{
	return (sched_worker_fault(dp.core, w->w_id, fi));
}

/* Tasks worker w started, and tasks halfway through (Progress). */
void
dispatch_progress(struct worker *w, const R3q__Progress *p)
{
	uint64_t	 now = mono_ns();
	size_t		 i;

	for (i = 0; i < p->n_started; i++)
		sched_started(dp.core, w->w_id, p->started[i], now);
	for (i = 0; i < p->n_halfway; i++)
		sched_progress(dp.core, w->w_id, p->halfway[i], now);
	server_drain();
}

/* Worker w's output of task, as a digest: the core's verdict on it. */
enum sched_verdict
dispatch_vote(struct worker *w, uint64_t task, uint64_t digest,
    const struct sched_timing *tm, uint64_t now)
{
	return (sched_vote(dp.core, w->w_id, task, digest, tm, now));
}

/* Task failed on worker w: -1 if w did not hold a copy of it. */
int
dispatch_failed(struct worker *w, uint64_t task, uint64_t now)
{
	return (sched_failed(dp.core, w->w_id, task, now));
}

/* Worker w's answer to a Withdraw of task: released, or kept. */
int
dispatch_released(struct worker *w, uint64_t task, int released,
    uint64_t now)
{
	return (sched_released(dp.core, w->w_id, task, released, now));
}

/* Draining worker w gave task back: 1 if the core took it back. */
int
dispatch_handback(struct worker *w, uint64_t task, uint64_t now)
{
	return (sched_handback(dp.core, w->w_id, task, now));
}

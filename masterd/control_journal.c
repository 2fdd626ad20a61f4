/*
 * The journal on the control side: the timers that commit what waited
 * for journal_delay, retry a stalled journal and prune old jobs, and the
 * sessions a stall holds or drops.  The journal's rows and the state of
 * a stall are the job side's (job_journal.c); it tells this file through
 * the hooks registered at start (job_journal_hooks()).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/bufferevent.h>
#include <event2/event.h>

#include "journal.h"
#include "log.h"
#include "masterd.h"
#include "util.h"

/*
 * The journal's timers, owned by this file from job_journal_open() to
 * job_journal_close(), with the event base and the configuration (which
 * a reload overwrites in place) it was given there; cj_rewound: the jobs
 * were reloaded since the last failure.
 */
static struct {
	struct event_base		*cj_base;
	const struct masterd_config	*cj_conf;
	struct event	*cj_retry;	/* the rewind, then retries */
	struct event	*cj_commit;	/* journal_delay's commit */
	struct event	*cj_prune;	/* journal_retention */
	int		 cj_rewound;
} cj;

/* The job side met a failed write: rewind at once, then retry. */
static void
cj_stalled(int first)
{
	struct timeval	 now = { 0, 0 };

	cj.cj_rewound = 0;
	if (first)
		masterd_status();
	if (cj.cj_retry != NULL)
		evtimer_add(cj.cj_retry, &now);
}

/* A commit went through: a commit waiting for journal_delay has no use. */
static void
cj_committed(void)
{
	if (cj.cj_commit != NULL && evtimer_pending(cj.cj_commit, NULL))
		evtimer_del(cj.cj_commit);
}

/*
 * Commit, unless what is pending may wait a little.  A frame to a
 * worker rests on nothing a crash could make untrue: a worker keeps nothing because masterd told it so (it forgets a
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
	struct journal	*jl = job_journal_handle();
	struct timeval	 tv;

	/* Stalled: the rewind and its retries (cj_retry) see to it. */
	if (jl == NULL || job_journal_stalled() ||
	    !journal_pending(jl))
		return;
	if (cj.cj_conf->journal_delay == 0 || cj.cj_commit == NULL) {
		(void)job_journal_commit();
		return;
	}
	/* Armed already: it fires within journal_delay of the first write. */
	if (!evtimer_pending(cj.cj_commit, NULL)) {
		tv.tv_sec = (time_t)(cj.cj_conf->journal_delay / 1000);
		tv.tv_usec = (suseconds_t)(cj.cj_conf->journal_delay % 1000) *
		    1000;
		if (evtimer_add(cj.cj_commit, &tv) == -1)
			(void)job_journal_commit();
	}
}

/* journal_delay is over: commit what waited (not while stalled). */
static void
cj_commit_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	if (!job_journal_stalled())
		(void)job_journal_commit();
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
	if (!job_journal_stalled() || s->s_role != ROLE_CLIENT ||
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
cj_release(void)
{
	struct session	*s;

	for (s = session_first(); s != NULL; s = session_next(s)) {
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

/*
 * Bring the jobs back to what the journal holds (job_journal_reload()),
 * after dropping the peers that hold or were sent what may rest on the
 * lost writes: every worker, every batch job's client (it reattaches and
 * gets again what it has not acknowledged).  -1 if the journal cannot be
 * read: tried again at the next retry.
 */
static int
cj_rewind(void)
{
	struct session	*s;
	size_t		 nw = 0, nc = 0, njobs;
	int		 rc;

 again:
	for (s = session_first(); s != NULL; s = session_next(s)) {
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
	server_drain();
	rc = job_journal_reload(&njobs);
	server_drain();
	if (rc == -1)
		return (-1);
	cj.cj_rewound = 1;
	log_info("journal %s: back to what it holds: %zu jobs reloaded, %zu "
	    "workers and %zu clients dropped",
	    journal_path(job_journal_handle()), njobs, nw, nc);
	masterd_status();
	return (0);
}

/* The stalled journal's timer: rewind if needed, then try a write. */
static void
cj_retry_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct timeval	 tv;

	(void)fd;
	(void)ev;
	(void)arg;
	if (!job_journal_stalled())
		return;
	if ((cj.cj_rewound || cj_rewind() == 0) &&
	    job_journal_resume() == 0) {
		masterd_status();
		cj_release();
		return;
	}
	tv.tv_sec = cj.cj_conf->journal_retry / 1000;
	tv.tv_usec = (cj.cj_conf->journal_retry % 1000) * 1000;
	evtimer_add(cj.cj_retry, &tv);
}

/* journal_retention's hourly look. */
static void
cj_prune_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	job_journal_prune();
}

/*
 * Start the jobs on base, under configuration c: the journal (its
 * directory made) with its timers, resuming what it holds
 * (job_journal_load()).  -1 (logged) if the journal cannot be used.
 */
int
job_journal_open(struct event_base *base, const struct masterd_config *c)
{
	struct timeval	 tv = { 3600, 0 };

	cj.cj_base = base;
	cj.cj_conf = c;
	if (strcmp(cj.cj_conf->journal, "none") == 0)
		return (0);
	masterd_mkparent(cj.cj_conf->journal, 0750, "journal");
	if ((cj.cj_retry = evtimer_new(cj.cj_base, cj_retry_cb, NULL)) == NULL)
		fatalx("cannot make the journal's retry timer");
	if ((cj.cj_commit = evtimer_new(cj.cj_base, cj_commit_cb,
	    NULL)) == NULL)
		fatalx("cannot make the journal's commit timer");
	job_journal_hooks(cj_stalled, cj_committed);
	if (job_journal_load(c) == -1)
		return (-1);
	cj.cj_prune = event_new(cj.cj_base, -1, EV_PERSIST, cj_prune_cb, NULL);
	if (cj.cj_prune == NULL || evtimer_add(cj.cj_prune, &tv) == -1)
		fatalx("cannot arm the journal_retention timer");
	return (0);
}

/* At exit: commit and close, and free the timers (control_fini()'s too). */
void
job_journal_close(void)
{
	control_fini();
	if (cj.cj_prune != NULL)
		event_free(cj.cj_prune);
	cj.cj_prune = NULL;
	job_journal_unload();
	if (cj.cj_retry != NULL)
		event_free(cj.cj_retry);
	cj.cj_retry = NULL;
	if (cj.cj_commit != NULL)
		event_free(cj.cj_commit);
	cj.cj_commit = NULL;
}

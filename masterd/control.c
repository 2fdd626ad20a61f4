/*
 * The control side of masterd: the UNIX control socket and the client
 * requests that arrive on it or from TLS clients.  A refused request gets
 * an Error and the session stays open; a message no client may send closes
 * the session.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "exchange.h"
#include "log.h"
#include "masterd.h"
#include "util.h"

/*
 * May client s see and act on job j?  The control socket's clients may
 * (root or the r3q group: the socket's mode guards it); a TLS client only
 * on its own jobs.  Owners name how their client authenticated
 * (unix:NAME, tls:CN), so that a certificate's CN never passes for a
 * Unix user's name; another's job is "no such job", as one that is not.
 */
static int
control_may(const struct session *s, const struct job *j)
{
	return (s->s_admin || strcmp(s->s_owner, j->j_owner) == 0);
}

/* The job a request names, if s may see it; else refuse (NULL). */
static struct job *
control_job(struct session *s, uint64_t reqid, uint64_t id)
{
	struct job	*j;

	if ((j = job_find(id)) == NULL || !control_may(s, j)) {
		if (j != NULL)
			log_warnx("client %s (%s) asked for job %llu of %s: "
			    "refused", s->s_owner, s->s_addr,
			    (unsigned long long)id, j->j_owner);
		session_error_soft(s, reqid, "no such job %llu",
		    (unsigned long long)id);
		return (NULL);
	}
	return (j);
}

/* Send a job's whole state. */
static void
control_send_info(struct session *s, uint64_t reqid, const struct job *j)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__JobInfo	 info;

	job_info(j, &info, 1);
	env.id = reqid;
	env.body_case = R3Q__ENVELOPE__BODY_JOB_INFO;
	env.job_info = &info;
	session_send(s, &env);
	job_info_clear(&info);
}

/* Send one generation's report. */
static void
control_send_gen(struct session *s, uint64_t reqid, const struct job *j,
    const struct gen_report *g)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__GenReport	 r;

	job_gen_pb(j, g, &r);
	env.id = reqid;
	env.body_case = R3Q__ENVELOPE__BODY_GEN_REPORT;
	env.gen_report = &r;
	session_send(s, &env);
}

/*
 * Send s the reports of the generations of j it has not had yet; those
 * folded meanwhile (JOB_GENS_KEPT) only count in the totals.
 */
static void
control_send_gens(struct session *s, const struct job *j)
{
	if (s->s_watch_gen < j->j_nfolded)
		s->s_watch_gen = j->j_nfolded;
	for (; s->s_watch_gen < job_gens_done(j); s->s_watch_gen++)
		control_send_gen(s, s->s_watch_req, j,
		    &j->j_gens[s->s_watch_gen - j->j_nfolded]);
}

/*
 * The control side's own state: what it was given at start
 * (control_init()): the event base, and the configuration, which a
 * reload overwrites in place; and the control socket's listener.
 */
static struct {
	struct event_base		*base;
	const struct masterd_config	*conf;
	struct evconnlistener		*listener;
} ctl;

/*
 * The job layer marked work (job_mark()): frames to send before the
 * payloads they borrow go, the core's actions to carry out, and news for
 * the flush (control_tell(), a driver's d_flush), which must then come.
 */
static struct event	*ctl_more;	/* the drivers' next pass */

/* The loop's next pass: the drivers that asked go on (job_more()). */
static void
control_more(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	job_go_on();
	server_drain();
}

static void
control_wake(unsigned what)
{
	if (what & JOB_NEWS_FLUSH)
		server_flush();
	if (what & JOB_NEWS_DRAIN)
		server_drain();
	if (what & (JOB_NEWS_TELL | JOB_NEWS_STATUS | JOB_NEWS_CLIENTS))
		server_flush_later();
	if (what & JOB_NEWS_MORE) {
		if (ctl_more == NULL && (ctl_more = event_new(ctl.base, -1, 0,
		    control_more, NULL)) == NULL)
			fatal("%s: event_new", __func__);
		event_active(ctl_more, 0, 0);
	}
}

/*
 * Start the control side on base, under configuration c; its part in
 * running jobs: what the job layer marks.
 */
void
control_init(struct event_base *base, const struct masterd_config *c)
{
	ctl.base = base;
	ctl.conf = c;
	control_batch_init(base, c);
	job_wake_set(control_wake);
}

/* At exit: the control side's timers for the jobs. */
void
control_fini(void)
{
	if (ctl_more != NULL)
		event_free(ctl_more);
	ctl_more = NULL;
	control_batch_close();
}

/*
 * At the flush, once the workers' frames have gone: the payloads built
 * for them can go, and the job layer's news is told.  A generation's
 * report waits for this, once the next generation's tasks have gone to
 * the workers: a report to a client waits for the journal's commit, and
 * the commit, at a generation's end, would sit between its last result
 * and the next generation's first Assign.  A job's end goes to those who
 * follow it after the reports they have not had.
 */
void
control_tell(void)
{
	struct session	*s;
	struct job	*j;
	unsigned	 n;

	job_scratch_reset(0);
	if ((n = job_news_take()) == 0)
		return;
	if (n & JOB_NEWS_TELL) {
		for (s = session_first(); s != NULL; s = session_next(s)) {
			if (s->s_role != ROLE_CLIENT || s->s_watch == 0 ||
			    (j = job_find(s->s_watch)) == NULL)
				continue;
			control_send_gens(s, j);
			if (j->j_state != JOB_RUNNING) {
				control_send_info(s, s->s_watch_req, j);
				s->s_watch = 0;
			}
		}
	}
	if (n & JOB_NEWS_STATUS)
		masterd_status();
}

/* r3qctl jobs. */
static void
control_list_jobs(struct session *s, uint64_t reqid)
{
	Envelope	  env = R3Q__ENVELOPE__INIT;
	R3q__JobList	  list = R3Q__JOB_LIST__INIT;
	R3q__JobInfo	 *infos, **ptrs;
	struct job	 *j;
	size_t		  n = 0, i;

	for (j = job_first(); j != NULL; j = job_next(j))
		n++;
	infos = xcalloc(n + 1, sizeof(*infos));
	ptrs = xcalloc(n + 1, sizeof(*ptrs));
	i = 0;
	for (j = job_first(); j != NULL; j = job_next(j)) {
		if (!control_may(s, j))
			continue;
		job_info(j, &infos[i], 0);
		ptrs[i] = &infos[i];
		i++;
	}
	n = i;
	list.n_jobs = n;
	list.jobs = ptrs;
	env.id = reqid;
	env.body_case = R3Q__ENVELOPE__BODY_JOB_LIST;
	env.job_list = &list;
	session_send(s, &env);
	for (i = 0; i < n; i++)
		job_info_clear(&infos[i]);
	free(infos);
	free(ptrs);
}

/* r3qctl workers. */
/*
 * A worker's health as relative suspect detection sees it: ok, suspect
 * (a task of it stood still while another worker did a whole one), or
 * cooling (suspect too often: no new tasks for a while), and why.
 */
static void
control_worker_health(const struct worker *w, R3q__WorkerInfo *wi,
    char *why, size_t len)
{
	struct sched_fault_info	 fi;
	uint64_t		 now = mono_ns();

	why[0] = '\0';
	wi->state = (char *)(uintptr_t)"ok";
	wi->why = why;
	if (dispatch_worker_fault(w, &fi) == -1)
		return;
	if (w->w_draining) {
		wi->draining = 1;
		wi->state = (char *)(uintptr_t)"draining";
		snprintf(why, len, "%s", STR_OR_EMPTY(w->w_drain_why));
	}
	wi->suspects = fi.suspects;
	wi->suspects_recent = fi.recent;
	if (fi.cooldown_until != 0) {
		wi->state = (char *)(uintptr_t)"cooling";
		wi->cooldown_ms = fi.cooldown_until > now ?
		    (fi.cooldown_until - now) / NS_PER_MS : 0;
		snprintf(why, len, "suspect %u times within %llus "
		    "(suspect_limit %u): no new tasks for %llus more; last: "
		    "%s", fi.recent, (unsigned long long)
		    (ctl.conf->suspect_window / 1000), ctl.conf->suspect_limit,
		    (unsigned long long)(wi->cooldown_ms + 999) / 1000,
		    STR_OR_EMPTY(w->w_why));
	} else if (fi.suspect_copies > 0 && !w->w_draining) {
		wi->state = (char *)(uintptr_t)"suspect";
		snprintf(why, len, "%u of its tasks run elsewhere too: %s",
		    fi.suspect_copies, STR_OR_EMPTY(w->w_why));
	}
}

static void
control_list_workers(struct session *s, uint64_t reqid)
{
	Envelope		  env = R3Q__ENVELOPE__INIT;
	R3q__WorkerList		  list = R3Q__WORKER_LIST__INIT;
	R3q__WorkerInfo		 *infos, **ptrs;
	struct sched_estimate	  est;
	struct worker		 *w;
	char			**names, (*whys)[384];
	size_t			  nk = 0, k, n = 0, off = 0;
	uint32_t		  i;

	i = 0;
	while ((w = worker_next(&i)) != NULL)
		nk += w->w_nkinds;
	infos = xcalloc(worker_count() + 1, sizeof(*infos));
	whys = xcalloc(worker_count() + 1, sizeof(*whys));
	ptrs = xcalloc(worker_count() + 1, sizeof(*ptrs));
	names = xcalloc(nk + 1, sizeof(*names));
	i = 0;
	while ((w = worker_next(&i)) != NULL) {
		r3q__worker_info__init(&infos[n]);
		infos[n].id = w->w_id;
		infos[n].name = w->w_name;
		infos[n].address = w->w_session->s_addr;
		infos[n].via = (char *)(uintptr_t)STR_OR_EMPTY(
		    w->w_session->s_via);
		infos[n].unavailable = w->w_unavail;
		infos[n].n_unavailable = w->w_nunavail;
		infos[n].peer_addr = (char *)(uintptr_t)STR_OR_EMPTY(
		    w->w_peer_addr);
		infos[n].cpus = w->w_cpus;
		infos[n].kinds = names + off;
		for (k = 0; k < w->w_nkinds; k++)
			names[off++] = (char *)(uintptr_t)kind_name(
			    w->w_kinds[k]);
		infos[n].n_kinds = w->w_nkinds;
		dispatch_worker_load(w, &infos[n].held, &infos[n].running);
		if (dispatch_worker_estimate(w, &est) == 0) {
			infos[n].rtt_ns = est.rtt_ns;
			infos[n].task_ns = est.task_ns;
			infos[n].capacity = est.cap;
			infos[n].power = est.power;
		}
		/* The heartbeat's own count, per power_interval: shown only. */
		if (w->w_hb_interval > 0)
			infos[n].power_reported = (uint32_t)((uint64_t)
			    w->w_hb_finished * ctl.conf->power_interval /
			    w->w_hb_interval);
		infos[n].speed = w->w_speed;
		infos[n].last_heartbeat_ms = w->w_last_hb ? (mono_ns() -
		    w->w_last_hb) / NS_PER_MS : UINT64_MAX;
		infos[n].done = w->w_done;
		infos[n].since_unix = w->w_since;
		infos[n].cert_not_after = (uint64_t)w->w_session->s_not_after;
		control_worker_health(w, &infos[n], whys[n], sizeof(whys[n]));
		ptrs[n] = &infos[n];
		n++;
	}
	list.n_workers = n;
	list.workers = ptrs;
	env.id = reqid;
	env.body_case = R3Q__ENVELOPE__BODY_WORKER_LIST;
	env.worker_list = &list;
	session_send(s, &env);
	free(names);
	free(infos);
	free(whys);
	free(ptrs);
}

/*
 * r3qctl drain NAME: an operator's request, so only on the
 * control socket.  The answer is the worker as it is now, draining.
 */
static void
control_drain_worker(struct session *s, uint64_t reqid, const char *name)
{
	Envelope		 env = R3Q__ENVELOPE__INIT;
	R3q__WorkerDraining	 wd = R3Q__WORKER_DRAINING__INIT;
	R3q__WorkerInfo		 wi = R3Q__WORKER_INFO__INIT;
	struct worker		*w = NULL;
	char			 by[160], vis[128], why[384];
	uint32_t		 i;

	str_vis(vis, sizeof(vis), name);
	if (!s->s_admin) {
		session_error_soft(s, reqid, "cannot drain worker %s: only an "
		    "operator on the control socket may", vis);
		return;
	}
	i = 0;
	while ((w = worker_next(&i)) != NULL)
		if (strcmp(w->w_name, name) == 0)
			break;
	if (w == NULL) {
		session_error_soft(s, reqid, "no worker named '%s' is "
		    "connected", vis);
		return;
	}
	snprintf(by, sizeof(by), "%s (%s)", s->s_owner, s->s_addr);
	if (server_drain_worker(w, by) == -1)
		log_debug("worker %s: drain asked again by %s", w->w_name, by);
	wi.id = w->w_id;
	wi.name = w->w_name;
	wi.address = w->w_session->s_addr;
	wi.cpus = w->w_cpus;
	wi.done = w->w_done;
	wi.since_unix = w->w_since;
	wi.speed = w->w_speed;
	dispatch_worker_load(w, &wi.held, &wi.running);
	control_worker_health(w, &wi, why, sizeof(why));
	wd.worker = &wi;
	env.id = reqid;
	env.body_case = R3Q__ENVELOPE__BODY_WORKER_DRAINING;
	env.worker_draining = &wd;
	session_send(s, &env);
}

/* Answer r3qctl report: a job and every execution of its tasks. */
static void
control_send_trace(struct session *s, uint64_t reqid, const struct job *j)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__JobTrace	 t;
	char		 err[512];
	size_t		 len;

	if (job_trace(j, &t, err, sizeof(err)) == -1) {
		session_error_soft(s, reqid, "%s", err);
		return;
	}
	env.id = reqid;
	env.body_case = R3Q__ENVELOPE__BODY_JOB_TRACE;
	env.job_trace = &t;
	if ((len = r3q__envelope__get_packed_size(&env)) > ctl.conf->max_frame)
		session_error_soft(s, reqid, "job %llu has %zu task executions, "
		    "%zu bytes: more than max_frame", (unsigned long long)
		    j->j_id, t.n_spans, len);
	else
		session_send(s, &env);
	job_trace_clear(&t);
}

/*
 * Does the request change what the journal holds?  While it cannot be
 * written those are refused (job_journal_stall()); a batch job's client
 * may still reattach and acknowledge what it has.
 */
static int
control_writes(const Envelope *env)
{
	if (job_driver_submits(env->body_case) != NULL)
		return (1);
	switch (env->body_case) {
	case R3Q__ENVELOPE__BODY_CANCEL_JOB:
	case R3Q__ENVELOPE__BODY_OPEN_JOB:
	case R3Q__ENVELOPE__BODY_SUBMIT_TASKS:
	case R3Q__ENVELOPE__BODY_CLOSE_BATCH:
	case R3Q__ENVELOPE__BODY_CANCEL_TASKS:
	case R3Q__ENVELOPE__BODY_CLOSE_JOB:
	case R3Q__ENVELOPE__BODY_TOKEN_CREATE:
	case R3Q__ENVELOPE__BODY_TOKEN_REVOKE:
		return (1);
	default:
		return (0);
	}
}

/*
 * A submission to driver drv: admitted (max_jobs, and the tasks of its
 * first batch), checked and started by the driver, journaled, answered
 * with its JobInfo.
 */
static void
control_submit(struct session *s, Envelope *env,
    const struct job_driver *drv)
{
	struct job	*j;
	char		 err[256];

	if (job_admit(s->s_owner, err, sizeof(err)) == -1 ||
	    (drv->d_first != NULL && job_admit_tasks(NULL, drv->d_first(env),
	    err, sizeof(err)) == -1) ||
	    (j = drv->d_submit(env, s->s_owner, err, sizeof(err))) == NULL) {
		session_error_soft(s, env->id, "%s", err);
		return;
	}
	snprintf(j->j_owner, sizeof(j->j_owner), "%s", s->s_owner);
	job_journal_put(j);
	log_info("job %llu (%s) submitted by %s (%s)%s%s",
	    (unsigned long long)j->j_id, drv->d_name, s->s_owner, s->s_addr,
	    j->j_name[0] != '\0' ? ": " : "", j->j_name);
	control_send_info(s, env->id, j);
	server_drain();
}

/* One request from a client. */
void
control_dispatch(struct session *s, Envelope *env)
{
	const struct job_driver	*drv;
	struct job		*j;

	if (s->s_refused) {
		session_refuse(s, env->id, "too many clients: %u connected "
		    "(max_clients); try again later", ctl.conf->max_clients);
		return;
	}
	if (job_journal_stalled() && control_writes(env)) {
		session_error_soft(s, env->id, "masterd cannot write its "
		    "journal (%s); try again once it can",
		    job_journal_stall_text());
		return;
	}
	if ((drv = job_driver_submits(env->body_case)) != NULL) {
		control_submit(s, env, drv);
		return;
	}
	switch (env->body_case) {
	case R3Q__ENVELOPE__BODY_JOB_QUERY:
		if ((j = control_job(s, env->id, env->job_query->job)) == NULL)
			break;
		if (!env->job_query->watch) {
			control_send_info(s, env->id, j);
			break;
		}
		s->s_watch_req = env->id;
		s->s_watch_gen = 0;
		control_send_gens(s, j);
		if (j->j_state != JOB_RUNNING)
			control_send_info(s, env->id, j);
		else
			s->s_watch = j->j_id;
		break;
	case R3Q__ENVELOPE__BODY_LIST_JOBS:
		control_list_jobs(s, env->id);
		break;
	case R3Q__ENVELOPE__BODY_LIST_WORKERS:
		control_list_workers(s, env->id);
		break;
	case R3Q__ENVELOPE__BODY_LINKS_REQUEST:
	case R3Q__ENVELOPE__BODY_EXCHANGE_REQUEST:
		exchange_control(s, env);
		break;
	case R3Q__ENVELOPE__BODY_CANCEL_JOB:
		if ((j = control_job(s, env->id, env->cancel_job->job)) == NULL)
			break;
		if (j->j_state != JOB_RUNNING) {
			session_error_soft(s, env->id, "job %llu has already "
			    "ended (%s)", (unsigned long long)j->j_id,
			    job_state_name(j->j_state));
			break;
		}
		job_cancel(j, "cancelled by a client");
		log_info("job %llu cancelled by %s (%s)",
		    (unsigned long long)j->j_id, s->s_owner, s->s_addr);
		control_send_info(s, env->id, j);
		server_drain();
		break;
	case R3Q__ENVELOPE__BODY_DRAIN_WORKER:
		control_drain_worker(s, env->id, env->drain_worker->name);
		break;
	case R3Q__ENVELOPE__BODY_JOB_TRACE_REQUEST:
		if ((j = control_job(s, env->id,
		    env->job_trace_request->job)) == NULL)
			break;
		control_send_trace(s, env->id, j);
		break;
	case R3Q__ENVELOPE__BODY_TOKEN_CREATE:
	case R3Q__ENVELOPE__BODY_TOKEN_LIST:
	case R3Q__ENVELOPE__BODY_TOKEN_REVOKE:
		tokens_control(s, env);
		break;
	default:
		/* A driver's own requests (the batch driver's). */
		job_batch_dispatch(s, env);
		break;
	}
}

/*
 * A request that is a driver's own (d_request): the batch driver's
 * OpenJob, SubmitTasks and the rest.  None takes it: the session closes.
 */
void
job_batch_dispatch(struct session *s, Envelope *env)
{
	const struct job_driver	*d;

	for (d = job_driver_next(NULL); d != NULL; d = job_driver_next(d))
		if (d->d_request != NULL && d->d_request(s, env) == 0)
			return;
	session_error(s, env->id, "unexpected %s message from a client",
	    frame_body_name(env));
}

/* Session s goes away: the drivers whose client it was wait for it. */
void
job_batch_detach(struct session *s)
{
	const struct job_driver	*d;

	for (d = job_driver_next(NULL); d != NULL; d = job_driver_next(d))
		if (d->d_detach != NULL)
			d->d_detach(s);
}

/* Is s a job's client (or waiting for a job to close)? */
int
job_batch_attached(const struct session *s)
{
	const struct job_driver	*d;

	for (d = job_driver_next(NULL); d != NULL; d = job_driver_next(d))
		if (d->d_attached != NULL && d->d_attached(s))
			return (1);
	return (0);
}

/* A paused client's output drained: the drivers send it more. */
void
job_batch_writable(struct session *s)
{
	const struct job_driver	*d;

	for (d = job_driver_next(NULL); d != NULL; d = job_driver_next(d))
		if (d->d_writable != NULL)
			d->d_writable(s);
}

/* The TaskPushes drivers asked for, to their workers' frames. */
void
job_batch_pushes(void)
{
	struct job_push		*p;
	struct worker		*w;
	size_t			 i, n;

	p = job_pushes(&n);
	for (i = 0; i < n; i++)
		if ((w = worker_get(p[i].p_wid)) != NULL &&
		    w->w_node == p[i].p_node)
			server_push(w, p[i].p_ids, p[i].p_n, p[i].p_bound,
			    p[i].p_donate, p[i].p_ndonate);
	job_pushes_clear();
}

/*
 * At the flush, after the journal's commit: the TaskPushes drivers asked
 * for (after the Assign being built, which the flush sends first), and
 * what drivers send their clients.
 */
void
job_batch_flush(void)
{
	const struct job_driver	*d;

	job_batch_pushes();
	for (d = job_driver_next(NULL); d != NULL; d = job_driver_next(d))
		if (d->d_flush != NULL)
			d->d_flush();
}

/* A connection on the control socket. */
static void
control_accept(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct bufferevent	*bev;
	struct session		*s;
	struct ucred		 uc;
	struct passwd		*pw;
	struct timeval		 tv = { 5, 0 };
	socklen_t		 len = sizeof(uc);

	(void)l;
	(void)sa;
	(void)salen;
	(void)arg;
	bev = bufferevent_socket_new(ctl.base, fd, BEV_OPT_CLOSE_ON_FREE |
	    BEV_OPT_DEFER_CALLBACKS);
	if (bev == NULL) {
		log_warnx("control: cannot create a bufferevent");
		evutil_closesocket(fd);
		return;
	}
	s = session_new(bev, "control", 0);
	/* Whoever could connect may see every job: the socket's mode. */
	s->s_admin = 1;
	/* Its owner is unix:NAME, never a bare name a CN could match. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) == 0) {
		if ((pw = getpwuid(uc.uid)) != NULL)
			snprintf(s->s_owner, sizeof(s->s_owner), "unix:%s",
			    pw->pw_name);
		else
			snprintf(s->s_owner, sizeof(s->s_owner), "unix:uid:%u",
			    (unsigned)uc.uid);
		snprintf(s->s_addr, sizeof(s->s_addr), "control, pid %d",
		    (int)uc.pid);
	} else
		snprintf(s->s_owner, sizeof(s->s_owner), "unix:control");
	/*
	 * It counts itself among the clients.  Refused, it is told so in
	 * answer to its first request (closing before r3qctl has written it
	 * would leave r3qctl a broken pipe, not a reason), within 5 seconds.
	 */
	if (server_clients() > ctl.conf->max_clients) {
		server_refused(CAP_CLIENTS, s->s_owner, "%zu clients connected "
		    "(max_clients)", server_clients() - 1);
		s->s_refused = 1;
		bufferevent_set_timeouts(bev, &tv, NULL);
	}
}

/*
 * Bind the control socket, refusing to steal it from a masterd that is
 * still running; a stale socket file is replaced.
 */
int
control_listen(void)
{
	struct sockaddr_un	 sun;
	const char		*path = ctl.conf->control;
	mode_t			 old;
	int			 fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		log_warnx("control: path too long: %s", path);
		return (-1);
	}
	strcpy(sun.sun_path, path);
	/* Its directory (e.g. /run/r3q) if it does not exist. */
	masterd_mkparent(path, 0755, "control");
	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1) {
		log_warn("control: socket");
		return (-1);
	}
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0) {
		log_warnx("control: %s is in use: is another masterd "
		    "running?", path);
		close(fd);
		return (-1);
	}
	close(fd);
	if (unlink(path) == -1 && errno != ENOENT) {
		log_warn("control: unlink %s", path);
		return (-1);
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1) {
		log_warn("control: socket");
		return (-1);
	}
	old = umask(S_IXUSR | S_IXGRP | S_IRWXO);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		log_warn("control: bind %s", path);
		umask(old);
		close(fd);
		return (-1);
	}
	umask(old);
	ctl.listener = evconnlistener_new(ctl.base, control_accept, NULL,
	    LEV_OPT_CLOSE_ON_FREE, 16, fd);
	if (ctl.listener == NULL) {
		log_warn("control: listen %s", path);
		close(fd);
		return (-1);
	}
	evconnlistener_set_error_cb(ctl.listener, server_accept_error);
	return (0);
}

/* The listener's pause after accept() failed is over: accept again. */
void
control_listen_resume(void)
{
	if (ctl.listener != NULL)
		evconnlistener_enable(ctl.listener);
}

/* Close the control socket and remove its file. */
void
control_close(void)
{
	if (ctl.listener == NULL)
		return;
	evconnlistener_free(ctl.listener);
	ctl.listener = NULL;
	unlink(ctl.conf->control);
}

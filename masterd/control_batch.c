/*
 * The batch driver's client side: a client's requests (OpenJob,
 * SubmitTasks, CloseBatch, CancelTasks, AckResults, AttachJob, CloseJob),
 * the outcomes pushed to it in completion order, its BatchDones, and
 * client_timeout, one timer for every job that waits for its client.
 * The tasks and the outcomes kept for the client are the job side's
 * (job_batch.c); it marks what is to be sent, and bj_flush() sends it
 * at the flush, after the journal's commit.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "log.h"
#include "masterd.h"
#include "util.h"
#include "job_batch.h"

#define BJ_PUSH_MAX	1024	/* outcomes in one TaskResults */
#define BJ_PUSH_BYTES	(1U << 20)	/* ... and bytes, past the first */

/*
 * client_timeout: one timer, armed for the earliest deadline of the jobs
 * that wait for their client (bj_deadline), re-armed at each flush only
 * when that moved.  Owned by this file; made at the first need.
 */
static struct {
	struct event	*ct_ev;
	uint64_t	 ct_at;		/* mono ns it is armed for, 0: not */
} ct;

/*
 * What control_batch_init() was given: the event base, and the
 * configuration, which a reload overwrites in place.
 */
static struct event_base		*base;
static const struct masterd_config	*conf;

static void	bj_push(struct job *);
static void	bj_timer_arm(void);

/* Serve batch jobs' clients on base, under configuration c. */
void
control_batch_init(struct event_base *b, const struct masterd_config *c)
{
	base = b;
	conf = c;
}

/* May session s act on job j (its owner's, or an operator's)? */
static int
bj_may(const struct session *s, const struct job *j)
{
	return (s->s_admin || strcmp(s->s_owner, j->j_owner) == 0);
}

/* Answer with a JobOpened. */
static void
bj_send_opened(struct session *s, uint64_t reqid, struct job *j)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__JobOpened	 o = R3Q__JOB_OPENED__INIT;

	o.job = j->j_id;
	o.acked = BJ(j)->bj_acked;
	o.seq = j->j_seq;
	o.max_payload = conf->max_payload;
	o.max_tasks = conf->max_job_tasks;
	o.max_memory = conf->max_job_memory;
	o.state = (char *)(uintptr_t)job_state_name(j->j_state);
	env.id = reqid;
	env.body_case = R3Q__ENVELOPE__BODY_JOB_OPENED;
	env.job_opened = &o;
	session_send(s, &env);
}

/* Stop the client_timeout clock: a client is here. */
static void
bj_attach(struct job *j, struct session *s, uint64_t reqid, uint64_t acked)
{
	struct bjob	*bj = BJ(j);
	struct session	*o;

	if ((o = bj->bj_session) != NULL && o != s) {
		log_info("job %llu: client %s (%s) takes over from %s",
		    (unsigned long long)j->j_id, s->s_owner, s->s_addr,
		    o->s_addr);
		bj->bj_session = NULL;
	}
	bj->bj_deadline = 0;
	bj->bj_session = s;
	bj->bj_req = reqid;
	if (acked > j->j_seq)
		acked = j->j_seq;
	bj_ack(j, acked);
	bj->bj_sent = acked > bj->bj_acked ? acked : bj->bj_acked;
	bj_send_opened(s, reqid, j);
	bj->bj_dirty = 1;
}

/*
 * client_timeout passed without a client: a running job is cancelled (and
 * its outcomes wait one more client_timeout); an ended one lets go of the
 * outcomes it kept for the client, which stay in the journal.
 */
static void
bj_timeout(struct job *j)
{
	struct bjob	*bj = BJ(j);
	char		 why[128];
	uint64_t	 n;

	if (bj->bj_session != NULL)
		return;
	if (j->j_state != JOB_RUNNING) {
		if ((n = bj_let_go(j)) > 0)
			log_info("job %llu: no client came back for "
			    "client_timeout; %llu outcomes it did not "
			    "acknowledge leave memory",
			    (unsigned long long)j->j_id, (unsigned long long)n);
		return;
	}
	snprintf(why, sizeof(why), "its client stayed away longer than "
	    "client_timeout (%llus)", (unsigned long long)
	    (bj->bj_open.client_timeout_ms / 1000));
	log_warnx("job %llu cancelled: %s", (unsigned long long)j->j_id, why);
	job_cancel(j, why);
	bj_wait(j);
	server_drain();
}

/* The client_timeout timer: every job whose deadline passed. */
static void
bj_timeout_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct job	*j;
	uint64_t	 now = mono_ns();

	(void)fd;
	(void)ev;
	(void)arg;
	ct.ct_at = 0;
	for (j = job_first(); j != NULL; j = job_next(j)) {
		if (j->j_drv != &job_batch_driver || BJ(j) == NULL ||
		    BJ(j)->bj_deadline == 0 || BJ(j)->bj_deadline > now)
			continue;
		BJ(j)->bj_deadline = 0;
		bj_timeout(j);
	}
	bj_timer_arm();
}

/* Arm the timer for the earliest deadline, if that moved. */
static void
bj_timer_arm(void)
{
	struct job	*j;
	struct timeval	 tv;
	uint64_t	 at = 0, now, ns;

	for (j = job_first(); j != NULL; j = job_next(j))
		if (j->j_drv == &job_batch_driver && BJ(j) != NULL &&
		    BJ(j)->bj_deadline != 0 && (at == 0 ||
		    BJ(j)->bj_deadline < at))
			at = BJ(j)->bj_deadline;
	if (at == ct.ct_at)
		return;
	if (ct.ct_ev == NULL &&
	    (ct.ct_ev = evtimer_new(base, bj_timeout_cb, NULL)) == NULL)
		fatal("%s", __func__);
	ct.ct_at = at;
	if (at == 0) {
		evtimer_del(ct.ct_ev);
		return;
	}
	now = mono_ns();
	ns = at > now ? at - now : 0;
	tv.tv_sec = (time_t)(ns / NS_PER_SEC);
	tv.tv_usec = (suseconds_t)(ns % NS_PER_SEC / 1000);
	evtimer_add(ct.ct_ev, &tv);
}

/* A session goes away: its jobs wait for it for client_timeout. */
void
bj_session_gone(struct session *s)
{
	struct job	*j;

	for (j = job_first(); j != NULL; j = job_next(j))
		if (j->j_drv == &job_batch_driver) {
			if (BJ(j)->bj_session == s)
				bj_wait(j);
			if (BJ(j)->bj_close_s == s)
				BJ(j)->bj_close_s = NULL;
		}
}

/* Is s a batch job's client, or waiting for one to close? */
int
bj_attached(const struct session *s)
{
	struct job	*j;

	for (j = job_first(); j != NULL; j = job_next(j))
		if (j->j_drv == &job_batch_driver &&
		    (BJ(j)->bj_session == s || BJ(j)->bj_close_s == s))
			return (1);
	return (0);
}

/* OpenJob: a new batch job, owned by the session's client. */
static void
bj_open(struct session *s, uint64_t reqid, const R3q__OpenJob *o)
{
	struct job	*j;
	char		 err[256];

	if (job_admit(s->s_owner, err, sizeof(err)) == -1 ||
	    (j = bj_new(o, s->s_owner, err, sizeof(err))) == NULL) {
		session_error_soft(s, reqid, "%s", err);
		return;
	}
	log_info("batch job %llu '%s' opened by %s (%s)",
	    (unsigned long long)j->j_id, j->j_name, s->s_owner, s->s_addr);
	bj_attach(j, s, reqid, 0);
}

/* The job a client request names, if it may; NULL (refused) if not. */
static struct job *
bj_job(struct session *s, uint64_t reqid, uint64_t id, int running)
{
	struct job	*j;

	/* Another's job is no such job, as control_job() says: not even
	   its driver is told. */
	if ((j = job_find(id)) == NULL || !bj_may(s, j)) {
		if (j != NULL)
			log_warnx("client %s (%s) asked for job %llu of %s: "
			    "refused", s->s_owner, s->s_addr,
			    (unsigned long long)id, j->j_owner);
		session_error_soft(s, reqid, "no such job %llu",
		    (unsigned long long)id);
		return (NULL);
	}
	if (j->j_drv != &job_batch_driver) {
		session_error_soft(s, reqid, "job %llu is an %s job, not a "
		    "batch job", (unsigned long long)id, j->j_drv->d_name);
		return (NULL);
	}
	if (running && (j->j_state != JOB_RUNNING || BJ(j)->bj_closing)) {
		session_error_soft(s, reqid, "job %llu is %s", (unsigned long
		    long)id, j->j_state != JOB_RUNNING ?
		    job_state_name(j->j_state) : "closed");
		return (NULL);
	}
	return (j);
}

/*
 * SubmitTasks: check every task before taking any (the frame is taken or
 * refused whole), skip keys the job has (a client resubmits after a
 * reconnect), and hand the rest to the core.
 */
static void
bj_submit(struct session *s, uint64_t reqid, const R3q__SubmitTasks *st)
{
	struct job		*j;
	struct job_batch	*b;
	struct u64map		 seen;
	R3q__TaskSpec		*ts;
	uint8_t			**pay, *isnew = NULL;
	uint64_t		*keys;
	uint32_t		*lens, *copies, kind;
	int32_t			*prios;
	size_t			 i, k, n = 0;
	uint64_t		 bytes;
	int			 known;
	char			 err[256];

	if ((j = bj_job(s, reqid, st->job, 1)) == NULL)
		return;
	if (st->batch == 0) {
		session_error_soft(s, reqid, "batch numbers start at 1");
		return;
	}
	if (kind_check(st->kind) == -1) {
		session_error_soft(s, reqid, "bad kind name '%.64s': a kind is "
		    "1 to %d printable characters", st->kind, KIND_NAME_MAX);
		return;
	}
	if (st->n_tasks > BJ_TASKS_MAX) {
		session_error_soft(s, reqid, "%zu tasks in one frame, more "
		    "than %d", st->n_tasks, BJ_TASKS_MAX);
		return;
	}
	u64map_init(&seen);
	isnew = xcalloc(st->n_tasks + 1, 1);
	for (i = 0; i < st->n_tasks; i++) {
		ts = st->tasks[i];
		if (ts->payload.len > conf->max_payload) {
			session_error_soft(s, reqid, "task %llu: payload of "
			    "%zu bytes is over max_payload (%llu)",
			    (unsigned long long)ts->key, ts->payload.len,
			    (unsigned long long)conf->max_payload);
			goto out;
		}
		if (ts->priority < INT32_MIN || ts->priority > INT32_MAX) {
			session_error_soft(s, reqid, "task %llu: priority %lld "
			    "is out of range (%d to %d)",
			    (unsigned long long)ts->key,
			    (long long)ts->priority, INT32_MIN, INT32_MAX);
			goto out;
		}
		if (ts->copies > SCHED_COPIES_MAX) {
			session_error_soft(s, reqid, "task %llu: copies %u is "
			    "out of range (1 to %d)",
			    (unsigned long long)ts->key, ts->copies,
			    SCHED_COPIES_MAX);
			goto out;
		}
		/*
		 * A key twice in one frame: only keys out of increasing order
		 * (libr3q's never are) need the set to tell.
		 */
		if (i > 0 && ts->key <= st->tasks[i - 1]->key) {
			if (seen.m_n == 0)
				for (k = 0; k < i; k++)
					if (u64map_put(&seen,
					    st->tasks[k]->key, 1) == -1)
						fatal("%s", __func__);
			if (u64map_get(&seen, ts->key, NULL)) {
				session_error_soft(s, reqid, "task key %llu "
				    "appears twice",
				    (unsigned long long)ts->key);
				goto out;
			}
		}
		if (seen.m_n > 0 && u64map_put(&seen, ts->key, 1) == -1)
			fatal("%s", __func__);
		if (!u64map_get(&BJ(j)->bj_keys, ts->key, NULL)) {
			isnew[i] = 1;
			n++;
		}
	}
	b = bj_batch(j, st->batch, &known);
	if (n == 0 && known) {
		/* All there already: a resubmission after a reconnect. */
		if (st->close && b != NULL)
			bj_batch_close(b);
		goto out;
	}
	if (known && (b == NULL || b->b_closed)) {
		session_error_soft(s, reqid, "batch %llu of job %llu is closed",
		    (unsigned long long)st->batch, (unsigned long long)j->j_id);
		goto out;
	}
	/* A new batch: max_batches_job and max_batches_client. */
	if (!known && job_admit_batch(j, err, sizeof(err)) == -1) {
		session_error_soft(s, reqid, "%s", err);
		goto out;
	}
	if (n == 0) {
		session_error_soft(s, reqid, "batch %llu of job %llu has no "
		    "tasks", (unsigned long long)st->batch,
		    (unsigned long long)j->j_id);
		goto out;
	}
	for (i = 0, bytes = 0; i < st->n_tasks; i++)
		if (isnew[i])
			bytes += st->tasks[i]->payload.len;
	if (job_admit_tasks(j, n, err, sizeof(err)) == -1 ||
	    job_admit_memory(j, NULL, bytes, err, sizeof(err)) == -1 ||
	    job_journal_admit(j, bytes, err, sizeof(err)) == -1) {
		session_error_soft(s, reqid, "%s", err);
		goto out;
	}
	if ((kind = kind_intern_client(st->kind, s->s_owner,
	    conf->max_client_kinds, err, sizeof(err))) == UINT32_MAX) {
		session_error_soft(s, reqid, "%s", err);
		goto out;
	}
	if (b != NULL && b->b_kind != kind) {
		session_error_soft(s, reqid, "batch %llu has kind %s, not %.64s",
		    (unsigned long long)st->batch, kind_name(b->b_kind),
		    st->kind);
		goto out;
	}
	if (b == NULL) {
		b = bj_batch_open(j, st->batch, kind);
		/* One this frame closes too is journaled once, closed. */
		if (!st->close)
			bj_batch_journal(b);
	}
	keys = xcalloc(n, sizeof(*keys));
	pay = xcalloc(n, sizeof(*pay));
	lens = xcalloc(n, sizeof(*lens));
	copies = xcalloc(n, sizeof(*copies));
	prios = xcalloc(n, sizeof(*prios));
	for (i = n = 0; i < st->n_tasks; i++) {
		ts = st->tasks[i];
		if (!isnew[i])
			continue;
		keys[n] = ts->key;
		/* An empty payload takes no memory. */
		pay[n] = NULL;
		if (ts->payload.len > 0) {
			pay[n] = xcalloc(1, ts->payload.len);
			memcpy(pay[n], ts->payload.data, ts->payload.len);
		}
		lens[n] = (uint32_t)ts->payload.len;
		prios[n] = (int32_t)ts->priority;
		copies[n] = ts->copies;
		n++;
	}
	bj_batch_add(b, keys, pay, lens, prios, copies, NULL, n, 1);
	if (st->close)
		bj_batch_close(b);
	free(keys);
	free(pay);
	free(lens);
	free(copies);
	free(prios);
	/* A kind every worker withdrew: these fail at once, with why. */
	job_kind_unavailable(kind);
	server_drain();
 out:
	free(isnew);
	u64map_free(&seen);
}

/* CancelTasks: each one still running ends as cancelled. */
static void
bj_cancel_tasks(struct session *s, uint64_t reqid, const R3q__CancelTasks *c)
{
	struct job	*j;

	if ((j = bj_job(s, reqid, c->job, 1)) == NULL)
		return;
	bj_cancel_keys(j, c->keys, c->n_keys);
	server_drain();
}

/* The job is over: answer a CloseJob with its JobInfo. */
static void
bj_closed(struct job *j)
{
	struct bjob	*bj = BJ(j);
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__JobInfo	 info;

	if (bj->bj_close_s == NULL)
		return;
	job_info(j, &info, 0);
	env.id = bj->bj_close_req;
	env.body_case = R3Q__ENVELOPE__BODY_JOB_INFO;
	env.job_info = &info;
	session_send(bj->bj_close_s, &env);
	job_info_clear(&info);
	bj->bj_close_s = NULL;
}

/* CloseJob: no more batches; the job ends once its tasks have. */
static void
bj_close_job(struct session *s, uint64_t reqid, const R3q__CloseJob *c)
{
	struct job	*j;

	if ((j = bj_job(s, reqid, c->job, 0)) == NULL)
		return;
	BJ(j)->bj_close_s = s;
	BJ(j)->bj_close_req = reqid;
	if (j->j_state != JOB_RUNNING) {
		bj_closed(j);
		return;
	}
	bj_close(j);
	server_drain();
}

/* The batch requests of a client; -1 if env is none of them. */
int
bj_request(struct session *s, Envelope *env)
{
	struct job	*j;

	switch (env->body_case) {
	case R3Q__ENVELOPE__BODY_OPEN_JOB:
		bj_open(s, env->id, env->open_job);
		break;
	case R3Q__ENVELOPE__BODY_SUBMIT_TASKS:
		bj_submit(s, env->id, env->submit_tasks);
		break;
	case R3Q__ENVELOPE__BODY_CLOSE_BATCH:
		if ((j = bj_job(s, env->id, env->close_batch->job, 0)) == NULL)
			break;
		{
			struct job_batch	*b;
			int			 known;

			b = bj_batch(j, env->close_batch->batch, &known);
			if (!known) {
				session_error_soft(s, env->id, "job %llu has "
				    "no batch %llu", (unsigned long long)j->j_id,
				    (unsigned long long)
				    env->close_batch->batch);
				break;
			}
			if (b != NULL)
				bj_batch_close(b);
		}
		server_drain();
		break;
	case R3Q__ENVELOPE__BODY_CANCEL_TASKS:
		bj_cancel_tasks(s, env->id, env->cancel_tasks);
		break;
	case R3Q__ENVELOPE__BODY_ACK_RESULTS:
		if ((j = bj_job(s, env->id, env->ack_results->job, 0)) == NULL)
			break;
		if (env->ack_results->seq > j->j_seq) {
			session_error_soft(s, env->id, "job %llu has %llu "
			    "results, not %llu", (unsigned long long)j->j_id,
			    (unsigned long long)j->j_seq,
			    (unsigned long long)env->ack_results->seq);
			break;
		}
		bj_ack(j, env->ack_results->seq);
		break;
	case R3Q__ENVELOPE__BODY_ATTACH_JOB:
		if ((j = bj_job(s, env->id, env->attach_job->job, 0)) == NULL)
			break;
		log_info("job %llu: client %s (%s) attached, acknowledged %llu",
		    (unsigned long long)j->j_id, s->s_owner, s->s_addr,
		    (unsigned long long)env->attach_job->acked);
		bj_attach(j, s, env->id, env->attach_job->acked);
		bj_push(j);
		break;
	case R3Q__ENVELOPE__BODY_CLOSE_JOB:
		bj_close_job(s, env->id, env->close_job);
		break;
	default:
		return (-1);
	}
	return (0);
}

/*
 * Send j's client the outcomes it has not had, in frames of up to
 * BJ_PUSH_MAX, while its output buffer is under client_buffer; past
 * that, stop reading from it until it drains (job_batch_writable()).
 */
static void
bj_push(struct job *j)
{
	struct bjob		*bj = BJ(j);
	struct session		*s = bj->bj_session;
	struct bj_result	*r;
	Envelope		 env = R3Q__ENVELOPE__INIT;
	R3q__TaskResults	 tr = R3Q__TASK_RESULTS__INIT;
	R3q__TaskOutcome	*ov = NULL, **op = NULL;
	size_t			 n, i, bytes, cap = 0;

	bj->bj_dirty = 0;
	if (s == NULL || s->s_closing)
		return;
	while (bj->bj_sent < j->j_seq) {
		if (evbuffer_get_length(bufferevent_get_output(s->s_bev)) >=
		    conf->client_buffer) {
			session_pause(s);
			break;
		}
		n = j->j_seq - bj->bj_sent;
		if (n > BJ_PUSH_MAX)
			n = BJ_PUSH_MAX;
		/* A frame of BJ_PUSH_BYTES at most, past its first outcome. */
		for (i = 0, bytes = 0; i < n && (i == 0 ||
		    bytes < BJ_PUSH_BYTES); i++)
			bytes += bj_res(j, bj->bj_sent + 1 + i)->r_len + 64;
		n = i;
		/*
		 * Arrays for this frame's outcomes, as big as it needs: most
		 * pushes carry a few, and BJ_PUSH_MAX of each, zeroed, was
		 * 100 KB a push.
		 */
		if (n > cap) {
			free(ov);
			free(op);
			ov = xcalloc(n, sizeof(*ov));
			op = xcalloc(n, sizeof(*op));
			cap = n;
		}
		for (i = 0; i < n; i++) {
			r = bj_res(j, bj->bj_sent + 1 + i);
			r3q__task_outcome__init(&ov[i]);
			ov[i].key = r->r_key;
			ov[i].seq = bj->bj_sent + 1 + i;
			ov[i].status = r->r_status;
			ov[i].output.data = r->r_out;
			ov[i].output.len = r->r_len;
			ov[i].error = r->r_error != NULL ? r->r_error :
			    (char *)(uintptr_t)"";
			ov[i].batch = r->r_batch;
			op[i] = &ov[i];
		}
		tr.job = j->j_id;
		tr.n_results = n;
		tr.results = op;
		env.id = bj->bj_req;
		env.body_case = R3Q__ENVELOPE__BODY_TASK_RESULTS;
		env.task_results = &tr;
		session_send(s, &env);
		bj->bj_sent += n;
	}
	free(ov);
	free(op);
}

/* The BatchDones the job side kept: after the outcomes they follow. */
static void
bj_send_done(struct job *j)
{
	struct bjob	*bj = BJ(j);
	struct session	*s = bj->bj_session;
	Envelope	 env;
	R3q__BatchDone	 bd;
	size_t		 i;

	if (s != NULL && !s->s_closing) {
		bj_push(j);
		for (i = 0; i < bj->bj_ndone; i++) {
			r3q__envelope__init(&env);
			r3q__batch_done__init(&bd);
			bd.job = j->j_id;
			bd.batch = bj->bj_done[i].d_batch;
			bd.report = &bj->bj_done[i].d_report;
			env.id = bj->bj_req;
			env.body_case = R3Q__ENVELOPE__BODY_BATCH_DONE;
			env.batch_done = &bd;
			session_send(s, &env);
		}
	}
	bj->bj_ndone = 0;
}

/*
 * At the flush, after the journal's commit: what the job side marked.
 * Each job's BatchDones (after its outcomes), an ended job's answer to
 * its CloseJob, the outcomes not pushed yet; then the timer for the
 * jobs that wait for their client.
 */
void
bj_flush(void)
{
	struct job	*j;
	struct bjob	*bj;

	for (j = job_first(); j != NULL; j = job_next(j)) {
		if (j->j_drv != &job_batch_driver || (bj = BJ(j)) == NULL)
			continue;
		if (bj->bj_ndone > 0)
			bj_send_done(j);
		if (bj->bj_close_s != NULL && j->j_state != JOB_RUNNING)
			bj_closed(j);
		if (bj->bj_dirty)
			bj_push(j);
	}
	bj_timer_arm();
}

/* A paused client's output drained: push more, read again. */
void
bj_writable(struct session *s)
{
	struct job	*j;

	for (j = job_first(); j != NULL; j = job_next(j))
		if (j->j_drv == &job_batch_driver && BJ(j)->bj_session == s)
			bj_push(j);
}

/* At exit: the client_timeout timer goes. */
void
control_batch_close(void)
{
	if (ct.ct_ev != NULL)
		event_free(ct.ct_ev);
	memset(&ct, 0, sizeof(ct));
}

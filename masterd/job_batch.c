/*
 * The batch job driver: a client's own tasks (libr3q, r3qctl map).  A
 * client opens a job, submits tasks into batches it numbers, closes them,
 * and reads every task's outcome as it comes, in completion order, each
 * numbered (seq) and tagged with the client's key.  It acknowledges them;
 * until then they are kept (in memory and in the journal), so a client
 * that reconnects and reattaches gets again exactly those it has not
 * acknowledged.  A job without its client for client_timeout is cancelled.
 *
 * Several jobs share the workers through the core: a worker takes the
 * task of lowest priority among the batches of kinds it offers, and equal
 * priorities run in submission order, whichever job they belong to.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "journal.h"
#include "log.h"
#include "masterd.h"
#include "task/task.h"
#include "util.h"

#define BJ_PUSH_MAX	1024	/* outcomes in one TaskResults */
#define BJ_PUSH_BYTES	(1U << 20)	/* ... and bytes, past the first */

/* One outcome not yet acknowledged. */
struct bj_result {
	uint64_t	 r_key;
	uint64_t	 r_batch;	/* the client's number */
	uint32_t	 r_status;
	uint8_t		*r_out;
	size_t		 r_len;
	char		*r_error;
};

/* The driver's state of a job. */
struct bjob {
	R3q__OpenJob	 bj_open;	/* as opened, defaults settled */
	struct u64map	 bj_keys;	/* key -> gen << 32 | idx */
	struct u64map	 bj_batches;	/* client number -> gen + 1 */
	struct session	*bj_session;	/* attached client, or NULL */
	uint64_t	 bj_req;	/* its request id, for pushes */
	uint64_t	 bj_acked;	/* outcomes acknowledged */
	uint64_t	 bj_sent;	/* outcomes sent to this session */
	struct bj_result *bj_res;	/* ring: seq acked + 1 .. j_seq */
	size_t		 bj_rhead, bj_rcap;
	int		 bj_closing;	/* CloseJob came */
	uint64_t	 bj_close_req;
	struct session	*bj_close_s;
	struct event	*bj_timeout;	/* client_timeout */
	int		 bj_dirty;	/* outcomes to push */
};

/* A batch's tasks, by index. */
struct bj_batch {
	uint8_t		**bb_payload;	/* NULL once over */
	uint32_t	 *bb_len;
	uint64_t	 *bb_key;
	uint8_t		 *bb_over;
	size_t		  bb_cap;
};

#define BJ(j)	((struct bjob *)(j)->j_ds)

static void	bj_push(struct job *);

/* May session s act on job j? */
static int
bj_may(const struct session *s, const struct job *j)
{
	return (s->s_admin || strcmp(s->s_owner, j->j_owner) == 0);
}

/* The outcome of seq (acked < seq <= j_seq). */
static struct bj_result *
bj_res(struct job *j, uint64_t seq)
{
	struct bjob	*bj = BJ(j);

	return (&bj->bj_res[(bj->bj_rhead + (seq - bj->bj_acked - 1)) %
	    bj->bj_rcap]);
}

/* Make room in the ring for the outcomes up to seq. */
static void
bj_res_grow(struct job *j, uint64_t seq)
{
	struct bjob		*bj = BJ(j);
	struct bj_result	*nr;
	size_t			 n = seq - bj->bj_acked, i, cap;

	if (n <= bj->bj_rcap)
		return;
	for (cap = bj->bj_rcap ? bj->bj_rcap * 2 : 256; cap < n; cap *= 2)
		;
	nr = xcalloc(cap, sizeof(*nr));
	/* Every slot keeps its distance from the head. */
	for (i = 0; i < bj->bj_rcap; i++)
		nr[i] = bj->bj_res[(bj->bj_rhead + i) % bj->bj_rcap];
	free(bj->bj_res);
	bj->bj_res = nr;
	bj->bj_rcap = cap;
	bj->bj_rhead = 0;
}

/* The bytes an outcome holds (j_held, max_job_memory). */
static uint64_t
bj_res_bytes(const struct bj_result *r)
{
	return ((uint64_t)r->r_len +
	    (r->r_error != NULL ? strlen(r->r_error) : 0));
}

/* Empty the slot r of the ring: its bytes leave memory. */
static void
bj_res_clear(struct job *j, struct bj_result *r)
{
	j->j_held -= bj_res_bytes(r);
	free(r->r_out);
	free(r->r_error);
	memset(r, 0, sizeof(*r));
}

/*
 * Make *from the outcome of seq, taking its strings (from keeps none); one
 * already there (a damaged journal's second result of a task) is freed.
 */
static struct bj_result *
bj_res_put(struct job *j, uint64_t seq, struct bj_result *from)
{
	struct bj_result	*r;

	bj_res_grow(j, seq);
	r = bj_res(j, seq);
	bj_res_clear(j, r);
	*r = *from;
	from->r_out = NULL;
	from->r_error = NULL;
	j->j_held += bj_res_bytes(r);	/* until acknowledged */
	return (r);
}

/* Free every outcome in the ring, whatever its number. */
static void
bj_res_drop(struct job *j)
{
	struct bjob		*bj = BJ(j);
	size_t			 i;

	for (i = 0; i < bj->bj_rcap; i++)
		bj_res_clear(j, &bj->bj_res[i]);
}

/* Forget the outcomes up to seq, and their keys. */
static void
bj_res_ack(struct job *j, uint64_t seq)
{
	struct bjob		*bj = BJ(j);
	struct bj_result	*r;

	if (seq > j->j_seq)
		seq = j->j_seq;
	if (bj->bj_rcap == 0)
		bj->bj_acked = seq > bj->bj_acked ? seq : bj->bj_acked;
	while (bj->bj_acked < seq) {
		r = &bj->bj_res[bj->bj_rhead];
		/*
		 * Its key is done with: the client has its outcome and will
		 * not send it again, so the job need not remember it.
		 */
		u64map_del(&bj->bj_keys, r->r_key, NULL);
		bj_res_clear(j, r);
		bj->bj_rhead = (bj->bj_rhead + 1) % bj->bj_rcap;
		bj->bj_acked++;
	}
	if (bj->bj_sent < bj->bj_acked)
		bj->bj_sent = bj->bj_acked;
}

/* The client's batch number n of j; NULL if none or forgotten. */
static struct job_batch *
bj_batch(struct job *j, uint64_t n, int *known)
{
	uint64_t	 v;

	*known = u64map_get(&BJ(j)->bj_batches, n, &v);
	if (!*known)
		return (NULL);
	return (job_batch_by_gen(j, (uint32_t)(v - 1)));
}

/* Room in b's arrays for n tasks. */
static struct bj_batch *
bj_batch_grow(struct job_batch *b, size_t n)
{
	struct bj_batch	*bb = b->b_ds;
	size_t		 cap;

	if (b->b_n + n <= bb->bb_cap)
		return (bb);
	for (cap = bb->bb_cap ? bb->bb_cap : 64; cap < b->b_n + n; cap *= 2)
		;
	if ((bb->bb_payload = reallocarray(bb->bb_payload, cap,
	    sizeof(*bb->bb_payload))) == NULL ||
	    (bb->bb_len = reallocarray(bb->bb_len, cap,
	    sizeof(*bb->bb_len))) == NULL ||
	    (bb->bb_key = reallocarray(bb->bb_key, cap,
	    sizeof(*bb->bb_key))) == NULL ||
	    (bb->bb_over = reallocarray(bb->bb_over, cap,
	    sizeof(*bb->bb_over))) == NULL)
		fatal("%s", __func__);
	bb->bb_cap = cap;
	return (bb);
}

/* Open the client's batch number n of kind; journaled. */
static struct job_batch *
bj_batch_open(struct job *j, uint64_t n, uint32_t kind)
{
	struct job_batch	*b;

	b = job_batch_open(j, kind, n);
	b->b_ds = xcalloc(1, sizeof(struct bj_batch));
	if (u64map_put(&BJ(j)->bj_batches, n, (uint64_t)b->b_gen + 1) == -1)
		fatal("%s", __func__);
	return (b);
}

/* Journal b's row (open or closed). */
static void
bj_batch_journal(const struct job_batch *b)
{
	struct journal_batch	 jb;

	if (md->journal == NULL)
		return;
	memset(&jb, 0, sizeof(jb));
	jb.job = b->b_job->j_id;
	jb.gen = b->b_gen;
	jb.client = b->b_client;
	jb.kind = kind_name(b->b_kind);
	jb.closed = b->b_closed;
	if (journal_batch_put(md->journal, &jb) == -1)
		job_journal_error();
}

/* Add tasks to b: indices b_n.., to the core unless over already. */
static void
bj_batch_add(struct job_batch *b, const uint64_t *keys, uint8_t **payloads,
    const uint32_t *lens, const int32_t *prios, const uint32_t *copies,
    const uint8_t *over, size_t n, int journal)
{
	struct bj_batch		*bb = bj_batch_grow(b, n);
	struct journal_task	*jt = NULL;
	struct sched_task	*t;
	struct job		*j = b->b_job;
	uint64_t		 first;
	size_t			 i, idx0 = b->b_n, nt = 0;

	first = job_batch_reserve(b, 0, n);
	t = xcalloc(n + 1, sizeof(*t));
	if (journal && md->journal != NULL)
		jt = xcalloc(n + 1, sizeof(*jt));
	for (i = 0; i < n; i++) {
		bb->bb_payload[idx0 + i] = payloads[i];
		bb->bb_len[idx0 + i] = lens[i];
		bb->bb_key[idx0 + i] = keys[i];
		bb->bb_over[idx0 + i] = over != NULL && over[i];
		if (u64map_put(&BJ(j)->bj_keys, keys[i],
		    (uint64_t)b->b_gen << 32 | (idx0 + i)) == -1)
			fatal("%s", __func__);
		if (jt != NULL) {
			jt[i].job = j->j_id;
			jt[i].gen = b->b_gen;
			jt[i].idx = (uint32_t)(idx0 + i);
			jt[i].key = keys[i];
			jt[i].priority = prios[i];
			jt[i].copies = copies[i];
			jt[i].payload = payloads[i];
			jt[i].len = lens[i];
		}
		if (over != NULL && over[i]) {
			b->b_nover++;
			continue;
		}
		t[nt].id = first + i;
		t[nt].priority = prios[i];
		t[nt].copies = copies[i];
		nt++;
	}
	/* The frame's tasks are one row of the journal. */
	if (jt != NULL && journal_tasks_add(md->journal, jt, n) == -1)
		job_journal_error();
	free(jt);
	/* Those over already (a resumed job) need no payload. */
	for (i = 0; i < n; i++)
		if (over != NULL && over[i]) {
			free(payloads[i]);
			bb->bb_payload[idx0 + i] = NULL;
		} else if (payloads[i] != NULL)
			j->j_mem += lens[i];	/* max_job_memory */
	job_batch_submit(b, t, nt);
	free(t);
}

/* Close b: the core replicates its tail now, and ends it once over. */
static void
bj_batch_close(struct job_batch *b)
{
	if (b->b_closed)
		return;
	job_batch_close(b);
	bj_batch_journal(b);
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
	o.max_payload = md->conf.max_payload;
	o.max_tasks = md->conf.max_job_tasks;
	o.max_memory = md->conf.max_job_memory;
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
	if (bj->bj_timeout != NULL)
		evtimer_del(bj->bj_timeout);
	bj->bj_session = s;
	bj->bj_req = reqid;
	if (acked > j->j_seq)
		acked = j->j_seq;
	if (acked > bj->bj_acked) {
		bj_res_ack(j, acked);
		job_journal_put(j);
	}
	bj->bj_sent = acked > bj->bj_acked ? acked : bj->bj_acked;
	bj_send_opened(s, reqid, j);
	bj->bj_dirty = 1;
}

static void	bj_detach(struct job *);

/*
 * client_timeout passed without a client: a running job is cancelled (and
 * its outcomes wait one more client_timeout); an ended one lets go of the
 * outcomes it kept for the client, which stay in the journal.
 */
static void
bj_timeout(evutil_socket_t fd, short ev, void *arg)
{
	struct job	*j = arg;
	struct bjob	*bj = BJ(j);
	char		 why[128];
	uint64_t	 n;

	(void)fd;
	(void)ev;
	if (bj->bj_session != NULL)
		return;
	if (j->j_state != JOB_RUNNING) {
		if ((n = j->j_seq - bj->bj_acked) == 0)
			return;
		bj_res_ack(j, j->j_seq);
		free(bj->bj_res);
		bj->bj_res = NULL;
		bj->bj_rcap = bj->bj_rhead = 0;
		/* Journaled: a restart must not bring them back. */
		job_journal_put(j);
		job_journal_commit();
		log_info("job %llu: no client came back for client_timeout; "
		    "%llu outcomes it did not acknowledge leave memory",
		    (unsigned long long)j->j_id, (unsigned long long)n);
		return;
	}
	snprintf(why, sizeof(why), "its client stayed away longer than "
	    "client_timeout (%llus)", (unsigned long long)
	    (bj->bj_open.client_timeout_ms / 1000));
	log_warnx("job %llu cancelled: %s", (unsigned long long)j->j_id, why);
	job_cancel(j, why);
	bj_detach(j);
	server_drain();
}

/*
 * The client left (or the job ended without it): start the client_timeout
 * clock, if there is anything to wait for.
 */
static void
bj_detach(struct job *j)
{
	struct bjob	*bj = BJ(j);
	struct timeval	 tv;
	uint64_t	 ms = bj->bj_open.client_timeout_ms;

	bj->bj_session = NULL;
	if (j->j_state != JOB_RUNNING && j->j_seq == bj->bj_acked)
		return;
	if (bj->bj_timeout == NULL &&
	    (bj->bj_timeout = evtimer_new(md->base, bj_timeout, j)) == NULL)
		fatal("%s", __func__);
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(bj->bj_timeout, &tv);
}

/* A session goes away: its jobs wait for it for client_timeout. */
static void
bj_session_gone(struct session *s)
{
	struct job	*j;

	TAILQ_FOREACH(j, &md->jobs, j_entry)
		if (j->j_drv == &job_batch_driver) {
			if (BJ(j)->bj_session == s)
				bj_detach(j);
			if (BJ(j)->bj_close_s == s)
				BJ(j)->bj_close_s = NULL;
		}
}

/* Is s a batch job's client, or waiting for one to close? */
static int
bj_attached(const struct session *s)
{
	struct job	*j;

	TAILQ_FOREACH(j, &md->jobs, j_entry)
		if (j->j_drv == &job_batch_driver &&
		    (BJ(j)->bj_session == s || BJ(j)->bj_close_s == s))
			return (1);
	return (0);
}

/* A job's settings from an OpenJob; -1 with a message. */
static int
bj_settings(const R3q__OpenJob *o, R3q__OpenJob *set, struct job_sched *js,
    char *err, size_t errlen)
{
	job_sched_default(js);
	if (job_sched_parse(js, o->policy, o->queue_factor, o->balance,
	    o->verify, err, errlen) == -1)
		return (-1);
	if (o->max_attempts > 1000 || o->max_kills > 1000) {
		snprintf(err, errlen, "max_attempts and max_kills must be at "
		    "most 1000");
		return (-1);
	}
	r3q__open_job__init(set);
	set->name = xstrdup(o->name != NULL ? o->name : "");
	if (strlen(set->name) >= 64)
		set->name[63] = '\0';
	set->policy = xstrdup(sched_policy_name(js->js_policy));
	set->balance = xstrdup(sched_balance_name(js->js_balance));
	set->queue_factor = js->js_qf;
	set->max_attempts = o->max_attempts ? o->max_attempts :
	    md->conf.max_attempts;
	set->max_kills = o->max_kills ? o->max_kills : md->conf.max_kills;
	set->verify = js->js_verify;
	set->client_timeout_ms = o->client_timeout_ms ? o->client_timeout_ms :
	    (uint32_t)(md->conf.client_timeout > UINT32_MAX ? UINT32_MAX :
	    md->conf.client_timeout);
	return (0);
}

/* OpenJob: a new batch job, owned by the session's client. */
static void
bj_open(struct session *s, uint64_t reqid, const R3q__OpenJob *o)
{
	struct job		*j;
	struct bjob		*bj;
	struct job_sched	 js;
	char			 err[256];

	if (job_admit(s->s_owner, err, sizeof(err)) == -1) {
		session_error_soft(s, reqid, "%s", err);
		return;
	}
	bj = xcalloc(1, sizeof(*bj));
	if (bj_settings(o, &bj->bj_open, &js, err, sizeof(err)) == -1) {
		free(bj);
		session_error_soft(s, reqid, "%s", err);
		return;
	}
	j = job_new(&job_batch_driver, &js);
	j->j_ds = bj;
	str_vis(j->j_name, sizeof(j->j_name), bj->bj_open.name);
	snprintf(j->j_owner, sizeof(j->j_owner), "%s", s->s_owner);
	job_journal_put(j);
	log_info("batch job %llu '%s' opened by %s (%s)",
	    (unsigned long long)j->j_id, j->j_name, s->s_owner, s->s_addr);
	bj_attach(j, s, reqid, 0);
	masterd_status();
}

/* The job a client request names, if it may; NULL (refused) if not. */
static struct job *
bj_job(struct session *s, uint64_t reqid, uint64_t id, int running)
{
	struct job	*j;

	if ((j = job_find(id)) == NULL) {
		session_error_soft(s, reqid, "no such job %llu",
		    (unsigned long long)id);
		return (NULL);
	}
	if (j->j_drv != &job_batch_driver) {
		session_error_soft(s, reqid, "job %llu is an %s job, not a "
		    "batch job", (unsigned long long)id, j->j_drv->d_name);
		return (NULL);
	}
	if (!bj_may(s, j)) {
		log_warnx("client %s (%s) asked for job %llu of %s: refused",
		    s->s_owner, s->s_addr, (unsigned long long)id, j->j_owner);
		session_error_soft(s, reqid, "job %llu belongs to %s, not to "
		    "%s", (unsigned long long)id, j->j_owner, s->s_owner);
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
		if (ts->payload.len > md->conf.max_payload) {
			session_error_soft(s, reqid, "task %llu: payload of "
			    "%zu bytes is over max_payload (%llu)",
			    (unsigned long long)ts->key, ts->payload.len,
			    (unsigned long long)md->conf.max_payload);
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
	    job_admit_memory(j, NULL, bytes, err, sizeof(err)) == -1) {
		session_error_soft(s, reqid, "%s", err);
		goto out;
	}
	if ((kind = kind_intern(st->kind)) == UINT32_MAX) {
		session_error_soft(s, reqid, "too many kinds");
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
	struct job		*j;
	struct job_batch	*b;
	struct bj_batch		*bb;
	uint64_t		 v;
	size_t			 i, idx;

	if ((j = bj_job(s, reqid, c->job, 1)) == NULL)
		return;
	for (i = 0; i < c->n_keys; i++) {
		if (!u64map_get(&BJ(j)->bj_keys, c->keys[i], &v))
			continue;
		if ((b = job_batch_by_gen(j, (uint32_t)(v >> 32))) == NULL ||
		    !b->b_live)
			continue;
		idx = (size_t)(v & 0xffffffffu);
		bb = b->b_ds;
		if (bb->bb_over[idx])
			continue;
		(void)sched_task_cancel(md->sched, job_task_id(b, idx),
		    mono_ns());
		job_outcome(b, idx, OUTCOME_CANCELLED, "cancelled by the "
		    "client");
	}
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
	struct job		*j;
	struct job_batch	*b;

	if ((j = bj_job(s, reqid, c->job, 0)) == NULL)
		return;
	BJ(j)->bj_close_s = s;
	BJ(j)->bj_close_req = reqid;
	if (j->j_state != JOB_RUNNING) {
		bj_closed(j);
		return;
	}
	BJ(j)->bj_closing = 1;
	TAILQ_FOREACH(b, &j->j_batches, b_entry)
		if (b->b_live)
			bj_batch_close(b);
	if (j->j_nlive == 0)
		job_end(j, JOB_DONE);
	server_drain();
}

/* The batch requests of a client; -1 if env is none of them. */
static int
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
		if (env->ack_results->seq > BJ(j)->bj_acked) {
			bj_res_ack(j, env->ack_results->seq);
			job_journal_put(j);
		}
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
		    md->conf.client_buffer) {
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

/* After the journal's commit: push what is new to each job's client. */
static void
bj_flush(void)
{
	struct job	*j;

	TAILQ_FOREACH(j, &md->jobs, j_entry)
		if (j->j_drv == &job_batch_driver && BJ(j)->bj_dirty)
			bj_push(j);
}

/* A paused client's output drained: push more, read again. */
static void
bj_writable(struct session *s)
{
	struct job	*j;

	TAILQ_FOREACH(j, &md->jobs, j_entry)
		if (j->j_drv == &job_batch_driver && BJ(j)->bj_session == s)
			bj_push(j);
}

static void
bj_task(struct job *j, struct job_batch *b, size_t idx, R3q__Task *t)
{
	struct bj_batch	*bb = b->b_ds;

	(void)j;
	t->payload.len = bb->bb_len[idx];
	t->payload.data = bb->bb_payload[idx];
}

/* Task idx of b ended: keep its outcome for the client, numbered seq. */
static void
bj_result(struct job *j, struct job_batch *b, size_t idx, uint64_t seq,
    uint32_t st, const void *out, size_t len, const char *why)
{
	struct bjob		*bj = BJ(j);
	struct bj_batch		*bb = b->b_ds;
	struct bj_result	 r;

	bb->bb_over[idx] = 1;
	if (bb->bb_payload[idx] != NULL)
		j->j_mem -= bb->bb_len[idx];
	free(bb->bb_payload[idx]);
	bb->bb_payload[idx] = NULL;
	if (seq <= bj->bj_acked)
		return;		/* replayed from the journal, acknowledged */
	memset(&r, 0, sizeof(r));
	r.r_key = bb->bb_key[idx];
	r.r_batch = b->b_client;
	r.r_status = st;
	r.r_len = len;
	if (len > 0) {
		r.r_out = xcalloc(1, len);
		memcpy(r.r_out, out, len);
	}
	r.r_error = why != NULL && why[0] != '\0' ? xstrdup(why) : NULL;
	bj_res_put(j, seq, &r);
	bj->bj_dirty = 1;
}

/* A closed batch is over: tell the client, with its figures. */
static void
bj_batch_done(struct job *j, struct job_batch *b, struct gen_report *g)
{
	struct session	*s = BJ(j)->bj_session;
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__BatchDone	 bd = R3Q__BATCH_DONE__INIT;
	R3q__GenReport	 r;

	g->g_best = 0;
	if (s == NULL || s->s_closing)
		return;
	job_gen_pb(j, g, &r);
	r.best = 0;
	bd.job = j->j_id;
	bd.batch = b->b_client;
	bd.report = &r;
	/* After the outcomes of its tasks. */
	bj_push(j);
	env.id = BJ(j)->bj_req;
	env.body_case = R3Q__ENVELOPE__BODY_BATCH_DONE;
	env.batch_done = &bd;
	session_send(s, &env);
}

/* A closing job whose last batch is over ends. */
static void
bj_next(struct job *j, struct job_batch *b)
{
	(void)b;
	if (j->j_state == JOB_RUNNING && BJ(j)->bj_closing && j->j_nlive == 0)
		job_end(j, JOB_DONE);
}

static void
bj_info(const struct job *j, R3q__JobInfo *info, int full)
{
	const struct job_batch	*b;

	(void)full;
	TAILQ_FOREACH(b, &j->j_batches, b_entry)
		info->tasks_submitted += b->b_n;
	info->tasks_cancelled = j->j_seq - j->j_done - j->j_failed;
}

static uint8_t *
bj_pack(const struct job *j, size_t *len)
{
	uint8_t	*p;

	*len = r3q__open_job__get_packed_size(&BJ(j)->bj_open);
	p = xcalloc(1, *len + 1);
	r3q__open_job__pack(&BJ(j)->bj_open, p);
	return (p);
}

static void
bj_state(const struct job *j, R3q__JobState *st)
{
	st->acked = BJ(j)->bj_acked;
}

/*
 * The job ends: every task still out ends as cancelled (so each key the
 * client gave gets its one outcome), the client hears of the end, and the
 * payloads go.  The outcomes stay until acknowledged or the job is
 * trimmed.
 */
static void
bj_end(struct job *j)
{
	struct bjob		*bj = BJ(j);
	struct job_batch	*b;
	struct bj_batch		*bb;
	size_t			 i;

	if (bj->bj_timeout != NULL)
		evtimer_del(bj->bj_timeout);
	TAILQ_FOREACH(b, &j->j_batches, b_entry) {
		if (!b->b_live)
			continue;
		bb = b->b_ds;
		for (i = 0; i < b->b_n; i++)
			if (!bb->bb_over[i])
				job_outcome(b, i, OUTCOME_CANCELLED,
				    j->j_error[0] ? j->j_error :
				    "the job was cancelled");
	}
	bj->bj_dirty = 1;
	bj_closed(j);
	/* Without a client, its outcomes wait client_timeout for one. */
	if (bj->bj_session == NULL)
		bj_detach(j);
}

static void
bj_batch_free(struct job *j, struct job_batch *b)
{
	struct bj_batch	*bb = b->b_ds;
	size_t		 i;

	(void)j;
	if (bb == NULL)
		return;
	for (i = 0; i < b->b_n; i++)
		free(bb->bb_payload[i]);
	free(bb->bb_payload);
	free(bb->bb_len);
	free(bb->bb_key);
	free(bb->bb_over);
	free(bb);
	b->b_ds = NULL;
}

static void
bj_free(struct job *j)
{
	struct bjob	*bj = BJ(j);

	if (bj == NULL)
		return;
	bj_res_ack(j, j->j_seq);
	free(bj->bj_res);
	u64map_free(&bj->bj_keys);
	u64map_free(&bj->bj_batches);
	if (bj->bj_timeout != NULL)
		event_free(bj->bj_timeout);
	/* A job whose parameters could not load has the init's strings. */
	if (bj->bj_open.name != protobuf_c_empty_string)
		free(bj->bj_open.name);
	if (bj->bj_open.policy != protobuf_c_empty_string)
		free(bj->bj_open.policy);
	if (bj->bj_open.balance != protobuf_c_empty_string)
		free(bj->bj_open.balance);
	free(bj);
	j->j_ds = NULL;
}

/* Loading a batch job from the journal. */
struct bj_load {
	struct job	*l_job;
	uint32_t	 l_gen;		/* tasks of this batch ... */
	uint64_t	*l_keys;	/* ... gathered */
	uint8_t		**l_pay;
	uint32_t	*l_lens;
	int32_t		*l_prios;
	uint32_t	*l_copies;
	uint8_t		*l_over;
	size_t		 l_n, l_cap;
	struct u64map	 l_ended;	/* gen << 32 | idx -> 1 */
	struct bj_result *l_res;	/* outcomes after acked, by seq */
	size_t		 l_nres;
	uint64_t	 l_acked;
	uint64_t	 l_maxseq;	/* of every outcome journaled */
	uint64_t	 l_done, l_failed;
	int		 l_bad;
	uint32_t	 l_badcopies;	/* a damaged task row's copies */
	/*
	 * An ended job (bj_load_ended): its tasks' keys and its batches'
	 * client numbers only, none of it for the core.
	 */
	int		 l_ended_only;
	struct u64map	 l_tkeys;	/* gen << 32 | idx -> key */
	struct u64map	 l_clients;	/* gen -> the client's number */
};

static int
bj_load_result(void *arg, const struct journal_result *r)
{
	struct bj_load		*l = arg;
	struct bj_result	*br;

	if (u64map_put(&l->l_ended, (uint64_t)r->gen << 32 | r->idx,
	    r->seq) == -1)
		fatal("%s", __func__);
	if (r->seq > l->l_maxseq)
		l->l_maxseq = r->seq;
	if (r->status == OUTCOME_OK)
		l->l_done++;
	else if (r->status != OUTCOME_CANCELLED)
		l->l_failed++;
	if (r->seq <= l->l_acked)
		return (0);
	if ((l->l_res = reallocarray(l->l_res, l->l_nres + 1,
	    sizeof(*l->l_res))) == NULL)
		fatal("%s", __func__);
	br = &l->l_res[l->l_nres++];
	memset(br, 0, sizeof(*br));
	br->r_key = r->seq;	/* the key is set from the task below */
	br->r_batch = (uint64_t)r->gen << 32 | r->idx;
	br->r_status = r->status;
	br->r_len = r->outlen;
	if (r->outlen > 0) {
		br->r_out = xcalloc(1, r->outlen);
		memcpy(br->r_out, r->output, r->outlen);
	}
	br->r_error = r->error != NULL && r->error[0] ? xstrdup(r->error) :
	    NULL;
	return (0);
}

/* The gathered tasks of batch l_gen go into it. */
static void
bj_load_flush(struct bj_load *l)
{
	struct job_batch	*b;

	if (l->l_n == 0)
		return;
	if ((b = job_batch_by_gen(l->l_job, l->l_gen)) != NULL)
		bj_batch_add(b, l->l_keys, l->l_pay, l->l_lens, l->l_prios,
		    l->l_copies, l->l_over, l->l_n, 0);
	else {
		while (l->l_n > 0)
			free(l->l_pay[--l->l_n]);
		l->l_bad = 1;
	}
	l->l_n = 0;
}

static int
bj_load_task(void *arg, const struct journal_task *t)
{
	struct bj_load	*l = arg;

	if (l->l_ended_only) {
		if (u64map_put(&l->l_tkeys, (uint64_t)t->gen << 32 | t->idx,
		    t->key) == -1)
			fatal("%s", __func__);
		return (0);
	}
	if (t->gen != l->l_gen)
		bj_load_flush(l);
	l->l_gen = t->gen;
	/* A damaged row: the core would refuse it (fuzz/regress/journal). */
	if (t->copies > SCHED_COPIES_MAX) {
		l->l_badcopies = t->copies;
		return (0);
	}
	if (l->l_n == l->l_cap) {
		l->l_cap = l->l_cap ? l->l_cap * 2 : 256;
		if ((l->l_keys = reallocarray(l->l_keys, l->l_cap,
		    sizeof(*l->l_keys))) == NULL ||
		    (l->l_pay = reallocarray(l->l_pay, l->l_cap,
		    sizeof(*l->l_pay))) == NULL ||
		    (l->l_lens = reallocarray(l->l_lens, l->l_cap,
		    sizeof(*l->l_lens))) == NULL ||
		    (l->l_prios = reallocarray(l->l_prios, l->l_cap,
		    sizeof(*l->l_prios))) == NULL ||
		    (l->l_copies = reallocarray(l->l_copies, l->l_cap,
		    sizeof(*l->l_copies))) == NULL ||
		    (l->l_over = reallocarray(l->l_over, l->l_cap,
		    sizeof(*l->l_over))) == NULL)
			fatal("%s", __func__);
	}
	l->l_keys[l->l_n] = t->key;
	l->l_pay[l->l_n] = NULL;
	if (t->len > 0) {
		l->l_pay[l->l_n] = xcalloc(1, t->len);
		memcpy(l->l_pay[l->l_n], t->payload, t->len);
	}
	l->l_lens[l->l_n] = (uint32_t)t->len;
	l->l_prios[l->l_n] = t->priority;
	l->l_copies[l->l_n] = t->copies;
	l->l_over[l->l_n] = u64map_get(&l->l_ended, (uint64_t)t->gen << 32 |
	    t->idx, NULL);
	l->l_n++;
	return (0);
}

static int
bj_load_batch(void *arg, const struct journal_batch *jb)
{
	struct bj_load		*l = arg;
	struct job_batch	*b;
	uint32_t		 kind;

	if (l->l_ended_only) {
		if (u64map_put(&l->l_clients, jb->gen, jb->client) == -1)
			fatal("%s", __func__);
		return (0);
	}
	if ((kind = kind_intern(jb->kind)) == UINT32_MAX) {
		l->l_bad = 1;
		return (0);
	}
	l->l_job->j_nbatches = jb->gen;
	b = bj_batch_open(l->l_job, jb->client, kind);
	b->b_closed = jb->closed != 0;	/* closed in the core below */
	return (0);
}

/*
 * The outcomes the client has not acknowledged are one per task at most,
 * so numbered no further past the acknowledged than its ntasks tasks.  A
 * damaged journal's larger number made the outcome ring double its size
 * until it wrapped to 0 (fuzz/regress/journal/timeout-outcome-beyond-
 * tasks, timeout-seq-beyond-tasks-failed-load).  -1 with why in err (may
 * be NULL) if j's number is beyond.
 */
static int
bj_seq_check(struct job *j, size_t ntasks, char *err, size_t errlen)
{
	struct bjob	*bj = BJ(j);

	if (j->j_seq <= bj->bj_acked || j->j_seq - bj->bj_acked <= ntasks)
		return (0);
	if (err != NULL)
		snprintf(err, errlen, "its outcome %llu lies beyond its %zu "
		    "tasks past the %llu acknowledged",
		    (unsigned long long)j->j_seq, ntasks,
		    (unsigned long long)bj->bj_acked);
	return (-1);
}

/*
 * Read j's batches, results and tasks from the journal into l (made
 * here); ended_only: for an ended job, see bj_load_ended().  -1 with the
 * journal's error in err.
 */
static int
bj_load_rows(struct job *j, struct bj_load *l, int ended_only, char *err,
    size_t errlen)
{
	memset(l, 0, sizeof(*l));
	l->l_job = j;
	l->l_acked = BJ(j)->bj_acked;
	l->l_ended_only = ended_only;
	u64map_init(&l->l_ended);
	u64map_init(&l->l_tkeys);
	u64map_init(&l->l_clients);
	if (journal_load_batches(md->journal, j->j_id, bj_load_batch,
	    l) == -1 ||
	    journal_load_results(md->journal, j->j_id, bj_load_result,
	    l) == -1 ||
	    journal_load_tasks(md->journal, j->j_id, bj_load_task, l) == -1) {
		snprintf(err, errlen, "%s", journal_error(md->journal));
		return (-1);
	}
	return (0);
}

/*
 * An ended batch job from the journal whose client has not acknowledged
 * all its outcomes: those outcomes come back into memory, as they were
 * before masterd stopped, for a client that reattaches, and leave it
 * after client_timeout without one (bj_detach).  Nothing goes to the
 * core.  Without them a reattaching client made bj_push() index an empty
 * ring: masterd died of a division by zero (tests/regress/
 * batch-ended.sh).  If they cannot be read, none is kept: the client is
 * told all were acknowledged rather than wait for them for ever.
 */
static int
bj_load_ended(struct job *j, char *err, size_t errlen)
{
	struct bjob		*bj = BJ(j);
	struct bj_load		 l;
	struct bj_result	*r;
	uint64_t		 v, key, client;
	size_t			 i;
	int			 rc = -1;

	if (j->j_seq <= bj->bj_acked) {
		j->j_seq = bj->bj_acked;
		return (0);
	}
	if (bj_load_rows(j, &l, 1, err, errlen) == -1)
		goto out;
	if (l.l_maxseq > j->j_seq)
		j->j_seq = l.l_maxseq;
	if (bj_seq_check(j, u64map_count(&l.l_tkeys), err, errlen) == -1)
		goto out;
	for (i = 0; i < l.l_nres; i++) {
		v = l.l_res[i].r_batch;
		if (!u64map_get(&l.l_tkeys, v, &key) ||
		    !u64map_get(&l.l_clients, v >> 32, &client) ||
		    !u64map_get(&l.l_ended, v, &v) ||
		    v <= bj->bj_acked || v > j->j_seq)
			continue;
		r = bj_res_put(j, v, &l.l_res[i]);
		r->r_key = key;
		r->r_batch = client;
	}
	/* Slots no result filled (a damaged journal) still count. */
	bj_res_grow(j, j->j_seq);
	log_info("batch job %llu (%s) from the journal: %llu outcomes not "
	    "yet acknowledged, kept for client_timeout",
	    (unsigned long long)j->j_id, job_state_name(j->j_state),
	    (unsigned long long)(j->j_seq - bj->bj_acked));
	bj_detach(j);
	rc = 0;
 out:
	if (rc == -1) {
		bj_res_ack(j, j->j_seq);
		j->j_seq = bj->bj_acked;
	}
	for (i = 0; i < l.l_nres; i++) {
		free(l.l_res[i].r_out);
		free(l.l_res[i].r_error);
	}
	free(l.l_res);
	u64map_free(&l.l_ended);
	u64map_free(&l.l_tkeys);
	u64map_free(&l.l_clients);
	return (rc);
}

/*
 * A batch job from the journal: its settings, its batches and tasks,
 * which of them ended (those after acked are kept for the client), and
 * the rest go back to the core.  A running job then waits for its client
 * for client_timeout.
 */
static int
bj_load(struct job *j, const struct journal_job *row,
    const R3q__JobState *st, char *err, size_t errlen)
{
	struct bjob		*bj;
	struct bj_load		 l;
	struct job_batch	*b, *next;
	struct bj_batch		*bb;
	struct bj_result	*r;
	R3q__OpenJob		*o;
	struct job_sched	 js;
	uint64_t		 v;
	uint32_t		 nb = j->j_nbatches;
	size_t			 i, idx, ntasks = 0;
	int			 rc = -1;

	j->j_ds = bj = xcalloc(1, sizeof(*bj));
	if ((o = r3q__open_job__unpack(NULL, row->paramslen,
	    row->params)) == NULL) {
		r3q__open_job__init(&bj->bj_open);
		snprintf(err, errlen, "unreadable parameters");
		return (-1);
	}
	if (bj_settings(o, &bj->bj_open, &js, err, errlen) == -1) {
		r3q__open_job__free_unpacked(o, NULL);
		r3q__open_job__init(&bj->bj_open);
		return (-1);
	}
	bj->bj_open.client_timeout_ms = o->client_timeout_ms;
	r3q__open_job__free_unpacked(o, NULL);
	j->j_policy = js.js_policy;
	j->j_qf = js.js_qf;
	j->j_verify = js.js_verify;
	j->j_balance = js.js_balance;
	bj->bj_acked = st != NULL ? st->acked : 0;
	bj->bj_sent = bj->bj_acked;
	if (j->j_state != JOB_RUNNING)
		return (bj_load_ended(j, err, errlen));
	if (bj_load_rows(j, &l, 0, err, errlen) == -1)
		goto out;
	bj_load_flush(&l);
	j->j_nbatches = nb;
	/*
	 * The row's count of outcomes is as old as its last write; every
	 * outcome is journaled with its number, so the results know better.
	 */
	if (l.l_maxseq > j->j_seq)
		j->j_seq = l.l_maxseq;
	j->j_done = l.l_done;
	j->j_failed = l.l_failed;
	if (l.l_bad) {
		snprintf(err, errlen, "its tasks name batches it does not "
		    "have");
		goto out;
	}
	if (l.l_badcopies) {
		snprintf(err, errlen, "a task of it asks for %u copies, more "
		    "than %d: its row is damaged", l.l_badcopies,
		    SCHED_COPIES_MAX);
		goto out;
	}
	TAILQ_FOREACH(b, &j->j_batches, b_entry)
		ntasks += b->b_n;
	if (bj_seq_check(j, ntasks, err, errlen) == -1)
		goto out;		/* brought back below */
	/* The outcomes the client has not acknowledged, in seq order. */
	for (i = 0; i < l.l_nres; i++) {
		v = l.l_res[i].r_batch;
		b = job_batch_by_gen(j, (uint32_t)(v >> 32));
		idx = (size_t)(v & 0xffffffffu);
		if (b == NULL || idx >= b->b_n)
			continue;
		bb = b->b_ds;
		u64map_get(&l.l_ended, v, &v);
		if (v <= bj->bj_acked || v > j->j_seq)
			continue;
		/*
		 * A damaged journal can hold two results of one task (one
		 * seq): the last is kept.
		 */
		r = bj_res_put(j, v, &l.l_res[i]);
		r->r_key = bb->bb_key[idx];
		r->r_batch = b->b_client;
	}
	/* Closed batches go on closed; those already over end now. */
	for (b = TAILQ_FIRST(&j->j_batches); b != NULL; b = next) {
		next = TAILQ_NEXT(b, b_entry);
		if (!b->b_closed)
			continue;
		b->b_closed = 0;
		job_batch_close(b);
	}
	log_info("batch job %llu resumed from the journal: %zu outcomes not "
	    "yet acknowledged", (unsigned long long)j->j_id, l.l_nres);
	bj_detach(j);
	rc = 0;
 out:
	if (rc == -1) {
		/*
		 * The job fails: every task not over gets its outcome, the
		 * next number each, from a number bj_seq_check() accepts
		 * (whichever check failed first).
		 */
		ntasks = 0;
		TAILQ_FOREACH(b, &j->j_batches, b_entry)
			ntasks += b->b_n;
		if (bj_seq_check(j, ntasks, NULL, 0) == -1) {
			bj_res_drop(j);
			j->j_seq = bj->bj_acked;
		}
	}
	while (l.l_n > 0)	/* gathered before the journal failed */
		free(l.l_pay[--l.l_n]);
	for (i = 0; i < l.l_nres; i++) {
		free(l.l_res[i].r_out);
		free(l.l_res[i].r_error);
	}
	free(l.l_res);
	free(l.l_keys);
	free(l.l_pay);
	free(l.l_lens);
	free(l.l_prios);
	free(l.l_copies);
	free(l.l_over);
	u64map_free(&l.l_ended);
	u64map_free(&l.l_tkeys);
	u64map_free(&l.l_clients);
	return (rc);
}

const struct job_driver job_batch_driver = {
	.d_name = "batch",
	.d_request = bj_request,
	.d_detach = bj_session_gone,
	.d_attached = bj_attached,
	.d_writable = bj_writable,
	.d_flush = bj_flush,
	.d_task = bj_task,
	.d_result = bj_result,
	.d_batch_done = bj_batch_done,
	.d_next = bj_next,
	.d_info = bj_info,
	.d_params = bj_pack,
	.d_state = bj_state,
	.d_load = bj_load,
	.d_end = bj_end,
	.d_batch_free = bj_batch_free,
	.d_free = bj_free,
};

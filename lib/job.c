/*
 * libr3q's jobs: opening and attaching, batches, turning queued tasks
 * into SubmitTasks frames (up to LR_FRAME_TASKS tasks or LR_FRAME_BYTES
 * of payload each), taking outcomes and acknowledging them, and picking
 * a job up again after a reconnect.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "r3q-int.h"

/* A job's settings as an OpenJob. */
static void
job_open_msg(R3q__OpenJob *oj, const struct r3q_job_options *o)
{
	r3q__open_job__init(oj);
	if (o == NULL)
		return;
	oj->name = (char *)(uintptr_t)(o->name != NULL ? o->name : "");
	oj->policy = (char *)(uintptr_t)(o->policy != NULL ? o->policy : "");
	oj->queue_factor = o->queue_factor;
	oj->max_attempts = o->max_attempts;
	oj->max_kills = o->max_kills;
	oj->verify = o->verify;
	oj->client_timeout_ms = o->client_timeout_ms;
	oj->balance = (char *)(uintptr_t)(o->balance != NULL ? o->balance :
	    "");
}

static int
req_done(void *arg)
{
	return (((struct lr_req *)arg)->q_done);
}

/* A job object for an id the master gave. */
static struct r3q_job *
job_new(struct r3q *r, const struct lr_req *q)
{
	struct r3q_job	*j;

	if ((j = calloc(1, sizeof(*j))) == NULL)
		return (NULL);
	j->j_conn = r;
	j->j_id = q->q_job;
	j->j_seen = j->j_acked = q->q_acked;
	j->j_max_payload = q->q_max_payload;
	j->j_max_tasks = q->q_max_tasks;
	j->j_max_memory = q->q_max_memory;
	j->j_next_key = 1;
	j->j_next_batch = 1;
	j->j_user = 1;
	j->j_refs = 1;
	TAILQ_INIT(&j->j_batches);
	TAILQ_INIT(&j->j_futures);
	TAILQ_INSERT_TAIL(&r->r_jobs, j, j_entry);
	return (j);
}

/* Send a request and wait for its answer; the request stays for the caller. */
static int
job_request(struct r3q *r, Envelope *env, int signals, struct lr_req **qp)
{
	struct lr_req	*q;
	int		 rc;

	*qp = NULL;
	if (r->r_state == CS_DEAD) {
		lr_seterr(r, "%s", r->r_err[0] ? r->r_err :
		    r3q_strerror(R3Q_ECONN));
		return (R3Q_ECONN);
	}
	if ((q = lr_req_new(r, env)) == NULL) {
		lr_seterr(r, "out of memory");
		return (R3Q_ENOMEM);
	}
	*qp = q;
	lr_send_req(r, q);
	lr_write(r);
	rc = lr_wait(r, req_done, q, -1, signals);
	if (rc != R3Q_OK) {
		lr_seterr(r, "%s", r3q_strerror(rc));
		return (rc);
	}
	if (q->q_rc != R3Q_OK)
		lr_seterr(r, "%s", q->q_err[0] ? q->q_err :
		    r3q_strerror(q->q_rc));
	return (q->q_rc);
}

/* Open a job: OpenJob, and wait for JobOpened. */
struct r3q_job *
r3q_job_open(struct r3q *r, const struct r3q_job_options *o)
{
	struct r3q_job	*j = NULL;
	struct lr_req	*q;
	Envelope	 env;
	R3q__OpenJob	 oj;

	if (r == NULL)
		return (NULL);
	job_open_msg(&oj, o);
	r3q__envelope__init(&env);
	env.body_case = R3Q__ENVELOPE__BODY_OPEN_JOB;
	env.open_job = &oj;
	pthread_mutex_lock(&r->r_mtx);
	if (job_request(r, &env, 1, &q) == R3Q_OK &&
	    (j = job_new(r, q)) == NULL)
		lr_seterr(r, "out of memory");
	if (q != NULL)
		lr_req_free(r, q);
	pthread_mutex_unlock(&r->r_mtx);
	return (j);
}

/*
 * Follow a job opened elsewhere (another process, an earlier run).  Its
 * keys and batch numbers go on from the wall clock in nanoseconds, above
 * any an earlier client can have used.
 */
struct r3q_job *
r3q_job_attach(struct r3q *r, uint64_t id)
{
	struct r3q_job	*j = NULL;
	struct lr_req	*q;
	struct timespec	 ts;
	Envelope	 env;
	R3q__AttachJob	 aj;

	if (r == NULL || id == 0)
		return (NULL);
	r3q__attach_job__init(&aj);
	aj.job = id;
	r3q__envelope__init(&env);
	env.body_case = R3Q__ENVELOPE__BODY_ATTACH_JOB;
	env.attach_job = &aj;
	pthread_mutex_lock(&r->r_mtx);
	if (job_request(r, &env, 1, &q) == R3Q_OK) {
		if ((j = job_new(r, q)) == NULL)
			lr_seterr(r, "out of memory");
		else {
			clock_gettime(CLOCK_REALTIME, &ts);
			j->j_next_key = j->j_next_batch =
			    (uint64_t)ts.tv_sec * 1000000000ULL +
			    (uint64_t)ts.tv_nsec;
		}
	}
	if (q != NULL)
		lr_req_free(r, q);
	pthread_mutex_unlock(&r->r_mtx);
	return (j);
}

uint64_t
r3q_job_id(const struct r3q_job *j)
{
	return (j != NULL ? j->j_id : 0);
}

/*
 * The master's caps on the job, as it last said (0: not said, by a master
 * older than them): tasks not yet ended (max_job_tasks), and bytes of
 * their payloads and of outcomes not yet acknowledged (max_job_memory).
 * A program that streams tasks keeps below them to be refused nothing.
 */
void
r3q_job_limits(struct r3q_job *j, uint64_t *max_tasks, uint64_t *max_memory)
{
	struct r3q	*r = j->j_conn;

	pthread_mutex_lock(&r->r_mtx);
	if (max_tasks != NULL)
		*max_tasks = j->j_max_tasks;
	if (max_memory != NULL)
		*max_memory = j->j_max_memory;
	pthread_mutex_unlock(&r->r_mtx);
}

/*
 * Why none of the job's tasks can run, if so, asked of the master (a
 * JobQuery, answered by its JobInfo's waiting): no connected worker
 * offers a kind its open batches need, or the master cannot write its
 * journal; "" when its tasks can run.  A question, not a wait: the
 * connection must be up, the answer comes within LR_ASK_MS or the call
 * gives up (R3Q_ECONN, R3Q_ETIMEDOUT; a late answer is dropped), and an
 * r3q_signal is left for the next wait (a program's reader thread steps
 * aside on it).
 */
int
r3q_job_waiting(struct r3q_job *j, char *buf, size_t len)
{
	struct r3q	*r;
	struct lr_req	*q;
	Envelope	 env;
	R3q__JobQuery	 jq;
	int		 rc;

	if (j == NULL || buf == NULL || len == 0)
		return (R3Q_EINVAL);
	buf[0] = '\0';
	r = j->j_conn;
	r3q__job_query__init(&jq);
	jq.job = j->j_id;
	r3q__envelope__init(&env);
	env.body_case = R3Q__ENVELOPE__BODY_JOB_QUERY;
	env.job_query = &jq;
	pthread_mutex_lock(&r->r_mtx);
	if (j->j_gone)
		rc = j->j_gone_rc;
	else if (r->r_state != CS_UP) {
		lr_seterr(r, "not connected to the master now");
		rc = R3Q_ECONN;
	} else if ((q = lr_req_new(r, &env)) == NULL) {
		lr_seterr(r, "out of memory");
		rc = R3Q_ENOMEM;
	} else {
		lr_send_req(r, q);
		lr_write(r);
		rc = lr_wait(r, req_done, q, LR_ASK_MS, 0);
		if (rc == R3Q_OK && (rc = q->q_rc) == R3Q_OK)
			snprintf(buf, len, "%s", q->q_waiting);
		else if (rc != R3Q_OK)
			lr_seterr(r, "%s", q->q_err[0] ? q->q_err :
			    r3q_strerror(rc));
		lr_req_free(r, q);
	}
	pthread_mutex_unlock(&r->r_mtx);
	return (rc);
}

/* Free a job and everything in it (r3q_close, or its last reference). */
void
job_free(struct r3q_job *j)
{
	struct r3q_future	*f;
	struct lr_batch		*b;

	while ((f = TAILQ_FIRST(&j->j_futures)) != NULL) {
		TAILQ_REMOVE(&j->j_futures, f, f_entry);
		free(f->f_out);
		free(f->f_error);
		free(f);
	}
	while ((b = TAILQ_FIRST(&j->j_batches)) != NULL) {
		TAILQ_REMOVE(&j->j_batches, b, b_entry);
		free(b->b_kind);
		free(b);
	}
	table_free(&j->j_table);
	TAILQ_REMOVE(&j->j_conn->r_jobs, j, j_entry);
	free(j->j_cancel);
	free(j->j_gone_err);
	free(j);
}

/* Drop a reference; the last one frees the job. */
void
job_unref(struct r3q_job *j)
{
	if (--j->j_refs == 0)
		job_free(j);
}

/*
 * Fail every unresolved future of a job (the connection is given up,
 * or the master refused the job); later submits fail the same way.
 */
void
job_fail(struct r3q_job *j, int rc, const char *why)
{
	struct r3q_future	*f, *fn;
	struct lr_batch		*b;

	if (!j->j_gone) {
		j->j_gone = 1;
		j->j_gone_rc = rc;
		j->j_gone_err = strdup(why);
	}
	j->j_refs++;		/* the unrefs below must not free it */
	TAILQ_FOREACH(b, &j->j_batches, b_entry) {
		while ((f = b->b_qhead) != NULL) {
			b->b_qhead = f->f_qnext;
			b->b_qn--;
			j->j_conn->r_queued--;
			if (f->f_state == FS_QUEUED)
				fut_resolve(f, rc, NULL, 0, why);
			fut_unref(f, FR_QUEUE);
		}
		b->b_qtail = &b->b_qhead;
		b->b_qbytes = 0;
	}
	TAILQ_FOREACH_SAFE(f, &j->j_futures, f_entry, fn) {
		if (f->f_refs & FR_TABLE) {
			table_del(&j->j_table, f);
			if (f->f_state == FS_SENT)
				fut_resolve(f, rc, NULL, 0, why);
			fut_unref(f, FR_TABLE);
		}
	}
	j->j_ncancel = 0;
	j->j_closing = 0;
	job_unref(j);
}

/* A new batch of one kind; r3q_map's are its own. */
struct lr_batch *
job_batch_new(struct r3q_job *j, const char *kind, int map)
{
	struct lr_batch	*b;

	if ((b = calloc(1, sizeof(*b))) == NULL)
		return (NULL);
	if ((b->b_kind = strdup(kind)) == NULL) {
		free(b);
		return (NULL);
	}
	b->b_id = j->j_next_batch++;
	b->b_map = map;
	b->b_qtail = &b->b_qhead;
	TAILQ_INSERT_TAIL(&j->j_batches, b, b_entry);
	return (b);
}

/* No more tasks into b: its last frame (or a CloseBatch) says so. */
void
job_batch_close(struct r3q_job *j, struct lr_batch *b)
{
	b->b_closed = 1;
	if (j->j_last == b)
		j->j_last = NULL;
	lr_queued(j->j_conn);
}

/* The open batch for a kind, made if there is none. */
static struct lr_batch *
job_batch_for(struct r3q_job *j, const char *kind)
{
	struct lr_batch	*b;

	if ((b = j->j_last) != NULL && strcmp(b->b_kind, kind) == 0)
		return (b);
	TAILQ_FOREACH(b, &j->j_batches, b_entry)
		if (!b->b_closed && !b->b_map && strcmp(b->b_kind, kind) == 0)
			break;
	if (b == NULL)
		b = job_batch_new(j, kind, 0);
	j->j_last = b;
	return (b);
}

/*
 * Encode futures into one SubmitTasks frame of batch b.  fs[0..n) are
 * the futures; close says whether the frame closes the batch.
 */
static int
job_frame(struct r3q_job *j, struct lr_batch *b, struct r3q_future **fs,
    size_t n, int close)
{
	struct r3q		*r = j->j_conn;
	static const R3q__TaskSpec init = R3Q__TASK_SPEC__INIT;
	R3q__SubmitTasks	 st;
	Envelope		 env;
	uint64_t		 id;
	size_t			 i;

	for (i = 0; i < n; i++) {
		r->r_specs[i] = init;
		r->r_specs[i].key = fs[i]->f_key;
		r->r_specs[i].payload.data = fs[i]->f_payload;
		r->r_specs[i].payload.len = fs[i]->f_len;
		r->r_specs[i].priority = fs[i]->f_priority;
		r->r_specs[i].copies = fs[i]->f_copies;
		r->r_specp[i] = &r->r_specs[i];
	}
	r3q__submit_tasks__init(&st);
	st.job = j->j_id;
	st.batch = b->b_id;
	st.kind = b->b_kind;
	st.n_tasks = n;
	st.tasks = r->r_specp;
	st.close = close;
	r3q__envelope__init(&env);
	env.body_case = R3Q__ENVELOPE__BODY_SUBMIT_TASKS;
	env.submit_tasks = &st;
	if (lr_send(r, &env, &id) == -1)
		return (-1);
	for (i = 0; i < n; i++)
		fs[i]->f_reqid = id;
	b->b_sent = 1;
	if (close)
		b->b_close_sent = 1;
	return (0);
}

/* Send b's queue, in frames, closing it if it is closed. */
static void
job_send_batch(struct r3q_job *j, struct lr_batch *b)
{
	struct r3q		*r = j->j_conn;
	struct r3q_future	*f, **fs = r->r_fbuf;
	Envelope		 env;
	R3q__CloseBatch		 cb;
	size_t			 n, bytes;

	while (b->b_qhead != NULL && r->r_state == CS_UP) {
		n = bytes = 0;
		while ((f = b->b_qhead) != NULL && n < LR_FRAME_TASKS &&
		    (n == 0 || bytes + f->f_len <= LR_FRAME_BYTES)) {
			if ((b->b_qhead = f->f_qnext) == NULL)
				b->b_qtail = &b->b_qhead;
			b->b_qn--;
			b->b_qbytes -= f->f_len;
			r->r_queued--;
			if (f->f_state != FS_QUEUED) {
				fut_unref(f, FR_QUEUE);
				continue;
			}
			if (table_add(&j->j_table, f) == -1) {
				fut_resolve(f, R3Q_ENOMEM, NULL, 0, NULL);
				fut_unref(f, FR_QUEUE);
				continue;
			}
			/* The queue's reference becomes the table's. */
			f->f_refs = (f->f_refs & ~FR_QUEUE) | FR_TABLE;
			f->f_state = FS_SENT;
			b->b_unresolved++;
			r->r_unresolved++;
			fs[n++] = f;
			bytes += f->f_len;
		}
		if (n > 0 && job_frame(j, b, fs, n, b->b_closed &&
		    b->b_qhead == NULL) == -1)
			return;
	}
	if (b->b_closed && !b->b_close_sent && b->b_qhead == NULL &&
	    r->r_state == CS_UP) {
		if (b->b_sent) {
			r3q__close_batch__init(&cb);
			cb.job = j->j_id;
			cb.batch = b->b_id;
			r3q__envelope__init(&env);
			env.body_case = R3Q__ENVELOPE__BODY_CLOSE_BATCH;
			env.close_batch = &cb;
			if (lr_send(r, &env, NULL) == -1)
				return;
		}
		b->b_close_sent = 1;
	}
}

/* Send CancelTasks for the keys r3q_cancel gathered. */
static void
job_send_cancels(struct r3q_job *j)
{
	R3q__CancelTasks	 ct;
	Envelope		 env;

	if (j->j_ncancel == 0)
		return;
	r3q__cancel_tasks__init(&ct);
	ct.job = j->j_id;
	ct.n_keys = j->j_ncancel;
	ct.keys = j->j_cancel;
	r3q__envelope__init(&env);
	env.body_case = R3Q__ENVELOPE__BODY_CANCEL_TASKS;
	env.cancel_tasks = &ct;
	if (lr_send(j->j_conn, &env, NULL) == 0)
		j->j_ncancel = 0;
}

/* Send whatever a job has queued; finished batches go. */
int
job_flush(struct r3q_job *j)
{
	struct lr_batch	*b, *bn;

	if (j->j_conn->r_state != CS_UP || j->j_gone)
		return (0);
	TAILQ_FOREACH_SAFE(b, &j->j_batches, b_entry, bn) {
		if (b->b_qhead != NULL || (b->b_closed && !b->b_close_sent))
			job_send_batch(j, b);
		if (b->b_closed && b->b_close_sent && b->b_qhead == NULL &&
		    b->b_unresolved == 0) {
			TAILQ_REMOVE(&j->j_batches, b, b_entry);
			if (j->j_last == b)
				j->j_last = NULL;
			free(b->b_kind);
			free(b);
		}
	}
	job_send_cancels(j);
	return (0);
}

/* Send everything queued on the connection. */
void
job_flush_all(struct r3q *r)
{
	struct r3q_job	*j;

	TAILQ_FOREACH(j, &r->r_jobs, j_entry)
		job_flush(j);
}

/*
 * Acknowledge stored results: every LR_ACK_EVERY or LR_ACK_BYTES of them,
 * or all when idle (about to wait).  Only results already in their
 * futures count.
 */
void
job_ack_all(struct r3q *r, int idle)
{
	struct r3q_job	*j;
	R3q__AckResults	 ar;
	Envelope	 env;

	TAILQ_FOREACH(j, &r->r_jobs, j_entry) {
		if (j->j_seen <= j->j_acked || (!idle &&
		    j->j_seen - j->j_acked < LR_ACK_EVERY &&
		    j->j_unacked < LR_ACK_BYTES))
			continue;
		r3q__ack_results__init(&ar);
		ar.job = j->j_id;
		ar.seq = j->j_seen;
		r3q__envelope__init(&env);
		env.body_case = R3Q__ENVELOPE__BODY_ACK_RESULTS;
		env.ack_results = &ar;
		if (lr_send(r, &env, NULL) == 0) {
			j->j_acked = j->j_seen;
			j->j_unacked = 0;
		}
	}
}

/* Sent futures by batch, then key: the order they are sent again in. */
static int
job_cmp_sent(const void *a, const void *b)
{
	const struct r3q_future	*fa = *(struct r3q_future *const *)a;
	const struct r3q_future	*fb = *(struct r3q_future *const *)b;
	uint64_t		 ba = fa->f_batch->b_id, bb = fb->f_batch->b_id;

	if (ba != bb)
		return (ba < bb ? -1 : 1);
	return (fa->f_key < fb->f_key ? -1 : fa->f_key > fb->f_key);
}

/*
 * A new connection: AttachJob with the highest seq stored (the master
 * sends every later result again), then every sent task still without
 * an outcome, batch by batch, closing the batches that were closed, and
 * the cancels of tasks cancelled since.  The master skips keys it has.
 */
void
job_resume(struct r3q_job *j)
{
	struct r3q		*r = j->j_conn;
	struct r3q_future	*f, **all = NULL;
	struct lr_batch		*b;
	R3q__AttachJob		 aj;
	Envelope		 env;
	size_t			 n = 0, i, k, m;

	r3q__attach_job__init(&aj);
	aj.job = j->j_id;
	aj.acked = j->j_seen;
	r3q__envelope__init(&env);
	env.body_case = R3Q__ENVELOPE__BODY_ATTACH_JOB;
	env.attach_job = &aj;
	if (lr_send(r, &env, &j->j_attach_id) == -1)
		return;
	j->j_acked = j->j_seen;
	j->j_unacked = 0;

	j->j_ncancel = 0;
	if (j->j_table.t_n > 0 &&
	    (all = calloc(j->j_table.t_n, sizeof(*all))) == NULL) {
		lr_seterr(r, "out of memory resubmitting tasks");
		return;
	}
	TAILQ_FOREACH(f, &j->j_futures, f_entry) {
		if (!(f->f_refs & FR_TABLE))
			continue;
		if (f->f_state == FS_SENT && n < j->j_table.t_n)
			all[n++] = f;
		else if (f->f_state == FS_CANCELLING) {
			if (j->j_ncancel == j->j_cancelsz) {
				uint64_t	*nc;
				size_t		 sz = j->j_cancelsz ?
				    j->j_cancelsz * 2 : 64;

				if ((nc = realloc(j->j_cancel, sz *
				    sizeof(*nc))) == NULL)
					continue;
				j->j_cancel = nc;
				j->j_cancelsz = sz;
			}
			j->j_cancel[j->j_ncancel++] = f->f_key;
		}
	}
	if (n > 0)		/* all is NULL without tasks out */
		qsort(all, n, sizeof(*all), job_cmp_sent);
	for (i = 0; i < n; i = k) {
		b = all[i]->f_batch;
		for (k = i; k < n && all[k]->f_batch == b; k++)
			;
		for (m = i; m < k; m += LR_FRAME_TASKS) {
			size_t	 c = k - m < LR_FRAME_TASKS ? k - m :
			    LR_FRAME_TASKS;

			if (job_frame(j, b, all + m, c, b->b_close_sent &&
			    m + c == k && b->b_qhead == NULL) == -1)
				break;
		}
	}
	free(all);
	job_send_cancels(j);
}

/* The status code of a TaskOutcome status. */
static int
job_status(uint32_t st)
{
	switch (st) {
	case 0:
		return (R3Q_OK);
	case 1:
	case 4:
		return (R3Q_EREMOTE);
	case 2:
		return (R3Q_EKILLED);
	case 3:
		return (R3Q_ECANCELLED);
	default:
		return (R3Q_EPROTO);
	}
}

static struct r3q_job *
job_find(struct r3q *r, uint64_t id)
{
	struct r3q_job	*j;

	TAILQ_FOREACH(j, &r->r_jobs, j_entry)
		if (j->j_id == id)
			return (j);
	return (NULL);
}

/* Outcomes: store each in its future; drop what is already stored. */
static void
job_results(struct r3q *r, const R3q__TaskResults *tr)
{
	struct r3q_job		*j;
	struct r3q_future	*f;
	const R3q__TaskOutcome	*o;
	const char		*err;
	size_t			 i;

	if ((j = job_find(r, tr->job)) == NULL)
		return;
	j->j_refs++;
	for (i = 0; i < tr->n_results; i++) {
		o = tr->results[i];
		if (o->seq != 0 && o->seq <= j->j_seen)
			continue;		/* sent again after a reconnect */
		if (o->seq > j->j_seen)
			j->j_seen = o->seq;
		/* As masterd counts them until acknowledged. */
		j->j_unacked += o->output.len +
		    (o->error != NULL ? strlen(o->error) : 0);
		if ((f = table_find(&j->j_table, o->key)) == NULL)
			continue;		/* not ours, or stored already */
		table_del(&j->j_table, f);
		if (f->f_state == FS_SENT) {
			err = o->error;
			if (o->status == 4 && (err == NULL || *err == '\0'))
				err = "the copies disagreed";
			fut_resolve(f, job_status(o->status), o->output.data,
			    o->output.len, err);
		}
		fut_unref(f, FR_TABLE);
	}
	job_unref(j);
}

/* An Error: a request's, a reattach's, or a SubmitTasks frame's. */
static void
job_error(struct r3q *r, uint64_t id, const char *msg)
{
	struct r3q_job		*j, *jn;
	struct r3q_future	*f, *fn;
	struct lr_req		*q;
	int			 hit = 0;

	TAILQ_FOREACH(q, &r->r_reqs, q_entry) {
		if (q->q_id == id && !q->q_done) {
			q->q_done = 1;
			q->q_rc = R3Q_EDENIED;
			snprintf(q->q_err, sizeof(q->q_err), "masterd: %s",
			    msg);
			r->r_resolved = 1;
			return;
		}
	}
	TAILQ_FOREACH_SAFE(j, &r->r_jobs, j_entry, jn) {
		if (j->j_attach_id == id) {
			job_fail(j, R3Q_EDENIED, msg);
			return;
		}
	}
	TAILQ_FOREACH_SAFE(j, &r->r_jobs, j_entry, jn) {
		j->j_refs++;
		TAILQ_FOREACH_SAFE(f, &j->j_futures, f_entry, fn) {
			if (f->f_reqid != id || !(f->f_refs & FR_TABLE))
				continue;
			hit = 1;
			table_del(&j->j_table, f);
			if (f->f_state == FS_SENT)
				fut_resolve(f, R3Q_EDENIED, NULL, 0, msg);
			fut_unref(f, FR_TABLE);
		}
		job_unref(j);
		if (hit)
			return;
	}
	lr_seterr(r, "masterd: %s", msg);
}

/* One frame from the master. */
void
job_dispatch(struct r3q *r, Envelope *env)
{
	struct lr_req	*q;
	struct r3q_job	*j;

	switch (env->body_case) {
	case R3Q__ENVELOPE__BODY_TASK_RESULTS:
		job_results(r, env->task_results);
		return;
	case R3Q__ENVELOPE__BODY_ERROR:
		job_error(r, env->id, env->error->message != NULL ?
		    env->error->message : "error");
		return;
	case R3Q__ENVELOPE__BODY_JOB_OPENED:
		TAILQ_FOREACH(q, &r->r_reqs, q_entry) {
			if (q->q_id != env->id || q->q_done)
				continue;
			q->q_done = 1;
			q->q_rc = R3Q_OK;
			q->q_job = env->job_opened->job;
			q->q_acked = env->job_opened->acked;
			q->q_max_payload = env->job_opened->max_payload;
			q->q_max_tasks = env->job_opened->max_tasks;
			q->q_max_memory = env->job_opened->max_memory;
			snprintf(q->q_state, sizeof(q->q_state), "%s",
			    env->job_opened->state ? env->job_opened->state :
			    "");
			r->r_resolved = 1;
			return;
		}
		TAILQ_FOREACH(j, &r->r_jobs, j_entry) {
			if (j->j_attach_id != env->id)
				continue;
			/* The master may have been restarted with others. */
			if (env->job_opened->max_payload != 0)
				j->j_max_payload = env->job_opened->max_payload;
			j->j_max_tasks = env->job_opened->max_tasks;
			j->j_max_memory = env->job_opened->max_memory;
		}
		return;
	case R3Q__ENVELOPE__BODY_JOB_INFO:
		TAILQ_FOREACH(q, &r->r_reqs, q_entry) {
			if (q->q_id != env->id || q->q_done)
				continue;
			q->q_done = 1;
			q->q_rc = R3Q_OK;
			snprintf(q->q_state, sizeof(q->q_state), "%s",
			    env->job_info->state ? env->job_info->state : "");
			if (env->job_info->error != NULL &&
			    *env->job_info->error != '\0')
				snprintf(q->q_err, sizeof(q->q_err), "%s",
				    env->job_info->error);
			snprintf(q->q_waiting, sizeof(q->q_waiting), "%s",
			    env->job_info->waiting != NULL ?
			    env->job_info->waiting : "");
			r->r_resolved = 1;
			return;
		}
		return;
	default:
		return;		/* BatchDone and the rest: not needed */
	}
}

/*
 * Queue a task into batch b (NULL: the job's open batch of its kind).
 * The future comes back at once; checks that fail resolve it at once.
 */
struct r3q_future *
job_submit(struct r3q_job *j, struct lr_batch *b, const struct r3q_task *t)
{
	struct r3q		*r = j->j_conn;
	struct r3q_future	*f;

	if ((f = fut_new(j, t->payload, t->len)) == NULL) {
		lr_seterr(r, "out of memory");
		return (NULL);
	}
	f->f_priority = t->priority;
	f->f_copies = t->copies;
	if (r->r_state == CS_DEAD)
		fut_resolve(f, R3Q_ECONN, NULL, 0, r->r_err);
	else if (j->j_gone)
		fut_resolve(f, j->j_gone_rc, NULL, 0, j->j_gone_err);
	else if (j->j_closing)
		fut_resolve(f, R3Q_EINVAL, NULL, 0, "the job is closed");
	else if (t->kind == NULL || *t->kind == '\0')
		fut_resolve(f, R3Q_EINVAL, NULL, 0, "no kind");
	else if (t->copies > LR_COPIES_MAX)
		fut_resolve(f, R3Q_EINVAL, NULL, 0, "more than 16 copies");
	else if (j->j_max_payload != 0 && t->len > j->j_max_payload)
		fut_resolve(f, R3Q_ETOOBIG, NULL, 0, "payload over the "
		    "master's max_payload");
	else if (b == NULL && (b = job_batch_for(j, t->kind)) == NULL)
		fut_resolve(f, R3Q_ENOMEM, NULL, 0, NULL);
	if (f->f_done)
		return (f);

	f->f_key = j->j_next_key++;
	f->f_batch = b;
	f->f_state = FS_QUEUED;
	f->f_refs |= FR_QUEUE;
	*b->b_qtail = f;
	b->b_qtail = &f->f_qnext;
	b->b_qn++;
	b->b_qbytes += t->len;
	if (r->r_queued++ == 0)
		lr_queued(r);
	if (b->b_qn >= LR_FRAME_TASKS || b->b_qbytes >= LR_FRAME_BYTES) {
		job_send_batch(j, b);
		if (r->r_oblen >= LR_FRAME_BYTES)
			lr_write(r);
	}
	return (f);
}

struct r3q_future *
r3q_submit_task(struct r3q_job *j, const struct r3q_task *t)
{
	struct r3q_future	*f;

	if (j == NULL || t == NULL || (t->payload == NULL && t->len > 0))
		return (NULL);
	pthread_mutex_lock(&j->j_conn->r_mtx);
	f = job_submit(j, NULL, t);
	pthread_mutex_unlock(&j->j_conn->r_mtx);
	return (f);
}

struct r3q_future *
r3q_submit(struct r3q_job *j, const char *kind, const void *payload,
    size_t len)
{
	struct r3q_task	 t;

	memset(&t, 0, sizeof(t));
	t.kind = kind;
	t.payload = payload;
	t.len = len;
	return (r3q_submit_task(j, &t));
}

/*
 * Send everything queued now, with the acknowledgement of the results
 * taken since the last (job_ack_all()): in the same write, rather than
 * alone at the next wait, so that masterd reads both at once (a client
 * that flushes each task sent two frames a round trip, and masterd woke
 * for each).  close: the job's open batches close first.
 */
static int
job_send_now(struct r3q_job *j, int close)
{
	struct r3q	*r;
	struct lr_batch	*b;
	int		 rc;

	if (j == NULL)
		return (R3Q_EINVAL);
	r = j->j_conn;
	pthread_mutex_lock(&r->r_mtx);
	if (close) {
		TAILQ_FOREACH(b, &j->j_batches, b_entry)
			if (!b->b_map && !b->b_closed)
				b->b_closed = 1;
		j->j_last = NULL;
	}
	job_flush(j);
	if (r->r_state == CS_UP)
		job_ack_all(r, 1);
	lr_write(r);
	rc = r->r_state == CS_DEAD ? R3Q_ECONN : R3Q_OK;
	pthread_mutex_unlock(&r->r_mtx);
	return (rc);
}

/* Close the job's open batches and send everything queued now. */
int
r3q_flush(struct r3q_job *j)
{
	return (job_send_now(j, 1));
}

/*
 * Send everything queued now and leave the open batches open: their
 * tasks are a tail to replicate only once r3q_flush() closes them.  A
 * client that waits for each task in turn saves the master a batch's
 * end, its report and its rows, a task.
 */
int
r3q_send(struct r3q_job *j)
{
	return (job_send_now(j, 0));
}

/*
 * Cancel one future: it resolves at once with R3Q_ECANCELLED; if it was
 * sent, the master is told (and told again after a reconnect) and its
 * outcome, when it comes, is dropped.
 */
void
job_cancel_future(struct r3q_future *f)
{
	struct r3q_job	*j = f->f_job;
	uint64_t	*nc;
	size_t		 sz;
	int		 sent = f->f_state == FS_SENT;

	fut_resolve(f, R3Q_ECANCELLED, NULL, 0, NULL);
	if (!sent)
		return;
	f->f_state = FS_CANCELLING;
	if (j->j_ncancel == j->j_cancelsz) {
		sz = j->j_cancelsz ? j->j_cancelsz * 2 : 64;
		if ((nc = realloc(j->j_cancel, sz * sizeof(*nc))) == NULL)
			return;		/* it is sent on a reconnect, if any */
		j->j_cancel = nc;
		j->j_cancelsz = sz;
	}
	j->j_cancel[j->j_ncancel++] = f->f_key;
	if (j->j_ncancel >= LR_FRAME_TASKS)
		job_send_cancels(j);
	else
		lr_queued(j->j_conn);
}

int
r3q_cancel(struct r3q_future *f)
{
	struct r3q	*r;
	int		 rc = R3Q_OK;

	if (f == NULL)
		return (R3Q_EINVAL);
	r = f->f_job->j_conn;
	pthread_mutex_lock(&r->r_mtx);
	if (f->f_done)
		rc = R3Q_EINVAL;
	else
		job_cancel_future(f);
	if (r->r_resolved)
		pthread_cond_broadcast(&r->r_cond);
	pthread_mutex_unlock(&r->r_mtx);
	return (rc);
}

/*
 * Close a job: its batches close, CloseJob is sent, and the call waits
 * for the master's JobInfo, which comes once every task is over (and
 * after every outcome), or for r3q_signal (R3Q_ESIGNALLED: the futures
 * still resolve as outcomes come).  The job is the program's no longer.
 */
int
r3q_job_close(struct r3q_job *j)
{
	struct r3q	*r;
	struct lr_batch	*b;
	struct lr_req	*q = NULL;
	Envelope	 env;
	R3q__CloseJob	 cj;
	int		 rc;

	if (j == NULL || !j->j_user)
		return (R3Q_EINVAL);
	r = j->j_conn;
	pthread_mutex_lock(&r->r_mtx);
	if (j->j_gone)
		rc = j->j_gone_rc;
	else {
		TAILQ_FOREACH(b, &j->j_batches, b_entry)
			b->b_closed = 1;
		j->j_last = NULL;
		job_flush(j);
		r3q__close_job__init(&cj);
		cj.job = j->j_id;
		r3q__envelope__init(&env);
		env.body_case = R3Q__ENVELOPE__BODY_CLOSE_JOB;
		env.close_job = &cj;
		j->j_closing = 1;
		rc = job_request(r, &env, 1, &q);
		if (rc == R3Q_OK && strcmp(q->q_state, "done") != 0 &&
		    q->q_state[0] != '\0') {
			lr_seterr(r, "job %llu %s%s%s", (unsigned long long)
			    j->j_id, q->q_state, q->q_err[0] ? ": " : "",
			    q->q_err);
			rc = strcmp(q->q_state, "cancelled") == 0 ?
			    R3Q_ECANCELLED : R3Q_EREMOTE;
		}
		j->j_close_done = 1;
		j->j_gone = 1;
		j->j_gone_rc = R3Q_EINVAL;
		if (j->j_gone_err == NULL)
			j->j_gone_err = strdup("the job is closed");
		if (q != NULL)
			lr_req_free(r, q);
	}
	j->j_user = 0;
	job_unref(j);
	pthread_mutex_unlock(&r->r_mtx);
	return (rc);
}

/*
 * Cancel a job: CancelJob, wait for the master's answer (or r3q_signal),
 * and resolve every unresolved future with R3Q_ECANCELLED.  The job is
 * the program's no longer.
 */
int
r3q_job_cancel(struct r3q_job *j)
{
	struct r3q		*r;
	struct lr_req		*q = NULL;
	Envelope		 env;
	R3q__CancelJob		 xj;
	int			 rc = R3Q_OK;

	if (j == NULL || !j->j_user)
		return (R3Q_EINVAL);
	r = j->j_conn;
	pthread_mutex_lock(&r->r_mtx);
	if (!j->j_gone) {
		r3q__cancel_job__init(&xj);
		xj.job = j->j_id;
		r3q__envelope__init(&env);
		env.body_case = R3Q__ENVELOPE__BODY_CANCEL_JOB;
		env.cancel_job = &xj;
		rc = job_request(r, &env, 1, &q);
		if (q != NULL)
			lr_req_free(r, q);
		job_fail(j, R3Q_ECANCELLED, "the job was cancelled");
		j->j_close_done = 1;
	}
	if (r->r_resolved)
		pthread_cond_broadcast(&r->r_cond);
	j->j_user = 0;
	job_unref(j);
	pthread_mutex_unlock(&r->r_mtx);
	return (rc);
}

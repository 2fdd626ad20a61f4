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
 *
 * This file is the job side: the tasks, the outcomes kept for the client,
 * the journal.  The client's requests and what is sent to it are
 * control_batch.c's; this side marks what is to be sent (struct bjob in
 * job_batch.h) and the flush sends it.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "journal.h"
#include "log.h"
#include "masterd.h"
#include "util.h"
#include "job_batch.h"

/* The outcome of seq (acked < seq <= j_seq). */
struct bj_result *
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

/* The client acknowledged the outcomes up to seq: journaled. */
void
bj_ack(struct job *j, uint64_t seq)
{
	if (seq > j->j_seq)
		seq = j->j_seq;
	if (seq > BJ(j)->bj_acked) {
		bj_res_ack(j, seq);
		job_journal_put(j);
	}
}

/*
 * No client came back to an ended job: it lets go of the outcomes it kept
 * for one, which stay in the journal.  How many it let go of.
 */
uint64_t
bj_let_go(struct job *j)
{
	struct bjob	*bj = BJ(j);
	uint64_t	 n;

	if ((n = j->j_seq - bj->bj_acked) == 0)
		return (0);
	bj_res_ack(j, j->j_seq);
	free(bj->bj_res);
	bj->bj_res = NULL;
	bj->bj_rcap = bj->bj_rhead = 0;
	/* Journaled: a restart must not bring them back. */
	job_journal_put(j);
	job_journal_commit();
	return (n);
}

/*
 * The client left (or the job ended, or was loaded, without it): the
 * client_timeout clock starts, if there is anything to wait for.  The
 * client side's timer takes the deadline at the flush.
 */
void
bj_wait(struct job *j)
{
	struct bjob	*bj = BJ(j);

	bj->bj_session = NULL;
	if (j->j_state != JOB_RUNNING && j->j_seq == bj->bj_acked)
		return;
	bj->bj_deadline = mono_ns() + (uint64_t)bj->bj_open.client_timeout_ms *
	    NS_PER_MS;
	job_mark(JOB_NEWS_CLIENTS);
}

/*
 * The index of the first of bj's runs of batch numbers that begins after
 * n.  The numbers a client opened are kept as runs, not one by one: a
 * client numbers its batches 1, 2, 3..., so that a job whose client flushed
 * each of a million tasks alone keeps one run, not a million entries.
 */
static size_t
bj_runs_after(const struct bjob *bj, uint64_t n)
{
	size_t	 lo = 0, hi = bj->bj_nruns, m;

	while (lo < hi) {
		m = lo + (hi - lo) / 2;
		if (bj->bj_runs[m][0] <= n)
			lo = m + 1;
		else
			hi = m;
	}
	return (lo);
}

/* Has the client opened its batch number n in this job? */
static int
bj_runs_has(const struct bjob *bj, uint64_t n)
{
	size_t	 i = bj_runs_after(bj, n);

	return (i > 0 && bj->bj_runs[i - 1][1] >= n);
}

/* The client opened its batch number n: add it to the runs. */
static void
bj_runs_add(struct bjob *bj, uint64_t n)
{
	size_t	 i = bj_runs_after(bj, n);
	int	 prev, next;

	if (i > 0 && bj->bj_runs[i - 1][1] >= n)
		return;
	prev = i > 0 && bj->bj_runs[i - 1][1] + 1 == n;
	next = i < bj->bj_nruns && bj->bj_runs[i][0] - 1 == n;
	if (prev && next) {
		bj->bj_runs[i - 1][1] = bj->bj_runs[i][1];
		memmove(bj->bj_runs + i, bj->bj_runs + i + 1,
		    (bj->bj_nruns - i - 1) * sizeof(*bj->bj_runs));
		bj->bj_nruns--;
	} else if (prev)
		bj->bj_runs[i - 1][1] = n;
	else if (next)
		bj->bj_runs[i][0] = n;
	else {
		if (bj->bj_nruns == bj->bj_runcap) {
			bj->bj_runcap = bj->bj_runcap ? bj->bj_runcap * 2 : 4;
			if ((bj->bj_runs = reallocarray(bj->bj_runs,
			    bj->bj_runcap, sizeof(*bj->bj_runs))) == NULL)
				fatal("%s", __func__);
		}
		memmove(bj->bj_runs + i + 1, bj->bj_runs + i,
		    (bj->bj_nruns - i) * sizeof(*bj->bj_runs));
		bj->bj_runs[i][0] = bj->bj_runs[i][1] = n;
		bj->bj_nruns++;
	}
}

/*
 * The client's batch number n of j; NULL if none or forgotten (over, and
 * past the job's last JOB_PAST), known if it was ever opened.
 */
struct job_batch *
bj_batch(struct job *j, uint64_t n, int *known)
{
	uint64_t	 v;

	*known = bj_runs_has(BJ(j), n);
	if (!*known || !u64map_get(&BJ(j)->bj_batches, n, &v))
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
struct job_batch *
bj_batch_open(struct job *j, uint64_t n, uint32_t kind)
{
	struct job_batch	*b;

	b = job_batch_open(j, kind, n);
	b->b_ds = xcalloc(1, sizeof(struct bj_batch));
	if (u64map_put(&BJ(j)->bj_batches, n, (uint64_t)b->b_gen + 1) == -1)
		fatal("%s", __func__);
	bj_runs_add(BJ(j), n);
	return (b);
}

/* Journal b's row (open or closed). */
void
bj_batch_journal(const struct job_batch *b)
{
	struct journal_batch	 jb;

	if (job_journal_handle() == NULL)
		return;
	memset(&jb, 0, sizeof(jb));
	jb.job = b->b_job->j_id;
	jb.gen = b->b_gen;
	jb.client = b->b_client;
	jb.kind = kind_name(b->b_kind);
	jb.closed = b->b_closed;
	if (journal_batch_put(job_journal_handle(), &jb) == -1)
		job_journal_error();
}

/* Add tasks to b: indices b_n.., to the core unless over already. */
void
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
	if (journal && job_journal_handle() != NULL)
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
	if (jt != NULL && journal_tasks_add(job_journal_handle(), jt, n) == -1)
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
void
bj_batch_close(struct job_batch *b)
{
	if (b->b_closed)
		return;
	job_batch_close(b);
	bj_batch_journal(b);
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

/* A new batch job of owner, opened with o; NULL with a message. */
struct job *
bj_new(const R3q__OpenJob *o, const char *owner, char *err, size_t errlen)
{
	struct job		*j;
	struct bjob		*bj;
	struct job_sched	 js;

	bj = xcalloc(1, sizeof(*bj));
	if (bj_settings(o, &bj->bj_open, &js, err, errlen) == -1) {
		free(bj);
		return (NULL);
	}
	j = job_new(&job_batch_driver, &js);
	j->j_ds = bj;
	str_vis(j->j_name, sizeof(j->j_name), bj->bj_open.name);
	snprintf(j->j_owner, sizeof(j->j_owner), "%s", owner);
	job_journal_put(j);
	job_mark(JOB_NEWS_STATUS);
	return (j);
}

/* The client cancels the tasks of keys: those not over end cancelled. */
void
bj_cancel_keys(struct job *j, const uint64_t *keys, size_t n)
{
	struct job_batch	*b;
	struct bj_batch		*bb;
	uint64_t		 v;
	size_t			 i, idx;

	for (i = 0; i < n; i++) {
		if (!u64map_get(&BJ(j)->bj_keys, keys[i], &v))
			continue;
		if ((b = job_batch_by_gen(j, (uint32_t)(v >> 32))) == NULL ||
		    !b->b_live)
			continue;
		idx = (size_t)(v & 0xffffffffu);
		bb = b->b_ds;
		if (bb->bb_over[idx])
			continue;
		(void)job_task_cancel(b, idx);
		job_outcome(b, idx, OUTCOME_CANCELLED, "cancelled by the "
		    "client");
	}
}

/* The client closes the running job: it ends once its batches are over. */
void
bj_close(struct job *j)
{
	struct job_batch	*b;

	BJ(j)->bj_closing = 1;
	TAILQ_FOREACH(b, &j->j_batches, b_entry)
		if (b->b_live)
			bj_batch_close(b);
	if (j->j_nlive == 0)
		job_end(j, JOB_DONE);
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

/*
 * A closed batch is over: its BatchDone, with its figures, goes to the
 * client at the flush, after the outcomes of its tasks.
 */
static void
bj_batch_done(struct job *j, struct job_batch *b, struct gen_report *g)
{
	struct bjob	*bj = BJ(j);
	struct bj_done	*d;

	g->g_best = 0;
	if (bj->bj_session == NULL)
		return;
	if (bj->bj_ndone == bj->bj_donecap) {
		bj->bj_donecap = bj->bj_donecap ? bj->bj_donecap * 2 : 4;
		if ((bj->bj_done = reallocarray(bj->bj_done, bj->bj_donecap,
		    sizeof(*bj->bj_done))) == NULL)
			fatal("%s", __func__);
	}
	d = &bj->bj_done[bj->bj_ndone++];
	d->d_batch = b->b_client;
	job_gen_pb(j, g, &d->d_report);
	d->d_report.best = 0;
	job_mark(JOB_NEWS_CLIENTS);
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

	bj->bj_deadline = 0;
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
	/* The client hears of the end, and a CloseJob its answer, at the flush. */
	bj->bj_dirty = 1;
	job_mark(JOB_NEWS_CLIENTS);
	/* Without a client, its outcomes wait client_timeout for one. */
	if (bj->bj_session == NULL)
		bj_wait(j);
}

static void
bj_batch_free(struct job *j, struct job_batch *b)
{
	struct bj_batch	*bb = b->b_ds;
	uint64_t	 v;
	size_t		 i;

	/*
	 * Called when b retires (its payloads go) and again when it is
	 * forgotten (out of the job's numbers already): then its number
	 * leaves the map, known still in bj_runs.
	 */
	if (BJ(j) != NULL && job_batch_by_gen(j, b->b_gen) != b &&
	    u64map_get(&BJ(j)->bj_batches, b->b_client, &v) &&
	    v == (uint64_t)b->b_gen + 1)
		(void)u64map_del(&BJ(j)->bj_batches, b->b_client, NULL);
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
	free(bj->bj_runs);
	free(bj->bj_done);
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
	struct journal	*jl = job_journal_handle();

	memset(l, 0, sizeof(*l));
	l->l_job = j;
	l->l_acked = BJ(j)->bj_acked;
	l->l_ended_only = ended_only;
	u64map_init(&l->l_ended);
	u64map_init(&l->l_tkeys);
	u64map_init(&l->l_clients);
	if (journal_load_batches(jl, j->j_id, bj_load_batch,
	    l) == -1 ||
	    journal_load_results(jl, j->j_id, bj_load_result,
	    l) == -1 ||
	    journal_load_tasks(jl, j->j_id, bj_load_task, l) == -1) {
		snprintf(err, errlen, "%s", journal_error(jl));
		return (-1);
	}
	return (0);
}

/*
 * An ended batch job from the journal whose client has not acknowledged
 * all its outcomes: those outcomes come back into memory, as they were
 * before masterd stopped, for a client that reattaches, and leave it
 * after client_timeout without one (bj_wait()).  Nothing goes to the
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
	bj_wait(j);
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
	bj_wait(j);
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

/* The client side's hooks are control_batch.c's. */
const struct job_driver job_batch_driver = {
	.d_name = "batch",
	.d_flags = JD_FOLD_GENS,
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

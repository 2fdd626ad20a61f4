/*
 * The islands job driver: the island-model ES of common/es/island.h
 * ("The job that uses it").  One batch is one epoch; its p tasks,
 * of the built-in kind "island", are the p islands: an island is a task,
 * so it runs in one execution slot (thread) of a worker, and a worker
 * with n slots may run n islands at once.  Islands are not pinned: each
 * epoch goes wherever the scheduling policy sends it.
 *
 * The master keeps every island's state at the last migration (the
 * outputs of the last epoch, journaled as the task results they are);
 * the payload of island i's next task is its state and the K best of
 * every other island's, in island order (island_payload_build).  So:
 * - the answer is the one of r3qctl islands --local bit for bit, whatever
 *   the order in which outputs come, the workers or their timing;
 * - a worker lost mid-epoch: the core gives its tasks to another worker,
 *   whose payload is built again from the same state (restart from the
 *   last migration);
 * - masterd killed: the job resumes from the journal's outputs, the
 *   epoch under way submitted again for the islands without an output.
 *
 * The migrants' real content goes through the master.  migrant_bytes is
 * the size of an emulated genome message: without the peer exchange it
 * is only accounted (IslandInfo.migrant_bytes); with workers that have
 * peer_listen, the PEER EXCHANGE HOOK below moves it between them, and
 * IslandInfo.migration_ns is the time the job waited for it.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "es/island.h"
#include "journal.h"
#include "log.h"
#include "masterd.h"
#include "util.h"
#include "xchg/xchg.h"

extern const struct job_driver job_island_driver;

#define IJ_MAX_BYTES	(UINT64_C(1) << 30)	/* migrant_bytes, at most */

/* The driver's state of a job; owned by the job. */
struct island_job {
	R3q__IslandInfo		 ij_info;	/* params and answer */
	R3q__IslandParams	 ij_params;
	struct island_params	 ij_p;
	size_t			 ij_slen;	/* bytes of a state */
	uint8_t			**ij_state;	/* p: at the last migration */
	uint8_t			**ij_next;	/* p: this epoch's outputs */
	uint8_t			*ij_got;	/* p: of them, in */
	uint32_t		*ij_wid;	/* p: who ran its last epoch
						   (the hook); UINT32_MAX:
						   not known */
	double			*ij_ibest;	/* p */
	double			*ij_best_x;	/* dim, once finished */
	uint64_t		 ij_xchg;	/* the hook's exchange, 0 */
	uint64_t		 ij_xchg_t0;	/* mono ns it began */
};

#define IJ(j)	((struct island_job *)(j)->j_ds)

static void	island_job_start(struct job *, uint64_t, const uint8_t *);
static void	island_job_go(struct job *);
static void	island_job_account(struct job *);
static int	island_exchange_hook(struct job *);

/* The pure module's parameters of a job's; -1 with a message. */
static int
island_job_params(const R3q__IslandParams *q, struct island_params *p,
    char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	p->islands = q->islands;
	p->mu = q->mu;
	p->lambda = q->lambda;
	p->dim = q->dim;
	p->generations = q->generations;
	p->migrate_every = q->migrate_every;
	p->migrants = q->migrants;
	p->seed = q->seed;
	if (island_params_check(p, err, errlen) == -1)
		return (-1);
	if (q->exchange_algo != NULL && q->exchange_algo[0] != '\0' &&
	    xchg_algo_lookup(q->exchange_algo) == -1) {
		snprintf(err, errlen, "unknown exchange algorithm '%s' "
		    "(r3qctl exchange -h lists them)", q->exchange_algo);
		return (-1);
	}
	if (q->migrant_bytes > IJ_MAX_BYTES) {
		snprintf(err, errlen, "migrant-bytes %llu: at most %llu",
		    (unsigned long long)q->migrant_bytes,
		    (unsigned long long)IJ_MAX_BYTES);
		return (-1);
	}
	if (!(q->work_ms >= 0) || q->work_ms > ISLAND_MAX_WORK_MS) {
		snprintf(err, errlen, "work_ms must be from 0 to %.0f",
		    ISLAND_MAX_WORK_MS);
		return (-1);
	}
	return (0);
}

/*
 * Bytes of p's state in masterd (max_job_memory): every island's state
 * and the next one, and its bookkeeping.
 */
static uint64_t
island_job_memory(const struct island_params *p)
{
	return ((uint64_t)p->islands * (2 * (uint64_t)island_state_len(p) +
	    2 * sizeof(uint8_t *) + 1 + sizeof(uint32_t) + sizeof(double)));
}

/* The job's own copy of q, its policy settled; and its buffers. */
static void
island_job_setup(struct job *j, const R3q__IslandParams *q)
{
	struct island_job	*ij = IJ(j);
	R3q__IslandParams	*c = &ij->ij_params;
	uint32_t		 i, p = q->islands;

	r3q__island_params__init(c);
	c->islands = q->islands;
	c->mu = q->mu;
	c->lambda = q->lambda;
	c->dim = q->dim;
	c->generations = q->generations;
	c->migrate_every = q->migrate_every;
	c->migrants = q->migrants;
	c->seed = q->seed;
	c->migrant_bytes = q->migrant_bytes;
	c->exchange_algo = xstrdup(q->exchange_algo != NULL &&
	    q->exchange_algo[0] != '\0' ? q->exchange_algo : "portfolio");
	c->work_ms = q->work_ms;
	c->spin = q->spin;
	c->policy = xstrdup(sched_policy_name(j->j_policy));
	c->queue_factor = j->j_qf;
	j->j_work_ms = q->work_ms;
	r3q__island_info__init(&ij->ij_info);
	ij->ij_info.params = c;
	(void)island_job_params(c, &ij->ij_p, NULL, 0);
	ij->ij_info.epochs = island_epochs(&ij->ij_p);
	ij->ij_slen = island_state_len(&ij->ij_p);
	ij->ij_state = xcalloc(p, sizeof(*ij->ij_state));
	ij->ij_next = xcalloc(p, sizeof(*ij->ij_next));
	for (i = 0; i < p; i++) {
		ij->ij_state[i] = xcalloc(1, ij->ij_slen);
		ij->ij_next[i] = xcalloc(1, ij->ij_slen);
	}
	ij->ij_got = xcalloc(p, 1);
	ij->ij_wid = xcalloc(p, sizeof(*ij->ij_wid));
	ij->ij_ibest = xcalloc(p, sizeof(*ij->ij_ibest));
	for (i = 0; i < p; i++) {
		ij->ij_ibest[i] = NAN;
		ij->ij_wid[i] = UINT32_MAX;	/* not known (resumed) */
	}
	snprintf(j->j_name, sizeof(j->j_name), "%u islands", p);
	j->j_mem = island_job_memory(&ij->ij_p);
}

/* The bytes of one island's message to another: padded, accounted. */
static uint64_t
island_msg_bytes(const struct island_job *ij)
{
	uint64_t	 real = (uint64_t)ij->ij_p.migrants *
	    island_ind_len(&ij->ij_p) * 8;

	return (ij->ij_params.migrant_bytes > real ?
	    ij->ij_params.migrant_bytes : real);
}

/*
 * Open epoch epochs_done as a batch of p tasks, ids from first (0: the
 * next free); those marked in have already have their output (a resumed
 * job) and are not submitted.
 */
static void
island_job_start(struct job *j, uint64_t first, const uint8_t *have)
{
	struct island_job	*ij = IJ(j);
	struct job_batch	*b;
	struct sched_task	*t;
	size_t			 i, n = ij->ij_p.islands, nt = 0;

	j->j_nbatches = ij->ij_info.epochs_done;
	b = job_batch_open(j, kind_intern("island"), 0);
	first = job_batch_reserve(b, first, n);
	job_journal_put(j);
	t = xcalloc(n + 1, sizeof(*t));
	for (i = 0; i < n; i++)
		if (have == NULL || !have[i])
			t[nt++].id = first + i;
	b->b_nover = n - nt;
	if (nt == 0) {
		free(t);
		job_batch_finished(b);
		return;
	}
	job_batch_submit(b, t, nt);
	job_batch_close(b);
	free(t);
}

/* Tasks of an island job's first epoch: one per island. */
static uint64_t
island_job_first(const Envelope *env)
{
	const R3q__IslandParams	*q = env->submit_islands->params;

	return (q != NULL ? q->islands : 0);
}

/* Check a client's parameters and start the job; NULL with a message. */
static struct job *
island_job_submit(const Envelope *env, const char *owner, char *err,
    size_t errlen)
{
	const R3q__IslandParams	*q = env->submit_islands->params;
	struct island_params	 p;
	struct job_sched	 js;
	struct job		*j;

	if (q == NULL) {
		snprintf(err, errlen, "submit without parameters");
		return (NULL);
	}
	if (island_job_params(q, &p, err, errlen) == -1)
		return (NULL);
	job_sched_default(&js);
	js.js_verify = 1;
	if (job_sched_parse(&js, q->policy, q->queue_factor, NULL, 0, err,
	    errlen) == -1)
		return (NULL);
	if (island_payload_len(&p, 1) > md->conf.max_payload) {
		snprintf(err, errlen, "an island's task is %zu bytes, over "
		    "max_payload (%llu): fewer migrants, islands, mu or "
		    "dimensions", island_payload_len(&p, 1),
		    (unsigned long long)md->conf.max_payload);
		return (NULL);
	}
	if (job_admit_memory(NULL, owner, island_job_memory(&p), err,
	    errlen) == -1)
		return (NULL);
	j = job_new(&job_island_driver, &js);
	j->j_ds = xcalloc(1, sizeof(struct island_job));
	island_job_setup(j, q);
	island_job_start(j, 0, NULL);
	return (j);
}

/* Island idx's payload for this epoch, built as it is sent. */
static void
island_job_task(struct job *j, struct job_batch *b, size_t idx, R3q__Task *t)
{
	struct island_job	*ij = IJ(j);
	int			 st = ij->ij_info.epochs_done > 0;
	size_t			 len = island_payload_len(&ij->ij_p, st);

	(void)b;
	t->payload.len = len;
	t->payload.data = job_scratch(len);
	island_payload_build(t->payload.data, &ij->ij_p, (uint32_t)idx,
	    ij->ij_params.spin ? ISLAND_F_SPIN : 0, ij->ij_params.work_ms,
	    st ? (const uint8_t *const *)ij->ij_state : NULL);
}

/* Island idx's epoch ended: its state, checked; or the job fails. */
static void
island_job_result(struct job *j, struct job_batch *b, size_t idx,
    uint64_t seq, uint32_t st, const void *out, size_t len, const char *why)
{
	struct island_job	*ij = IJ(j);
	char			 err[200];

	(void)seq;
	if (idx >= ij->ij_p.islands || ij->ij_next == NULL)
		return;
	if (st == OUTCOME_OK && island_state_check(&ij->ij_p, (uint32_t)idx,
	    b->b_gen, out, len, err, sizeof(err)) == 0) {
		memcpy(ij->ij_next[idx], out, ij->ij_slen);
		ij->ij_got[idx] = 1;
		ij->ij_wid[idx] = j->j_out_wid;
		return;
	}
	if (j->j_state != JOB_RUNNING)
		return;
	if (st == OUTCOME_OK)
		snprintf(j->j_error, sizeof(j->j_error), "epoch %u, island "
		    "%zu: %s", b->b_gen, idx, err);
	else
		snprintf(j->j_error, sizeof(j->j_error), "epoch %u, island "
		    "%zu: %s", b->b_gen, idx, why != NULL ? why : "failed");
	log_warnx("job %llu failed: %s", (unsigned long long)j->j_id,
	    j->j_error);
	job_abort(j, JOB_FAILED);
}

/* An epoch is over: its best, over the islands. */
static void
island_job_batch_done(struct job *j, struct job_batch *b,
    struct gen_report *g)
{
	struct island_job	*ij = IJ(j);
	double			 f, best = NAN;
	uint32_t		 i;

	if (ij->ij_next == NULL)
		return;
	for (i = 0; i < ij->ij_p.islands; i++) {
		if (!ij->ij_got[i])
			fatalx("job %llu: epoch %u done without island %u",
			    (unsigned long long)j->j_id, b->b_gen, i);
		f = island_state_best(&ij->ij_p, ij->ij_next[i], ij->ij_slen);
		if (isnan(best) || f < best)
			best = f;
	}
	g->g_best = best;
}

/* The epoch's outputs become the states at the last migration. */
static void
island_job_fold(struct job *j)
{
	struct island_job	*ij = IJ(j);
	uint8_t			**t;

	t = ij->ij_state;
	ij->ij_state = ij->ij_next;
	ij->ij_next = t;
	memset(ij->ij_got, 0, ij->ij_p.islands);
	ij->ij_info.epochs_done++;
	island_job_account(j);
}

/* The bests and the accounting of the states at the last migration. */
static void
island_job_account(struct job *j)
{
	struct island_job	*ij = IJ(j);
	uint32_t		 i, e = ij->ij_info.epochs_done;

	for (i = 0; i < ij->ij_p.islands; i++)
		ij->ij_ibest[i] = island_state_best(&ij->ij_p,
		    ij->ij_state[i], ij->ij_slen);
	/* A migration follows every epoch but the last. */
	ij->ij_info.migrations = e < ij->ij_info.epochs ? e : e - 1;
	ij->ij_info.migrant_bytes = ij->ij_info.migrations *
	    ij->ij_p.islands * (ij->ij_p.islands - 1) * island_msg_bytes(ij);
}

/* The answer: the best island (lowest index on a tie), the digest. */
static void
island_job_answer(struct job *j)
{
	struct island_job	*ij = IJ(j);
	uint64_t		 h = 0;
	uint32_t		 i, b = 0;

	for (i = 0; i < ij->ij_p.islands; i++) {
		h = island_digest(h, ij->ij_state[i], ij->ij_slen);
		if (ij->ij_ibest[i] < ij->ij_ibest[b])
			b = i;
	}
	ij->ij_info.digest = h;
	ij->ij_info.best_island = b;
	ij->ij_info.best = ij->ij_ibest[b];
	free(ij->ij_best_x);
	/* The whole individual; its x comes first. */
	ij->ij_best_x = xcalloc(island_ind_len(&ij->ij_p), sizeof(double));
	(void)island_state_ind(&ij->ij_p, ij->ij_state[b], ij->ij_slen, 0,
	    ij->ij_best_x);
}

/* The epoch's outputs are journaled and told: migrate, or end. */
static void
island_job_next(struct job *j, struct job_batch *b)
{
	struct island_job	*ij = IJ(j);

	(void)b;
	if (j->j_state != JOB_RUNNING)
		return;
	island_job_fold(j);
	if (ij->ij_info.epochs_done >= ij->ij_info.epochs) {
		island_job_answer(j);
		log_info("job %llu done: best %.17g (island %u) after %u "
		    "epochs, digest %016llx", (unsigned long long)j->j_id,
		    ij->ij_info.best, ij->ij_info.best_island,
		    ij->ij_info.epochs_done,
		    (unsigned long long)ij->ij_info.digest);
		job_end(j, JOB_DONE);
		return;
	}
	if (island_exchange_hook(j) == 1)
		return;		/* island_job_go() when it is over */
	island_job_go(j);
}

/* The next epoch, its migrants (in the payloads) from the master. */
static void
island_job_go(struct job *j)
{
	if (j->j_state != JOB_RUNNING)
		return;
	island_job_start(j, 0, NULL);
}

/*
 * The peer exchange (doc/algorithms.md §2).  When every island's last
 * epoch ran on a worker with peer_listen, this moves the --migrant-bytes
 * padding of every island pair between the workers that ran the two
 * islands' last epoch, as one master-planned total exchange
 * (exchange_start, --exchange-algo), and returns 1: the next epoch
 * starts from island_exchange_go() (its d_more, job_more()), in the
 * loop's next pass once it is over.
 * Islands that ran on the same worker exchange nothing over the network;
 * fewer than two workers, a worker gone or not peer-capable: no exchange
 * (return 0).  The real migrants still go through the master (the
 * payloads), so a failed or cancelled exchange (a worker lost or silent
 * in the middle of it: exchange.c fails it within its timeout) changes no
 * bit of the answer: it is logged, counted (exchanges_failed) and the job
 * goes on.  The time from an exchange's start to its end is the job's
 * time in migration (migration_ns).  What it needs: exchange_start(),
 * exchange_cancel(), exchange_capable(), and worker_get(wid) (a
 * worker's id from j->j_out_wid, recorded per island in ij_wid).
 */
#include "exchange.h"

/* The exchange is over: the next epoch (its migrants in its payloads). */
static void
island_exchange_go(struct job *j)
{
	if (j->j_ds == NULL || IJ(j)->ij_xchg != 0)
		return;
	island_job_go(j);
}

static void
island_exchange_done(void *arg, const struct exchange_result *r)
{
	struct job	*j = job_find((uint64_t)(uintptr_t)arg);
	size_t		 k;

	if (j == NULL || j->j_ds == NULL)
		return;
	IJ(j)->ij_xchg = 0;
	/* The time in migration: what the job waited for the exchange. */
	IJ(j)->ij_info.migration_ns += mono_ns() - IJ(j)->ij_xchg_t0;
	if (r->er_ok) {
		IJ(j)->ij_info.exchanges++;
		for (k = 0; k < r->er_nev; k++)
			IJ(j)->ij_info.exchanged_bytes += r->er_ev[k].ee_bytes;
	} else {
		IJ(j)->ij_info.exchanges_failed++;
		log_warnx("job %llu: migrant exchange failed: %s",
		    (unsigned long long)j->j_id, r->er_error);
	}
	/*
	 * The next epoch from the loop, not from here: a worker lost ends
	 * its exchange from worker_free(), before the core forgets it, and
	 * the epoch's tasks must not go to it.
	 */
	job_more(j);
}

static int
island_exchange_hook(struct job *j)
{
	struct island_job	*ij = IJ(j);
	uint32_t		 wids[ISLAND_MAX_P], n = 0, a, b, x, y;
	uint64_t		*bytes;
	struct worker		*w;
	char			 err[256];

	if (ij->ij_params.migrant_bytes == 0)
		return (0);
	for (a = 0; a < ij->ij_p.islands; a++) {
		w = worker_get(ij->ij_wid[a]);
		if (w == NULL || !exchange_capable(w))
			return (0);
		for (x = 0; x < n && wids[x] != ij->ij_wid[a]; x++)
			;
		if (x == n)
			wids[n++] = ij->ij_wid[a];
	}
	if (n < 2)
		return (0);
	bytes = xcalloc((size_t)n * n, sizeof(*bytes));
	ij->ij_xchg_t0 = mono_ns();
	for (a = 0; a < ij->ij_p.islands; a++)
		for (b = 0; b < ij->ij_p.islands; b++) {
			for (x = 0; wids[x] != ij->ij_wid[a]; x++)
				;
			for (y = 0; wids[y] != ij->ij_wid[b]; y++)
				;
			if (x != y)
				bytes[x * n + y] += ij->ij_params.migrant_bytes;
		}
	ij->ij_xchg = exchange_start(wids, n, bytes,
	    ij->ij_params.exchange_algo, 0, island_exchange_done,
	    (void *)(uintptr_t)j->j_id, err, sizeof(err));
	free(bytes);
	if (ij->ij_xchg == 0) {
		log_warnx("job %llu: no migrant exchange: %s",
		    (unsigned long long)j->j_id, err);
		return (0);
	}
	return (1);
}
/* >>>>>>>>>>>>>>>>>>>>>>>>>> END OF THE HOOK <<<<<<<<<<<<<<<<<<<<<<<<<<< */

static void
island_job_info(const struct job *j, R3q__JobInfo *info, int full)
{
	struct island_job	*ij = IJ(j);

	(void)full;
	info->islands = &ij->ij_info;
	ij->ij_info.n_island_best = ij->ij_info.epochs_done > 0 ?
	    ij->ij_p.islands : 0;
	ij->ij_info.island_best = ij->ij_ibest;
	if (ij->ij_best_x != NULL) {
		info->best = ij->ij_info.best;
		info->n_best_x = ij->ij_p.dim;
		info->best_x = ij->ij_best_x;
		ij->ij_info.n_best_x = ij->ij_p.dim;
		ij->ij_info.best_x = ij->ij_best_x;
	} else if (j->j_ngens > 0)
		info->best = j->j_gens[j->j_ngens - 1].g_best;
}

/* The journal's blob: the parameters and, once finished, the answer. */
static uint8_t *
island_job_pack(const struct job *j, size_t *len)
{
	struct island_job	*ij = IJ(j);
	uint8_t			*p;

	ij->ij_info.n_island_best = ij->ij_info.epochs_done > 0 ?
	    ij->ij_p.islands : 0;
	ij->ij_info.island_best = ij->ij_ibest;
	ij->ij_info.n_best_x = ij->ij_best_x != NULL ? ij->ij_p.dim : 0;
	ij->ij_info.best_x = ij->ij_best_x;
	*len = r3q__island_info__get_packed_size(&ij->ij_info);
	p = xcalloc(1, *len + 1);
	r3q__island_info__pack(&ij->ij_info, p);
	return (p);
}

static void
island_job_state(const struct job *j, R3q__JobState *st)
{
	struct island_job	*ij = IJ(j);

	if (ij->ij_best_x == NULL)
		return;
	st->best = ij->ij_info.best;
	st->n_best_x = ij->ij_p.dim;
	st->best_x = ij->ij_best_x;
}

/* The job ended: the states go, the answer stays. */
static void
island_job_end(struct job *j)
{
	struct island_job	*ij = IJ(j);
	uint32_t		 i;

	if (ij->ij_xchg != 0)
		exchange_cancel(ij->ij_xchg);
	ij->ij_xchg = 0;
	for (i = 0; ij->ij_state != NULL && i < ij->ij_p.islands; i++) {
		free(ij->ij_state[i]);
		free(ij->ij_next[i]);
	}
	free(ij->ij_state);
	free(ij->ij_next);
	ij->ij_state = ij->ij_next = NULL;
}

static void
island_job_free(struct job *j)
{
	struct island_job	*ij = IJ(j);

	if (ij == NULL)
		return;
	island_job_end(j);
	free(ij->ij_got);
	free(ij->ij_wid);
	free(ij->ij_ibest);
	free(ij->ij_best_x);
	free(ij->ij_params.exchange_algo);
	free(ij->ij_params.policy);
	free(ij);
	j->j_ds = NULL;
}

/* Replay: the outputs of the journal, epoch by epoch. */
struct island_load {
	struct job	*j;
	uint32_t	 gen;		/* the epoch under way */
	int		 bad;
	char		 err[200];
};

static int
island_job_load_result(void *arg, const struct journal_result *r)
{
	struct island_load	*il = arg;
	struct island_job	*ij = IJ(il->j);

	if (r->status != OUTCOME_OK || r->idx >= ij->ij_p.islands ||
	    il->bad)
		return (0);
	/* Only the last complete epoch and the one under way matter. */
	if (r->gen + 1 != il->gen && r->gen != il->gen)
		return (0);
	if (island_state_check(&ij->ij_p, r->idx, r->gen, r->output,
	    r->outlen, il->err, sizeof(il->err)) == -1) {
		il->bad = 1;
		return (0);
	}
	if (r->gen + 1 == il->gen)
		memcpy(ij->ij_state[r->idx], r->output, ij->ij_slen);
	else {
		memcpy(ij->ij_next[r->idx], r->output, ij->ij_slen);
		ij->ij_got[r->idx] = 1;
	}
	return (0);
}

/* An islands job from the journal: kept as it ended, or resumed. */
static int
island_job_load(struct job *j, const struct journal_job *row,
    const R3q__JobState *st, char *err, size_t errlen)
{
	struct journal		*jl = job_journal_handle();
	struct island_job	*ij;
	R3q__IslandInfo		*in;
	struct island_load	 il;
	enum sched_policy	 pol = SCHED_POLICY_R3Q;
	uint8_t			*have;
	uint32_t		 i, n, p;

	(void)st;
	j->j_ds = ij = xcalloc(1, sizeof(*ij));
	in = r3q__island_info__unpack(NULL, row->paramslen, row->params);
	if (in == NULL || in->params == NULL || island_job_params(in->params,
	    &ij->ij_p, err, errlen) == -1) {
		if (in == NULL || in->params == NULL)
			snprintf(err, errlen, "unreadable parameters");
		if (in != NULL)
			r3q__island_info__free_unpacked(in, NULL);
		r3q__island_params__init(&ij->ij_params);
		ij->ij_params.exchange_algo = xstrdup("?");
		ij->ij_params.policy = xstrdup("?");
		return (-1);
	}
	if (j->j_state == JOB_RUNNING && job_admit_memory(j, NULL,
	    island_job_memory(&ij->ij_p), err, errlen) == -1) {
		r3q__island_info__free_unpacked(in, NULL);
		r3q__island_params__init(&ij->ij_params);
		ij->ij_params.exchange_algo = xstrdup("?");
		ij->ij_params.policy = xstrdup("?");
		return (-1);
	}
	(void)sched_policy_parse(in->params->policy, &pol);
	j->j_policy = pol;
	j->j_qf = in->params->queue_factor;
	island_job_setup(j, in->params);
	p = ij->ij_p.islands;
	ij->ij_info.exchanged_bytes = in->exchanged_bytes;
	ij->ij_info.migration_ns = in->migration_ns;
	ij->ij_info.exchanges = in->exchanges;
	ij->ij_info.exchanges_failed = in->exchanges_failed;
	if (j->j_state != JOB_RUNNING) {
		ij->ij_info.epochs_done = in->epochs_done;
		ij->ij_info.migrations = in->migrations;
		ij->ij_info.migrant_bytes = in->migrant_bytes;
		ij->ij_info.digest = in->digest;
		ij->ij_info.best_island = in->best_island;
		ij->ij_info.best = in->best;
		if (in->n_island_best == p)
			memcpy(ij->ij_ibest, in->island_best,
			    p * sizeof(double));
		if (in->n_best_x == ij->ij_p.dim) {
			ij->ij_best_x = xcalloc(ij->ij_p.dim, sizeof(double));
			memcpy(ij->ij_best_x, in->best_x,
			    ij->ij_p.dim * sizeof(double));
		}
		r3q__island_info__free_unpacked(in, NULL);
		island_job_end(j);
		return (0);
	}
	r3q__island_info__free_unpacked(in, NULL);
	if (row->gen >= ij->ij_info.epochs) {
		snprintf(err, errlen, "epoch %u of %u", row->gen,
		    ij->ij_info.epochs);
		return (-1);
	}
	memset(&il, 0, sizeof(il));
	il.j = j;
	il.gen = row->gen;
	if (journal_load_results(jl, j->j_id,
	    island_job_load_result, &il) == -1) {
		snprintf(err, errlen, "%s", journal_error(jl));
		return (-1);
	}
	if (il.bad) {
		snprintf(err, errlen, "%s", il.err);
		return (-1);
	}
	/* The states at the last migration must all be there. */
	for (i = 0; row->gen > 0 && i < p; i++)
		if (island_state_check(&ij->ij_p, i, row->gen - 1,
		    ij->ij_state[i], ij->ij_slen, err, errlen) == -1)
			return (-1);
	ij->ij_info.epochs_done = row->gen;
	if (row->gen > 0)
		island_job_account(j);
	have = xcalloc(p, 1);
	for (i = 0, n = 0; i < p; i++)
		n += (have[i] = ij->ij_got[i]);
	while (j->j_ngens > 0 && j->j_gens[j->j_ngens - 1].g_gen >= row->gen)
		j->j_ngens--;
	log_info("job %llu resumed at epoch %u of %u, %u of its %u islands "
	    "done from the journal", (unsigned long long)j->j_id, row->gen,
	    ij->ij_info.epochs, n, p);
	island_job_start(j, row->first_task, have);
	free(have);
	return (0);
}

const struct job_driver job_island_driver = {
	.d_name = "islands",
	.d_flags = JD_DROP_RESULTS,
	.d_body = R3Q__ENVELOPE__BODY_SUBMIT_ISLANDS,
	.d_first = island_job_first,
	.d_submit = island_job_submit,
	.d_task = island_job_task,
	.d_result = island_job_result,
	.d_batch_done = island_job_batch_done,
	.d_next = island_job_next,
	.d_info = island_job_info,
	.d_params = island_job_pack,
	.d_state = island_job_state,
	.d_load = island_job_load,
	.d_end = island_job_end,
	.d_free = island_job_free,
	.d_more = island_exchange_go,
};

/*
 * What each kind of peer may send masterd, and how much of it, against
 * a hostile peer.  A frame is judged by its 8-byte header,
 * then by a look at its wire format (frame_peek, frame_count), before
 * protobuf-c unpacks a byte of it: a type the peer's role never sends,
 * a frame longer than its type needs, or a repeated field with more
 * elements than a well-behaved peer ever puts in one frame closes the
 * session, so that unpacking costs in proportion to useful content.
 *
 * masterd.conf(5) lists these limits; keep it in step.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "bnb/pfsp.h"
#include "masterd.h"

#define R_NONE		(1u << ROLE_NONE)
#define R_WORKER	(1u << ROLE_WORKER)
#define R_CLIENT	(1u << ROLE_CLIENT)
#define R_RELAY		(1u << ROLE_RELAY)
#define R_WR		(R_WORKER | R_RELAY)	/* a relay is a worker too */
#define R_JOINER	(1u << ROLE_JOINER)

#define SMALL		LIMIT_SMALL	/* bytes: a request of a few fields */
#define ANY		0		/* bytes: up to max_frame */

/* One message type a role may send. */
struct limit {
	uint32_t	 l_body;	/* Envelope field number */
	unsigned	 l_roles;
	uint64_t	 l_bytes;	/* 0: max_frame */
	uint64_t	 l_rep;		/* elements in one repeated field */
};

/* The configuration, which a reload overwrites in place (limits_init()). */
static const struct masterd_config	*conf;

static const struct limit limits[] = {
	/* A worker, before its hello and after. */
	{ R3Q__ENVELOPE__BODY_HELLO,	R_NONE,	  SMALL, KINDS_PER_WORKER },
	{ R3Q__ENVELOPE__BODY_RESULTS,	R_WR, ANY,	 FRAME_RESULTS_MAX },
	{ R3Q__ENVELOPE__BODY_PROGRESS,	R_WR, ANY,	 LIMIT_IDS },
	{ R3Q__ENVELOPE__BODY_HEARTBEAT, R_WR, 1u << 20, LIMIT_IDS },
	{ R3Q__ENVELOPE__BODY_KINDS,	R_WR, SMALL, KINDS_PER_WORKER },
	{ R3Q__ENVELOPE__BODY_ERROR,	R_WR, SMALL, 0 },
	{ R3Q__ENVELOPE__BODY_RELEASED,	R_WR, 1u << 20, LIMIT_IDS },
	{ R3Q__ENVELOPE__BODY_DRAIN,	R_WR, 1u << 20, LIMIT_IDS },
	{ R3Q__ENVELOPE__BODY_TASK_NEWS, R_WR, ANY,	 0 },
	/* Exchanges: a worker's report of its sends. */
	{ R3Q__ENVELOPE__BODY_PEER_REPORT, R_WR, ANY,	 LIMIT_IDS },
	/* A relay: its workers' bytes, in chunks, and streams. */
	{ R3Q__ENVELOPE__BODY_RELAY_DATA, R_RELAY, SMALL, 0 },
	{ R3Q__ENVELOPE__BODY_RELAY_CONTROL, R_RELAY, SMALL, RELAY_VIA_MAX },
	/* A joiner (no certificate), or a worker renewing its own. */
	{ R3Q__ENVELOPE__BODY_JOIN_REQUEST, R_JOINER | R_WR, SMALL, 0 },
	/* A client, TLS or the control socket. */
	{ R3Q__ENVELOPE__BODY_SUBMIT_ES, R_CLIENT, SMALL, 0 },
	{ R3Q__ENVELOPE__BODY_SUBMIT_BNB, R_CLIENT, 1u << 20,
	    (uint64_t)BNB_MAX_JOBS * BNB_MAX_MACHINES },
	{ R3Q__ENVELOPE__BODY_SUBMIT_ISLANDS, R_CLIENT, SMALL, 0 },
	{ R3Q__ENVELOPE__BODY_JOB_QUERY, R_CLIENT, SMALL, 0 },
	{ R3Q__ENVELOPE__BODY_LIST_JOBS, R_CLIENT, SMALL, 0 },
	{ R3Q__ENVELOPE__BODY_LIST_WORKERS, R_CLIENT, SMALL, 0 },
	{ R3Q__ENVELOPE__BODY_CANCEL_JOB, R_CLIENT, SMALL, 0 },
	{ R3Q__ENVELOPE__BODY_JOB_TRACE_REQUEST, R_CLIENT, SMALL, 0 },
	{ R3Q__ENVELOPE__BODY_OPEN_JOB,	R_CLIENT, SMALL, 0 },
	{ R3Q__ENVELOPE__BODY_SUBMIT_TASKS, R_CLIENT, ANY, BJ_TASKS_MAX },
	{ R3Q__ENVELOPE__BODY_CLOSE_BATCH, R_CLIENT, SMALL, 0 },
	{ R3Q__ENVELOPE__BODY_CANCEL_TASKS, R_CLIENT, ANY, LIMIT_IDS },
	{ R3Q__ENVELOPE__BODY_ACK_RESULTS, R_CLIENT, SMALL, 0 },
	{ R3Q__ENVELOPE__BODY_ATTACH_JOB, R_CLIENT, SMALL, 0 },
	{ R3Q__ENVELOPE__BODY_CLOSE_JOB, R_CLIENT, SMALL, 0 },
	{ R3Q__ENVELOPE__BODY_DRAIN_WORKER, R_CLIENT, SMALL, 0 },
	{ R3Q__ENVELOPE__BODY_TOKEN_CREATE, R_CLIENT, SMALL, 0 },
	{ R3Q__ENVELOPE__BODY_TOKEN_LIST, R_CLIENT, SMALL, 0 },
	{ R3Q__ENVELOPE__BODY_TOKEN_REVOKE, R_CLIENT, SMALL, 0 },
	{ R3Q__ENVELOPE__BODY_LINKS_REQUEST, R_CLIENT, SMALL, 0 },
	{ R3Q__ENVELOPE__BODY_EXCHANGE_REQUEST, R_CLIENT, SMALL, 0 },
};

/* Judge frames and jobs under configuration c from now on. */
void
limits_init(const struct masterd_config *c)
{
	conf = c;
}

static const char *
limits_role(enum role r)
{
	switch (r) {
	case ROLE_NONE:
		return ("a peer before its hello");
	case ROLE_WORKER:
		return ("a worker");
	case ROLE_RELAY:
		return ("a relay");
	case ROLE_JOINER:
		return ("a peer without a certificate (it may only send "
		    "join_request)");
	default:
		return ("a client");
	}
}

/* The longest frame a peer of role r may send: checked on its header. */
uint64_t
limits_frame_max(enum role r)
{
	return (r == ROLE_NONE || r == ROLE_JOINER ? SMALL :
	    conf->max_frame);
}

/*
 * Judge a frame by its body's type and length (fs_body, fs_len), known
 * from its first bytes; then, if count is set and the whole body is in
 * (fs_ptr), by its repeated fields.  Returns 0, or -1 with a message for
 * the peer and the log naming the type and the limit.
 */
int
limits_check(enum role r, struct frame_shape *fs, int count, char *err,
    size_t errlen)
{
	const struct limit	*l = NULL;
	uint64_t		 bytes;
	char			 why[160];
	size_t			 i;

	for (i = 0; i < sizeof(limits) / sizeof(limits[0]); i++)
		if (limits[i].l_body == fs->fs_body) {
			l = &limits[i];
			break;
		}
	if (fs->fs_body == 0) {
		snprintf(err, errlen, "unknown message type");
		return (-1);
	}
	if (l == NULL || (l->l_roles & (1u << r)) == 0) {
		if (r == ROLE_NONE)
			snprintf(err, errlen, "expected hello, got %s",
			    frame_type_name(fs->fs_body));
		else
			snprintf(err, errlen, "unexpected %s message from %s",
			    frame_type_name(fs->fs_body), limits_role(r));
		return (-1);
	}
	bytes = l->l_bytes != ANY ? l->l_bytes : conf->max_frame;
	if (fs->fs_len > bytes) {
		snprintf(err, errlen, "%s message of %zu bytes from %s: more "
		    "than its limit of %llu", frame_type_name(fs->fs_body),
		    fs->fs_len, limits_role(r), (unsigned long long)bytes);
		return (-1);
	}
	if (!count)
		return (0);
	/* A TaskSpec or a Result has a dozen fields: 16 each, and room. */
	if (frame_count(fs, l->l_rep, l->l_rep * 16 + 256, why,
	    sizeof(why)) == -1) {
		snprintf(err, errlen, "%s message from %s refused: %s",
		    frame_type_name(fs->fs_body), limits_role(r), why);
		return (-1);
	}
	return (0);
}

/*
 * May owner start another job (max_jobs, max_jobs_per_client)?  Only
 * running jobs count.  0, or -1 with the error for the client, the
 * refusal counted and logged.
 */
int
job_admit(const char *owner, char *err, size_t len)
{
	struct job	*j;
	unsigned	 n = 0, mine = 0;

	for (j = job_first(); j != NULL; j = job_next(j)) {
		if (j->j_state != JOB_RUNNING)
			continue;
		n++;
		if (strcmp(j->j_owner, owner) == 0)
			mine++;
	}
	if (n >= conf->max_jobs) {
		snprintf(err, len, "too many jobs: %u running (max_jobs); try "
		    "again when one has ended", n);
		server_refused(CAP_JOBS, owner, "a new job: %u running "
		    "(max_jobs)", n);
		return (-1);
	}
	if (mine >= conf->max_jobs_per_client) {
		snprintf(err, len, "too many jobs: %s has %u running "
		    "(max_jobs_per_client); try again when one has ended",
		    owner, mine);
		server_refused(CAP_JOBS_CLIENT, owner, "a new job: %u of its "
		    "own running (max_jobs_per_client)", mine);
		return (-1);
	}
	return (0);
}

/*
 * May j open another batch (max_batches_job, max_batches_client)?  Only
 * live batches count (those not yet ended: a closed batch whose tasks
 * still run is live), j's and then those of every job of its owner: a
 * batch that never ends, of a kind no worker offers, still costs the
 * core, so one client may not leave more than its share.  0, or -1
 * with the error for the client, naming the cap and the client, the
 * refusal counted and logged.
 */
int
job_admit_batch(const struct job *j, char *err, size_t len)
{
	const struct job	*o;
	uint64_t		 mine = 0;

	if (j->j_nlive >= conf->max_batches_job) {
		snprintf(err, len, "too many batches: job %llu of %s has %llu "
		    "not ended (max_batches_job); open one once another has "
		    "ended", (unsigned long long)j->j_id, j->j_owner,
		    (unsigned long long)j->j_nlive);
		server_refused(CAP_BATCHES_JOB, j->j_owner, "a new batch of "
		    "job %llu: %llu not ended (max_batches_job)",
		    (unsigned long long)j->j_id, (unsigned long long)j->j_nlive);
		return (-1);
	}
	for (o = job_first(); o != NULL; o = job_next(o))
		if (o->j_state == JOB_RUNNING &&
		    strcmp(o->j_owner, j->j_owner) == 0)
			mine += o->j_nlive;
	if (mine >= conf->max_batches_client) {
		snprintf(err, len, "too many batches: %s has %llu not ended "
		    "in its jobs (max_batches_client); open one once another "
		    "has ended", j->j_owner, (unsigned long long)mine);
		server_refused(CAP_BATCHES_CLIENT, j->j_owner, "a new batch: "
		    "%llu of its own not ended (max_batches_client)",
		    (unsigned long long)mine);
		return (-1);
	}
	return (0);
}

/* Tasks of j not yet ended (queued, held or running): a running count. */
uint64_t
job_pending(const struct job *j)
{
	return (j->j_pending);
}

/* Tasks of every running job not yet ended: a running count (job.c). */
uint64_t
job_pending_all(void)
{
	return (job_pending_total());
}

/*
 * May n more tasks be added to j (j NULL: to a new job)?  max_job_tasks
 * and max_queued_tasks bound the tasks not yet ended.  0, or -1 with the
 * error for the client, the refusal counted and logged.
 */
int
job_admit_tasks(const struct job *j, uint64_t n, char *err, size_t len)
{
	uint64_t	 mine = j != NULL ? job_pending(j) : 0;
	uint64_t	 all = job_pending_all();
	const char	*owner = j != NULL ? j->j_owner : "a client";

	if (mine + n > conf->max_job_tasks) {
		snprintf(err, len, "too many tasks: %llu more would make %llu "
		    "not yet ended in this job, more than max_job_tasks (%u)",
		    (unsigned long long)n, (unsigned long long)(mine + n),
		    conf->max_job_tasks);
		server_refused(CAP_JOB_TASKS, owner, "%llu tasks: %llu would "
		    "wait in one job (max_job_tasks)", (unsigned long long)n,
		    (unsigned long long)(mine + n));
		return (-1);
	}
	if (all + n > conf->max_queued_tasks) {
		snprintf(err, len, "too many tasks: %llu more would make %llu "
		    "not yet ended in all, more than max_queued_tasks (%u); "
		    "try again later", (unsigned long long)n,
		    (unsigned long long)(all + n), conf->max_queued_tasks);
		server_refused(CAP_QUEUED, owner, "%llu tasks: %llu would "
		    "wait in all (max_queued_tasks)", (unsigned long long)n,
		    (unsigned long long)(all + n));
		return (-1);
	}
	return (0);
}

/*
 * Bytes of running jobs' state and of every job's outcomes not yet
 * acknowledged: an ended batch job keeps those until its client takes
 * them or client_timeout passes (max_memory).
 */
uint64_t
job_memory_all(void)
{
	const struct job	*j;
	uint64_t		 n = 0;

	for (j = job_first(); j != NULL; j = job_next(j)) {
		if (j->j_state == JOB_RUNNING)
			n += j->j_mem;
		n += j->j_held;
	}
	return (n);
}

/*
 * May j (NULL: a new job of owner's) hold bytes more of state: an
 * evolution strategy's populations, an island model's states, a batch
 * job's payloads?  max_job_memory and max_memory bound what the clients'
 * parameters make masterd allocate, so that no request can exhaust its
 * memory.  A batch job's outcomes not yet acknowledged count too: they
 * cannot be refused, but a client that takes its outcomes without ever
 * acknowledging them can submit no more once they fill the job's share.
 * 0, or -1 with the error for the client, the refusal counted and logged.
 */
int
job_admit_memory(const struct job *j, const char *owner, uint64_t bytes,
    char *err, size_t len)
{
	uint64_t	 mine = j != NULL ? j->j_mem + j->j_held : 0;
	uint64_t	 all = job_memory_all();
	int		 n;

	if (j != NULL)
		owner = j->j_owner;
	if (mine > conf->max_job_memory ||
	    bytes > conf->max_job_memory - mine) {
		n = snprintf(err, len, "too much memory: %llu more bytes would "
		    "make this job's state %llu bytes, more than "
		    "max_job_memory (%llu)", (unsigned long long)bytes,
		    (unsigned long long)(mine + bytes),
		    (unsigned long long)conf->max_job_memory);
		if (j != NULL && j->j_held > 0 && n > 0 && (size_t)n < len)
			snprintf(err + n, len - n, "; %llu bytes of it are "
			    "outcomes not yet acknowledged",
			    (unsigned long long)j->j_held);
		server_refused(CAP_JOB_MEMORY, owner, "%llu bytes: one job "
		    "would hold %llu (max_job_memory)",
		    (unsigned long long)bytes,
		    (unsigned long long)(mine + bytes));
		return (-1);
	}
	if (bytes > conf->max_memory - (all < conf->max_memory ?
	    all : conf->max_memory)) {
		snprintf(err, len, "too much memory: %llu more bytes would "
		    "make the jobs' state %llu bytes, more than "
		    "max_memory (%llu); try again later",
		    (unsigned long long)bytes, (unsigned long long)(all + bytes),
		    (unsigned long long)conf->max_memory);
		server_refused(CAP_MEMORY, owner, "%llu bytes: the jobs would "
		    "hold %llu (max_memory)", (unsigned long long)bytes,
		    (unsigned long long)(all + bytes));
		return (-1);
	}
	return (0);
}

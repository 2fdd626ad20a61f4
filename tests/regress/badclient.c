/*
 * r3q-testpeer badclient: a batch-job client that speaks the protocol by
 * hand over TLS, to send what libr3q never would.
 *
 *   refusals		open a job and send one bad request after another,
 *			printing each answer "CASE: error: TEXT" (or "CASE:
 *			accepted" when none came within a second, or within
 *			R3Q_PEER_WAIT seconds: lib.sh sets it longer under
 *			a sanitizer, where a refusal took masterd 2 s)
 *   noread N SECS	open a job, submit N echo tasks of 64 KiB in one
 *			frame (N <= 250), close the batch, read nothing for
 *			SECS seconds, then read and print "got K outcomes"
 *			once all N came (exit 1 if not)
 *   noack N		open a job and, round after round, submit N echo
 *			tasks of 64 KiB in a batch of their own and read
 *			their outcomes without acknowledging them, until a
 *			round is refused: print "round R: refused: ERROR",
 *			acknowledge every outcome, submit that round again
 *			and print "round R again: got K outcomes"; exit 1
 *			if no round of 16 was refused or the last failed
 *   attach JOB		reattach to JOB; print "attached: STATE, acked A,
 *			seq S" and then every outcome not acknowledged,
 *			"outcome seq Q batch B key K status S[: ERROR]",
 *			and "got N outcomes" (exit 1 if not all); or the
 *			error
 *   jobs		list the jobs it may see: "job N STATE OWNER" lines
 *   cancel JOB		cancel JOB; print "cancelled" or the error
 *   touch JOB		every request that names a job, on JOB: attach,
 *			submit, closebatch, canceltasks, ack, closejob,
 *			cancel, query, trace; print "REQUEST: error: TEXT"
 *			or "REQUEST: answered" for each
 *   batches N [JOB]	open a job (or take JOB, which it must own) and
 *			submit one task of kind no-such-kind to each of
 *			its batches 1 to N (JOB: N+1 to 2N); print "job J"
 *			then "batch B: accepted" or "batch B: error: TEXT";
 *			the batches stay, waiting for a worker, when it
 *			leaves
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/time.h>

#include <openssl/ssl.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testpeer.h"
#include "util.h"

/* The answer to request id, or NULL after a silence (do_badclient). */
static Envelope *
bc_answer(uint64_t id)
{
	Envelope	*env;

	while ((env = recv_env()) != NULL) {
		if (env->id == id)
			return (env);
		frame_free(env);
	}
	return (NULL);
}

/* Open a batch job; its id, or 0. */
static uint64_t
bc_open(const char *name)
{
	Envelope	 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__OpenJob	 o = R3Q__OPEN_JOB__INIT;
	uint64_t	 job = 0;

	o.name = (char *)(uintptr_t)name;
	env.id = 1;
	env.body_case = R3Q__ENVELOPE__BODY_OPEN_JOB;
	env.open_job = &o;
	if (send_env(&env) == -1 || (ans = bc_answer(1)) == NULL)
		return (0);
	if (ans->body_case == R3Q__ENVELOPE__BODY_JOB_OPENED)
		job = ans->job_opened->job;
	else if (ans->body_case == R3Q__ENVELOPE__BODY_ERROR)
		printf("open: error: %s\n", ans->error->message);
	frame_free(ans);
	return (job);
}

/* Send n tasks (keys key0..) of len bytes to batch of job. */
static int
bc_submit(uint64_t id, uint64_t job, uint64_t batch, const char *kind,
    uint64_t key0, size_t n, size_t len, int64_t prio, uint32_t copies,
    int close)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__SubmitTasks st = R3Q__SUBMIT_TASKS__INIT;
	R3q__TaskSpec	*ts, **tp;
	uint8_t		*pay;
	size_t		 i;
	int		 rc;

	ts = xcalloc(n + 1, sizeof(*ts));
	tp = xcalloc(n + 1, sizeof(*tp));
	pay = xcalloc(1, len + 1);
	memset(pay, 'x', len);
	for (i = 0; i < n; i++) {
		r3q__task_spec__init(&ts[i]);
		ts[i].key = key0 + i;
		ts[i].payload.data = pay;
		ts[i].payload.len = len;
		ts[i].priority = prio;
		ts[i].copies = copies;
		tp[i] = &ts[i];
	}
	st.job = job;
	st.batch = batch;
	st.kind = (char *)(uintptr_t)kind;
	st.n_tasks = n;
	st.tasks = tp;
	st.close = close;
	env.id = id;
	env.body_case = R3Q__ENVELOPE__BODY_SUBMIT_TASKS;
	env.submit_tasks = &st;
	rc = send_env(&env);
	free(ts);
	free(tp);
	free(pay);
	return (rc);
}

/* Print what request id got: its error, or that none came. */
static void
bc_say(const char *what, uint64_t id)
{
	Envelope	*ans;

	if ((ans = bc_answer(id)) == NULL)
		printf("%s: accepted\n", what);
	else {
		if (ans->body_case == R3Q__ENVELOPE__BODY_ERROR)
			printf("%s: error: %s\n", what, ans->error->message);
		else
			printf("%s: %s\n", what, frame_body_name(ans));
		frame_free(ans);
	}
}

/* One frame whose keys are 7, 8, 7. */
static void
bc_dupframe(uint64_t id, uint64_t job)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__SubmitTasks st = R3Q__SUBMIT_TASKS__INIT;
	R3q__TaskSpec	 ts[3], *tp[3];
	size_t		 i;

	for (i = 0; i < 3; i++) {
		r3q__task_spec__init(&ts[i]);
		ts[i].key = i == 1 ? 8 : 7;
		tp[i] = &ts[i];
	}
	st.job = job;
	st.batch = 4;
	st.kind = (char *)(uintptr_t)"echo";
	st.n_tasks = 3;
	st.tasks = tp;
	env.id = id;
	env.body_case = R3Q__ENVELOPE__BODY_SUBMIT_TASKS;
	env.submit_tasks = &st;
	send_env(&env);
}

static int
bc_refusals(void)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__AckResults	 ack = R3Q__ACK_RESULTS__INIT;
	R3q__CloseBatch	 cb = R3Q__CLOSE_BATCH__INIT;
	uint64_t	 job;

	if ((job = bc_open("refusals")) == 0)
		return (1);
	bc_submit(10, job, 1, "echo", 1, 1, 2u << 20, 0, 1, 0);
	bc_say("oversize", 10);
	bc_submit(11, job, 1, "echo", 1, 0, 0, 0, 1, 1);
	bc_say("empty", 11);
	bc_submit(12, job, 1, "echo", 1, 1, 1, (int64_t)1 << 40, 1, 0);
	bc_say("priority", 12);
	bc_submit(13, job, 1, "echo", 1, 1, 1, 0, 17, 0);
	bc_say("copies", 13);
	bc_submit(14, job, 1, "", 1, 1, 1, 0, 1, 0);
	bc_say("nokind", 14);
	bc_submit(15, job, 0, "echo", 1, 1, 1, 0, 1, 0);
	bc_say("batch0", 15);
	bc_submit(16, job + 1000, 1, "echo", 1, 1, 1, 0, 1, 0);
	bc_say("nojob", 16);
	/* A good batch, closed; then more into it. */
	bc_submit(17, job, 2, "echo", 100, 3, 1, 0, 1, 1);
	bc_say("good", 17);
	bc_submit(18, job, 2, "echo", 200, 1, 1, 0, 1, 0);
	bc_say("afterclose", 18);
	/* The same keys again: a resubmission, skipped. */
	bc_submit(19, job, 2, "echo", 100, 3, 1, 0, 1, 1);
	bc_say("again", 19);
	bc_submit(20, job, 3, "echo", 300, 2, 1, 0, 1, 0);
	bc_say("dupkey-ok", 20);
	bc_submit(21, job, 3, "other-kind", 400, 1, 1, 0, 1, 0);
	bc_say("kindmix", 21);
	bc_dupframe(24, job);
	bc_say("dupframe", 24);
	cb.job = job;
	cb.batch = 99;
	env.id = 22;
	env.body_case = R3Q__ENVELOPE__BODY_CLOSE_BATCH;
	env.close_batch = &cb;
	send_env(&env);
	bc_say("nobatch", 22);
	ack.job = job;
	ack.seq = 1000000;
	env.id = 23;
	env.body_case = R3Q__ENVELOPE__BODY_ACK_RESULTS;
	env.ack_results = &ack;
	send_env(&env);
	bc_say("ackbeyond", 23);
	return (0);
}

/* Count outcomes until n came; 0 if they did. */
static int
bc_collect(uint64_t n)
{
	Envelope	*env;
	uint64_t	 got = 0;

	while (got < n && (env = recv_env()) != NULL) {
		if (env->body_case == R3Q__ENVELOPE__BODY_TASK_RESULTS)
			got += env->task_results->n_results;
		frame_free(env);
	}
	printf("got %llu outcomes\n", (unsigned long long)got);
	return (got == n ? 0 : 1);
}

/*
 * All the tasks go in one frame (at most max_frame): masterd reads a frame
 * whole, so it has them all before it stops reading from a client that
 * does not read its results, and the test cannot deadlock on its own
 * submission.
 */
static int
bc_noread(unsigned long n, unsigned secs)
{
	uint64_t	 job;

	if ((job = bc_open("noread")) == 0)
		return (1);
	if (bc_submit(100, job, 1, "echo", 1, n, 64 << 10, 0, 1, 1) == -1) {
		printf("submit failed\n");
		return (1);
	}
	printf("job %llu: %lu tasks sent\n", (unsigned long long)job, n);
	sleep(secs);
	return (bc_collect(n));
}

/*
 * One round of bc_noack: n echo tasks as batch r.  1 when all n outcomes
 * came (*seq the highest number), 0 when refused (printed), -1 on silence.
 */
static int
bc_noack_round(uint64_t job, uint64_t r, unsigned long n, uint64_t *seq)
{
	Envelope	*env;
	uint64_t	 id = 1000 + r, got = 0;
	size_t		 i;

	if (bc_submit(id, job, r, "echo", r * 1000, n, 64 << 10, 0, 1, 1) ==
	    -1)
		return (-1);
	while (got < n && (env = recv_env()) != NULL) {
		if (env->body_case == R3Q__ENVELOPE__BODY_ERROR &&
		    env->id == id) {
			printf("round %llu: refused: %s\n",
			    (unsigned long long)r, env->error->message);
			frame_free(env);
			return (0);
		}
		if (env->body_case == R3Q__ENVELOPE__BODY_TASK_RESULTS)
			for (i = 0; i < env->task_results->n_results; i++) {
				if (env->task_results->results[i]->seq > *seq)
					*seq = env->task_results->
					    results[i]->seq;
				got++;
			}
		frame_free(env);
	}
	return (got == n ? 1 : -1);
}

/*
 * A client that reads its outcomes but never acknowledges them: masterd
 * keeps them, counted against max_job_memory, so its submissions must
 * be refused before they fill masterd's memory, and taken again once it
 * acknowledges.
 */
static int
bc_noack(unsigned long n)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__AckResults	 ack = R3Q__ACK_RESULTS__INIT;
	uint64_t	 job, r, seq = 0;
	int		 rc;

	if ((job = bc_open("noack")) == 0)
		return (1);
	for (r = 1; r <= 16; r++) {
		if ((rc = bc_noack_round(job, r, n, &seq)) == 0)
			break;
		if (rc == -1) {
			printf("round %llu: not all outcomes came\n",
			    (unsigned long long)r);
			return (1);
		}
	}
	if (r > 16) {
		printf("16 rounds, never refused\n");
		return (1);
	}
	ack.job = job;
	ack.seq = seq;
	env.body_case = R3Q__ENVELOPE__BODY_ACK_RESULTS;
	env.ack_results = &ack;
	if (send_env(&env) == -1 ||
	    (rc = bc_noack_round(job, r + 100, n, &seq)) != 1) {
		printf("round %llu again: refused or lost\n",
		    (unsigned long long)r);
		return (1);
	}
	printf("round %llu again: got %lu outcomes\n", (unsigned long long)r,
	    n);
	return (0);
}

static int
bc_attach(uint64_t job)
{
	Envelope	 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__AttachJob	 a = R3Q__ATTACH_JOB__INIT;
	R3q__TaskOutcome *o;
	uint64_t	 n, got = 0;
	size_t		 i;

	a.job = job;
	env.id = 5;
	env.body_case = R3Q__ENVELOPE__BODY_ATTACH_JOB;
	env.attach_job = &a;
	if (send_env(&env) == -1 || (ans = bc_answer(5)) == NULL) {
		printf("no answer\n");
		return (1);
	}
	if (ans->body_case == R3Q__ENVELOPE__BODY_ERROR) {
		printf("error: %s\n", ans->error->message);
		frame_free(ans);
		return (0);
	}
	if (ans->body_case != R3Q__ENVELOPE__BODY_JOB_OPENED) {
		printf("no JobOpened\n");
		frame_free(ans);
		return (1);
	}
	printf("attached: %s, acked %llu, seq %llu\n", ans->job_opened->state,
	    (unsigned long long)ans->job_opened->acked,
	    (unsigned long long)ans->job_opened->seq);
	n = ans->job_opened->seq - ans->job_opened->acked;
	frame_free(ans);
	/* The outcomes not acknowledged, each printed. */
	while (got < n && (ans = recv_env()) != NULL) {
		if (ans->body_case == R3Q__ENVELOPE__BODY_TASK_RESULTS)
			for (i = 0; i < ans->task_results->n_results; i++) {
				o = ans->task_results->results[i];
				printf("outcome seq %llu batch %llu key %llu "
				    "status %u%s%s\n",
				    (unsigned long long)o->seq,
				    (unsigned long long)o->batch,
				    (unsigned long long)o->key, o->status,
				    o->error[0] != '\0' ? ": " : "", o->error);
				got++;
			}
		frame_free(ans);
	}
	printf("got %llu outcomes\n", (unsigned long long)got);
	return (got == n ? 0 : 1);
}

static int
bc_jobs(void)
{
	Envelope	 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__ListJobs	 l = R3Q__LIST_JOBS__INIT;
	size_t		 i;

	env.id = 6;
	env.body_case = R3Q__ENVELOPE__BODY_LIST_JOBS;
	env.list_jobs = &l;
	if (send_env(&env) == -1 || (ans = bc_answer(6)) == NULL ||
	    ans->body_case != R3Q__ENVELOPE__BODY_JOB_LIST) {
		printf("no list\n");
		return (1);
	}
	for (i = 0; i < ans->job_list->n_jobs; i++)
		printf("job %llu %s %s\n",
		    (unsigned long long)ans->job_list->jobs[i]->id,
		    ans->job_list->jobs[i]->state,
		    ans->job_list->jobs[i]->owner);
	frame_free(ans);
	return (0);
}

static int
bc_cancel(uint64_t job)
{
	Envelope	 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__CancelJob	 c = R3Q__CANCEL_JOB__INIT;

	c.job = job;
	env.id = 7;
	env.body_case = R3Q__ENVELOPE__BODY_CANCEL_JOB;
	env.cancel_job = &c;
	if (send_env(&env) == -1 || (ans = bc_answer(7)) == NULL) {
		printf("no answer\n");
		return (1);
	}
	if (ans->body_case == R3Q__ENVELOPE__BODY_ERROR)
		printf("error: %s\n", ans->error->message);
	else
		printf("cancelled\n");
	frame_free(ans);
	return (0);
}

/*
 * What request id got, told without waiting for a silence: a ListJobs
 * follows it, which masterd answers after it.  The error's text, or
 * NULL if it had none; the caller frees *ans.
 */
static const char *
bc_fenced(uint64_t id, Envelope **ans)
{
	Envelope	 env = R3Q__ENVELOPE__INIT, *a;
	R3q__ListJobs	 l = R3Q__LIST_JOBS__INIT;
	uint64_t	 fence = id + (1ULL << 40);

	*ans = NULL;
	env.id = fence;
	env.body_case = R3Q__ENVELOPE__BODY_LIST_JOBS;
	env.list_jobs = &l;
	if (send_env(&env) == -1)
		return ("cannot send");
	while ((a = recv_env()) != NULL) {
		if (a->id == id && a->body_case ==
		    R3Q__ENVELOPE__BODY_ERROR) {
			/* The fence's answer follows: read it too. */
			while ((*ans = recv_env()) != NULL &&
			    (*ans)->id != fence)
				frame_free(*ans);
			if (*ans != NULL)
				frame_free(*ans);
			*ans = a;
			return (a->error->message);
		}
		if (a->id == fence) {
			frame_free(a);
			return (NULL);
		}
		frame_free(a);
	}
	return ("no answer");
}

/* Print what request id got, as bc_fenced() tells it. */
static void
bc_told(const char *what, uint64_t id)
{
	Envelope	*ans;
	const char	*e;

	if ((e = bc_fenced(id, &ans)) == NULL)
		printf("%s: answered\n", what);
	else
		printf("%s: error: %s\n", what, e);
	if (ans != NULL)
		frame_free(ans);
}

/* Every request that names a job, on job (another's): each answer. */
static int
bc_touch(uint64_t job)
{
	Envelope		 env;
	R3q__AttachJob		 at = R3Q__ATTACH_JOB__INIT;
	R3q__CloseBatch		 cb = R3Q__CLOSE_BATCH__INIT;
	R3q__CancelTasks	 ct = R3Q__CANCEL_TASKS__INIT;
	R3q__AckResults		 ack = R3Q__ACK_RESULTS__INIT;
	R3q__CloseJob		 cj = R3Q__CLOSE_JOB__INIT;
	R3q__CancelJob		 cn = R3Q__CANCEL_JOB__INIT;
	R3q__JobQuery		 q = R3Q__JOB_QUERY__INIT;
	R3q__JobTraceRequest	 tr = R3Q__JOB_TRACE_REQUEST__INIT;
	uint64_t		 key = 1;

	at.job = cb.job = ct.job = ack.job = cj.job = cn.job = q.job =
	    tr.job = job;
	cb.batch = 1;
	ct.keys = &key;
	ct.n_keys = 1;
#define BC_SEND(i, name, c, f, m) do {					\
	r3q__envelope__init(&env);					\
	env.id = (i);							\
	env.body_case = (c);						\
	env.f = (m);							\
	if (send_env(&env) == -1)					\
		return (1);						\
	bc_told((name), (i));						\
} while (0)
	BC_SEND(11, "attach", R3Q__ENVELOPE__BODY_ATTACH_JOB, attach_job,
	    &at);
	if (bc_submit(12, job, 1, "echo", 1, 1, 8, 0, 1, 0) == -1)
		return (1);
	bc_told("submit", 12);
	BC_SEND(13, "closebatch", R3Q__ENVELOPE__BODY_CLOSE_BATCH,
	    close_batch, &cb);
	BC_SEND(14, "canceltasks", R3Q__ENVELOPE__BODY_CANCEL_TASKS,
	    cancel_tasks, &ct);
	BC_SEND(15, "ack", R3Q__ENVELOPE__BODY_ACK_RESULTS, ack_results,
	    &ack);
	BC_SEND(16, "closejob", R3Q__ENVELOPE__BODY_CLOSE_JOB, close_job,
	    &cj);
	BC_SEND(17, "cancel", R3Q__ENVELOPE__BODY_CANCEL_JOB, cancel_job,
	    &cn);
	BC_SEND(18, "query", R3Q__ENVELOPE__BODY_JOB_QUERY, job_query, &q);
	BC_SEND(19, "trace", R3Q__ENVELOPE__BODY_JOB_TRACE_REQUEST,
	    job_trace_request, &tr);
#undef BC_SEND
	return (0);
}

/* One task in each of n new batches of a job; each answer. */
static int
bc_batches(unsigned long n, uint64_t job)
{
	Envelope	*ans;
	const char	*e;
	uint64_t	 b, b0 = 1;

	if (job == 0) {
		if ((job = bc_open("batches")) == 0)
			return (1);
	} else
		b0 = n + 1;
	printf("job %llu\n", (unsigned long long)job);
	for (b = b0; b < b0 + n; b++) {
		if (bc_submit(100 + b, job, b, "no-such-kind", b, 1, 8, 0, 1,
		    0) == -1)
			return (1);
		if ((e = bc_fenced(100 + b, &ans)) == NULL)
			printf("batch %llu: accepted\n", (unsigned long long)b);
		else
			printf("batch %llu: error: %s\n",
			    (unsigned long long)b, e);
		if (ans != NULL)
			frame_free(ans);
	}
	return (0);
}

/*
 * Batch numbers a job no longer holds: batches 1-8 of one echo task each,
 * closed, all over, so that the first ones are forgotten (past the job's
 * last few); then new batches in the gaps and next to the runs (20, 12,
 * 9, 11, 10, each closed: their 5 outcomes say they were taken); once they
 * are over too, each number again with a new key (all closed, forgotten or
 * not), and 15, never opened.
 */
static int
bc_forgotten(void)
{
	static const uint64_t	 more[] = { 20, 12, 9, 11, 10 };
	static const uint64_t	 again[] = { 1, 9, 10, 11, 12, 20, 15 };
	uint64_t		 job, b;
	size_t			 i;
	char			 what[32];

	if ((job = bc_open("forgotten")) == 0)
		return (1);
	for (b = 1; b <= 8; b++)
		if (bc_submit(100 + b, job, b, "echo", b, 1, 8, 0, 1, 1) == -1)
			return (1);
	if (bc_collect(8) != 0)
		return (1);
	/* Each outcome of these says its batch was taken. */
	for (i = 0; i < sizeof(more) / sizeof(more[0]); i++)
		if (bc_submit(200 + i, job, more[i], "echo", 100 + more[i], 1,
		    8, 0, 1, 1) == -1)
			return (1);
	if (bc_collect(sizeof(more) / sizeof(more[0])) != 0)
		return (1);
	for (i = 0; i < sizeof(again) / sizeof(again[0]); i++) {
		if (bc_submit(300 + i, job, again[i], "echo", 1000 + again[i],
		    1, 8, 0, 1, 1) == -1)
			return (1);
		snprintf(what, sizeof(what), "again %llu",
		    (unsigned long long)again[i]);
		bc_told(what, 300 + i);
	}
	return (0);
}

int
do_badclient(SSL_CTX *ctx, const char *host, const char *port,
    const char *mode, const char *arg1, const char *arg2)
{
	struct timeval	 tv = { 1, 0 };
	const char	*w;
	int		 fd;

	if ((fd = tls_dial(ctx, host, port)) == -1)
		return (1);
	/* recv_env() gives up after a second of silence, or R3Q_PEER_WAIT. */
	if ((w = getenv("R3Q_PEER_WAIT")) != NULL && atoi(w) > 0)
		tv.tv_sec = atoi(w);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (strcmp(mode, "refusals") == 0)
		return (bc_refusals());
	if (strcmp(mode, "forgotten") == 0)
		return (bc_forgotten());
	if (strcmp(mode, "noread") == 0 && arg1 != NULL && arg2 != NULL) {
		tv.tv_sec = 30;
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		return (bc_noread(strtoul(arg1, NULL, 10),
		    (unsigned)strtoul(arg2, NULL, 10)));
	}
	if (strcmp(mode, "noack") == 0 && arg1 != NULL) {
		tv.tv_sec = 30;
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		return (bc_noack(strtoul(arg1, NULL, 10)));
	}
	if (strcmp(mode, "attach") == 0 && arg1 != NULL)
		return (bc_attach(strtoull(arg1, NULL, 10)));
	if (strcmp(mode, "jobs") == 0)
		return (bc_jobs());
	if (strcmp(mode, "cancel") == 0 && arg1 != NULL)
		return (bc_cancel(strtoull(arg1, NULL, 10)));
	if (strcmp(mode, "touch") == 0 && arg1 != NULL)
		return (bc_touch(strtoull(arg1, NULL, 10)));
	if (strcmp(mode, "batches") == 0 && arg1 != NULL)
		return (bc_batches(strtoul(arg1, NULL, 10), arg2 != NULL ?
		    strtoull(arg2, NULL, 10) : 0));
	printf("unknown badclient mode '%s'\n", mode);
	return (2);
}

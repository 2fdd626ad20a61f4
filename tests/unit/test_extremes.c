/*
 * Every message type at its extremes, from every kind of peer and out of
 * order (issue 24, "Bad input"): for each body of the Envelope's oneof --
 * enumerated from the protobuf-c descriptor, so a type added to
 * proto/r3q.proto is covered without a line here -- and each mode of
 * fuzz/pbgen.c (every field 0 or empty; small values; integers at their
 * maximum, +inf, 64K strings; signed minimums and NaN; repeated fields of
 * many empty elements; repeated fields and strings as large as the frame
 * limit allows), masterd gets the message through session_read() on a
 * fake session (fuzz/master.c):
 *
 *   worker   from worker w1 after its Hello (a Hello twice, an Assign
 *            sent to the master, a client's message on a worker session)
 *   client   from client c1 on the TLS port
 *   control  from the control socket
 *   early    from w1 before its Hello (a Result before Hello ...)
 *
 * and the test asserts: no crash (make check runs it under ASan too in an
 * --enable-fuzz build); a message that is not the peer's to send closes
 * the session; every message refused (the session closed, or an Error
 * answered) leaves a line in the log; and masterd is whole afterwards --
 * the batch job that was running before gets all its tasks done, by w1 if
 * it is still there or else by a worker that joins after.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <cmocka.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "log.h"
#include "master.h"
#include "pbgen.h"
#include "util.h"

enum ctx { CTX_WORKER, CTX_CLIENT, CTX_CONTROL, CTX_EARLY, CTX_N };
static const char *const ctx_names[CTX_N] = {
	"worker", "client", "control", "early"
};

static FILE	*logfile;		/* masterd's stderr */
static int	 saved_stderr = -1;
static size_t	 nchecked;

/* masterd's log goes to a file the test reads. */
static int
setup(void **state)
{
	(void)state;
	fflush(stderr);
	if ((logfile = tmpfile()) == NULL)
		return (-1);
	saved_stderr = dup(2);
	if (dup2(fileno(logfile), 2) == -1)
		return (-1);
	log_init("masterd", 1, LOG_DAEMON);
	log_setverbose(1);	/* refusals to clients are debug lines */
	return (0);
}

static int
teardown(void **state)
{
	(void)state;
	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	fclose(logfile);
	printf("# %zu messages checked\n", nchecked);
	return (0);
}

/*
 * A failure, said on the real standard error (cmocka's own message goes
 * to the log file with masterd's) with the end of masterd's log.
 */
#define FAIL(...) do {							\
	char	*tail_;							\
	long	 end_ = log_mark();					\
									\
	tail_ = log_since(end_ > 2000 ? end_ - 2000 : 0);		\
	dprintf(saved_stderr, "FAIL: ");				\
	dprintf(saved_stderr, __VA_ARGS__);				\
	dprintf(saved_stderr, "\nthe end of masterd's log:\n%s\n", tail_);\
	free(tail_);							\
	fail_msg(__VA_ARGS__);						\
} while (0)

static char	*log_since(long);

/* Where the log ends now. */
static long
log_mark(void)
{
	fflush(stderr);
	return (lseek(2, 0, SEEK_END));
}

/* The log written since mark, NUL-terminated (malloc'd). */
static char *
log_since(long mark)
{
	long	 end = log_mark();
	char	*buf;
	ssize_t	 n;

	buf = xcalloc(1, (size_t)(end - mark) + 1);
	n = pread(2, buf, (size_t)(end - mark), mark);
	if (n < 0)
		n = 0;
	buf[n] = '\0';
	return (buf);
}

/* Is a body of type id the peer's to send in context c? */
static int
ctx_may(enum ctx c, uint32_t id)
{
	switch (c) {
	case CTX_WORKER:
		return (id == R3Q__ENVELOPE__BODY_RESULTS ||
		    id == R3Q__ENVELOPE__BODY_PROGRESS ||
		    id == R3Q__ENVELOPE__BODY_HEARTBEAT ||
		    id == R3Q__ENVELOPE__BODY_KINDS ||
		    id == R3Q__ENVELOPE__BODY_RELEASED ||
		    id == R3Q__ENVELOPE__BODY_DRAIN ||
		    id == R3Q__ENVELOPE__BODY_TASK_NEWS ||
		    id == R3Q__ENVELOPE__BODY_PEER_REPORT ||
		    id == R3Q__ENVELOPE__BODY_JOIN_REQUEST ||
		    id == R3Q__ENVELOPE__BODY_ERROR);
	case CTX_CLIENT:
	case CTX_CONTROL:
		return ((id >= R3Q__ENVELOPE__BODY_SUBMIT_ES &&
		    id <= R3Q__ENVELOPE__BODY_SUBMIT_BNB) ||
		    id == R3Q__ENVELOPE__BODY_SUBMIT_ISLANDS ||
		    id == R3Q__ENVELOPE__BODY_DRAIN_WORKER ||
		    id == R3Q__ENVELOPE__BODY_TOKEN_CREATE ||
		    id == R3Q__ENVELOPE__BODY_TOKEN_LIST ||
		    id == R3Q__ENVELOPE__BODY_TOKEN_REVOKE ||
		    id == R3Q__ENVELOPE__BODY_LINKS_REQUEST ||
		    id == R3Q__ENVELOPE__BODY_EXCHANGE_REQUEST);
	case CTX_EARLY:
		return (id == R3Q__ENVELOPE__BODY_HELLO);
	default:
		return (0);
	}
}

/*
 * The frame of an Envelope whose body is field f at mode m, within the
 * frame limit (HUGE and EMPTY shrink until it fits).
 */
static uint8_t *
extreme_build(const ProtobufCFieldDescriptor *f, enum pbgen_mode m,
    size_t *len)
{
	ProtobufCMessage	*body;
	Envelope		 env;
	uint8_t			*buf;
	size_t			 scale = 1000000;

	for (;;) {
		r3q__envelope__init(&env);
		env.id = m == PBGEN_MAX ? UINT64_MAX : 9;
		body = pbgen_new(f->descriptor, m, scale);
		env.body_case = f->id;
		*(ProtobufCMessage **)((uint8_t *)&env + f->offset) = body;
		buf = frame_pack(&env, len);
		pbgen_free(body);
		if (buf == NULL)
			FAIL("%s: cannot pack", f->name);
		if (*len - FRAME_HDRLEN <= FRAME_MAX_DEFAULT ||
		    (m != PBGEN_HUGE && m != PBGEN_EMPTY) || scale < 2)
			return (buf);
		free(buf);
		scale /= 2;
	}
}

/*
 * The same frame, built once for the four contexts: building the EMPTY
 * and HUGE ones (a million elements, each its own allocation, packed one
 * by one) was 97 % of the test's CPU, masterd's handling of them 3 %, and
 * ASan makes each allocation dearer still.  A copy for the caller, which
 * frees it; about 150 MB are kept until the process ends.
 */
static uint8_t *
extreme_frame(const ProtobufCFieldDescriptor *f, enum pbgen_mode m,
    size_t *len)
{
	static struct {
		uint8_t	*buf;
		size_t	 len;
	}		 cache[256][PBGEN_NMODES];
	uint8_t		*buf;

	if (f->id >= 256)
		return (extreme_build(f, m, len));
	if (cache[f->id][m].buf == NULL)
		cache[f->id][m].buf = extreme_build(f, m,
		    &cache[f->id][m].len);
	*len = cache[f->id][m].len;
	if ((buf = malloc(*len)) == NULL)
		FAIL("%s: out of memory", f->name);
	memcpy(buf, cache[f->id][m].buf, *len);
	return (buf);
}

/* Read what masterd sent p: keep Assigns in *as, say if an Error came. */
static int
take_frames(struct fz_peer *p, Envelope ***as, size_t *nas)
{
	Envelope	*in;
	int		 error = 0;

	while (fz_recv(p, &in) == 1) {
		if (in->body_case == R3Q__ENVELOPE__BODY_ERROR)
			error = 1;
		if (in->body_case == R3Q__ENVELOPE__BODY_ASSIGN) {
			*as = reallocarray(*as, *nas + 1, sizeof(**as));
			(*as)[(*nas)++] = in;
		} else
			frame_free(in);
	}
	return (error);
}

/* Put frames back in front of what p has yet to read. */
static void
give_back(struct fz_peer *p, Envelope **as, size_t nas)
{
	struct evbuffer	*in = bufferevent_get_input(p->p_bev);
	struct evbuffer	*tmp = evbuffer_new();
	size_t		 i;

	for (i = 0; i < nas; i++) {
		frame_write(tmp, as[i]);
		frame_free(as[i]);
	}
	evbuffer_prepend_buffer(in, tmp);
	evbuffer_free(tmp);
	free(as);
}

/*
 * One message in one context: the checks of the top of this file.
 */
static void
check_one(enum ctx c, const ProtobufCFieldDescriptor *f, enum pbgen_mode m)
{
	struct fz_peer	 ctl, w, c1, w2, *to;
	struct job	*j;
	Envelope	**as = NULL;
	size_t		 nas = 0, len;
	uint8_t		*frame;
	uint64_t	 job;
	long		 mark;
	char		*said, what[128];
	int		 i, error, alive, joined = 0;

	snprintf(what, sizeof(what), "%s %s from a %s", pbgen_mode_name(m),
	    f->name, ctx_names[c]);
	fz_master_init(NULL);
	fz_peer_new(&ctl, 0, ROLE_CLIENT, NULL);
	job = fz_job_open(&ctl, FZ_NTASKS);
	if (job == 0)
		FAIL("%s: the job did not open", what);
	fz_peer_new(&w, 1, ROLE_NONE, "w1");
	if (c != CTX_EARLY) {
		fz_hello(&w, "w1", 4);
		joined = 1;
	}
	switch (c) {
	case CTX_CLIENT:
		fz_peer_new(&c1, 1, ROLE_CLIENT, "c1");
		to = &c1;
		break;
	case CTX_CONTROL:
		fz_peer_new(&c1, 0, ROLE_CLIENT, NULL);
		to = &c1;
		break;
	default:
		to = &w;
		break;
	}
	if (c == CTX_WORKER || c == CTX_EARLY)
		take_frames(&w, &as, &nas);	/* Welcome, Assign */

	frame = extreme_frame(f, m, &len);
	mark = log_mark();
	fz_write(to, frame, len);
	fz_run();
	free(frame);
	nchecked++;

	alive = fz_peer_alive(to);
	error = to == &w ? take_frames(&w, &as, &nas) :
	    take_frames(to, &as, &nas);
	said = log_since(mark);
	if (!ctx_may(c, f->id) && alive)
		FAIL("%s: the session stays open", what);
	if ((!alive || error) && said[0] == '\0')
		FAIL("%s: refused without a line in the log", what);
	free(said);

	/* masterd is whole: the job gets done, by w1 or by w2. */
	if (c == CTX_EARLY && alive && fz_peer_alive(&w) &&
	    worker_count() > 0)
		joined = 1;		/* its Hello was a good one */
	if (joined && fz_peer_alive(&w)) {
		give_back(&w, as, nas);
		for (i = 0; i < 8 && fz_work(&w) > 0; i++)
			;
	} else {
		for (i = 0; i < (int)nas; i++)
			frame_free(as[i]);
		free(as);
	}
	/* A worker that drains (issue 25) gets nothing more: w2 does it. */
	if (!joined || !fz_peer_alive(&w) ||
	    (c == CTX_WORKER && f->id == R3Q__ENVELOPE__BODY_DRAIN)) {
		fz_peer_new(&w2, 1, ROLE_NONE, "w2");
		fz_hello(&w2, "w2", 4);
		for (i = 0; i < 8 && fz_work(&w2) > 0; i++)
			;
		fz_peer_free(&w2);
	}
	if ((j = job_find(job)) == NULL)
		FAIL("%s: job %llu is gone", what,
		    (unsigned long long)job);
	/*
	 * Every task ended; done, unless the control socket (whose job it
	 * is) was told to cancel them.
	 */
	if (j->j_seq != FZ_NTASKS || (j->j_done != FZ_NTASKS &&
	    !(c == CTX_CONTROL && (f->id == R3Q__ENVELOPE__BODY_CANCEL_JOB ||
	    f->id == R3Q__ENVELOPE__BODY_CANCEL_TASKS))))
		FAIL("%s: job %llu did %llu of its %d tasks (%llu ended)",
		    what, (unsigned long long)job,
		    (unsigned long long)j->j_done, FZ_NTASKS,
		    (unsigned long long)j->j_seq);

	if (to != &w)
		fz_peer_free(to);
	fz_peer_free(&w);
	fz_peer_free(&ctl);
	fz_run();
	fz_master_free();
}

/* Every body type of the Envelope, every mode, in context c. */
static void
check_ctx(enum ctx c)
{
	const ProtobufCMessageDescriptor *d = &r3q__envelope__descriptor;
	size_t				 i;
	enum pbgen_mode			 m;
	unsigned			 ntypes = 0;
	const char			*only = getenv("EXTREMES_CTX");

	/* EXTREMES_CTX=worker (client ...) runs one context alone. */
	if (only != NULL && strcmp(only, ctx_names[c]) != 0)
		skip();
	for (i = 0; i < d->n_fields; i++) {
		if (!(d->fields[i].flags & PROTOBUF_C_FIELD_FLAG_ONEOF))
			continue;
		ntypes++;
		for (m = 0; m < PBGEN_NMODES; m++)
			check_one(c, &d->fields[i], m);
	}
	/* the oneof is there: a descriptor change would show */
	assert_true(ntypes >= 30);
}

static void
test_worker(void **state)
{
	(void)state;
	check_ctx(CTX_WORKER);
}

static void
test_client(void **state)
{
	(void)state;
	check_ctx(CTX_CLIENT);
}

static void
test_control(void **state)
{
	(void)state;
	check_ctx(CTX_CONTROL);
}

static void
test_early(void **state)
{
	(void)state;
	check_ctx(CTX_EARLY);
}

/*
 * Found by fuzz/master-worker: a worker that answers for its tasks in the
 * same read as its Hello (a reconnection: the tags stay valid) was sent
 * them again, in an Assign whose payloads the results had freed.  Now the
 * answered copies leave the Assign being built; the job is done at once.
 */
static void
test_answered_before_assign(void **state)
{
	struct fz_peer	 ctl, w, w0;
	struct evbuffer	*answers;
	Envelope	**as = NULL, *in;
	struct job	*j;
	size_t		 nas = 0, i, k;
	uint8_t		 buf[65536];
	int		 n;

	(void)state;
	/* w0 learns the Assign w1 will get: the same tags (same name) */
	fz_master_init(NULL);
	fz_peer_new(&ctl, 0, ROLE_CLIENT, NULL);
	fz_job_open(&ctl, FZ_NTASKS);
	fz_peer_new(&w0, 1, ROLE_NONE, "w1");
	fz_hello(&w0, "w1", 4);
	take_frames(&w0, &as, &nas);
	assert_int_equal(nas, 1);
	fz_peer_free(&w0);
	fz_peer_free(&ctl);
	fz_run();
	fz_master_free();

	/* the answers, written by fz_work into a peer we read back */
	fz_master_init(NULL);
	fz_peer_new(&ctl, 0, ROLE_CLIENT, NULL);
	fz_job_open(&ctl, FZ_NTASKS);
	fz_peer_new(&w, 1, ROLE_NONE, "w1");
	answers = evbuffer_new();
	fz_hello_buf(answers, "w1", 4);
	for (i = 0; i < nas; i++)
		fz_results_buf(answers, as[i]->assign);
	for (i = 0; i < nas; i++)
		frame_free(as[i]);
	free(as);
	while ((n = evbuffer_remove(answers, buf, sizeof(buf))) > 0)
		fz_write(&w, buf, (size_t)n);
	evbuffer_free(answers);
	fz_run();
	while (fz_recv(&w, &in) == 1) {
		if (in->body_case == R3Q__ENVELOPE__BODY_ASSIGN)
			for (k = 0; k < in->assign->n_tasks; k++)
				if (in->assign->tasks[k]->id <= FZ_NTASKS)
					FAIL("task %llu sent after its result",
					    (unsigned long long)
					    in->assign->tasks[k]->id);
		frame_free(in);
	}
	assert_non_null(j = job_find(1));
	assert_int_equal(j->j_done, FZ_NTASKS);
	fz_peer_free(&w);
	fz_peer_free(&ctl);
	fz_run();
	fz_master_free();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_worker),
		cmocka_unit_test(test_client),
		cmocka_unit_test(test_control),
		cmocka_unit_test(test_early),
		cmocka_unit_test(test_answered_before_assign),
	};

	return (cmocka_run_group_tests(tests, setup, teardown));
}

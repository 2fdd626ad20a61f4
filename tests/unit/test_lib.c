/*
 * libr3q against a fake master: a thread on a UNIX socket in a temporary
 * directory that speaks the batch-job protocol with common/frame.c.  It
 * can echo payloads as outputs at once, answer in reverse, hold tasks
 * until told, fail or kill tasks by their payload ("fail:", "kill:"),
 * refuse a frame holding "bad", close the connection and take the
 * reconnect, and send results again that were delivered but not acked.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "frame.h"
#include "r3q.h"

#define FAKE_JOB	7
#define FAKE_MAXKEYS	200000

enum fake_mode {
	FM_HOLD,		/* results only when the test says */
	FM_ECHO,		/* each frame's results at once */
	FM_REVERSE		/* each frame's results at once, last first */
};

struct fake_task {
	int		 known;
	uint64_t	 batch;
	char		*payload;
	size_t		 len;
};

struct fake_outcome {
	uint64_t	 key;
	uint32_t	 status;
	char		*output;
	size_t		 len;
	const char	*error;
};

enum fake_cmd_type { FC_RESULT, FC_CLOSE };

struct fake_cmd {
	enum fake_cmd_type	 type;
	uint64_t		 key;
};

struct fake {
	pthread_t		 th;
	pthread_mutex_t		 mtx;
	pthread_cond_t		 cond;
	char			 dir[64];
	char			 path[128];
	int			 lfd;
	int			 cfd;
	int			 ctl[2];
	int			 stop;
	enum fake_mode		 mode;
	uint64_t		 max_payload;

	struct fake_cmd		 cmds[64];
	size_t			 ncmds;

	struct fake_task	*tasks;		/* by key */
	size_t			 ntasks;	/* distinct keys taken */
	size_t			 nskipped;	/* keys sent again */
	struct fake_outcome	*outs;		/* by seq */
	uint64_t		 seq;
	uint64_t		 acked;
	size_t			 nacks;		/* AckResults frames */
	int			 nopen;
	int			 nconn;
	int			 nattach;
	uint64_t		 attach_acked;
	size_t			 nresubmit;	/* tasks after a reconnect */
	uint64_t		 resubmit_min, resubmit_max;
	int			 resubmit_close;
	int			 nrefused;
	size_t			 ncancelled;
	uint64_t		 cancelled_key;
	int			 nclosebatch;
	size_t			 nclosed;	/* closes: a flag or a frame */
	int			 nsubmit;
	int			 closing;	/* half closed: ignore input */
};

/* Write a whole frame, blocking. */
static void
fake_send(struct fake *fk, Envelope *env)
{
	uint8_t	*buf;
	size_t	 len, off = 0;
	ssize_t	 n;

	if (fk->cfd == -1)
		return;
	buf = frame_pack(env, &len);
	assert_non_null(buf);
	while (off < len) {
		n = send(fk->cfd, buf + off, len - off, MSG_NOSIGNAL);
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	free(buf);
}

/* Read exactly len bytes; -1 at the end. */
static int
fake_readn(int fd, uint8_t *buf, size_t len)
{
	ssize_t	 n;

	while (len > 0) {
		n = read(fd, buf, len);
		if (n <= 0)
			return (-1);
		buf += n;
		len -= (size_t)n;
	}
	return (0);
}

/* Send the outcomes from seq `from` to `to` as one TaskResults. */
static void
fake_send_outcomes(struct fake *fk, uint64_t from, uint64_t to)
{
	R3q__TaskResults	 tr;
	R3q__TaskOutcome	*os, **op;
	Envelope		 env;
	uint64_t		 s;
	size_t			 n = 0;

	if (from > to)
		return;
	os = calloc(to - from + 1, sizeof(*os));
	op = calloc(to - from + 1, sizeof(*op));
	assert_non_null(os);
	assert_non_null(op);
	for (s = from; s <= to; s++, n++) {
		r3q__task_outcome__init(&os[n]);
		os[n].key = fk->outs[s].key;
		os[n].seq = s;
		os[n].status = fk->outs[s].status;
		os[n].output.data = (uint8_t *)fk->outs[s].output;
		os[n].output.len = fk->outs[s].len;
		os[n].error = (char *)(uintptr_t)fk->outs[s].error;
		os[n].batch = fk->tasks[os[n].key].batch;
		op[n] = &os[n];
	}
	r3q__task_results__init(&tr);
	tr.job = FAKE_JOB;
	tr.n_results = n;
	tr.results = op;
	r3q__envelope__init(&env);
	env.body_case = R3Q__ENVELOPE__BODY_TASK_RESULTS;
	env.task_results = &tr;
	fake_send(fk, &env);
	free(os);
	free(op);
}

/* Record the outcome of key (by its payload) under the next seq. */
static uint64_t
fake_outcome(struct fake *fk, uint64_t key, uint32_t status)
{
	struct fake_task	*t = &fk->tasks[key];
	struct fake_outcome	*o;

	o = &fk->outs[++fk->seq];
	o->key = key;
	o->status = status;
	o->error = NULL;
	o->output = NULL;
	o->len = 0;
	if (status == 0 && strncmp(t->payload, "fail:", 5) == 0) {
		o->status = 1;
		o->error = "boom";
	} else if (status == 0 && strncmp(t->payload, "kill:", 5) == 0) {
		o->status = 2;
		o->error = "lost 3 workers running it";
	} else if (o->status == 0) {
		o->output = t->payload;
		o->len = t->len;
	}
	return (fk->seq);
}

static void
fake_error(struct fake *fk, uint64_t id, const char *msg)
{
	R3q__Error	 e;
	Envelope	 env;

	r3q__error__init(&e);
	e.message = (char *)(uintptr_t)msg;
	r3q__envelope__init(&env);
	env.id = id;
	env.body_case = R3Q__ENVELOPE__BODY_ERROR;
	env.error = &e;
	fake_send(fk, &env);
}

static void
fake_opened(struct fake *fk, uint64_t id, uint64_t acked)
{
	R3q__JobOpened	 jo;
	Envelope	 env;

	r3q__job_opened__init(&jo);
	jo.job = FAKE_JOB;
	jo.acked = acked;
	jo.seq = fk->seq;
	jo.max_payload = fk->max_payload;
	jo.state = (char *)(uintptr_t)"running";
	r3q__envelope__init(&env);
	env.id = id;
	env.body_case = R3Q__ENVELOPE__BODY_JOB_OPENED;
	env.job_opened = &jo;
	fake_send(fk, &env);
}

static void
fake_info(struct fake *fk, uint64_t id, const char *state)
{
	R3q__JobInfo	 ji;
	Envelope	 env;

	r3q__job_info__init(&ji);
	ji.id = FAKE_JOB;
	ji.state = (char *)(uintptr_t)state;
	r3q__envelope__init(&env);
	env.id = id;
	env.body_case = R3Q__ENVELOPE__BODY_JOB_INFO;
	env.job_info = &ji;
	fake_send(fk, &env);
}

/* A SubmitTasks: refuse it whole, or take its new keys. */
static void
fake_submit(struct fake *fk, uint64_t id, const R3q__SubmitTasks *st)
{
	uint64_t	 first, k;
	size_t		 i, n;

	if (st->job != FAKE_JOB) {
		fake_error(fk, id, "unknown job");
		return;
	}
	for (i = 0; i < st->n_tasks; i++) {
		if (st->tasks[i]->payload.len == 3 &&
		    memcmp(st->tasks[i]->payload.data, "bad", 3) == 0) {
			fk->nrefused++;
			fake_error(fk, id, "task 'bad' is refused");
			return;
		}
	}
	fk->nsubmit++;
	if (st->close)
		fk->nclosed++;
	first = fk->seq + 1;
	for (i = 0; i < st->n_tasks; i++) {
		k = st->tasks[i]->key;
		assert_true(k > 0 && k < FAKE_MAXKEYS);
		if (fk->nconn > 1) {
			fk->nresubmit++;
			if (fk->resubmit_min == 0 || k < fk->resubmit_min)
				fk->resubmit_min = k;
			if (k > fk->resubmit_max)
				fk->resubmit_max = k;
			if (st->close)
				fk->resubmit_close = 1;
		}
		if (fk->tasks[k].known) {
			fk->nskipped++;
			continue;
		}
		fk->tasks[k].known = 1;
		fk->tasks[k].batch = st->batch;
		fk->tasks[k].len = st->tasks[i]->payload.len;
		fk->tasks[k].payload = malloc(fk->tasks[k].len + 1);
		assert_non_null(fk->tasks[k].payload);
		memcpy(fk->tasks[k].payload, st->tasks[i]->payload.data,
		    fk->tasks[k].len);
		fk->tasks[k].payload[fk->tasks[k].len] = '\0';
		fk->ntasks++;
	}
	if (fk->mode == FM_HOLD)
		return;
	n = st->n_tasks;
	for (i = 0; i < n; i++) {
		k = st->tasks[fk->mode == FM_REVERSE ? n - 1 - i : i]->key;
		fake_outcome(fk, k, 0);
	}
	fake_send_outcomes(fk, first, fk->seq);
}

/* One frame from the client. */
static void
fake_handle(struct fake *fk, Envelope *env)
{
	uint64_t	 first;
	size_t		 i;

	switch (env->body_case) {
	case R3Q__ENVELOPE__BODY_OPEN_JOB:
		fk->nopen++;
		fake_opened(fk, env->id, 0);
		break;
	case R3Q__ENVELOPE__BODY_SUBMIT_TASKS:
		fake_submit(fk, env->id, env->submit_tasks);
		break;
	case R3Q__ENVELOPE__BODY_ACK_RESULTS:
		assert_int_equal(env->ack_results->job, FAKE_JOB);
		assert_true(env->ack_results->seq <= fk->seq);
		fk->acked = env->ack_results->seq;
		fk->nacks++;
		break;
	case R3Q__ENVELOPE__BODY_CANCEL_TASKS:
		first = fk->seq + 1;
		for (i = 0; i < env->cancel_tasks->n_keys; i++) {
			fk->ncancelled++;
			fk->cancelled_key = env->cancel_tasks->keys[i];
			fake_outcome(fk, fk->cancelled_key, 3);
		}
		fake_send_outcomes(fk, first, fk->seq);
		break;
	case R3Q__ENVELOPE__BODY_CLOSE_BATCH:
		fk->nclosebatch++;
		fk->nclosed++;
		break;
	case R3Q__ENVELOPE__BODY_ATTACH_JOB:
		/*
		 * As a master whose acks were lost: every result after the
		 * last AckResults that arrived comes again, including some
		 * the client has stored already.
		 */
		fk->nattach++;
		fk->attach_acked = env->attach_job->acked;
		fake_opened(fk, env->id, fk->acked);
		fake_send_outcomes(fk, fk->acked + 1, fk->seq);
		break;
	case R3Q__ENVELOPE__BODY_CLOSE_JOB:
		fake_info(fk, env->id, "done");
		break;
	case R3Q__ENVELOPE__BODY_CANCEL_JOB:
		fake_info(fk, env->id, "cancelled");
		break;
	default:
		fail_msg("unexpected %s from the client",
		    frame_body_name(env));
	}
}

/* Commands from the test, run in the fake's thread. */
static void
fake_commands(struct fake *fk)
{
	struct fake_cmd	 c;
	uint64_t	 s;
	size_t		 i;

	for (i = 0; i < fk->ncmds; i++) {
		c = fk->cmds[i];
		switch (c.type) {
		case FC_RESULT:
			s = fake_outcome(fk, c.key, 0);
			fake_send_outcomes(fk, s, s);
			break;
		case FC_CLOSE:
			/*
			 * Half close: the client reads everything sent
			 * before the end, and what it sends after (an ack)
			 * is lost, as with a master that went away.
			 */
			if (fk->cfd != -1)
				shutdown(fk->cfd, SHUT_WR);
			fk->closing = 1;
			break;
		}
	}
	fk->ncmds = 0;
}

static void *
fake_main(void *arg)
{
	struct fake	*fk = arg;
	struct pollfd	 pfd[2];
	Envelope	*env;
	uint8_t		 hdr[FRAME_HDRLEN], *body, c;
	uint32_t	 len;
	char		 err[256];
	int		 fd;

	pthread_mutex_lock(&fk->mtx);
	while (!fk->stop) {
		pfd[0].fd = fk->ctl[0];
		pfd[0].events = POLLIN;
		pfd[1].fd = fk->cfd != -1 ? fk->cfd : fk->lfd;
		pfd[1].events = POLLIN;
		pthread_mutex_unlock(&fk->mtx);
		if (poll(pfd, 2, -1) == -1 && errno != EINTR)
			fail_msg("poll: %s", strerror(errno));
		pthread_mutex_lock(&fk->mtx);
		if (pfd[0].revents & POLLIN) {
			if (read(fk->ctl[0], &c, 1) != 1)
				break;
			fake_commands(fk);
		}
		if (!(pfd[1].revents & (POLLIN | POLLHUP)))
			goto next;
		if (fk->cfd == -1) {
			if ((fd = accept4(fk->lfd, NULL, NULL, SOCK_CLOEXEC)) != -1) {
				fk->cfd = fd;
				fk->nconn++;
			}
			goto next;
		}
		if (fake_readn(fk->cfd, hdr, sizeof(hdr)) == -1) {
			close(fk->cfd);
			fk->cfd = -1;
			fk->closing = 0;
			goto next;
		}
		assert_int_equal(frame_header_decode(hdr, 64u << 20, &len, err,
		    sizeof(err)), 0);
		body = malloc(len ? len : 1);
		assert_non_null(body);
		assert_int_equal(fake_readn(fk->cfd, body, len), 0);
		assert_int_equal(frame_unpack(body, len, 64u << 20, &env, err,
		    sizeof(err)), 0);
		free(body);
		if (!fk->closing)
			fake_handle(fk, env);
		frame_free(env);
next:
		pthread_cond_broadcast(&fk->cond);
	}
	pthread_mutex_unlock(&fk->mtx);
	return (NULL);
}

static struct fake *
fake_start(enum fake_mode mode)
{
	struct fake		*fk;
	struct sockaddr_un	 sun;

	fk = calloc(1, sizeof(*fk));
	assert_non_null(fk);
	fk->tasks = calloc(FAKE_MAXKEYS, sizeof(*fk->tasks));
	fk->outs = calloc(FAKE_MAXKEYS * 2, sizeof(*fk->outs));
	assert_non_null(fk->tasks);
	assert_non_null(fk->outs);
	fk->mode = mode;
	fk->cfd = -1;
	pthread_mutex_init(&fk->mtx, NULL);
	pthread_cond_init(&fk->cond, NULL);
	snprintf(fk->dir, sizeof(fk->dir), "/tmp/test_lib.XXXXXX");
	assert_non_null(mkdtemp(fk->dir));
	snprintf(fk->path, sizeof(fk->path), "%s/masterd.sock", fk->dir);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strcpy(sun.sun_path, fk->path);
	fk->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fk->lfd != -1);
	assert_int_equal(bind(fk->lfd, (struct sockaddr *)&sun, sizeof(sun)),
	    0);
	assert_int_equal(listen(fk->lfd, 4), 0);
	assert_int_equal(pipe2(fk->ctl, O_CLOEXEC), 0);
	assert_int_equal(pthread_create(&fk->th, NULL, fake_main, fk), 0);
	return (fk);
}

/* Tell the fake's thread to look at its commands. */
static void
fake_poke(struct fake *fk)
{
	char	 c = 0;

	assert_int_equal(write(fk->ctl[1], &c, 1), 1);
}

static void
fake_stop(struct fake *fk)
{
	size_t	 i;

	pthread_mutex_lock(&fk->mtx);
	fk->stop = 1;
	pthread_mutex_unlock(&fk->mtx);
	fake_poke(fk);
	pthread_join(fk->th, NULL);
	if (fk->cfd != -1)
		close(fk->cfd);
	close(fk->lfd);
	close(fk->ctl[0]);
	close(fk->ctl[1]);
	unlink(fk->path);
	rmdir(fk->dir);
	for (i = 0; i < FAKE_MAXKEYS; i++)
		free(fk->tasks[i].payload);
	free(fk->tasks);
	free(fk->outs);
	free(fk);
}

/* Queue a command for the fake's thread. */
static void
fake_cmd(struct fake *fk, enum fake_cmd_type type, uint64_t key)
{
	pthread_mutex_lock(&fk->mtx);
	assert_true(fk->ncmds < sizeof(fk->cmds) / sizeof(fk->cmds[0]));
	fk->cmds[fk->ncmds].type = type;
	fk->cmds[fk->ncmds].key = key;
	fk->ncmds++;
	pthread_mutex_unlock(&fk->mtx);
	fake_poke(fk);
}

/* Wait (up to 10 s) until *field reaches want. */
static void
fake_wait(struct fake *fk, const size_t *field, size_t want)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 10;
	pthread_mutex_lock(&fk->mtx);
	while (*field < want)
		if (pthread_cond_timedwait(&fk->cond, &fk->mtx, &ts) != 0)
			break;
	assert_true(*field >= want);
	pthread_mutex_unlock(&fk->mtx);
}

struct env {
	struct fake	*fk;
	struct r3q	*r;
	struct r3q_job	*job;
};

static struct env *
env_new(enum fake_mode mode, uint64_t max_payload)
{
	struct r3q_options	 o;
	struct r3q_job_options	 jo;
	struct env		*e;
	char			 err[256];

	e = calloc(1, sizeof(*e));
	assert_non_null(e);
	e->fk = fake_start(mode);
	e->fk->max_payload = max_payload;
	memset(&o, 0, sizeof(o));
	o.control = e->fk->path;
	e->r = r3q_connect(&o, err, sizeof(err));
	if (e->r == NULL)
		fail_msg("r3q_connect: %s", err);
	memset(&jo, 0, sizeof(jo));
	jo.name = "test";
	e->job = r3q_job_open(e->r, &jo);
	if (e->job == NULL)
		fail_msg("r3q_job_open: %s", r3q_error(e->r));
	return (e);
}

static void
env_free(struct env *e)
{
	if (e->job != NULL)
		assert_int_equal(r3q_job_close(e->job), R3Q_OK);
	r3q_close(e->r);
	fake_stop(e->fk);
	free(e);
}

/* The output of a future, as a string, asserting it succeeded. */
static void
assert_output(struct r3q_future *f, const char *want)
{
	const void	*d;
	size_t		 len;

	assert_int_equal(r3q_future_get(f, 10000, &d, &len), R3Q_OK);
	assert_int_equal(len, strlen(want));
	assert_memory_equal(d, want, len);
}

static void
test_open_job(void **state)
{
	struct env	*e = env_new(FM_ECHO, 0);

	(void)state;
	assert_int_equal(r3q_job_id(e->job), FAKE_JOB);
	assert_int_equal(e->fk->nopen, 1);
	env_free(e);
}

static void
test_submit_echo(void **state)
{
	struct env		*e = env_new(FM_ECHO, 0);
	struct r3q_future	*f[3];

	(void)state;
	f[0] = r3q_submit(e->job, "echo", "one", 3);
	f[1] = r3q_submit(e->job, "echo", "two", 3);
	f[2] = r3q_submit(e->job, "echo", "three", 5);
	assert_output(f[0], "one");
	assert_output(f[1], "two");
	assert_output(f[2], "three");
	/* Three tasks, one frame. */
	assert_int_equal(e->fk->nsubmit, 1);
	r3q_future_free(f[0]);
	r3q_future_free(f[1]);
	r3q_future_free(f[2]);
	env_free(e);
}

/*
 * r3q_flush sends the acknowledgement of the results taken with what it
 * submits, in the same write: the master hears of it while the client
 * waits for nothing (it used to come only at the client's next wait, a
 * frame of its own).
 */
static void
test_flush_acks(void **state)
{
	struct env		*e = env_new(FM_ECHO, 0);
	struct r3q_future	*f;
	size_t			 n0;

	(void)state;
	f = r3q_submit(e->job, "echo", "one", 3);
	assert_output(f, "one");
	r3q_future_free(f);
	pthread_mutex_lock(&e->fk->mtx);
	n0 = e->fk->nacks;
	assert_int_equal(e->fk->acked, 0);
	pthread_mutex_unlock(&e->fk->mtx);

	f = r3q_submit(e->job, "echo", "two", 3);
	assert_int_equal(r3q_flush(e->job), R3Q_OK);
	fake_wait(e->fk, &e->fk->nacks, n0 + 1);
	pthread_mutex_lock(&e->fk->mtx);
	assert_int_equal(e->fk->acked, 1);
	pthread_mutex_unlock(&e->fk->mtx);
	assert_output(f, "two");
	r3q_future_free(f);
	env_free(e);
}

/*
 * r3q_send sends what is queued and leaves the batch open: the master has
 * the tasks, in one batch, and no close until r3q_flush.
 */
static void
test_send_leaves_open(void **state)
{
	struct env		*e = env_new(FM_HOLD, 0);
	struct r3q_future	*f[2];

	(void)state;
	assert_int_equal(r3q_send(NULL), R3Q_EINVAL);
	f[0] = r3q_submit(e->job, "echo", "a", 1);
	assert_int_equal(r3q_send(e->job), R3Q_OK);
	fake_wait(e->fk, &e->fk->ntasks, 1);
	f[1] = r3q_submit(e->job, "echo", "b", 1);
	assert_int_equal(r3q_send(e->job), R3Q_OK);
	fake_wait(e->fk, &e->fk->ntasks, 2);
	pthread_mutex_lock(&e->fk->mtx);
	assert_int_equal(e->fk->nclosed, 0);
	assert_int_equal(e->fk->tasks[1].batch, e->fk->tasks[2].batch);
	pthread_mutex_unlock(&e->fk->mtx);
	fake_cmd(e->fk, FC_RESULT, 1);
	assert_output(f[0], "a");
	assert_int_equal(r3q_flush(e->job), R3Q_OK);
	fake_wait(e->fk, &e->fk->nclosed, 1);
	fake_cmd(e->fk, FC_RESULT, 2);
	assert_output(f[1], "b");
	r3q_future_free(f[0]);
	r3q_future_free(f[1]);
	env_free(e);
}

static void
test_wait_any(void **state)
{
	struct env		*e = env_new(FM_HOLD, 0);
	struct r3q_future	*f[3];
	size_t			 i;

	(void)state;
	f[0] = r3q_submit(e->job, "echo", "a", 1);
	f[1] = r3q_submit(e->job, "echo", "b", 1);
	f[2] = r3q_submit(e->job, "echo", "c", 1);
	assert_int_equal(r3q_wait_any(f, 3, 0, &i), R3Q_ETIMEDOUT);
	fake_wait(e->fk, &e->fk->ntasks, 3);
	fake_cmd(e->fk, FC_RESULT, 2);
	assert_int_equal(r3q_wait_any(f, 3, 10000, &i), R3Q_OK);
	assert_int_equal(i, 1);
	assert_output(f[1], "b");
	fake_cmd(e->fk, FC_RESULT, 3);
	fake_cmd(e->fk, FC_RESULT, 1);
	assert_int_equal(r3q_wait_all(f, 3, 10000), R3Q_OK);
	/* Both resolved: the first to resolve comes first. */
	f[1] = NULL;
	assert_int_equal(r3q_wait_any(f, 3, 0, &i), R3Q_OK);
	assert_int_equal(i, 2);
	r3q_future_free(f[0]);
	r3q_future_free(f[2]);
	env_free(e);
}

static void
test_wait_all(void **state)
{
	struct env		*e = env_new(FM_ECHO, 0);
	struct r3q_future	*f[10];
	char			 buf[16];
	size_t			 i;

	(void)state;
	for (i = 0; i < 10; i++) {
		snprintf(buf, sizeof(buf), "task %zu", i);
		f[i] = r3q_submit(e->job, "echo", buf, strlen(buf));
		assert_non_null(f[i]);
	}
	assert_int_equal(r3q_wait_all(f, 10, 10000), R3Q_OK);
	for (i = 0; i < 10; i++) {
		snprintf(buf, sizeof(buf), "task %zu", i);
		assert_true(r3q_future_done(f[i]));
		assert_output(f[i], buf);
		r3q_future_free(f[i]);
	}
	env_free(e);
}

static void
test_timeout(void **state)
{
	struct env		*e = env_new(FM_HOLD, 0);
	struct r3q_future	*f;
	const void		*d;

	(void)state;
	f = r3q_submit(e->job, "echo", "slow", 4);
	assert_int_equal(r3q_future_get(f, 50, &d, NULL), R3Q_ETIMEDOUT);
	assert_null(d);
	assert_int_equal(r3q_future_result(f, &d, NULL), R3Q_EPENDING);
	fake_wait(e->fk, &e->fk->ntasks, 1);
	fake_cmd(e->fk, FC_RESULT, 1);
	assert_output(f, "slow");
	r3q_future_free(f);
	env_free(e);
}

static void *
signaller(void *arg)
{
	struct timespec	 ts = { 0, 100 * 1000000L };

	nanosleep(&ts, NULL);
	r3q_signal(arg);
	return (NULL);
}

static void
test_signal(void **state)
{
	struct env		*e = env_new(FM_HOLD, 0);
	struct r3q_future	*f;
	pthread_t		 th;

	(void)state;
	f = r3q_submit(e->job, "echo", "x", 1);
	assert_int_equal(pthread_create(&th, NULL, signaller, e->r), 0);
	assert_int_equal(r3q_future_get(f, -1, NULL, NULL), R3Q_ESIGNALLED);
	pthread_join(th, NULL);
	/* The task goes on. */
	fake_wait(e->fk, &e->fk->ntasks, 1);
	fake_cmd(e->fk, FC_RESULT, 1);
	assert_output(f, "x");
	/* A signal with nobody waiting wakes the next wait. */
	r3q_signal(e->r);
	assert_int_equal(r3q_wait_all(&f, 1, -1), R3Q_OK);	/* resolved */
	r3q_future_free(f);
	f = r3q_submit(e->job, "echo", "y", 1);
	assert_int_equal(r3q_future_get(f, -1, NULL, NULL), R3Q_ESIGNALLED);
	r3q_future_free(f);
	env_free(e);
}

static void
test_cancel(void **state)
{
	struct env		*e = env_new(FM_HOLD, 0);
	struct r3q_future	*f, *g;

	(void)state;
	f = r3q_submit(e->job, "echo", "doomed", 6);
	assert_int_equal(r3q_future_get(f, 0, NULL, NULL), R3Q_ETIMEDOUT);
	fake_wait(e->fk, &e->fk->ntasks, 1);
	assert_int_equal(r3q_cancel(f), R3Q_OK);
	assert_int_equal(r3q_future_get(f, 0, NULL, NULL), R3Q_ECANCELLED);
	assert_int_equal(r3q_cancel(f), R3Q_EINVAL);
	/* The cancel reaches the master with the next I/O. */
	g = r3q_submit(e->job, "echo", "next", 4);
	assert_int_equal(r3q_future_get(g, 0, NULL, NULL), R3Q_ETIMEDOUT);
	fake_wait(e->fk, &e->fk->ncancelled, 1);
	assert_int_equal(e->fk->cancelled_key, 1);
	/* Its status-3 outcome comes and is dropped; g still resolves. */
	fake_cmd(e->fk, FC_RESULT, 2);
	assert_output(g, "next");
	assert_int_equal(r3q_future_get(f, 0, NULL, NULL), R3Q_ECANCELLED);
	r3q_future_free(f);
	r3q_future_free(g);
	env_free(e);
}

static void
test_remote_failure(void **state)
{
	struct env		*e = env_new(FM_ECHO, 0);
	struct r3q_future	*f, *k;

	(void)state;
	f = r3q_submit(e->job, "echo", "fail:x", 6);
	k = r3q_submit(e->job, "echo", "kill:x", 6);
	assert_int_equal(r3q_future_get(f, 10000, NULL, NULL), R3Q_EREMOTE);
	assert_string_equal(r3q_future_error(f), "boom");
	assert_int_equal(r3q_future_get(k, 10000, NULL, NULL), R3Q_EKILLED);
	assert_string_equal(r3q_future_error(k), "lost 3 workers running it");
	r3q_future_free(f);
	r3q_future_free(k);
	env_free(e);
}

static void
test_refused_frame(void **state)
{
	struct env		*e = env_new(FM_ECHO, 0);
	struct r3q_future	*a, *b, *bad, *c, *d;

	(void)state;
	a = r3q_submit(e->job, "echo", "a", 1);
	assert_output(a, "a");
	b = r3q_submit(e->job, "echo", "b", 1);
	bad = r3q_submit(e->job, "echo", "bad", 3);
	c = r3q_submit(e->job, "echo", "c", 1);
	assert_int_equal(r3q_future_get(bad, 10000, NULL, NULL), R3Q_EDENIED);
	assert_string_equal(r3q_future_error(bad), "task 'bad' is refused");
	assert_int_equal(r3q_future_get(b, 0, NULL, NULL), R3Q_EDENIED);
	assert_int_equal(r3q_future_get(c, 0, NULL, NULL), R3Q_EDENIED);
	assert_string_equal(r3q_future_error(c), "task 'bad' is refused");
	/* The frame after is taken. */
	d = r3q_submit(e->job, "echo", "d", 1);
	assert_output(d, "d");
	assert_output(a, "a");
	assert_int_equal(e->fk->nrefused, 1);
	r3q_future_free(a);
	r3q_future_free(b);
	r3q_future_free(bad);
	r3q_future_free(c);
	r3q_future_free(d);
	env_free(e);
}

static void
test_map_order(void **state)
{
	struct env	*e = env_new(FM_REVERSE, 0);
	struct r3q_buf	 in[20], out[20];
	char		 bufs[20][16];
	size_t		 i;

	(void)state;
	for (i = 0; i < 20; i++) {
		snprintf(bufs[i], sizeof(bufs[i]), "%s%zu", i == 7 ? "fail:" :
		    "item ", i);
		in[i].data = bufs[i];
		in[i].len = strlen(bufs[i]);
	}
	assert_int_equal(r3q_map(e->job, "echo", in, 20, out, 10000),
	    R3Q_EREMOTE);
	for (i = 0; i < 20; i++) {
		if (i == 7) {
			assert_int_equal(out[i].status, R3Q_EREMOTE);
			assert_string_equal(out[i].data, "boom");
		} else {
			assert_int_equal(out[i].status, R3Q_OK);
			assert_int_equal(out[i].len, strlen(bufs[i]));
			assert_memory_equal(out[i].data, bufs[i], out[i].len);
		}
		free(out[i].data);
	}
	/* One batch, closed in its only frame. */
	assert_int_equal(e->fk->nsubmit, 1);
	in[7] = in[6];
	assert_int_equal(r3q_map(e->job, "echo", in, 20, out, 10000), R3Q_OK);
	for (i = 0; i < 20; i++)
		free(out[i].data);
	env_free(e);
}

static void
test_too_big(void **state)
{
	struct env		*e = env_new(FM_ECHO, 16);
	struct r3q_future	*f, *g;
	char			 big[17];

	(void)state;
	memset(big, 'x', sizeof(big));
	f = r3q_submit(e->job, "echo", big, sizeof(big));
	assert_non_null(f);
	assert_true(r3q_future_done(f));
	assert_int_equal(r3q_future_result(f, NULL, NULL), R3Q_ETOOBIG);
	g = r3q_submit(e->job, "echo", big, 16);
	assert_int_equal(r3q_future_get(g, 10000, NULL, NULL), R3Q_OK);
	assert_int_equal(e->fk->ntasks, 1);
	r3q_future_free(f);
	r3q_future_free(g);
	env_free(e);
}

/*
 * The master goes away after two results and before their ack; on the
 * new connection the library reattaches with acked = 2, sends the three
 * unresolved tasks again (closing their batch again), and gets results
 * 1 and 2 once more, which it drops.
 */
static void
test_reconnect(void **state)
{
	struct env		*e = env_new(FM_HOLD, 0);
	struct r3q_future	*f[5];
	char			 buf[8];
	size_t			 i;

	(void)state;
	for (i = 0; i < 5; i++) {
		snprintf(buf, sizeof(buf), "p%zu", i + 1);
		f[i] = r3q_submit(e->job, "echo", buf, strlen(buf));
	}
	assert_int_equal(r3q_flush(e->job), R3Q_OK);
	fake_wait(e->fk, &e->fk->ntasks, 5);
	fake_cmd(e->fk, FC_RESULT, 1);
	fake_cmd(e->fk, FC_RESULT, 2);
	fake_cmd(e->fk, FC_CLOSE, 0);
	assert_output(f[0], "p1");
	assert_output(f[1], "p2");
	/* f[2] waits across the reconnect. */
	assert_int_equal(r3q_future_get(f[2], 200, NULL, NULL),
	    R3Q_ETIMEDOUT);
	fake_wait(e->fk, &e->fk->nresubmit, 3);
	pthread_mutex_lock(&e->fk->mtx);
	assert_int_equal(e->fk->nconn, 2);
	assert_int_equal(e->fk->nattach, 1);
	assert_int_equal(e->fk->attach_acked, 2);
	assert_int_equal(e->fk->nresubmit, 3);
	assert_int_equal(e->fk->resubmit_min, 3);
	assert_int_equal(e->fk->resubmit_max, 5);
	assert_int_equal(e->fk->nskipped, 3);
	assert_true(e->fk->resubmit_close);
	pthread_mutex_unlock(&e->fk->mtx);
	fake_cmd(e->fk, FC_RESULT, 4);
	fake_cmd(e->fk, FC_RESULT, 3);
	fake_cmd(e->fk, FC_RESULT, 5);
	assert_int_equal(r3q_wait_all(f, 5, 10000), R3Q_OK);
	for (i = 0; i < 5; i++) {
		snprintf(buf, sizeof(buf), "p%zu", i + 1);
		assert_output(f[i], buf);
		r3q_future_free(f[i]);
	}
	env_free(e);
}

static double
elapsed(const struct timespec *a)
{
	struct timespec	 b;

	clock_gettime(CLOCK_MONOTONIC, &b);
	return ((double)(b.tv_sec - a->tv_sec) +
	    (double)(b.tv_nsec - a->tv_nsec) / 1e9);
}

#define MANY	100000

static void
test_many(void **state)
{
	struct env		*e = env_new(FM_ECHO, 0);
	struct r3q_future	**f;
	struct timespec		 t0;
	char			 buf[16];
	size_t			 i;

	(void)state;
	f = calloc(MANY, sizeof(*f));
	assert_non_null(f);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < MANY; i++) {
		snprintf(buf, sizeof(buf), "t%zu", i);
		f[i] = r3q_submit(e->job, "echo", buf, strlen(buf));
		assert_non_null(f[i]);
	}
	assert_int_equal(r3q_wait_all(f, MANY, 60000), R3Q_OK);
	print_message("%d futures submitted and resolved in %.3f s (fake "
	    "master included)\n", MANY, elapsed(&t0));
	for (i = 0; i < MANY; i++) {
		snprintf(buf, sizeof(buf), "t%zu", i);
		assert_output(f[i], buf);
		r3q_future_free(f[i]);
	}
	assert_int_equal(e->fk->ntasks, MANY);
	free(f);
	env_free(e);
}

/* An event loop: poll r3q_fd, call r3q_process, never a blocking call. */
static void
test_process(void **state)
{
	struct env		*e = env_new(FM_ECHO, 0);
	struct r3q_future	*f[100];
	struct pollfd		 pfd;
	char			 buf[16];
	size_t			 i, done = 0;
	int			 rounds = 0;

	(void)state;
	pfd.fd = r3q_fd(e->r);
	assert_true(pfd.fd >= 0);
	assert_int_equal(r3q_fd(e->r), pfd.fd);
	pfd.events = POLLIN;
	for (i = 0; i < 100; i++) {
		snprintf(buf, sizeof(buf), "ev%zu", i);
		f[i] = r3q_submit(e->job, "echo", buf, strlen(buf));
	}
	while (done < 100) {
		assert_true(rounds++ < 1000);
		/* Readable: the queued tasks want sending, results came. */
		assert_int_equal(poll(&pfd, 1, 10000), 1);
		assert_int_equal(r3q_process(e->r), R3Q_OK);
		for (done = 0, i = 0; i < 100; i++)
			done += r3q_future_done(f[i]);
	}
	for (i = 0; i < 100; i++) {
		snprintf(buf, sizeof(buf), "ev%zu", i);
		assert_int_equal(r3q_future_result(f[i], NULL, NULL), R3Q_OK);
		assert_output(f[i], buf);
		r3q_future_free(f[i]);
	}
	/* Nothing left to do: not readable. */
	assert_int_equal(r3q_process(e->r), R3Q_OK);
	assert_int_equal(poll(&pfd, 1, 50), 0);
	env_free(e);
}

/* A master that is not there: r3q_connect says so. */
static void
test_no_master(void **state)
{
	struct r3q_options	 o;
	char			 err[256];

	(void)state;
	memset(&o, 0, sizeof(o));
	o.control = "/nonexistent/masterd.sock";
	assert_null(r3q_connect(&o, err, sizeof(err)));
	assert_non_null(strstr(err, "/nonexistent/masterd.sock"));
	assert_string_equal(r3q_strerror(R3Q_ETIMEDOUT), "timed out");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_job),
		cmocka_unit_test(test_submit_echo),
		cmocka_unit_test(test_flush_acks),
		cmocka_unit_test(test_send_leaves_open),
		cmocka_unit_test(test_wait_any),
		cmocka_unit_test(test_wait_all),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_signal),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_remote_failure),
		cmocka_unit_test(test_refused_frame),
		cmocka_unit_test(test_map_order),
		cmocka_unit_test(test_too_big),
		cmocka_unit_test(test_reconnect),
		cmocka_unit_test(test_many),
		cmocka_unit_test(test_process),
		cmocka_unit_test(test_no_master),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}

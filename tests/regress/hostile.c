/*
 * r3q-testpeer hostile: a worker that holds a valid certificate and lies,
 * speaking the protocol by hand, for tests/regress/hostile.sh.
 *
 *   forge [N]		offer no kind; send N (200) results, status OK and
 *			fitness 0, for task ids 1..N it was never given;
 *			exit 0 once the master closes the connection
 *   failall KIND	fail every task it is given, each failure said three
 *			times in one Results frame
 *   failframe KIND	fail all the tasks of each Assign in one Results
 *			frame, each with an error naming its task
 *   bigout KIND	answer every task at once with an output of 2 MiB
 *			and a byte, over masterd's default max_payload
 *   silent KIND	take tasks and never start them, heartbeating
 *   cancelspam KIND [N] answer each task with N (10000) "cancelled" results
 *			and never finish it
 *   errorlog		send an Error whose text holds a forged log line
 *   liar KIND		answer every task at once with fitness 0
 *
 * It heartbeats every second until SIGTERM (but forge and errorlog, which
 * end by themselves) and prints what the master does to it.
 */
#include "config.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/rand.h>

#include "frame.h"
#include "task/task.h"
#include "testpeer.h"
#include "tls.h"
#include "util.h"

#define nitems(a)	(sizeof(a) / sizeof((a)[0]))

static uint64_t	 epoch;

/* Send results, a frame of at most 1000 at a time. */
static int
hostile_send(R3q__Result *res, size_t n)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__Results	 rs = R3Q__RESULTS__INIT;
	R3q__Result	*ptrs[1000];
	size_t		 i, k;

	for (i = 0; i < n; i += k) {
		for (k = 0; k < nitems(ptrs) && i + k < n; k++)
			ptrs[k] = &res[i + k];
		rs.n_results = k;
		rs.results = ptrs;
		env.body_case = R3Q__ENVELOPE__BODY_RESULTS;
		env.results = &rs;
		if (send_env(&env) == -1)
			return (-1);
	}
	return (0);
}

static uint8_t	zero_fitness[8];	/* 0.0, little-endian */
static char	errbuf[64][64];		/* the error texts of a frame */
static size_t	errnext;

/* One result about task t, with its tag echoed unless forged. */
static void
hostile_result(R3q__Result *r, uint64_t id, uint64_t tag, uint32_t status)
{
	uint64_t	 now = wall_ns();

	r3q__result__init(r);
	r->id = id;
	r->epoch = epoch;
	r->tag = tag;
	r->status = status;
	/* Each failure names its task, to check it stays with it. */
	snprintf(errbuf[errnext % 64], sizeof(errbuf[0]), "%s",
	    status == TASK_FAILED ? "injected failure" : "");
	if (status == TASK_FAILED)
		snprintf(errbuf[errnext % 64], sizeof(errbuf[0]),
		    "injected failure of task %llu", (unsigned long long)id);
	r->error = errbuf[errnext++ % 64];
	/* A fitness of 0 (common/es/payload.h), which is a lie. */
	r->output.data = zero_fitness;
	r->output.len = sizeof(zero_fitness);
	r->received_ns = now - 2000000;
	r->start_ns = now - 1000000;
	r->end_ns = now;
}

/* What the mode does with one task it is given. */
static int
hostile_task(const char *mode, const R3q__Task *t, unsigned long n)
{
	R3q__Result	*res;
	size_t		 i;
	int		 rc;

	if (strcmp(mode, "failall") == 0)
		n = 3;
	else if (strcmp(mode, "liar") == 0)
		n = 1;
	else if (strcmp(mode, "cancelspam") != 0)
		return (0);
	res = xcalloc(n, sizeof(*res));
	for (i = 0; i < n; i++)
		hostile_result(&res[i], t->id, t->tag,
		    strcmp(mode, "failall") == 0 ? TASK_FAILED :
		    strcmp(mode, "liar") == 0 ? TASK_OK : TASK_CANCELLED);
	rc = hostile_send(res, n);
	free(res);
	return (rc);
}

/* Fail every task of an Assign in one Results frame. */
static int
hostile_failframe(const R3q__Assign *a)
{
	R3q__Result	*res;
	size_t		 i;
	int		 rc;

	if (a->n_tasks == 0)
		return (0);
	res = xcalloc(a->n_tasks, sizeof(*res));
	for (i = 0; i < a->n_tasks; i++)
		hostile_result(&res[i], a->tasks[i]->id, a->tasks[i]->tag,
		    TASK_FAILED);
	rc = hostile_send(res, a->n_tasks);
	free(res);
	return (rc);
}

/* Answer every task of an Assign with an output too big for masterd. */
static int
hostile_bigout(const R3q__Assign *a)
{
	R3q__Result	*res;
	uint8_t		*big;
	size_t		 i, len = (2u << 20) + 1;
	int		 rc = 0;

	big = xcalloc(1, len);
	res = xcalloc(1, sizeof(*res));
	for (i = 0; i < a->n_tasks && rc == 0; i++) {
		hostile_result(res, a->tasks[i]->id, a->tasks[i]->tag, TASK_OK);
		res->output.data = big;
		res->output.len = len;
		rc = hostile_send(res, 1);
	}
	free(res);
	free(big);
	return (rc);
}

/* The forger: results for ids it was never given, tags made up. */
static int
hostile_forge(unsigned long n)
{
	R3q__Result	*res;
	uint64_t	 tag;
	size_t		 i;
	int		 rc;

	res = xcalloc(n, sizeof(*res));
	for (i = 0; i < n; i++) {
		if (RAND_bytes((unsigned char *)&tag, sizeof(tag)) != 1)
			tag = i;
		hostile_result(&res[i], i + 1, tag, TASK_OK);
	}
	rc = hostile_send(res, n);
	free(res);
	printf("sent %lu forged results\n", n);
	return (rc);
}

int
do_hostile(SSL_CTX *ctx, const char *host, const char *port,
    const char *mode, const char *arg)
{
	Envelope	 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__Hello	 h = R3Q__HELLO__INIT;
	R3q__Heartbeat	 hb = R3Q__HEARTBEAT__INIT;
	R3q__Error	 e = R3Q__ERROR__INIT;
	struct pollfd	 pfd;
	char		*kinds[1];
	unsigned long	 n;
	uint64_t	 ntasks = 0, next_hb = 0;
	size_t		 i;
	int		 fd, offers;

	offers = strcmp(mode, "forge") != 0 && strcmp(mode, "errorlog") != 0;
	if (offers && arg == NULL) {
		printf("%s needs a task kind\n", mode);
		return (2);
	}
	n = arg != NULL && !offers ? strtoul(arg, NULL, 10) : 0;
	if (strcmp(mode, "cancelspam") == 0)
		n = 10000;
	if (strcmp(mode, "forge") == 0 && n == 0)
		n = 200;
	if ((fd = tls_dial(ctx, host, port)) == -1)
		return (1);
	h.protocol = R3Q_PROTOCOL;
	h.cpus = 1;
	if (offers) {
		kinds[0] = (char *)(uintptr_t)arg;
		h.n_kinds = 1;
		h.kinds = kinds;
	}
	env.body_case = R3Q__ENVELOPE__BODY_HELLO;
	env.hello = &h;
	if (send_env(&env) == -1 || (ans = recv_env()) == NULL ||
	    ans->body_case != R3Q__ENVELOPE__BODY_WELCOME) {
		printf("no welcome\n");
		return (1);
	}
	epoch = ans->welcome->epoch;
	frame_free(ans);
	printf("joined\n");

	if (strcmp(mode, "errorlog") == 0) {
		e.message = (char *)(uintptr_t)
		    "x\n12:00:00.000 masterd: job 1 cancelled by admin";
		env.body_case = R3Q__ENVELOPE__BODY_ERROR;
		env.error = &e;
		send_env(&env);
		sleep(1);
		return (0);
	}
	if (strcmp(mode, "forge") == 0 && hostile_forge(n) == -1) {
		printf("closed by the master\n");
		return (0);
	}
	pfd.fd = fd;
	pfd.events = POLLIN;
	for (;;) {
		if (mono_ns() >= next_hb) {
			r3q__heartbeat__init(&hb);
			hb.interval_ms = 1000;
			env.body_case = R3Q__ENVELOPE__BODY_HEARTBEAT;
			env.heartbeat = &hb;
			if (send_env(&env) == -1)
				break;
			next_hb = mono_ns() + NS_PER_SEC;
		}
		if (SSL_pending(ssl) == 0 && poll(&pfd, 1, 200) <= 0)
			continue;
		if ((ans = recv_env()) == NULL)
			break;
		switch (ans->body_case) {
		case R3Q__ENVELOPE__BODY_ASSIGN:
			if (strcmp(mode, "bigout") == 0) {
				ntasks += ans->assign->n_tasks;
				if (hostile_bigout(ans->assign) == -1)
					goto closed;
				break;
			}
			if (strcmp(mode, "failframe") == 0) {
				ntasks += ans->assign->n_tasks;
				if (hostile_failframe(ans->assign) == -1)
					goto closed;
				printf("tasks %llu\n",
				    (unsigned long long)ntasks);
				break;
			}
			for (i = 0; i < ans->assign->n_tasks; i++) {
				ntasks++;
				if (hostile_task(mode, ans->assign->tasks[i],
				    n) == -1)
					goto closed;
			}
			printf("tasks %llu\n", (unsigned long long)ntasks);
			break;
		case R3Q__ENVELOPE__BODY_ERROR:
			printf("error: %s\n", ans->error->message);
			break;
		default:
			break;
		}
		frame_free(ans);
	}
 closed:
	printf("closed by the master\n");
	return (strcmp(mode, "forge") == 0 ? 0 : 1);
}

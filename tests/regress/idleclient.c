/*
 * r3q-idleclient: a libr3q client that leaves work nobody can run, for
 * tests/regress/idle-batches.sh and bench/idle-batches.
 *
 *   r3q-idleclient idle N KIND	make N batches of one task of KIND each
 *				(closed), IDLE_PER_JOB to a job (libr3q
 *				walks a job's batches at each flush);
 *				print "submitted N" and stay until stdin
 *				ends, so that the jobs keep their client
 *   r3q-idleclient kinds N PREFIX
 *				one batch of one task for each of the
 *				kinds PREFIX0 .. PREFIXN-1; print
 *				"refused at I: ERROR" for the first one
 *				masterd refuses (within 3 s), else
 *				"accepted N", then stay as above
 *
 * Connects as libr3q does ($R3Q_CONTROL, or R3Q_MASTER with a
 * certificate).  Exits 0 once stdin ends, 1 on a connection error.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "r3q.h"

#define IDLE_PER_JOB	500

/*
 * Stay until stdin ends, the connection driven meanwhile (what is still
 * to be sent goes, heartbeats are answered): the jobs keep their client.
 */
static void
idle_stay(struct r3q *r)
{
	struct pollfd	 pfd[2];
	char		 buf[256];

	fflush(stdout);
	pfd[0].fd = STDIN_FILENO;
	pfd[0].events = POLLIN;
	pfd[1].fd = r3q_fd(r);
	pfd[1].events = POLLIN;
	for (;;) {
		if (poll(pfd, 2, 100) == -1)
			return;
		(void)r3q_process(r);
		if ((pfd[0].revents & (POLLIN | POLLHUP)) &&
		    read(STDIN_FILENO, buf, sizeof(buf)) <= 0)
			return;
	}
}

/* A job of the idle client; NULL (said) if masterd refuses it. */
static struct r3q_job *
idle_job(struct r3q *r)
{
	struct r3q_job_options	 jo;
	struct r3q_job		*job;

	memset(&jo, 0, sizeof(jo));
	jo.name = "idle";
	jo.client_timeout_ms = 600000;
	if ((job = r3q_job_open(r, &jo)) == NULL)
		fprintf(stderr, "%s\n", r3q_error(r));
	return (job);
}

/* n closed batches of one task of kind each, then stay. */
static int
idle_batches(struct r3q *r, long n, const char *kind)
{
	struct r3q_job	*job = NULL;
	struct r3q_task	 t;
	long		 i;

	memset(&t, 0, sizeof(t));
	t.kind = kind;
	t.payload = "x";
	t.len = 1;
	for (i = 0; i < n; i++) {
		if (i % IDLE_PER_JOB == 0 && (job = idle_job(r)) == NULL)
			return (1);
		/* One task, and the batch closed: the next one is new. */
		if (r3q_submit_task(job, &t) == NULL ||
		    r3q_flush(job) != R3Q_OK) {
			fprintf(stderr, "batch %ld refused\n", i);
			return (1);
		}
	}
	printf("submitted %ld\n", n);
	idle_stay(r);
	return (0);
}

/* One batch for each of n kinds, the first refusal said, then stay. */
static int
idle_kinds(struct r3q *job_conn, struct r3q_job *job, long n,
    const char *prefix)
{
	struct r3q_future	**f;
	struct r3q_task		 t;
	char			 kind[64];
	size_t			 which;
	long			 i;

	if ((f = calloc(n, sizeof(*f))) == NULL)
		return (1);
	for (i = 0; i < n; i++) {
		snprintf(kind, sizeof(kind), "%s%ld", prefix, i);
		memset(&t, 0, sizeof(t));
		t.kind = kind;
		t.payload = "x";
		t.len = 1;
		if ((f[i] = r3q_submit_task(job, &t)) == NULL ||
		    r3q_flush(job) != R3Q_OK) {
			fprintf(stderr, "kind %s: %s\n", kind,
			    r3q_strerror(R3Q_ECONN));
			free(f);
			return (1);
		}
	}
	/* Nobody runs these kinds: the first to resolve was refused. */
	if (r3q_wait_any(f, n, 3000, &which) == R3Q_OK)
		printf("refused at %zu: %s\n", which,
		    r3q_future_error(f[which]));
	else
		printf("accepted %ld\n", n);
	free(f);
	idle_stay(job_conn);
	return (0);
}

int
main(int argc, char **argv)
{
	struct r3q		*r;
	struct r3q_job		*job;
	char			 err[256];
	long			 n;
	int			 rc;

	if (argc != 4 || (n = strtol(argv[2], NULL, 10)) <= 0 ||
	    (strcmp(argv[1], "idle") != 0 && strcmp(argv[1], "kinds") != 0)) {
		fprintf(stderr, "usage: r3q-idleclient idle|kinds N "
		    "KIND|PREFIX\n");
		return (2);
	}
	if ((r = r3q_connect(NULL, err, sizeof(err))) == NULL) {
		fprintf(stderr, "%s\n", err);
		return (1);
	}
	if (strcmp(argv[1], "idle") == 0)
		rc = idle_batches(r, n, argv[3]);
	else if ((job = idle_job(r)) == NULL)
		rc = 1;
	else
		rc = idle_kinds(r, job, n, argv[3]);
	r3q_close(r);
	return (rc);
}

/*
 * r3q-jclient: a libr3q client that leaves the journal something to hold,
 * for tests/regress/journal-restart.sh, journal-budget.sh and
 * bench/journal-restart.
 *
 *   r3q-jclient ended N KIND	open a batch job (client_timeout 1 day) and
 *				make N one-task batches of KIND, each
 *				closed and its task cancelled at once; wait
 *				for the N outcomes, print the job's id and
 *				leave the job running, without its client
 *   r3q-jclient hold KIND SIZE N
 *				one batch of N tasks of KIND, each a
 *				payload of SIZE bytes, in a job left
 *				running without its client (client_timeout
 *				1 day) once masterd has taken them.  Prints
 *				"held N", or "refused: " and the error
 *   r3q-jclient rounds KIND SIZE N R
 *				R batches one after the other in one job,
 *				each of N tasks of SIZE bytes waited for;
 *				then the job is closed.  Prints "ok R" or
 *				"refused: " and the first failure's error
 *   r3q-jclient fill KIND SIZE N
 *				one batch of N tasks of KIND, each a
 *				payload of SIZE bytes; wait for them, then
 *				close the job.  Prints "ok N" if every task
 *				succeeded, else "refused: " and the first
 *				failure's error
 *
 * Connects as libr3q does ($R3Q_CONTROL, or $R3Q_MASTER with $R3Q_CA,
 * $R3Q_CERT and $R3Q_KEY).  Exits 0 if the tasks went as said, 1 if one
 * was refused or failed, 2 on a usage or connection error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "r3q.h"

#define JC_CHUNK	1000	/* batches made between waits */

/* N cancelled one-task batches in one job, which stays running. */
static int
jc_ended(struct r3q *r, long n, const char *kind)
{
	struct r3q_job_options	 o;
	struct r3q_job		*job, *sync;
	struct r3q_future	*f[JC_CHUNK];
	long			 i, k, m;
	uint32_t		 v;

	memset(&o, 0, sizeof(o));
	o.name = "ended";
	o.client_timeout_ms = 86400 * 1000;
	if ((job = r3q_job_open(r, &o)) == NULL) {
		fprintf(stderr, "r3q-jclient: open: %s\n", r3q_error(r));
		return (2);
	}
	for (i = 0; i < n; i += m) {
		m = n - i < JC_CHUNK ? n - i : JC_CHUNK;
		for (k = 0; k < m; k++) {
			v = (uint32_t)(i + k);
			if ((f[k] = r3q_submit(job, kind, &v,
			    sizeof(v))) == NULL || r3q_flush(job) != R3Q_OK) {
				fprintf(stderr, "r3q-jclient: submit: %s\n",
				    r3q_error(r));
				return (2);
			}
		}
		for (k = 0; k < m; k++) {
			r3q_cancel(f[k]);
			r3q_future_free(f[k]);
		}
		r3q_process(r);
	}
	/*
	 * Round trips after them: masterd has taken every frame, and (the
	 * library acknowledges what it has before it waits) most outcomes
	 * are acknowledged.
	 */
	for (k = 0; k < 2; k++)
		if ((sync = r3q_job_open(r, NULL)) == NULL ||
		    r3q_job_cancel(sync) != R3Q_OK) {
			fprintf(stderr, "r3q-jclient: sync: %s\n",
			    r3q_error(r));
			return (2);
		}
	/* Gone without a word: r3q_close() would close the job. */
	printf("%llu\n", (unsigned long long)r3q_job_id(job));
	fflush(stdout);
	_exit(0);
}

/* One batch of n tasks of size bytes each, left with masterd. */
static int
jc_hold(struct r3q *r, const char *kind, size_t size, long n)
{
	struct r3q_job_options	 o;
	struct r3q_job		*job, *sync;
	struct r3q_future	**f;
	char			*p;
	long			 i;

	memset(&o, 0, sizeof(o));
	o.name = "hold";
	o.client_timeout_ms = 86400 * 1000;
	if ((job = r3q_job_open(r, &o)) == NULL) {
		printf("refused: %s\n", r3q_error(r));
		return (1);
	}
	if ((p = malloc(size + 1)) == NULL || (f = calloc(n,
	    sizeof(*f))) == NULL) {
		fprintf(stderr, "r3q-jclient: out of memory\n");
		return (2);
	}
	memset(p, 'x', size);
	for (i = 0; i < n; i++)
		if ((f[i] = r3q_submit(job, kind, p, size)) == NULL) {
			fprintf(stderr, "r3q-jclient: submit: %s\n",
			    r3q_error(r));
			return (2);
		}
	r3q_flush(job);
	/* A refusal comes before the answer to a later request. */
	if ((sync = r3q_job_open(r, NULL)) == NULL ||
	    r3q_job_cancel(sync) != R3Q_OK) {
		fprintf(stderr, "r3q-jclient: sync: %s\n", r3q_error(r));
		return (2);
	}
	for (i = 0; i < n; i++)
		if (r3q_future_done(f[i])) {
			printf("refused: %s\n", r3q_future_error(f[i]));
			fflush(stdout);
			_exit(1);
		}
	/* Gone without a word: r3q_close() would cancel the job. */
	printf("held %ld\n", n);
	fflush(stdout);
	_exit(0);
}

/*
 * rounds batches of n tasks of size bytes each, one after the other in
 * one job, each waited for; the job closed.  (fill: one round.)
 */
static int
jc_fill(struct r3q *r, const char *kind, size_t size, long n, long rounds)
{
	struct r3q_job		*job;
	struct r3q_future	**f;
	const void		*out;
	size_t			 len;
	char			*p;
	long			 i, k;
	int			 rc = 0;

	if ((job = r3q_job_open(r, NULL)) == NULL) {
		printf("refused: %s\n", r3q_error(r));
		return (1);
	}
	if ((p = malloc(size + 1)) == NULL || (f = calloc(n,
	    sizeof(*f))) == NULL) {
		fprintf(stderr, "r3q-jclient: out of memory\n");
		return (2);
	}
	memset(p, 'x', size);
	for (k = 0; k < rounds && rc == 0; k++) {
		for (i = 0; i < n; i++)
			if ((f[i] = r3q_submit(job, kind, p, size)) == NULL) {
				fprintf(stderr, "r3q-jclient: submit: %s\n",
				    r3q_error(r));
				return (2);
			}
		r3q_flush(job);
		for (i = 0; i < n; i++) {
			if (r3q_future_get(f[i], 120000, &out, &len) !=
			    R3Q_OK && rc == 0) {
				printf("refused: %s\n",
				    r3q_future_error(f[i]));
				rc = 1;
			}
			r3q_future_free(f[i]);
		}
	}
	if (rc == 0)
		printf("ok %ld\n", rounds > 1 ? rounds : n);
	r3q_job_close(job);
	free(f);
	free(p);
	return (rc);
}

int
main(int argc, char *argv[])
{
	struct r3q	*r;
	char		 err[512];
	int		 rc;

	if (argc == 4 && strcmp(argv[1], "ended") == 0) {
		if ((r = r3q_connect(NULL, err, sizeof(err))) == NULL)
			goto noconn;
		rc = jc_ended(r, atol(argv[2]), argv[3]);
	} else if (argc == 5 && strcmp(argv[1], "hold") == 0) {
		if ((r = r3q_connect(NULL, err, sizeof(err))) == NULL)
			goto noconn;
		rc = jc_hold(r, argv[2], (size_t)atol(argv[3]),
		    atol(argv[4]));
	} else if (argc == 5 && strcmp(argv[1], "fill") == 0) {
		if ((r = r3q_connect(NULL, err, sizeof(err))) == NULL)
			goto noconn;
		rc = jc_fill(r, argv[2], (size_t)atol(argv[3]),
		    atol(argv[4]), 1);
	} else if (argc == 6 && strcmp(argv[1], "rounds") == 0) {
		if ((r = r3q_connect(NULL, err, sizeof(err))) == NULL)
			goto noconn;
		rc = jc_fill(r, argv[2], (size_t)atol(argv[3]),
		    atol(argv[4]), atol(argv[5]));
	} else {
		fprintf(stderr, "usage: r3q-jclient ended N KIND | "
		    "hold KIND SIZE N | fill KIND SIZE N | "
		    "rounds KIND SIZE N R\n");
		return (2);
	}
	r3q_close(r);
	return (rc);
 noconn:
	fprintf(stderr, "r3q-jclient: %s\n", err);
	return (2);
}

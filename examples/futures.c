/*
 * futures: libr3q's model in one page (r3q(3), doc/algorithms.md section
 * 5).  Submit echo tasks and get futures at once; cancel one; take
 * results as they come with r3q_wait_any; and let a second thread hand
 * over more work, waking the waiting loop with r3q_signal.
 *
 *	futures [-s socket] [-n tasks]
 *
 * Without -s, the master comes from the environment (R3Q_MASTER and the
 * TLS files, or R3Q_CONTROL), else masterd's default control socket.
 * Exits 0 if every task came back as it went, 1 otherwise, 69 if masterd
 * cannot be reached.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "r3q.h"

#define LATE	3		/* tasks the second thread adds */

/* Work the second thread hands over, under mtx. */
static pthread_mutex_t	 mtx = PTHREAD_MUTEX_INITIALIZER;
static char		*late[LATE];
static int		 nlate;

/* The second thread: new work, then a signal to the waiting loop. */
static void *
producer(void *arg)
{
	struct r3q	*r = arg;
	struct timespec	 ts = { 0, 50 * 1000000L };
	char		 buf[32];
	int		 i;

	nanosleep(&ts, NULL);
	pthread_mutex_lock(&mtx);
	for (i = 0; i < LATE; i++) {
		snprintf(buf, sizeof(buf), "late %d", i);
		late[nlate++] = strdup(buf);
	}
	pthread_mutex_unlock(&mtx);
	r3q_signal(r);
	return (NULL);
}

/* What a task's output must be: its payload. */
static int
check(struct r3q_future *f, const char *want)
{
	const void	*out;
	size_t		 len;
	int		 rc;

	rc = r3q_future_result(f, &out, &len);
	if (rc != R3Q_OK) {
		fprintf(stderr, "futures: '%s': %s\n", want,
		    r3q_future_error(f));
		return (-1);
	}
	printf("%.*s\n", (int)len, (const char *)out);
	if (len != strlen(want) || memcmp(out, want, len) != 0) {
		fprintf(stderr, "futures: '%s' came back as '%.*s'\n", want,
		    (int)len, (const char *)out);
		return (-1);
	}
	return (0);
}

int
main(int argc, char *argv[])
{
	struct r3q_options	 o;
	struct r3q_job_options	 jo;
	struct r3q		*r;
	struct r3q_job		*job;
	struct r3q_future	**fs;
	char			**in, err[256], buf[32];
	pthread_t		 th;
	size_t			 n = 8, cap, nf, left, i;
	int			 ch, rc, bad = 0, taken = 0, joined = 0;
	int			 woken = 0;

	memset(&o, 0, sizeof(o));
	while ((ch = getopt(argc, argv, "n:s:")) != -1) {
		switch (ch) {
		case 'n':
			n = strtoul(optarg, NULL, 10);
			if (n < 2 || n > 100000) {
				fprintf(stderr, "futures: -n: 2 to 100000\n");
				return (64);
			}
			break;
		case 's':
			o.control = optarg;
			break;
		default:
			fprintf(stderr, "usage: futures [-s socket] "
			    "[-n tasks]\n");
			return (64);
		}
	}
	if ((r = r3q_connect(&o, err, sizeof(err))) == NULL) {
		fprintf(stderr, "futures: %s\n", err);
		return (69);
	}
	memset(&jo, 0, sizeof(jo));
	jo.name = "futures example";
	if ((job = r3q_job_open(r, &jo)) == NULL) {
		fprintf(stderr, "futures: %s\n", r3q_error(r));
		r3q_close(r);
		return (1);
	}

	/* Asynchronous calls: a future each, at once. */
	cap = n + LATE;
	fs = calloc(cap, sizeof(*fs));
	in = calloc(cap, sizeof(*in));
	if (fs == NULL || in == NULL)
		return (1);
	for (nf = 0; nf < n; nf++) {
		snprintf(buf, sizeof(buf), "hello %zu", nf);
		in[nf] = strdup(buf);
		if ((fs[nf] = r3q_submit(job, "echo", buf, strlen(buf))) ==
		    NULL) {
			fprintf(stderr, "futures: %s\n", r3q_error(r));
			return (1);
		}
	}

	/* Cancel the last one; unless it was done already, it says so. */
	if (r3q_cancel(fs[n - 1]) == R3Q_OK &&
	    r3q_future_get(fs[n - 1], 0, NULL, NULL) != R3Q_ECANCELLED) {
		fprintf(stderr, "futures: a cancelled task is not\n");
		bad = 1;
	}
	printf("cancelled '%s'\n", in[n - 1]);
	r3q_future_free(fs[n - 1]);
	fs[n - 1] = NULL;
	left = n - 1;

	if (pthread_create(&th, NULL, producer, r) != 0)
		return (1);

	/*
	 * Take results as they come.  A signal means the other thread
	 * has work for us: submit it and go on waiting.
	 */
	while (left > 0 || !taken) {
		if (left == 0) {
			/* Nothing to wait on: the work is on its way. */
			pthread_join(th, NULL);
			joined = 1;
			rc = R3Q_ESIGNALLED;
		} else if ((rc = r3q_wait_any(fs, nf, 60000, &i)) ==
		    R3Q_ESIGNALLED)
			woken = 1;	/* a wait took the signal */
		if (rc == R3Q_ESIGNALLED) {
			pthread_mutex_lock(&mtx);
			ch = taken;
			for (; taken < nlate; taken++) {
				in[nf] = late[taken];
				fs[nf] = r3q_submit(job, "echo", in[nf],
				    strlen(in[nf]));
				if (fs[nf] == NULL)
					return (1);
				nf++;
				left++;
			}
			pthread_mutex_unlock(&mtx);
			if (taken > ch)
				printf("signalled: %d more tasks\n",
				    taken - ch);
			continue;
		}
		if (rc != R3Q_OK) {
			fprintf(stderr, "futures: waiting: %s\n",
			    r3q_strerror(rc));
			bad = 1;
			break;
		}
		if (check(fs[i], in[i]) == -1)
			bad = 1;
		r3q_future_free(fs[i]);
		fs[i] = NULL;
		left--;
	}
	if (!joined)
		pthread_join(th, NULL);

	for (i = 0; i < nf; i++) {
		r3q_future_free(fs[i]);
		free(in[i]);
	}
	free(fs);
	free(in);
	/*
	 * The producer signals once.  If its work was found after the join
	 * instead, no wait has taken that signal yet, and it wakes the next
	 * blocking call (r3q(3)): the close, which then returns
	 * R3Q_ESIGNALLED; the job is closed all the same, and every future
	 * was checked above.
	 */
	rc = r3q_job_close(job);
	if (rc != R3Q_OK && !(rc == R3Q_ESIGNALLED && !woken)) {
		fprintf(stderr, "futures: closing the job: %s\n", r3q_error(r));
		bad = 1;
	}
	r3q_close(r);
	return (bad ? 1 : 0);
}

/*
 * r3q-prioclient: a libr3q client for tests/regress/batch-prio.sh, to
 * check priorities and copies end to end (the wire, masterd, the core).
 *
 *   r3q-prioclient order N	open a WQ job, submit N echo tasks whose
 *				priorities are a shuffle of 0..N-1 (the
 *				payload says which) in one batch, and print
 *				the payloads in the order they complete
 *   r3q-prioclient copies K	one echo task with K copies at once; print
 *				its output and the job's id
 *
 * Connects as libr3q does ($R3Q_CONTROL).  Exits 0 if every task came
 * back as it went.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "r3q.h"

static int
prio_order(struct r3q_job *job, int n)
{
	struct r3q_future	**f;
	struct r3q_task		 t;
	const void		*out;
	size_t			 len, which;
	char			 buf[32];
	int			*p, i, k, tmp, rc;

	f = calloc(n, sizeof(*f));
	p = calloc(n, sizeof(*p));
	for (i = 0; i < n; i++)
		p[i] = i;
	srand(7);
	for (i = n - 1; i > 0; i--) {
		k = rand() % (i + 1);
		tmp = p[i];
		p[i] = p[k];
		p[k] = tmp;
	}
	for (i = 0; i < n; i++) {
		snprintf(buf, sizeof(buf), "%d", p[i]);
		memset(&t, 0, sizeof(t));
		t.kind = "echo";
		t.payload = buf;
		t.len = strlen(buf);
		t.priority = p[i];
		if ((f[i] = r3q_submit_task(job, &t)) == NULL)
			return (1);
	}
	r3q_flush(job);
	for (i = 0; i < n; i++) {
		if ((rc = r3q_wait_any(f, n, 30000, &which)) != R3Q_OK) {
			fprintf(stderr, "wait: %s\n", r3q_strerror(rc));
			return (1);
		}
		if (r3q_future_result(f[which], &out, &len) != R3Q_OK) {
			fprintf(stderr, "task %zu: %s\n", which,
			    r3q_future_error(f[which]));
			return (1);
		}
		printf("%.*s\n", (int)len, (const char *)out);
		r3q_future_free(f[which]);
		f[which] = NULL;
	}
	free(f);
	free(p);
	return (0);
}

static int
prio_copies(struct r3q_job *job, unsigned k)
{
	struct r3q_future	*f;
	struct r3q_task		 t;
	const void		*out;
	size_t			 len;
	int			 rc;

	memset(&t, 0, sizeof(t));
	t.kind = "echo";
	t.payload = "copied";
	t.len = 6;
	t.copies = k;
	if ((f = r3q_submit_task(job, &t)) == NULL)
		return (1);
	r3q_flush(job);
	if ((rc = r3q_future_get(f, 30000, &out, &len)) != R3Q_OK) {
		fprintf(stderr, "copies: %s\n", r3q_strerror(rc));
		return (1);
	}
	printf("%.*s job %llu\n", (int)len, (const char *)out,
	    (unsigned long long)r3q_job_id(job));
	r3q_future_free(f);
	return (0);
}

int
main(int argc, char *argv[])
{
	struct r3q_job_options	 jo;
	struct r3q		*r;
	struct r3q_job		*job;
	char			 err[256];
	int			 rc;

	if (argc != 3 || (strcmp(argv[1], "order") != 0 &&
	    strcmp(argv[1], "copies") != 0)) {
		fprintf(stderr, "usage: r3q-prioclient order N | copies K\n");
		return (64);
	}
	if ((r = r3q_connect(NULL, err, sizeof(err))) == NULL) {
		fprintf(stderr, "%s\n", err);
		return (69);
	}
	memset(&jo, 0, sizeof(jo));
	jo.name = argv[1];
	jo.policy = "wq";
	if ((job = r3q_job_open(r, &jo)) == NULL) {
		fprintf(stderr, "%s\n", r3q_error(r));
		return (1);
	}
	if (strcmp(argv[1], "order") == 0)
		rc = prio_order(job, atoi(argv[2]));
	else
		rc = prio_copies(job, (unsigned)atoi(argv[2]));
	r3q_job_close(job);
	r3q_close(r);
	return (rc);
}

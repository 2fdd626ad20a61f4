/*
 * libr3q's futures: made at submit, resolved once (an outcome, a refusal,
 * a cancel, the connection given up), found by key in their job's table
 * while the master has them, and waited for one, any or all at a time.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "r3q-int.h"

#define TABLE_MUL	0x9e3779b97f4a7c15ULL	/* Fibonacci hashing */
#define TABLE_MINBITS	10

/* A future holding a copy of the payload, held by the program. */
struct r3q_future *
fut_new(struct r3q_job *j, const void *payload, size_t len)
{
	struct r3q_future	*f;

	if (len > SIZE_MAX - sizeof(*f) ||
	    (f = malloc(sizeof(*f) + len)) == NULL)
		return (NULL);
	memset(f, 0, sizeof(*f));
	if (len > 0)
		memcpy(f->f_payload, payload, len);
	f->f_len = len;
	f->f_job = j;
	f->f_refs = FR_USER;
	f->f_state = FS_QUEUED;
	TAILQ_INSERT_TAIL(&j->j_futures, f, f_entry);
	j->j_refs++;
	return (f);
}

/*
 * Resolve a future once: status, a copy of the output (NUL-terminated,
 * for text), the error text.  Waiters are woken by whoever holds the
 * lock (r_resolved).
 */
void
fut_resolve(struct r3q_future *f, int rc, const void *out, size_t outlen,
    const char *err)
{
	struct r3q	*r = f->f_job->j_conn;

	if (f->f_done)
		return;
	if (rc == R3Q_OK) {
		if ((f->f_out = malloc(outlen + 1)) == NULL) {
			rc = R3Q_ENOMEM;
			err = "out of memory for the output";
		} else {
			if (outlen > 0)
				memcpy(f->f_out, out, outlen);
			f->f_out[outlen] = '\0';
			f->f_outlen = outlen;
		}
	}
	if (err != NULL && *err != '\0')
		f->f_error = strdup(err);
	if (f->f_state == FS_SENT && f->f_batch != NULL) {
		f->f_batch->b_unresolved--;
		r->r_unresolved--;
	}
	f->f_batch = NULL;
	f->f_status = rc;
	f->f_state = FS_DONE;
	f->f_order = ++r->r_order;
	r->r_resolved = 1;
	__atomic_store_n(&f->f_done, 1, __ATOMIC_RELEASE);
}

/* Free a future nobody holds any more. */
void
fut_free(struct r3q_future *f)
{
	struct r3q_job	*j = f->f_job;

	TAILQ_REMOVE(&j->j_futures, f, f_entry);
	free(f->f_out);
	free(f->f_error);
	free(f);
	job_unref(j);
}

/* Drop one holder; the last frees it. */
void
fut_unref(struct r3q_future *f, unsigned who)
{
	f->f_refs &= ~who;
	if (f->f_refs == 0)
		fut_free(f);
}

static size_t
table_slot(const struct lr_table *t, uint64_t key)
{
	return ((size_t)((key * TABLE_MUL) >> (64 - t->t_bits)));
}

/* Double the table. */
static int
table_grow(struct lr_table *t)
{
	struct r3q_future	**nb, *f, *fn;
	struct lr_table		 nt;
	size_t			 i, s;

	nt.t_bits = t->t_b == NULL ? TABLE_MINBITS : t->t_bits + 1;
	if ((nb = calloc((size_t)1 << nt.t_bits, sizeof(*nb))) == NULL)
		return (-1);
	nt.t_b = nb;
	for (i = 0; t->t_b != NULL && i < ((size_t)1 << t->t_bits); i++) {
		for (f = t->t_b[i]; f != NULL; f = fn) {
			fn = f->f_hnext;
			s = table_slot(&nt, f->f_key);
			f->f_hnext = nb[s];
			nb[s] = f;
		}
	}
	free(t->t_b);
	t->t_b = nb;
	t->t_bits = nt.t_bits;
	return (0);
}

/* Add a future under its key; -1 only if there is no room at all. */
int
table_add(struct lr_table *t, struct r3q_future *f)
{
	size_t	 s;

	if ((t->t_b == NULL || t->t_n >= ((size_t)1 << t->t_bits)) &&
	    table_grow(t) == -1 && t->t_b == NULL)
		return (-1);
	s = table_slot(t, f->f_key);
	f->f_hnext = t->t_b[s];
	t->t_b[s] = f;
	t->t_n++;
	return (0);
}

struct r3q_future *
table_find(const struct lr_table *t, uint64_t key)
{
	struct r3q_future	*f;

	if (t->t_b == NULL)
		return (NULL);
	for (f = t->t_b[table_slot(t, key)]; f != NULL; f = f->f_hnext)
		if (f->f_key == key)
			return (f);
	return (NULL);
}

void
table_del(struct lr_table *t, struct r3q_future *f)
{
	struct r3q_future	**p;

	if (t->t_b == NULL)
		return;
	for (p = &t->t_b[table_slot(t, f->f_key)]; *p != NULL;
	    p = &(*p)->f_hnext) {
		if (*p == f) {
			*p = f->f_hnext;
			t->t_n--;
			return;
		}
	}
}

void
table_free(struct lr_table *t)
{
	free(t->t_b);
	t->t_b = NULL;
	t->t_n = 0;
}

static int
fut_is_done(void *arg)
{
	return (((struct r3q_future *)arg)->f_done);
}

/* The result of a resolved future; R3Q_EPENDING if it is not yet. */
int
r3q_future_result(const struct r3q_future *f, const void **data,
    size_t *len)
{
	if (data != NULL)
		*data = NULL;
	if (len != NULL)
		*len = 0;
	if (f == NULL)
		return (R3Q_EINVAL);
	if (!__atomic_load_n(&f->f_done, __ATOMIC_ACQUIRE))
		return (R3Q_EPENDING);
	if (data != NULL)
		*data = f->f_out != NULL ? (const void *)f->f_out : "";
	if (len != NULL)
		*len = f->f_outlen;
	return (f->f_status);
}

/* Wait up to timeout ms (< 0: forever) for a future, and give its result. */
int
r3q_future_get(struct r3q_future *f, int timeout, const void **data,
    size_t *len)
{
	struct r3q	*r;
	int		 rc;

	if (f == NULL)
		return (R3Q_EINVAL);
	if (!__atomic_load_n(&f->f_done, __ATOMIC_ACQUIRE)) {
		r = f->f_job->j_conn;
		pthread_mutex_lock(&r->r_mtx);
		rc = lr_wait(r, fut_is_done, f, timeout, 1);
		pthread_mutex_unlock(&r->r_mtx);
		if (rc != R3Q_OK) {
			if (data != NULL)
				*data = NULL;
			if (len != NULL)
				*len = 0;
			return (rc);
		}
	}
	return (r3q_future_result(f, data, len));
}

int
r3q_future_done(const struct r3q_future *f)
{
	return (f != NULL && __atomic_load_n(&f->f_done, __ATOMIC_ACQUIRE));
}

/* What went wrong, in words; NULL if it has not resolved or succeeded. */
const char *
r3q_future_error(const struct r3q_future *f)
{
	if (!r3q_future_done(f) || f->f_status == R3Q_OK)
		return (NULL);
	return (f->f_error != NULL ? f->f_error : r3q_strerror(f->f_status));
}

/* The program lets go of a future; an unresolved one is cancelled. */
void
r3q_future_free(struct r3q_future *f)
{
	struct r3q	*r;

	if (f == NULL)
		return;
	r = f->f_job->j_conn;
	pthread_mutex_lock(&r->r_mtx);
	if (!f->f_done)
		job_cancel_future(f);
	fut_unref(f, FR_USER);
	if (r->r_resolved) {
		r->r_resolved = 0;
		pthread_cond_broadcast(&r->r_cond);
	}
	pthread_mutex_unlock(&r->r_mtx);
}

struct lr_any {
	struct r3q_future	**a_fs;
	size_t			 a_n;
	size_t			 a_i;
};

/* The future that resolved first, if any did. */
static int
any_done(void *arg)
{
	struct lr_any	*a = arg;
	uint64_t	 best = 0;
	size_t		 i;
	int		 found = 0;

	for (i = 0; i < a->a_n; i++) {
		if (a->a_fs[i] == NULL || !a->a_fs[i]->f_done)
			continue;
		if (!found || a->a_fs[i]->f_order < best) {
			best = a->a_fs[i]->f_order;
			a->a_i = i;
			found = 1;
		}
	}
	return (found);
}

/* All resolved: a cursor that only moves forward. */
static int
all_done(void *arg)
{
	struct lr_any	*a = arg;

	while (a->a_i < a->a_n && (a->a_fs[a->a_i] == NULL ||
	    a->a_fs[a->a_i]->f_done))
		a->a_i++;
	return (a->a_i == a->a_n);
}

/* The connection of the first future in the list. */
static struct r3q *
any_conn(struct r3q_future **fs, size_t n)
{
	size_t	 i;

	for (i = 0; fs != NULL && i < n; i++)
		if (fs[i] != NULL)
			return (fs[i]->f_job->j_conn);
	return (NULL);
}

/*
 * Wait until one of the futures has resolved; *idx is the one that
 * resolved first.  NULL entries are skipped.
 */
int
r3q_wait_any(struct r3q_future **fs, size_t n, int timeout, size_t *idx)
{
	struct lr_any	 a;
	struct r3q	*r;
	int		 rc;

	if ((r = any_conn(fs, n)) == NULL)
		return (R3Q_EINVAL);
	a.a_fs = fs;
	a.a_n = n;
	a.a_i = 0;
	pthread_mutex_lock(&r->r_mtx);
	rc = lr_wait(r, any_done, &a, timeout, 1);
	pthread_mutex_unlock(&r->r_mtx);
	if (rc == R3Q_OK && idx != NULL)
		*idx = a.a_i;
	return (rc);
}

/* Wait until every future has resolved, whatever the outcome. */
int
r3q_wait_all(struct r3q_future **fs, size_t n, int timeout)
{
	struct lr_any	 a;
	struct r3q	*r;
	int		 rc;

	if ((r = any_conn(fs, n)) == NULL)
		return (n == 0 ? R3Q_OK : R3Q_EINVAL);
	a.a_fs = fs;
	a.a_n = n;
	a.a_i = 0;
	pthread_mutex_lock(&r->r_mtx);
	rc = lr_wait(r, all_done, &a, timeout, 1);
	pthread_mutex_unlock(&r->r_mtx);
	return (rc);
}

/*
 * Run n tasks of one kind as one closed batch and wait for all of them
 * (timeout ms, < 0 forever).  out[i] is in[i]'s: its output, malloc'd and
 * NUL-terminated, or for a failure the error text, and its status.
 * Tasks unresolved at a timeout or a signal are cancelled.
 */
int
r3q_map(struct r3q_job *j, const char *kind, const struct r3q_buf *in,
    size_t n, struct r3q_buf *out, int timeout)
{
	struct r3q		*r;
	struct r3q_future	**fs;
	struct lr_batch		*b;
	struct r3q_task		 t;
	const char		*e;
	size_t			 i;
	int			 rc, first = R3Q_OK;

	if (j == NULL || kind == NULL || *kind == '\0' ||
	    (n > 0 && (in == NULL || out == NULL)))
		return (R3Q_EINVAL);
	if (n == 0)
		return (R3Q_OK);
	r = j->j_conn;
	if ((fs = calloc(n, sizeof(*fs))) == NULL)
		return (R3Q_ENOMEM);
	memset(&t, 0, sizeof(t));
	t.kind = kind;
	pthread_mutex_lock(&r->r_mtx);
	if ((b = job_batch_new(j, kind, 1)) == NULL) {
		pthread_mutex_unlock(&r->r_mtx);
		free(fs);
		return (R3Q_ENOMEM);
	}
	for (i = 0; i < n; i++) {
		t.payload = in[i].data;
		t.len = in[i].len;
		if ((fs[i] = job_submit(j, b, &t)) == NULL)
			break;
	}
	job_batch_close(j, b);
	pthread_mutex_unlock(&r->r_mtx);
	rc = i < n ? R3Q_ENOMEM : r3q_wait_all(fs, n, timeout);

	pthread_mutex_lock(&r->r_mtx);
	for (i = 0; i < n; i++) {
		out[i].data = NULL;
		out[i].len = 0;
		if (fs[i] == NULL || !fs[i]->f_done) {
			out[i].status = rc != R3Q_OK ? rc : R3Q_ENOMEM;
			if (fs[i] != NULL)
				job_cancel_future(fs[i]);
		} else if ((out[i].status = fs[i]->f_status) == R3Q_OK) {
			out[i].data = fs[i]->f_out;
			out[i].len = fs[i]->f_outlen;
			fs[i]->f_out = NULL;
		} else {
			e = fs[i]->f_error != NULL ? fs[i]->f_error :
			    r3q_strerror(fs[i]->f_status);
			if ((out[i].data = strdup(e)) != NULL)
				out[i].len = strlen(e);
		}
		if (out[i].status != R3Q_OK && first == R3Q_OK)
			first = out[i].status;
		if (fs[i] != NULL)
			fut_unref(fs[i], FR_USER);
	}
	if (r->r_resolved) {
		r->r_resolved = 0;
		pthread_cond_broadcast(&r->r_cond);
	}
	pthread_mutex_unlock(&r->r_mtx);
	free(fs);
	return (rc != R3Q_OK ? rc : first);
}

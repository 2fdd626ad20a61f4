/*
 * libr3q: run tasks on an R3Q cluster from a C program.
 *
 * A connection (struct r3q) talks to one masterd, over mutual TLS or over
 * its local control socket.  On it a program opens jobs (struct r3q_job);
 * into a job it submits tasks, each a kind name and an opaque payload, and
 * gets a future (struct r3q_future) at once.  A future is resolved when the
 * task's result arrives: its output, or a failure.  The model of
 * doc/algorithms.md §5: asynchronous calls that return futures, waits
 * on one, any or all of several, a signal that wakes a waiter from another
 * thread, and clear failure semantics.
 *
 * Tasks submitted one by one go into the job's open batch of their kind;
 * r3q_flush() closes it (RR and R3Q replicate the tail of a closed batch
 * only: a batch is one generation), r3q_send() sends its tasks and leaves
 * it open.  r3q_map() is one whole batch.
 *
 * Failures (r3q_future_get() and friends return them; r3q_strerror()
 * names them, r3q_future_error() says more):
 *   R3Q_EREMOTE     the task's kind failed on max_attempts machines
 *   R3Q_EKILLED     max_kills workers were lost while running it
 *   R3Q_ECANCELLED  r3q_cancel(), or the job was cancelled
 *   R3Q_ETIMEDOUT   the wait's timeout passed; the task goes on
 *   R3Q_ESIGNALLED  r3q_signal() woke the wait; the task goes on
 *   R3Q_ECONN       the master could not be reached again within the
 *                   connection's reconnect_ms; the task may go on there
 *   R3Q_EINVAL, R3Q_ENOMEM, R3Q_ETOOBIG, R3Q_EPROTO, R3Q_EDENIED: the call
 *                   itself was wrong or refused; see r3q_error()
 * A broken connection is reconnected and every open job reattached
 * transparently: no result is lost or given twice.
 *
 * Threads: every function may be called from any thread; a connection has
 * one lock.  Blocking calls do the connection's I/O themselves (there is
 * no hidden thread); for programs with their own event loop, r3q_fd()
 * is readable when r3q_process() has something to do.  The library never
 * calls exit(), never writes to stdout or stderr, and never raises
 * SIGPIPE.
 *
 * Signals: r3q_signal() wakes one blocked wait (r3q_future_get,
 * r3q_wait_any, r3q_wait_all, r3q_map, r3q_job_open/attach/close/cancel)
 * with R3Q_ESIGNALLED, or the next one to block if none is; each signal
 * wakes one wait.  It is one write(2): safe in a signal handler.
 *
 * Submitting: r3q_submit() returns NULL only for a NULL argument or no
 * memory; any other refusal (R3Q_ETOOBIG, R3Q_EINVAL, R3Q_ECONN) is a
 * future resolved at once.  Tasks go out in frames of up to 1024 tasks or
 * 1 MiB when a frame fills or the program waits, flushes or processes.
 * Freeing an unresolved future cancels its task.  r3q(3) says the rest.
 */
#ifndef R3Q_H
#define R3Q_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define R3Q_OK		  0
#define R3Q_EREMOTE	(-1)
#define R3Q_EKILLED	(-2)
#define R3Q_ECANCELLED	(-3)
#define R3Q_ETIMEDOUT	(-4)
#define R3Q_ESIGNALLED	(-5)
#define R3Q_ECONN	(-6)
#define R3Q_EINVAL	(-7)
#define R3Q_ENOMEM	(-8)
#define R3Q_ETOOBIG	(-9)
#define R3Q_EPROTO	(-10)
#define R3Q_EDENIED	(-11)
#define R3Q_EPENDING	(-12)	/* r3q_future_result(): not resolved yet */

struct r3q;
struct r3q_job;
struct r3q_future;

/*
 * Where and how to connect.  NULL fields come from the environment
 * (R3Q_MASTER, R3Q_CA, R3Q_CERT, R3Q_KEY, R3Q_CONTROL, R3Q_CONFIG,
 * R3Q_CRL), then
 * from config (a file of "key = value" lines with the same keys, as in
 * masterd.conf), then: with master set, TLS; else the control socket
 * R3Q_CONTROL names, else the default one (r3qctl's).
 */
struct r3q_options {
	const char	*master;	/* host:port */
	const char	*ca;
	const char	*cert;
	const char	*key;
	const char	*control;	/* UNIX socket path */
	const char	*config;
	int		 reconnect_ms;	/* give up reconnecting after; 0: 60 s,
					   < 0: never */
	const char	*crl;		/* revocation list (PEM) the master's
					   certificate is checked against */
};

/* Connect (blocking, up to 10 s); NULL with a message in err. */
struct r3q	*r3q_connect(const struct r3q_options *, char *, size_t);
void		 r3q_close(struct r3q *);
const char	*r3q_error(const struct r3q *);
const char	*r3q_strerror(int);
int		 r3q_fd(struct r3q *);	/* epoll fd, stable across reconnects */
int		 r3q_process(struct r3q *);
void		 r3q_signal(struct r3q *);

/* A job's settings; zero fields take the master's defaults. */
struct r3q_job_options {
	const char	*name;
	const char	*policy;	/* a policy's name (r3q(3)) */
	unsigned	 queue_factor;	/* R3Q_QF_AUTO: auto */
	unsigned	 max_attempts;
	unsigned	 max_kills;
	unsigned	 verify;
	unsigned	 client_timeout_ms;
	const char	*balance;	/* none, one, power, global: move
					   held tasks between workers */
};
#define R3Q_QF_AUTO	0xffffffffu

/* Close waits for the job's end; cancel resolves what is left. */
struct r3q_job	*r3q_job_open(struct r3q *, const struct r3q_job_options *);
struct r3q_job	*r3q_job_attach(struct r3q *, uint64_t);
uint64_t	 r3q_job_id(const struct r3q_job *);
/* The master's max_job_tasks and max_job_memory (0: not said). */
void		 r3q_job_limits(struct r3q_job *, uint64_t *, uint64_t *);
int		 r3q_job_waiting(struct r3q_job *, char *, size_t);
int		 r3q_job_close(struct r3q_job *);
int		 r3q_job_cancel(struct r3q_job *);

/* One task of r3q_submit_task(). */
struct r3q_task {
	const char	*kind;
	const void	*payload;
	size_t		 len;
	int32_t		 priority;	/* lower runs first */
	unsigned	 copies;	/* 0, 1: one; n: n at once */
};

struct r3q_future *r3q_submit(struct r3q_job *, const char *, const void *,
		    size_t);
struct r3q_future *r3q_submit_task(struct r3q_job *, const struct r3q_task *);
int		 r3q_flush(struct r3q_job *);
int		 r3q_send(struct r3q_job *);
int		 r3q_cancel(struct r3q_future *);

int		 r3q_future_get(struct r3q_future *, int, const void **,
		    size_t *);
int		 r3q_future_result(const struct r3q_future *, const void **,
		    size_t *);
int		 r3q_future_done(const struct r3q_future *);
const char	*r3q_future_error(const struct r3q_future *);
void		 r3q_future_free(struct r3q_future *);
/* NULL entries are skipped; *idx: the first of them to resolve. */
int		 r3q_wait_any(struct r3q_future **, size_t, int, size_t *);
/* R3Q_OK once every future has resolved, whatever the outcome. */
int		 r3q_wait_all(struct r3q_future **, size_t, int);

/* r3q_map()'s inputs and outputs (outputs: malloc'd, the caller frees). */
struct r3q_buf {
	void		*data;
	size_t		 len;
	int		 status;	/* output: R3Q_OK or a failure */
};

/*
 * One closed batch, waited for: out[i] is in[i]'s status and its output,
 * or the error text of a failure (NUL-terminated, malloc'd).  R3Q_OK only
 * if every task succeeded, else the first failure in input order, or
 * R3Q_ETIMEDOUT/R3Q_ESIGNALLED (the tasks left are cancelled).
 */
int		 r3q_map(struct r3q_job *, const char *,
		    const struct r3q_buf *, size_t, struct r3q_buf *, int);

#ifdef __cplusplus
}
#endif

#endif /* R3Q_H */

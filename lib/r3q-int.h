/*
 * libr3q's insides, shared by its files and by nothing else: only r3q_*
 * symbols leave the shared library.
 *
 * conn.c: the connection (socket, TLS, reconnecting, the one lock, waits,
 * r3q_signal, r3q_fd/r3q_process); job.c: jobs, batches, sending tasks
 * and taking outcomes; future.c: futures, their table, waits on several,
 * r3q_map; admin.c: r3qctl's requests and answers (lr_admin_*), which
 * r3qctl links from a static copy of these files (libr3qclient.a).
 */
#ifndef R3Q_INT_H
#define R3Q_INT_H

#include <sys/queue.h>
#include <sys/socket.h>

#include <pthread.h>
#include <stdint.h>

#include <openssl/ssl.h>

#include "frame.h"
#include "r3q.h"
#include "spin.h"

#ifndef TAILQ_FOREACH_SAFE	/* glibc's queue.h lacks it */
#define TAILQ_FOREACH_SAFE(var, head, field, tvar)			\
	for ((var) = TAILQ_FIRST(head);					\
	    (var) != NULL && ((tvar) = TAILQ_NEXT(var, field), 1);	\
	    (var) = (tvar))
#endif

#define LR_FRAME_TASKS	1024		/* tasks per SubmitTasks frame */
#define LR_FRAME_BYTES	(1u << 20)	/* payload bytes per frame, soft */
#define LR_ACK_EVERY	256		/* results between acknowledgements */
#define LR_ACK_BYTES	(1 << 20)	/* or their bytes: masterd counts
					   them against max_job_memory */
#define LR_MAX_FRAME	(256u << 20)	/* largest frame taken in */
#define LR_CONNECT_MS	10000		/* first connection, TCP and TLS */
#define LR_RECONNECT_MS	60000		/* reconnect_ms 0 */
#define LR_BACKOFF_MIN	100		/* ms between attempts, doubling */
#define LR_BACKOFF_MAX	5000
#define LR_COPIES_MAX	16
#define LR_ERRLEN	256

/* Where a future is. */
enum fut_state {
	FS_QUEUED,		/* in its batch's queue, not sent yet */
	FS_SENT,		/* sent; in its job's table until its outcome */
	FS_CANCELLING,		/* resolved as cancelled; the master told */
	FS_DONE			/* resolved */
};

/* Who holds a future: it is freed when nobody does. */
#define FR_USER		0x1	/* the program (r3q_future_free drops it) */
#define FR_QUEUE	0x2	/* its batch's queue */
#define FR_TABLE	0x4	/* its job's table, until an outcome comes */

/*
 * A task and its result.  Made by r3q_submit, owned by the program and
 * by the library (f_refs) at once; its payload is kept, inside it, until
 * it is freed, so that a reconnect can send it again.
 */
struct r3q_future {
	struct r3q_job		*f_job;
	struct lr_batch		*f_batch;	/* NULL once resolved */
	uint64_t		 f_key;
	uint64_t		 f_reqid;	/* its last SubmitTasks frame */
	uint64_t		 f_order;	/* resolution order (wait_any) */
	struct r3q_future	*f_hnext;	/* table chain */
	struct r3q_future	*f_qnext;	/* batch queue */
	TAILQ_ENTRY(r3q_future)	 f_entry;	/* job's futures */
	int			 f_state;
	int			 f_done;	/* atomic: resolved */
	int			 f_status;
	unsigned		 f_refs;
	int32_t			 f_priority;
	uint32_t		 f_copies;
	uint8_t			*f_out;
	size_t			 f_outlen;
	char			*f_error;
	size_t			 f_len;
	uint8_t			 f_payload[];
};
TAILQ_HEAD(lr_futures, r3q_future);

/* Futures by key: chained, doubling. */
struct lr_table {
	struct r3q_future	**t_b;
	unsigned		 t_bits;
	size_t			 t_n;
};

/*
 * One batch of a job: one kind, numbered by us from 1.  Lives in its
 * job until it is closed, sent, and every task of it resolved.
 */
struct lr_batch {
	TAILQ_ENTRY(lr_batch)	 b_entry;
	uint64_t		 b_id;
	char			*b_kind;
	int			 b_map;		/* r3q_map's own */
	int			 b_closed;	/* no more tasks */
	int			 b_close_sent;
	int			 b_sent;	/* some task went out */
	struct r3q_future	*b_qhead;
	struct r3q_future	**b_qtail;
	size_t			 b_qn;
	size_t			 b_qbytes;
	size_t			 b_unresolved;	/* sent, no outcome yet */
};
TAILQ_HEAD(lr_batches, lr_batch);

/*
 * A job on the master.  The program holds it until r3q_job_close or
 * r3q_job_cancel; each of its futures holds it too (j_refs).
 */
struct r3q_job {
	TAILQ_ENTRY(r3q_job)	 j_entry;
	struct r3q		*j_conn;
	uint64_t		 j_id;
	uint64_t		 j_next_key;
	uint64_t		 j_next_batch;
	uint64_t		 j_seen;	/* highest seq stored */
	uint64_t		 j_acked;	/* highest seq acknowledged */
	uint64_t		 j_unacked;	/* bytes stored since */
	uint64_t		 j_max_payload;
	uint64_t		 j_max_tasks;	/* the master's caps on the */
	uint64_t		 j_max_memory;	/* job; 0: not said */
	struct lr_batches	 j_batches;
	struct lr_batch		*j_last;	/* last batch submitted to */
	struct lr_table		 j_table;
	struct lr_futures	 j_futures;
	uint64_t		*j_cancel;	/* keys to cancel, not sent */
	size_t			 j_ncancel;
	size_t			 j_cancelsz;
	unsigned		 j_refs;
	int			 j_user;	/* the program holds it */
	int			 j_closing;	/* CloseJob sent; JobInfo due */
	uint64_t		 j_close_id;
	int			 j_close_done;
	int			 j_close_rc;
	int			 j_gone;	/* refused; submits fail */
	int			 j_gone_rc;
	char			*j_gone_err;
	uint64_t		 j_attach_id;	/* reattach after a reconnect */
};
TAILQ_HEAD(lr_jobs, r3q_job);

/*
 * A request awaiting its answer (OpenJob, AttachJob, CloseJob,
 * CancelJob, JobQuery).  Its Envelope is kept packed without an id so
 * that a reconnect can send it again under a new one.
 */
#define LR_ASK_MS	5000	/* r3q_job_waiting's wait for the answer */

struct lr_req {
	TAILQ_ENTRY(lr_req)	 q_entry;
	uint64_t		 q_id;
	uint8_t			*q_body;
	size_t			 q_len;
	int			 q_done;
	int			 q_rc;
	char			 q_err[LR_ERRLEN];
	uint64_t		 q_job;		/* JobOpened, JobInfo */
	uint64_t		 q_acked;
	uint64_t		 q_max_payload;
	uint64_t		 q_max_tasks;
	uint64_t		 q_max_memory;
	char			 q_state[32];
	char			 q_waiting[LR_ERRLEN];	/* JobInfo */
};
TAILQ_HEAD(lr_reqs, lr_req);

struct lr_admsg;
TAILQ_HEAD(lr_admq, lr_admsg);

enum conn_state {
	CS_DOWN,		/* waiting to try again */
	CS_CONNECTING,		/* connect(2) under way */
	CS_HANDSHAKE,		/* TLS handshake under way */
	CS_UP,
	CS_DEAD			/* gave up: everything failed with ECONN */
};

/*
 * A connection to one masterd.  Everything below r_mtx is guarded by it;
 * r_sigfd is written without it (r3q_signal).  One thread at a time polls
 * the socket (r_reading) with the lock dropped; the others wait on r_cond,
 * which is broadcast when futures resolve or the reader leaves.
 */
struct r3q {
	pthread_mutex_t		 r_mtx;
	pthread_cond_t		 r_cond;
	int			 r_reading;
	pthread_t		 r_reader;
	int			 r_sigfd;	/* eventfd, semaphore */
	int			 r_wakefd;	/* eventfd: wake the reader */
	int			 r_epfd;	/* r3q_fd, made on first use */
	int			 r_timerfd;
	int			 r_ep_sock;	/* registered socket, -1 */
	uint32_t		 r_ep_events;
	uint64_t		 r_timer_at;	/* armed deadline, 0 none */
	int			 r_kicked;
	int			 r_pending;	/* cancels or closes to send */

	/* Where. */
	int			 r_tls;
	char			*r_host;
	char			*r_master;	/* host:port as given, TLS */
	int			 r_defsock;	/* the default control socket:
						   nothing said where */
	struct sockaddr_storage	*r_addrs;
	socklen_t		*r_addrlens;
	size_t			 r_naddrs;
	size_t			 r_addri;
	SSL_CTX			*r_ctx;
	char			*r_crl;		/* its crl's path, NULL: none */
	int			 r_reconnect_ms;

	/* The connection now. */
	enum conn_state		 r_state;
	int			 r_fd;
	SSL			*r_ssl;
	short			 r_want;	/* handshake or TLS I/O: POLL* */
	int			 r_wantw;	/* output left; wait to write */
	int			 r_ever_up;
	uint64_t		 r_down_since;	/* ns, 0: up */
	uint64_t		 r_retry_at;
	unsigned		 r_backoff;
	uint64_t		 r_reqid;
	uint8_t			*r_ob;		/* output, flat */
	size_t			 r_obstart;
	size_t			 r_oblen;
	size_t			 r_obsize;
	struct evbuffer		*r_in;
	struct frame_arena	*r_arena;
	R3q__TaskSpec		*r_specs;	/* a frame's worth */
	R3q__TaskSpec		**r_specp;
	struct r3q_future	**r_fbuf;

	struct lr_jobs		 r_jobs;
	struct lr_reqs		 r_reqs;
	int			 r_admin;	/* admin.c's: frames to r_admq,
						   no reconnecting */
	int			 r_admin_lost;	/* a frame not kept */
	struct lr_admq		 r_admq;
	size_t			 r_queued;	/* tasks not sent yet */
	size_t			 r_unresolved;	/* sent, no outcome yet */
	struct spin		 r_spin;	/* a lone wait's poll (spin.h) */
	uint64_t		 r_order;	/* futures resolved so far */
	int			 r_resolved;	/* since the last broadcast */
	char			 r_err[LR_ERRLEN];
};

/* conn.c */
uint64_t	 lr_now(void);
void		 lr_seterr(struct r3q *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));
int		 lr_send(struct r3q *, Envelope *, uint64_t *);
int		 lr_send_req(struct r3q *, struct lr_req *);
struct lr_req	*lr_req_new(struct r3q *, Envelope *);
void		 lr_req_free(struct r3q *, struct lr_req *);
int		 lr_wait(struct r3q *, int (*)(void *), void *, int, int);
void		 lr_queued(struct r3q *);
int		 lr_write(struct r3q *);
void		 lr_wake(struct r3q *);

/* job.c */
void		 job_unref(struct r3q_job *);
void		 job_free(struct r3q_job *);
int		 job_flush(struct r3q_job *);
void		 job_flush_all(struct r3q *);
void		 job_ack_all(struct r3q *, int);
void		 job_resume(struct r3q_job *);
void		 job_fail(struct r3q_job *, int, const char *);
void		 job_dispatch(struct r3q *, Envelope *);
struct lr_batch	*job_batch_new(struct r3q_job *, const char *, int);
void		 job_batch_close(struct r3q_job *, struct lr_batch *);
struct r3q_future *job_submit(struct r3q_job *, struct lr_batch *,
		    const struct r3q_task *);
void		 job_cancel_future(struct r3q_future *);

/* admin.c */
struct r3q	*lr_admin_connect(const struct r3q_options *, char *, size_t);
int		 lr_admin_send(struct r3q *, Envelope *, uint64_t *);
int		 lr_admin_recv(struct r3q *, Envelope **, int);
const char	*lr_admin_master(const struct r3q *);
void		 lr_admin_take(struct r3q *, const Envelope *);
void		 lr_admin_clear(struct r3q *);

/* future.c */
struct r3q_future *fut_new(struct r3q_job *, const void *, size_t);
void		 fut_resolve(struct r3q_future *, int, const void *, size_t,
		    const char *);
void		 fut_unref(struct r3q_future *, unsigned);
void		 fut_free(struct r3q_future *);
int		 table_add(struct lr_table *, struct r3q_future *);
struct r3q_future *table_find(const struct lr_table *, uint64_t);
void		 table_del(struct lr_table *, struct r3q_future *);
void		 table_free(struct lr_table *);

#endif /* R3Q_INT_H */

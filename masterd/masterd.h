/* masterd's private header: its configuration and runtime objects. */
#ifndef R3Q_MASTERD_H
#define R3Q_MASTERD_H

#include <sys/queue.h>

#include <stdint.h>
#include <time.h>

#include <openssl/ssl.h>

#include "conf.h"
#include "frame.h"
#include "sched/sched.h"
#include "siphash.h"
#include "u64map.h"

struct event_base;
struct bufferevent;
struct evbuffer_cb_entry;
struct tls_crl;
struct tls_peer_id;
struct seal;
struct evconnlistener;
struct sockaddr;
struct es;

/*
 * journal_delay's default, in ms (job_journal_due()).  2 ms until schema
 * version 5: then each commit's own pages (the header, the interior
 * pages, the last leaves written again) were most of what it wrote, and
 * 10 ms took masterd's CPU per task with the journal on from 3.2-3.5 to
 * 2.75-3.0 us at 4 workers (2.45 with it off); 50 ms gained nothing more.
 */
#define JOURNAL_DELAY_MS	10

/* What masterd.conf says (plus command-line overrides). */
struct masterd_config {
	char		 listen[CONF_STRMAX];
	char		 control[CONF_STRMAX];
	char		 ca[CONF_STRMAX];
	char		 cert[CONF_STRMAX];
	char		 key[CONF_STRMAX];
	char		 crl[CONF_STRMAX];	/* none, or a PEM file */
	char		 journal[CONF_STRMAX];
	char		 policy[CONF_STRMAX];
	char		 queue_factor[CONF_STRMAX];	/* 1..SCHED_QF_MAX or auto */
	uint64_t	 max_frame;
	unsigned	 max_attempts;
	uint64_t	 handshake_timeout;	/* ms */
	char		 http[CONF_STRMAX];	/* none, port or host:port */
	uint64_t	 heartbeat_timeout;	/* ms */
	uint64_t	 link_timeout;		/* ms, 0: the kernel's */
	uint64_t	 journal_retention;	/* ms */
	uint64_t	 suspect_grace;		/* ms */
	unsigned	 suspect_limit;
	uint64_t	 suspect_window;	/* ms */
	uint64_t	 suspect_cooldown;	/* ms */
	unsigned	 max_kills;
	unsigned	 verify;		/* machines that must agree */
	uint64_t	 max_payload;		/* a task's payload, output */
	uint64_t	 client_timeout;	/* ms a batch job waits for its
						   client */
	uint64_t	 client_buffer;		/* bytes queued to a client */
	uint64_t	 frame_timeout;		/* ms a frame may take to
						   arrive once begun */
	/* Bounded everything: marks, limits and caps. */
	uint64_t	 worker_buffer;		/* bytes queued to a worker */
	uint64_t	 output_limit;		/* to any peer: then dropped */
	uint64_t	 output_timeout;	/* ms over its mark, unread */
	unsigned	 max_workers;
	unsigned	 max_relay_workers;	/* streams on one relay link */
	unsigned	 max_clients;
	unsigned	 max_jobs;		/* running, in all */
	unsigned	 max_jobs_per_client;
	unsigned	 max_queued_tasks;	/* not yet ended, in all */
	unsigned	 max_job_tasks;		/* ... in one job */
	unsigned	 max_client_kinds;	/* distinct kinds a client's
						   batches hold */
	uint64_t	 max_memory;		/* jobs' state, in all */
	uint64_t	 max_job_memory;	/* ... of one job */
	unsigned	 connect_rate;		/* per second per address */
	unsigned	 connect_burst;
	unsigned	 max_http;		/* HTTP connections at once */
	unsigned	 max_http_per_addr;	/* ... from one address; 0: a
						   quarter of max_http */
	unsigned	 max_batches_job;	/* not ended, in one job */
	unsigned	 max_batches_client;	/* ... in one owner's jobs */
	uint64_t	 journal_retry;		/* ms between tries of a
						   stalled journal */
	uint64_t	 journal_delay;		/* ms a commit may wait
						   while only workers are
						   told (job_journal_due) */
	char		 balance[CONF_STRMAX];	/* a job's default */
	uint64_t	 power_interval;	/* ms */
	char		 balance_topology[CONF_STRMAX];
	char		 trace[CONF_STRMAX];	/* TRACE_* subsystems */
	char		 ca_key[CONF_STRMAX];	/* none: no join tokens */
	uint64_t	 cert_lifetime;		/* ms, of a certificate issued */
	char		 advertise[CONF_STRMAX];	/* joiners dial; auto */
	unsigned	 join_rate_global;	/* failed joins a minute, all
						   sources; 0: no bound */
	int		 sealed_frames;		/* seal.h: workers that offer */
	uint64_t	 max_journal;		/* journal bytes, in all */
	uint64_t	 max_journal_client;	/* ... of one client */
	int		 keep_acked;		/* keep what clients took */
};

extern const struct conf_key masterd_keys[];
int	masterd_parse_qf(const char *, unsigned *);
void	masterd_config_defaults(struct masterd_config *);
int	masterd_config_check(const struct masterd_config *, char *, size_t);
void	masterd_apply_fault(void);
void	masterd_apply_balance(void);
void	masterd_mkparent(const char *, unsigned, const char *);

enum role {
	ROLE_NONE = 0,		/* handshake or hello not done yet */
	ROLE_WORKER,
	ROLE_CLIENT,
	ROLE_RELAY,		/* limits only: a worker whose certificate
				   says relay (s_relay) */
	ROLE_JOINER		/* TLS without a certificate: may only join */
};

struct rlink;
struct rstream;

/*
 * One connection: a worker or a client over TLS, or a client on the control
 * socket.  Owned by the session layer (session.c), on its list; dies
 * when the peer goes away, misbehaves, or masterd exits.
 */
struct session {
	TAILQ_ENTRY(session)	 s_entry;
	struct bufferevent	*s_bev;
	char			 s_addr[64];	/* peer address, for logs */
	char			 s_name[64];	/* certificate CN */
	enum role		 s_role;
	int			 s_tls;
	int			 s_closing;	/* flush, then free */
	struct worker		*s_worker;
	uint64_t		 s_watch;	/* job a client follows */
	uint64_t		 s_watch_req;	/* its request id */
	uint64_t		 s_watch_gen;	/* its reports sent so far */
	char			 s_owner[80];	/* unix:NAME or tls:CN */
	int			 s_admin;	/* sees every job */
	int			 s_verified;	/* TLS handshake done */
	/*
	 * One deadline: until the peer has a role, handshake_timeout from
	 * accept (not restarted by each byte); then frame_timeout from the
	 * first byte of a frame that has not all arrived.
	 */
	struct event		*s_deadline;
	int			 s_deadline_on;
	uint32_t		 s_flen;	/* the frame being read: length */
	uint32_t		 s_fbody;	/* its type, once judged */
	int			 s_paused;	/* its output is over its mark:
						   a client is not read, a
						   worker gets no tasks */
	int			 s_noread;	/* paused client: frames wait */
	uint64_t		 s_npauses;	/* the first is logged */
	int			 s_refused;	/* over max_clients: its first
						   request is refused */
	int			 s_dropped;	/* over a limit: freed soon */
	uint64_t		 s_stuck;	/* mono ns its output last
						   moved (or began to fill) */
	struct evbuffer_cb_entry *s_outcb;	/* watches its output */
	int			 s_jheld;	/* reading stopped: the journal
						   cannot be written */
	time_t			 s_not_after;	/* its certificate's, Unix s */
	/* Relays (masterd/relay.c). */
	int			 s_relay;	/* its certificate says relay */
	struct rlink		*s_rlink;	/* a relay's link: its streams */
	struct rstream		*s_rstream;	/* a relayed worker: its stream */
	char			*s_via;		/* relays it came through;
						   NULL: direct */
	uint64_t		 s_renewed;	/* mono ns of its last renewal */
	/* Sealed frames (common/seal.h): no SSL object after the mark. */
	struct seal		*s_seal;	/* its keys: s_bev is the bare
						   socket (SEAL_BARE) */
	struct evbuffer		*s_in;		/* sealed: frames opened, not
						   yet read (session_in()) */
	int			 s_sealfail;	/* a record did not open or
						   seal: closing */
	struct tls_peer_id	*s_peer;	/* its certificate, for CRLs */
};
TAILQ_HEAD(sessionlist, session);

/* A TaskPush to send at the next flush (server_push). */
struct push_pending {
	uint64_t		*pp_ids;
	size_t			 pp_n;
	uint32_t		 pp_bound;
	uint64_t		*pp_donate;
	size_t			 pp_ndonate;
};

/* Longest a worker's peer_listen, and a drain's reason, may be. */
#define PEER_ADDR_MAX		80
#define DRAIN_WHY_MAX		128
/* Longest text of the relays a relayed worker came through. */
#define RELAY_VIA_TEXT		128

/*
 * A worker known to the core.  Created by a valid hello (worker.c), in
 * its table by id; freed when its session closes, and its tasks
 * then go back to the queue.  The frames being built for it (w_out ...
 * w_push) are dispatch.c's.
 */
struct worker {
	uint32_t		 w_id;
	char			 w_name[64];
	uint32_t		 w_cpus;
	uint32_t		*w_kinds;	/* interned kinds it offers */
	size_t			 w_nkinds;
	char			**w_unavail;	/* "kind: why" of each kind it
						   withdrew (KindUnavailable) */
	size_t			 w_nunavail;
	double			 w_speed;	/* as the worker says */
	uint32_t		 w_delay_ms;	/* emulated delay it adds */
	uint64_t		 w_node;	/* MAC of its name: the machine,
						   across reconnections */
	uint64_t		 w_group;	/* who answers for it: w_node,
						   or behind a relay, the MAC
						   of the relay's name (one
						   verify vote for them all) */
	struct session		*w_session;
	uint64_t		 w_done;
	uint64_t		 w_since;	/* wall clock, seconds */
	uint64_t		 w_last_seen;	/* mono ns, any message */
	uint64_t		 w_last_hb;	/* mono ns, 0: none yet */
	uint32_t		 w_hb_finished;	/* its last heartbeat's count */
	uint32_t		 w_hb_interval;	/* ms, of that heartbeat */
	/* frames being built while the core's actions are drained */
	R3q__Task		*w_outv;	/* the Assign's tasks, */
	R3q__Task		**w_out;	/* and pointers to them */
	size_t			 w_nout, w_outcap;
	uint64_t		*w_cancel;
	size_t			 w_ncancel, w_cancelcap;
	uint64_t		*w_repl;	/* of w_out, the replicas */
	size_t			 w_nrepl, w_replcap;
	uint64_t		*w_active;	/* of w_out, moved here */
	size_t			 w_nactive, w_activecap;
	uint64_t		*w_withdraw;	/* held tasks asked back */
	size_t			 w_nwithdraw, w_withdrawcap;
	struct push_pending	*w_push;	/* TaskPush, after Assign */
	size_t			 w_npush, w_pushcap;
	int			 w_dirty;	/* on dispatch.c's list */
	TAILQ_ENTRY(worker)	 w_dirty_entry;
	uint64_t		 w_roster_job;	/* job whose roster ... */
	size_t			 w_roster_idx;	/* ... names it here */
	/* copies interrupted while running, their report still due */
	uint64_t		*w_killed;
	size_t			 w_nkilled, w_killedcap;
	/* results it sent for work it does not hold */
	uint64_t		 w_refused;
	uint64_t		 w_refused_unsaid;	/* since the last log line */
	uint64_t		 w_refused_said;	/* mono ns of that line */
	char			*w_why;		/* its last suspicion, or
						   NULL */
	/* draining: no new tasks, then it leaves */
	int			 w_draining;
	int			 w_drain_said;	/* its first Drain came */
	int			 w_drained;	/* it said done: leaving */
	uint64_t		 w_handed_back;	/* copies it gave back */
	char			*w_drain_why;	/* NULL: none given */
	char			*w_peer_addr;	/* its peer_listen, as
						   other workers reach it;
						   NULL: none (exchange.c) */
	int			 w_crl_push;	/* it takes CrlPush */
};
TAILQ_HEAD(workerlist, worker);

enum job_state {
	JOB_RUNNING,
	JOB_DONE,
	JOB_FAILED,
	JOB_CANCELLED
};

/* One generation's best and the paper's measurements (ns). */
struct gen_report {
	uint32_t		 g_gen;
	double			 g_best;
	uint64_t		 g_elapsed;	/* ns since the job began */
	uint64_t		 g_tasks;	/* 64 bits: the folded ones' sum */
	uint64_t		 g_total;
	uint64_t		 g_sync;
	uint64_t		 g_comm;
	uint64_t		 g_compute;
	uint32_t		 g_replicas;
	uint32_t		 g_killed_held;
	uint32_t		 g_killed_running;
};

/* How a task execution ended, for the journal and the reports. */
enum span_outcome {
	SPAN_DONE = 0,		/* its result was accepted */
	SPAN_LOST_RACE,		/* finished, but another copy was first */
	SPAN_INTERRUPTED,	/* cancelled while running */
	SPAN_FAILED,		/* the task failed on the worker */
	SPAN_WITHDRAWN		/* cancelled while held: never ran */
};

/*
 * A span's flags, kept in the journal's replica column: an extra copy,
 * and a copy that came by a move (balancing), or was released for one.
 */
#define SPAN_F_REPLICA	1
#define SPAN_F_MOVED	2

/* One task execution on a worker, in masterd's monotonic clock. */
struct exec_span {
	uint32_t		 x_wid;
	uint64_t		 x_start;
	uint64_t		 x_end;
};

struct job;
struct job_batch;
struct journal_job;

/*
 * A job's scheduling settings: what a client may choose (policy, queue
 * factor, balance, verify), checked once for every driver
 * (job_sched_parse()).
 */
struct job_sched {
	enum sched_policy	 js_policy;
	unsigned		 js_qf;		/* or SCHED_QF_AUTO */
	enum sched_balance	 js_balance;
	unsigned		 js_verify;	/* machines that must agree */
};

/*
 * What makes a job a kind of job: the operations the generic layer
 * (job.c) calls, and how a client submits one.  Every driver is a row of
 * the table in job_drivers.c; nothing outside that table tells drivers
 * apart by name.
 */
struct job_driver {
	const char	*d_name;		/* es, batch, bnb, islands... */
	unsigned	 d_flags;
#define JD_DROP_RESULTS	0x01	/* its results serve only to resume it:
				   they leave the journal when it ends */
#define JD_FOLD_GENS	0x02	/* its reports are its client's batches:
				   the oldest are folded (JOB_GENS_KEPT) */
	/*
	 * A client's submission: Envelope body d_body (0: none) starts a
	 * job of this driver.  d_first gives the tasks of its first batch,
	 * admitted (max_queued_tasks) before d_submit checks the request
	 * and starts the job for owner, or returns NULL with a message.
	 */
	int		 d_body;
	uint64_t	(*d_first)(const Envelope *);
	struct job	*(*d_submit)(const Envelope *, const char *, char *,
			    size_t);
	/*
	 * A driver whose client holds a session (the batch driver): its
	 * requests (-1: not one of its bodies), the session gone, is s its
	 * client, s can take more output, and what to send at the flush.
	 * All optional; called from the control side only.
	 */
	int		(*d_request)(struct session *, Envelope *);
	void		(*d_detach)(struct session *);
	int		(*d_attached)(const struct session *);
	void		(*d_writable)(struct session *);
	void		(*d_flush)(void);
	/* Fill a task being sent: its kind and payload (borrowed). */
	void		(*d_task)(struct job *, struct job_batch *, size_t,
			    R3q__Task *);
	/*
	 * Task idx of b ended, the job's seq-th to (journaled already):
	 * OUTCOME_OK and its output, or another outcome and why.
	 */
	void		(*d_result)(struct job *, struct job_batch *, size_t,
			    uint64_t, uint32_t, const void *, size_t,
			    const char *);
	/* Every task of b is over: fill g_best of its measurements. */
	void		(*d_batch_done)(struct job *, struct job_batch *,
			    struct gen_report *);
	/* ... and, once they are journaled and told, go on or end. */
	void		(*d_next)(struct job *, struct job_batch *);
	/* Its fields of a JobInfo (full: everything). */
	void		(*d_info)(const struct job *, R3q__JobInfo *, int);
	/* Its parameters, packed for the journal (malloc'd). */
	uint8_t		*(*d_params)(const struct job *, size_t *);
	/* Its part of the journal row's state. */
	void		(*d_state)(const struct job *, R3q__JobState *);
	/*
	 * A job from the journal: take its parameters and state and, if it
	 * runs, resume it (results, tasks); -1 with a message.
	 */
	int		(*d_load)(struct job *, const struct journal_job *,
			    const R3q__JobState *, char *, size_t);
	/* b is forgotten: free its b_ds (NULL: free() it). */
	void		(*d_batch_free)(struct job *, struct job_batch *);
	/* The job ended (done, failed or cancelled): free what it can. */
	void		(*d_end)(struct job *);
	/*
	 * Optional (protocol 6): news of task idx of b, running on worker
	 * w (TaskNews; its tag checked); an output of a copy of it that
	 * lost the race, for the driver's counts only.
	 */
	void		(*d_news)(struct job *, struct job_batch *, size_t,
			    struct worker *, const void *, size_t);
	void		(*d_lost)(struct job *, struct job_batch *, size_t,
			    const void *, size_t);
	void		(*d_free)(struct job *);
	/* Optional: go on, from the loop's next pass (job_more()). */
	void		(*d_more)(struct job *);
};

/* How a task ended, for a driver and a client (TaskOutcome.status). */
enum job_outcome {
	OUTCOME_OK = 0,
	OUTCOME_FAILED,		/* the kind failed: max_attempts machines */
	OUTCOME_KILLED,		/* max_kills workers lost running it */
	OUTCOME_CANCELLED,
	OUTCOME_DISAGREED	/* verify: no outputs agreed */
};

/*
 * A batch of a job: a generation (es) or a client's batch.  Its task ids
 * are ranges handed out as tasks are added (job.c's ranges find them).  In
 * the core while b_live; kept a while after (JOB_PAST) for late reports.
 */
struct job_batch {
	TAILQ_ENTRY(job_batch)	 b_entry;
	struct job		*b_job;
	uint64_t		 b_id;		/* the core's batch id */
	uint32_t		 b_gen;		/* the job's number, from 0 */
	uint64_t		 b_client;	/* batch: the client's number */
	uint32_t		 b_kind;	/* interned kind */
	size_t			 b_n;		/* tasks in it */
	size_t			 b_nover;	/* of them, ended */
	int			 b_live;	/* in the core */
	int			 b_closed;
	struct exec_span	*b_spans;	/* while live: executions */
	size_t			 b_nspans, b_spancap;
	void			*b_ds;		/* the driver's */
	struct u64map		 b_why;		/* idx -> its last failure
						   (char *) */
	uint8_t			*b_ended;	/* bit idx: task idx ended */
	size_t			 b_endedlen;	/* bytes of it */
	struct task_range	*b_ranges;	/* its ids, by idx0 (job_range.c) */
	size_t			 b_nranges, b_rangecap;
	size_t			 b_pendc;	/* tasks counted pending
						   (job_pending_sync()) */
	struct kind_owner	*b_kowner;	/* its client's hold on b_kind
						   (kind_hold()) */
};
TAILQ_HEAD(batchlist, job_batch);
#define JOB_PAST	4

/* A range of task ids of one batch: ids first.. are tasks idx0.. */
struct task_range {
	uint64_t		 r_first;
	uint32_t		 r_n;
	uint32_t		 r_idx0;
	struct job_batch	*r_batch;
};

/*
 * A job: a driver on top of the core.  Lives on the job list until masterd
 * exits (or is trimmed once finished).
 */
struct job {
	TAILQ_ENTRY(job)	 j_entry;
	uint64_t		 j_id;
	const struct job_driver	*j_drv;
	void			*j_ds;		/* the driver's state */
	enum job_state		 j_state;
	enum sched_policy	 j_policy;
	unsigned		 j_qf;
	unsigned		 j_verify;
	int			 j_keep_copies;	/* sched_batch_config's */
	enum sched_balance	 j_balance;
	uint64_t		 j_moved;	/* tasks moved by balancing */
	char			 j_name[64];
	char			 j_owner[80];	/* unix:NAME or tls:CN */
	struct batchlist	 j_batches;	/* live ones, then past */
	struct job_batch	*j_past;	/* the first past one, or NULL */
	size_t			 j_npast;
	struct u64map		 j_bygen;	/* b_gen -> batch, newest */
	uint64_t		 j_pending;	/* tasks not ended in live
						   batches (job_pending()) */
	int			 j_pcounted;	/* in job_pending_all() */
	uint32_t		 j_nbatches;	/* numbers handed out */
	size_t			 j_nlive;
	uint64_t		 j_start;	/* mono ns */
	uint64_t		 j_start_wall;	/* wall ns, as journaled */
	uint64_t		 j_end;
	uint64_t		 j_submitted;	/* wall seconds */
	uint64_t		 j_done;
	uint64_t		 j_failed;
	uint64_t		 j_seq;		/* tasks ended, numbered */
	uint64_t		 j_dropped;
	double			 j_work_ms;	/* reference work of a task */
	struct gen_report	*j_gens;	/* kept one by one */
	size_t			 j_ngens;
	struct gen_report	 j_gfold;	/* JD_FOLD_GENS: the sums of
						   the reports folded ... */
	uint64_t		 j_nfolded;	/* ... the first ones */
	double			 j_speed_time;	/* sum of speed_sum x dt */
	char			 j_error[256];
	uint32_t		 j_out_wid;	/* worker of the output being
						   delivered (job_span) */
	R3q__WorkerSeen		*j_roster;	/* workers that ran its tasks */
	size_t			 j_nroster;
	size_t			 j_roster_last;	/* set by job_roster_add */
	uint64_t		 j_execs;	/* task executions recorded */
	uint64_t		 j_mem;		/* bytes of its state counted
						   against max_job_memory */
	uint64_t		 j_held;	/* bytes of outcomes kept until
						   the client acknowledges
						   them, counted too */
	int			 j_more;	/* its driver goes on next
						   pass (job_more()) */
	R3q__Span		*j_trace;	/* them, without a journal */
	size_t			 j_ntrace, j_tracecap;
};
TAILQ_HEAD(joblist, job);

/*
 * A job whose driver has JD_FOLD_GENS (the batch driver, whose "generations"
 * are the client's batches: one a task for a client that waits for each
 * result) keeps the reports of its last JOB_GENS_KEPT to 2 x JOB_GENS_KEPT
 * batches one by one; the older ones count only in its totals (j_gfold), so
 * that neither masterd's memory nor a JobInfo grows with every batch of a
 * job that runs for months.  The other drivers keep every generation's.
 */
#define JOB_GENS_KEPT	1024

/*
 * Append v to a growable array arr of n elements and cap allocated; the
 * caller owns it.  No memory is fatal() (log.h).
 */
#define APPEND(arr, n, cap, v) do {					\
	if ((n) == (cap)) {						\
		(cap) = (cap) ? (cap) * 2 : 16;				\
		if (((arr) = reallocarray((arr), (cap),			\
		    sizeof(*(arr)))) == NULL)				\
			fatal("reallocarray");				\
	}								\
	(arr)[(n)++] = (v);						\
} while (0)

/* The caps of masterd.conf, for their refusal counters (metrics). */
enum cap {
	CAP_WORKERS,		/* max_workers */
	CAP_CLIENTS,		/* max_clients */
	CAP_JOBS,		/* max_jobs */
	CAP_JOBS_CLIENT,	/* max_jobs_per_client */
	CAP_QUEUED,		/* max_queued_tasks */
	CAP_JOB_TASKS,		/* max_job_tasks */
	CAP_MEMORY,		/* max_memory */
	CAP_JOB_MEMORY,		/* max_job_memory */
	CAP_CONNECT_RATE,	/* connect_rate */
	CAP_HTTP,		/* max_http */
	CAP_BATCHES_JOB,	/* max_batches_job */
	CAP_BATCHES_CLIENT,	/* max_batches_client */
	CAP_HTTP_ADDR,		/* max_http_per_addr */
	CAP_CLIENT_KINDS,	/* max_client_kinds */
	CAP_N
};
extern const char *const cap_names[CAP_N];

/* Why a peer was dropped for its output (metrics). */
enum drop {
	DROP_LIMIT,		/* output_limit */
	DROP_TIMEOUT,		/* output_timeout */
	DROP_N
};

/*
 * What main keeps for the whole daemon; one instance, owned by main: the
 * configuration (a reload copies the new one over it, so the files that
 * keep a pointer to it from their init see the change), the event base
 * and the core, which main hands to the layers at start, and this run's
 * identity: the epoch and the key of the copies' tags (the journal's, if
 * it holds them) and the boot id.  The rest of masterd's state belongs to
 * the one file that uses it.
 */
struct masterd {
	struct masterd_config	 conf;
	struct event_base	*base;
	struct sched		*sched;
	uint64_t		 epoch;		/* task id space */
	struct siphash_key	 mac;		/* tags the copies we send */
	uint64_t		 boot;		/* this process */
};

extern struct masterd	*md;

void	 masterd_status(void);

/* session.c: the session layer */
void	 session_init(struct event_base *, const struct masterd_config *);
void	 session_close_all(void);
struct session *session_new(struct bufferevent *, const char *, int);
struct session *session_first(void);
struct session *session_next(const struct session *);
void	 session_send(struct session *, Envelope *);
int	 session_frame(struct session *, const Envelope *);
struct evbuffer	*session_in(struct session *);
void	 session_send_error(struct session *, uint64_t, const char *);
void	 session_error(struct session *, uint64_t, const char *, ...)
	    __attribute__((format(printf, 3, 4)));
void	 session_free(struct session *);
void	 session_close(struct session *);
void	 session_refuse(struct session *, uint64_t, const char *, ...)
	    __attribute__((format(printf, 3, 4)));
void	 session_error_soft(struct session *, uint64_t, const char *, ...)
	    __attribute__((format(printf, 3, 4)));
void	 session_pause(struct session *);
void	 session_output(struct session *);
void	 session_output_check(uint64_t);
void	 session_role_known(struct session *);
const char *session_fmt_ms(uint64_t, char *, size_t);
uint32_t session_npaused(void);
uint64_t session_dropped(enum drop);
void	 session_dropped_count(enum drop);
void	 server_trim(size_t);
size_t	 server_clients(void);
uint64_t server_output_bytes(void);

/* listen.c: the TLS listener, and the server side's start and end */
void	 server_init(struct event_base *, const struct masterd_config *,
	    struct sched *);
int	 server_listen(void);
int	 server_reload(const struct masterd_config *);
void	 server_close(void);
void	 server_accept_error(struct evconnlistener *, void *);
int	 server_connect_allowed(const struct sockaddr *, const char *);
void	 server_refused(enum cap, const char *, const char *, ...)
	    __attribute__((format(printf, 3, 4)));
uint64_t server_capped(enum cap);
void	 server_cap_count(enum cap);
struct tls_crl *server_crl(void);
SSL_CTX	*server_ssl_ctx(void);
int	 server_crl_refresh(void);
const char *server_listen_addr(void);
void	 server_expiry(void);
void	 server_expiry_dates(time_t *, time_t *, time_t *);
void	 listen_verified(struct session *);

/* worker.c: the worker protocol */
void	 worker_init(struct event_base *, const struct masterd_config *);
void	 worker_close(void);
struct worker *worker_get(uint32_t);
struct worker *worker_next(uint32_t *);
uint32_t worker_count(void);
uint32_t worker_ids(void);
void	 worker_hello(struct session *, Envelope *);
void	 worker_crl_push(void);
void	 worker_dispatch(struct session *, Envelope *);
void	 worker_gone(struct session *);
void	 worker_free(struct worker *);
uint64_t worker_tag(const struct worker *, uint64_t);
void	 worker_killed_add(struct worker *, uint64_t);
void	 worker_refused_counts(uint64_t *, uint64_t *);
int	 server_drain_worker(struct worker *, const char *);
void	 server_liveness_arm(void);

/* dispatch.c: the one caller of the scheduling core, and the sender */
void	 dispatch_init(struct event_base *, const struct masterd_config *,
	    struct sched *);
void	 dispatch_close(void);
void	 server_drain(void);
void	 server_flush(void);
void	 server_flush_later(void);
void	 server_push(struct worker *, const uint64_t *, size_t, uint32_t,
	    const uint64_t *, size_t);
void	*server_scratch(size_t);
int	 dispatch_unsend(struct worker *, uint64_t);
int	 dispatch_worker_join(struct worker *);
void	 dispatch_worker_gone(struct worker *);
int	 dispatch_worker_kinds(struct worker *, const uint32_t *, size_t);
void	 dispatch_worker_pause(struct worker *, int);
void	 dispatch_worker_drain(struct worker *, uint64_t);
void	 dispatch_worker_load(const struct worker *, uint32_t *,
	    uint32_t *);
void	 dispatch_stats(struct sched_stats *);
int	 dispatch_worker_estimate(const struct worker *,
	    struct sched_estimate *);
int	 dispatch_worker_fault(const struct worker *,
	    struct sched_fault_info *);
void	 dispatch_progress(struct worker *, const R3q__Progress *);
enum sched_verdict dispatch_vote(struct worker *, uint64_t, uint64_t,
	    const struct sched_timing *, uint64_t);
int	 dispatch_failed(struct worker *, uint64_t, uint64_t);
int	 dispatch_released(struct worker *, uint64_t, int, uint64_t);
int	 dispatch_handback(struct worker *, uint64_t, uint64_t);

/* metrics.c */
int	 metrics_listen(struct event_base *, const struct masterd_config *);
void	 metrics_close(void);

/* control.c */
int	 control_listen(void);
void	 control_close(void);
void	 control_dispatch(struct session *, Envelope *);
void	 control_init(struct event_base *, const struct masterd_config *);
void	 control_listen_resume(void);
void	 control_tell(void);
void	 control_fini(void);
void	 control_batch_init(struct event_base *,
	    const struct masterd_config *);
void	 control_batch_close(void);

/* job.c: the generic job layer */
#define TRACE_MAX	1000000	/* executions kept in memory per job */
#define JOB_NEWS_TELL	0x01	/* job_mark(): a generation or an end */
#define JOB_NEWS_STATUS	0x02	/* ... what masterd_status() says */
#define JOB_NEWS_DRAIN	0x04	/* ... the core has work: now */
#define JOB_NEWS_FLUSH	0x08	/* ... send the frames built: now */
#define JOB_NEWS_CLIENTS 0x10	/* ... a driver's d_flush has work */
#define JOB_NEWS_MORE	0x20	/* ... a driver goes on next pass */
/* A TaskPush a driver wants sent to a worker at the flush (job_push()). */
struct job_push {
	uint32_t	 p_wid;		/* the worker, */
	uint64_t	 p_node;	/* if it is still that one */
	uint64_t	*p_ids;
	size_t		 p_n;
	uint32_t	 p_bound;
	uint64_t	*p_donate;
	size_t		 p_ndonate;
};
void	 job_init(struct sched *, const struct masterd_config *);
struct job *job_first(void);
struct job *job_next(const struct job *);
void	 job_adopt(struct job *);
void	 job_ids(uint64_t *, uint64_t *);
void	 job_ids_raise(uint64_t, uint64_t);
uint64_t job_wall(uint64_t);
int	 job_task_cancel(struct job_batch *, size_t);
size_t	 job_kind_workers(uint32_t);
void	 job_wake_set(void (*)(unsigned));
void	 job_push(const struct worker *, const uint64_t *, size_t, uint32_t,
	    const uint64_t *, size_t);
struct job_push *job_pushes(size_t *);
void	 job_pushes_clear(void);
void	 job_mark(unsigned);
void	 job_more(struct job *);
void	 job_go_on(void);
unsigned job_news_take(void);
void	*job_scratch(size_t);
void	 job_scratch_reset(int);
struct job *job_new(const struct job_driver *, const struct job_sched *);
void	 job_sched_default(struct job_sched *);
int	 job_sched_parse(struct job_sched *, const char *, uint32_t,
	    const char *, uint32_t, char *, size_t);
struct job *job_find(uint64_t);
void	 job_free(struct job *);
void	 job_forget_all(void);
struct job_batch *job_batch_open(struct job *, uint32_t, uint64_t);
uint64_t job_batch_reserve(struct job_batch *, uint64_t, size_t);
void	 job_batch_submit(struct job_batch *, const struct sched_task *,
	    size_t);
void	 job_batch_close(struct job_batch *);
void	 job_batch_finished(struct job_batch *);
struct job_batch *job_batch_by_gen(const struct job *, uint32_t);
void	 job_gen_keep(struct job *, const struct gen_report *);
uint64_t job_gens_done(const struct job *);
void	 job_task(struct job_batch *, size_t, uint64_t, R3q__Task *);
int	 job_task_ended(const struct job_batch *, size_t);
void	 job_output(struct job_batch *, size_t, const void *, size_t);
char	*job_task_why(struct job_batch *, size_t, const char *);
void	 job_outcome(struct job_batch *, size_t, enum job_outcome,
	    const char *);
void	 job_span(struct job *, struct worker *, uint32_t, size_t,
	    const R3q__Result *, enum span_outcome);
void	 job_withdrawn(struct job *, struct worker *, uint32_t, size_t,
	    uint64_t, int);
R3q__WorkerSeen *job_roster_add(struct job *, const char *, uint32_t,
	    double);
void	 job_roster_free(struct job *);
void	 job_end(struct job *, enum job_state);
void	 job_abort(struct job *, enum job_state);
void	 job_batch_done(uint64_t, const struct sched_batch_report *);
void	 job_cancel(struct job *, const char *);
void	 job_kind_unavailable(uint32_t);
const char *job_state_name(enum job_state);
void	 job_free_all(void);

/* job_range.c: which batch and task a task id names */
void	 job_range_add(struct job_batch *, uint64_t, size_t, size_t);
void	 job_range_drop(struct job_batch *);
struct job_batch *job_task_find(uint64_t, size_t *);
uint64_t job_task_id(const struct job_batch *, size_t);
void	 job_range_free_all(void);

/* job_info.c: what clients read of a job */
void	 job_info(const struct job *, R3q__JobInfo *, int);
void	 job_info_clear(R3q__JobInfo *);
void	 job_owner_load(char *, size_t, const char *);
void	 job_gen_pb(const struct job *, const struct gen_report *,
	    R3q__GenReport *);
int	 job_trace(const struct job *, R3q__JobTrace *, char *, size_t);
void	 job_trace_clear(R3q__JobTrace *);

/* job_journal.c: the journal's rows, and a stall's state */
void	 job_journal_hooks(void (*)(int), void (*)(void));
int	 job_journal_load(const struct masterd_config *);
void	 job_journal_unload(void);
void	 job_journal_put(struct job *);
void	 job_journal_gen(const struct job *, const struct gen_report *);
void	 job_journal_mark(uint64_t);
int	 job_journal_commit(void);
void	 job_journal_error(void);
void	 job_journal_stall(void);
struct journal *job_journal_handle(void);
int	 job_journal_stalled(void);
uint64_t job_journal_stalls(void);
const char *job_journal_stall_text(void);
const char *job_journal_stall_why(void);
int	 job_journal_reload(size_t *);
int	 job_journal_resume(void);
void	 job_journal_prune(void);
int	 job_journal_admit(const struct job *, uint64_t, char *, size_t);

/* control_journal.c: the journal's timers, and the sessions a stall holds */
int	 job_journal_open(struct event_base *,
	    const struct masterd_config *);
void	 job_journal_due(void);
int	 job_journal_hold(struct session *);
void	 job_journal_close(void);

/* kind.c: the kinds' names */
#define KINDS_PER_WORKER 256
#define KIND_NAME_MAX	64
#define BJ_TASKS_MAX	100000	/* tasks in one SubmitTasks */
struct kind_owner;
int	 kind_check(const char *);
uint32_t kind_intern(const char *);
uint32_t kind_intern_client(const char *, const char *, unsigned, char *,
	    size_t);
struct kind_owner *kind_hold(uint32_t, const char *);
void	 kind_release(uint32_t, struct kind_owner *);
size_t	 kind_client_count(const char *);
size_t	 kind_count(void);
void	 kind_withdrawn(uint32_t, const char *, const char *);
void	 kind_offered(uint32_t);
int	 kind_find(const char *, uint32_t *);
const char *kind_name(uint32_t);
const char *kind_why(uint32_t);
void	 kind_free_all(void);

/* relay.c: workers behind relays */
#define RELAY_VIA_MAX	8	/* relays in a chain */
void	 relay_init(struct event_base *, const struct masterd_config *);
void	 relay_control(struct session *, Envelope *);
void	 relay_data(struct session *, Envelope *);
void	 relay_link_gone(struct session *);
void	 relay_stream_gone(struct session *);
void	 relay_forget(struct session *);
void	 relay_frame_begin(struct session *);
const char *relay_link_name(const struct session *);
int	 relay_serial(struct session *, char *, size_t);
const char *relay_claim(const struct session *, const struct session *,
	    char *, size_t);
int	 relay_revoked(struct session *, const struct tls_crl *, char *,
	    size_t);
enum role session_limit_role(const struct session *);
/* tokens.c: join tokens, the certificates masterd's CA issues */
int	 tokens_load(const struct masterd_config *);
int	 tokens_enabled(void);
int	 tokens_start(void);
void	 tokens_seen(const char *);
void	 tokens_shown(struct session *);
int	 tokens_crl(struct tls_crl **, char *, size_t);
char	*tokens_crl_pem(size_t *);
int	 tokens_session_serial(struct session *, char *, size_t);
int	 tokens_ctx(SSL_CTX *, const struct masterd_config *);
int	 tokens_check(const struct masterd_config *, char *, size_t);
void	 tokens_join(struct session *, Envelope *);
void	 tokens_greet(struct session *);
void	 tokens_renew(struct session *, Envelope *);
void	 tokens_control(struct session *, Envelope *);
void	 tokens_free(void);

/* limits.c: what each role may send, and the caps on jobs */
#define LIMIT_SMALL	(64u << 10)	/* a hello, a small request */
#define LIMIT_IDS	(1u << 20)	/* ids in a Progress, CancelTasks */
void	 limits_init(const struct masterd_config *);
uint64_t limits_frame_max(enum role);
int	 limits_check(enum role, struct frame_shape *, int, char *, size_t);
int	 job_admit(const char *, char *, size_t);
int	 job_admit_tasks(const struct job *, uint64_t, char *, size_t);
int	 job_admit_batch(const struct job *, char *, size_t);
int	 job_admit_memory(const struct job *, const char *, uint64_t, char *,
	    size_t);
uint64_t job_memory_all(void);
uint64_t job_pending(const struct job *);
uint64_t job_pending_all(void);
void	 job_pending_sync(struct job_batch *);
void	 job_pending_state(struct job *);
uint64_t job_pending_total(void);

/* job_drivers.c: the table of drivers */
const struct job_driver *job_driver_find(const char *);
const struct job_driver *job_driver_submits(int);
const struct job_driver *job_driver_next(const struct job_driver *);

/* control.c: what server.c calls of the drivers (through the table) */
void	 job_batch_dispatch(struct session *, Envelope *);
void	 job_batch_detach(struct session *);
int	 job_batch_attached(const struct session *);
void	 job_batch_writable(struct session *);
void	 job_batch_flush(void);
void	 job_batch_pushes(void);

#endif /* R3Q_MASTERD_H */

/* masterd's private header: its configuration and runtime objects. */
#ifndef R3Q_MASTERD_H
#define R3Q_MASTERD_H

#include <sys/queue.h>

#include <stdint.h>

#include "conf.h"
#include "frame.h"
#include "sched/sched.h"
#include "siphash.h"

struct event_base;
struct bufferevent;
struct evconnlistener;
struct es;

/* What masterd.conf says (plus command-line overrides). */
struct masterd_config {
	char		 listen[CONF_STRMAX];
	char		 control[CONF_STRMAX];
	char		 ca[CONF_STRMAX];
	char		 cert[CONF_STRMAX];
	char		 key[CONF_STRMAX];
	char		 journal[CONF_STRMAX];
	char		 policy[CONF_STRMAX];
	char		 queue_factor[CONF_STRMAX];	/* 1..64 or auto */
	uint64_t	 max_frame;
	unsigned	 max_attempts;
	uint64_t	 handshake_timeout;	/* ms */
	char		 http[CONF_STRMAX];	/* none, port or host:port */
	uint64_t	 heartbeat_timeout;	/* ms */
	uint64_t	 journal_retention;	/* ms */
	uint64_t	 suspect_grace;		/* ms */
	unsigned	 suspect_limit;
	uint64_t	 suspect_window;	/* ms */
	uint64_t	 suspect_cooldown;	/* ms */
	unsigned	 max_kills;
	unsigned	 verify;		/* machines that must agree */
};

extern const struct conf_key masterd_keys[];
int	masterd_parse_qf(const char *, unsigned *);
void	masterd_config_defaults(struct masterd_config *);
void	masterd_apply_fault(void);
void	masterd_mkparent(const char *, unsigned, const char *);

enum role {
	ROLE_NONE = 0,		/* handshake or hello not done yet */
	ROLE_WORKER,
	ROLE_CLIENT
};

/*
 * One connection: a worker or a client over TLS, or a client on the control
 * socket.  Owned by the server's session list; dies when the peer goes
 * away, misbehaves, or masterd exits.
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
};
TAILQ_HEAD(sessionlist, session);

/*
 * A worker known to the core.  Created by a valid hello, freed when its
 * session closes; its tasks then go back to the queue.
 */
struct worker {
	uint32_t		 w_id;
	char			 w_name[64];
	uint32_t		 w_cpus;
	uint32_t		 w_kinds;	/* mask of task kinds */
	double			 w_speed;	/* as the worker says */
	uint32_t		 w_delay_ms;	/* emulated delay it adds */
	uint64_t		 w_node;	/* MAC of its name: the machine,
						   across reconnections */
	struct session		*w_session;
	uint64_t		 w_done;
	uint64_t		 w_since;	/* wall clock, seconds */
	uint64_t		 w_last_seen;	/* mono ns, any message */
	uint64_t		 w_last_hb;	/* mono ns, 0: none yet */
	/* frames being built while the core's actions are drained */
	R3q__Task		*w_outv;	/* the Assign's tasks, */
	R3q__Task		**w_out;	/* and pointers to them */
	size_t			 w_nout, w_outcap;
	uint64_t		*w_cancel;
	size_t			 w_ncancel, w_cancelcap;
	uint64_t		*w_repl;	/* of w_out, the replicas */
	size_t			 w_nrepl, w_replcap;
	int			 w_dirty;	/* on md->dirty */
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
	char			 w_why[160];	/* its last suspicion */
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
	uint32_t		 g_tasks;
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

/* One task execution on a worker, in masterd's monotonic clock. */
struct exec_span {
	uint32_t		 x_wid;
	uint64_t		 x_start;
	uint64_t		 x_end;
};

/*
 * A job: an es driver on top of the core.  Each generation is one batch;
 * the batch's task ids are j_first .. j_first + j_n - 1.  Lives on the job
 * list until masterd exits (or is trimmed once finished).
 */
/* A batch of a job that is over, whose late reports may still come. */
struct job_past {
	uint64_t		 p_first;
	size_t			 p_n;
	uint32_t		 p_gen;
};
#define JOB_PAST	4

struct job {
	TAILQ_ENTRY(job)	 j_entry;
	uint64_t		 j_id;
	enum job_state		 j_state;
	enum sched_policy	 j_policy;
	unsigned		 j_qf;
	R3q__EsParams		 j_params;
	struct es		*j_es;
	uint64_t		 j_batch;
	uint64_t		 j_first;
	size_t			 j_n;
	uint32_t		 j_gen;		/* of the current batch */
	struct job_past		 j_past[JOB_PAST];	/* ring, newest at
							   j_npast - 1 */
	size_t			 j_npast;
	const struct task_kind	*j_kind;	/* of the batch's tasks */
	uint64_t		 j_start;	/* mono ns */
	uint64_t		 j_start_wall;	/* wall ns, as journaled */
	uint64_t		 j_end;
	uint64_t		 j_submitted;	/* wall seconds */
	uint64_t		 j_done;
	uint64_t		 j_dropped;
	struct gen_report	*j_gens;
	size_t			 j_ngens;
	struct exec_span	*j_spans;	/* of the current batch */
	size_t			 j_nspans, j_spancap;
	double			 j_speed_time;	/* sum of speed_sum x dt */
	char			 j_error[256];
	double			 j_best;	/* once finished */
	double			*j_best_x;	/* once finished, dim doubles */
	R3q__WorkerSeen		*j_roster;	/* workers that ran its tasks */
	size_t			 j_nroster;
	size_t			 j_roster_last;	/* set by job_roster_add */
	uint64_t		 j_execs;	/* task executions recorded */
	R3q__Span		*j_trace;	/* them, without a journal */
	size_t			 j_ntrace, j_tracecap;
};
TAILQ_HEAD(joblist, job);

/* The whole daemon's state; one instance, owned by main. */
struct masterd {
	struct masterd_config	 conf;
	struct event_base	*base;
	struct sched		*sched;
	enum sched_policy	 policy;
	unsigned		 queue_factor;	/* or SCHED_QF_AUTO */
	uint64_t		 epoch;		/* task id space */
	struct siphash_key	 mac;		/* tags the copies we send */
	uint64_t		 refused;	/* results refused: no such copy */
	uint64_t		 refused_closed;	/* workers closed for it */
	uint64_t		 boot;		/* this process */
	struct sessionlist	 sessions;
	struct joblist		 jobs;
	struct worker		**workers;	/* indexed by worker id */
	struct workerlist	 dirty;		/* frames to send */
	struct event		*flush;		/* sends them */
	struct event		*accept_pause;	/* out of descriptors */
	struct frame_arena	*arena;		/* frames read, unpacked */
	uint32_t		 nworkers;
	uint32_t		 maxworkers;
	uint64_t		 next_job;
	uint64_t		 next_task;
	uint64_t		 next_batch;
	struct evconnlistener	*tls_listener;
	struct evconnlistener	*ctl_listener;
	struct event		*liveness;	/* heartbeat_timeout check */
	struct event		*tick;		/* the core's deadline */
	uint64_t		 tick_at;	/* when it is armed for */
	void			*ssl_ctx;
	int			 draining;
	char			 listen_addr[64];	/* as bound */
	uint64_t		 wall_off;	/* wall ns - mono ns */
	struct journal		*journal;	/* NULL: journal = none */
	struct event		*prune;		/* journal_retention timer */
};

extern struct masterd	*md;

void	 masterd_status(void);

/* server.c */
int	 server_listen(void);
int	 server_reload(const struct masterd_config *);
void	 server_liveness_arm(void);
void	 server_close(void);
void	 server_flush(void);
void	 server_accept_error(struct evconnlistener *, void *);
void	 server_drain(void);
void	 session_send(struct session *, Envelope *);
void	 session_send_error(struct session *, uint64_t, const char *);
void	 session_error(struct session *, uint64_t, const char *, ...)
	    __attribute__((format(printf, 3, 4)));
void	 session_free(struct session *);
struct session *session_new(struct bufferevent *, const char *, int);

/* metrics.c */
int	 metrics_listen(void);
void	 metrics_close(void);

/* control.c */
int	 control_listen(void);
void	 control_close(void);
void	 control_dispatch(struct session *, Envelope *);
void	 control_job_event(struct job *, const struct gen_report *);

/* job.c */
struct job *job_submit(const R3q__EsParams *, char *, size_t);
struct job *job_find(uint64_t);
struct job *job_by_task(uint64_t, size_t *);
struct job *job_by_any_task(uint64_t, size_t *, uint32_t *);
void	 job_result(struct job *, size_t, double);
void	 job_task(const struct job *, size_t, R3q__Task *);
void	 job_span(struct job *, struct worker *, uint32_t, size_t,
	    const R3q__Result *, enum span_outcome);
void	 job_withdrawn(struct job *, struct worker *, uint32_t, size_t, int);
int	 job_journal_open(void);
void	 job_journal_commit(void);
void	 job_journal_close(void);
void	 job_task_failed(struct job *, size_t, const char *);
void	 job_batch_done(uint64_t, const struct sched_batch_report *);
void	 job_cancel(struct job *, const char *);
void	 job_info(const struct job *, R3q__JobInfo *, int);
void	 job_info_clear(R3q__JobInfo *);
int	 job_trace(const struct job *, R3q__JobTrace *, char *, size_t);
void	 job_trace_clear(R3q__JobTrace *);
const char *job_state_name(enum job_state);
void	 job_free_all(void);

#endif /* R3Q_MASTERD_H */

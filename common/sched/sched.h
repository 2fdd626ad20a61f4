/*
 * The scheduling core: master queue, batches, copies of tasks on workers,
 * and the four policies of the R3Q paper (doc/algorithms.md section 1).
 *
 * Pure: no I/O, no clock, no threads.  The caller passes the time in and
 * drains the decisions as actions with sched_next_action().  The core sees
 * task ids, batch ids and worker ids, never payloads.
 */
#ifndef R3Q_SCHED_H
#define R3Q_SCHED_H

#include <stddef.h>
#include <stdint.h>

enum sched_policy {
	SCHED_POLICY_WQ = 0,		/* work queue: one task per CPU */
	SCHED_POLICY_RR,		/* WQ + round-robin replication of the tail */
	SCHED_POLICY_RWQ,		/* remote work queue: factor x CPUs per worker */
	SCHED_POLICY_R3Q,		/* RWQ + replication in reverse send order */
	SCHED_POLICY_COUNT
};

enum sched_action_type {
	SCHED_ASSIGN = 1,	/* send task to worker wid */
	SCHED_CANCEL,		/* withdraw task's copy from worker wid */
	SCHED_TASK_FAILED,	/* task gave up: see reason */
	SCHED_BATCH_DONE,	/* batch is closed and every task of it
				   is done, failed or cancelled */
	SCHED_SUSPECT,		/* worker wid became suspect (task: its
				   copy that gave it away, by: the worker
				   whose result did, why: how) */
	SCHED_COOLDOWN,		/* worker wid gets no new tasks until until */
	SCHED_WITHDRAW		/* balancing: ask worker wid to give back
				   its HELD copy of task (answer:
				   sched_released()); the copy stays its
				   own until then */
};

/*
 * Balancing of held tasks between workers (doc/algorithms.md §4), per
 * batch.
 */
enum sched_balance {
	SCHED_BALANCE_NONE = 0,
	SCHED_BALANCE_ONE,		/* the paper's static baseline: one
					   task per exchange */
	SCHED_BALANCE_POWER,		/* §4's Power: Power_i - Power_j */
	SCHED_BALANCE_GLOBAL,		/* equal expected finishing times */
	SCHED_BALANCE_COUNT
};

/* Which pairs of workers exchange Power (doc/algorithms.md §4). */
enum sched_topology {
	SCHED_TOPO_RING = 0,		/* each worker and the next, in join
					   order, wrapping around */
	SCHED_TOPO_ALL,			/* every pair */
	SCHED_TOPO_TREE,		/* the paper's Fig. 2: a binary tree in
					   join order, k's children 2k+1, 2k+2 */
	SCHED_TOPO_COUNT
};

#define SCHED_POWER_INTERVAL_DEFAULT	1000000000ULL	/* 1 s */
#define SCHED_POWER_INTERVAL_MIN	10000000ULL	/* 10 ms */
#define SCHED_POWER_INTERVAL_MAX	3600000000000ULL	/* 1 h */

/* Why a task gave up (SCHED_TASK_FAILED). */
enum sched_fail_reason {
	SCHED_FAIL_ATTEMPTS = 1,	/* its copies failed on max_attempts
					   machines, or on every one there is */
	SCHED_FAIL_KILLS,		/* max_kills workers died running it */
	SCHED_FAIL_DISAGREE		/* verify: no verify outputs agreed in
					   2 x verify - 1 votes */
};

/* What made a worker suspect (SCHED_SUSPECT). */
enum sched_suspect_why {
	SCHED_WHY_STILL = 0,	/* its copy stood still while another
				   worker did a whole task */
	SCHED_WHY_FAILED,	/* its copy failed where another worker's
				   copy of the same task succeeded */
	SCHED_WHY_DISAGREED,	/* its output lost a verification vote */
	SCHED_WHY_SLOW		/* as STILL, but for no longer than that
				   worker's own whole task: slow, not
				   stuck; not counted toward the limit */
};

/*
 * What the core saw of a batch, for the paper's measurements; carried by
 * SCHED_BATCH_DONE.  Times are the `now` of the calls that caused them.
 */
struct sched_batch_report {
	uint64_t	 t_submit;	/* sched_submit, sched_batch_open */
	uint64_t	 t_empty;	/* its queue became empty (0: never) */
	uint64_t	 t_sync;	/* synchronisation wait began (0: none) */
	uint64_t	 t_done;	/* its last task finished */
	uint32_t	 replicas;	/* extra copies sent */
	uint32_t	 cancelled_held;
	uint32_t	 cancelled_running;
	uint32_t	 failed;	/* tasks given up */
	uint32_t	 cancelled;	/* tasks withdrawn by
					   sched_task_cancel() */
};

struct sched_action {
	enum sched_action_type	 type;
	uint32_t		 wid;
	uint64_t		 task;
	uint64_t		 batch;
	int			 replica;	/* ASSIGN, CANCEL: an extra copy */
	int			 running;	/* CANCEL: copy was running */
	int			 active;	/* ASSIGN: a task moved here by
						   balancing: run it before
						   the tasks held already */
	struct sched_batch_report report;	/* BATCH_DONE */
	enum sched_fail_reason	 reason;	/* TASK_FAILED */
	uint32_t		 by;		/* SUSPECT: finishing worker */
	enum sched_suspect_why	 why;		/* SUSPECT: how it showed */
	uint64_t		 silent_ns;	/* SUSPECT: time since the copy's
						   last state change */
	uint64_t		 own_ns;	/* SUSPECT: the worker's own whole
						   task (EWMA), 0: not known */
	uint64_t		 until;		/* COOLDOWN: its end */
	uint32_t		 count;		/* SUSPECT, COOLDOWN: suspicions
						   within the window */
};

/* What a worker says of one result's timing, for queue_factor auto. */
struct sched_timing {
	uint64_t	 at_worker_ns;	/* from arrival at the worker to the
					   result leaving it */
	uint64_t	 exec_ns;	/* execution alone */
};

/* Per-worker estimates the core keeps (for r3qctl workers, metrics). */
struct sched_estimate {
	uint64_t	 rtt_ns;	/* round trip, EWMA; 0: none yet */
	uint64_t	 task_ns;	/* execution time, EWMA; 0: none yet */
	uint32_t	 cap;		/* copies it may hold now */
	uint32_t	 power;		/* results in the last whole
					   power_interval (the master's
					   count, section 4) */
};

#define SCHED_QF_AUTO	0xffffffffu	/* queue_factor: size from rtt/task */
#define SCHED_QF_AUTO_MAX 16		/* held per CPU at most under auto */
#define SCHED_QF_MAX	128		/* a queue_factor's largest number:
					   room for §4's experiment: 100 per
					   single-CPU worker up front */

/* What the caller says of a batch when it submits it. */
struct sched_batch_config {
	enum sched_policy	 policy;
	unsigned		 queue_factor;	/* RWQ/R3Q: held per CPU */
	uint32_t		 kind;		/* task kind: any number the
						   caller interned a name as */
	unsigned		 max_attempts;	/* failures before giving up */
	unsigned		 max_kills;	/* lost workers before giving up */
	unsigned		 verify;	/* 0, 1: the first result wins;
						   n: n bit-identical outputs
						   from n machines */
	enum sched_balance	 balance;	/* held tasks move between
						   workers (RWQ, R3Q) */
	int			 keep_copies;	/* the first result wins,
						   the other copies run on
						   (§3.1's "no
						   interrupt"): the core
						   forgets them, their
						   results are stale */
};

#define SCHED_VERIFY_MAX	5

/*
 * One task of sched_batch_add().  Priority: lower runs first, across every
 * batch a worker could take from; equal priorities run in the order they
 * were added (so sched_submit()'s tasks, all priority 0, run FIFO and
 * batch after batch).  Copies: §3.1's multiplicity, that many copies
 * at once on distinct machines, the first result wins and the others are
 * cancelled.
 */
struct sched_task {
	uint64_t	 id;
	int32_t		 priority;
	uint32_t	 copies;	/* 0, 1: one; at most SCHED_COPIES_MAX */
};

#define SCHED_COPIES_MAX	16

/*
 * Relative suspect detection (doc/algorithms.md section 3.2) and what follows
 * from it.  A running copy is suspect only once its state has stood still
 * for at least grace_ns; a worker suspected more than suspect_limit times
 * within suspect_window_ns gets no new tasks for cooldown_ns (limit 0:
 * never).
 */
struct sched_fault_config {
	uint64_t	 grace_ns;
	uint32_t	 suspect_limit;
	uint64_t	 suspect_window_ns;
	uint64_t	 cooldown_ns;
};

#define SCHED_GRACE_DEFAULT	1000000000ULL	/* 1 s */
#define SCHED_SUSPECT_LIMIT_DEFAULT 3
#define SCHED_SUSPECT_LIMIT_MAX	64
#define SCHED_WINDOW_DEFAULT	600000000000ULL	/* 10 min */
#define SCHED_COOLDOWN_DEFAULT	300000000000ULL	/* 5 min */

/* What the core thinks of one worker's health. */
struct sched_fault_info {
	uint32_t	 suspect_copies;	/* > 0: suspect now */
	uint64_t	 suspects;	/* times it became suspect */
	uint32_t	 recent;	/* of those, within the window */
	uint64_t	 cooldown_until;	/* 0: not cooling down */
};

/* Answers of sched_done(). */
enum sched_verdict {
	SCHED_ACCEPT = 0,	/* first result: count it */
	SCHED_DUPLICATE,	/* task already done; the worker held a copy
				   (a lost race): drop it */
	SCHED_UNKNOWN,		/* no such task */
	SCHED_STALE,		/* task already done or failed and the worker
				   holds no copy of it: drop it */
	SCHED_PENDING		/* verify: a vote counted, more are needed */
};

struct sched_stats {
	uint64_t	 queued;	/* in the master queue */
	uint64_t	 held;		/* copies sent, not started */
	uint64_t	 running;	/* copies started */
	uint64_t	 done;		/* tasks accepted */
	uint64_t	 failed;	/* tasks given up */
	uint64_t	 replicas;	/* extra copies sent */
	uint64_t	 cancelled_held;
	uint64_t	 cancelled_running;
	uint32_t	 workers;
	uint64_t	 suspects;	/* times a worker became suspect */
	uint64_t	 slow_suspects;	/* of them, SCHED_WHY_SLOW */
	uint64_t	 suspect_replicas;	/* replicas sent for suspects */
	uint32_t	 suspect_workers;	/* suspect now */
	uint32_t	 cooling_workers;	/* in cool-down now */
	uint64_t	 killed;	/* running copies lost with a worker */
	uint64_t	 verify_copies;	/* copies sent to verify an output */
	uint64_t	 disagreed;	/* votes that lost to the verified one */
	uint64_t	 cancelled;	/* tasks withdrawn by sched_task_cancel() */
	uint64_t	 withdrawals;	/* SCHED_WITHDRAW sent (balancing) */
	uint64_t	 moved;		/* of them, released and sent on */
	uint64_t	 moved_back;	/* released, but the target had no room
				   or was gone: back to the master queue */
	uint64_t	 withdraw_void;	/* the worker had started it */
	uint64_t	 handed_back;	/* copies a draining worker gave back
					   (sched_handback()) */
	uint64_t	 batches_visited;	/* batches looked at to place
					   work, replicate a tail, note an
					   idle moment or find a stranded
					   task: the core's cost, which
					   grows with live batches only */
};

struct sched;

const char	*sched_policy_name(enum sched_policy);
const char	*sched_policy_list(void);
int		 sched_policy_parse(const char *, enum sched_policy *);
const char	*sched_balance_name(enum sched_balance);
int		 sched_balance_parse(const char *, enum sched_balance *);
const char	*sched_topology_name(enum sched_topology);
int		 sched_topology_parse(const char *, enum sched_topology *);

struct sched	*sched_new(void);
void		 sched_free(struct sched *);

int		 sched_worker_join(struct sched *, uint32_t, uint32_t,
		    uint32_t, uint64_t);
int		 sched_worker_join_node(struct sched *, uint32_t, uint64_t,
		    uint32_t, uint32_t, uint64_t);
void		 sched_worker_lost(struct sched *, uint32_t, uint64_t);
int		 sched_worker_join_kinds(struct sched *, uint32_t, uint64_t,
		    uint32_t, const uint32_t *, size_t, uint64_t);
int		 sched_worker_join_group(struct sched *, uint32_t, uint64_t,
		    uint64_t, uint32_t, const uint32_t *, size_t, uint64_t);
int		 sched_worker_kinds(struct sched *, uint32_t,
		    const uint32_t *, size_t, uint64_t);
int		 sched_worker_pause(struct sched *, uint32_t, int, uint64_t);
int		 sched_worker_drain(struct sched *, uint32_t, uint64_t);
int		 sched_handback(struct sched *, uint32_t, uint64_t, uint64_t);
size_t		 sched_kind_workers(const struct sched *, uint32_t);
int		 sched_submit(struct sched *, uint64_t,
		    const struct sched_batch_config *, const uint64_t *, size_t,
		    uint64_t);
int		 sched_batch_open(struct sched *, uint64_t,
		    const struct sched_batch_config *, uint64_t);
int		 sched_batch_add(struct sched *, uint64_t,
		    const struct sched_task *, size_t, uint64_t);
int		 sched_batch_close(struct sched *, uint64_t, uint64_t);
int		 sched_task_cancel(struct sched *, uint64_t, uint64_t);
void		 sched_batch_abort(struct sched *, uint64_t, uint64_t);
void		 sched_set_fault(struct sched *,
		    const struct sched_fault_config *);
void		 sched_set_balance(struct sched *, uint64_t,
		    enum sched_topology, uint64_t);
int		 sched_released(struct sched *, uint32_t, uint64_t, int,
		    uint64_t);
void		 sched_started(struct sched *, uint32_t, uint64_t, uint64_t);
void		 sched_progress(struct sched *, uint32_t, uint64_t, uint64_t);
enum sched_verdict sched_done(struct sched *, uint32_t, uint64_t, uint64_t);
enum sched_verdict sched_done_timed(struct sched *, uint32_t, uint64_t,
		    const struct sched_timing *, uint64_t);
enum sched_verdict sched_vote(struct sched *, uint32_t, uint64_t, uint64_t,
		    const struct sched_timing *, uint64_t);
int		 sched_failed(struct sched *, uint32_t, uint64_t, uint64_t);
void		 sched_tick(struct sched *, uint64_t);
uint64_t	 sched_deadline(const struct sched *);
int		 sched_next_action(struct sched *, struct sched_action *);

void		 sched_get_stats(const struct sched *, struct sched_stats *);
int		 sched_worker_load(const struct sched *, uint32_t, uint32_t *,
		    uint32_t *);
int		 sched_worker_estimate(const struct sched *, uint32_t,
		    struct sched_estimate *);
int		 sched_worker_fault(const struct sched *, uint32_t,
		    struct sched_fault_info *);

#endif /* R3Q_SCHED_H */

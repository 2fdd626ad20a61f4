/*
 * The scheduling core: master queue, batches, copies of tasks on workers,
 * and the four policies of the R3Q paper (ALGORITHMS.md section 1).
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
	SCHED_TASK_FAILED,	/* task gave up after max_attempts failures */
	SCHED_BATCH_DONE	/* every task of batch is done or failed */
};

struct sched_action {
	enum sched_action_type	 type;
	uint32_t		 wid;
	uint64_t		 task;
	uint64_t		 batch;
	int			 replica;	/* ASSIGN: an extra copy */
	int			 running;	/* CANCEL: copy was running */
};

/* What the caller says of a batch when it submits it. */
struct sched_batch_config {
	enum sched_policy	 policy;
	unsigned		 queue_factor;	/* RWQ/R3Q: held per CPU */
	unsigned		 kind;		/* task kind index, < 32 */
	unsigned		 max_attempts;	/* failures before giving up */
};

/* Answers of sched_done(). */
enum sched_verdict {
	SCHED_ACCEPT = 0,	/* first result: count it */
	SCHED_DUPLICATE,	/* task already done: drop it */
	SCHED_UNKNOWN		/* no such task */
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
};

struct sched;

const char	*sched_policy_name(enum sched_policy);
int		 sched_policy_parse(const char *, enum sched_policy *);

struct sched	*sched_new(void);
void		 sched_free(struct sched *);

int		 sched_worker_join(struct sched *, uint32_t, uint32_t,
		    uint32_t, uint64_t);
void		 sched_worker_lost(struct sched *, uint32_t, uint64_t);
int		 sched_submit(struct sched *, uint64_t,
		    const struct sched_batch_config *, const uint64_t *, size_t,
		    uint64_t);
void		 sched_batch_abort(struct sched *, uint64_t, uint64_t);
void		 sched_started(struct sched *, uint32_t, uint64_t, uint64_t);
enum sched_verdict sched_done(struct sched *, uint32_t, uint64_t, uint64_t);
int		 sched_failed(struct sched *, uint32_t, uint64_t, uint64_t);
void		 sched_tick(struct sched *, uint64_t);
uint64_t	 sched_deadline(const struct sched *);
int		 sched_next_action(struct sched *, struct sched_action *);

void		 sched_get_stats(const struct sched *, struct sched_stats *);
int		 sched_worker_load(const struct sched *, uint32_t, uint32_t *,
		    uint32_t *);

#endif /* R3Q_SCHED_H */

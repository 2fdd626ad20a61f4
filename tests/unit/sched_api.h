/*
 * The scheduling core's calls as a table, so that test_sched_ref can drive
 * the core and its reference build (sched_ref.c: common/sched/sched.c
 * with SCHED_REFERENCE, every public name prefixed ref_) side by side.
 */
#ifndef R3Q_SCHED_API_H
#define R3Q_SCHED_API_H

#include "sched/sched.h"

struct sched_api {
	struct sched	*(*mk)(void);
	void		 (*fr)(struct sched *);
	int		 (*join)(struct sched *, uint32_t, uint64_t, uint32_t,
			    const uint32_t *, size_t, uint64_t);
	int		 (*kinds)(struct sched *, uint32_t, const uint32_t *,
			    size_t, uint64_t);
	int		 (*pause)(struct sched *, uint32_t, int, uint64_t);
	void		 (*lost)(struct sched *, uint32_t, uint64_t);
	int		 (*open)(struct sched *, uint64_t,
			    const struct sched_batch_config *, uint64_t);
	int		 (*add)(struct sched *, uint64_t,
			    const struct sched_task *, size_t, uint64_t);
	int		 (*close)(struct sched *, uint64_t, uint64_t);
	int		 (*cancel)(struct sched *, uint64_t, uint64_t);
	void		 (*abort)(struct sched *, uint64_t, uint64_t);
	void		 (*fault)(struct sched *,
			    const struct sched_fault_config *);
	void		 (*balance)(struct sched *, uint64_t,
			    enum sched_topology, uint64_t);
	int		 (*released)(struct sched *, uint32_t, uint64_t, int,
			    uint64_t);
	void		 (*started)(struct sched *, uint32_t, uint64_t,
			    uint64_t);
	void		 (*progress)(struct sched *, uint32_t, uint64_t,
			    uint64_t);
	enum sched_verdict (*vote)(struct sched *, uint32_t, uint64_t,
			    uint64_t, const struct sched_timing *, uint64_t);
	int		 (*failed)(struct sched *, uint32_t, uint64_t,
			    uint64_t);
	void		 (*tick)(struct sched *, uint64_t);
	uint64_t	 (*deadline)(const struct sched *);
	int		 (*next)(struct sched *, struct sched_action *);
	void		 (*stats)(const struct sched *, struct sched_stats *);
	int		 (*estimate)(const struct sched *, uint32_t,
			    struct sched_estimate *);
};

/* The table's initialiser: in sched_ref.c the names are the ref_ ones. */
#define SCHED_API_INIT {						\
	sched_new, sched_free, sched_worker_join_kinds,			\
	sched_worker_kinds, sched_worker_pause, sched_worker_lost,	\
	sched_batch_open, sched_batch_add, sched_batch_close,		\
	sched_task_cancel, sched_batch_abort, sched_set_fault,		\
	sched_set_balance, sched_released, sched_started,		\
	sched_progress, sched_vote, sched_failed, sched_tick,		\
	sched_deadline, sched_next_action, sched_get_stats,		\
	sched_worker_estimate						\
}

extern const struct sched_api sched_ref_api;

#endif /* R3Q_SCHED_API_H */

/*
 * The bnb driver's private header: the search (job_bnb.c) and its
 * parameters, snapshots and resume from the journal (job_bnb_state.c).
 */
#ifndef R3Q_JOB_BNB_H
#define R3Q_JOB_BNB_H

#define BJ_CAP_MIN	2		/* subproblems out, at least */
#define BJ_CAP_MAX	100000		/* max_out, at most */
#define BJ_SAVE_NS	(200 * NS_PER_MS)	/* snapshots, at most one per */
#define BJ_SPLIT_MAX	8		/* split_depth, at most */
#define BJ_MULT_MAX	64		/* multiplicity's entries, at most */

/* A task's flags (bj_flags, by task index). */
#define BJF_ASKED	0x01		/* asked to donate, not answered */
#define BJF_RESPLIT	0x02		/* re-split while it ran (resplit) */
#define BJF_COPIES	0x04		/* sent with several copies */

/* A task out, in send order but for removals. */
struct bj_live {
	size_t		 l_idx;
	uint64_t	 l_id;
	uint32_t	 l_copies;
};

/* The driver's state of a job; owned by the job, freed with it. */
struct bnb_job {
	R3q__BnbParams		 bj_params;	/* as submitted, settled */
	struct bnb_instance	 bj_inst;
	struct bnb_problem	*bj_pb;		/* NULL once ended */
	struct bnb_pool		*bj_pool;	/* NULL once ended */
	struct job_batch	*bj_batch;	/* the open one, or NULL */
	struct bnb_sub		**bj_out;	/* by task index; NULL: over */
	uint8_t			*bj_flags;	/* by task index: BJF_* */
	size_t			 bj_outcap;
	size_t			 bj_nout;	/* of them, out */
	struct bj_live		*bj_live;	/* the bj_nout out */
	size_t			 bj_livecap;
	size_t			 bj_nasked;	/* BJF_ASKED among them */
	size_t			 bj_ncopies;	/* their copies */
	R3q__BnbStats		 bj_stats;
	int32_t			 bj_inc;	/* incumbent, BNB_NONE */
	uint16_t		 bj_perm[BNB_MAX_JOBS];
	uint32_t		 bj_perm32[BNB_MAX_JOBS];	/* for JobInfo */
	uint64_t		 bj_nodes;
	uint64_t		 bj_tasks;	/* outputs taken */
	int			 bj_proved;
	uint64_t		 bj_saved;	/* mono ns of the last snapshot */
};

#define BJ(j)	((struct bnb_job *)(j)->j_ds)

/* job_bnb.c */
void	 bnb_job_start(struct job *);
void	 bnb_job_save(struct job *);
void	 bnb_job_free_ds(struct bnb_job *);

/* job_bnb_state.c */
void	 bnb_job_copy(struct bnb_job *, const R3q__BnbParams *);
void	 bnb_job_settle(struct job *);
int	 bnb_job_problem(struct bnb_job *, char *, size_t);
uint8_t	*bnb_job_pack(const struct job *, size_t *);
void	 bnb_job_state(const struct job *, R3q__JobState *);
int	 job_bnb_load(struct job *, const struct journal_job *,
	    const R3q__JobState *, char *, size_t);

#endif /* R3Q_JOB_BNB_H */

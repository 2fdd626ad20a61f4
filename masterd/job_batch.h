/*
 * The batch driver's private header: its job side (job_batch.c: the
 * tasks, the outcomes kept for the client, the journal) and its client
 * side (control_batch.c: the requests, the pushes, client_timeout).
 */
#ifndef R3Q_JOB_BATCH_H
#define R3Q_JOB_BATCH_H

/* One outcome not yet acknowledged. */
struct bj_result {
	uint64_t	 r_key;
	uint64_t	 r_batch;	/* the client's number */
	uint32_t	 r_status;
	uint8_t		*r_out;
	size_t		 r_len;
	char		*r_error;
};

/* A BatchDone for the client, sent at the flush after its outcomes. */
struct bj_done {
	uint64_t	 d_batch;	/* the client's number */
	R3q__GenReport	 d_report;
};

/*
 * The driver's state of a job (j_ds): owned by the job, freed with it.
 * The job side fills the outcomes and marks what the client side sends
 * at the next flush (bj_dirty, bj_done, an ended job's CloseJob answer,
 * bj_deadline).
 */
struct bjob {
	R3q__OpenJob	 bj_open;	/* as opened, defaults settled */
	struct u64map	 bj_keys;	/* key -> gen << 32 | idx */
	struct u64map	 bj_batches;	/* client number -> gen + 1, of
					   the batches in memory */
	uint64_t	(*bj_runs)[2];	/* every number the client opened,
					   as runs first..last, sorted */
	size_t		 bj_nruns, bj_runcap;
	struct session	*bj_session;	/* attached client, or NULL */
	uint64_t	 bj_req;	/* its request id, for pushes */
	uint64_t	 bj_acked;	/* outcomes acknowledged */
	uint64_t	 bj_sent;	/* outcomes sent to this session */
	struct bj_result *bj_res;	/* ring: seq acked + 1 .. j_seq */
	size_t		 bj_rhead, bj_rcap;
	int		 bj_closing;	/* CloseJob came */
	uint64_t	 bj_close_req;
	struct session	*bj_close_s;
	uint64_t	 bj_deadline;	/* mono ns client_timeout ends, 0:
					   none (control_batch.c's timer) */
	int		 bj_dirty;	/* outcomes to push */
	struct bj_done	*bj_done;	/* BatchDones to send */
	size_t		 bj_ndone, bj_donecap;
};

/* A batch's tasks, by index. */
struct bj_batch {
	uint8_t		**bb_payload;	/* NULL once over */
	uint32_t	 *bb_len;
	uint64_t	 *bb_key;
	uint8_t		 *bb_over;
	size_t		  bb_cap;
};

#define BJ(j)	((struct bjob *)(j)->j_ds)

extern const struct job_driver job_batch_driver;

/* job_batch.c */
struct bj_result *bj_res(struct job *, uint64_t);
void	 bj_ack(struct job *, uint64_t);
uint64_t bj_let_go(struct job *);
void	 bj_wait(struct job *);
struct job_batch *bj_batch(struct job *, uint64_t, int *);
struct job_batch *bj_batch_open(struct job *, uint64_t, uint32_t);
void	 bj_batch_journal(const struct job_batch *);
void	 bj_batch_add(struct job_batch *, const uint64_t *, uint8_t **,
	    const uint32_t *, const int32_t *, const uint32_t *,
	    const uint8_t *, size_t, int);
void	 bj_batch_close(struct job_batch *);
void	 bj_cancel_keys(struct job *, const uint64_t *, size_t);
void	 bj_close(struct job *);
struct job *bj_new(const R3q__OpenJob *, const char *, char *, size_t);

/* control_batch.c: the client side's hooks (job_batch_driver) */
int	 bj_request(struct session *, Envelope *);
void	 bj_session_gone(struct session *);
int	 bj_attached(const struct session *);
void	 bj_writable(struct session *);
void	 bj_flush(void);

#endif /* R3Q_JOB_BATCH_H */

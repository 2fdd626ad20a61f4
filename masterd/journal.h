/*
 * masterd's journal: an SQLite file recording every job and every accepted
 * task result, so that after a crash (even kill -9) and a restart each job
 * resumes bit-identically.  Writes are grouped into transactions that
 * journal_commit() ends.  Every function returns -1 on error and leaves a
 * message naming the file for journal_error(); none of them logs.
 *
 * A write or commit that fails (a full disk, an I/O error) leaves the
 * journal refusing every write and commit until journal_rollback() drops
 * what was pending: the caller must then forget whatever it built on those
 * writes.  journal_failed() says whether that is so, journal_probe()
 * whether a write goes through again.
 *
 * journal_open() refuses a damaged file (truncated mid-page, a page
 * overwritten: SQLite's quick_check reads every page first) with a message
 * naming it and saying what to do, rather than load part of it.
 *
 * The on-disk schema is versioned by PRAGMA user_version: bump
 * JOURNAL_VERSION in journal.c and teach journal_schema() there to upgrade
 * if any table changes.  The schema is version 5: version 2 added batch
 * jobs (driver, tasks, batches) and opaque outputs; version 3 packs the
 * task executions a commit writes into a few rows of execs; version 4
 * packs the accepted results the same way; version 5 keys both packed
 * tables by rowid.  journal_open() upgrades a version 1, 2, 3 or 4 file in
 * place; the tokens and certs tables are made if missing at every open,
 * without a version of their own.
 */
#ifndef R3Q_JOURNAL_H
#define R3Q_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

struct journal;

extern int	 journal_ckpt_thread;	/* 0: none (the fuzz target) */

/*
 * One job's row.  On load the blob pointers point into the journal and are
 * valid only during the callback; an empty blob loads as NULL, length 0.
 */
struct journal_job {
	uint64_t	 id;
	char		 driver[16];	/* "es", "batch", "bnb",
					   "islands"; version 1 rows
					   load as "es" */
	const void	*params;	/* opaque blob (packed protobuf) */
	size_t		 paramslen;
	char		 state[16];	/* "running", "done", ... */
	uint64_t	 submitted_ns;	/* wall clock, ns since 1970 */
	uint64_t	 ended_ns;	/* wall clock, 0 while running */
	uint32_t	 gen;		/* current generation */
	uint64_t	 first_task;	/* task id of index 0 of gen */
	char		 error[256];
	const void	*extra;		/* opaque: final best etc. */
	size_t		 extralen;
};

/*
 * One task's end: an accepted output, or a failure.  The output is opaque
 * (the es driver's: an 8-byte fitness, common/es/payload.h); a version 1
 * journal's fitness loads as that encoding.  On load, output and error
 * point into the journal, valid during the callback only; an empty output
 * loads as NULL, length 0, and a missing error as "".
 */
struct journal_result {
	uint64_t	 job;
	uint32_t	 gen;		/* es: generation; batch: its batch */
	uint32_t	 idx;		/* task in it */
	uint32_t	 status;	/* 0: ok; else enum task_status */
	uint64_t	 seq;		/* batch: its delivery number; es: 0 */
	const void	*output;
	size_t		 outlen;
	const char	*error;		/* failures; NULL or "" otherwise */
};

/*
 * A batch job's task, kept until the job is pruned so that masterd can
 * send it again after a restart.  journal_tasks_add() keeps a client's
 * frame of them (consecutive indices of one batch) in one row.  On load, payload points into the
 * journal, valid during the callback only; an empty one loads as NULL,
 * length 0.
 */
struct journal_task {
	uint64_t	 job;
	uint32_t	 gen;		/* batch, numbered by masterd from 0 */
	uint32_t	 idx;		/* in the batch, from 0 */
	uint64_t	 key;		/* the client's */
	int32_t		 priority;
	uint32_t	 copies;
	const void	*payload;
	size_t		 len;
};

/*
 * A batch job's batch.  NULL kind is written as "".  On load, kind points
 * into the journal, valid during the callback only.
 */
struct journal_batch {
	uint64_t	 job;
	uint32_t	 gen;		/* masterd's number, from 0 */
	uint64_t	 client;	/* the client's number for it */
	const char	*kind;
	uint32_t	 closed;	/* 0/1 */
};

/* One task execution, for Gantt charts. */
struct journal_span {
	uint64_t	 job;
	uint32_t	 gen;
	uint32_t	 idx;
	uint64_t	 task;
	char		 worker[64];
	uint32_t	 slot;		/* CPU slot on that worker */
	uint64_t	 start_ns;	/* wall clock ns */
	uint64_t	 end_ns;
	uint32_t	 outcome;	/* opaque small integer */
	uint32_t	 replica;	/* bit 0: an extra copy; bit 1:
					   moved by balancing (SPAN_F_*) */
};

/*
 * A join token (masterd/tokens.c): its secret only as a SHA-256.  And a
 * certificate the CA issued, by a join or a renewal.
 */
struct journal_token {
	char		 id[16];
	char		 hash[65];	/* SHA-256 of the secret, hex */
	uint64_t	 created;	/* Unix s */
	uint64_t	 expires;	/* Unix s */
	uint32_t	 uses;		/* joins it allows */
	uint32_t	 used;
	int		 revoked;
	char		 name[64];	/* the one name it joins as; "": any
					   name not known */
	uint64_t	 cert_lifetime;	/* s; 0: cert_lifetime */
};

struct journal_cert {
	char		 serial[48];	/* hex */
	char		 name[64];
	uint64_t	 issued;	/* Unix s */
	uint64_t	 not_after;	/* Unix s */
	char		 token[16];	/* "": a renewal */
	char		 addr[64];	/* the peer's */
	uint64_t	 revoked;	/* Unix s; 0: in force */
};

struct journal	*journal_open(const char *, char *, size_t);
void		 journal_close(struct journal *);
const char	*journal_error(const struct journal *);
const char	*journal_path(const struct journal *);

int		 journal_meta_get(struct journal *, const char *,
		    uint64_t *);
int		 journal_meta_set(struct journal *, const char *, uint64_t);

int		 journal_job_put(struct journal *,
		    const struct journal_job *);
int		 journal_job_delete(struct journal *, uint64_t);
int		 journal_result_add(struct journal *,
		    const struct journal_result *);
int		 journal_results_drop(struct journal *, uint64_t);
int		 journal_task_add(struct journal *,
		    const struct journal_task *);
int		 journal_tasks_add(struct journal *,
		    const struct journal_task *, size_t);
int		 journal_batch_put(struct journal *,
		    const struct journal_batch *);
int		 journal_gen_put(struct journal *, uint64_t, uint32_t,
		    const void *, size_t);
int		 journal_span_add(struct journal *,
		    const struct journal_span *);

int		 journal_token_put(struct journal *,
		    const struct journal_token *);
int		 journal_token_get(struct journal *, const char *,
		    struct journal_token *);
int		 journal_load_tokens(struct journal *,
		    int (*)(void *, const struct journal_token *), void *);
int		 journal_cert_add(struct journal *,
		    const struct journal_cert *);
int		 journal_load_certs(struct journal *,
		    int (*)(void *, const struct journal_cert *), void *);
int		 journal_cert_mark(struct journal *, const char *,
		    const char *, uint64_t, const char *);
int		 journal_load_marks(struct journal *, int (*)(void *,
		    const char *, const char *, uint64_t, const char *),
		    void *);

int		 journal_commit(struct journal *);
int		 journal_rollback(struct journal *);
int		 journal_probe(struct journal *);
int		 journal_failed(const struct journal *);
int		 journal_pending(const struct journal *);
uint64_t	 journal_failures(const struct journal *);
uint64_t	 journal_commits(const struct journal *);
const char	*journal_errstr(int);
int		 journal_is_full(int);
int		 journal_prune(struct journal *, uint64_t, size_t *);

int		 journal_load_jobs(struct journal *,
		    int (*)(void *, const struct journal_job *), void *);
int		 journal_load_results(struct journal *, uint64_t,
		    int (*)(void *, const struct journal_result *), void *);
int		 journal_load_tasks(struct journal *, uint64_t,
		    int (*)(void *, const struct journal_task *), void *);
int		 journal_load_batches(struct journal *, uint64_t,
		    int (*)(void *, const struct journal_batch *), void *);
int		 journal_load_gens(struct journal *, uint64_t,
		    int (*)(void *, uint32_t, const void *, size_t), void *);
int		 journal_load_spans(struct journal *, uint64_t,
		    int (*)(void *, const struct journal_span *), void *);

int		 journal_stats(struct journal *, uint64_t *, uint64_t *,
		    uint64_t *);

uint64_t	 journal_bytes(const struct journal *, uint64_t);
uint64_t	 journal_bytes_all(const struct journal *);
int		 journal_compact(struct journal *, uint64_t, uint64_t,
		    size_t *);
int		 journal_rows_drop(struct journal *, uint64_t);

#endif /* R3Q_JOURNAL_H */

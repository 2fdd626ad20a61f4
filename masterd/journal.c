/*
 * masterd's journal in SQLite.  The file is opened in WAL mode with an
 * exclusive lock (flock) held for as long as masterd runs, so a second
 * masterd on the same file fails at open instead of sharing it; a thread
 * of the journal checkpoints the WAL (see JOURNAL_CKPT_FRAMES).  Writes
 * are grouped:
 * the first write after a commit opens a transaction and journal_commit()
 * ends it, so a crash loses at most the writes since the last commit and
 * never half of one.
 *
 * SQLite integers are signed 64-bit: uint64_t values are stored as their
 * bit pattern (values above INT64_MAX come back negative in SQL, which is
 * why the ORDER BY and prune clauses compare them as unsigned).  Task
 * outputs and payloads are opaque blobs, stored and given back as they are.
 *
 * Schema version 1 (before batch jobs) had no driver, tasks or batches, and
 * stored each result's fitness as the bit pattern of its double in an
 * INTEGER column; journal_schema() upgrades such a file in place.
 */
#include "config.h"

#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "es/payload.h"
#include "journal.h"
#include "log.h"
#include "le.h"
#include "u64map.h"

/* Bump this, and teach journal_schema() to upgrade, if any table changes. */
#define JOURNAL_VERSION		5
#define JOURNAL_STR(x)		#x
#define JOURNAL_XSTR(x)		JOURNAL_STR(x)

#define JOURNAL_BUSY_MS		1000

/*
 * WAL checkpoints ("durability for free").  SQLite's own
 * checkpoint runs inside the commit that takes the WAL past 1000 pages:
 * in masterd's event loop, two fsyncs long (on ext4, 10-15 commits of a
 * 20-generation job took 1 ms or more, the longest 42 ms).  Instead a
 * thread of the journal, with its own connection, runs a PASSIVE
 * checkpoint each time the WAL has grown by JOURNAL_CKPT_FRAMES pages:
 * it copies committed pages into the database while masterd goes on
 * writing the WAL, and never waits for masterd's transaction nor makes
 * masterd wait.  A checkpoint is crash-safe whenever it is interrupted
 * (the WAL keeps every page until the database has it, fsynced), so
 * kill -9 at any moment loses nothing committed.
 *
 * But only a writer that finds the WAL wholly copied starts it again from
 * its beginning, and while masterd commits every loop pass the thread
 * never quite catches up: past j_restart pages, the commit itself copies
 * the pages the thread has not, so that the next transaction restarts
 * the WAL.  That still takes two fsyncs in the loop (measured 6 to 34
 * ms on a loaded machine), so j_restart is as large as the disk allows:
 * an eighth of the space free (statvfs, at open and at each restart),
 * at most JOURNAL_WAL_MAX pages (128 MB) and at least
 * JOURNAL_CKPT_FRAMES, which is SQLite's own rhythm: a journal on a small
 * disk (tests/regress/journal-full.sh: 24 MB) keeps a small WAL.
 */
#define JOURNAL_CKPT_FRAMES	1000
#define JOURNAL_WAL_MAX		32768

/*
 * The largest output kept inline in its results row; a larger one goes to
 * outputs (see the schema).  Measured with 200,000 results in commits of
 * 1,000, inline against outputs: inserts 11 % faster at 64 bytes and 28 %
 * at 128, even at 256 and 512, 2.4 times slower at 1 KiB; but loading the
 * job back was already slower inline from 64 bytes up.  64 takes the
 * insert gain where it is clear, far below the 1 KiB cliff.  es outputs, 8
 * bytes, are well under it; so is every version 1 result upgraded.
 */
#define JOURNAL_INLINE_MAX	64
_Static_assert(ES_OUTPUT_LEN <= JOURNAL_INLINE_MAX,
    "es outputs and upgraded version 1 results are inline");

/*
 * Unsigned "ended < ?1" over bit patterns: the upper half of the uint64_t
 * range is negative in SQL, so compare the halves first.
 */
#define JOURNAL_OLD \
	"state <> 'running' AND ended <> 0 AND " \
	"(ended < 0) <= (?1 < 0) AND ((ended < 0) < (?1 < 0) OR ended < ?1)"

/*
 * The packed rows of results and executions (version 5) are rowid tables
 * keyed by job x 2^32 + the row's number in its job (?1 the job, ?2 the
 * number): a job's rows are a range of keys, in order, and a commit
 * appends to the end of the b-tree.  A job id of 2^31 or more, or a row
 * number of 2^32 (neither is ever handed out), overflows to a real: such
 * a key is refused ("datatype mismatch"), such a range holds nothing.
 */
#define JOURNAL_KEY		"?1 * 4294967296 + ?2"
#define JOURNAL_OF_JOB \
	"key >= ?1 * 4294967296 AND key < (?1 + 1) * 4294967296"
/* The rows of the jobs JOURNAL_OLD finds: a range of keys each, not a scan. */
#define JOURNAL_PRUNE_ROWS(tab) \
	"DELETE FROM " tab " WHERE key IN (SELECT t.key FROM jobs AS j, " \
	tab " AS t WHERE " JOURNAL_OLD " AND t.key >= j.id * 4294967296 " \
	"AND t.key < (j.id + 1) * 4294967296)"

/*
 * A batch job's tasks are kept in runs: one row holds tasks idx .. idx +
 * n - 1 of a batch, packed (little-endian) as key u64, priority i32,
 * copies u32, payload length u32, payload; so that a client's frame of a
 * thousand tasks costs one insert, not a thousand.
 */
#define JOURNAL_RUN_HEAD	20

/* The statements prepared once at open. */
enum journal_stmt {
	JS_BEGIN,
	JS_COMMIT,
	JS_SAVEPOINT,
	JS_RELEASE,
	JS_ROLLBACK_TO,
	JS_META_GET,
	JS_META_SET,
	JS_JOB_PUT,
	JS_JOB_DELETE,
	JS_OUTPUTS_DROP,
	JS_RESULTS_DROP,
	JS_GENS_DROP,
	JS_SPANS_DROP,
	JS_TASKS_DROP,
	JS_BATCHES_DROP,
	JS_OUTPUT_ADD,
	JS_OUTPUT_GET,
	JS_RESULT_ADD,
	JS_RESULT_NEXT,
	JS_TASK_ADD,
	JS_BATCH_PUT,
	JS_GEN_PUT,
	JS_SPAN_ADD,
	JS_EXEC_NEXT,
	JS_PRUNE_OUTPUTS,
	JS_PRUNE_RESULTS,
	JS_PRUNE_GENS,
	JS_PRUNE_SPANS,
	JS_PRUNE_TASKS,
	JS_PRUNE_BATCHES,
	JS_PRUNE_JOBS,
	JS_LOAD_JOBS,
	JS_LOAD_RESULTS,
	JS_LOAD_TASKS,
	JS_LOAD_BATCHES,
	JS_LOAD_GENS,
	JS_LOAD_SPANS,
	JS_COUNT_JOBS,
	JS_COUNT_RESULTS,
	JS_COUNT_SPANS,
	JS_BYTES_TASKS,
	JS_BYTES_OUTPUTS,
	JS_BYTES_RESULTS,
	JS_BYTES_JOB,
	JS_COMPACT_TASKS,
	JS_COMPACT_BATCHES,
	JS_TASK_DELETE,
	JS_BATCH_DELETE,
	JS_STRIP_RESULTS,
	JS_RESULT_SET,
	JS_OUTPUT_DELETE,
	JS_NSTMTS
};

static const char *const journal_sql[JS_NSTMTS] = {
	[JS_BEGIN] = "BEGIN IMMEDIATE",
	[JS_COMMIT] = "COMMIT",
	[JS_SAVEPOINT] = "SAVEPOINT journal_group",
	[JS_RELEASE] = "RELEASE journal_group",
	[JS_ROLLBACK_TO] = "ROLLBACK TO journal_group",
	[JS_META_GET] = "SELECT value FROM meta WHERE key = ?1",
	[JS_META_SET] = "INSERT OR REPLACE INTO meta (key, value) "
	    "VALUES (?1, ?2)",
	[JS_JOB_PUT] = "INSERT OR REPLACE INTO jobs (id, params, state, "
	    "submitted, ended, gen, first_task, error, extra, driver) "
	    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
	[JS_JOB_DELETE] = "DELETE FROM jobs WHERE id = ?1",
	[JS_OUTPUTS_DROP] = "DELETE FROM outputs WHERE job = ?1",
	[JS_RESULTS_DROP] = "DELETE FROM results WHERE " JOURNAL_OF_JOB,
	[JS_GENS_DROP] = "DELETE FROM gens WHERE job = ?1",
	[JS_SPANS_DROP] = "DELETE FROM execs WHERE " JOURNAL_OF_JOB,
	[JS_TASKS_DROP] = "DELETE FROM tasks WHERE job = ?1",
	[JS_BATCHES_DROP] = "DELETE FROM batches WHERE job = ?1",
	[JS_OUTPUT_ADD] = "INSERT INTO outputs (job, output) VALUES (?1, ?2)",
	[JS_OUTPUT_GET] = "SELECT output FROM outputs WHERE id = ?1",
	[JS_RESULT_ADD] = "INSERT INTO results (key, job, id, n, rows) "
	    "VALUES (" JOURNAL_KEY ", ?1, ?2, ?3, ?4)",
	[JS_RESULT_NEXT] = "SELECT coalesce((SELECT id + 1 FROM results "
	    "WHERE " JOURNAL_OF_JOB " ORDER BY key DESC LIMIT 1), 0)",
	[JS_TASK_ADD] = "INSERT INTO tasks (job, gen, idx, n, run) "
	    "VALUES (?1, ?2, ?3, ?4, ?5)",
	[JS_BATCH_PUT] = "INSERT OR REPLACE INTO batches (job, gen, client, "
	    "kind, closed) VALUES (?1, ?2, ?3, ?4, ?5)",
	[JS_GEN_PUT] = "INSERT OR REPLACE INTO gens (job, gen, report) "
	    "VALUES (?1, ?2, ?3)",
	[JS_SPAN_ADD] = "INSERT INTO execs (key, job, id, n, spans) "
	    "VALUES (" JOURNAL_KEY ", ?1, ?2, ?3, ?4)",
	[JS_EXEC_NEXT] = "SELECT coalesce((SELECT id + 1 FROM execs "
	    "WHERE " JOURNAL_OF_JOB " ORDER BY key DESC LIMIT 1), 0)",
	[JS_PRUNE_OUTPUTS] = "DELETE FROM outputs WHERE job IN "
	    "(SELECT id FROM jobs WHERE " JOURNAL_OLD ")",
	[JS_PRUNE_RESULTS] = JOURNAL_PRUNE_ROWS("results"),
	[JS_PRUNE_GENS] = "DELETE FROM gens WHERE job IN "
	    "(SELECT id FROM jobs WHERE " JOURNAL_OLD ")",
	[JS_PRUNE_SPANS] = JOURNAL_PRUNE_ROWS("execs"),
	[JS_PRUNE_TASKS] = "DELETE FROM tasks WHERE job IN "
	    "(SELECT id FROM jobs WHERE " JOURNAL_OLD ")",
	[JS_PRUNE_BATCHES] = "DELETE FROM batches WHERE job IN "
	    "(SELECT id FROM jobs WHERE " JOURNAL_OLD ")",
	[JS_PRUNE_JOBS] = "DELETE FROM jobs WHERE " JOURNAL_OLD,
	[JS_LOAD_JOBS] = "SELECT id, params, state, submitted, ended, gen, "
	    "first_task, error, extra, driver FROM jobs ORDER BY id < 0, id",
	[JS_LOAD_RESULTS] = "SELECT n, rows FROM results WHERE "
	    JOURNAL_OF_JOB " ORDER BY key",
	[JS_LOAD_TASKS] = "SELECT gen, idx, n, run "
	    "FROM tasks WHERE job = ?1 ORDER BY gen, idx",
	[JS_LOAD_BATCHES] = "SELECT gen, client, kind, closed FROM batches "
	    "WHERE job = ?1 ORDER BY gen",
	[JS_LOAD_GENS] = "SELECT gen, report FROM gens WHERE job = ?1 "
	    "ORDER BY gen",
	[JS_LOAD_SPANS] = "SELECT n, spans FROM execs WHERE "
	    JOURNAL_OF_JOB " ORDER BY key",
	[JS_COUNT_JOBS] = "SELECT count(*) FROM jobs",
	[JS_COUNT_RESULTS] = "SELECT coalesce(sum(n), 0) FROM results",
	[JS_COUNT_SPANS] = "SELECT coalesce(sum(n), 0) FROM execs",
	/*
	 * The bytes each job keeps (journal_bytes()): its payloads, its
	 * large outputs and its packed results.  length() of a blob reads
	 * its size from the row's header, never its overflow pages.
	 */
	[JS_BYTES_TASKS] = "SELECT job, sum(length(run) - "
	    JOURNAL_XSTR(JOURNAL_RUN_HEAD) " * n) FROM tasks GROUP BY job",
	[JS_BYTES_OUTPUTS] = "SELECT job, sum(length(output)) FROM outputs "
	    "GROUP BY job",
	[JS_BYTES_RESULTS] = "SELECT job, sum(length(rows)) FROM results "
	    "GROUP BY job",
	[JS_BYTES_JOB] = "SELECT (SELECT coalesce(sum(length(run) - "
	    JOURNAL_XSTR(JOURNAL_RUN_HEAD) " * n), 0) FROM tasks WHERE "
	    "job = ?1) + (SELECT coalesce(sum(length(output)), 0) FROM "
	    "outputs WHERE job = ?1) + (SELECT coalesce(sum(length(rows)), "
	    "0) FROM results WHERE " JOURNAL_OF_JOB ")",
	[JS_COMPACT_TASKS] = "SELECT rowid, gen, idx, n FROM tasks "
	    "WHERE job = ?1",
	[JS_COMPACT_BATCHES] = "SELECT gen FROM batches WHERE job = ?1 AND "
	    "closed <> 0",
	[JS_TASK_DELETE] = "DELETE FROM tasks WHERE rowid = ?1",
	[JS_BATCH_DELETE] = "DELETE FROM batches WHERE job = ?1 AND "
	    "gen = ?2",
	[JS_STRIP_RESULTS] = "SELECT key, n, rows FROM results WHERE "
	    JOURNAL_OF_JOB,
	[JS_RESULT_SET] = "UPDATE results SET n = ?2, rows = ?3 WHERE "
	    "key = ?1",
	[JS_OUTPUT_DELETE] = "DELETE FROM outputs WHERE id = ?1",
};

/*
 * Schema version 5.  A new file gets all of it in one transaction with the
 * version; a version 1, 2, 3 or 4 file gets the upgrades below instead.  In
 * every row the blob that may be large comes last, after the small
 * columns, so that reading those never follows the blob's overflow pages.
 *
 * Results are the hot path (an es job journals up to 100,000 a second).
 * Up to version 3 each had its row, WITHOUT ROWID: one b-tree insert a row
 * instead of a rowid table's two (the row, then its key in an index).  But
 * a WITHOUT ROWID b-tree carries whole rows, up to about 1000 bytes each,
 * in its interior pages too, and took 2.4 to 4 times as long to insert 1
 * KiB outputs.  So an output is inline only up to JOURNAL_INLINE_MAX
 * bytes; a larger one is a row of outputs, a rowid table appended to in id
 * order, and its result names it in outid (NULL: the output, if any, is
 * inline).  A failure's error stays
 * inline: failures are rare.  Tasks are a rowid table with their key in an
 * index, for the same reason as large outputs: payloads are arbitrary.
 *
 * Task executions, kept for the reports (version 3): version 2
 * gave each its row in spans, a rowid table with an index on job, two
 * b-tree inserts a task and three pages written by nearly every commit.
 * Now the executions journaled between two commits are packed, a job's at
 * a time, into rows of execs of about JOURNAL_EXEC_ROW bytes (see
 * journal_exec_put()): one insert a loop pass and one page a commit.
 * Version 3 and 4 kept execs and the packed results WITHOUT ROWID, keyed
 * by (job, a number counted per job), for a single b-tree.  But such a
 * b-tree carries whole rows, about 480 bytes, in its interior pages, and
 * it splits a full page among three: a commit of 400 tasks wrote 18 pages
 * of WAL for 4 of rows ("durability for free").  Version 5 keys
 * them by JOURNAL_KEY in rowid tables, whose interior pages hold keys
 * alone and whose last page, when full, simply gets a next one: 11 pages.
 */
#define JOURNAL_TABLE_EXECS \
	"CREATE TABLE execs (key INTEGER PRIMARY KEY, job INTEGER, " \
	"    id INTEGER, n INTEGER, spans BLOB);"
/*
 * Accepted results (version 4, "durability for free"): version 3
 * gave each its row, one b-tree insert a task, which was 40 % of masterd's
 * time at 200,000 no-op tasks a second with the journal on.  Now the
 * results journaled between two commits are packed, a job's at a time,
 * into rows of about JOURNAL_RES_ROW bytes (journal_result_put()), as the
 * executions are: one insert a loop pass.  A large output is still a row
 * of outputs, which names its job so that the job's go with it.
 */
#define JOURNAL_TABLE_RESULTS_PACKED \
	"CREATE TABLE results (key INTEGER PRIMARY KEY, job INTEGER, " \
	"    id INTEGER, n INTEGER, rows BLOB);"
#define JOURNAL_INDEX_OUTPUTS \
	"CREATE INDEX outputs_job ON outputs (job);"
/* outputs as version 3's gains its column (an upgrade's text, exactly). */
#define JOURNAL_TABLE_RESULTS \
	JOURNAL_TABLE_RESULTS_PACKED \
	"CREATE TABLE outputs (id INTEGER PRIMARY KEY, output BLOB, " \
	"job INTEGER);" \
	JOURNAL_INDEX_OUTPUTS
/* Version 3's, which version 1's upgrade makes and version 3's packs. */
#define JOURNAL_TABLE_RESULTS_V3 \
	"CREATE TABLE results (job INTEGER, gen INTEGER, idx INTEGER, " \
	"    status INTEGER, seq INTEGER, error TEXT, outid INTEGER, " \
	"    output BLOB, PRIMARY KEY (job, gen, idx)) WITHOUT ROWID;" \
	"CREATE TABLE outputs (id INTEGER PRIMARY KEY, output BLOB);"
#define JOURNAL_TABLE_TASKS \
	"CREATE TABLE tasks (job INTEGER, gen INTEGER, idx INTEGER, " \
	"    n INTEGER, run BLOB, PRIMARY KEY (job, gen, idx));"
#define JOURNAL_TABLE_BATCHES \
	"CREATE TABLE batches (job INTEGER, gen INTEGER, client INTEGER, " \
	"    kind TEXT, closed INTEGER, PRIMARY KEY (job, gen)) WITHOUT ROWID;"

static const char journal_schema_sql[] =
	"CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
	"CREATE TABLE jobs (id INTEGER PRIMARY KEY, params BLOB, state TEXT, "
	"    submitted INTEGER, ended INTEGER, gen INTEGER, "
	"    first_task INTEGER, error TEXT, extra BLOB, driver TEXT);"
	JOURNAL_TABLE_RESULTS
	"CREATE TABLE gens (job INTEGER, gen INTEGER, report BLOB, "
	"    PRIMARY KEY (job, gen)) WITHOUT ROWID;"
	JOURNAL_TABLE_EXECS
	JOURNAL_TABLE_TASKS
	JOURNAL_TABLE_BATCHES;

/*
 * Join tokens and the certificates issued: tables of their own,
 * made if missing at every open, so that a version 2 file of an older
 * masterd takes them without a schema change.  A token's secret is kept
 * only as its SHA-256; what a token grants besides (a name, its
 * certificates' lifetime) is in token_grants, and a certificate's
 * revocation or renewal (its successor's serial; of any serial, issued
 * here or not) in cert_marks, both added later the same way.  All are small and rarely
 * written: their statements are prepared when used.
 */
static const char journal_tokens_sql[] =
	"CREATE TABLE IF NOT EXISTS tokens (id TEXT PRIMARY KEY, hash TEXT, "
	"    created INTEGER, expires INTEGER, uses INTEGER, used INTEGER, "
	"    revoked INTEGER);"
	"CREATE TABLE IF NOT EXISTS certs (serial TEXT PRIMARY KEY, "
	"    name TEXT, issued INTEGER, not_after INTEGER, token TEXT, "
	"    address TEXT);"
	"CREATE TABLE IF NOT EXISTS token_grants (id TEXT PRIMARY KEY, "
	"    name TEXT, cert_lifetime INTEGER);"
	"CREATE TABLE IF NOT EXISTS cert_marks (serial TEXT PRIMARY KEY, "
	"    name TEXT, revoked INTEGER NOT NULL DEFAULT 0, "
	"    successor TEXT NOT NULL DEFAULT '');";

/*
 * Version 1 to 2, in the transaction that checked the version: every job
 * so far was an es job; each fitness (the bits of a double in an INTEGER)
 * becomes the es driver's 8-byte output, through journal_v1_output(); the
 * tables of batch jobs are new.  The result is version 2's schema, which
 * journal_upgrade2() takes on.
 */
static const char journal_upgrade1_sql[] =
	"ALTER TABLE jobs ADD COLUMN driver TEXT;"
	"UPDATE jobs SET driver = 'es';"
	"ALTER TABLE results RENAME TO results_v1;"
	JOURNAL_TABLE_RESULTS_V3
	"INSERT INTO results (job, gen, idx, status, seq, error, outid, "
	"    output) "
	"    SELECT job, gen, idx, 0, 0, NULL, NULL, "
	"    journal_v1_output(fitness) "
	"    FROM results_v1;"
	"DROP TABLE results_v1;"
	JOURNAL_TABLE_TASKS
	JOURNAL_TABLE_BATCHES;

/*
 * Packed executions (schema version 3): a row of execs holds n of them,
 * each as unsigned LEB128 varints: gen, idx, task, the worker (k: 0 is a
 * new name, its length and bytes following, the row's next; k > 0 the
 * row's k-th), slot, start (zigzag of the difference from the previous
 * start in the row, from 0), end (zigzag of end - start), outcome,
 * replica.  Rows hold about JOURNAL_EXEC_ROW bytes.
 */
#define JOURNAL_EXEC_ROW	480
/* The most one takes: 10 varints of up to 10 bytes, and a name. */
#define JOURNAL_EXEC_MAX \
	(10 * 10 + sizeof(((struct journal_span *)0)->worker))
#define JOURNAL_EXEC_NAMES	64	/* direct-mapped cache of names */
#define JOURNAL_RES_ROW		480	/* bytes of a row of results */

/*
 * The executions of one job journaled since the last commit, as rows of
 * execs to be (journal_execs_flush() at the commit).  Owned by the
 * journal; emptied by each commit and rollback, reused by the next job.
 */
struct journal_execbuf {
	uint64_t	 eb_job;
	uint64_t	 eb_next;	/* id of its next row; UINT64_MAX
					   until read from the file */
	uint8_t		*eb_buf;	/* the rows, one after the other */
	size_t		 eb_len;
	size_t		 eb_cap;
	struct {
		size_t	 off;
		size_t	 n;
	}		*eb_rows;	/* the last one is being filled */
	size_t		 eb_nrows;
	size_t		 eb_rowcap;
	uint64_t	 eb_prev;	/* last start in the open row */
	uint32_t	 eb_nnames;	/* names in the open row */
	struct {
		size_t	 off;		/* of its bytes in eb_buf */
		uint32_t len;
		uint32_t k;		/* 1-based in the open row */
	}		 eb_names[JOURNAL_EXEC_NAMES];
};

/*
 * Version 2 to 3, in the transaction that checked the version: every row
 * of spans is packed into execs, a job's in their order (rowid) by
 * journal_upgrade2(), then spans is dropped.  The execs made are version
 * 5's already, so are the results of the next upgrade.
 */
static const char journal_upgrade2_sql[] = JOURNAL_TABLE_EXECS;

/*
 * Version 3 to 4, in the same transaction: results packed by
 * journal_upgrade3(), a job's in (gen, idx) order; outputs learn their job.
 * An output no result named (none should be) goes.
 */
static const char journal_upgrade3_sql[] =
	"ALTER TABLE results RENAME TO results_v3;"
	JOURNAL_TABLE_RESULTS_PACKED
	"ALTER TABLE outputs ADD COLUMN job INTEGER;"
	"UPDATE outputs SET job = (SELECT r.job FROM results_v3 AS r "
	"    WHERE r.outid = outputs.id);"
	"DELETE FROM outputs WHERE job IS NULL;"
	JOURNAL_INDEX_OUTPUTS;

/*
 * Version 3 or 4 to 5, in the same transaction: the rows of execs (and of
 * version 4's packed results) as they are, each under its key.  A row
 * whose job or number is out of range makes the upgrade fail, with
 * SQLite's "datatype mismatch".
 */
static const char journal_upgrade4_execs_sql[] =
	"ALTER TABLE execs RENAME TO execs_v4;"
	JOURNAL_TABLE_EXECS
	"INSERT INTO execs (key, job, id, n, spans) "
	"    SELECT job * 4294967296 + id, job, id, n, spans FROM execs_v4;"
	"DROP TABLE execs_v4;";
static const char journal_upgrade4_results_sql[] =
	"ALTER TABLE results RENAME TO results_v4;"
	JOURNAL_TABLE_RESULTS_PACKED
	"INSERT INTO results (key, job, id, n, rows) "
	"    SELECT job * 4294967296 + id, job, id, n, rows FROM results_v4;"
	"DROP TABLE results_v4;";

/*
 * An open journal.  Owned by masterd from journal_open() to
 * journal_close(); the database connection and its statements die with it.
 */
struct journal {
	sqlite3		*j_db;
	char		*j_path;
	int		 j_pending;	/* our transaction is open */
	int		 j_changes;	/* rows written at the last traced
					   commit (sqlite3_total_changes) */
	int		 j_failed;	/* SQLite's code of a failed write:
					   writes refused until
					   journal_rollback() */
	uint64_t	 j_nfailed;	/* writes and commits that failed */
	uint64_t	 j_ncommits;	/* transactions committed */
	sqlite3_stmt	*j_stmt[JS_NSTMTS];
	uint8_t		*j_run;		/* a run of tasks being packed */
	size_t		 j_runcap;
	struct journal_execbuf *j_eb;	/* executions since the last
					   commit, a job's each */
	size_t		 j_neb;
	struct journal_execbuf *j_rb;	/* results since the last
					   commit, a job's each */
	size_t		 j_nrb;
	int		 j_lockfd;	/* flock()ed: one masterd a file */
	int		 j_busy;	/* the open met another's lock */
	int		 j_walframes;	/* pages in the WAL at the last
					   commit */
	int		 j_ckpt_at;	/* j_walframes when the checkpoint
					   thread was last woken */
	int		 j_restart;	/* WAL pages that make the loop
					   restart it */
	struct u64map	 j_bytes;	/* job -> bytes it keeps
					   (journal_bytes()) */
	uint64_t	 j_allbytes;	/* their sum */

	/* The checkpoint thread: j_ckpt_mtx guards the fields below it. */
	sqlite3		*j_ckpt_db;	/* its connection */
	pthread_t	 j_ckpt_thread;
	int		 j_ckpt_running;
	pthread_mutex_t	 j_ckpt_mtx;
	pthread_cond_t	 j_ckpt_cv;
	int		 j_ckpt_want;
	int		 j_ckpt_stop;
	int		 j_ckpt_busy;	/* checkpointing (atomic: read
					   without the lock) */
	uint64_t	 j_ckpt_done;	/* checkpoints run */
	uint64_t	 j_ckpt_failed;	/* of which failed */
	char		 j_err[PATH_MAX + 512];
};

static void		 journal_set(struct journal *, const char *, ...)
			    __attribute__((format(printf, 2, 3)));
static void		 journal_fail(struct journal *, const char *);
static void		 journal_wfail(struct journal *, const char *);
static sqlite3_int64	 journal_i64(uint64_t);
static uint64_t		 journal_u64(sqlite3_int64);
static void		 journal_bind_u64(sqlite3_stmt *, int, uint64_t,
			    int *);
static void		 journal_bind_blob(sqlite3_stmt *, int, const void *,
			    size_t, int *);
static void		 journal_bind_text(sqlite3_stmt *, int, const char *,
			    size_t, int *);
static void		 journal_bind_str(sqlite3_stmt *, int, const char *,
			    int *);
static void		 journal_column_text(sqlite3_stmt *, int, char *,
			    size_t);
static void		 journal_reset(struct journal *, enum journal_stmt);
static int		 journal_run(struct journal *, enum journal_stmt, int,
			    const char *);
static int		 journal_begin(struct journal *);
static void		 journal_undo(struct journal *);
static int		 journal_insert(struct journal *, enum journal_stmt,
			    int, const char *, uint64_t, uint32_t, uint32_t);
static int		 journal_group(struct journal *,
			    const enum journal_stmt *, size_t, uint64_t,
			    const char *, size_t *);
static sqlite3_stmt	*journal_query(struct journal *, enum journal_stmt,
			    uint64_t, const char *);
static int		 journal_next(struct journal *, enum journal_stmt,
			    const char *);
static int		 journal_stop(struct journal *, enum journal_stmt,
			    const char *);
static int		 journal_count(struct journal *, enum journal_stmt,
			    uint64_t *);
static int		 journal_exec(struct journal *, const char *);
static int		 journal_pragma(struct journal *, const char *,
			    sqlite3_int64 *, char *, size_t);
static int		 journal_create(struct journal *);
static int		 journal_connect(struct journal *);
static int		 journal_wal_hook(void *, sqlite3 *, const char *,
			    int);
static void		*journal_ckpt_main(void *);
static int		 journal_ckpt_start(struct journal *);

/*
 * 0: no checkpoint thread, and so no checkpoint ever.  Only for the fuzz
 * target (fuzz/journal.c), whose inputs never grow a WAL worth one: the
 * thread and its second connection (the schema parsed again, a thread
 * made and joined under ASan) were a third of its time per input.
 */
int			 journal_ckpt_thread = 1;
static void		 journal_ckpt_stop(struct journal *);
static void		 journal_restart_at(struct journal *);
static void		 journal_wal_restart(struct journal *);
static void		 journal_v1_output(sqlite3_context *, int,
			    sqlite3_value **);
static int		 journal_upgrade1(struct journal *);
static int		 journal_upgrade2(struct journal *);
static int		 journal_upgrade3(struct journal *);
static int		 journal_upgrade4(struct journal *, int, const char *);
static int		 journal_exec_put(struct journal_execbuf *,
			    const struct journal_span *);
static int		 journal_result_put(struct journal_execbuf *,
			    const struct journal_result *, uint64_t);
static struct journal_execbuf *journal_execbuf(struct journal_execbuf **,
			    size_t *, uint64_t);
static int		 journal_execbuf_write(struct journal_execbuf *,
			    sqlite3_stmt *);
static int		 journal_execs_flush(struct journal *);
static void		 journal_execs_clear(struct journal *);
static int		 journal_check(struct journal *);
static void		 journal_bytes_set(struct journal *, uint64_t,
			    uint64_t);
static void		 journal_bytes_add(struct journal *, uint64_t,
			    uint64_t);
static int		 journal_bytes_job(struct journal *, uint64_t);
static int		 journal_bytes_recount(struct journal *);
static int		 journal_schema(struct journal *);
static int		 journal_prepare(struct journal *);
static void		 journal_free(struct journal *);

/* Set the error message, always prefixed with the file's path. */
static void
journal_set(struct journal *j, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	n = snprintf(j->j_err, sizeof j->j_err, "journal %s: ", j->j_path);
	if (n < 0 || (size_t)n >= sizeof j->j_err)
		return;
	va_start(ap, fmt);
	vsnprintf(j->j_err + n, sizeof j->j_err - (size_t)n, fmt, ap);
	va_end(ap);
}

/*
 * Set the error message from SQLite's.  Some errors (a full disk, an I/O
 * error) roll the whole transaction back: say so, since then the writes
 * since the last commit are gone, not just the one that failed.
 */
static void
journal_fail(struct journal *j, const char *what)
{
	const char	*lost = "";

	if (j->j_pending && sqlite3_get_autocommit(j->j_db)) {
		j->j_pending = 0;
		lost = " (uncommitted writes rolled back)";
	}
	journal_set(j, "%s: %s%s", what, sqlite3_errmsg(j->j_db), lost);
}

/*
 * A write or a commit failed (a full disk, an I/O error, ...): set the
 * message, and refuse every write from now on until journal_rollback().
 * Whether SQLite rolled back one statement or the whole transaction, what
 * is pending no longer matches what the caller believes it wrote, and a
 * later commit of the rest would journal half of it ("A journal
 * that cannot write").
 */
static void
journal_wfail(struct journal *j, const char *what)
{
	journal_fail(j, what);
	j->j_failed = sqlite3_extended_errcode(j->j_db);
	if (j->j_failed == SQLITE_OK)
		j->j_failed = SQLITE_ERROR;
	j->j_nfailed++;
}

/* A write while the journal has failed: refused, saying why. */
static int
journal_refused(struct journal *j)
{
	journal_set(j, "not written: an earlier write failed (%s) and was "
	    "not rolled back yet", sqlite3_errstr(j->j_failed));
	return (-1);
}

/* A uint64_t as the int64 with the same bits. */
static sqlite3_int64
journal_i64(uint64_t u)
{
	sqlite3_int64	 i;

	memcpy(&i, &u, sizeof i);
	return (i);
}

/* An int64 from SQLite back to the uint64_t with the same bits. */
static uint64_t
journal_u64(sqlite3_int64 i)
{
	uint64_t	 u;

	memcpy(&u, &i, sizeof u);
	return (u);
}

/*
 * The bind helpers do nothing once *rc holds an error, so a statement's
 * binds can be written one per line and checked once in journal_run().
 */
static void
journal_bind_u64(sqlite3_stmt *st, int i, uint64_t v, int *rc)
{
	if (*rc == SQLITE_OK)
		*rc = sqlite3_bind_int64(st, i, journal_i64(v));
}

/* Bind a blob, or NULL if it is empty; the caller's memory is not copied. */
static void
journal_bind_blob(sqlite3_stmt *st, int i, const void *p, size_t len,
    int *rc)
{
	if (*rc != SQLITE_OK)
		return;
	if (p == NULL || len == 0)
		*rc = sqlite3_bind_null(st, i);
	else
		*rc = sqlite3_bind_blob64(st, i, p, len, SQLITE_STATIC);
}

/* Bind a string from a fixed-size field that may lack its NUL. */
static void
journal_bind_text(sqlite3_stmt *st, int i, const char *s, size_t max,
    int *rc)
{
	if (*rc == SQLITE_OK)
		*rc = sqlite3_bind_text(st, i, s, (int)strnlen(s, max),
		    SQLITE_STATIC);
}

/* Bind a string, or NULL if it is NULL or empty (it loads as ""). */
static void
journal_bind_str(sqlite3_stmt *st, int i, const char *s, int *rc)
{
	if (*rc != SQLITE_OK)
		return;
	if (s == NULL || *s == '\0')
		*rc = sqlite3_bind_null(st, i);
	else
		*rc = sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
}

/* Copy a text column into a fixed-size field, truncating, always NUL-ended. */
static void
journal_column_text(sqlite3_stmt *st, int col, char *dst, size_t size)
{
	const unsigned char	*t;
	size_t			 n;

	t = sqlite3_column_text(st, col);
	n = t == NULL ? 0 : (size_t)sqlite3_column_bytes(st, col);
	if (n >= size)
		n = size - 1;
	if (n > 0)
		memcpy(dst, t, n);
	dst[n] = '\0';
}

/* Make a statement ready for its next use and drop its borrowed pointers. */
static void
journal_reset(struct journal *j, enum journal_stmt s)
{
	sqlite3_reset(j->j_stmt[s]);
	sqlite3_clear_bindings(j->j_stmt[s]);
}

/*
 * Step a statement that returns no rows, unless binding it already failed
 * (rc), then reset it.
 */
static int
journal_run(struct journal *j, enum journal_stmt s, int rc, const char *what)
{
	if (rc == SQLITE_OK)
		rc = sqlite3_step(j->j_stmt[s]);
	if (rc != SQLITE_DONE) {
		journal_wfail(j, what);
		journal_reset(j, s);
		return (-1);
	}
	journal_reset(j, s);
	return (0);
}

/*
 * Open a transaction unless one is pending: writes wait for a commit.
 * Refused after a failed write, until journal_rollback().
 */
static int
journal_begin(struct journal *j)
{
	if (j->j_failed)
		return (journal_refused(j));
	if (!sqlite3_get_autocommit(j->j_db))
		return (0);
	if (journal_run(j, JS_BEGIN, SQLITE_OK, "begin") == -1)
		return (-1);
	j->j_pending = 1;
	return (0);
}

/*
 * Undo a group after one of its statements failed, keeping the message of
 * that failure.  If SQLite has already rolled the whole transaction back
 * there is nothing left to undo.
 */
static void
journal_undo(struct journal *j)
{
	if (sqlite3_get_autocommit(j->j_db))
		return;
	sqlite3_step(j->j_stmt[JS_ROLLBACK_TO]);
	journal_reset(j, JS_ROLLBACK_TO);
	sqlite3_step(j->j_stmt[JS_RELEASE]);
	journal_reset(j, JS_RELEASE);
}

/*
 * Run statements that take one integer, ?1, as a unit inside a savepoint:
 * if one fails the others are undone and the rest of the pending
 * transaction is kept.  *changes is the row count of the last statement.
 */
static int
journal_group(struct journal *j, const enum journal_stmt *ss, size_t n,
    uint64_t arg, const char *what, size_t *changes)
{
	size_t	 i;
	int	 rc;

	if (journal_begin(j) == -1 || journal_execs_flush(j) == -1)
		return (-1);
	if (journal_run(j, JS_SAVEPOINT, SQLITE_OK, what) == -1)
		return (-1);
	for (i = 0; i < n; i++) {
		rc = SQLITE_OK;
		journal_bind_u64(j->j_stmt[ss[i]], 1, arg, &rc);
		if (journal_run(j, ss[i], rc, what) == -1) {
			journal_undo(j);
			return (-1);
		}
	}
	if (changes != NULL)
		*changes = (size_t)sqlite3_changes(j->j_db);
	if (journal_run(j, JS_RELEASE, SQLITE_OK, what) == -1) {
		journal_undo(j);
		return (-1);
	}
	return (0);
}

/*
 * Start a load, binding the job to ?1 if the query has one.  A callback
 * that starts the same load again would reset the outer one under its
 * feet: refuse that.
 */
static sqlite3_stmt *
journal_query(struct journal *j, enum journal_stmt s, uint64_t job,
    const char *what)
{
	sqlite3_stmt	*st = j->j_stmt[s];
	int		 rc = SQLITE_OK;

	if (sqlite3_stmt_busy(st)) {
		journal_set(j, "%s: already in progress", what);
		return (NULL);
	}
	if (sqlite3_bind_parameter_count(st) > 0)
		journal_bind_u64(st, 1, job, &rc);
	if (rc != SQLITE_OK) {
		journal_fail(j, what);
		journal_reset(j, s);
		return (NULL);
	}
	return (st);
}

/* Step a query: 1 with a row, 0 at the end, -1 on error (both reset it). */
static int
journal_next(struct journal *j, enum journal_stmt s, const char *what)
{
	int	 rc;

	rc = sqlite3_step(j->j_stmt[s]);
	if (rc == SQLITE_ROW)
		return (1);
	if (rc != SQLITE_DONE)
		journal_fail(j, what);
	journal_reset(j, s);
	return (rc == SQLITE_DONE ? 0 : -1);
}

/* A load callback asked to stop. */
static int
journal_stop(struct journal *j, enum journal_stmt s, const char *what)
{
	journal_reset(j, s);
	journal_set(j, "%s: stopped by caller", what);
	return (-1);
}

/* Run a count(*) statement (no callback, so it cannot be nested). */
static int
journal_count(struct journal *j, enum journal_stmt s, uint64_t *n)
{
	int	 r;

	if ((r = journal_next(j, s, "counting")) != 1) {
		if (r == 0)
			journal_set(j, "counting: no row");
		return (-1);
	}
	if (n != NULL)
		*n = journal_u64(sqlite3_column_int64(j->j_stmt[s], 0));
	journal_reset(j, s);
	return (0);
}

/* Run SQL once, at open. */
static int
journal_exec(struct journal *j, const char *sql)
{
	if (sqlite3_exec(j->j_db, sql, NULL, NULL, NULL) != SQLITE_OK) {
		journal_set(j, "%s", sqlite3_errmsg(j->j_db));
		return (-1);
	}
	return (0);
}

/* Run a pragma or query that returns one row, for its integer or text. */
static int
journal_pragma(struct journal *j, const char *sql, sqlite3_int64 *i,
    char *s, size_t slen)
{
	sqlite3_stmt	*st;
	int		 rc;

	if (sqlite3_prepare_v2(j->j_db, sql, -1, &st, NULL) != SQLITE_OK) {
		journal_set(j, "%s", sqlite3_errmsg(j->j_db));
		return (-1);
	}
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		if (rc == SQLITE_DONE)
			journal_set(j, "%s: no answer", sql);
		else
			journal_set(j, "%s", sqlite3_errmsg(j->j_db));
		sqlite3_finalize(st);
		return (-1);
	}
	if (i != NULL)
		*i = sqlite3_column_int64(st, 0);
	if (s != NULL)
		journal_column_text(st, 0, s, slen);
	sqlite3_finalize(st);
	return (0);
}

/*
 * The journal is a credential, as ca_key is: it holds the key that tags
 * results, every payload and output, and the join tokens' hashes (one
 * row is a token).  A file of it (the database, its -wal and -shm, which
 * SQLite makes with the database's mode) that group or others may read
 * is made its owner's alone (0600), loudly; one that cannot be is
 * refused, as PostgreSQL refuses a data directory open to others.
 */
static int
journal_private(struct journal *j)
{
	static const char *const sfx[] = { "", "-wal", "-shm" };
	struct stat	 sb;
	char		 p[PATH_MAX];
	size_t		 i;

	for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		if ((size_t)snprintf(p, sizeof(p), "%s%s", j->j_path,
		    sfx[i]) >= sizeof(p)) {
			journal_set(j, "%s: path too long", j->j_path);
			return (-1);
		}
		if (stat(p, &sb) == -1 || !S_ISREG(sb.st_mode) ||
		    (sb.st_mode & 077) == 0)
			continue;
		if (chmod(p, sb.st_mode & 0700) == -1) {
			journal_set(j, "%s is mode 0%03o, open to %s, and cannot "
			    "be made private: %s; it holds every payload and "
			    "output and the join tokens: chmod 600 it as its "
			    "owner", p,
			    (unsigned)(sb.st_mode & 0777), sb.st_mode & 007 ?
			    "others" : "its group", strerror(errno));
			return (-1);
		}
		log_warnx("journal file %s was mode 0%03o, open to %s: made "
		    "0%03o; it holds every payload and output and the join "
		    "tokens, keep it (and its backups) as ca_key is kept", p,
		    (unsigned)(sb.st_mode & 0777), sb.st_mode & 007 ?
		    "others" : "its group", (unsigned)(sb.st_mode & 0700));
	}
	return (0);
}

/*
 * Create a missing file ourselves so that it is 0600; SQLite gives its WAL
 * file the same mode.  An existing file is never opened here: closing any
 * descriptor of a file drops every POSIX lock this process holds on it,
 * including another connection's.
 */
static int
journal_create(struct journal *j)
{
	struct stat	 sb;
	int		 fd;

	if (stat(j->j_path, &sb) == 0)
		return (journal_private(j));
	if (errno != ENOENT) {
		journal_set(j, "%s", strerror(errno));
		return (-1);
	}
	fd = open(j->j_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd == -1) {
		if (errno == EEXIST)
			return (0);
		journal_set(j, "%s", strerror(errno));
		return (-1);
	}
	close(fd);
	return (0);
}

/*
 * Open the connection: our lock on the file, then WAL (its index in a
 * -shm file beside it, shared with the checkpoint thread's connection).
 * Reading the header here is also what refuses a file that is not a
 * database.
 */
static int
journal_connect(struct journal *j)
{
	char	 mode[16];
	int	 rc;

	/*
	 * One masterd a file: a lock of our own on it, taken before SQLite
	 * opens it, held until the connections are closed.  (SQLite's
	 * locking_mode = EXCLUSIVE did that, but it also keeps the WAL
	 * index in our heap, where the checkpoint thread's connection
	 * cannot see it.)  If the file cannot be opened here, SQLite will
	 * say why.
	 */
	j->j_lockfd = open(j->j_path, O_RDWR | O_CLOEXEC);
	if (j->j_lockfd != -1 && flock(j->j_lockfd, LOCK_EX | LOCK_NB) == -1) {
		if (errno == EWOULDBLOCK)
			j->j_busy = 1;
		journal_set(j, "%s", strerror(errno));
		return (-1);
	}

	/* One thread uses the connection: no mutexes (5 % of a result). */
	rc = sqlite3_open_v2(j->j_path, &j->j_db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		if (j->j_db == NULL)
			journal_set(j, "%s", sqlite3_errstr(rc));
#if SQLITE_VERSION_NUMBER >= 3012000
		else if (sqlite3_system_errno(j->j_db) != 0)
			journal_set(j, "%s: %s", sqlite3_errmsg(j->j_db),
			    strerror(sqlite3_system_errno(j->j_db)));
#endif
		else
			journal_set(j, "%s", sqlite3_errmsg(j->j_db));
		return (-1);
	}
	sqlite3_busy_timeout(j->j_db, JOURNAL_BUSY_MS);
	if (journal_pragma(j, "PRAGMA journal_mode = WAL", NULL, mode,
	    sizeof mode) == -1)
		return (-1);
	if (strcmp(mode, "wal") != 0) {
		journal_set(j, "cannot use WAL mode (journal mode is %s)",
		    mode);
		return (-1);
	}
	if (journal_exec(j, "PRAGMA synchronous = NORMAL") == -1)
		return (-1);
	/* A 200,000-task generation's rows stay in the cache. */
	if (journal_exec(j, "PRAGMA cache_size = -32768") == -1)
		return (-1);
	/* Replaces SQLite's checkpoints in the commit: see the thread. */
	sqlite3_wal_hook(j->j_db, journal_wal_hook, j);
	return (0);
}

/*
 * After each commit (masterd's thread): the WAL has nframes pages.  Wake
 * the checkpoint thread each time it has grown by JOURNAL_CKPT_FRAMES.
 */
static int
journal_wal_hook(void *arg, sqlite3 *db, const char *name, int nframes)
{
	struct journal	*j = arg;

	(void)db;
	(void)name;
	j->j_walframes = nframes;
	if (nframes < j->j_ckpt_at)	/* the WAL started again */
		j->j_ckpt_at = 0;
	if (j->j_ckpt_running && nframes - j->j_ckpt_at >=
	    JOURNAL_CKPT_FRAMES) {
		j->j_ckpt_at = nframes;
		pthread_mutex_lock(&j->j_ckpt_mtx);
		j->j_ckpt_want = 1;
		pthread_cond_signal(&j->j_ckpt_cv);
		pthread_mutex_unlock(&j->j_ckpt_mtx);
	}
	return (SQLITE_OK);
}

/*
 * The checkpoint thread: a PASSIVE checkpoint each time it is woken, on
 * its own connection, until told to stop.  A failed checkpoint (a full
 * disk) is counted and harms nothing: the WAL keeps what it could not
 * copy, and the next one tries again.
 */
static void *
journal_ckpt_main(void *arg)
{
	struct journal	*j = arg;
	int		 rc, nlog, nckpt;

	pthread_mutex_lock(&j->j_ckpt_mtx);
	for (;;) {
		while (!j->j_ckpt_want && !j->j_ckpt_stop)
			pthread_cond_wait(&j->j_ckpt_cv, &j->j_ckpt_mtx);
		if (j->j_ckpt_stop)
			break;
		j->j_ckpt_want = 0;
		__atomic_store_n(&j->j_ckpt_busy, 1, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&j->j_ckpt_mtx);
		rc = sqlite3_wal_checkpoint_v2(j->j_ckpt_db, NULL,
		    SQLITE_CHECKPOINT_PASSIVE, &nlog, &nckpt);
		__atomic_store_n(&j->j_ckpt_busy, 0, __ATOMIC_RELAXED);
		pthread_mutex_lock(&j->j_ckpt_mtx);
		j->j_ckpt_done++;
		if (rc != SQLITE_OK && rc != SQLITE_BUSY)
			j->j_ckpt_failed++;
	}
	pthread_mutex_unlock(&j->j_ckpt_mtx);
	return (NULL);
}

/*
 * Start the checkpoint thread with its connection (after the schema is
 * in place: it only ever checkpoints).
 */
static int
journal_ckpt_start(struct journal *j)
{
	int	 rc;

	rc = sqlite3_open_v2(j->j_path, &j->j_ckpt_db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		journal_set(j, "checkpoint connection: %s", j->j_ckpt_db ?
		    sqlite3_errmsg(j->j_ckpt_db) : sqlite3_errstr(rc));
		return (-1);
	}
	/*
	 * A connection finds the file in WAL mode only when it first reads
	 * it: until then a checkpoint of it does nothing.
	 */
	if (sqlite3_exec(j->j_ckpt_db, "SELECT count(*) FROM sqlite_master",
	    NULL, NULL, NULL) != SQLITE_OK) {
		journal_set(j, "checkpoint connection: %s",
		    sqlite3_errmsg(j->j_ckpt_db));
		return (-1);
	}
	if (pthread_mutex_init(&j->j_ckpt_mtx, NULL) != 0 ||
	    pthread_cond_init(&j->j_ckpt_cv, NULL) != 0) {
		journal_set(j, "checkpoint thread: cannot make its lock");
		return (-1);
	}
	if ((rc = pthread_create(&j->j_ckpt_thread, NULL, journal_ckpt_main,
	    j)) != 0) {
		journal_set(j, "checkpoint thread: %s", strerror(rc));
		pthread_cond_destroy(&j->j_ckpt_cv);
		pthread_mutex_destroy(&j->j_ckpt_mtx);
		return (-1);
	}
	j->j_ckpt_running = 1;
	journal_restart_at(j);
	return (0);
}

/* Stop the checkpoint thread, if it runs, and close its connection. */
static void
journal_ckpt_stop(struct journal *j)
{
	if (j->j_ckpt_running) {
		pthread_mutex_lock(&j->j_ckpt_mtx);
		j->j_ckpt_stop = 1;
		pthread_cond_signal(&j->j_ckpt_cv);
		pthread_mutex_unlock(&j->j_ckpt_mtx);
		pthread_join(j->j_ckpt_thread, NULL);
		pthread_cond_destroy(&j->j_ckpt_cv);
		pthread_mutex_destroy(&j->j_ckpt_mtx);
		j->j_ckpt_running = 0;
	}
	if (j->j_ckpt_db != NULL) {
		sqlite3_close_v2(j->j_ckpt_db);
		j->j_ckpt_db = NULL;
	}
}

/* How many WAL pages make the loop restart the WAL: see above. */
static void
journal_restart_at(struct journal *j)
{
	struct statvfs	 sv;
	uint64_t	 n = JOURNAL_CKPT_FRAMES;

	if (statvfs(j->j_path, &sv) == 0)
		n = (uint64_t)sv.f_bavail * sv.f_frsize / 8 / (4096 + 24);
	if (n > JOURNAL_WAL_MAX)
		n = JOURNAL_WAL_MAX;
	if (n < JOURNAL_CKPT_FRAMES)
		n = JOURNAL_CKPT_FRAMES;
	j->j_restart = (int)n;
}

/*
 * After a commit that left the WAL past j_restart pages: copy
 * what the checkpoint thread has not, so that the next transaction
 * starts the WAL again.  While the thread is at it, the first commit
 * after it tries.  A failure harms nothing, as in the thread.
 */
static void
journal_wal_restart(struct journal *j)
{
	struct timespec	 t0, t1;
	int		 rc, nlog = 0, nckpt = 0;

	if (__atomic_load_n(&j->j_ckpt_busy, __ATOMIC_RELAXED))
		return;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = sqlite3_wal_checkpoint_v2(j->j_db, NULL,
	    SQLITE_CHECKPOINT_PASSIVE, &nlog, &nckpt);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	log_trace(TRACE_JOURNAL, "checkpoint for a WAL restart: %d of %d "
	    "pages copied in %lld us%s", nckpt, nlog,
	    (long long)((t1.tv_sec - t0.tv_sec) * 1000000 +
	    (t1.tv_nsec - t0.tv_nsec) / 1000), rc == SQLITE_OK ? "" :
	    rc == SQLITE_BUSY ? ", busy" : ", failed");
	if (rc == SQLITE_OK)
		journal_restart_at(j);
}

/*
 * SQL function journal_v1_output(fitness): a version 1 fitness, the bits of
 * a double as an INTEGER, as the es driver's output for that double.
 */
static void
journal_v1_output(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	uint8_t		 out[ES_OUTPUT_LEN];
	uint64_t	 bits;
	double		 fitness;

	if (argc != 1 || sqlite3_value_type(argv[0]) != SQLITE_INTEGER) {
		sqlite3_result_error(ctx, "version 1 result without an "
		    "integer fitness", -1);
		return;
	}
	bits = journal_u64(sqlite3_value_int64(argv[0]));
	memcpy(&fitness, &bits, sizeof fitness);
	es_output_encode(out, fitness);
	sqlite3_result_blob(ctx, out, sizeof out, SQLITE_TRANSIENT);
}

/*
 * Upgrade a version 1 file to version 2, inside journal_schema()'s
 * transaction: a failure leaves the file as it was.
 */
static int
journal_upgrade1(struct journal *j)
{
	int	 r;

	if (sqlite3_create_function_v2(j->j_db, "journal_v1_output", 1,
	    SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, journal_v1_output, NULL,
	    NULL, NULL) != SQLITE_OK) {
		journal_set(j, "upgrading from version 1: %s",
		    sqlite3_errmsg(j->j_db));
		return (-1);
	}
	r = journal_exec(j, journal_upgrade1_sql);
	if (r == -1) {
		/* Keep SQLite's reason; say what was being done. */
		journal_set(j, "upgrading from version 1: %s",
		    sqlite3_errmsg(j->j_db));
	}
	sqlite3_create_function_v2(j->j_db, "journal_v1_output", 1,
	    SQLITE_UTF8, NULL, NULL, NULL, NULL, NULL);
	return (r);
}

/*
 * An upgrade's repacking, in journal_schema()'s transaction (a failure
 * leaves the file as it was): each row sel_sql gives, its job first and in
 * job order, is packed by put into rows inserted with add's SQL, a job's
 * numbered from 0; then drop_sql.  version: the one upgraded from.
 */
static int
journal_repack(struct journal *j, int version, const char *sel_sql,
    enum journal_stmt add, const char *drop_sql,
    int (*put)(struct journal_execbuf *, sqlite3_stmt *))
{
	struct journal_execbuf	 eb;
	sqlite3_stmt		*sel = NULL, *ins = NULL;
	uint64_t		 job;
	int			 rc, first = 1;

	memset(&eb, 0, sizeof eb);
	if (sqlite3_prepare_v2(j->j_db, sel_sql, -1, &sel, NULL) !=
	    SQLITE_OK ||
	    sqlite3_prepare_v2(j->j_db, journal_sql[add], -1, &ins, NULL) !=
	    SQLITE_OK)
		goto sqlfail;
	while ((rc = sqlite3_step(sel)) == SQLITE_ROW) {
		job = journal_u64(sqlite3_column_int64(sel, 0));
		if (first || job != eb.eb_job) {
			if (journal_execbuf_write(&eb, ins) != SQLITE_DONE)
				goto sqlfail;
			eb.eb_job = job;
			eb.eb_next = 0;
			first = 0;
		}
		if (put(&eb, sel) == -1) {
			journal_set(j, "upgrading from version %d: out of "
			    "memory", version);
			goto fail;
		}
	}
	if (rc != SQLITE_DONE ||
	    journal_execbuf_write(&eb, ins) != SQLITE_DONE)
		goto sqlfail;
	sqlite3_finalize(sel);
	sqlite3_finalize(ins);
	sel = ins = NULL;
	if (journal_exec(j, drop_sql) == -1)
		goto fail;
	free(eb.eb_buf);
	free(eb.eb_rows);
	return (0);

sqlfail:
	journal_set(j, "%s", sqlite3_errmsg(j->j_db));
fail:
	/* Keep SQLite's reason; say what was being done. */
	if (strstr(j->j_err, "upgrading") == NULL)
		journal_set(j, "upgrading from version %d: %s", version,
		    sqlite3_errmsg(j->j_db));
	sqlite3_finalize(sel);
	sqlite3_finalize(ins);
	free(eb.eb_buf);
	free(eb.eb_rows);
	return (-1);
}

/* A version 2 row of spans (journal_upgrade2()'s query), packed. */
static int
journal_span_repack(struct journal_execbuf *eb, sqlite3_stmt *sel)
{
	struct journal_span	 sp;

	memset(&sp, 0, sizeof sp);
	sp.job = journal_u64(sqlite3_column_int64(sel, 0));
	sp.gen = (uint32_t)sqlite3_column_int64(sel, 1);
	sp.idx = (uint32_t)sqlite3_column_int64(sel, 2);
	sp.task = journal_u64(sqlite3_column_int64(sel, 3));
	journal_column_text(sel, 4, sp.worker, sizeof sp.worker);
	sp.slot = (uint32_t)sqlite3_column_int64(sel, 5);
	sp.start_ns = journal_u64(sqlite3_column_int64(sel, 6));
	sp.end_ns = journal_u64(sqlite3_column_int64(sel, 7));
	sp.outcome = (uint32_t)sqlite3_column_int64(sel, 8);
	sp.replica = (uint32_t)sqlite3_column_int64(sel, 9);
	return (journal_exec_put(eb, &sp));
}

/*
 * Upgrade a version 2 file to version 3 inside journal_schema()'s
 * transaction: spans packed into execs, in the order version 2 loaded a
 * job's ties (rowid), then gone.
 */
static int
journal_upgrade2(struct journal *j)
{
	if (journal_exec(j, journal_upgrade2_sql) == -1) {
		journal_set(j, "upgrading from version 2: %s",
		    sqlite3_errmsg(j->j_db));
		return (-1);
	}
	return (journal_repack(j, 2, "SELECT job, gen, idx, task, worker, "
	    "slot, start, \"end\", outcome, replica FROM spans "
	    "ORDER BY job, rowid", JS_SPAN_ADD, "DROP TABLE spans",
	    journal_span_repack));
}

/* A version 3 row of results (journal_upgrade3()'s query), packed. */
static int
journal_result_repack(struct journal_execbuf *eb, sqlite3_stmt *sel)
{
	struct journal_result	 r;
	uint64_t		 outid;

	memset(&r, 0, sizeof r);
	r.job = journal_u64(sqlite3_column_int64(sel, 0));
	r.gen = (uint32_t)sqlite3_column_int64(sel, 1);
	r.idx = (uint32_t)sqlite3_column_int64(sel, 2);
	r.status = (uint32_t)sqlite3_column_int64(sel, 3);
	r.seq = journal_u64(sqlite3_column_int64(sel, 4));
	r.error = (const char *)sqlite3_column_text(sel, 5);
	outid = sqlite3_column_type(sel, 6) == SQLITE_NULL ? 0 :
	    journal_u64(sqlite3_column_int64(sel, 6));
	r.output = sqlite3_column_blob(sel, 7);
	r.outlen = r.output != NULL ? (size_t)sqlite3_column_bytes(sel, 7) :
	    0;
	return (journal_result_put(eb, &r, outid));
}

/*
 * Upgrade a version 3 file's results inside journal_schema()'s
 * transaction: each job's results, in (gen, idx) order, packed into rows
 * of results as masterd packs them now, in version 5's rowid table; the
 * large outputs stay where they are, under their job.
 */
static int
journal_upgrade3(struct journal *j)
{
	if (journal_exec(j, journal_upgrade3_sql) == -1) {
		journal_set(j, "upgrading from version 3: %s",
		    sqlite3_errmsg(j->j_db));
		return (-1);
	}
	return (journal_repack(j, 3, "SELECT job, gen, idx, status, seq, "
	    "error, outid, output FROM results_v3 ORDER BY job, gen, idx",
	    JS_RESULT_ADD, "DROP TABLE results_v3", journal_result_repack));
}

/*
 * Rekey the rows of a version 3 or 4 table (execs, results) for version 5
 * inside journal_schema()'s transaction: sql is one of the upgrade4 texts.
 */
static int
journal_upgrade4(struct journal *j, int version, const char *sql)
{
	if (journal_exec(j, sql) == -1) {
		journal_set(j, "upgrading from version %d: %s", version,
		    sqlite3_errmsg(j->j_db));
		return (-1);
	}
	return (0);
}

/*
 * Is the file sound?  A journal truncated mid-page or with a page
 * overwritten would otherwise open, and fail -- or, worse, load less than
 * it holds -- only when a job's rows are read (bad input).
 * SQLite's quick_check reads every page and checks every b-tree, in
 * O(pages): measured 0.11 s for 100,000 results and their spans (7 MB),
 * 1.6 s for a million (70 MB).  It does not compare indexes with their
 * tables, which journal_open() does not need.  The first problem it
 * names is said, with what to do.  A byte changed inside a row's blob
 * passes (SQLite keeps no checksums); a page torn or overwritten does not.
 */
static int
journal_check(struct journal *j)
{
	sqlite3_stmt	*st;
	const char	*msg;
	char		 line[256], *p;
	int		 rc;

	if (sqlite3_prepare_v2(j->j_db, "PRAGMA quick_check(1)", -1, &st,
	    NULL) != SQLITE_OK) {
		journal_set(j, "%s", sqlite3_errmsg(j->j_db));
		return (-1);
	}
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		journal_set(j, "damaged or unreadable (%s); move it aside to "
		    "start afresh, or recover it with sqlite3's .recover",
		    sqlite3_errmsg(j->j_db));
		sqlite3_finalize(st);
		return (-1);
	}
	msg = (const char *)sqlite3_column_text(st, 0);
	if (msg == NULL || strcmp(msg, "ok") != 0) {
		/* One line: its lines joined. */
		snprintf(line, sizeof line, "%s", msg != NULL ? msg :
		    "no answer");
		for (p = line; (p = strchr(p, '\n')) != NULL; )
			*p = ' ';
		journal_set(j, "damaged (SQLite's quick_check: %s); move it "
		    "aside to start afresh, or recover it with sqlite3's "
		    ".recover", line);
		sqlite3_finalize(st);
		return (-1);
	}
	sqlite3_finalize(st);
	return (0);
}

/*
 * Check the schema version, creating the schema in an empty file and
 * upgrading an older one, and write in any case so that a file that
 * cannot be written is refused now.  A database with tables but no
 * version is someone else's: refuse it rather than adding our tables to
 * it.
 */
static int
journal_schema(struct journal *j)
{
	sqlite3_int64	 version, ntables;

	if (journal_exec(j, "BEGIN IMMEDIATE") == -1)
		return (-1);
	if (journal_pragma(j, "PRAGMA user_version", &version, NULL,
	    0) == -1)
		goto fail;
	if (version == 0) {
		if (journal_pragma(j, "SELECT count(*) FROM sqlite_master",
		    &ntables, NULL, 0) == -1)
			goto fail;
		if (ntables != 0) {
			journal_set(j, "not a journal (%lld tables, no "
			    "schema version)", (long long)ntables);
			goto fail;
		}
		if (journal_exec(j, journal_schema_sql) == -1)
			goto fail;
	} else if (version == 1) {
		if (journal_upgrade1(j) == -1 || journal_upgrade2(j) == -1 ||
		    journal_upgrade3(j) == -1)
			goto fail;
	} else if (version == 2) {
		if (journal_upgrade2(j) == -1 || journal_upgrade3(j) == -1)
			goto fail;
	} else if (version == 3) {
		if (journal_upgrade4(j, 3, journal_upgrade4_execs_sql) == -1 ||
		    journal_upgrade3(j) == -1)
			goto fail;
	} else if (version == 4) {
		if (journal_upgrade4(j, 4, journal_upgrade4_execs_sql) == -1 ||
		    journal_upgrade4(j, 4, journal_upgrade4_results_sql) == -1)
			goto fail;
	} else if (version > JOURNAL_VERSION) {
		journal_set(j, "schema version %lld is newer than this "
		    "masterd knows (%d)", (long long)version, JOURNAL_VERSION);
		goto fail;
	} else if (version != JOURNAL_VERSION) {
		journal_set(j, "unknown schema version %lld",
		    (long long)version);
		goto fail;
	}
	if (journal_exec(j, "PRAGMA user_version = "
	    JOURNAL_XSTR(JOURNAL_VERSION)) == -1)
		goto fail;
	if (journal_exec(j, "COMMIT") == -1)
		goto fail;
	return (0);

fail:
	if (!sqlite3_get_autocommit(j->j_db))
		sqlite3_exec(j->j_db, "ROLLBACK", NULL, NULL, NULL);
	return (-1);
}

/* Prepare every statement once, for the life of the connection. */
static int
journal_prepare(struct journal *j)
{
	int	 s, rc;

	for (s = 0; s < JS_NSTMTS; s++) {
#if SQLITE_VERSION_NUMBER >= 3020000
		rc = sqlite3_prepare_v3(j->j_db, journal_sql[s], -1,
		    SQLITE_PREPARE_PERSISTENT, &j->j_stmt[s], NULL);
#else
		rc = sqlite3_prepare_v2(j->j_db, journal_sql[s], -1,
		    &j->j_stmt[s], NULL);
#endif
		if (rc != SQLITE_OK) {
			journal_set(j, "%s", sqlite3_errmsg(j->j_db));
			return (-1);
		}
	}
	return (0);
}

/* Finalize the statements and close the connection; nothing is committed. */
static void
journal_free(struct journal *j)
{
	int	 s;

	journal_ckpt_stop(j);
	for (s = 0; s < JS_NSTMTS; s++)
		sqlite3_finalize(j->j_stmt[s]);
	sqlite3_close_v2(j->j_db);
	/* Only now: closing it drops this process's POSIX locks too. */
	if (j->j_lockfd != -1)
		close(j->j_lockfd);
	journal_execs_clear(j);
	for (s = 0; s < (int)j->j_neb; s++) {
		free(j->j_eb[s].eb_buf);
		free(j->j_eb[s].eb_rows);
	}
	free(j->j_eb);
	for (s = 0; s < (int)j->j_nrb; s++) {
		free(j->j_rb[s].eb_buf);
		free(j->j_rb[s].eb_rows);
	}
	free(j->j_rb);
	free(j->j_path);
	free(j->j_run);
	u64map_free(&j->j_bytes);
	free(j);
}

/*
 * The process that holds a lock on the file at path, from /proc/locks
 * (Linux); 0 if none is found.  Opening the file to ask F_GETLK would not
 * do: closing any descriptor of a file drops every lock this process holds
 * on it, SQLite's included.
 */
static long
journal_lock_holder(const char *path)
{
	struct stat	 st;
	FILE		*f;
	char		 line[256];
	unsigned	 maj, min;
	unsigned long	 ino;
	long		 pid, holder = 0;

	if (stat(path, &st) == -1 || (f = fopen("/proc/locks", "r")) == NULL)
		return (0);
	while (holder == 0 && fgets(line, sizeof line, f) != NULL) {
		/* "1: POSIX  ADVISORY  WRITE 5640 fe:00:10954097 0 EOF" */
		if (strstr(line, "->") != NULL || sscanf(line,
		    "%*d: %*s %*s %*s %ld %x:%x:%lu", &pid, &maj, &min,
		    &ino) != 4)
			continue;
		if (ino == (unsigned long)st.st_ino &&
		    maj == major(st.st_dev) && min == minor(st.st_dev))
			holder = pid;
	}
	fclose(f);
	return (holder);
}

/* The journal is locked: say who holds it, and what to do. */
static void
journal_locked(const char *path, char *err, size_t errlen)
{
	char	 proc[64], comm[64];
	FILE	*f;
	long	 pid;

	comm[0] = '\0';
	if ((pid = journal_lock_holder(path)) <= 0) {
		snprintf(err, errlen, "journal %s: another masterd holds it "
		    "(the file is locked); stop that masterd or give this one "
		    "its own journal", path);
		return;
	}
	snprintf(proc, sizeof proc, "/proc/%ld/comm", pid);
	if ((f = fopen(proc, "r")) != NULL) {
		if (fgets(comm, sizeof comm, f) == NULL)
			comm[0] = '\0';
		comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	if (comm[0] == '\0' || strcmp(comm, "masterd") == 0)
		snprintf(err, errlen, "journal %s: another masterd (pid %ld) "
		    "holds it (the file is locked); stop that masterd or give "
		    "this one its own journal", path, pid);
	else
		snprintf(err, errlen, "journal %s: %s (pid %ld) holds it (the "
		    "file is locked); a journal belongs to one masterd alone",
		    path, comm, pid);
}

/*
 * Open (creating if missing) the journal at path.  On failure return NULL
 * with a message naming the path in err.
 */
struct journal *
journal_open(const char *path, char *err, size_t errlen)
{
	struct journal	*j;
	int		 busy, corrupt;

	if (errlen > 0)
		err[0] = '\0';
	if ((j = calloc(1, sizeof *j)) == NULL ||
	    (j->j_path = strdup(path)) == NULL) {
		snprintf(err, errlen, "journal %s: %s", path, strerror(errno));
		free(j);
		return (NULL);
	}
	j->j_lockfd = -1;
	if (journal_create(j) == -1 ||
	    journal_connect(j) == -1 ||
	    journal_check(j) == -1 ||
	    journal_schema(j) == -1 ||
	    journal_exec(j, journal_tokens_sql) == -1 ||
	    journal_prepare(j) == -1 ||
	    journal_bytes_recount(j) == -1 ||
	    (journal_ckpt_thread && journal_ckpt_start(j) == -1)) {
		busy = j->j_busy || (j->j_db != NULL &&
		    (sqlite3_errcode(j->j_db) & 0xff) == SQLITE_BUSY);
		corrupt = j->j_db != NULL &&
		    (sqlite3_errcode(j->j_db) & 0xff) == SQLITE_CORRUPT;
		snprintf(err, errlen, "%s%s", j->j_err, corrupt ?
		    ": the file is damaged; move it aside to start afresh, or "
		    "recover it with sqlite3's .recover" : "");
		journal_free(j);
		if (busy)
			journal_locked(path, err, errlen);
		return (NULL);
	}
	return (j);
}

/*
 * Commit what is pending and close.  A failed commit cannot be reported
 * here: call journal_commit() first to know.
 */
void
journal_close(struct journal *j)
{
	if (j == NULL)
		return;
	(void)journal_commit(j);
	journal_free(j);
}

/* The message of the last failure, kept until the next one; "" if none. */
const char *
journal_error(const struct journal *j)
{
	return (j->j_err);
}

/* The file's path, as given to journal_open(). */
const char *
journal_path(const struct journal *j)
{
	return (j->j_path);
}

/* Read a meta value: 0 found, 1 missing, -1 error. */
int
journal_meta_get(struct journal *j, const char *key, uint64_t *val)
{
	sqlite3_stmt	*st = j->j_stmt[JS_META_GET];
	int		 r;

	if (sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC) != SQLITE_OK) {
		journal_fail(j, "reading meta");
		journal_reset(j, JS_META_GET);
		return (-1);
	}
	if ((r = journal_next(j, JS_META_GET, "reading meta")) != 1)
		return (r == 0 ? 1 : -1);
	*val = journal_u64(sqlite3_column_int64(st, 0));
	journal_reset(j, JS_META_GET);
	return (0);
}

/* Set a meta value. */
int
journal_meta_set(struct journal *j, const char *key, uint64_t val)
{
	sqlite3_stmt	*st = j->j_stmt[JS_META_SET];
	int		 rc;

	if (journal_begin(j) == -1)
		return (-1);
	rc = sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	journal_bind_u64(st, 2, val, &rc);
	return (journal_run(j, JS_META_SET, rc, "writing meta"));
}

/* Insert or replace a job's whole row. */
int
journal_job_put(struct journal *j, const struct journal_job *job)
{
	sqlite3_stmt	*st = j->j_stmt[JS_JOB_PUT];
	int		 rc = SQLITE_OK;

	if (journal_begin(j) == -1)
		return (-1);
	journal_bind_u64(st, 1, job->id, &rc);
	journal_bind_blob(st, 2, job->params, job->paramslen, &rc);
	journal_bind_text(st, 3, job->state, sizeof job->state, &rc);
	journal_bind_u64(st, 4, job->submitted_ns, &rc);
	journal_bind_u64(st, 5, job->ended_ns, &rc);
	journal_bind_u64(st, 6, job->gen, &rc);
	journal_bind_u64(st, 7, job->first_task, &rc);
	journal_bind_text(st, 8, job->error, sizeof job->error, &rc);
	journal_bind_blob(st, 9, job->extra, job->extralen, &rc);
	journal_bind_text(st, 10, job->driver, sizeof job->driver, &rc);
	return (journal_run(j, JS_JOB_PUT, rc, "writing job"));
}

/*
 * Delete a job with its results, reports, spans, tasks and batches, all or
 * nothing.
 */
int
journal_job_delete(struct journal *j, uint64_t id)
{
	static const enum journal_stmt	 ss[] = {
		JS_OUTPUTS_DROP, JS_RESULTS_DROP, JS_GENS_DROP, JS_SPANS_DROP,
		JS_TASKS_DROP, JS_BATCHES_DROP, JS_JOB_DELETE
	};

	if (journal_group(j, ss, sizeof ss / sizeof ss[0], id,
	    "deleting job", NULL) == -1)
		return (-1);
	journal_bytes_set(j, id, 0);
	return (0);
}

/*
 * Step an insert whose primary key refuses a second row for the same task
 * (what: "result", "task"): that is reported as a duplicate, and the
 * pending transaction is kept.
 */
static int
journal_insert(struct journal *j, enum journal_stmt s, int rc,
    const char *what, uint64_t job, uint32_t gen, uint32_t idx)
{
	char	 writing[32];

	if (rc == SQLITE_OK)
		rc = sqlite3_step(j->j_stmt[s]);
	if ((rc & 0xff) == SQLITE_CONSTRAINT) {
		journal_reset(j, s);
		journal_set(j, "duplicate %s (job %" PRIu64 ", gen %" PRIu32
		    ", idx %" PRIu32 ")", what, job, gen, idx);
		return (-1);
	}
	if (rc != SQLITE_DONE) {
		snprintf(writing, sizeof writing, "writing %s", what);
		journal_wfail(j, writing);
		journal_reset(j, s);
		return (-1);
	}
	journal_reset(j, s);
	return (0);
}

/*
 * Add a task's end, its output or its failure: packed in memory, written
 * at the commit with the loop pass's other results (one row of results
 * for many).  An output larger than JOURNAL_INLINE_MAX is written to
 * outputs now, under its job, and the result names its row.  Nothing
 * refuses a second result for the same task here: masterd takes only the
 * first of a task's copies (sched), and journal_load_results() gives the
 * first journaled if ever there were two.
 */
int
journal_result_add(struct journal *j, const struct journal_result *r)
{
	struct journal_execbuf	*eb;
	sqlite3_stmt		*st = j->j_stmt[JS_OUTPUT_ADD];
	uint64_t		 outid = 0;
	int			 rc = SQLITE_OK;

	if (journal_begin(j) == -1)
		return (-1);
	if (r->output != NULL && r->outlen > JOURNAL_INLINE_MAX) {
		journal_bind_u64(st, 1, r->job, &rc);
		journal_bind_blob(st, 2, r->output, r->outlen, &rc);
		if (journal_run(j, JS_OUTPUT_ADD, rc, "writing output") == -1)
			return (-1);
		outid = (uint64_t)sqlite3_last_insert_rowid(j->j_db);
		journal_bytes_add(j, r->job, r->outlen);
	}
	if ((eb = journal_execbuf(&j->j_rb, &j->j_nrb, r->job)) == NULL ||
	    journal_result_put(eb, r, outid) == -1) {
		/* Not kept: the journal must not go on as if it were. */
		journal_set(j, "writing result: out of memory");
		j->j_failed = SQLITE_NOMEM;
		j->j_nfailed++;
		return (-1);
	}
	return (0);
}

/*
 * Add n tasks of one batch job's batch with consecutive indices (t[0]'s
 * job and gen; idx t[0].idx ..), as one run.  The primary key refuses a
 * second run starting at the same (gen, idx); the pending transaction is
 * kept.
 */
int
journal_tasks_add(struct journal *j, const struct journal_task *t, size_t n)
{
	sqlite3_stmt	*st = j->j_stmt[JS_TASK_ADD];
	uint8_t		*p;
	size_t		 i, len = 0, cap;
	int		 rc = SQLITE_OK;

	if (n == 0)
		return (0);
	for (i = 0; i < n; i++) {
		if (t[i].job != t[0].job || t[i].gen != t[0].gen ||
		    t[i].idx != t[0].idx + i || t[i].len > UINT32_MAX) {
			journal_set(j, "tasks of a run must follow each other");
			return (-1);
		}
		len += JOURNAL_RUN_HEAD + t[i].len;
	}
	if (len > j->j_runcap) {
		for (cap = j->j_runcap ? j->j_runcap : 4096; cap < len; cap *= 2)
			;
		if ((p = realloc(j->j_run, cap)) == NULL) {
			journal_set(j, "out of memory");
			return (-1);
		}
		j->j_run = p;
		j->j_runcap = cap;
	}
	for (i = 0, p = j->j_run; i < n; i++) {
		le64_put(p, t[i].key);
		le32_put(p + 8, (uint32_t)t[i].priority);
		le32_put(p + 12, t[i].copies);
		le32_put(p + 16, (uint32_t)t[i].len);
		if (t[i].len > 0)
			memcpy(p + JOURNAL_RUN_HEAD, t[i].payload, t[i].len);
		p += JOURNAL_RUN_HEAD + t[i].len;
	}
	if (journal_begin(j) == -1)
		return (-1);
	journal_bind_u64(st, 1, t[0].job, &rc);
	journal_bind_u64(st, 2, t[0].gen, &rc);
	journal_bind_u64(st, 3, t[0].idx, &rc);
	journal_bind_u64(st, 4, n, &rc);
	journal_bind_blob(st, 5, j->j_run, len, &rc);
	if (journal_insert(j, JS_TASK_ADD, rc, "task", t[0].job, t[0].gen,
	    t[0].idx) == -1)
		return (-1);
	journal_bytes_add(j, t[0].job, len - JOURNAL_RUN_HEAD * n);
	return (0);
}

/* Add one batch job's task: a run of one. */
int
journal_task_add(struct journal *j, const struct journal_task *t)
{
	return (journal_tasks_add(j, t, 1));
}

/* Insert or replace a batch job's batch. */
int
journal_batch_put(struct journal *j, const struct journal_batch *b)
{
	sqlite3_stmt	*st = j->j_stmt[JS_BATCH_PUT];
	int		 rc = SQLITE_OK;

	if (journal_begin(j) == -1)
		return (-1);
	journal_bind_u64(st, 1, b->job, &rc);
	journal_bind_u64(st, 2, b->gen, &rc);
	journal_bind_u64(st, 3, b->client, &rc);
	journal_bind_str(st, 4, b->kind, &rc);
	journal_bind_u64(st, 5, b->closed, &rc);
	return (journal_run(j, JS_BATCH_PUT, rc, "writing batch"));
}

/*
 * Forget a finished job's results, large outputs included; they are only
 * needed to resume.
 */
int
journal_results_drop(struct journal *j, uint64_t job)
{
	static const enum journal_stmt	 ss[] = {
		JS_OUTPUTS_DROP, JS_RESULTS_DROP
	};

	if (journal_group(j, ss, sizeof ss / sizeof ss[0], job,
	    "dropping results", NULL) == -1)
		return (-1);
	return (journal_bytes_job(j, job));
}

/* Insert or replace a generation's report. */
int
journal_gen_put(struct journal *j, uint64_t job, uint32_t gen,
    const void *blob, size_t len)
{
	sqlite3_stmt	*st = j->j_stmt[JS_GEN_PUT];
	int		 rc = SQLITE_OK;

	if (journal_begin(j) == -1)
		return (-1);
	journal_bind_u64(st, 1, job, &rc);
	journal_bind_u64(st, 2, gen, &rc);
	journal_bind_blob(st, 3, blob, len, &rc);
	return (journal_run(j, JS_GEN_PUT, rc, "writing generation"));
}

/* An unsigned LEB128 varint at p; the byte after it. */
static uint8_t *
journal_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return (p);
}

/* Read a varint at *pp, before end: -1 if it runs past end. */
static int
journal_unvarint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t	*p = *pp;
	unsigned	 shift = 0;

	*v = 0;
	while (p < end && shift < 64) {
		*v |= (uint64_t)(*p & 0x7f) << shift;
		if ((*p++ & 0x80) == 0) {
			*pp = p;
			return (0);
		}
		shift += 7;
	}
	return (-1);
}

/* a - b, wrapping, as a zigzag varint value (small either way). */
static uint64_t
journal_zigzag(uint64_t a, uint64_t b)
{
	uint64_t	 d = a - b;

	return ((d << 1) ^ (0 - (d >> 63)));
}

/* The inverse: b + the difference. */
static uint64_t
journal_unzigzag(uint64_t b, uint64_t z)
{
	return (b + ((z >> 1) ^ (0 - (z & 1))));
}

/*
 * Make room in eb for an entry of up to need bytes, in its open row or a
 * new one (the row is full at max bytes or 64 entries): 1 if a new row
 * was opened, 0 if not, -1 out of memory.
 */
static int
journal_row_room(struct journal_execbuf *eb, size_t need, size_t max)
{
	uint8_t		*p, *nb;
	size_t		 cap;

	if (eb->eb_len + need > eb->eb_cap) {
		for (cap = eb->eb_cap ? eb->eb_cap : 4096;
		    cap < eb->eb_len + need; cap *= 2)
			;
		if ((nb = realloc(eb->eb_buf, cap)) == NULL)
			return (-1);
		eb->eb_buf = nb;
		eb->eb_cap = cap;
	}
	if (eb->eb_nrows > 0 &&
	    eb->eb_len - eb->eb_rows[eb->eb_nrows - 1].off < max &&
	    eb->eb_rows[eb->eb_nrows - 1].n < 64)
		return (0);
	if (eb->eb_nrows == eb->eb_rowcap) {
		cap = eb->eb_rowcap ? eb->eb_rowcap * 2 : 16;
		if ((p = reallocarray(eb->eb_rows, cap,
		    sizeof(*eb->eb_rows))) == NULL)
			return (-1);
		eb->eb_rows = (void *)p;
		eb->eb_rowcap = cap;
	}
	eb->eb_rows[eb->eb_nrows].off = eb->eb_len;
	eb->eb_rows[eb->eb_nrows].n = 0;
	eb->eb_nrows++;
	return (1);
}

/*
 * Pack one execution into eb, in its open row or a new one (the row is
 * full at JOURNAL_EXEC_ROW bytes or 64 executions).  -1 out of memory.
 */
static int
journal_exec_put(struct journal_execbuf *eb, const struct journal_span *sp)
{
	uint8_t		*p;
	size_t		 len, i;
	uint32_t	 h;
	int		 known, r;

	if ((r = journal_row_room(eb, JOURNAL_EXEC_MAX,
	    JOURNAL_EXEC_ROW)) == -1)
		return (-1);
	if (r == 1) {
		eb->eb_prev = 0;
		eb->eb_nnames = 0;
		for (i = 0; i < JOURNAL_EXEC_NAMES; i++)
			eb->eb_names[i].k = 0;
	}
	p = eb->eb_buf + eb->eb_len;
	p = journal_varint(p, sp->gen);
	p = journal_varint(p, sp->idx);
	p = journal_varint(p, sp->task);
	/* The worker: a name seen in this row, or a new one (FNV-1a). */
	len = strnlen(sp->worker, sizeof sp->worker);
	for (h = 2166136261u, i = 0; i < len; i++)
		h = (h ^ (uint8_t)sp->worker[i]) * 16777619u;
	h %= JOURNAL_EXEC_NAMES;
	known = eb->eb_names[h].k != 0 && eb->eb_names[h].len == len &&
	    memcmp(eb->eb_buf + eb->eb_names[h].off, sp->worker, len) == 0;
	if (known)
		p = journal_varint(p, eb->eb_names[h].k);
	else {
		p = journal_varint(p, 0);
		p = journal_varint(p, len);
		eb->eb_names[h].off = (size_t)(p - eb->eb_buf);
		eb->eb_names[h].len = (uint32_t)len;
		eb->eb_names[h].k = ++eb->eb_nnames;
		memcpy(p, sp->worker, len);
		p += len;
	}
	p = journal_varint(p, sp->slot);
	p = journal_varint(p, journal_zigzag(sp->start_ns, eb->eb_prev));
	p = journal_varint(p, journal_zigzag(sp->end_ns, sp->start_ns));
	p = journal_varint(p, sp->outcome);
	p = journal_varint(p, sp->replica);
	eb->eb_prev = sp->start_ns;
	eb->eb_len = (size_t)(p - eb->eb_buf);
	eb->eb_rows[eb->eb_nrows - 1].n++;
	return (0);
}

/*
 * Pack one result into eb (schema version 4): varints gen, idx, status,
 * seq, the error's length and its bytes, then o: the output inline (o =
 * 2 x its length, its bytes following) or a row of outputs (o = 2 x
 * outid + 1, outid > 0).  Rows hold about JOURNAL_RES_ROW bytes or 64
 * results.  -1 out of memory.
 */
static int
journal_result_put(struct journal_execbuf *eb,
    const struct journal_result *r, uint64_t outid)
{
	uint8_t		*p;
	size_t		 errlen, outlen;

	errlen = r->error != NULL ? strlen(r->error) : 0;
	outlen = outid == 0 && r->output != NULL ? r->outlen : 0;
	if (journal_row_room(eb, 6 * 10 + errlen + outlen,
	    JOURNAL_RES_ROW) == -1)
		return (-1);
	p = eb->eb_buf + eb->eb_len;
	p = journal_varint(p, r->gen);
	p = journal_varint(p, r->idx);
	p = journal_varint(p, r->status);
	p = journal_varint(p, r->seq);
	p = journal_varint(p, errlen);
	if (errlen > 0)
		memcpy(p, r->error, errlen);
	p += errlen;
	if (outid != 0)
		p = journal_varint(p, outid * 2 + 1);
	else {
		p = journal_varint(p, (uint64_t)outlen * 2);
		if (outlen > 0)
			memcpy(p, r->output, outlen);
		p += outlen;
	}
	eb->eb_len = (size_t)(p - eb->eb_buf);
	eb->eb_rows[eb->eb_nrows - 1].n++;
	return (0);
}

/*
 * Insert eb's rows with ins (JS_SPAN_ADD's SQL), numbered from
 * eb->eb_next, and empty it.  SQLite's code: SQLITE_DONE when all went in.
 */
static int
journal_execbuf_write(struct journal_execbuf *eb, sqlite3_stmt *ins)
{
	size_t	 i, end;
	int	 rc = SQLITE_DONE;

	for (i = 0; i < eb->eb_nrows && rc == SQLITE_DONE; i++) {
		end = i + 1 < eb->eb_nrows ? eb->eb_rows[i + 1].off :
		    eb->eb_len;
		rc = SQLITE_OK;
		journal_bind_u64(ins, 1, eb->eb_job, &rc);
		journal_bind_u64(ins, 2, eb->eb_next, &rc);
		journal_bind_u64(ins, 3, eb->eb_rows[i].n, &rc);
		journal_bind_blob(ins, 4, eb->eb_buf + eb->eb_rows[i].off,
		    end - eb->eb_rows[i].off, &rc);
		if (rc == SQLITE_OK)
			rc = sqlite3_step(ins);
		sqlite3_reset(ins);
		sqlite3_clear_bindings(ins);
		eb->eb_next++;
	}
	eb->eb_len = 0;
	eb->eb_nrows = 0;
	return (rc);
}

/*
 * Write the rows of bufs (executions or results, a job's each) journaled
 * since the last commit, in the pending transaction, with add; a job's
 * next row number (next) is read once, when it is first needed.
 */
static int
journal_bufs_flush(struct journal *j, struct journal_execbuf *bufs,
    size_t n, enum journal_stmt next, enum journal_stmt add,
    const char *what)
{
	struct journal_execbuf	*eb;
	sqlite3_stmt		*st = j->j_stmt[next];
	size_t			 i;
	int			 r, rc;

	for (i = 0; i < n; i++) {
		eb = &bufs[i];
		if (eb->eb_nrows == 0)
			continue;
		if (eb->eb_next == UINT64_MAX) {
			rc = SQLITE_OK;
			journal_bind_u64(st, 1, eb->eb_job, &rc);
			if (rc != SQLITE_OK || (r = journal_next(j, next,
			    what)) != 1) {
				if (rc != SQLITE_OK || r == 0)
					journal_set(j, "%s: no next row",
					    what);
				journal_reset(j, next);
				j->j_failed = SQLITE_ERROR;
				j->j_nfailed++;
				return (-1);
			}
			eb->eb_next = journal_u64(sqlite3_column_int64(st,
			    0));
			journal_reset(j, next);
		}
		if (add == JS_RESULT_ADD)
			journal_bytes_add(j, eb->eb_job, eb->eb_len);
		if (journal_execbuf_write(eb, j->j_stmt[add]) !=
		    SQLITE_DONE) {
			journal_wfail(j, what);
			return (-1);
		}
	}
	return (0);
}

/* Write what the loop pass packed: its executions, then its results. */
static int
journal_execs_flush(struct journal *j)
{
	if (journal_bufs_flush(j, j->j_eb, j->j_neb, JS_EXEC_NEXT,
	    JS_SPAN_ADD, "writing spans") == -1)
		return (-1);
	return (journal_bufs_flush(j, j->j_rb, j->j_nrb, JS_RESULT_NEXT,
	    JS_RESULT_ADD, "writing results"));
}

/* Forget the executions and results not written yet (a rollback). */
static void
journal_execs_clear(struct journal *j)
{
	size_t	 i;

	for (i = 0; i < j->j_neb; i++) {
		j->j_eb[i].eb_len = 0;
		j->j_eb[i].eb_nrows = 0;
	}
	for (i = 0; i < j->j_nrb; i++) {
		j->j_rb[i].eb_len = 0;
		j->j_rb[i].eb_nrows = 0;
	}
}

/* The buffer of job's rows in *bufs, made or taken over if need be. */
static struct journal_execbuf *
journal_execbuf(struct journal_execbuf **bufs, size_t *n, uint64_t job)
{
	struct journal_execbuf	*eb, *free_eb = NULL;
	size_t			 i;

	for (i = 0; i < *n; i++) {
		eb = &(*bufs)[i];
		if (eb->eb_job == job)
			return (eb);
		if (eb->eb_nrows == 0 && free_eb == NULL)
			free_eb = eb;
	}
	if (free_eb == NULL) {
		eb = reallocarray(*bufs, *n + 1, sizeof(*eb));
		if (eb == NULL)
			return (NULL);
		*bufs = eb;
		free_eb = &(*bufs)[(*n)++];
		memset(free_eb, 0, sizeof(*free_eb));
	}
	free_eb->eb_job = job;
	free_eb->eb_next = UINT64_MAX;
	free_eb->eb_len = 0;
	free_eb->eb_nrows = 0;
	return (free_eb);
}

/*
 * Add one task execution: packed in memory, written at the commit (by
 * journal_execs_flush()) with whatever else the loop pass journaled.
 */
int
journal_span_add(struct journal *j, const struct journal_span *sp)
{
	struct journal_execbuf	*eb;

	if (journal_begin(j) == -1)
		return (-1);
	if ((eb = journal_execbuf(&j->j_eb, &j->j_neb, sp->job)) == NULL ||
	    journal_exec_put(eb, sp) == -1) {
		journal_set(j, "writing span: out of memory");
		return (-1);
	}
	return (0);
}

/* journal_commit() under masterd -T journal: its rows and its time. */
static int
journal_commit_traced(struct journal *j)
{
	struct timespec	 t0, t1;
	int		 changes = sqlite3_total_changes(j->j_db) - j->j_changes;
	int		 rc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = journal_run(j, JS_COMMIT, SQLITE_OK, "commit");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	j->j_changes = sqlite3_total_changes(j->j_db);
	log_trace(TRACE_JOURNAL, "commit of %d rows in %lld us%s", changes,
	    (long long)((t1.tv_sec - t0.tv_sec) * 1000000 +
	    (t1.tv_nsec - t0.tv_nsec) / 1000), rc == -1 ? ", failed" : "");
	if (rc == 0)
		j->j_pending = 0;
	return (rc);
}

/*
 * End the pending transaction, if any.  After a failed write it is
 * refused: only journal_rollback() ends that transaction.
 */
int
journal_commit(struct journal *j)
{
	if (j->j_failed)
		return (journal_refused(j));
	if (journal_execs_flush(j) == -1)
		return (-1);
	if (sqlite3_get_autocommit(j->j_db)) {
		j->j_pending = 0;
		return (0);
	}
	if (log_tracing & TRACE_JOURNAL) {
		if (journal_commit_traced(j) == -1)
			return (-1);
	} else {
		if (journal_run(j, JS_COMMIT, SQLITE_OK, "commit") == -1)
			return (-1);
		j->j_pending = 0;
	}
	j->j_ncommits++;
	if (j->j_walframes >= j->j_restart)
		journal_wal_restart(j);
	return (0);
}

/*
 * Forget whatever is pending since the last commit, after a failed write
 * or commit, and take writes again.  -1 if even the rollback fails (the
 * journal still refuses writes; try again later).
 */
int
journal_rollback(struct journal *j)
{
	if (!sqlite3_get_autocommit(j->j_db) &&
	    sqlite3_exec(j->j_db, "ROLLBACK", NULL, NULL, NULL) != SQLITE_OK) {
		journal_set(j, "rollback: %s", sqlite3_errmsg(j->j_db));
		if (j->j_failed == 0)
			j->j_failed = SQLITE_ERROR;
		return (-1);
	}
	journal_execs_clear(j);
	j->j_pending = 0;
	j->j_failed = 0;
	/* What was counted of the writes undone. */
	if (journal_bytes_recount(j) == -1)
		log_debug("%s", j->j_err);
	return (0);
}

/*
 * Can the journal be written again?  One small transaction that rewrites
 * the schema version (the same value: a page written, nothing changed),
 * committed.  Nothing may be pending.  On failure the journal refuses
 * writes until journal_rollback(), as after any failed write.
 */
int
journal_probe(struct journal *j)
{
	if (j->j_failed)
		return (journal_refused(j));
	if (!sqlite3_get_autocommit(j->j_db)) {
		journal_set(j, "probe: a transaction is pending");
		return (-1);
	}
	if (journal_begin(j) == -1)
		return (-1);
	if (sqlite3_exec(j->j_db, "PRAGMA user_version = "
	    JOURNAL_XSTR(JOURNAL_VERSION), NULL, NULL, NULL) != SQLITE_OK) {
		journal_wfail(j, "probe");
		return (-1);
	}
	return (journal_commit(j));
}

/* SQLite's code of the write that failed, 0 if writes are taken. */
int
journal_failed(const struct journal *j)
{
	return (j->j_failed);
}

/* Is a transaction open: anything written and not yet committed? */
int
journal_pending(const struct journal *j)
{
	return (j->j_pending);
}

/* SQLite's words for a code journal_failed() gave. */
const char *
journal_errstr(int code)
{
	return (sqlite3_errstr(code));
}

/* Does that code say the disk (or a quota) is full? */
int
journal_is_full(int code)
{
	return ((code & 0xff) == SQLITE_FULL);
}

/* How many writes and commits failed since the journal was opened. */
uint64_t
journal_failures(const struct journal *j)
{
	return (j->j_nfailed);
}

/* Transactions committed since the journal was opened. */
uint64_t
journal_commits(const struct journal *j)
{
	return (j->j_ncommits);
}

/*
 * Delete the jobs that ended before before_ns (not running, ended_ns set)
 * with all their rows, tasks and batches included; *njobs is how many.
 */
int
journal_prune(struct journal *j, uint64_t before_ns, size_t *njobs)
{
	static const enum journal_stmt	 ss[] = {
		JS_PRUNE_OUTPUTS, JS_PRUNE_RESULTS, JS_PRUNE_GENS,
		JS_PRUNE_SPANS, JS_PRUNE_TASKS, JS_PRUNE_BATCHES,
		JS_PRUNE_JOBS
	};
	size_t				 n = 0;

	if (journal_group(j, ss, sizeof ss / sizeof ss[0], before_ns,
	    "pruning", &n) == -1)
		return (-1);
	if (njobs != NULL)
		*njobs = n;
	return (n > 0 ? journal_bytes_recount(j) : 0);
}

/* Call cb for every job, in id order. */
int
journal_load_jobs(struct journal *j,
    int (*cb)(void *, const struct journal_job *), void *arg)
{
	const char		*what = "loading jobs";
	sqlite3_stmt		*st;
	struct journal_job	 job;
	int			 r;

	if ((st = journal_query(j, JS_LOAD_JOBS, 0, what)) == NULL)
		return (-1);
	while ((r = journal_next(j, JS_LOAD_JOBS, what)) == 1) {
		memset(&job, 0, sizeof job);
		job.id = journal_u64(sqlite3_column_int64(st, 0));
		job.params = sqlite3_column_blob(st, 1);
		job.paramslen = (size_t)sqlite3_column_bytes(st, 1);
		journal_column_text(st, 2, job.state, sizeof job.state);
		job.submitted_ns = journal_u64(sqlite3_column_int64(st, 3));
		job.ended_ns = journal_u64(sqlite3_column_int64(st, 4));
		job.gen = (uint32_t)sqlite3_column_int64(st, 5);
		job.first_task = journal_u64(sqlite3_column_int64(st, 6));
		journal_column_text(st, 7, job.error, sizeof job.error);
		job.extra = sqlite3_column_blob(st, 8);
		job.extralen = (size_t)sqlite3_column_bytes(st, 8);
		journal_column_text(st, 9, job.driver, sizeof job.driver);
		if (job.params == NULL)
			job.paramslen = 0;
		if (job.extra == NULL)
			job.extralen = 0;
		if (cb(arg, &job) != 0)
			return (journal_stop(j, JS_LOAD_JOBS, what));
	}
	return (r);
}

/* A result being loaded: offsets into the rows read (journal_lrs). */
struct journal_lr {
	uint32_t	 gen;
	uint32_t	 idx;
	uint32_t	 status;
	uint64_t	 seq;
	size_t		 err;		/* offset of the error, errlen */
	size_t		 errlen;
	size_t		 out;		/* offset of an inline output */
	size_t		 outlen;
	uint64_t	 outid;		/* > 0: a row of outputs */
	size_t		 order;		/* as journaled */
};

struct journal_lrs {
	struct journal_lr *v;
	size_t		 n;
	size_t		 cap;
	uint8_t		*buf;		/* the rows' bytes */
	size_t		 len;
	size_t		 bufcap;
	size_t		 maxerr;
};

/*
 * Unpack a row of n results of job (see journal_result_put()) onto lr,
 * its bytes copied.  -1 if it is damaged (a message set) or memory runs
 * out.
 */
static int
journal_result_get(struct journal *j, uint64_t job, const uint8_t *row,
    size_t len, uint64_t n, struct journal_lrs *lr)
{
	const uint8_t		*p, *end;
	struct journal_lr	*l;
	uint64_t		 i, v[6];
	size_t			 cap, base;
	uint8_t			*nb;

	/* An empty row (no blob at all: NULL) holds nothing. */
	if (len == 0) {
		if (n == 0)
			return (0);
		goto damaged;
	}
	if (lr->len + len > lr->bufcap) {
		for (cap = lr->bufcap ? lr->bufcap : 4096;
		    cap < lr->len + len; cap *= 2)
			;
		if ((nb = realloc(lr->buf, cap)) == NULL)
			goto nomem;
		lr->buf = nb;
		lr->bufcap = cap;
	}
	base = lr->len;
	if (len > 0)
		memcpy(lr->buf + base, row, len);
	lr->len += len;
	p = lr->buf + base;
	end = p + len;
	for (i = 0; i < n; i++) {
		if (lr->n == lr->cap) {
			cap = lr->cap ? lr->cap * 2 : 256;
			if ((l = reallocarray(lr->v, cap, sizeof(*l))) == NULL)
				goto nomem;
			lr->v = l;
			lr->cap = cap;
		}
		l = &lr->v[lr->n];
		memset(l, 0, sizeof(*l));
		if (journal_unvarint(&p, end, &v[0]) == -1 ||
		    journal_unvarint(&p, end, &v[1]) == -1 ||
		    journal_unvarint(&p, end, &v[2]) == -1 ||
		    journal_unvarint(&p, end, &v[3]) == -1 ||
		    journal_unvarint(&p, end, &v[4]) == -1 ||
		    v[0] > UINT32_MAX || v[1] > UINT32_MAX ||
		    v[2] > UINT32_MAX || v[4] > (uint64_t)(end - p))
			goto damaged;
		l->gen = (uint32_t)v[0];
		l->idx = (uint32_t)v[1];
		l->status = (uint32_t)v[2];
		l->seq = v[3];
		l->err = (size_t)(p - lr->buf);
		l->errlen = (size_t)v[4];
		p += v[4];
		if (journal_unvarint(&p, end, &v[5]) == -1)
			goto damaged;
		if (v[5] & 1) {
			if ((l->outid = v[5] >> 1) == 0)
				goto damaged;
		} else {
			if ((v[5] >> 1) > (uint64_t)(end - p))
				goto damaged;
			l->out = (size_t)(p - lr->buf);
			l->outlen = (size_t)(v[5] >> 1);
			p += l->outlen;
		}
		if (l->errlen > lr->maxerr)
			lr->maxerr = l->errlen;
		l->order = lr->n++;
	}
	if (p != end)
		goto damaged;
	return (0);

nomem:
	journal_set(j, "loading results: out of memory");
	return (-1);
damaged:
	journal_set(j, "loading results: job %" PRIu64 ": a row of results "
	    "is damaged", job);
	return (-1);
}

/* (gen, idx) order, the first journaled first. */
static int
journal_lr_cmp(const void *a, const void *b)
{
	const struct journal_lr	*x = a, *y = b;

	if (x->gen != y->gen)
		return (x->gen < y->gen ? -1 : 1);
	if (x->idx != y->idx)
		return (x->idx < y->idx ? -1 : 1);
	return (x->order < y->order ? -1 : x->order > y->order);
}

/*
 * Call cb for every result of a job, in (gen, idx) order: those committed
 * and those of the pending transaction, not written yet.  If a task had
 * two, the first journaled is given.  A large output is read from outputs
 * when its turn comes; output points into memory valid only during cb.
 */
int
journal_load_results(struct journal *j, uint64_t job,
    int (*cb)(void *, const struct journal_result *), void *arg)
{
	const char		*what = "loading results";
	struct journal_lrs	 lr;
	struct journal_execbuf	*eb;
	struct journal_result	 res;
	struct journal_lr	*l;
	sqlite3_stmt		*st;
	const uint8_t		*blob;
	char			*err = NULL;
	size_t			 i, end;
	int			 r, rc;

	memset(&lr, 0, sizeof lr);
	if ((st = journal_query(j, JS_LOAD_RESULTS, job, what)) == NULL)
		return (-1);
	while ((r = journal_next(j, JS_LOAD_RESULTS, what)) == 1) {
		blob = sqlite3_column_blob(st, 1);
		if (journal_result_get(j, job, blob, blob == NULL ? 0 :
		    (size_t)sqlite3_column_bytes(st, 1),
		    (uint64_t)sqlite3_column_int64(st, 0), &lr) == -1) {
			journal_reset(j, JS_LOAD_RESULTS);
			goto fail;
		}
	}
	if (r == -1)
		goto fail;
	for (i = 0; i < j->j_nrb; i++) {
		eb = &j->j_rb[i];
		if (eb->eb_job != job)
			continue;
		for (r = 0; (size_t)r < eb->eb_nrows; r++) {
			end = (size_t)r + 1 < eb->eb_nrows ?
			    eb->eb_rows[r + 1].off : eb->eb_len;
			if (journal_result_get(j, job, eb->eb_buf +
			    eb->eb_rows[r].off, end - eb->eb_rows[r].off,
			    eb->eb_rows[r].n, &lr) == -1)
				goto fail;
		}
	}
	if (lr.n > 1)
		qsort(lr.v, lr.n, sizeof(*lr.v), journal_lr_cmp);
	if ((err = malloc(lr.maxerr + 1)) == NULL) {
		journal_set(j, "%s: out of memory", what);
		goto fail;
	}
	st = j->j_stmt[JS_OUTPUT_GET];
	for (i = 0; i < lr.n; i++) {
		l = &lr.v[i];
		if (i > 0 && l->gen == l[-1].gen && l->idx == l[-1].idx)
			continue;	/* a second one: the first counts */
		memset(&res, 0, sizeof res);
		res.job = job;
		res.gen = l->gen;
		res.idx = l->idx;
		res.status = l->status;
		res.seq = l->seq;
		memcpy(err, lr.buf + l->err, l->errlen);
		err[l->errlen] = '\0';
		res.error = err;
		if (l->outid == 0) {
			res.output = l->outlen > 0 ? lr.buf + l->out : NULL;
			res.outlen = l->outlen;
		} else {
			rc = SQLITE_OK;
			journal_bind_u64(st, 1, l->outid, &rc);
			if (rc != SQLITE_OK || (r = journal_next(j,
			    JS_OUTPUT_GET, what)) != 1) {
				journal_reset(j, JS_OUTPUT_GET);
				if (rc == SQLITE_OK && r == -1)
					goto fail;
				journal_set(j, "%s: the output of (job %"
				    PRIu64 ", gen %" PRIu32 ", idx %" PRIu32
				    ") is missing", what, job, res.gen,
				    res.idx);
				goto fail;
			}
			res.output = sqlite3_column_blob(st, 0);
			res.outlen = res.output != NULL ?
			    (size_t)sqlite3_column_bytes(st, 0) : 0;
		}
		rc = cb(arg, &res);
		if (l->outid != 0)
			journal_reset(j, JS_OUTPUT_GET);
		if (rc != 0) {
			journal_set(j, "%s: stopped by caller", what);
			goto fail;
		}
	}
	free(err);
	free(lr.v);
	free(lr.buf);
	return (0);

fail:
	free(err);
	free(lr.v);
	free(lr.buf);
	return (-1);
}

/*
 * Call cb for every task of a batch job, in (gen, idx) order.  An empty
 * payload loads as NULL, length 0.
 */
int
journal_load_tasks(struct journal *j, uint64_t job,
    int (*cb)(void *, const struct journal_task *), void *arg)
{
	const char		*what = "loading tasks";
	sqlite3_stmt		*st;
	struct journal_task	 t;
	const uint8_t		*p;
	uint64_t		 n, i;
	size_t			 left;
	uint32_t		 idx;
	int			 r;

	if ((st = journal_query(j, JS_LOAD_TASKS, job, what)) == NULL)
		return (-1);
	while ((r = journal_next(j, JS_LOAD_TASKS, what)) == 1) {
		memset(&t, 0, sizeof t);
		t.job = job;
		t.gen = (uint32_t)sqlite3_column_int64(st, 0);
		idx = (uint32_t)sqlite3_column_int64(st, 1);
		n = (uint64_t)sqlite3_column_int64(st, 2);
		p = sqlite3_column_blob(st, 3);
		left = p != NULL ? (size_t)sqlite3_column_bytes(st, 3) : 0;
		for (i = 0; i < n; i++) {
			if (left < JOURNAL_RUN_HEAD ||
			    left - JOURNAL_RUN_HEAD <
			    le32_get(p + 16)) {
				journal_set(j, "%s: job %" PRIu64 ": the tasks "
				    "of batch %" PRIu32 " from %" PRIu32 " are "
				    "damaged", j->j_path, job, t.gen, idx);
				journal_reset(j, JS_LOAD_TASKS);
				return (-1);
			}
			t.idx = idx + (uint32_t)i;
			t.key = le64_get(p);
			t.priority = (int32_t)le32_get(p + 8);
			t.copies = le32_get(p + 12);
			t.len = le32_get(p + 16);
			t.payload = t.len > 0 ? p + JOURNAL_RUN_HEAD : NULL;
			p += JOURNAL_RUN_HEAD + t.len;
			left -= JOURNAL_RUN_HEAD + t.len;
			if (cb(arg, &t) != 0)
				return (journal_stop(j, JS_LOAD_TASKS, what));
		}
	}
	return (r);
}

/* Call cb for every batch of a batch job, in gen order. */
int
journal_load_batches(struct journal *j, uint64_t job,
    int (*cb)(void *, const struct journal_batch *), void *arg)
{
	const char		*what = "loading batches";
	sqlite3_stmt		*st;
	struct journal_batch	 b;
	int			 r;

	if ((st = journal_query(j, JS_LOAD_BATCHES, job, what)) == NULL)
		return (-1);
	while ((r = journal_next(j, JS_LOAD_BATCHES, what)) == 1) {
		memset(&b, 0, sizeof b);
		b.job = job;
		b.gen = (uint32_t)sqlite3_column_int64(st, 0);
		b.client = journal_u64(sqlite3_column_int64(st, 1));
		b.kind = (const char *)sqlite3_column_text(st, 2);
		if (b.kind == NULL)
			b.kind = "";
		b.closed = (uint32_t)sqlite3_column_int64(st, 3);
		if (cb(arg, &b) != 0)
			return (journal_stop(j, JS_LOAD_BATCHES, what));
	}
	return (r);
}

/* Call cb for every generation report of a job, in gen order. */
int
journal_load_gens(struct journal *j, uint64_t job,
    int (*cb)(void *, uint32_t, const void *, size_t), void *arg)
{
	const char	*what = "loading generations";
	sqlite3_stmt	*st;
	const void	*blob;
	size_t		 len;
	int		 r;

	if ((st = journal_query(j, JS_LOAD_GENS, job, what)) == NULL)
		return (-1);
	while ((r = journal_next(j, JS_LOAD_GENS, what)) == 1) {
		blob = sqlite3_column_blob(st, 1);
		len = blob == NULL ? 0 : (size_t)sqlite3_column_bytes(st, 1);
		if (cb(arg, (uint32_t)sqlite3_column_int64(st, 0), blob,
		    len) != 0)
			return (journal_stop(j, JS_LOAD_GENS, what));
	}
	return (r);
}

/* An execution loaded, with its place in the journal for ties. */
struct journal_ld {
	struct journal_span	 sp;
	size_t			 seq;
};

/* The executions being loaded. */
struct journal_lds {
	struct journal_ld	*v;
	size_t			 n;
	size_t			 cap;
};

/*
 * Unpack a row of n executions of job (see journal_exec_put()) onto ld.
 * -1 if it is damaged (a message set) or memory runs out.
 */
static int
journal_exec_get(struct journal *j, uint64_t job, const uint8_t *p,
    size_t len, uint64_t n, struct journal_lds *ld)
{
	const uint8_t		*end, *names[64];
	size_t			 namelen[64], cap;
	struct journal_ld	*l;
	struct journal_span	*sp;
	uint64_t		 i, v[9], k, prev = 0;
	uint32_t		 nnames = 0;

	/* An empty row (no blob at all: NULL) holds nothing. */
	if (len == 0) {
		if (n == 0)
			return (0);
		goto damaged;
	}
	end = p + len;

	for (i = 0; i < n; i++) {
		if (ld->n == ld->cap) {
			cap = ld->cap ? ld->cap * 2 : 256;
			if ((l = reallocarray(ld->v, cap, sizeof(*l))) ==
			    NULL) {
				journal_set(j, "loading spans: out of memory");
				return (-1);
			}
			ld->v = l;
			ld->cap = cap;
		}
		l = &ld->v[ld->n];
		memset(l, 0, sizeof(*l));
		sp = &l->sp;
		if (journal_unvarint(&p, end, &v[0]) == -1 ||
		    journal_unvarint(&p, end, &v[1]) == -1 ||
		    journal_unvarint(&p, end, &v[2]) == -1 ||
		    journal_unvarint(&p, end, &k) == -1)
			goto damaged;
		if (k == 0) {
			if (nnames == 64 ||
			    journal_unvarint(&p, end, &v[3]) == -1 ||
			    v[3] > (uint64_t)(end - p))
				goto damaged;
			names[nnames] = p;
			namelen[nnames++] = (size_t)v[3];
			p += v[3];
			k = nnames;
		} else if (k > nnames)
			goto damaged;
		if (journal_unvarint(&p, end, &v[4]) == -1 ||
		    journal_unvarint(&p, end, &v[5]) == -1 ||
		    journal_unvarint(&p, end, &v[6]) == -1 ||
		    journal_unvarint(&p, end, &v[7]) == -1 ||
		    journal_unvarint(&p, end, &v[8]) == -1)
			goto damaged;
		sp->job = job;
		sp->gen = (uint32_t)v[0];
		sp->idx = (uint32_t)v[1];
		sp->task = v[2];
		/* As version 2 loaded a name: at most sizeof - 1 bytes. */
		len = namelen[k - 1] < sizeof sp->worker ? namelen[k - 1] :
		    sizeof sp->worker - 1;
		memcpy(sp->worker, names[k - 1], len);
		sp->worker[len] = '\0';
		sp->slot = (uint32_t)v[4];
		sp->start_ns = journal_unzigzag(prev, v[5]);
		sp->end_ns = journal_unzigzag(sp->start_ns, v[6]);
		sp->outcome = (uint32_t)v[7];
		sp->replica = (uint32_t)v[8];
		prev = sp->start_ns;
		l->seq = ld->n++;
	}
	return (0);

damaged:
	journal_set(j, "loading spans: job %" PRIu64 ": a row of executions "
	    "is damaged", job);
	return (-1);
}

/* Order executions as version 2 did: start, then task, then the journal. */
static int
journal_ld_cmp(const void *a, const void *b)
{
	const struct journal_ld	*x = a, *y = b;

	if (x->sp.start_ns != y->sp.start_ns)
		return (x->sp.start_ns < y->sp.start_ns ? -1 : 1);
	if (x->sp.task != y->sp.task)
		return (x->sp.task < y->sp.task ? -1 : 1);
	return (x->seq < y->seq ? -1 : x->seq > y->seq);
}

/*
 * Call cb for every span of a job, in (start_ns, task) order, unsigned,
 * ties in the order they were journaled: those committed and those of
 * the pending transaction, not written yet.
 */
int
journal_load_spans(struct journal *j, uint64_t job,
    int (*cb)(void *, const struct journal_span *), void *arg)
{
	const char		*what = "loading spans";
	struct journal_execbuf	*eb;
	struct journal_lds	 ld = { NULL, 0, 0 };
	sqlite3_stmt		*st;
	const uint8_t		*blob;
	size_t			 i, end;
	int			 r;

	if ((st = journal_query(j, JS_LOAD_SPANS, job, what)) == NULL)
		return (-1);
	while ((r = journal_next(j, JS_LOAD_SPANS, what)) == 1) {
		blob = sqlite3_column_blob(st, 1);
		if (journal_exec_get(j, job, blob, blob == NULL ? 0 :
		    (size_t)sqlite3_column_bytes(st, 1),
		    (uint64_t)sqlite3_column_int64(st, 0), &ld) == -1) {
			journal_reset(j, JS_LOAD_SPANS);
			free(ld.v);
			return (-1);
		}
	}
	if (r == -1) {
		free(ld.v);
		return (-1);
	}
	for (i = 0; i < j->j_neb; i++) {
		eb = &j->j_eb[i];
		if (eb->eb_job != job)
			continue;
		for (r = 0; (size_t)r < eb->eb_nrows; r++) {
			end = (size_t)r + 1 < eb->eb_nrows ?
			    eb->eb_rows[r + 1].off : eb->eb_len;
			if (journal_exec_get(j, job, eb->eb_buf +
			    eb->eb_rows[r].off, end - eb->eb_rows[r].off,
			    eb->eb_rows[r].n, &ld) == -1) {
				free(ld.v);
				return (-1);
			}
		}
	}
	if (ld.n > 1)
		qsort(ld.v, ld.n, sizeof(*ld.v), journal_ld_cmp);
	for (i = 0; i < ld.n; i++)
		if (cb(arg, &ld.v[i].sp) != 0) {
			free(ld.v);
			journal_set(j, "%s: stopped by caller", what);
			return (-1);
		}
	free(ld.v);
	return (0);
}

/* Row counts, for status and tests; any pointer may be NULL. */
int
journal_stats(struct journal *j, uint64_t *njobs, uint64_t *nresults,
    uint64_t *nspans)
{
	size_t	 i, r;

	if (journal_count(j, JS_COUNT_JOBS, njobs) == -1 ||
	    journal_count(j, JS_COUNT_RESULTS, nresults) == -1 ||
	    journal_count(j, JS_COUNT_SPANS, nspans) == -1)
		return (-1);
	/* And the executions and results not written yet. */
	if (nspans != NULL)
		for (i = 0; i < j->j_neb; i++)
			for (r = 0; r < j->j_eb[i].eb_nrows; r++)
				*nspans += j->j_eb[i].eb_rows[r].n;
	if (nresults != NULL)
		for (i = 0; i < j->j_nrb; i++)
			for (r = 0; r < j->j_rb[i].eb_nrows; r++)
				*nresults += j->j_rb[i].eb_rows[r].n;
	return (0);
}

/* Prepare one of the rarely used statements; NULL with a message. */
static sqlite3_stmt *
journal_adhoc(struct journal *j, const char *sql)
{
	sqlite3_stmt	*st;

	if (sqlite3_prepare_v2(j->j_db, sql, -1, &st, NULL) != SQLITE_OK) {
		journal_set(j, "%s", sqlite3_errmsg(j->j_db));
		return (NULL);
	}
	return (st);
}

/* Step a write prepared by journal_adhoc() and finalize it. */
static int
journal_adhoc_run(struct journal *j, sqlite3_stmt *st, int rc,
    const char *what)
{
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc != SQLITE_DONE) {
		journal_wfail(j, what);
		sqlite3_finalize(st);
		return (-1);
	}
	sqlite3_finalize(st);
	return (0);
}

/* Insert or replace a token's row. */
int
journal_token_put(struct journal *j, const struct journal_token *t)
{
	sqlite3_stmt	*st;
	int		 rc;

	if (journal_begin(j) == -1)
		return (-1);
	if ((st = journal_adhoc(j, "INSERT OR REPLACE INTO tokens (id, hash, "
	    "created, expires, uses, used, revoked) VALUES (?1, ?2, ?3, ?4, "
	    "?5, ?6, ?7)")) == NULL)
		return (-1);
	rc = sqlite3_bind_text(st, 1, t->id, -1, SQLITE_STATIC);
	journal_bind_str(st, 2, t->hash, &rc);
	journal_bind_u64(st, 3, t->created, &rc);
	journal_bind_u64(st, 4, t->expires, &rc);
	journal_bind_u64(st, 5, t->uses, &rc);
	journal_bind_u64(st, 6, t->used, &rc);
	journal_bind_u64(st, 7, (uint64_t)t->revoked, &rc);
	if (journal_adhoc_run(j, st, rc, "writing a token") == -1)
		return (-1);
	if (t->name[0] == '\0' && t->cert_lifetime == 0)
		return (0);
	if ((st = journal_adhoc(j, "INSERT OR REPLACE INTO token_grants (id, "
	    "name, cert_lifetime) VALUES (?1, ?2, ?3)")) == NULL)
		return (-1);
	rc = sqlite3_bind_text(st, 1, t->id, -1, SQLITE_STATIC);
	journal_bind_str(st, 2, t->name, &rc);
	journal_bind_u64(st, 3, t->cert_lifetime, &rc);
	return (journal_adhoc_run(j, st, rc, "writing a token"));
}

static void
journal_token_row(sqlite3_stmt *st, struct journal_token *t)
{
	memset(t, 0, sizeof(*t));
	journal_column_text(st, 0, t->id, sizeof(t->id));
	journal_column_text(st, 1, t->hash, sizeof(t->hash));
	t->created = journal_u64(sqlite3_column_int64(st, 2));
	t->expires = journal_u64(sqlite3_column_int64(st, 3));
	t->uses = (uint32_t)sqlite3_column_int64(st, 4);
	t->used = (uint32_t)sqlite3_column_int64(st, 5);
	t->revoked = sqlite3_column_int64(st, 6) != 0;
	journal_column_text(st, 7, t->name, sizeof(t->name));
	t->cert_lifetime = journal_u64(sqlite3_column_int64(st, 8));
}

#define JOURNAL_TOKEN_COLS "t.id, t.hash, t.created, t.expires, t.uses, " \
	"t.used, t.revoked, g.name, g.cert_lifetime FROM tokens t LEFT JOIN " \
	"token_grants g ON g.id = t.id"

/* Read the token id: 0 found, 1 missing, -1 error. */
int
journal_token_get(struct journal *j, const char *id, struct journal_token *t)
{
	sqlite3_stmt	*st;
	int		 rc;

	if ((st = journal_adhoc(j, "SELECT " JOURNAL_TOKEN_COLS " WHERE "
	    "t.id = ?1")) == NULL)
		return (-1);
	if (sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC) != SQLITE_OK) {
		journal_fail(j, "reading a token");
		sqlite3_finalize(st);
		return (-1);
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		journal_token_row(st, t);
	else if (rc != SQLITE_DONE)
		journal_fail(j, "reading a token");
	sqlite3_finalize(st);
	return (rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? 1 : -1);
}

/* Every token, oldest first. */
int
journal_load_tokens(struct journal *j,
    int (*cb)(void *, const struct journal_token *), void *arg)
{
	struct journal_token	 t;
	sqlite3_stmt		*st;
	int			 rc;

	if ((st = journal_adhoc(j, "SELECT " JOURNAL_TOKEN_COLS " ORDER BY "
	    "t.created, t.id")) == NULL)
		return (-1);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		journal_token_row(st, &t);
		if (cb(arg, &t) == -1) {
			sqlite3_finalize(st);
			journal_set(j, "loading tokens: stopped by caller");
			return (-1);
		}
	}
	if (rc != SQLITE_DONE)
		journal_fail(j, "loading tokens");
	sqlite3_finalize(st);
	return (rc == SQLITE_DONE ? 0 : -1);
}

/* Note a certificate issued. */
int
journal_cert_add(struct journal *j, const struct journal_cert *c)
{
	sqlite3_stmt	*st;
	int		 rc;

	if (journal_begin(j) == -1)
		return (-1);
	if ((st = journal_adhoc(j, "INSERT OR REPLACE INTO certs (serial, "
	    "name, issued, not_after, token, address) VALUES (?1, ?2, ?3, ?4, "
	    "?5, ?6)")) == NULL)
		return (-1);
	rc = sqlite3_bind_text(st, 1, c->serial, -1, SQLITE_STATIC);
	journal_bind_str(st, 2, c->name, &rc);
	journal_bind_u64(st, 3, c->issued, &rc);
	journal_bind_u64(st, 4, c->not_after, &rc);
	journal_bind_str(st, 5, c->token, &rc);
	journal_bind_str(st, 6, c->addr, &rc);
	return (journal_adhoc_run(j, st, rc, "writing a certificate"));
}

/* Every certificate issued, oldest first, then others revoked. */
int
journal_load_certs(struct journal *j,
    int (*cb)(void *, const struct journal_cert *), void *arg)
{
	struct journal_cert	 c;
	sqlite3_stmt		*st;
	int			 rc;

	/* And the revoked ones not issued here (mkcerts's), last. */
	if ((st = journal_adhoc(j, "SELECT c.serial, c.name, c.issued, "
	    "c.not_after, c.token, c.address, m.revoked, 0 AS k, c.rowid AS r "
	    "FROM certs c LEFT JOIN cert_marks m ON m.serial = c.serial "
	    "UNION ALL SELECT m.serial, m.name, 0, 0, '', '', m.revoked, 1, "
	    "m.rowid FROM cert_marks m WHERE m.revoked != 0 AND m.serial NOT "
	    "IN (SELECT serial FROM certs) ORDER BY k, 3, r")) == NULL)
		return (-1);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		memset(&c, 0, sizeof(c));
		journal_column_text(st, 0, c.serial, sizeof(c.serial));
		journal_column_text(st, 1, c.name, sizeof(c.name));
		c.issued = journal_u64(sqlite3_column_int64(st, 2));
		c.not_after = journal_u64(sqlite3_column_int64(st, 3));
		journal_column_text(st, 4, c.token, sizeof(c.token));
		journal_column_text(st, 5, c.addr, sizeof(c.addr));
		c.revoked = journal_u64(sqlite3_column_int64(st, 6));
		if (cb(arg, &c) == -1) {
			sqlite3_finalize(st);
			journal_set(j, "loading certificates: stopped by "
			    "caller");
			return (-1);
		}
	}
	if (rc != SQLITE_DONE)
		journal_fail(j, "loading certificates");
	sqlite3_finalize(st);
	return (rc == SQLITE_DONE ? 0 : -1);
}

/*
 * The bytes of a job the journal keeps: its tasks' payloads, its large
 * outputs and its packed results (their small outputs and errors), as
 * max_journal and max_journal_client count them.  Counted as they are
 * written, and again from the file at open, after a rollback, and for a
 * job after rows of it are deleted (JS_BYTES_*).  Out of memory the map
 * misses a job: it counts as keeping nothing until it is counted again.
 */
static void
journal_bytes_set(struct journal *j, uint64_t job, uint64_t n)
{
	uint64_t	 old = 0;

	if (u64map_get(&j->j_bytes, job, &old))
		j->j_allbytes -= old;
	if (n == 0)
		u64map_del(&j->j_bytes, job, NULL);
	else if (u64map_put(&j->j_bytes, job, n) == 0)
		j->j_allbytes += n;
}

/* Job keeps n bytes more. */
static void
journal_bytes_add(struct journal *j, uint64_t job, uint64_t n)
{
	uint64_t	 old = 0;

	if (n == 0)
		return;
	(void)u64map_get(&j->j_bytes, job, &old);
	journal_bytes_set(j, job, old + n);
}

/* Count job's bytes again from the file (rows of it were deleted). */
static int
journal_bytes_job(struct journal *j, uint64_t job)
{
	sqlite3_stmt	*st = j->j_stmt[JS_BYTES_JOB];
	int		 rc = SQLITE_OK, r;

	journal_bind_u64(st, 1, job, &rc);
	if (rc != SQLITE_OK || (r = journal_next(j, JS_BYTES_JOB,
	    "counting bytes")) != 1) {
		journal_reset(j, JS_BYTES_JOB);
		if (rc == SQLITE_OK && r == 0)
			journal_set(j, "counting bytes: no row");
		return (-1);
	}
	journal_bytes_set(j, job, journal_u64(sqlite3_column_int64(st, 0)));
	journal_reset(j, JS_BYTES_JOB);
	return (0);
}

/* Count every job's bytes from the file: at open, after a rollback. */
static int
journal_bytes_recount(struct journal *j)
{
	static const enum journal_stmt	 ss[] = {
		JS_BYTES_TASKS, JS_BYTES_OUTPUTS, JS_BYTES_RESULTS
	};
	size_t				 i;
	int				 r;

	u64map_free(&j->j_bytes);
	u64map_init(&j->j_bytes);
	j->j_allbytes = 0;
	for (i = 0; i < sizeof ss / sizeof ss[0]; i++) {
		while ((r = journal_next(j, ss[i], "counting bytes")) == 1)
			journal_bytes_add(j, journal_u64(sqlite3_column_int64(
			    j->j_stmt[ss[i]], 0)), journal_u64(
			    sqlite3_column_int64(j->j_stmt[ss[i]], 1)));
		if (r == -1)
			return (-1);
	}
	return (0);
}

/* The bytes job keeps in the journal (0: none, or no such job). */
uint64_t
journal_bytes(const struct journal *j, uint64_t job)
{
	uint64_t	 n = 0;

	(void)u64map_get(&j->j_bytes, job, &n);
	return (n);
}

/* The bytes every job keeps, summed. */
uint64_t
journal_bytes_all(const struct journal *j)
{
	return (j->j_allbytes);
}

/*
 * Compaction of a batch job's batches (journal_compact()): the tasks over
 * with an outcome the client acknowledged, by gen << 32 | idx, and the
 * batches holding an outcome it has not.
 */
struct journal_cp {
	uint64_t	 cp_acked;
	struct u64map	 cp_over;
	struct u64map	 cp_held;	/* gen -> 1 */
};

static int
journal_cp_result(void *arg, const struct journal_result *r)
{
	struct journal_cp	*cp = arg;
	int			 rc;

	if (r->seq != 0 && r->seq <= cp->cp_acked)
		rc = u64map_put(&cp->cp_over, (uint64_t)r->gen << 32 | r->idx,
		    1);
	else
		rc = u64map_put(&cp->cp_held, r->gen, 1);
	return (rc == -1 ? -1 : 0);
}

/*
 * The rows of job's results rewritten without the outputs of the outcomes
 * of gens (their large outputs deleted), those acknowledged (up to
 * acked): journal_compact()'s dropped batches.  Each row is packed again
 * as it was, with empty outputs, so it still fits one row.  A row that
 * holds none is left alone.
 */
struct journal_newrow {
	uint64_t	 nr_key;
	size_t		 nr_off;
	size_t		 nr_len;
	size_t		 nr_n;
};

static int
journal_strip(struct journal *j, uint64_t job, uint64_t acked,
    const struct u64map *gens)
{
	const char		*what = "compacting results";
	struct journal_lrs	 lr;
	struct journal_execbuf	 eb, nb;
	struct journal_newrow	*rows = NULL, *p;
	struct journal_result	 r;
	struct journal_lr	*l;
	sqlite3_stmt		*st;
	const uint8_t		*blob;
	uint64_t		*outs = NULL, *op, outid, key;
	size_t			 nrows = 0, rowcap = 0, nouts = 0, outcap = 0;
	size_t			 i, len;
	char			*err = NULL, *e;
	int			 r1, rc, strip, ret = -1;

	memset(&lr, 0, sizeof lr);
	memset(&eb, 0, sizeof eb);
	memset(&nb, 0, sizeof nb);
	if ((st = journal_query(j, JS_STRIP_RESULTS, job, what)) == NULL)
		return (-1);
	while ((r1 = journal_next(j, JS_STRIP_RESULTS, what)) == 1) {
		key = journal_u64(sqlite3_column_int64(st, 0));
		blob = sqlite3_column_blob(st, 2);
		len = blob == NULL ? 0 : (size_t)sqlite3_column_bytes(st, 2);
		lr.n = 0;
		lr.len = 0;
		if (journal_result_get(j, job, blob, len,
		    (uint64_t)sqlite3_column_int64(st, 1), &lr) == -1)
			goto busy;
		for (i = 0, strip = 0; i < lr.n && !strip; i++) {
			l = &lr.v[i];
			strip = u64map_get(gens, l->gen, NULL) &&
			    l->seq <= acked && (l->outlen > 0 || l->outid > 0);
		}
		if (!strip)
			continue;
		if ((e = realloc(err, lr.maxerr + 1)) == NULL)
			goto busy_nomem;
		err = e;
		eb.eb_len = 0;
		eb.eb_nrows = 0;
		for (i = 0; i < lr.n; i++) {
			l = &lr.v[i];
			memset(&r, 0, sizeof r);
			r.gen = l->gen;
			r.idx = l->idx;
			r.status = l->status;
			r.seq = l->seq;
			memcpy(err, lr.buf + l->err, l->errlen);
			err[l->errlen] = '\0';
			r.error = err;
			outid = l->outid;
			if (u64map_get(gens, l->gen, NULL) && l->seq <= acked) {
				if (outid > 0) {
					if (nouts == outcap) {
						outcap = outcap ? outcap * 2 :
						    64;
						if ((op = reallocarray(outs,
						    outcap, sizeof(*outs))) ==
						    NULL)
							goto busy_nomem;
						outs = op;
					}
					outs[nouts++] = outid;
				}
				outid = 0;
			} else if (outid == 0) {
				r.output = l->outlen > 0 ? lr.buf + l->out :
				    NULL;
				r.outlen = l->outlen;
			}
			if (journal_result_put(&eb, &r, outid) == -1)
				goto busy_nomem;
		}
		if (eb.eb_nrows != 1) {
			journal_set(j, "%s: job %" PRIu64 ": a row packed "
			    "again takes %zu", what, job, eb.eb_nrows);
			goto busy;
		}
		/* Kept in nb's buffer until the query is over. */
		if (journal_row_room(&nb, eb.eb_len, SIZE_MAX) == -1)
			goto busy_nomem;
		memcpy(nb.eb_buf + nb.eb_len, eb.eb_buf, eb.eb_len);
		if (nrows == rowcap) {
			rowcap = rowcap ? rowcap * 2 : 64;
			if ((p = reallocarray(rows, rowcap,
			    sizeof(*rows))) == NULL)
				goto busy_nomem;
			rows = p;
		}
		rows[nrows].nr_key = key;
		rows[nrows].nr_off = nb.eb_len;
		rows[nrows].nr_len = eb.eb_len;
		rows[nrows++].nr_n = eb.eb_rows[0].n;
		nb.eb_len += eb.eb_len;
	}
	if (r1 == -1)
		goto out;
	for (i = 0; i < nrows; i++) {
		rc = SQLITE_OK;
		journal_bind_u64(j->j_stmt[JS_RESULT_SET], 1, rows[i].nr_key,
		    &rc);
		journal_bind_u64(j->j_stmt[JS_RESULT_SET], 2, rows[i].nr_n,
		    &rc);
		journal_bind_blob(j->j_stmt[JS_RESULT_SET], 3, nb.eb_buf +
		    rows[i].nr_off, rows[i].nr_len, &rc);
		if (journal_run(j, JS_RESULT_SET, rc, what) == -1)
			goto out;
	}
	for (i = 0; i < nouts; i++) {
		rc = SQLITE_OK;
		journal_bind_u64(j->j_stmt[JS_OUTPUT_DELETE], 1, outs[i], &rc);
		if (journal_run(j, JS_OUTPUT_DELETE, rc, what) == -1)
			goto out;
	}
	ret = 0;
	goto out;

busy_nomem:
	journal_set(j, "%s: out of memory", what);
busy:
	journal_reset(j, JS_STRIP_RESULTS);
out:
	free(lr.v);
	free(lr.buf);
	free(eb.eb_buf);
	free(eb.eb_rows);
	free(nb.eb_buf);
	free(nb.eb_rows);
	free(rows);
	free(outs);
	free(err);
	return (ret);
}

/*
 * Drop the rows of a running batch job's batches that nothing will read
 * again: closed, every task over, every outcome acknowledged (up to
 * acked).  Such a batch was only ever loaded to be ended at once, and a
 * job that left tens of thousands of them took minutes to load (the core
 * and the job look batches up by walking them).  Its results stay, for
 * they count the job's outcomes, but without their outputs, which the
 * client has (journal_strip()).  A batch is dropped whole or not at all,
 * since a batch's tasks are numbered by their place in it.  In the
 * pending transaction; *ndropped: batches dropped.  Linear in the job's
 * rows.
 */
int
journal_compact(struct journal *j, uint64_t job, uint64_t acked,
    size_t *ndropped)
{
	const char	*what = "compacting";
	struct journal_cp cp;
	struct u64map	 keep, cand;	/* gen -> 1 */
	sqlite3_stmt	*st;
	uint64_t	*rowids = NULL, *gens = NULL, *drop = NULL, *p;
	uint64_t	 gen, idx, n, i, k;
	size_t		 nrow = 0, rowcap = 0, ndrop = 0, dropcap = 0;
	int		 r, rc, ret = -1;

	*ndropped = 0;
	memset(&cp, 0, sizeof cp);
	cp.cp_acked = acked;
	u64map_init(&cp.cp_over);
	u64map_init(&cp.cp_held);
	u64map_init(&keep);
	u64map_init(&cand);
	if (journal_load_results(j, job, journal_cp_result, &cp) == -1)
		goto out;

	/* Runs of tasks all over and acknowledged; the gens of the rest. */
	if ((st = journal_query(j, JS_COMPACT_TASKS, job, what)) == NULL)
		goto out;
	while ((r = journal_next(j, JS_COMPACT_TASKS, what)) == 1) {
		gen = (uint64_t)sqlite3_column_int64(st, 1);
		idx = (uint64_t)sqlite3_column_int64(st, 2);
		n = (uint64_t)sqlite3_column_int64(st, 3);
		for (i = 0; i < n; i++)
			if (!u64map_get(&cp.cp_over, gen << 32 | (idx + i),
			    NULL))
				break;
		if (i < n || n == 0) {
			if (u64map_put(&keep, gen, 1) == -1)
				goto nomem_busy;
			continue;
		}
		if (nrow == rowcap) {
			rowcap = rowcap ? rowcap * 2 : 256;
			if ((p = reallocarray(rowids, rowcap,
			    sizeof(*rowids))) == NULL)
				goto nomem_busy;
			rowids = p;
			if ((p = reallocarray(gens, rowcap,
			    sizeof(*gens))) == NULL)
				goto nomem_busy;
			gens = p;
		}
		rowids[nrow] = journal_u64(sqlite3_column_int64(st, 0));
		gens[nrow++] = gen;
		if (u64map_put(&cand, gen, 1) == -1)
			goto nomem_busy;
	}
	if (r == -1)
		goto out;

	/* Closed batches whose every run is such. */
	if ((st = journal_query(j, JS_COMPACT_BATCHES, job, what)) == NULL)
		goto out;
	while ((r = journal_next(j, JS_COMPACT_BATCHES, what)) == 1) {
		gen = (uint64_t)sqlite3_column_int64(st, 0);
		if (!u64map_get(&cand, gen, NULL) ||
		    u64map_get(&keep, gen, NULL) ||
		    u64map_get(&cp.cp_held, gen, NULL))
			continue;
		if (ndrop == dropcap) {
			dropcap = dropcap ? dropcap * 2 : 256;
			if ((p = reallocarray(drop, dropcap,
			    sizeof(*drop))) == NULL)
				goto nomem_busy;
			drop = p;
		}
		drop[ndrop++] = gen;
	}
	if (r == -1)
		goto out;
	if (ndrop == 0) {
		ret = 0;
		goto out;
	}

	/*
	 * Now the writes, no query running, all or none (a savepoint): a
	 * batch gone with some of its tasks left would fail the job.
	 */
	u64map_free(&cand);
	u64map_init(&cand);
	for (k = 0; k < ndrop; k++)
		if (u64map_put(&cand, drop[k], 1) == -1)
			goto nomem;
	if (journal_begin(j) == -1 || journal_execs_flush(j) == -1 ||
	    journal_run(j, JS_SAVEPOINT, SQLITE_OK, what) == -1)
		goto out;
	for (k = 0; k < ndrop; k++) {
		rc = SQLITE_OK;
		journal_bind_u64(j->j_stmt[JS_BATCH_DELETE], 1, job, &rc);
		journal_bind_u64(j->j_stmt[JS_BATCH_DELETE], 2, drop[k], &rc);
		if (journal_run(j, JS_BATCH_DELETE, rc, what) == -1)
			goto undo;
	}
	for (k = 0; k < nrow; k++) {
		if (!u64map_get(&cand, gens[k], NULL))
			continue;
		rc = SQLITE_OK;
		journal_bind_u64(j->j_stmt[JS_TASK_DELETE], 1, rowids[k], &rc);
		if (journal_run(j, JS_TASK_DELETE, rc, what) == -1)
			goto undo;
	}
	/* Their outcomes' outputs: the client has them. */
	if (journal_strip(j, job, acked, &cand) == -1 ||
	    journal_run(j, JS_RELEASE, SQLITE_OK, what) == -1)
		goto undo;
	*ndropped = ndrop;
	ret = journal_bytes_job(j, job);
	goto out;

undo:
	journal_undo(j);
	goto out;

nomem_busy:
	sqlite3_reset(st);
nomem:
	journal_set(j, "%s: out of memory", what);
out:
	free(rowids);
	free(gens);
	free(drop);
	u64map_free(&cp.cp_over);
	u64map_free(&cp.cp_held);
	u64map_free(&keep);
	u64map_free(&cand);
	return (ret);
}

/*
 * Drop what an ended batch job kept only for its client: its tasks, its
 * results with their outputs, its batches.  The job's row, its reports
 * and its executions stay for journal_retention.
 */
int
journal_rows_drop(struct journal *j, uint64_t job)
{
	static const enum journal_stmt	 ss[] = {
		JS_OUTPUTS_DROP, JS_RESULTS_DROP, JS_TASKS_DROP,
		JS_BATCHES_DROP
	};

	if (journal_group(j, ss, sizeof ss / sizeof ss[0], job,
	    "dropping acknowledged rows", NULL) == -1)
		return (-1);
	journal_bytes_set(j, job, 0);
	return (0);
}

/*
 * Mark a certificate (by serial, of any name): revoked at a Unix time
 * (0: not), a revocation once set staying; renewed by successor (NULL:
 * no news), the latest kept.
 */
int
journal_cert_mark(struct journal *j, const char *serial, const char *name,
    uint64_t revoked, const char *successor)
{
	sqlite3_stmt	*st;
	int		 rc;

	if (journal_begin(j) == -1)
		return (-1);
	if ((st = journal_adhoc(j, "INSERT INTO cert_marks (serial, name, "
	    "revoked, successor) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (serial) "
	    "DO UPDATE SET revoked = CASE WHEN revoked = 0 THEN "
	    "excluded.revoked ELSE revoked END, successor = CASE WHEN "
	    "excluded.successor = '' THEN successor ELSE excluded.successor "
	    "END")) == NULL)
		return (-1);
	rc = sqlite3_bind_text(st, 1, serial, -1, SQLITE_STATIC);
	journal_bind_str(st, 2, name, &rc);
	journal_bind_u64(st, 3, revoked, &rc);
	/* "" (not NULL, as journal_bind_str makes it): no news. */
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 4, successor != NULL ? successor :
		    "", -1, SQLITE_STATIC);
	return (journal_adhoc_run(j, st, rc, "marking a certificate"));
}

/* Every marked certificate: serial, name, revoked (0: no), successor. */
int
journal_load_marks(struct journal *j, int (*cb)(void *, const char *,
    const char *, uint64_t, const char *), void *arg)
{
	sqlite3_stmt	*st;
	char		 serial[48], name[64], succ[48];
	int		 rc;

	if ((st = journal_adhoc(j, "SELECT serial, name, revoked, successor "
	    "FROM cert_marks ORDER BY rowid")) == NULL)
		return (-1);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		journal_column_text(st, 0, serial, sizeof(serial));
		journal_column_text(st, 1, name, sizeof(name));
		journal_column_text(st, 3, succ, sizeof(succ));
		if (cb(arg, serial, name, journal_u64(sqlite3_column_int64(st,
		    2)), succ) == -1) {
			sqlite3_finalize(st);
			journal_set(j, "loading certificate marks: stopped by "
			    "caller");
			return (-1);
		}
	}
	if (rc != SQLITE_DONE)
		journal_fail(j, "loading certificate marks");
	sqlite3_finalize(st);
	return (rc == SQLITE_DONE ? 0 : -1);
}

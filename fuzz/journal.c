/*
 * masterd's journal (masterd/journal.c) opened on a damaged database: the
 * input is the database file, and masterd starts from it as it does at
 * boot (job_journal_open: its meta, its jobs, their results, tasks and
 * batches).  A page it cannot read must give an error in the log and a
 * masterd that refuses to start, never a crash; a journal it accepts
 * must give jobs that run on: worker "w1" joins and does their tasks.
 */
#include "config.h"

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <syslog.h>

#include "fuzz.h"
#include "journal.h"
#include "log.h"
#include "master.h"

/*
 * SQLite's own heap from glibc's malloc, not ASan's.  An input here costs
 * a few thousand small allocations inside SQLite (the damaged schema
 * parsed, statements prepared), and ASan's allocator with its quarantine
 * was the largest part of the target's time (perf: __asan::Allocator::
 * Allocate alone 11-18 %, its cache misses on fresh chunks).  SQLite is
 * not what this target tests: masterd's code is, and every allocation of
 * ours still goes through ASan.  Memory SQLite hands us is copied before
 * use; one we freed with free() instead of sqlite3_free() would now
 * crash, which is the bug it would be.  FUZZ_SQLITE_ASAN=1 puts SQLite
 * back on ASan's malloc.  A header of 16 bytes keeps each size.
 */
extern void	*__libc_malloc(size_t);
extern void	*__libc_realloc(void *, size_t);
extern void	 __libc_free(void *);

#define SQ_HDR	16

static void *
sq_malloc(int n)
{
	uint8_t	*p;

	if (n < 0 || (p = __libc_malloc((size_t)n + SQ_HDR)) == NULL)
		return (NULL);
	*(size_t *)(void *)p = (size_t)n;
	return (p + SQ_HDR);
}

static void
sq_free(void *p)
{
	if (p != NULL)
		__libc_free((uint8_t *)p - SQ_HDR);
}

static void *
sq_realloc(void *p, int n)
{
	uint8_t	*q;

	if (p == NULL)
		return (sq_malloc(n));
	if (n < 0 || (q = __libc_realloc((uint8_t *)p - SQ_HDR,
	    (size_t)n + SQ_HDR)) == NULL)
		return (NULL);
	*(size_t *)(void *)q = (size_t)n;
	return (q + SQ_HDR);
}

static int
sq_size(void *p)
{
	return (p != NULL ? (int)*(size_t *)(void *)((uint8_t *)p - SQ_HDR) :
	    0);
}

static int
sq_roundup(int n)
{
	return ((n + 7) & ~7);
}

static int
sq_init(void *arg)
{
	(void)arg;
	return (SQLITE_OK);
}

static void
sq_shutdown(void *arg)
{
	(void)arg;
}

static const sqlite3_mem_methods sq_mem = {
	sq_malloc, sq_free, sq_realloc, sq_size, sq_roundup, sq_init,
	sq_shutdown, NULL
};

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	log_init("masterd", 1, LOG_DAEMON);
	log_setverbose(getenv("FUZZ_VERBOSE") != NULL);
	journal_ckpt_thread = getenv("FUZZ_CKPT") != NULL;
	if (getenv("FUZZ_SQLITE_ASAN") == NULL &&
	    sqlite3_config(SQLITE_CONFIG_MALLOC, &sq_mem) != SQLITE_OK)
		abort();
	return (0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_peer	 w;
	int		 i;

	fz_master_init(fz_tmpfile(data, size));
	if (job_journal_handle() != NULL) {
		fz_peer_new(&w, 1, ROLE_NONE, "w1");
		fz_hello(&w, "w1", 4);
		for (i = 0; i < 4 && fz_work(&w) > 0; i++)
			;
		fz_peer_free(&w);
		fz_run();
	}
	fz_master_free();
	/*
	 * Every connection is closed: SQLite holds nothing.  What it still
	 * holds was leaked through it (a statement not finalized, an error
	 * text not freed), which LeakSanitizer no longer sees here.
	 */
	if (getenv("FUZZ_SQLITE_ASAN") == NULL && sqlite3_memory_used() != 0) {
		fprintf(stderr, "SQLite memory leaked: %lld bytes still in use "
		    "after the journal was closed\n",
		    (long long)sqlite3_memory_used());
		abort();
	}
	return (0);
}

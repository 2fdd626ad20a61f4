/*
 * masterd's journal (masterd/journal.c) opened on a damaged database: the
 * input is the database file, and masterd starts from it as it does at
 * boot (job_journal_open: its meta, its jobs, their results, tasks and
 * batches).  A page it cannot read must give an error in the log and a
 * masterd that refuses to start, never a crash; a journal it accepts
 * must give jobs that run on: worker "w1" joins and does their tasks.
 */
#include "config.h"

#include <stdlib.h>
#include <syslog.h>

#include "fuzz.h"
#include "journal.h"
#include "log.h"
#include "master.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	log_init("masterd", 1, LOG_DAEMON);
	log_setverbose(getenv("FUZZ_VERBOSE") != NULL);
	journal_ckpt_thread = getenv("FUZZ_CKPT") != NULL;
	return (0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_peer	 w;
	int		 i;

	fz_master_init(fz_tmpfile(data, size));
	if (md->journal != NULL) {
		fz_peer_new(&w, 1, ROLE_NONE, "w1");
		fz_hello(&w, "w1", 4);
		for (i = 0; i < 4 && fz_work(&w) > 0; i++)
			;
		fz_peer_free(&w);
		fz_run();
	}
	fz_master_free();
	return (0);
}

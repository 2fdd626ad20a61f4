/*
 * masterd's dispatch of a client's messages, fed through session_read()
 * (fuzz/master.c): worker "w1" has joined and a batch job of the control
 * socket's is running; the input is what a peer with the certificate of
 * client "c1" sends.  Then w1 does the tasks it was given, so results
 * flow back to whatever jobs the input made.
 */
#include "config.h"

#include <stdlib.h>
#include <syslog.h>

#include "fuzz.h"
#include "log.h"
#include "master.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	log_init("masterd", 1, LOG_DAEMON);
	log_setverbose(getenv("FUZZ_VERBOSE") != NULL);
	return (0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_peer	 ctl, w, c;
	int		 i;

	fz_master_init(NULL);
	fz_peer_new(&ctl, 0, ROLE_CLIENT, NULL);
	fz_job_open(&ctl, FZ_NTASKS);
	fz_peer_new(&w, 1, ROLE_NONE, "w1");
	fz_hello(&w, "w1", 4);
	fz_peer_new(&c, 1, ROLE_CLIENT, "c1");
	fz_write(&c, data, size);
	fz_run();
	for (i = 0; i < 4 && fz_work(&w) > 0; i++)
		;
	fz_peer_free(&c);
	fz_peer_free(&w);
	fz_peer_free(&ctl);
	fz_run();
	fz_master_free();
	return (0);
}

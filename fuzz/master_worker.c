/*
 * masterd's dispatch of a worker's messages, fed through session_read()
 * (fuzz/master.c): a batch job of FZ_NTASKS echo tasks is waiting, and
 * the input is what a peer with the certificate of worker "w1" sends on
 * the TLS port -- from the first byte, so before Hello, Hello itself,
 * Hello twice and every other message type out of order are all in
 * reach.  The seed corpus's Results echo the tags masterd gives w1.
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
	struct fz_peer	 ctl, w;

	fz_master_init(NULL);
	fz_peer_new(&ctl, 0, ROLE_CLIENT, NULL);
	fz_job_open(&ctl, FZ_NTASKS);
	fz_peer_new(&w, 1, ROLE_NONE, "w1");
	fz_write(&w, data, size);
	fz_run();
	fz_peer_free(&w);
	fz_peer_free(&ctl);
	fz_run();
	fz_master_free();
	return (0);
}

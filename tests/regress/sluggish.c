/*
 * r3q-testpeer sluggish: peers that do not read what masterd sends them,
 * for tests/regress/bounds.sh (issue 24, "Bounded everything").
 *
 *   worker KINDS CPUS	join as a worker offering KINDS (comma-separated)
 *			with CPUS, take the Welcome, then never read again:
 *			only a heartbeat every second, so that the master
 *			cannot call it lost; print "closed by the master"
 *			and exit 0 once a heartbeat can no longer be sent
 *
 * Its receive buffer is made small, so that what the master sends piles up
 * on the master's side, not in the kernel.
 */
#include "config.h"

#include <sys/socket.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/ssl.h>

#include "frame.h"
#include "testpeer.h"
#include "tls.h"
#include "util.h"

#define SLUGGISH_KINDS	16

/* A worker that joins and then reads nothing. */
static int
sluggish_worker(SSL_CTX *ctx, const char *host, const char *port,
    const char *kindlist, const char *cpus)
{
	Envelope	 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__Hello	 h = R3Q__HELLO__INIT;
	R3q__Heartbeat	 hb = R3Q__HEARTBEAT__INIT;
	char		*kinds[SLUGGISH_KINDS], *list, *k, *last;
	size_t		 n = 0;
	uint64_t	 ncpu;
	int		 fd, small = 4096;

	if (parse_u64(cpus, 1, 4096, &ncpu) == -1) {
		printf("bad CPU count '%s'\n", cpus);
		return (2);
	}
	list = xstrdup(kindlist);
	for (k = strtok_r(list, ",", &last); k != NULL && n < SLUGGISH_KINDS;
	    k = strtok_r(NULL, ",", &last))
		kinds[n++] = k;
	if ((fd = tls_dial(ctx, host, port)) == -1)
		return (1);
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	h.protocol = R3Q_PROTOCOL;
	h.cpus = (uint32_t)ncpu;
	h.n_kinds = n;
	h.kinds = kinds;
	env.body_case = R3Q__ENVELOPE__BODY_HELLO;
	env.hello = &h;
	if (send_env(&env) == -1 || (ans = recv_env()) == NULL ||
	    ans->body_case != R3Q__ENVELOPE__BODY_WELCOME) {
		printf("no welcome\n");
		return (1);
	}
	frame_free(ans);
	printf("joined\n");
	hb.interval_ms = 1000;
	env.body_case = R3Q__ENVELOPE__BODY_HEARTBEAT;
	env.heartbeat = &hb;
	while (send_env(&env) != -1)
		sleep(1);
	printf("closed by the master\n");
	free(list);
	return (0);
}

int
do_sluggish(SSL_CTX *ctx, const char *host, const char *port,
    const char *mode, const char *arg1, const char *arg2)
{
	if (strcmp(mode, "worker") == 0 && arg1 != NULL && arg2 != NULL)
		return (sluggish_worker(ctx, host, port, arg1, arg2));
	printf("sluggish: unknown mode %s, or missing arguments\n", mode);
	return (2);
}

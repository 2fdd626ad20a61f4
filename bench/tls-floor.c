/*
 * bench/tls-floor: the heap one idle, mutually authenticated TLS
 * connection costs its server with the project's own TLS settings
 * (common/tls.c: TLS 1.3, SSL_MODE_RELEASE_BUFFERS, no tickets), so that
 * masterd's memory per connected worker (bench/memory) can be set
 * against the floor OpenSSL and libevent put under it (issue 26, "4 KB
 * per worker").
 *
 * N connections over socketpairs in this process: each handshake is run
 * to its end and one small record is sent each way, the client ends are
 * freed, and the server ends are measured with mallinfo2() (bytes in
 * use on the heap, which is where OpenSSL and libevent allocate): bare
 * SSL objects, then each wrapped in a bufferevent_openssl as masterd
 * does, reading enabled.  The kernel's socket buffers are not in these
 * figures (nor in the 4 KB target).
 *
 * Measured on Debian 12 (OpenSSL 3.0, libevent 2.1): 25.0 KB an SSL
 * object, 1.1 KB its bufferevent.  Of the SSL's, SSL_new() alone is 8.5
 * KB and the worker's certificate, parsed and kept in the session (the
 * CRL sweep needs it), 5.3 KB; turning the session cache off or calling
 * SSL_free_buffers() after the handshake changed nothing (the record
 * buffers are already released: SSL_MODE_RELEASE_BUFFERS).
 *
 * usage: bench/tls-floor CERTDIR [N]
 * CERTDIR holds scripts/mkcerts' ca.pem, master.pem/key and w1.pem/key
 * (bench/tls-floor.sh makes them).  Prints a table and one CSV line.
 */
#include "config.h"

#include <sys/socket.h>

#include <err.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "tls.h"

static size_t
heap_used(void)
{
	struct mallinfo2	mi = mallinfo2();

	return (mi.uordblks + mi.hblkhd);
}

/* Drive both ends of one handshake, then one record each way. */
static int
pair_up(SSL *c, SSL *s)
{
	char	 buf[16];
	int	 cd = 0, sd = 0, i, r;

	for (i = 0; i < 1000 && !(cd && sd); i++) {
		if (!cd) {
			r = SSL_do_handshake(c);
			if (r == 1)
				cd = 1;
			else if (SSL_get_error(c, r) != SSL_ERROR_WANT_READ &&
			    SSL_get_error(c, r) != SSL_ERROR_WANT_WRITE)
				return (-1);
		}
		if (!sd) {
			r = SSL_do_handshake(s);
			if (r == 1)
				sd = 1;
			else if (SSL_get_error(s, r) != SSL_ERROR_WANT_READ &&
			    SSL_get_error(s, r) != SSL_ERROR_WANT_WRITE)
				return (-1);
		}
	}
	if (!(cd && sd))
		return (-1);
	if (SSL_write(c, "hello", 5) != 5 || SSL_read(s, buf, sizeof(buf)) != 5 ||
	    SSL_write(s, "hello", 5) != 5 || SSL_read(c, buf, sizeof(buf)) != 5)
		return (-1);
	return (0);
}

int
main(int argc, char *argv[])
{
	SSL_CTX			*sctx, *cctx;
	SSL			**srv, *cl;
	struct bufferevent	**bev;
	struct event_base	*base;
	char			 p[4][1024], ebuf[1024];
	size_t			 n = 1000, i, m0, m1, m2, m3;
	int			 fd[2], *sfd;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: tls-floor CERTDIR [N]\n");
		return (64);
	}
	if (argc == 3 && (n = strtoul(argv[2], NULL, 10)) == 0)
		errx(64, "N must be a positive number");
	snprintf(p[0], sizeof(p[0]), "%s/ca.pem", argv[1]);
	snprintf(p[1], sizeof(p[1]), "%s/master.pem", argv[1]);
	snprintf(p[2], sizeof(p[2]), "%s/master.key", argv[1]);
	if ((sctx = tls_ctx_new(1, p[0], p[1], p[2], ebuf, sizeof(ebuf))) == NULL)
		errx(1, "%s", ebuf);
	snprintf(p[1], sizeof(p[1]), "%s/w1.pem", argv[1]);
	snprintf(p[2], sizeof(p[2]), "%s/w1.key", argv[1]);
	if ((cctx = tls_ctx_new(0, p[0], p[1], p[2], ebuf, sizeof(ebuf))) == NULL)
		errx(1, "%s", ebuf);
	if ((base = event_base_new()) == NULL)
		errx(1, "event_base_new");
	srv = calloc(n, sizeof(*srv));
	bev = calloc(n, sizeof(*bev));
	sfd = calloc(n, sizeof(*sfd));
	if (srv == NULL || bev == NULL || sfd == NULL)
		err(1, "calloc");

	m0 = heap_used();
	for (i = 0; i < n; i++) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, fd) == -1)
			err(1, "socketpair (raise ulimit -n for N = %zu)", n);
		fcntl(fd[0], F_SETFL, O_NONBLOCK);
		fcntl(fd[1], F_SETFL, O_NONBLOCK);
		if ((cl = tls_client_ssl(cctx, "127.0.0.1", ebuf,
		    sizeof(ebuf))) == NULL)
			errx(1, "%s", ebuf);
		if ((srv[i] = SSL_new(sctx)) == NULL)
			errx(1, "SSL_new");
		SSL_set_fd(cl, fd[0]);
		SSL_set_fd(srv[i], fd[1]);
		SSL_set_connect_state(cl);
		SSL_set_accept_state(srv[i]);
		if (pair_up(cl, srv[i]) == -1) {
			ERR_print_errors_fp(stderr);
			errx(1, "handshake %zu failed", i);
		}
		SSL_free(cl);
		close(fd[0]);
		sfd[i] = fd[1];
	}
	m1 = heap_used();
	for (i = 0; i < n; i++) {
		bev[i] = bufferevent_openssl_socket_new(base, sfd[i], srv[i],
		    BUFFEREVENT_SSL_OPEN, BEV_OPT_CLOSE_ON_FREE |
		    BEV_OPT_DEFER_CALLBACKS);
		if (bev[i] == NULL)
			errx(1, "bufferevent_openssl_socket_new");
		bufferevent_enable(bev[i], EV_READ | EV_WRITE);
	}
	m2 = heap_used();
	for (i = 0; i < n; i++)
		bufferevent_free(bev[i]);
	/* Deferred callbacks: the frees finish in the loop. */
	event_base_loop(base, EVLOOP_NONBLOCK);
	m3 = heap_used();

	printf("%-44s %10s\n", "server side of one idle connection",
	    "heap bytes");
	printf("%-44s %10.0f\n", "SSL object after the handshake (OpenSSL)",
	    (double)(m1 - m0) / n);
	printf("%-44s %10.0f\n", "bufferevent_openssl around it (libevent)",
	    (double)(m2 - m1) / n);
	printf("%-44s %10.0f\n", "both: the floor under masterd's per worker",
	    (double)(m2 - m0) / n);
	printf("%-44s %10.0f\n", "left after freeing them (should be ~0)",
	    m3 > m0 ? (double)(m3 - m0) / n : 0.0);
	printf("csv,connections,ssl_bytes,bufferevent_bytes,floor_bytes\n");
	printf("csv,%zu,%.0f,%.0f,%.0f\n", n, (double)(m1 - m0) / n,
	    (double)(m2 - m1) / n, (double)(m2 - m0) / n);
	free(srv);
	free(bev);
	free(sfd);
	SSL_CTX_free(sctx);
	SSL_CTX_free(cctx);
	event_base_free(base);
	return (0);
}

/*
 * r3q-testpeer: a peer that misbehaves on purpose, for the regress tests.
 *
 *   r3q-testpeer -a ca -c cert -k key connect HOST PORT MODE
 *	garbage   send random bytes over TLS; expect the master to close
 *	oversize  send a header announcing 4 GiB; expect a close
 *	unknown   send an Envelope with an unknown body; expect an Error
 *	version   send a hello with protocol 99; expect an Error
 *	hello     a well-behaved hello; expect a Welcome
 *   r3q-testpeer -a ca -c cert -k key serve PORT KIND|mute
 *	act as a master: accept one worker, assign it one task of KIND,
 *	print the status of its result; mute: take its hello, answer nothing;
 *	crl: welcome it with the CRLs of the file $R3Q_TESTPEER_CRL, push
 *	them again (CrlPush), then read until it closes (crl-push.sh)
 *   r3q-testpeer notify PATH SECONDS
 *	be systemd's NOTIFY_SOCKET: print each datagram, one a line
 *   r3q-testpeer relay PORT HOST TARGET_PORT
 *	a plain TCP relay on 127.0.0.1:PORT (0: a free one, printed as
 *	"port N") to HOST:TARGET_PORT, forwarding the TLS stream untouched;
 *	SIGUSR1 makes it a silent link (every connection stays open, nothing
 *	is read or written), SIGUSR2 resumes, SIGTERM exits
 *   r3q-testpeer -a ca -c cert -k key hostile HOST PORT MODE [ARG]
 *	a worker that lies, speaking the protocol by hand (hostile.c)
 *   r3q-testpeer -a ca -c cert -k key badclient HOST PORT MODE [ARGS]
 *	a batch-job client that sends what libr3q never would (badclient.c)
 *   r3q-testpeer -a ca -c cert -k key flood HOST PORT MODE [N [ARG [SECS]]]
 *	frames masterd must judge before unpacking them, and connections
 *	holding a handshake or a frame open (flood.c)
 *   r3q-testpeer -a ca -c cert -k key sluggish HOST PORT worker KINDS CPUS
 *	a worker that joins and never reads again (sluggish.c)
 *   r3q-testpeer -a ca -c cert -k key roles HOST PORT MODE
 *	every message type on a session of one role (roles.c)
 *   r3q-testpeer -a ca -c cert -k key relayopen HOST PORT SELF NAME
 *	as relay SELF (cert: a relay's), join, then ask the master for
 *	streams (each passing NAME.pem beside cert, if there is one, as its
 *	certificate): one whose path does not end at SELF, one for NAME with a
 *	bad name on its path, then a good one for NAME, over which it says
 *	NAME's hello; and send data for a stream never opened.  Prints
 *	"stream N refused: why", "stream N welcomed"; exit 0 if the master
 *	refused the first two and welcomed the third (relay-edge.sh)
 *   r3q-testpeer -a ca -c cert -k key relayhostile HOST PORT SELF MODE ...
 *	as relay SELF (cert: a relay's), lie about the workers behind it:
 *	forge KIND CERTDIR NAME..., claim CERTDIR NAME, flood CERTDIR NAME N
 *	(relayhostile.c)
 *   r3q-testpeer -a ca -c cert -k key swarm HOST PORT N CAKEY [PREFIX [KIND]]
 *	emulate N idle workers for a memory benchmark: issue N certificates
 *	(OU=worker, CN=PREFIX-1..PREFIX-N, PREFIX swarm by default) signed by the CA (ca and its key
 *	CAKEY), join the master with each (a hello offering no task kind, so
 *	no task is ever assigned), print "swarm: N workers joined in S s",
 *	then send every connection a heartbeat each second and discard what
 *	the master says; cert/key (any pair the CA issued, e.g. the client's)
 *	only build the TLS context.  With KIND (after PREFIX) each offers
 *	that kind and answers every task at once, its payload as its output
 *	(a benchmark of the master's cost per task, bench/relay-scale.sh).
 *	SIGTERM or SIGINT: close all, exit 0;
 *	a refused or closed connection: say which worker, exit 1
 *
 *   r3q-testpeer -a ca -c cert -k key peerorder HOST PORT NAME TARGET
 *	as another worker (cert: a worker's), connect to a workerd's
 *	peer_listen at HOST:PORT and send it what only the master may: a
 *	PeerOrder to probe worker NAME at TARGET (host:port); then a ping.
 *	Prints "closed" if the worker closed the connection without a
 *	pong, "pong" if it answered (exit 0 only for "closed"); whether it
 *	connected to TARGET is for the test to see (peer.sh)
 *
 *   r3q-testpeer join HOST PORT ID.SECRET NAME KEY
 *	a joiner (no certificate) sending a JoinRequest for NAME (the two
 *	characters \0 in it stand for a NUL byte) with a key of type KEY:
 *	ec (P-256), p521, rsa1024, rsa2048, badsig (P-256, its signature
 *	spoilt) or hello (no request: a hello instead); prints "error: MSG"
 *	or "cert: SUBJECT", or "closed" if the master closed at once
 *
 *   r3q-testpeer issue CA CAKEY OU CN FROM TO OUT
 *	issue OUT.pem and OUT.key: a certificate with OU and CN signed by
 *	the CA, valid from FROM to TO seconds from now (negative: in the
 *	past), for tests of expired and not yet valid certificates
 *
 * Prints what the other side answered; exits 0 when it behaved as the
 * mode expects, 1 otherwise.
 */
#include "config.h"

#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <fcntl.h>
#include <poll.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "frame.h"
#include "seal.h"
#include "es/payload.h"
#include "task/task.h"
#include "testpeer.h"
#include "tls.h"
#include "util.h"

SSL		*ssl;
/*
 * The process's one TLS context, for its whole life.  Global, and not
 * static: LeakSanitizer must find it from the data section at exit
 * (also at the _exit of a forked flood connection, and after a dial that
 * failed has no SSL holding it); GCC turns a static local of main that
 * nothing else reads into a register, and then it looks leaked.
 */
SSL_CTX		*tp_ctx;

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr, "usage: r3q-testpeer -a ca -c cert -k key connect "
	    "host port garbage|oversize|unknown|version|hello\n"
	    "       r3q-testpeer -a ca -c cert -k key serve port kind\n"
	    "       r3q-testpeer notify path seconds\n"
	    "       r3q-testpeer relay port host target-port\n"
	    "       r3q-testpeer -a ca -c cert -k key relayopen host port "
	    "self name\n"
	    "       r3q-testpeer -a ca -c cert -k key relayhostile host port "
	    "self forge kind certdir name...|claim certdir name|\n"
	    "       flood certdir name n\n"
	    "       r3q-testpeer -a ca -c cert -k key swarm host port n "
	    "ca-key [prefix [kind]]\n"
	    "       r3q-testpeer -a ca -c cert -k key sealbad host port "
	    "early|tag|length|replay|stall\n"
	    "       r3q-testpeer -a ca -c cert -k key hostile host port "
	    "forge|failall|silent|cancelspam|errorlog|liar [arg]\n"
	    "       r3q-testpeer -a ca -c cert -k key badclient host port "
	    "refusals|noread n secs|noack n|attach job|jobs|cancel job|\n"
	    "               touch job|batches n [job]\n"
	    "       r3q-testpeer -a ca -c cert -k key flood host|unix "
	    "port|path prehello|joined|joblist|partial|heartbeats|slowhs\n"
	    "               [n [arg [secs]]]\n"
	    "       r3q-testpeer -a ca -c cert -k key sluggish host port "
	    "worker kinds cpus\n"
	    "       r3q-testpeer -a ca -c cert -k key roles host port "
	    "worker|prehello|client|hold\n"
	    "       r3q-testpeer join host port id.secret name "
	    "ec|p521|rsa1024|rsa2048|badsig|hello\n"
	    "       r3q-testpeer issue ca ca-key ou cn from to out\n"
	    "       r3q-testpeer -a ca -c cert -k key peerorder host port "
	    "name target\n");
	exit(2);
}

/*
 * Sealed frames (common/seal.h) on the one blocking connection: its keys,
 * its socket, and the plaintext of the last record not yet read.
 */
static struct seal	*tp_seal;
static int		 tp_fd = -1;
static int		 tp_offer_seal;		/* tls_dial offers to seal */
static uint8_t		 tp_plain[SEAL_RECORD_MAX];
static size_t		 tp_plen, tp_poff;

/* write(2) all of it, waiting on a non-blocking socket; -1 on error. */
static int
write_all(int fd, const uint8_t *p, size_t len)
{
	struct pollfd	 pfd;
	ssize_t		 n;

	while (len > 0) {
		if ((n = write(fd, p, len)) > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			pfd.fd = fd;
			pfd.events = POLLOUT;
			(void)poll(&pfd, 1, 100);
			continue;
		}
		return (-1);
	}
	return (0);
}

/* Seal len bytes as records and write them; -1 on error. */
static int
seal_put(struct seal *se, int fd, const uint8_t *p, size_t len)
{
	uint8_t	 rec[SEAL_RECORD_MAX + SEAL_OVERHEAD];
	size_t	 n, r;

	while (len > 0) {
		n = len > SEAL_RECORD_MAX ? SEAL_RECORD_MAX : len;
		if ((r = seal_record(se, p, n, rec)) == 0 ||
		    write_all(fd, rec, r) == -1)
			return (-1);
		p += n;
		len -= n;
	}
	return (0);
}

/* read(2) exactly len bytes, blocking (the receive timeout applies). */
static int
read_full(int fd, uint8_t *p, size_t len)
{
	ssize_t	 n;

	while (len > 0) {
		if ((n = read(fd, p, len)) > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		return (-1);
	}
	return (0);
}

/* The next sealed record's plaintext into tp_plain; -1 on close or error. */
static int
seal_get_record(void)
{
	uint8_t	 rec[SEAL_RECORD_MAX + SEAL_OVERHEAD];
	size_t	 len;

	if (read_full(tp_fd, rec, SEAL_HDRLEN) == -1)
		return (-1);
	if ((len = seal_record_len(rec)) == 0) {
		printf("a sealed record of a length out of range from the "
		    "master\n");
		return (-1);
	}
	if (read_full(tp_fd, rec + SEAL_HDRLEN, len - SEAL_HDRLEN) == -1)
		return (-1);
	if (seal_open(tp_seal, rec, len, tp_plain,
	    &tp_plen) == -1) {
		printf("%s\n", seal_error(tp_seal));
		return (-1);
	}
	tp_poff = 0;
	return (0);
}

/*
 * After a handshake that agreed to seal: the master's mark, read in TLS,
 * then the keys; put() and get() seal from there on.  0 if not agreed.
 */
static int
seal_begin(int fd)
{
	uint8_t	 mark[SEAL_MARKLEN];
	size_t	 n, got = 0;
	char	 err[256];

	if (!seal_agreed(ssl))
		return (0);
	while (got < sizeof(mark)) {
		if (SSL_read_ex(ssl, mark + got, sizeof(mark) - got, &n) != 1) {
			printf("no seal mark from the master\n");
			return (-1);
		}
		got += n;
	}
	if (memcmp(mark, SEAL_MARK, sizeof(mark)) != 0) {
		printf("not the seal mark from the master\n");
		return (-1);
	}
	if ((tp_seal = seal_new(ssl, 0, err, sizeof(err))) == NULL) {
		printf("%s\n", err);
		return (-1);
	}
	tp_fd = fd;
	tp_plen = tp_poff = 0;
	return (0);
}

/* Write all bytes; -1 if the peer has gone. */
static int
put(const void *buf, size_t len)
{
	size_t	 done;

	if (tp_seal != NULL)
		return (seal_put(tp_seal, tp_fd, buf, len));
	while (len > 0) {
		if (SSL_write_ex(ssl, buf, len, &done) != 1)
			return (-1);
		buf = (const uint8_t *)buf + done;
		len -= done;
	}
	return (0);
}

int
send_env(Envelope *env)
{
	uint8_t	*buf;
	size_t	 len;
	int	 rc;

	buf = frame_pack(env, &len);
	rc = put(buf, len);
	free(buf);
	return (rc);
}

/* Read exactly len bytes; -1 on close or error. */
static int
get(uint8_t *buf, size_t len)
{
	size_t	 n;

	while (len > 0 && tp_seal != NULL) {
		if (tp_poff == tp_plen && seal_get_record() == -1)
			return (-1);
		n = tp_plen - tp_poff < len ? tp_plen - tp_poff : len;
		memcpy(buf, tp_plain + tp_poff, n);
		tp_poff += n;
		buf += n;
		len -= n;
	}
	while (len > 0) {
		if (SSL_read_ex(ssl, buf, len, &n) != 1)
			return (-1);
		buf += n;
		len -= n;
	}
	return (0);
}

/* One frame, or NULL if the peer closed. */
Envelope *
recv_env(void)
{
	uint8_t		 hdr[FRAME_HDRLEN], *body;
	uint32_t	 len;
	Envelope	*env;
	char		 err[256];

	if (get(hdr, sizeof(hdr)) == -1)
		return (NULL);
	if (frame_header_decode(hdr, FRAME_MAX_DEFAULT, &len, err,
	    sizeof(err)) == -1) {
		printf("bad frame: %s\n", err);
		return (NULL);
	}
	if ((body = malloc(len + 1)) == NULL || get(body, len) == -1)
		return (NULL);
	if (frame_unpack(body, len, FRAME_MAX_DEFAULT, &env, err,
	    sizeof(err)) == -1) {
		printf("bad frame: %s\n", err);
		free(body);
		return (NULL);
	}
	free(body);
	return (env);
}

/*
 * True if the peer closes the connection (EOF, TLS alert or reset); false
 * if it is still open after the 5-second receive timeout.
 */
static int
closed_by_peer(void)
{
	uint8_t	 b, raw[4096];
	size_t	 n;
	ssize_t	 r;
	int	 e;

	while (tp_seal != NULL) {
		if ((r = read(tp_fd, raw, sizeof(raw))) > 0)
			continue;
		if (r == -1 && errno == EINTR)
			continue;
		return (!(r == -1 && (errno == EAGAIN ||
		    errno == EWOULDBLOCK)));
	}
	for (;;) {
		errno = 0;
		if (SSL_read_ex(ssl, &b, 1, &n) == 1)
			continue;
		e = SSL_get_error(ssl, 0);
		if (e == SSL_ERROR_SYSCALL && (errno == EAGAIN ||
		    errno == EWOULDBLOCK))
			return (0);
		return (1);
	}
}

/* Print and return whether the peer closed on us. */
static int
report_close(void)
{
	if (closed_by_peer()) {
		printf("closed by the peer\n");
		return (0);
	}
	printf("still open after 5s\n");
	return (1);
}

/* A TCP connection to host:port with a 5-second receive timeout. */
int
tcp_connect(const char *host, const char *port)
{
	struct addrinfo	 hints, *res;
	struct timeval	 tv = { 5, 0 };
	int		 fd;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, port, &hints, &res) != 0)
		return (-1);
	fd = socket(res->ai_family, SOCK_STREAM, 0);
	if (fd == -1 || connect(fd, res->ai_addr, res->ai_addrlen) == -1) {
		freeaddrinfo(res);
		return (-1);
	}
	freeaddrinfo(res);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return (fd);
}

/*
 * Connect to host:port and finish the TLS handshake on ssl; the socket,
 * or -1 after saying what failed.
 */
int
tls_dial(SSL_CTX *ctx, const char *host, const char *port)
{
	char	 err[256];
	int	 fd;

	if ((fd = tcp_connect(host, port)) == -1) {
		printf("cannot connect\n");
		return (-1);
	}
	if ((ssl = tls_client_ssl(ctx, host, err, sizeof(err))) == NULL) {
		printf("%s\n", err);
		return (-1);
	}
	if (tp_offer_seal && seal_client_offer(ssl) == -1) {
		printf("cannot offer to seal\n");
		return (-1);
	}
	SSL_set_fd(ssl, fd);
	if (SSL_connect(ssl) != 1) {
		printf("handshake failed\n");
		return (-1);
	}
	return (fd);
}

/* A forged order to a worker's peer_listen (issue 22, peer.sh). */
static int
do_peerorder(SSL_CTX *ctx, const char *host, const char *port,
    const char *name, const char *target)
{
	Envelope	 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__PeerOrder	 po = R3Q__PEER_ORDER__INIT;
	R3q__PeerTarget	 t = R3Q__PEER_TARGET__INIT, *tp = &t;
	R3q__PeerMsg	 m = R3Q__PEER_MSG__INIT;
	int		 fd;

	/* No host name check: a worker's certificate names no address. */
	if ((fd = tcp_connect(host, port)) == -1) {
		printf("cannot connect\n");
		return (1);
	}
	if ((ssl = SSL_new(ctx)) == NULL) {
		printf("SSL_new failed\n");
		return (1);
	}
	SSL_set_fd(ssl, fd);
	if (SSL_connect(ssl) != 1) {
		printf("handshake failed\n");
		return (1);
	}
	t.index = 0;
	t.name = (char *)(uintptr_t)name;
	t.address = (char *)(uintptr_t)target;
	po.op = 1;
	po.n_peers = 1;
	po.peers = &tp;
	po.pings = 1;
	po.bytes = 1000;
	env.id = 1;
	env.body_case = R3Q__ENVELOPE__BODY_PEER_ORDER;
	env.peer_order = &po;
	if (send_env(&env) == -1) {
		printf("closed\n");
		return (0);
	}
	m.op = 2;
	env.body_case = R3Q__ENVELOPE__BODY_PEER_MSG;
	env.peer_msg = &m;
	if (send_env(&env) == -1) {
		printf("closed\n");
		return (0);
	}
	if ((ans = recv_env()) == NULL) {
		printf("closed\n");
		return (0);
	}
	printf("%s\n", ans->body_case == R3Q__ENVELOPE__BODY_PEER_MSG ?
	    "pong" : frame_body_name(ans));
	frame_free(ans);
	return (1);
}

static int
do_connect(SSL_CTX *ctx, const char *host, const char *port,
    const char *mode)
{
	Envelope	 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__Hello	 h = R3Q__HELLO__INIT;
	uint8_t		 junk[4096], hdr[FRAME_HDRLEN];
	static const uint8_t unknown[] = { 0x08, 0x05, 0xf2, 0x06, 0x00 };
	size_t		 i;
	int		 fd, rc;

	if ((fd = tls_dial(ctx, host, port)) == -1)
		return (1);
	if (strcmp(mode, "garbage") == 0) {
		srand(7);
		for (i = 0; i < sizeof(junk); i++)
			junk[i] = (uint8_t)rand();
		put(junk, sizeof(junk));
		return (report_close());
	}
	if (strcmp(mode, "oversize") == 0) {
		frame_header_encode(hdr, 0xffffff00u);
		put(hdr, sizeof(hdr));
		return (report_close());
	}
	if (strcmp(mode, "unknown") == 0) {
		frame_header_encode(hdr, sizeof(unknown));
		put(hdr, sizeof(hdr));
		put(unknown, sizeof(unknown));
	} else if (strcmp(mode, "version") == 0 ||
	    strcmp(mode, "hello") == 0) {
		h.protocol = strcmp(mode, "version") == 0 ? 99 : R3Q_PROTOCOL;
		h.cpus = 1;
		env.body_case = R3Q__ENVELOPE__BODY_HELLO;
		env.hello = &h;
		send_env(&env);
	} else
		usage();
	if ((ans = recv_env()) == NULL) {
		printf("closed without an answer\n");
		return (1);
	}
	if (ans->body_case == R3Q__ENVELOPE__BODY_ERROR) {
		printf("error: %s\n", ans->error->message);
		frame_free(ans);
		return (strcmp(mode, "hello") == 0 ? 1 : 0);
	}
	printf("%s\n", frame_body_name(ans));
	rc = strcmp(mode, "hello") == 0 &&
	    ans->body_case == R3Q__ENVELOPE__BODY_WELCOME ? 0 : 1;
	frame_free(ans);
	return (rc);
}

/*
 * Listen on 127.0.0.1:port (0: a free one) and print "port N" once
 * listening; -1 after saying why not.
 */
static int
listen_loopback(const char *port, int backlog)
{
	struct sockaddr_in	 sin;
	socklen_t		 slen;
	int			 lfd, one = 1;

	if ((lfd = socket(AF_INET, SOCK_STREAM, 0)) == -1) {
		printf("cannot listen\n");
		return (-1);
	}
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)atoi(port));
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(lfd, backlog) == -1) {
		printf("cannot listen\n");
		close(lfd);
		return (-1);
	}
	slen = sizeof(sin);
	getsockname(lfd, (struct sockaddr *)&sin, &slen);
	printf("port %u\n", ntohs(sin.sin_port));
	fflush(stdout);
	return (lfd);
}

/*
 * Say what was done, then read and drop whatever the worker sends, with no
 * time limit, until it closes; then say so.
 */
static int
serve_idle(const char *done)
{
	Envelope	*ans;

	printf("%s\n", done);
	fflush(stdout);
	alarm(0);
	while ((ans = recv_env()) != NULL)
		frame_free(ans);
	printf("closed\n");
	return (0);
}

/*
 * A master that sends the CRLs of $R3Q_TESTPEER_CRL, whoever signed them,
 * in its welcome and in a CrlPush; then reads until the worker closes.
 */
static int
serve_crl(void)
{
	Envelope		 env = R3Q__ENVELOPE__INIT;
	R3q__Welcome		 w = R3Q__WELCOME__INIT;
	R3q__CrlPush		 cp = R3Q__CRL_PUSH__INIT;
	const char		*path = getenv("R3Q_TESTPEER_CRL");
	static uint8_t		 buf[1 << 20];
	size_t			 n;
	FILE			*f;

	if (path == NULL || (f = fopen(path, "r")) == NULL) {
		printf("crl: set R3Q_TESTPEER_CRL to a readable file\n");
		return (1);
	}
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	w.protocol = R3Q_PROTOCOL;
	w.epoch = 77;
	w.queue_len = 2;
	w.crl.data = buf;
	w.crl.len = n;
	env.body_case = R3Q__ENVELOPE__BODY_WELCOME;
	env.welcome = &w;
	send_env(&env);
	cp.crl.data = buf;
	cp.crl.len = n;
	env.body_case = R3Q__ENVELOPE__BODY_CRL_PUSH;
	env.crl_push = &cp;
	send_env(&env);
	return (serve_idle("crl sent"));
}

/*
 * Be a master for one worker and one task of the given kind; kind "mute"
 * takes the worker's hello and never answers.
 */
static int
do_serve(SSL_CTX *ctx, const char *port, const char *kind)
{
	Envelope		 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__Welcome		 w = R3Q__WELCOME__INIT;
	R3q__Assign		 a = R3Q__ASSIGN__INIT;
	R3q__Task		 t = R3Q__TASK__INIT, *tp = &t;
	double			 x[2] = { 1, 1 };
	uint8_t			 payload[ES_PAYLOAD_HEAD + 2 * 8];
	int			 lfd, fd;

	if ((lfd = listen_loopback(port, 1)) == -1)
		return (1);
	alarm(20);
	if ((fd = accept(lfd, NULL, NULL)) == -1)
		return (1);
	ssl = SSL_new(ctx);
	SSL_set_fd(ssl, fd);
	if (SSL_accept(ssl) != 1) {
		printf("handshake failed\n");
		return (1);
	}
	if ((ans = recv_env()) == NULL ||
	    ans->body_case != R3Q__ENVELOPE__BODY_HELLO) {
		printf("no hello\n");
		return (1);
	}
	frame_free(ans);
	if (strcmp(kind, "crl") == 0)
		return (serve_crl());
	if (strcmp(kind, "mute") == 0) {
		/* Take the hello, answer nothing, keep the connection. */
		return (serve_idle("hello taken"));
	}
	w.protocol = R3Q_PROTOCOL;
	w.epoch = 77;
	w.queue_len = 2;
	env.body_case = R3Q__ENVELOPE__BODY_WELCOME;
	env.welcome = &w;
	send_env(&env);
	t.id = 5;
	t.kind = (char *)(uintptr_t)kind;
	es_payload_encode(payload, 0, 0, 0, x, 2);
	t.payload.data = payload;
	t.payload.len = sizeof(payload);
	a.epoch = 77;
	a.n_tasks = 1;
	a.tasks = &tp;
	env.body_case = R3Q__ENVELOPE__BODY_ASSIGN;
	env.assign = &a;
	send_env(&env);
	while ((ans = recv_env()) != NULL) {
		if (ans->body_case != R3Q__ENVELOPE__BODY_RESULTS ||
		    ans->results->n_results == 0) {
			frame_free(ans);
			continue;
		}
		printf("task %llu: %s: %s\n",
		    (unsigned long long)ans->results->results[0]->id,
		    task_status_name((int)ans->results->results[0]->status),
		    ans->results->results[0]->error);
		frame_free(ans);
		return (0);
	}
	printf("no result\n");
	return (1);
}

/* Listen on a datagram socket at path for secs seconds, as systemd would. */
static int
do_notify(const char *path, int secs)
{
	struct sockaddr_un	 sun;
	struct timeval		 tv = { 0, 100000 };
	char			 buf[4096], *p;
	ssize_t			 n;
	time_t			 end = time(NULL) + secs;
	int			 fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	unlink(path);
	if ((fd = socket(AF_UNIX, SOCK_DGRAM, 0)) == -1 ||
	    bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		perror(path);
		return (1);
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	printf("listening\n");
	while (time(NULL) < end) {
		if ((n = recv(fd, buf, sizeof(buf) - 1, 0)) <= 0)
			continue;
		buf[n] = '\0';
		while ((p = strchr(buf, '\n')) != NULL)
			*p = ' ';
		printf("%s\n", buf);
	}
	unlink(path);
	return (0);
}

/*
 * One relayed connection: the accepted side and the side dialled to the
 * target, with the bytes read from each and not yet written to the other.
 * Lives from accept until either side closes or fails.
 */
struct relay_conn {
	int	 rc_fd[2];		/* 0: accepted, 1: to the target */
	uint8_t	 rc_buf[2][16384];	/* read from rc_fd[i], for the other */
	size_t	 rc_len[2];
	int	 rc_eof[2];		/* rc_fd[i] said EOF */
};

#define RELAY_MAX	256

static volatile sig_atomic_t relay_silent, relay_quit;
static int	 relay_wake[2] = { -1, -1 };

/* Signals only set a flag and wake poll through the self-pipe. */
static void
relay_signal(int sig)
{
	int	 saved = errno;

	if (sig == SIGUSR1)
		relay_silent = 1;
	else if (sig == SIGUSR2)
		relay_silent = 0;
	else
		relay_quit = 1;
	if (write(relay_wake[1], "", 1) == -1) {
		/* The pipe is full: poll wakes up anyway. */
	}
	errno = saved;
}

/* Close both sides of a relayed connection. */
static void
relay_close(struct relay_conn **rc)
{
	close((*rc)->rc_fd[0]);
	close((*rc)->rc_fd[1]);
	free(*rc);
	*rc = NULL;
}

/* Accept one connection and dial the target for it; -1 if that failed. */
static int
relay_accept(int lfd, const char *host, const char *port,
    struct relay_conn **slot)
{
	struct relay_conn	*rc;
	struct timeval		 tv = { 0, 0 };
	int			 fd, tfd, i;

	if ((fd = accept(lfd, NULL, NULL)) == -1)
		return (-1);
	if (slot == NULL || (tfd = tcp_connect(host, port)) == -1) {
		printf("%s\n", slot == NULL ? "too many connections" :
		    "cannot reach the target");
		close(fd);
		return (-1);
	}
	/* tcp_connect set a receive timeout; this side polls instead. */
	setsockopt(tfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	rc = calloc(1, sizeof(*rc));
	if (rc == NULL) {
		close(fd);
		close(tfd);
		return (-1);
	}
	rc->rc_fd[0] = fd;
	rc->rc_fd[1] = tfd;
	for (i = 0; i < 2; i++)
		fcntl(rc->rc_fd[i], F_SETFL, fcntl(rc->rc_fd[i], F_GETFL) |
		    O_NONBLOCK);
	*slot = rc;
	return (0);
}

/*
 * Move what poll says can move on one connection: read from a side into
 * its buffer, write a buffer to the other side.  -1 when the connection is
 * over (an error, or an EOF whose bytes have all been passed on).
 */
static int
relay_move(struct relay_conn *rc, const struct pollfd *pfd)
{
	ssize_t	 n;
	int	 i, o;

	for (i = 0; i < 2; i++) {
		o = 1 - i;
		if (pfd[i].revents & (POLLERR | POLLNVAL))
			return (-1);
		/* Hung up with nowhere to put its last bytes: give up. */
		if ((pfd[i].revents & POLLHUP) &&
		    rc->rc_len[i] == sizeof(rc->rc_buf[i]))
			return (-1);
		if ((pfd[i].revents & (POLLIN | POLLHUP)) && !rc->rc_eof[i] &&
		    rc->rc_len[i] < sizeof(rc->rc_buf[i])) {
			n = read(rc->rc_fd[i], rc->rc_buf[i] + rc->rc_len[i],
			    sizeof(rc->rc_buf[i]) - rc->rc_len[i]);
			if (n == 0)
				rc->rc_eof[i] = 1;
			else if (n > 0)
				rc->rc_len[i] += (size_t)n;
			else if (errno != EAGAIN && errno != EINTR)
				return (-1);
		}
		if ((pfd[o].revents & POLLOUT) && rc->rc_len[i] > 0) {
			n = write(rc->rc_fd[o], rc->rc_buf[i], rc->rc_len[i]);
			if (n > 0) {
				rc->rc_len[i] -= (size_t)n;
				memmove(rc->rc_buf[i], rc->rc_buf[i] + n,
				    rc->rc_len[i]);
			} else if (n == -1 && errno != EAGAIN && errno != EINTR)
				return (-1);
		}
	}
	/* TLS needs no half-close: once one side is done, so is the pair. */
	for (i = 0; i < 2; i++)
		if (rc->rc_eof[i] && rc->rc_len[i] == 0)
			return (-1);
	return (0);
}

/*
 * Relay TCP from 127.0.0.1:port to host:tport, one connection to the target
 * for each accepted one.  While silent nothing is polled at all, not even
 * the listener: connections stay open, new ones wait in the backlog, and
 * the bytes stay in the kernel's buffers until SIGUSR2.
 */
static int
do_relay(const char *port, const char *host, const char *tport)
{
	static struct relay_conn *conns[RELAY_MAX];
	struct pollfd		 pfd[1 + 2 * RELAY_MAX + 1];
	struct sigaction	 sa;
	struct relay_conn	**slot;
	char			 b[64];
	int			 lfd, silent = 0, n, i, k;

	if (pipe(relay_wake) == -1) {
		perror("pipe");
		return (1);
	}
	fcntl(relay_wake[0], F_SETFL, O_NONBLOCK);
	fcntl(relay_wake[1], F_SETFL, O_NONBLOCK);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = relay_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	if ((lfd = listen_loopback(port, 16)) == -1)
		return (1);

	while (!relay_quit) {
		if (silent != relay_silent) {
			silent = relay_silent;
			printf("%s\n", silent ? "silent" : "forwarding");
		}
		pfd[0].fd = relay_wake[0];
		pfd[0].events = POLLIN;
		n = 1;
		if (!silent) {
			pfd[n].fd = lfd;
			pfd[n++].events = POLLIN;
			for (i = 0; i < RELAY_MAX; i++) {
				if (conns[i] == NULL)
					continue;
				for (k = 0; k < 2; k++) {
					pfd[n].fd = conns[i]->rc_fd[k];
					pfd[n].events = 0;
					if (!conns[i]->rc_eof[k] &&
					    conns[i]->rc_len[k] <
					    sizeof(conns[i]->rc_buf[k]))
						pfd[n].events |= POLLIN;
					if (conns[i]->rc_len[1 - k] > 0)
						pfd[n].events |= POLLOUT;
					pfd[n++].revents = 0;
				}
			}
		}
		if (poll(pfd, (nfds_t)n, -1) == -1) {
			if (errno == EINTR)
				continue;
			perror("poll");
			return (1);
		}
		if (pfd[0].revents & POLLIN)
			while (read(relay_wake[0], b, sizeof(b)) > 0)
				;
		/* A signal may have come since; it counts from now on. */
		if (silent || relay_silent || relay_quit)
			continue;
		for (i = 0, n = 2; i < RELAY_MAX; i++) {
			if (conns[i] == NULL)
				continue;
			if (relay_move(conns[i], &pfd[n]) == -1)
				relay_close(&conns[i]);
			n += 2;
		}
		if (pfd[1].revents & POLLIN) {
			for (i = 0, slot = NULL; i < RELAY_MAX; i++)
				if (conns[i] == NULL) {
					slot = &conns[i];
					break;
				}
			relay_accept(lfd, host, tport, slot);
		}
	}
	return (0);
}

/*
 * One emulated worker of the swarm: its TLS connection and the frame being
 * read from it.  An entry of do_swarm's array; lives from its join until
 * the swarm exits.
 */
struct swarm_conn {
	SSL		*sc_ssl;
	int		 sc_fd;
	char		 sc_name[32];		/* its CN, swarm-<i> */
	uint8_t		 sc_hdr[FRAME_HDRLEN];
	size_t		 sc_hlen;		/* header bytes read so far */
	uint8_t		*sc_body;		/* NULL while reading a header */
	uint32_t	 sc_blen;
	uint32_t	 sc_bgot;
	int		 sc_wpending;	/* a heartbeat waits to be retried */
	/* Sealed (common/seal.h): no SSL object once joined. */
	struct seal	*sc_seal;
	uint8_t		*sc_rec;		/* a record being read */
	size_t		 sc_rgot;
	uint8_t		*sc_plain;		/* its plaintext, */
	size_t		 sc_plen, sc_poff;	/* and what is left of it */
	uint8_t		*sc_wbuf;		/* a sealed heartbeat not all */
	size_t		 sc_wlen, sc_woff;	/* written yet */
};

#define SWARM_MAX	100000
#define SWARM_SPARE_FDS	16	/* stdio, the CA files, poll's slack */

static volatile sig_atomic_t swarm_quit;
static uint8_t	*swarm_hb;		/* the one heartbeat frame, packed */
static size_t	 swarm_hblen;
static uint64_t	 swarm_frames;		/* frames read and discarded */
static const char *swarm_kind;		/* offered (NULL: none), answered */
static uint64_t	 swarm_done;		/* tasks answered */

/* A signal only sets the flag; poll returns EINTR (no SA_RESTART). */
static void
swarm_signal(int sig)
{
	(void)sig;
	swarm_quit = 1;
}

/*
 * The first OpenSSL error queued, or what errno says (EAGAIN: the 5-second
 * receive timeout of tcp_connect); the queue is cleared.
 */
static const char *
swarm_ssl_error(char *buf, size_t len)
{
	unsigned long	 e;

	if ((e = ERR_get_error()) != 0)
		ERR_error_string_n(e, buf, len);
	else if (errno == EAGAIN || errno == EWOULDBLOCK)
		snprintf(buf, len, "no answer within 5 s");
	else
		snprintf(buf, len, "%s", errno ? strerror(errno) :
		    "connection closed");
	ERR_clear_error();
	return (buf);
}

/*
 * N connections need N descriptors and this process's soft limit is often
 * 1024: raise it to the hard limit, and say so plainly if that is not
 * enough.
 */
static int
swarm_nofile(uint64_t n)
{
	struct rlimit	 rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1) {
		perror("getrlimit");
		return (-1);
	}
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) == -1) {
		perror("setrlimit");
		return (-1);
	}
	if (rl.rlim_cur != RLIM_INFINITY &&
	    n + SWARM_SPARE_FDS > (uint64_t)rl.rlim_cur) {
		printf("swarm: %llu workers need %llu file descriptors; the "
		    "hard limit (ulimit -Hn) is %llu\n", (unsigned long long)n,
		    (unsigned long long)(n + SWARM_SPARE_FDS),
		    (unsigned long long)rl.rlim_cur);
		return (-1);
	}
	return (0);
}

/* Add one extension, written as in an openssl.cnf section, to x. */
static int
swarm_ext(X509 *x, X509 *ca, int nid, const char *value)
{
	X509V3_CTX	 v3;
	X509_EXTENSION	*ext;
	int		 rc;

	X509V3_set_ctx(&v3, ca, x, NULL, NULL, 0);
	if ((ext = X509V3_EXT_conf_nid(NULL, &v3, nid, value)) == NULL)
		return (-1);
	rc = X509_add_ext(x, ext, -1) == 1 ? 0 : -1;
	X509_EXTENSION_free(ext);
	return (rc);
}

/*
 * A certificate for role ou and name cn over key, signed by the CA: the
 * subject and the extensions scripts/mkcerts gives a leaf (O=R3Q, a client
 * and server leaf), a random serial, valid from `from` to `to` seconds
 * from now (a swarm's workers: from an hour ago, some slack for a clock
 * that differs, for a week).
 */
static X509 *
swarm_cert(X509 *ca, EVP_PKEY *cakey, EVP_PKEY *key, const char *ou,
    const char *cn, long from, long to)
{
	X509		*x;
	X509_NAME	*subj = NULL;
	BIGNUM		*serial = NULL;

	if ((x = X509_new()) == NULL || (subj = X509_NAME_new()) == NULL ||
	    (serial = BN_new()) == NULL)
		goto fail;
	if (X509_set_version(x, X509_VERSION_3) != 1 ||
	    BN_rand(serial, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1 ||
	    BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(x)) == NULL ||
	    X509_gmtime_adj(X509_getm_notBefore(x), from) == NULL ||
	    X509_gmtime_adj(X509_getm_notAfter(x), to) == NULL)
		goto fail;
	if (X509_NAME_add_entry_by_txt(subj, "O", MBSTRING_ASC,
	    (const unsigned char *)"R3Q", -1, -1, 0) != 1 ||
	    X509_NAME_add_entry_by_txt(subj, "OU", MBSTRING_ASC,
	    (const unsigned char *)ou, -1, -1, 0) != 1 ||
	    X509_NAME_add_entry_by_txt(subj, "CN", MBSTRING_ASC,
	    (const unsigned char *)cn, -1, -1, 0) != 1 ||
	    X509_set_subject_name(x, subj) != 1 ||
	    X509_set_issuer_name(x, X509_get_subject_name(ca)) != 1 ||
	    X509_set_pubkey(x, key) != 1)
		goto fail;
	/* The subject key identifier hashes the key set just above. */
	if (swarm_ext(x, ca, NID_basic_constraints, "critical,CA:FALSE") ||
	    swarm_ext(x, ca, NID_key_usage, "critical,digitalSignature") ||
	    swarm_ext(x, ca, NID_ext_key_usage, "serverAuth,clientAuth") ||
	    swarm_ext(x, ca, NID_subject_key_identifier, "hash") ||
	    swarm_ext(x, ca, NID_authority_key_identifier, "keyid:always"))
		goto fail;
	if (X509_sign(x, cakey, EVP_sha256()) <= 0)
		goto fail;
	X509_NAME_free(subj);
	BN_free(serial);
	return (x);
fail:
	X509_free(x);
	X509_NAME_free(subj);
	BN_free(serial);
	return (NULL);
}

/* The CA's certificate and key from their PEM files; -1 after saying why. */
static int
swarm_load_ca(const char *capath, const char *keypath, X509 **ca,
    EVP_PKEY **cakey)
{
	FILE	*f;
	char	 err[256];

	*ca = NULL;
	*cakey = NULL;
	if ((f = fopen(capath, "r")) == NULL) {
		perror(capath);
		return (-1);
	}
	*ca = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	if (*ca == NULL) {
		printf("swarm: %s: %s\n", capath, swarm_ssl_error(err,
		    sizeof(err)));
		return (-1);
	}
	if ((f = fopen(keypath, "r")) == NULL) {
		perror(keypath);
		return (-1);
	}
	*cakey = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	if (*cakey == NULL) {
		printf("swarm: %s: %s\n", keypath, swarm_ssl_error(err,
		    sizeof(err)));
		return (-1);
	}
	if (X509_check_private_key(*ca, *cakey) != 1) {
		ERR_clear_error();
		printf("swarm: %s is not the key of %s\n", keypath, capath);
		return (-1);
	}
	return (0);
}

/*
 * Join the master as one worker, blocking: TCP, the TLS handshake with
 * this worker's own certificate, a hello and its Welcome.  The socket is
 * non-blocking afterwards.  -1 after saying, with the worker's name, why
 * not.
 */
static int
swarm_join(SSL_CTX *ctx, const char *host, const char *port,
    struct swarm_conn *sc, X509 *cert, EVP_PKEY *key)
{
	Envelope	 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__Hello	 h = R3Q__HELLO__INIT;
	char		 err[256];
	int		 one = 1;

	errno = 0;
	if ((sc->sc_fd = tcp_connect(host, port)) == -1) {
		printf("swarm: %s: cannot connect to %s port %s: %s\n",
		    sc->sc_name, host, port, strerror(errno));
		return (-1);
	}
	/*
	 * Without it the hello waits behind the client's Finished for the
	 * master's delayed ACK: 40 ms a worker.
	 */
	setsockopt(sc->sc_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if ((sc->sc_ssl = tls_client_ssl(ctx, host, err,
	    sizeof(err))) == NULL) {
		printf("swarm: %s: %s\n", sc->sc_name, err);
		return (-1);
	}
	/* This connection presents its own name, over the shared key. */
	if (SSL_use_certificate(sc->sc_ssl, cert) != 1 ||
	    SSL_use_PrivateKey(sc->sc_ssl, key) != 1 ||
	    SSL_check_private_key(sc->sc_ssl) != 1) {
		printf("swarm: %s: cannot use its certificate: %s\n",
		    sc->sc_name, swarm_ssl_error(err, sizeof(err)));
		return (-1);
	}
	if (seal_client_offer(sc->sc_ssl) == -1) {
		printf("swarm: %s: cannot offer to seal\n", sc->sc_name);
		return (-1);
	}
	SSL_set_fd(sc->sc_ssl, sc->sc_fd);
	errno = 0;
	if (SSL_connect(sc->sc_ssl) != 1) {
		printf("swarm: %s: TLS handshake failed: %s\n", sc->sc_name,
		    swarm_ssl_error(err, sizeof(err)));
		return (-1);
	}
	ssl = sc->sc_ssl;
	if (seal_begin(sc->sc_fd) == -1)
		return (-1);
	sc->sc_seal = tp_seal;
	h.protocol = R3Q_PROTOCOL;
	h.name = sc->sc_name;
	h.cpus = 1;
	h.version = (char *)(uintptr_t)"r3q-testpeer swarm";
	if (swarm_kind != NULL) {
		h.kinds = (char **)(uintptr_t)&swarm_kind;
		h.n_kinds = 1;
	}
	env.body_case = R3Q__ENVELOPE__BODY_HELLO;
	env.hello = &h;
	errno = 0;
	if (send_env(&env) == -1) {
		printf("swarm: %s: cannot send its hello: %s\n", sc->sc_name,
		    swarm_ssl_error(err, sizeof(err)));
		return (-1);
	}
	/*
	 * Under TLS 1.3 the master checks the client's certificate after the
	 * client has finished the handshake: a refusal arrives here.
	 */
	errno = 0;
	if ((ans = recv_env()) == NULL) {
		printf("swarm: %s: closed by the master without a Welcome: "
		    "%s\n", sc->sc_name, swarm_ssl_error(err, sizeof(err)));
		return (-1);
	}
	if (ans->body_case != R3Q__ENVELOPE__BODY_WELCOME) {
		if (ans->body_case == R3Q__ENVELOPE__BODY_ERROR)
			printf("swarm: %s: refused by the master: %s\n",
			    sc->sc_name, ans->error->message);
		else
			printf("swarm: %s: %s instead of a Welcome\n",
			    sc->sc_name, frame_body_name(ans));
		frame_free(ans);
		return (-1);
	}
	frame_free(ans);
	if (sc->sc_seal != NULL) {
		/* What came after the Welcome in its record, and no SSL. */
		if (tp_poff < tp_plen) {
			sc->sc_plain = xcalloc(1, SEAL_RECORD_MAX);
			sc->sc_plen = tp_plen - tp_poff;
			memcpy(sc->sc_plain, tp_plain + tp_poff, sc->sc_plen);
		}
		tp_seal = NULL;
		SSL_free(sc->sc_ssl);
		sc->sc_ssl = ssl = NULL;
	}
	fcntl(sc->sc_fd, F_SETFL, fcntl(sc->sc_fd, F_GETFL) | O_NONBLOCK);
	return (0);
}

/*
 * Read from a joined connection, sealed or not: 1 with *n bytes, 0 if
 * nothing is there yet, -1 once closed (err says why).
 */
static int
swarm_recv(struct swarm_conn *sc, uint8_t *dst, size_t want, size_t *n,
    char *err, size_t errlen)
{
	size_t	 need;
	ssize_t	 r;
	int	 e;

	if (sc->sc_seal == NULL) {
		errno = 0;
		if (SSL_read_ex(sc->sc_ssl, dst, want, n) == 1)
			return (1);
		e = SSL_get_error(sc->sc_ssl, 0);
		/*
		 * WANT_WRITE would be a TLS 1.3 key update that found the
		 * socket buffer full; the next heartbeat's poll covers that.
		 */
		if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
			return (0);
		if (e == SSL_ERROR_ZERO_RETURN)
			snprintf(err, errlen, "TLS close_notify");
		else
			swarm_ssl_error(err, errlen);
		return (-1);
	}
	for (;;) {
		if (sc->sc_poff < sc->sc_plen) {
			*n = sc->sc_plen - sc->sc_poff < want ?
			    sc->sc_plen - sc->sc_poff : want;
			memcpy(dst, sc->sc_plain + sc->sc_poff, *n);
			sc->sc_poff += *n;
			return (1);
		}
		if (sc->sc_rec == NULL)
			sc->sc_rec = xcalloc(1, SEAL_RECORD_MAX +
			    SEAL_OVERHEAD);
		need = SEAL_HDRLEN;
		if (sc->sc_rgot >= SEAL_HDRLEN &&
		    (need = seal_record_len(sc->sc_rec)) == 0) {
			snprintf(err, errlen, "a sealed record of a length "
			    "out of range");
			return (-1);
		}
		if (sc->sc_rgot < need) {
			r = read(sc->sc_fd, sc->sc_rec + sc->sc_rgot,
			    need - sc->sc_rgot);
			if (r == -1 && (errno == EAGAIN ||
			    errno == EWOULDBLOCK || errno == EINTR))
				return (0);
			if (r <= 0) {
				snprintf(err, errlen, "%s", r == 0 ? "EOF" :
				    strerror(errno));
				return (-1);
			}
			sc->sc_rgot += (size_t)r;
			continue;
		}
		if (sc->sc_plain == NULL)
			sc->sc_plain = xcalloc(1, SEAL_RECORD_MAX);
		if (seal_open(sc->sc_seal, sc->sc_rec, need, sc->sc_plain,
		    &sc->sc_plen) == -1) {
			snprintf(err, errlen, "%s", seal_error(sc->sc_seal));
			return (-1);
		}
		sc->sc_poff = 0;
		sc->sc_rgot = 0;
		free(sc->sc_rec);
		sc->sc_rec = NULL;
	}
}

/*
 * The swarm with a kind (a benchmark of the master's cost per task): every
 * task assigned is answered at once, its payload as its output (a no-op
 * echo), its tag echoed.  Written whole, waiting for the socket if need be.
 */
static void
swarm_answer(struct swarm_conn *sc, const R3q__Assign *a)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__Results	 rs = R3Q__RESULTS__INIT;
	R3q__Result	*r, **rp;
	struct evbuffer	*b;
	struct pollfd	 pfd;
	uint64_t	 now = (uint64_t)time(NULL) * NS_PER_SEC;
	size_t		 i, n, len;
	uint8_t		*p;
	int		 e;

	if (a->n_tasks == 0)
		return;
	r = xcalloc(a->n_tasks, sizeof(*r));
	rp = xcalloc(a->n_tasks, sizeof(*rp));
	for (i = 0; i < a->n_tasks; i++) {
		r3q__result__init(&r[i]);
		r[i].id = a->tasks[i]->id;
		r[i].status = 0;
		r[i].epoch = a->epoch;
		r[i].tag = a->tasks[i]->tag;
		r[i].output = a->tasks[i]->payload;
		r[i].start_ns = r[i].end_ns = r[i].received_ns = now;
		for (n = 0; n < a->n_replicas; n++)
			if (a->replicas[n] == r[i].id)
				r[i].replica = 1;
		rp[i] = &r[i];
	}
	rs.results = rp;
	rs.n_results = a->n_tasks;
	env.body_case = R3Q__ENVELOPE__BODY_RESULTS;
	env.results = &rs;
	if ((b = evbuffer_new()) == NULL || frame_write(b, &env) == -1) {
		printf("swarm: %s: cannot pack results\n", sc->sc_name);
		exit(1);
	}
	len = evbuffer_get_length(b);
	p = evbuffer_pullup(b, -1);
	if (sc->sc_seal != NULL && seal_put(sc->sc_seal, sc->sc_fd, p,
	    len) == -1) {
		printf("swarm: %s: cannot send results\n", sc->sc_name);
		len = 0;
	}
	while (sc->sc_seal == NULL && len > 0) {
		if (SSL_write_ex(sc->sc_ssl, p, len, &n) == 1) {
			p += n;
			len -= n;
			continue;
		}
		e = SSL_get_error(sc->sc_ssl, 0);
		if (e != SSL_ERROR_WANT_WRITE && e != SSL_ERROR_WANT_READ) {
			printf("swarm: %s: cannot send results\n",
			    sc->sc_name);
			break;
		}
		pfd.fd = sc->sc_fd;
		pfd.events = e == SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN;
		(void)poll(&pfd, 1, 100);
	}
	swarm_done += a->n_tasks;
	evbuffer_free(b);
	free(rp);
	free(r);
}

/* A whole frame has come in on sc: an Error is worth saying, the rest not. */
static void
swarm_frame(struct swarm_conn *sc)
{
	Envelope	*env;
	char		 err[256];

	swarm_frames++;
	if (frame_unpack(sc->sc_body, sc->sc_blen, FRAME_MAX_DEFAULT, &env,
	    err, sizeof(err)) == -1) {
		printf("swarm: %s: bad frame from the master: %s\n",
		    sc->sc_name, err);
		return;
	}
	if (env->body_case == R3Q__ENVELOPE__BODY_ERROR)
		printf("swarm: %s: error from the master: %s\n", sc->sc_name,
		    env->error->message);
	if (env->body_case == R3Q__ENVELOPE__BODY_ASSIGN && swarm_kind != NULL)
		swarm_answer(sc, env->assign);
	frame_free(env);
}

/*
 * Read what has come on a non-blocking connection, frame by frame, and
 * discard it.  -1 once the master has closed it, after saying so.
 */
static int
swarm_read(struct swarm_conn *sc)
{
	uint8_t	*dst;
	size_t	 want, n;
	char	 err[256];
	int	 e;

	for (;;) {
		if (sc->sc_body == NULL) {
			dst = sc->sc_hdr + sc->sc_hlen;
			want = sizeof(sc->sc_hdr) - sc->sc_hlen;
		} else {
			dst = sc->sc_body + sc->sc_bgot;
			want = sc->sc_blen - sc->sc_bgot;
		}
		if ((e = swarm_recv(sc, dst, want, &n, err,
		    sizeof(err))) == 0)
			return (0);
		if (e == -1) {
			printf("swarm: %s: connection closed by the master: "
			    "%s\n", sc->sc_name, err);
			return (-1);
		}
		if (sc->sc_body == NULL) {
			sc->sc_hlen += n;
			if (sc->sc_hlen < sizeof(sc->sc_hdr))
				continue;
			if (frame_header_decode(sc->sc_hdr, FRAME_MAX_DEFAULT,
			    &sc->sc_blen, err, sizeof(err)) == -1) {
				printf("swarm: %s: bad frame from the master: "
				    "%s\n", sc->sc_name, err);
				return (-1);
			}
			/* One byte more, so that an empty body is not NULL. */
			if ((sc->sc_body = malloc(sc->sc_blen + 1)) == NULL) {
				perror("malloc");
				return (-1);
			}
			sc->sc_bgot = 0;
		} else
			sc->sc_bgot += (uint32_t)n;
		if (sc->sc_bgot == sc->sc_blen) {
			swarm_frame(sc);
			free(sc->sc_body);
			sc->sc_body = NULL;
			sc->sc_hlen = 0;
		}
	}
}

/*
 * Send sc its heartbeat, or the one that could not go last time.  A retry
 * passes the same buffer and length, as OpenSSL wants.  -1 once the master
 * has closed the connection, after saying so.
 */
static int
swarm_heartbeat(struct swarm_conn *sc)
{
	size_t	 n;
	ssize_t	 r;
	char	 err[256];
	int	 e;

	if (sc->sc_seal != NULL) {
		if (sc->sc_wbuf == NULL) {
			sc->sc_wbuf = xcalloc(1, swarm_hblen + SEAL_OVERHEAD);
			sc->sc_wlen = seal_record(sc->sc_seal, swarm_hb,
			    swarm_hblen, sc->sc_wbuf);
			sc->sc_woff = 0;
		}
		while (sc->sc_woff < sc->sc_wlen) {
			r = write(sc->sc_fd, sc->sc_wbuf + sc->sc_woff,
			    sc->sc_wlen - sc->sc_woff);
			if (r == -1 && (errno == EAGAIN ||
			    errno == EWOULDBLOCK || errno == EINTR)) {
				sc->sc_wpending = 1;
				return (0);
			}
			if (r <= 0) {
				printf("swarm: %s: cannot send a heartbeat: "
				    "%s\n", sc->sc_name, strerror(errno));
				return (-1);
			}
			sc->sc_woff += (size_t)r;
		}
		free(sc->sc_wbuf);
		sc->sc_wbuf = NULL;
		sc->sc_wpending = 0;
		return (0);
	}
	errno = 0;
	if (SSL_write_ex(sc->sc_ssl, swarm_hb, swarm_hblen, &n) == 1) {
		sc->sc_wpending = 0;
		return (0);
	}
	e = SSL_get_error(sc->sc_ssl, 0);
	if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ) {
		sc->sc_wpending = 1;
		return (0);
	}
	printf("swarm: %s: cannot send a heartbeat: %s\n", sc->sc_name,
	    swarm_ssl_error(err, sizeof(err)));
	return (-1);
}

/*
 * Keep the swarm alive until SIGTERM or SIGINT: a heartbeat on every
 * connection each second (the master's heartbeat_timeout must never see
 * one of them go quiet), and whatever the master sends read and dropped.
 * A signal interrupts poll (no SA_RESTART); one that comes just before it
 * waits for the next heartbeat, a second at most.
 */
static int
swarm_run(struct swarm_conn *sc, size_t n)
{
	struct pollfd	*pfd;
	uint64_t	 now, next;
	size_t		 i;
	int		 timeout, rc = 1;

	if ((pfd = calloc(n, sizeof(*pfd))) == NULL) {
		perror("calloc");
		return (1);
	}
	next = mono_ns() + NS_PER_SEC;
	while (!swarm_quit) {
		now = mono_ns();
		if (now >= next) {
			for (i = 0; i < n; i++)
				if (swarm_heartbeat(&sc[i]) == -1)
					goto out;
			next += NS_PER_SEC;
			if (next <= now)
				next = now + NS_PER_SEC;
		}
		for (i = 0; i < n; i++) {
			pfd[i].fd = sc[i].sc_fd;
			pfd[i].events = POLLIN | (sc[i].sc_wpending ?
			    POLLOUT : 0);
			pfd[i].revents = 0;
		}
		timeout = (int)((next - now + NS_PER_MS - 1) / NS_PER_MS);
		if (poll(pfd, (nfds_t)n, timeout) == -1) {
			if (errno == EINTR)
				continue;
			perror("poll");
			goto out;
		}
		for (i = 0; i < n; i++) {
			if ((pfd[i].revents & (POLLIN | POLLHUP | POLLERR)) &&
			    swarm_read(&sc[i]) == -1)
				goto out;
			if ((pfd[i].revents & POLLOUT) && sc[i].sc_wpending &&
			    swarm_heartbeat(&sc[i]) == -1)
				goto out;
		}
	}
	rc = 0;
out:
	free(pfd);
	return (rc);
}

/*
 * N emulated workers, each with its own certificate (the master names a
 * worker after its certificate's CN and drops an older connection of the
 * same name), for masterd's memory benchmark.  They join one after the
 * other with blocking sockets: on loopback a thousand handshakes take
 * seconds, and the master sees the joins in a known order.
 */
static int
do_swarm(SSL_CTX *ctx, const char *capath, const char *host,
    const char *port, const char *count, const char *cakeypath,
    const char *prefix)
{
	Envelope		 env = R3Q__ENVELOPE__INIT;
	R3q__Heartbeat		 hb = R3Q__HEARTBEAT__INIT;
	struct sigaction	 sa;
	struct swarm_conn	*sc;
	X509			*ca, *cert;
	EVP_PKEY		*cakey, *key;
	uint64_t		 n, t0, next;
	size_t			 i, joined = 0;
	char			 err[256];
	int			 rc;

	if (parse_u64(count, 1, SWARM_MAX, &n) == -1) {
		printf("swarm: bad worker count '%s': want 1 to %d\n", count,
		    SWARM_MAX);
		return (1);
	}
	if (swarm_nofile(n) == -1 ||
	    swarm_load_ca(capath, cakeypath, &ca, &cakey) == -1)
		return (1);
	if ((key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256")) == NULL) {
		printf("swarm: cannot make a key: %s\n",
		    swarm_ssl_error(err, sizeof(err)));
		return (1);
	}
	if ((sc = calloc(n, sizeof(*sc))) == NULL) {
		perror("calloc");
		return (1);
	}
	hb.interval_ms = 1000;
	env.body_case = R3Q__ENVELOPE__BODY_HEARTBEAT;
	env.heartbeat = &hb;
	if ((swarm_hb = frame_pack(&env, &swarm_hblen)) == NULL) {
		perror("frame_pack");
		return (1);
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = swarm_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	/*
	 * The workers that have joined need their heartbeats while the others
	 * join, or a slow join would outlast heartbeat_timeout.
	 */
	t0 = mono_ns();
	next = t0 + NS_PER_SEC;
	for (joined = 0; joined < n && !swarm_quit; joined++) {
		if (mono_ns() >= next) {
			for (i = 0; i < joined; i++)
				if (swarm_heartbeat(&sc[i]) == -1) {
					rc = 1;
					goto out;
				}
			next += NS_PER_SEC;
		}
		snprintf(sc[joined].sc_name, sizeof(sc[joined].sc_name),
		    "%s-%zu", prefix, joined + 1);
		if ((cert = swarm_cert(ca, cakey, key, "worker",
		    sc[joined].sc_name, -3600, 90 * 86400L)) == NULL) {
			printf("swarm: %s: cannot issue its certificate: %s\n",
			    sc[joined].sc_name, swarm_ssl_error(err,
			    sizeof(err)));
			rc = 1;
			goto out;
		}
		/* The SSL holds its own reference to the certificate. */
		rc = swarm_join(ctx, host, port, &sc[joined], cert, key);
		X509_free(cert);
		if (rc == -1) {
			/* Half set up: closed here, not with the others. */
			SSL_free(sc[joined].sc_ssl);
			seal_free(sc[joined].sc_seal);
			tp_seal = NULL;
			if (sc[joined].sc_fd != -1)
				close(sc[joined].sc_fd);
			/* A signal may have broken the join off: no failure. */
			rc = swarm_quit ? 0 : 1;
			goto out;
		}
	}
	if (swarm_quit) {
		printf("swarm: interrupted with %zu of %llu workers joined\n",
		    joined, (unsigned long long)n);
		rc = 0;
		goto out;
	}
	printf("swarm: %llu workers joined in %.2f s\n",
	    (unsigned long long)n, (double)(mono_ns() - t0) / NS_PER_SEC);
	fflush(stdout);

	rc = swarm_run(sc, n);
	if (rc == 0)
		printf("swarm: closing %llu connections (%llu frames from the "
		    "master discarded)\n", (unsigned long long)n,
		    (unsigned long long)swarm_frames);
out:
	for (i = 0; i < joined; i++) {
		/* One close_notify, without waiting for the master's. */
		if (sc[i].sc_ssl != NULL)
			SSL_shutdown(sc[i].sc_ssl);
		SSL_free(sc[i].sc_ssl);
		close(sc[i].sc_fd);
		free(sc[i].sc_body);
		seal_free(sc[i].sc_seal);
		free(sc[i].sc_rec);
		free(sc[i].sc_plain);
		free(sc[i].sc_wbuf);
	}
	free(sc);
	free(swarm_hb);
	EVP_PKEY_free(key);
	EVP_PKEY_free(cakey);
	X509_free(ca);
	return (rc);
}

/*
 * Sealed frames gone wrong (sealed.sh): a worker that agreed to seal and
 * then sends its hello in TLS without waiting for the mark (early), a
 * record whose tag is wrong (tag), a length out of range (length), its
 * sealed hello twice, the second out of sequence (replay), or its hello
 * and then the first 10 bytes of a record, and no more (stall).  Prints
 * whether the master closed the connection.
 */
static int
do_sealbad(SSL_CTX *ctx, const char *host, const char *port, const char *cn,
    const char *what)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__Hello	 h = R3Q__HELLO__INIT;
	uint8_t		*frame, rec[SEAL_RECORD_MAX + SEAL_OVERHEAD];
	size_t		 len, n;
	int		 fd;

	tp_offer_seal = 1;
	if ((fd = tls_dial(ctx, host, port)) == -1)
		return (1);
	if (!seal_agreed(ssl)) {
		printf("the master did not agree to seal\n");
		return (1);
	}
	h.protocol = R3Q_PROTOCOL;
	h.name = (char *)(uintptr_t)cn;
	h.cpus = 1;
	h.version = (char *)(uintptr_t)"r3q-testpeer sealbad";
	env.body_case = R3Q__ENVELOPE__BODY_HELLO;
	env.hello = &h;
	if ((frame = frame_pack(&env, &len)) == NULL || len >
	    SEAL_RECORD_MAX) {
		printf("cannot pack a hello\n");
		return (1);
	}
	if (strcmp(what, "early") == 0) {
		if (put(frame, len) == -1) {
			printf("cannot send a hello\n");
			return (1);
		}
		printf("sent its hello in TLS\n");
		free(frame);
		return (report_close());
	}
	if (seal_begin(fd) == -1)
		return (1);
	if ((n = seal_record(tp_seal, frame, len, rec)) == 0) {
		printf("cannot seal: %s\n", seal_error(tp_seal));
		return (1);
	}
	free(frame);
	if (strcmp(what, "tag") == 0) {
		rec[n - 1] ^= 0x01;
		if (write_all(fd, rec, n) == -1)
			return (1);
	} else if (strcmp(what, "length") == 0) {
		rec[0] = 0x00;
		rec[1] = 0xff;
		rec[2] = 0xff;
		rec[3] = 0xff;
		if (write_all(fd, rec, n) == -1)
			return (1);
	} else if (strcmp(what, "replay") == 0) {
		if (write_all(fd, rec, n) == -1 || write_all(fd, rec, n) == -1)
			return (1);
	} else if (strcmp(what, "stall") == 0) {
		if (write_all(fd, rec, n) == -1 ||
		    (n = seal_record(tp_seal, "0123456789", 10, rec)) == 0 ||
		    write_all(fd, rec, 10) == -1)
			return (1);
	} else
		usage();
	printf("sent a %s record\n", what);
	return (report_close());
}

/*
 * Issue a certificate for role ou and name cn, valid from `from` to `to`
 * seconds from now (either may be negative), with a new key: out.pem and
 * out.key.  For tests of expired and not yet valid certificates, which
 * openssl(1) of OpenSSL 3.0 cannot make.
 */
static int
do_issue(const char *capath, const char *cakeypath, const char *ou,
    const char *cn, const char *from, const char *to, const char *out)
{
	X509		*ca, *x;
	EVP_PKEY	*cakey, *key;
	FILE		*f;
	char		 path[1024], err[256];
	int		 fd;

	if (swarm_load_ca(capath, cakeypath, &ca, &cakey) == -1)
		return (1);
	if ((key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256")) == NULL ||
	    (x = swarm_cert(ca, cakey, key, ou, cn, atol(from),
	    atol(to))) == NULL) {
		printf("issue: %s\n", swarm_ssl_error(err, sizeof(err)));
		return (1);
	}
	snprintf(path, sizeof(path), "%s.key", out);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600)) == -1 ||
	    (f = fdopen(fd, "w")) == NULL ||
	    PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL) != 1 ||
	    fclose(f) != 0) {
		perror(path);
		return (1);
	}
	snprintf(path, sizeof(path), "%s.pem", out);
	if ((f = fopen(path, "w")) == NULL || PEM_write_X509(f, x) != 1 ||
	    fclose(f) != 0) {
		perror(path);
		return (1);
	}
	X509_free(x);
	EVP_PKEY_free(key);
	X509_free(ca);
	EVP_PKEY_free(cakey);
	return (0);
}

/* relayopen: a relay asks for streams the master must refuse, then one. */
static void
ro_open(uint32_t stream, const char *name, char **via, size_t nvia,
    const uint8_t *der, size_t derlen)
{
	Envelope		 env = R3Q__ENVELOPE__INIT;
	R3q__RelayControl	 rc = R3Q__RELAY_CONTROL__INIT;

	rc.stream = stream;
	rc.op = 1;
	rc.name = (char *)(uintptr_t)name;
	rc.role = (char *)(uintptr_t)"worker";
	rc.via = via;
	rc.n_via = nvia;
	rc.address = (char *)(uintptr_t)"192.0.2.1:1";
	rc.cert.data = (uint8_t *)(uintptr_t)der;
	rc.cert.len = derlen;
	env.body_case = R3Q__ENVELOPE__BODY_RELAY_CONTROL;
	env.relay_control = &rc;
	(void)send_env(&env);
}

static void
ro_data(uint32_t stream, const Envelope *inner)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__RelayData	 rd = R3Q__RELAY_DATA__INIT;
	uint8_t		*buf;
	size_t		 len;

	if ((buf = frame_pack(inner, &len)) == NULL)
		return;
	rd.stream = stream;
	rd.data.data = buf;
	rd.data.len = len;
	env.body_case = R3Q__ENVELOPE__BODY_RELAY_DATA;
	env.relay_data = &rd;
	(void)send_env(&env);
	free(buf);
}

/*
 * The DER of NAME.pem beside certificate file cert (a relay passes each
 * worker's certificate), malloc'd; NULL if there is none.
 */
static uint8_t *
ro_cert(const char *cert, const char *name, size_t *len)
{
	char		 path[1024];
	const char	*slash = strrchr(cert, '/');
	FILE		*f;
	X509		*x;
	unsigned char	*der = NULL;
	int		 n;

	*len = 0;
	snprintf(path, sizeof(path), "%.*s%s.pem", slash != NULL ?
	    (int)(slash - cert + 1) : 0, cert, name);
	if ((f = fopen(path, "r")) == NULL)
		return (NULL);
	x = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	if (x != NULL && (n = i2d_X509(x, &der)) > 0)
		*len = (size_t)n;
	X509_free(x);
	return (der);
}

/*
 * Join the master as relay self (a worker's hello, one CPU), with reads
 * that time out after 30 s: the socket, and the welcome's epoch in *epoch
 * (unless NULL); or -1 after saying why.
 */
int
relay_join(SSL_CTX *ctx, const char *host, const char *port,
    const char *self, uint64_t *epoch)
{
	Envelope	 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__Hello	 h = R3Q__HELLO__INIT;
	struct timeval	 tv = { 30, 0 };
	int		 fd;

	if ((fd = tls_dial(ctx, host, port)) == -1)
		return (-1);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	h.protocol = R3Q_PROTOCOL;
	h.name = (char *)(uintptr_t)self;
	h.cpus = 1;
	env.body_case = R3Q__ENVELOPE__BODY_HELLO;
	env.hello = &h;
	if (send_env(&env) == -1 || (ans = recv_env()) == NULL ||
	    ans->body_case != R3Q__ENVELOPE__BODY_WELCOME) {
		printf("relay %s not welcomed\n", self);
		return (-1);
	}
	if (epoch != NULL)
		*epoch = ans->welcome->epoch;
	frame_free(ans);
	return (fd);
}

static int
do_relayopen(SSL_CTX *ctx, const char *host, const char *port,
    const char *self, const char *name, const char *cert)
{
	Envelope	 env = R3Q__ENVELOPE__INIT, *ans, *in;
	R3q__Hello	 h = R3Q__HELLO__INIT;
	char		*bad[1] = { (char *)(uintptr_t)"elsewhere" };
	char		*loop[2] = { (char *)(uintptr_t)name, NULL };
	char		*good[1];
	char		 err[256];
	uint8_t		*der;
	size_t		 derlen;
	int		 refused = 0, welcomed = 0;

	good[0] = (char *)(uintptr_t)self;
	loop[1] = (char *)(uintptr_t)self;
	if (relay_join(ctx, host, port, self, NULL) == -1)
		return (1);
	/* The hello sent again, as the relayed worker's, on stream 3. */
	h.protocol = R3Q_PROTOCOL;
	h.cpus = 1;
	env.body_case = R3Q__ENVELOPE__BODY_HELLO;
	env.hello = &h;
	der = ro_cert(cert, name, &derlen);
	ro_open(1, name, bad, 1, der, derlen);	/* path does not end at us */
	ro_open(2, name, loop, 2, der, derlen);	/* the worker on its path */
	ro_open(3, name, good, 1, der, derlen);
	free(der);
	h.name = (char *)(uintptr_t)name;
	ro_data(3, &env);
	ro_data(99, &env);			/* never opened */
	while (welcomed == 0 && (ans = recv_env()) != NULL) {
		if (ans->body_case == R3Q__ENVELOPE__BODY_RELAY_CONTROL &&
		    ans->relay_control->op == 2) {
			printf("stream %u refused: %s\n",
			    ans->relay_control->stream,
			    ans->relay_control->reason);
			if (ans->relay_control->stream != 3)
				refused++;
		} else if (ans->body_case == R3Q__ENVELOPE__BODY_RELAY_DATA &&
		    ans->relay_data->stream == 3 &&
		    ans->relay_data->data.len > FRAME_HDRLEN &&
		    frame_unpack(ans->relay_data->data.data + FRAME_HDRLEN,
		    ans->relay_data->data.len - FRAME_HDRLEN, 1 << 20, &in,
		    err, sizeof(err)) == 0) {
			if (in->body_case == R3Q__ENVELOPE__BODY_WELCOME) {
				printf("stream 3 welcomed as %s\n", name);
				welcomed = 1;
			}
			frame_free(in);
		}
		frame_free(ans);
	}
	printf("relayopen: %d refused, %d welcomed\n", refused, welcomed);
	return (refused == 2 && welcomed ? 0 : 1);
}

/* What do_join made (LeakSanitizer reads the test tools too). */
static void
join_free(EVP_PKEY *key, unsigned char *der, SSL_CTX *ctx)
{
	EVP_PKEY_free(key);
	OPENSSL_free(der);
	if (ssl != NULL)
		SSL_free(ssl);
	ssl = NULL;
	SSL_CTX_free(ctx);
}

/* A joiner's JoinRequest, well or badly made: see the top. */
static int
do_join(const char *host, const char *port, const char *tok,
    const char *rawname, const char *kt)
{
	Envelope		 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__JoinRequest	 jr = R3Q__JOIN_REQUEST__INIT;
	R3q__Hello		 h = R3Q__HELLO__INIT;
	SSL_CTX			*ctx;
	EVP_PKEY		*key = NULL;
	X509_REQ		*req;
	X509			*x;
	BIO			*b;
	unsigned char		*der = NULL;
	char			 name[256], subj[256];
	size_t			 n = 0, i;
	int			 fd, len;

	for (i = 0; rawname[i] != '\0' && n < sizeof(name); i++) {
		if (rawname[i] == '\\' && rawname[i + 1] == '0') {
			name[n++] = '\0';
			i++;
		} else
			name[n++] = rawname[i];
	}
	if ((ctx = SSL_CTX_new(TLS_client_method())) == NULL)
		return (1);
	SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
	if ((fd = tcp_connect(host, port)) == -1) {
		printf("cannot connect\n");
		return (1);
	}
	ssl = SSL_new(ctx);
	SSL_set_fd(ssl, fd);
	if (SSL_connect(ssl) != 1) {
		printf("handshake failed\n");
		return (1);
	}
	/* The master's greeting: an empty JoinAnswer. */
	if ((ans = recv_env()) == NULL) {
		printf("closed\n");
		join_free(key, der, ctx);
		return (0);
	}
	if (ans->body_case != R3Q__ENVELOPE__BODY_JOIN_ANSWER) {
		printf("greeting: %s\n", frame_body_name(ans));
		frame_free(ans);
		join_free(key, der, ctx);
		return (0);
	}
	frame_free(ans);
	if (strcmp(kt, "hello") == 0) {
		h.protocol = R3Q_PROTOCOL;
		h.name = (char *)(uintptr_t)"sneaky";
		h.cpus = 1;
		env.body_case = R3Q__ENVELOPE__BODY_HELLO;
		env.hello = &h;
		goto send;
	}
	if (strcmp(kt, "ec") == 0 || strcmp(kt, "badsig") == 0)
		key = EVP_EC_gen("P-256");
	else if (strcmp(kt, "p521") == 0)
		key = EVP_EC_gen("P-521");
	else if (strcmp(kt, "rsa1024") == 0)
		key = EVP_RSA_gen(1024);
	else if (strcmp(kt, "rsa2048") == 0)
		key = EVP_RSA_gen(2048);
	if (key == NULL)
		usage();
	req = X509_REQ_new();
	X509_NAME_add_entry_by_NID(X509_REQ_get_subject_name(req),
	    NID_commonName, V_ASN1_UTF8STRING, (unsigned char *)name, (int)n,
	    -1, 0);
	X509_REQ_set_pubkey(req, key);
	X509_REQ_sign(req, key, EVP_sha256());
	len = i2d_X509_REQ(req, &der);
	X509_REQ_free(req);
	if (len <= 0)
		return (1);
	if (strcmp(kt, "badsig") == 0)
		der[len - 1] ^= 0x5a;
	jr.protocol = R3Q_PROTOCOL;
	jr.token = (char *)(uintptr_t)tok;
	jr.csr.data = der;
	jr.csr.len = (size_t)len;
	env.body_case = R3Q__ENVELOPE__BODY_JOIN_REQUEST;
	env.join_request = &jr;
send:
	env.id = 1;
	if (send_env(&env) == -1 || (ans = recv_env()) == NULL) {
		printf("closed\n");
		join_free(key, der, ctx);
		return (0);
	}
	if (ans->body_case == R3Q__ENVELOPE__BODY_ERROR)
		printf("error: %s\n", ans->error->message);
	else if (ans->body_case == R3Q__ENVELOPE__BODY_JOIN_ANSWER) {
		b = BIO_new_mem_buf(ans->join_answer->cert.data,
		    (int)ans->join_answer->cert.len);
		if ((x = PEM_read_bio_X509(b, NULL, NULL, NULL)) == NULL)
			printf("cert: unreadable\n");
		else {
			X509_NAME_oneline(X509_get_subject_name(x), subj,
			    sizeof(subj));
			printf("cert: %s\n", subj);
			X509_free(x);
		}
		BIO_free(b);
	} else
		printf("answer: %s\n", frame_body_name(ans));
	frame_free(ans);
	join_free(key, der, ctx);
	return (0);
}

int
main(int argc, char *argv[])
{
	SSL_CTX		*ctx;
	const char	*ca = NULL, *cert = NULL, *key = NULL;
	char		 err[512];
	int		 ch;

	signal(SIGPIPE, SIG_IGN);
	while ((ch = getopt(argc, argv, "+a:c:k:")) != -1) {
		switch (ch) {
		case 'a':
			ca = optarg;
			break;
		case 'c':
			cert = optarg;
			break;
		case 'k':
			key = optarg;
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1 || ((ca == NULL || cert == NULL || key == NULL) &&
	    strcmp(argv[0], "notify") != 0 && strcmp(argv[0], "relay") != 0 &&
	    strcmp(argv[0], "issue") != 0 && strcmp(argv[0], "join") != 0))
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(argv[0], "notify") == 0 && argc == 3)
		return (do_notify(argv[1], atoi(argv[2])));
	if (strcmp(argv[0], "relay") == 0 && argc == 4)
		return (do_relay(argv[1], argv[2], argv[3]));
	if (strcmp(argv[0], "join") == 0 && argc == 6)
		return (do_join(argv[1], argv[2], argv[3], argv[4], argv[5]));
	if (strcmp(argv[0], "issue") == 0 && argc == 8)
		return (do_issue(argv[1], argv[2], argv[3], argv[4], argv[5],
		    argv[6], argv[7]));
	if (strcmp(argv[0], "connect") == 0 && argc == 4) {
		if ((ctx = tp_ctx = tls_ctx_new(0, ca, cert, key, err,
		    sizeof(err))) == NULL) {
			printf("%s\n", err);
			return (1);
		}
		return (do_connect(ctx, argv[1], argv[2], argv[3]));
	}
	if (strcmp(argv[0], "peerorder") == 0 && argc == 5) {
		if ((ctx = tp_ctx = tls_ctx_new(0, ca, cert, key, err,
		    sizeof(err))) == NULL) {
			printf("%s\n", err);
			return (1);
		}
		return (do_peerorder(ctx, argv[1], argv[2], argv[3], argv[4]));
	}
	if (strcmp(argv[0], "serve") == 0 && argc == 3) {
		if ((ctx = tp_ctx = tls_ctx_new(1, ca, cert, key, err,
		    sizeof(err))) == NULL) {
			printf("%s\n", err);
			return (1);
		}
		return (do_serve(ctx, argv[1], argv[2]));
	}
	if (strcmp(argv[0], "hostile") == 0 && (argc == 4 || argc == 5)) {
		if ((ctx = tp_ctx = tls_ctx_new(0, ca, cert, key, err,
		    sizeof(err))) == NULL) {
			printf("%s\n", err);
			return (1);
		}
		return (do_hostile(ctx, argv[1], argv[2], argv[3],
		    argc == 5 ? argv[4] : NULL));
	}
	if (strcmp(argv[0], "badclient") == 0 && argc >= 4 && argc <= 6) {
		if ((ctx = tp_ctx = tls_ctx_new(0, ca, cert, key, err,
		    sizeof(err))) == NULL) {
			printf("%s\n", err);
			return (1);
		}
		return (do_badclient(ctx, argv[1], argv[2], argv[3],
		    argc > 4 ? argv[4] : NULL, argc > 5 ? argv[5] : NULL));
	}
	if (strcmp(argv[0], "flood") == 0 && argc >= 4 && argc <= 7) {
		if ((ctx = tp_ctx = tls_ctx_new(0, ca, cert, key, err,
		    sizeof(err))) == NULL) {
			printf("%s\n", err);
			return (1);
		}
		return (do_flood(ctx, argv[1], argv[2], argv[3],
		    argc > 4 ? argv[4] : NULL, argc > 5 ? argv[5] : NULL,
		    argc > 6 ? argv[6] : NULL));
	}
	if (strcmp(argv[0], "sluggish") == 0 && argc == 6) {
		if ((ctx = tp_ctx = tls_ctx_new(0, ca, cert, key, err,
		    sizeof(err))) == NULL) {
			printf("%s\n", err);
			return (1);
		}
		return (do_sluggish(ctx, argv[1], argv[2], argv[3], argv[4],
		    argv[5]));
	}
	if (strcmp(argv[0], "relayopen") == 0 && argc == 5) {
		if ((ctx = tls_ctx_new(0, ca, cert, key, err,
		    sizeof(err))) == NULL) {
			printf("%s\n", err);
			return (1);
		}
		return (do_relayopen(ctx, argv[1], argv[2], argv[3],
		    argv[4], cert));
	}
	if (strcmp(argv[0], "relayhostile") == 0 && argc >= 6) {
		if ((ctx = tp_ctx = tls_ctx_new(0, ca, cert, key, err,
		    sizeof(err))) == NULL) {
			printf("%s\n", err);
			return (1);
		}
		return (do_relayhostile(ctx, argv[1], argv[2], argv[3],
		    argc - 4, argv + 4));
	}
	if (strcmp(argv[0], "roles") == 0 && argc == 4) {
		if ((ctx = tp_ctx = tls_ctx_new(0, ca, cert, key, err,
		    sizeof(err))) == NULL) {
			printf("%s\n", err);
			return (1);
		}
		return (do_roles(ctx, argv[1], argv[2], argv[3]));
	}
	if (strcmp(argv[0], "sealbad") == 0 && argc == 4) {
		char	 role[32], cn[64];

		if (tls_cert_cn(cert, role, sizeof(role), cn, sizeof(cn)) ==
		    -1 || (ctx = tp_ctx = tls_ctx_new(0, ca, cert, key, err,
		    sizeof(err))) == NULL) {
			printf("%s: cannot use it\n", cert);
			return (1);
		}
		return (do_sealbad(ctx, argv[1], argv[2], cn, argv[3]));
	}
	if (strcmp(argv[0], "swarm") == 0 && (argc >= 5 && argc <= 7)) {
		if (argc == 7)
			swarm_kind = argv[6];
		if ((ctx = tp_ctx = tls_ctx_new(0, ca, cert, key, err,
		    sizeof(err))) == NULL) {
			printf("%s\n", err);
			return (1);
		}
		return (do_swarm(ctx, ca, argv[1], argv[2], argv[3], argv[4],
		    argc >= 6 ? argv[5] : "swarm"));
	}
	usage();
}

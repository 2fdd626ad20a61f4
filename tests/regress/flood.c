/*
 * r3q-testpeer flood: peers that try to make masterd spend memory and time
 * on frames it should judge before unpacking, and connections that hold a
 * handshake or a frame open, for tests/regress/decode.sh (issue 24,
 * "found by a hostile peer").
 *
 *   r3q-testpeer -a ca -c cert -k key flood HOST PORT MODE [N [ARG [SECS]]]
 *	HOST "unix": PORT is the path of the control socket, spoken in
 *	plain; otherwise TLS with the certificate given.  N connections at
 *	once (1), each in its own process.
 *
 *   prehello N		a 16 MiB Results frame of empty results, before Hello
 *   joined		say Hello, then send a 16 MiB Results frame of empty
 *			results
 *   joblist N		a 16 MiB JobList frame of empty JobInfos, a message
 *			only the master sends
 *   partial N [SECS]	announce a 16 MiB SubmitTasks frame, send all of it
 *			but its last KiB, and wait up to SECS (60) for the
 *			master to close
 *   heartbeats N SECS	say Hello, then send valid heartbeats of 900 KB
 *			(150000 ids) as fast as the peer takes them, for
 *			SECS; print how many bytes went (a worker flooding
 *			a relay, tests/regress/relay-edge.sh)
 *   slowhs N MS [SECS]	TCP only: keep N connections open for SECS (60) or
 *			until SIGTERM, each sending a real ClientHello one
 *			byte every MS ms (0: nothing at all), a new one
 *			opened whenever the master closes one; then print
 *			how many it closed and the longest any was held
 *
 * Each connection of the frame modes prints a line saying what the master
 * did and when; the exit status is 0 if the master closed every one.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/ssl.h>

#include "frame.h"
#include "testpeer.h"
#include "tls.h"
#include "util.h"

#define FLOOD_LEN	((16u << 20) - 64)	/* the body: the frame fits max_frame */
#define FLOOD_CHUNK	(64u << 10)

static int	 fl_fd = -1;		/* the connection (ssl: over TLS) */

static double
fl_now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
}

/* Connect: the control socket in plain, or TLS. */
static int
fl_connect(SSL_CTX *ctx, const char *host, const char *port)
{
	struct sockaddr_un	 sun;
	struct timeval		 tv = { 5, 0 };

	if (strcmp(host, "unix") != 0) {
		fl_fd = tls_dial(ctx, host, port);
		return (fl_fd == -1 ? -1 : 0);
	}
	ssl = NULL;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", port);
	if ((fl_fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
	    connect(fl_fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		printf("cannot connect to %s\n", port);
		return (-1);
	}
	setsockopt(fl_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return (0);
}

/* Write all of buf; -1 once the master has gone. */
static int
fl_put(const void *buf, size_t len)
{
	size_t	 done;
	ssize_t	 n;

	while (len > 0) {
		if (ssl != NULL) {
			if (SSL_write_ex(ssl, buf, len, &done) != 1)
				return (-1);
		} else {
			if ((n = write(fl_fd, buf, len)) <= 0)
				return (-1);
			done = (size_t)n;
		}
		buf = (const uint8_t *)buf + done;
		len -= done;
	}
	return (0);
}

/*
 * Wait up to secs for the master to close; 1 if it did.  What it says
 * meanwhile (an Error) is read and dropped.
 */
static int
fl_closed(double secs)
{
	double	 end = fl_now() + secs;
	uint8_t	 b[4096];
	size_t	 n;
	ssize_t	 r;
	int	 e;

	while (fl_now() < end) {
		errno = 0;
		if (ssl != NULL) {
			if (SSL_read_ex(ssl, b, sizeof(b), &n) == 1)
				continue;
			e = SSL_get_error(ssl, 0);
			if (e == SSL_ERROR_WANT_READ || (e ==
			    SSL_ERROR_SYSCALL && (errno == EAGAIN ||
			    errno == EWOULDBLOCK)))
				continue;
			return (1);
		}
		if ((r = read(fl_fd, b, sizeof(b))) > 0)
			continue;
		if (r == -1 && (errno == EAGAIN || errno == EWOULDBLOCK ||
		    errno == EINTR))
			continue;
		return (1);
	}
	return (0);
}

/*
 * A frame of body type field whose body is FLOOD_LEN bytes of empty
 * sub-messages of repeated field sub (two bytes each): what cost masterd
 * 1.5 GB, unpacked.  Sends all of it but `keep` bytes; -1 if the master
 * closed before.
 */
static int
fl_send_empties(uint32_t field, uint32_t sub, size_t keep)
{
	static uint8_t	 chunk[FLOOD_CHUNK];
	uint8_t		 head[FRAME_HDRLEN + 16], *p;
	uint32_t	 bodylen, tag, v;
	size_t		 left, i, n;

	/* The Envelope: the body's tag and length, then the body. */
	bodylen = FLOOD_LEN;
	p = head + FRAME_HDRLEN;
	for (tag = field << 3 | 2; tag >= 0x80; tag >>= 7)
		*p++ = (uint8_t)(tag | 0x80);
	*p++ = (uint8_t)tag;
	for (v = bodylen; v >= 0x80; v >>= 7)
		*p++ = (uint8_t)(v | 0x80);
	*p++ = (uint8_t)v;
	frame_header_encode(head, (uint32_t)(p - head - FRAME_HDRLEN) +
	    bodylen);
	for (i = 0; i < sizeof(chunk); i += 2) {
		chunk[i] = (uint8_t)(sub << 3 | 2);
		chunk[i + 1] = 0;
	}
	if (fl_put(head, (size_t)(p - head)) == -1)
		return (-1);
	for (left = bodylen - keep; left > 0; left -= n) {
		n = left < sizeof(chunk) ? left : sizeof(chunk);
		if (fl_put(chunk, n) == -1)
			return (-1);
	}
	return (0);
}

/* Say Hello as a worker offering nothing; 0 once welcomed. */
static int
fl_hello(void)
{
	Envelope	 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__Hello	 h = R3Q__HELLO__INIT;

	h.protocol = R3Q_PROTOCOL;
	h.name = (char *)(uintptr_t)"";
	h.cpus = 1;
	env.body_case = R3Q__ENVELOPE__BODY_HELLO;
	env.hello = &h;
	if (send_env(&env) == -1 || (ans = recv_env()) == NULL) {
		printf("no welcome\n");
		return (-1);
	}
	if (ans->body_case != R3Q__ENVELOPE__BODY_WELCOME) {
		printf("not welcomed: %s\n", frame_body_name(ans));
		frame_free(ans);
		return (-1);
	}
	frame_free(ans);
	return (0);
}

/* heartbeats: a worker that floods with valid frames for secs. */
static int
fl_heartbeats(int i, double secs)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__Heartbeat	 hb = R3Q__HEARTBEAT__INIT;
	uint64_t	*ids;
	double		 t0 = fl_now();
	size_t		 k, n = 150000, frames = 0;

	if (fl_hello() == -1)
		return (1);
	ids = xcalloc(n, sizeof(*ids));
	for (k = 0; k < n; k++)
		ids[k] = (1ULL << 40) + k;
	hb.first_half = ids;
	hb.n_first_half = n;
	hb.interval_ms = 1000;
	env.body_case = R3Q__ENVELOPE__BODY_HEARTBEAT;
	env.heartbeat = &hb;
	while (fl_now() - t0 < secs) {
		if (send_env(&env) == -1) {
			printf("conn %d: closed after %zu frames, %.1fs\n", i,
			    frames, fl_now() - t0);
			free(ids);
			return (1);
		}
		frames++;
	}
	printf("conn %d: %zu heartbeat frames (%.0f MB) in %.1fs\n", i, frames,
	    (double)frames * (double)protobuf_c_message_get_packed_size(
	    &env.base) / 1e6, fl_now() - t0);
	free(ids);
	return (0);
}

/* One connection of a frame mode; its exit status. */
static int
fl_one(SSL_CTX *ctx, const char *host, const char *port, const char *mode,
    int i, double secs)
{
	double	 t0;
	int	 sent;

	if (fl_connect(ctx, host, port) == -1)
		return (1);
	t0 = fl_now();
	if (strcmp(mode, "heartbeats") == 0)
		return (fl_heartbeats(i, secs));
	if (strcmp(mode, "prehello") == 0)
		sent = fl_send_empties(R3Q__ENVELOPE__BODY_RESULTS, 1, 0);
	else if (strcmp(mode, "joined") == 0) {
		if (fl_hello() == -1)
			return (1);
		sent = fl_send_empties(R3Q__ENVELOPE__BODY_RESULTS, 1, 0);
	} else if (strcmp(mode, "joblist") == 0)
		sent = fl_send_empties(R3Q__ENVELOPE__BODY_JOB_LIST, 1, 0);
	else {
		/* partial: SubmitTasks of empty TaskSpecs, short 1 KiB */
		sent = fl_send_empties(R3Q__ENVELOPE__BODY_SUBMIT_TASKS, 4,
		    1024);
		if (sent == 0)
			printf("conn %d: %u bytes sent in %.1fs, holding\n",
			    i, FLOOD_LEN - 1024, fl_now() - t0);
	}
	if (sent == -1 || fl_closed(secs)) {
		printf("conn %d: closed by the master after %.1fs%s\n", i,
		    fl_now() - t0, sent == -1 ? ", before all was sent" : "");
		return (0);
	}
	printf("conn %d: still open after %.1fs\n", i, fl_now() - t0);
	return (1);
}

/* A ClientHello, as a TLS client would send it first. */
static size_t
fl_client_hello(SSL_CTX *ctx, uint8_t *buf, size_t cap)
{
	SSL	*c;
	BIO	*rb, *wb;
	char	*p;
	long	 n;

	if ((c = SSL_new(ctx)) == NULL)
		return (0);
	rb = BIO_new(BIO_s_mem());
	wb = BIO_new(BIO_s_mem());
	SSL_set_bio(c, rb, wb);
	SSL_set_connect_state(c);
	SSL_do_handshake(c);
	n = BIO_get_mem_data(wb, &p);
	if (n <= 0 || (size_t)n > cap)
		n = 0;
	else
		memcpy(buf, p, (size_t)n);
	SSL_free(c);
	return ((size_t)n);
}

static volatile sig_atomic_t	 fl_stop;

static void
fl_onterm(int sig)
{
	(void)sig;
	fl_stop = 1;
}

/* Connection i of slowhs, opened now; -1 if it could not be. */
static int
fl_slow_open(struct pollfd *pfd, double *opened, size_t *sent, int i,
    const char *host, const char *port)
{
	if ((pfd[i].fd = tcp_connect(host, port)) == -1) {
		printf("conn %d: cannot connect: %s\n", i, strerror(errno));
		return (-1);
	}
	fcntl(pfd[i].fd, F_SETFL, O_NONBLOCK);
	pfd[i].events = POLLIN;
	opened[i] = fl_now();
	sent[i] = 0;
	return (0);
}

/*
 * Keep n connections open for secs (or until SIGTERM), each trickling a
 * ClientHello a byte every ms milliseconds (0: silent), opening a new one
 * whenever the master closes one; then say how many it closed and how
 * long the longest-held connection lived.  A handshake timeout that each
 * byte restarts never closes them; a deadline from accept does.
 */
static int
fl_slowhs(SSL_CTX *ctx, const char *host, const char *port, int n, int ms,
    double secs)
{
	struct pollfd	*pfd;
	uint8_t		 hello[4096], b[256];
	size_t		 hlen, *sent;
	double		 t0, next, *opened, life, maxlife = 0;
	unsigned long	 closed = 0;
	int		 i, timeout, rc = 1;

	if ((hlen = fl_client_hello(ctx, hello, sizeof(hello))) == 0) {
		printf("cannot build a ClientHello\n");
		return (1);
	}
	signal(SIGTERM, fl_onterm);
	pfd = xcalloc((size_t)n, sizeof(*pfd));
	sent = xcalloc((size_t)n, sizeof(*sent));
	opened = xcalloc((size_t)n, sizeof(*opened));
	for (i = 0; i < n; i++)
		if (fl_slow_open(pfd, opened, sent, i, host, port) == -1)
			goto done;
	printf("slowhs: %d connections open\n", n);
	t0 = fl_now();
	next = t0 + ms / 1000.0;
	while (!fl_stop && fl_now() - t0 < secs) {
		timeout = ms > 0 ? (int)((next - fl_now()) * 1000) : 100;
		if (timeout < 0)
			timeout = 0;
		if (poll(pfd, (nfds_t)n, timeout) > 0) {
			for (i = 0; i < n; i++) {
				if (pfd[i].revents == 0)
					continue;
				if (read(pfd[i].fd, b, sizeof(b)) > 0)
					continue;
				close(pfd[i].fd);
				if ((life = fl_now() - opened[i]) > maxlife)
					maxlife = life;
				closed++;
				if (fl_slow_open(pfd, opened, sent, i, host,
				    port) == -1)
					goto done;
			}
		}
		if (ms > 0 && fl_now() >= next) {
			for (i = 0; i < n; i++)
				if (sent[i] < hlen &&
				    write(pfd[i].fd, hello + sent[i], 1) == 1)
					sent[i]++;
			next += ms / 1000.0;
		}
	}
	for (i = 0; i < n; i++)
		if ((life = fl_now() - opened[i]) > maxlife)
			maxlife = life;
	printf("slowhs: %lu closed by the master in %.1fs; the longest held "
	    "%d ms\n", closed, fl_now() - t0, (int)(maxlife * 1000));
	rc = 0;
done:
	free(pfd);
	free(sent);
	free(opened);
	return (rc);
}

int
do_flood(SSL_CTX *ctx, const char *host, const char *port, const char *mode,
    const char *narg, const char *arg, const char *secs_arg)
{
	pid_t	*pids;
	int	 n, i, st, rc = 0;
	double	 secs;

	n = narg != NULL ? atoi(narg) : 1;
	if (n < 1 || n > 100000) {
		printf("bad count %s\n", narg);
		return (2);
	}
	if (strcmp(mode, "slowhs") == 0)
		return (fl_slowhs(ctx, host, port, n, arg != NULL ? atoi(arg) :
		    0, secs_arg != NULL ? atof(secs_arg) : 60));
	if (strcmp(mode, "prehello") != 0 && strcmp(mode, "joined") != 0 &&
	    strcmp(mode, "joblist") != 0 && strcmp(mode, "partial") != 0 &&
	    strcmp(mode, "heartbeats") != 0) {
		printf("unknown flood mode %s\n", mode);
		return (2);
	}
	secs = (strcmp(mode, "partial") == 0 || strcmp(mode,
	    "heartbeats") == 0) && arg != NULL ? atof(arg) :
	    strcmp(mode, "partial") == 0 ? 60 : 10;
	pids = xcalloc((size_t)n, sizeof(*pids));
	for (i = 0; i < n; i++) {
		if ((pids[i] = fork()) == -1) {
			printf("fork: %s\n", strerror(errno));
			return (1);
		}
		if (pids[i] == 0)
			_exit(fl_one(ctx, host, port, mode, i, secs));
	}
	for (i = 0; i < n; i++)
		if (waitpid(pids[i], &st, 0) == -1 || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			rc = 1;
	free(pids);
	return (rc);
}

/*
 * r3q-testpeer: a peer that misbehaves on purpose, for the regress tests.
 *
 *   r3q-testpeer -a ca -c cert -k key connect HOST PORT MODE
 *	garbage   send random bytes over TLS; expect the master to close
 *	oversize  send a header announcing 4 GiB; expect a close
 *	unknown   send an Envelope with an unknown body; expect an Error
 *	version   send a hello with protocol 99; expect an Error
 *	hello     a well-behaved hello; expect a Welcome
 *   r3q-testpeer -a ca -c cert -k key serve PORT KIND
 *	act as a master: accept one worker, assign it one task of KIND,
 *	print the status of its result
 *   r3q-testpeer notify PATH SECONDS
 *	be systemd's NOTIFY_SOCKET: print each datagram, one a line
 *   r3q-testpeer relay PORT HOST TARGET_PORT
 *	a plain TCP relay on 127.0.0.1:PORT (0: a free one, printed as
 *	"port N") to HOST:TARGET_PORT, forwarding the TLS stream untouched;
 *	SIGUSR1 makes it a silent link (every connection stays open, nothing
 *	is read or written), SIGUSR2 resumes, SIGTERM exits
 *
 * Prints what the other side answered; exits 0 when it behaved as the
 * mode expects, 1 otherwise.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <fcntl.h>
#include <poll.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "frame.h"
#include "task/task.h"
#include "tls.h"

static SSL	*ssl;

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr, "usage: r3q-testpeer -a ca -c cert -k key connect "
	    "host port garbage|oversize|unknown|version|hello\n"
	    "       r3q-testpeer -a ca -c cert -k key serve port kind\n"
	    "       r3q-testpeer notify path seconds\n"
	    "       r3q-testpeer relay port host target-port\n");
	exit(2);
}

/* Write all bytes; -1 if the peer has gone. */
static int
put(const void *buf, size_t len)
{
	size_t	 done;

	while (len > 0) {
		if (SSL_write_ex(ssl, buf, len, &done) != 1)
			return (-1);
		buf = (const uint8_t *)buf + done;
		len -= done;
	}
	return (0);
}

static int
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

	while (len > 0) {
		if (SSL_read_ex(ssl, buf, len, &n) != 1)
			return (-1);
		buf += n;
		len -= n;
	}
	return (0);
}

/* One frame, or NULL if the peer closed. */
static Envelope *
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
	uint8_t	 b;
	size_t	 n;
	int	 e;

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
static int
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

static int
do_connect(SSL_CTX *ctx, const char *host, const char *port,
    const char *mode)
{
	Envelope	 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__Hello	 h = R3Q__HELLO__INIT;
	uint8_t		 junk[4096], hdr[FRAME_HDRLEN];
	static const uint8_t unknown[] = { 0x08, 0x05, 0xf2, 0x06, 0x00 };
	char		 err[256];
	size_t		 i;
	int		 fd;

	if ((fd = tcp_connect(host, port)) == -1) {
		printf("cannot connect\n");
		return (1);
	}
	if ((ssl = tls_client_ssl(ctx, host, err, sizeof(err))) == NULL) {
		printf("%s\n", err);
		return (1);
	}
	SSL_set_fd(ssl, fd);
	if (SSL_connect(ssl) != 1) {
		printf("handshake failed\n");
		return (1);
	}
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
		return (strcmp(mode, "hello") == 0 ? 1 : 0);
	}
	printf("%s\n", frame_body_name(ans));
	return (strcmp(mode, "hello") == 0 &&
	    ans->body_case == R3Q__ENVELOPE__BODY_WELCOME ? 0 : 1);
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

/* Be a master for one worker and one task of the given kind. */
static int
do_serve(SSL_CTX *ctx, const char *port, const char *kind)
{
	Envelope		 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__Welcome		 w = R3Q__WELCOME__INIT;
	R3q__Assign		 a = R3Q__ASSIGN__INIT;
	R3q__Task		 t = R3Q__TASK__INIT, *tp = &t;
	double			 x[2] = { 1, 1 };
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
	w.protocol = R3Q_PROTOCOL;
	w.epoch = 77;
	w.queue_len = 2;
	env.body_case = R3Q__ENVELOPE__BODY_WELCOME;
	env.welcome = &w;
	send_env(&env);
	t.id = 5;
	t.kind = (char *)(uintptr_t)kind;
	t.n_x = 2;
	t.x = x;
	a.epoch = 77;
	a.n_tasks = 1;
	a.tasks = &tp;
	env.body_case = R3Q__ENVELOPE__BODY_ASSIGN;
	env.assign = &a;
	send_env(&env);
	while ((ans = recv_env()) != NULL) {
		if (ans->body_case != R3Q__ENVELOPE__BODY_RESULTS ||
		    ans->results->n_results == 0)
			continue;
		printf("task %llu: %s: %s\n",
		    (unsigned long long)ans->results->results[0]->id,
		    task_status_name((int)ans->results->results[0]->status),
		    ans->results->results[0]->error);
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

int
main(int argc, char *argv[])
{
	SSL_CTX		*ctx;
	const char	*ca = NULL, *cert = NULL, *key = NULL;
	char		 err[512];
	int		 ch;

	signal(SIGPIPE, SIG_IGN);
	while ((ch = getopt(argc, argv, "a:c:k:")) != -1) {
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
	    strcmp(argv[0], "notify") != 0 && strcmp(argv[0], "relay") != 0))
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(argv[0], "notify") == 0 && argc == 3)
		return (do_notify(argv[1], atoi(argv[2])));
	if (strcmp(argv[0], "relay") == 0 && argc == 4)
		return (do_relay(argv[1], argv[2], argv[3]));
	if (strcmp(argv[0], "connect") == 0 && argc == 4) {
		if ((ctx = tls_ctx_new(0, ca, cert, key, err,
		    sizeof(err))) == NULL) {
			printf("%s\n", err);
			return (1);
		}
		return (do_connect(ctx, argv[1], argv[2], argv[3]));
	}
	if (strcmp(argv[0], "serve") == 0 && argc == 3) {
		if ((ctx = tls_ctx_new(1, ca, cert, key, err,
		    sizeof(err))) == NULL) {
			printf("%s\n", err);
			return (1);
		}
		return (do_serve(ctx, argv[1], argv[2]));
	}
	usage();
}

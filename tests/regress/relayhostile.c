/*
 * r3q-testpeer relayhostile: a relay that lies about the workers behind
 * it, speaking the protocol by hand.  It holds only a relay's certificate
 * (and, for forge, certificates of workers it once carried, which are no
 * secret: a relay sees each one its workers present).
 *
 *   forge KIND CERTDIR NAME...
 *	a stream for each NAME (its certificate CERTDIR/NAME.pem passed on,
 *	if that file exists), each a worker offering KIND that answers every
 *	task at once with the same made-up output (a fitness of 0); prints
 *	"stream N (NAME) welcomed", "stream N (NAME) closed: why", "tasks N";
 *	heartbeats every second until SIGTERM
 *   claim CERTDIR NAME
 *	a stream for NAME (its certificate passed on as for forge), and
 *	NAME's hello over it; prints "stream 1 refused: why" or "stream 1
 *	welcomed as NAME", then heartbeats until the master closes the
 *	stream ("stream 1 closed: why") or SIGTERM
 *   late CERTDIR NAME
 *	as claim, but the stream's hello waits for SIGUSR1: once the master
 *	has taken the stream (a probe's refusal came back after it), prints
 *	"stream 1 open"; the test connects the real NAME meanwhile
 *   flood CERTDIR NAME N
 *	N streams for NAME at once (one certificate serves them all), then
 *	a probe the master must refuse (its path does not end here): once
 *	the probe's answer is in, so is every other.  Prints "flood: R of N
 *	refused", and the first reason that is not the probe's
 *
 * Exits 0 when the master answered as the mode expects a master to
 * (forge: at SIGTERM; claim, late: refused, or closed by the master; flood: at
 * least one refused), 1 otherwise.
 */
#include "config.h"

#include <sys/socket.h>

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>

#include <openssl/pem.h>
#include <openssl/x509.h>

#include "frame.h"
#include "testpeer.h"
#include "util.h"

#define RH_MAX		64	/* streams of forge and claim */

/* One stream this relay asserts. */
struct rh_stream {
	uint32_t	 st_id;
	char		 st_name[64];
	struct evbuffer	*st_in;		/* the master's bytes for it */
	int		 st_welcomed;
	int		 st_closed;
};

static struct rh_stream	 rh[RH_MAX];
static size_t		 rh_n;
static uint64_t		 rh_epoch;
static uint64_t		 rh_tasks;
static volatile sig_atomic_t rh_quit;
static volatile sig_atomic_t rh_go;	/* late: SIGUSR1 came */
static uint8_t		 rh_zero[8];	/* a fitness of 0.0 */

static void
rh_signal(int sig)
{
	if (sig == SIGUSR1)
		rh_go = 1;
	else
		rh_quit = 1;
}

/* Ask the master to open stream id for name, as a worker behind us. */
static int
rh_open(uint32_t id, const char *name, const char *via0, const uint8_t *der,
    size_t derlen)
{
	Envelope		 env = R3Q__ENVELOPE__INIT;
	R3q__RelayControl	 rc = R3Q__RELAY_CONTROL__INIT;
	char			*via[1];

	via[0] = (char *)(uintptr_t)via0;
	rc.stream = id;
	rc.op = 1;
	rc.name = (char *)(uintptr_t)name;
	rc.role = (char *)(uintptr_t)"worker";
	rc.via = via;
	rc.n_via = 1;
	/* Made up: the master must not show these as facts. */
	rc.address = (char *)(uintptr_t)"198.51.100.7:4242";
	rc.not_after = 4102444800ULL;		/* 2100-01-01 */
	rc.cert.data = (uint8_t *)(uintptr_t)der;
	rc.cert.len = derlen;
	env.body_case = R3Q__ENVELOPE__BODY_RELAY_CONTROL;
	env.relay_control = &rc;
	return (send_env(&env));
}

/* Send inner over stream id, wrapped in RelayData. */
static int
rh_data(uint32_t id, const Envelope *inner)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__RelayData	 rd = R3Q__RELAY_DATA__INIT;
	uint8_t		*buf;
	size_t		 len;
	int		 rc;

	if ((buf = frame_pack(inner, &len)) == NULL)
		return (-1);
	rd.stream = id;
	rd.data.data = buf;
	rd.data.len = len;
	env.body_case = R3Q__ENVELOPE__BODY_RELAY_DATA;
	env.relay_data = &rd;
	rc = send_env(&env);
	free(buf);
	return (rc);
}

/* A stream's worker says its hello, offering kind (NULL: none). */
static int
rh_hello(const struct rh_stream *st, const char *kind)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__Hello	 h = R3Q__HELLO__INIT;
	char		*kinds[1];

	h.protocol = R3Q_PROTOCOL;
	h.name = (char *)(uintptr_t)st->st_name;
	h.cpus = 1;
	if (kind != NULL) {
		kinds[0] = (char *)(uintptr_t)kind;
		h.kinds = kinds;
		h.n_kinds = 1;
	}
	env.body_case = R3Q__ENVELOPE__BODY_HELLO;
	env.hello = &h;
	return (rh_data(st->st_id, &env));
}

/* A heartbeat, on the link (st NULL) or on a stream. */
static int
rh_beat(const struct rh_stream *st)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__Heartbeat	 hb = R3Q__HEARTBEAT__INIT;

	hb.interval_ms = 1000;
	env.body_case = R3Q__ENVELOPE__BODY_HEARTBEAT;
	env.heartbeat = &hb;
	return (st == NULL ? send_env(&env) : rh_data(st->st_id, &env));
}

/* Every task of an Assign on st: the same made-up output, its tag echoed. */
static int
rh_forge(const struct rh_stream *st, const R3q__Assign *a)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__Results	 rs = R3Q__RESULTS__INIT;
	R3q__Result	*r, **rp;
	uint64_t	 now = wall_ns();
	size_t		 i;
	int		 rc;

	if (a->n_tasks == 0)
		return (0);
	r = xcalloc(a->n_tasks, sizeof(*r));
	rp = xcalloc(a->n_tasks, sizeof(*rp));
	for (i = 0; i < a->n_tasks; i++) {
		r3q__result__init(&r[i]);
		r[i].id = a->tasks[i]->id;
		r[i].epoch = rh_epoch;
		r[i].tag = a->tasks[i]->tag;
		r[i].status = 0;
		r[i].error = (char *)(uintptr_t)"";
		r[i].output.data = rh_zero;
		r[i].output.len = sizeof(rh_zero);
		r[i].received_ns = now - 2000000;
		r[i].start_ns = now - 1000000;
		r[i].end_ns = now;
		rp[i] = &r[i];
	}
	rs.results = rp;
	rs.n_results = a->n_tasks;
	env.body_case = R3Q__ENVELOPE__BODY_RESULTS;
	env.results = &rs;
	rc = rh_data(st->st_id, &env);
	rh_tasks += a->n_tasks;
	free(rp);
	free(r);
	return (rc);
}

static struct rh_stream *
rh_find(uint32_t id)
{
	size_t	 i;

	for (i = 0; i < rh_n; i++)
		if (rh[i].st_id == id)
			return (&rh[i]);
	return (NULL);
}

/*
 * What the master sent stream st, whole frames of it: a Welcome, an
 * Assign (forged at once if forge), an Error.
 */
static int
rh_stream_input(struct rh_stream *st, int forge)
{
	uint8_t		 head[FRAME_HDRLEN], *p;
	uint32_t	 len;
	Envelope	*in;
	char		 err[256];
	int		 rc = 0;

	while (evbuffer_get_length(st->st_in) >= FRAME_HDRLEN) {
		evbuffer_copyout(st->st_in, head, sizeof(head));
		if (frame_header_decode(head, FRAME_MAX_DEFAULT, &len, err,
		    sizeof(err)) == -1) {
			printf("stream %u: bad frame: %s\n", st->st_id, err);
			return (-1);
		}
		if (evbuffer_get_length(st->st_in) < FRAME_HDRLEN + len)
			break;
		p = evbuffer_pullup(st->st_in, FRAME_HDRLEN + len);
		if (frame_unpack(p + FRAME_HDRLEN, len, FRAME_MAX_DEFAULT, &in,
		    err, sizeof(err)) == -1) {
			printf("stream %u: bad frame: %s\n", st->st_id, err);
			return (-1);
		}
		evbuffer_drain(st->st_in, FRAME_HDRLEN + len);
		switch (in->body_case) {
		case R3Q__ENVELOPE__BODY_WELCOME:
			st->st_welcomed = 1;
			rh_epoch = in->welcome->epoch;
			printf("stream %u welcomed as %s\n", st->st_id,
			    st->st_name);
			break;
		case R3Q__ENVELOPE__BODY_ASSIGN:
			if (forge) {
				rc = rh_forge(st, in->assign);
				printf("tasks %llu\n",
				    (unsigned long long)rh_tasks);
			}
			break;
		case R3Q__ENVELOPE__BODY_ERROR:
			printf("stream %u error: %s\n", st->st_id,
			    in->error->message);
			break;
		default:
			break;
		}
		frame_free(in);
		if (rc == -1)
			return (-1);
	}
	return (0);
}

/* A certificate file's DER (malloc'd), or NULL if there is none. */
static uint8_t *
rh_cert_der(const char *dir, const char *name, size_t *len)
{
	char		 path[1024];
	FILE		*f;
	X509		*x;
	unsigned char	*der = NULL;
	int		 n;

	*len = 0;
	snprintf(path, sizeof(path), "%s/%s.pem", dir, name);
	if ((f = fopen(path, "r")) == NULL)
		return (NULL);
	x = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	if (x == NULL)
		return (NULL);
	if ((n = i2d_X509(x, &der)) <= 0)
		der = NULL;
	else
		*len = (size_t)n;
	X509_free(x);
	return (der);
}

/* flood: n streams at once, then a probe; count what was refused. */
static int
rh_flood(const char *self, const char *dir, const char *name,
    unsigned long n)
{
	Envelope	*ans;
	char		 first[512] = "";
	unsigned long	 i, refused = 0;
	uint32_t	 probe = (uint32_t)n + 1;
	uint8_t		*der;
	size_t		 derlen;

	der = rh_cert_der(dir, name, &derlen);
	for (i = 1; i <= n; i++)
		if (rh_open((uint32_t)i, name, self, der, derlen) == -1) {
			free(der);
			return (1);
		}
	free(der);
	if (rh_open(probe, "probe", "elsewhere", NULL, 0) == -1)
		return (1);
	while ((ans = recv_env()) != NULL) {
		if (ans->body_case == R3Q__ENVELOPE__BODY_RELAY_CONTROL &&
		    ans->relay_control->op == 2) {
			if (ans->relay_control->stream == probe) {
				frame_free(ans);
				break;
			}
			if (refused++ == 0)
				snprintf(first, sizeof(first), "%s",
				    ans->relay_control->reason);
		}
		frame_free(ans);
	}
	printf("flood: %lu of %lu refused\n", refused, n);
	if (first[0] != '\0')
		printf("reason: %s\n", first);
	return (refused > 0 ? 0 : 1);
}

int
do_relayhostile(SSL_CTX *ctx, const char *host, const char *port,
    const char *self, int argc, char *argv[])
{
	Envelope	*ans;
	const char	*mode, *kind = NULL;
	struct rh_stream *st;
	struct pollfd	 pfd;
	uint64_t	 next_hb = 0;
	uint8_t		*der;
	size_t		 i, derlen;
	int		 fd, forge, claim, late, rc = 1;

	if (argc < 1)
		return (2);
	mode = argv[0];
	forge = strcmp(mode, "forge") == 0;
	late = strcmp(mode, "late") == 0;
	claim = strcmp(mode, "claim") == 0 || late;
	if ((forge && argc < 4) || (claim && argc != 3) ||
	    (strcmp(mode, "flood") == 0 && argc != 4) ||
	    (!forge && !claim && strcmp(mode, "flood") != 0)) {
		printf("relayhostile: forge KIND CERTDIR NAME... | claim|late "
		    "CERTDIR NAME | flood CERTDIR NAME N\n");
		return (2);
	}
	signal(SIGTERM, rh_signal);
	signal(SIGINT, rh_signal);
	signal(SIGUSR1, rh_signal);
	if ((fd = relay_join(ctx, host, port, self, &rh_epoch)) == -1)
		return (1);
	printf("relay %s joined\n", self);
	if (strcmp(mode, "flood") == 0)
		return (rh_flood(self, argv[1], argv[2],
		    strtoul(argv[3], NULL, 10)));

	if (forge)
		kind = argv[1];
	for (i = forge ? 3 : 2; i < (size_t)argc && rh_n < RH_MAX; i++) {
		st = &rh[rh_n++];
		st->st_id = (uint32_t)rh_n;
		snprintf(st->st_name, sizeof(st->st_name), "%s", argv[i]);
		if ((st->st_in = evbuffer_new()) == NULL)
			return (1);
		der = rh_cert_der(argv[forge ? 2 : 1], argv[i], &derlen);
		if (der == NULL)
			derlen = 0;
		if (rh_open(st->st_id, st->st_name, self, der, derlen) == -1 ||
		    (!late && rh_hello(st, kind) == -1))
			return (1);
		free(der);
	}
	/* late: a probe, refused after the master has taken stream 1. */
	if (late && rh_open(RH_MAX + 1, "probe", "elsewhere", NULL, 0) == -1)
		return (1);
	pfd.fd = fd;
	pfd.events = POLLIN;
	while (!rh_quit) {
		if (late && rh_go) {
			rh_go = 0;
			late = 0;
			if (rh_hello(&rh[0], NULL) == -1)
				break;
		}
		if (mono_ns() >= next_hb) {
			if (rh_beat(NULL) == -1)
				break;
			for (i = 0; i < rh_n; i++)
				if (rh[i].st_welcomed && !rh[i].st_closed &&
				    rh_beat(&rh[i]) == -1)
					break;
			next_hb = mono_ns() + NS_PER_SEC;
		}
		if (SSL_pending(ssl) == 0 && poll(&pfd, 1, 200) <= 0)
			continue;
		if ((ans = recv_env()) == NULL)
			break;
		if (ans->body_case == R3Q__ENVELOPE__BODY_RELAY_CONTROL &&
		    ans->relay_control->op == 2 &&
		    ans->relay_control->stream == RH_MAX + 1) {
			if (!rh[0].st_closed)
				printf("stream 1 open\n");
		} else if (ans->body_case ==
		    R3Q__ENVELOPE__BODY_RELAY_CONTROL &&
		    ans->relay_control->op == 2 &&
		    (st = rh_find(ans->relay_control->stream)) != NULL &&
		    !st->st_closed) {
			st->st_closed = 1;
			printf("stream %u %s: %s\n", st->st_id,
			    st->st_welcomed ? "closed" : "refused",
			    ans->relay_control->reason);
			if (claim) {
				rh_quit = 1;
				rc = 0;
			}
		} else if (ans->body_case == R3Q__ENVELOPE__BODY_RELAY_DATA &&
		    (st = rh_find(ans->relay_data->stream)) != NULL &&
		    !st->st_closed) {
			evbuffer_add(st->st_in, ans->relay_data->data.data,
			    ans->relay_data->data.len);
			if (rh_stream_input(st, forge) == -1) {
				frame_free(ans);
				break;
			}
		} else if (ans->body_case == R3Q__ENVELOPE__BODY_ERROR)
			printf("error: %s\n", ans->error->message);
		frame_free(ans);
	}
	if (forge && rh_quit)
		rc = 0;
	if (!rh_quit)
		printf("link closed by the master\n");
	for (i = 0; i < rh_n; i++)
		evbuffer_free(rh[i].st_in);
	return (rc);
}

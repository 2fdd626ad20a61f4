/*
 * r3q-testpeer roles: a peer that sends every message type of the wire
 * schema on a session of one role, to prove that a certificate acts only
 * as its role (issue 24, "Identity": a worker certificate can never act as
 * a client, a client certificate never as a worker).
 *
 *   worker	hello first (a worker certificate), then each type
 *   prehello	each type before any hello (a worker certificate)
 *   client	each type (a client certificate)
 *   hold	connect and wait: print "closed: ERROR" when the master
 *		closes the connection (a revocation), exit 0; exit 1 if the
 *		handshake fails
 *
 * The types are not listed here: they are the fields of the Envelope's
 * oneof, read from the protobuf-c descriptor, so a type added to
 * r3q.proto is covered at once.  Each goes on a connection of its own,
 * with an empty body (a hello a valid one), followed by a sentinel that
 * no peer may send (a Welcome, or an Assign after a Welcome); each frame
 * has its own request id, echoed in the master's Error.  A type is
 * refused when an Error answers it and the connection closes before the
 * sentinel is answered; it is let through when the sentinel's Error
 * comes.  Only the types the role may send (below, by name) may be let
 * through; every other must be refused.  Prints one line per type,
 * "ROLE TYPE refused|accepted", and "FAIL ..." for each type that did not
 * behave; exits 1 if any did not.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/time.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "testpeer.h"
#include "util.h"

#define ROLES_TIMEOUT	60	/* s for any one answer: a loaded machine */
#define ID_TYPE		1000	/* the id of the frame of the type tried */
#define ID_SENTINEL	7

/* What each role may send, as masterd's dispatch has it. */
static const char *const worker_may[] = {
	"results", "progress", "heartbeat", "kinds", "error", "released",
	"drain", "join_request", "task_news", "peer_report", NULL
};
static const char *const prehello_may[] = { "hello", NULL };
static const char *const client_may[] = {
	"submit_es", "job_query", "list_jobs", "list_workers", "cancel_job",
	"job_trace_request", "open_job", "submit_tasks", "close_batch",
	"cancel_tasks", "ack_results", "attach_job", "close_job",
	"submit_bnb", "drain_worker", "token_create", "token_list",
	"token_revoke", "submit_islands", "links_request",
	"exchange_request", NULL
};

static int
roles_in(const char *const *list, const char *name)
{
	for (; *list != NULL; list++)
		if (strcmp(*list, name) == 0)
			return (1);
	return (0);
}

/*
 * An envelope of type f with an empty body, or a valid hello: body is
 * freed by the caller.
 */
static void
roles_envelope(Envelope *env, const ProtobufCFieldDescriptor *f,
    uint64_t id, void **body)
{
	const ProtobufCMessageDescriptor	*d = f->descriptor;
	R3q__Hello				*h;

	r3q__envelope__init(env);
	*body = xcalloc(1, d->sizeof_message);
	d->message_init(*body);
	if (strcmp(f->name, "hello") == 0) {
		h = *body;
		h->protocol = R3Q_PROTOCOL;
		h->cpus = 1;
	}
	env->id = id;
	*(uint32_t *)(void *)((char *)env + f->quantifier_offset) = f->id;
	*(void **)(void *)((char *)env + f->offset) = *body;
}

/* Send the frame of type f (by name), with request id id. */
static int
roles_send(const char *name, uint64_t id)
{
	const ProtobufCFieldDescriptor	*f;
	Envelope			 env;
	void				*body;
	int				 rc;

	f = protobuf_c_message_descriptor_get_field_by_name(
	    &r3q__envelope__descriptor, name);
	if (f == NULL)
		return (-1);
	roles_envelope(&env, f, id, &body);
	rc = send_env(&env);
	free(body);
	return (rc);
}

/* A new connection, with a long receive timeout. */
static int
roles_dial(SSL_CTX *ctx, const char *host, const char *port)
{
	struct timeval	 tv = { ROLES_TIMEOUT, 0 };
	int		 fd;

	if ((fd = tls_dial(ctx, host, port)) == -1)
		return (-1);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return (fd);
}

static void
roles_hangup(int fd)
{
	SSL_free(ssl);
	ssl = NULL;
	close(fd);
}

/*
 * Try type f on a session of role mode: 1 refused, 0 let through, -1 the
 * test itself could not run (said why).
 */
static int
roles_try(SSL_CTX *ctx, const char *host, const char *port,
    const char *mode, const ProtobufCFieldDescriptor *f)
{
	Envelope	*ans;
	const char	*sentinel;
	int		 fd, answered = 0, sentinel_answered = 0, welcomed;

	if ((fd = roles_dial(ctx, host, port)) == -1)
		return (-1);
	if (strcmp(mode, "worker") == 0) {
		welcomed = 0;
		if (roles_send("hello", 1) == -1)
			goto lost;
		while ((ans = recv_env()) != NULL) {
			welcomed = ans->body_case ==
			    R3Q__ENVELOPE__BODY_WELCOME;
			frame_free(ans);
			if (welcomed)
				break;
		}
		if (!welcomed) {
			printf("%s %s: no welcome to our hello\n", mode,
			    f->name);
			roles_hangup(fd);
			return (-1);
		}
	}
	sentinel = strcmp(f->name, "welcome") == 0 ? "assign" : "welcome";
	if (roles_send(f->name, ID_TYPE + f->id) == -1)
		goto lost;
	/* The master may close at once: a failed send is an answer too. */
	(void)roles_send(sentinel, ID_SENTINEL);
	while ((ans = recv_env()) != NULL) {
		if (ans->body_case == R3Q__ENVELOPE__BODY_ERROR) {
			/*
			 * Its id, or 0 from a check made before the frame
			 * is decoded (a size limit before hello).
			 */
			if (ans->id == ID_TYPE + f->id || ans->id == 0)
				answered = 1;
			else if (ans->id == ID_SENTINEL)
				sentinel_answered = 1;
		}
		frame_free(ans);
	}
	roles_hangup(fd);
	if (sentinel_answered)
		return (0);
	if (answered)
		return (1);
	printf("%s %s: the master closed without an Error for it\n", mode,
	    f->name);
	return (-1);
lost:
	printf("%s %s: the connection broke before the type was sent\n", mode,
	    f->name);
	roles_hangup(fd);
	return (-1);
}

/* hold: connect, then wait for the master to close; say why it did. */
static int
roles_hold(SSL_CTX *ctx, const char *host, const char *port)
{
	struct timeval	 tv = { 0, 0 };
	Envelope	*ans;
	char		 last[512];
	int		 fd;

	if ((fd = tls_dial(ctx, host, port)) == -1)
		return (1);
	/* Under TLS 1.3 a refused certificate shows at the first read. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	printf("connected\n");
	snprintf(last, sizeof(last), "no error");
	while ((ans = recv_env()) != NULL) {
		if (ans->body_case == R3Q__ENVELOPE__BODY_ERROR)
			snprintf(last, sizeof(last), "%s",
			    ans->error->message);
		frame_free(ans);
	}
	/* No Error frame: a TLS alert (a refused certificate) says why. */
	if (strcmp(last, "no error") == 0 && ERR_peek_last_error() != 0)
		snprintf(last, sizeof(last), "TLS: %s",
		    ERR_reason_error_string(ERR_peek_last_error()) != NULL ?
		    ERR_reason_error_string(ERR_peek_last_error()) : "error");
	printf("closed: %s\n", last);
	roles_hangup(fd);
	return (0);
}

int
do_roles(SSL_CTX *ctx, const char *host, const char *port, const char *mode)
{
	const ProtobufCMessageDescriptor	*d = &r3q__envelope__descriptor;
	const ProtobufCFieldDescriptor		*f;
	const char *const			*may;
	unsigned				 i, ntypes = 0, bad = 0;
	int					 r;

	if (strcmp(mode, "hold") == 0)
		return (roles_hold(ctx, host, port));
	if (strcmp(mode, "worker") == 0)
		may = worker_may;
	else if (strcmp(mode, "prehello") == 0)
		may = prehello_may;
	else if (strcmp(mode, "client") == 0)
		may = client_may;
	else {
		printf("roles: unknown mode %s\n", mode);
		return (2);
	}
	for (i = 0; i < d->n_fields; i++) {
		f = &d->fields[i];
		/* The body's fields: every message type there is. */
		if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) == 0 ||
		    f->type != PROTOBUF_C_TYPE_MESSAGE)
			continue;
		ntypes++;
		if ((r = roles_try(ctx, host, port, mode, f)) == -1) {
			printf("FAIL %s %s: could not be tried\n", mode,
			    f->name);
			bad++;
			continue;
		}
		printf("%s %s %s\n", mode, f->name, r ? "refused" :
		    "accepted");
		if (r == 0 && !roles_in(may, f->name)) {
			printf("FAIL %s %s: accepted, but a %s session may not "
			    "send it\n", mode, f->name, mode);
			bad++;
		} else if (r == 1 && roles_in(may, f->name)) {
			printf("FAIL %s %s: refused, but a %s session may send "
			    "it\n", mode, f->name, mode);
			bad++;
		}
	}
	printf("%s: %u message types tried, %u wrong\n", mode, ntypes, bad);
	return (bad == 0 && ntypes > 0 ? 0 : 1);
}

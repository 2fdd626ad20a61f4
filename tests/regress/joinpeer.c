/*
 * r3q-joinpeer: hostile peers of masterd's certificate authority
 * (masterd/tokens.c), each holding only what an outsider could get: a
 * relay's certificate, a stolen worker key, addresses to guess from.
 *
 *   r3q-joinpeer relay HOST PORT CA CERT KEY SELF NAME
 *	as relay SELF (CERT: a relay's), say hello, open a stream for NAME
 *	(no certificate of NAME's), say NAME's hello over it and ask for a
 *	renewal: a new key's request for CN=NAME.  Prints "minted: SUBJECT"
 *	(exit 1) if the master signed it, else "refused: WHY" (exit 0)
 *   r3q-joinpeer renew HOST PORT CA CERT KEY NAME OUT
 *	as worker NAME with CERT and KEY (stolen, say): hello, then ask for
 *	a renewal with a new key; writes OUT.pem and OUT.key and prints
 *	"renewed: SERIAL" (exit 0), or "refused: WHY" (exit 1)
 *   r3q-joinpeer hello HOST PORT CA CERT KEY NAME [hold]
 *	as worker NAME: hello; prints "welcomed" (exit 0) or "refused: WHY"
 *	(exit 1); with hold, then waits for the master to close: "closed:
 *	WHY" (or "closed" without an Error)
 *   r3q-joinpeer guess HOST PORT ROUNDS SRC...
 *	ROUNDS rounds of wrong token guesses, one from each source address
 *	SRC in turn (so that sources whose buckets shared a slot would take
 *	turns); prints "SRC wrong N busy M global G" for each, and "max
 *	wrong N" across them: N answers "unknown token" or "wrong secret", M
 *	"too many failed join attempts from SRC", G "... from all addresses"
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/time.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "frame.h"

/*
 * The one connection, and what the modes made (freed at exit, so that
 * LeakSanitizer, which reads the test tools too, finds nothing): the
 * context, the last key and request, the last frame read and the last
 * frame a relay's stream carried.
 */
static SSL		*jp_ssl;
static SSL_CTX		*jp_sctx;
static EVP_PKEY		*jp_key;
static unsigned char	*jp_der;
static Envelope		*jp_env, *jp_inner;

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr, "usage: r3q-joinpeer relay host port ca cert key self "
	    "name\n"
	    "       r3q-joinpeer renew host port ca cert key name out\n"
	    "       r3q-joinpeer hello host port ca cert key name [hold]\n"
	    "       r3q-joinpeer guess host port rounds src ...\n");
	exit(2);
}

/* Connect to host:port from src (NULL: any); the socket or -1. */
static int
jp_connect(const char *host, const char *port, const char *src)
{
	struct addrinfo		 hints, *res;
	struct sockaddr_in	 sin;
	struct timeval		 tv = { 10, 0 };
	int			 fd;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, port, &hints, &res) != 0)
		return (-1);
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1) {
		freeaddrinfo(res);
		return (-1);
	}
	if (src != NULL) {
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		if (inet_pton(AF_INET, src, &sin.sin_addr) != 1 ||
		    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1) {
			fprintf(stderr, "cannot bind %s\n", src);
			exit(2);
		}
	}
	if (connect(fd, res->ai_addr, res->ai_addrlen) == -1) {
		close(fd);
		freeaddrinfo(res);
		return (-1);
	}
	freeaddrinfo(res);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return (fd);
}

/* A TLS 1.3 client context: with CA, CERT and KEY, or none at all. */
static SSL_CTX *
jp_ctx(const char *ca, const char *cert, const char *key)
{
	SSL_CTX	*ctx;

	if ((ctx = SSL_CTX_new(TLS_client_method())) == NULL)
		exit(2);
	SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
	if (ca != NULL && (SSL_CTX_use_certificate_chain_file(ctx,
	    cert) != 1 || SSL_CTX_use_PrivateKey_file(ctx, key,
	    SSL_FILETYPE_PEM) != 1)) {
		fprintf(stderr, "cannot load %s or %s\n", cert, key);
		exit(2);
	}
	SSL_CTX_free(jp_sctx);
	jp_sctx = ctx;
	return (ctx);
}

/* Dial and shake hands; 0, or -1 after "refused: handshake". */
static int
jp_dial(SSL_CTX *ctx, const char *host, const char *port, const char *src)
{
	int	 fd;

	if ((fd = jp_connect(host, port, src)) == -1) {
		printf("refused: cannot connect\n");
		return (-1);
	}
	jp_ssl = SSL_new(ctx);
	SSL_set_fd(jp_ssl, fd);
	if (SSL_connect(jp_ssl) != 1) {
		printf("refused: handshake failed\n");
		return (-1);
	}
	return (0);
}

/* Close the connection, if any. */
static void
jp_close(void)
{
	if (jp_ssl == NULL)
		return;
	close(SSL_get_fd(jp_ssl));
	SSL_free(jp_ssl);
	jp_ssl = NULL;
	ERR_clear_error();
}

/* Send a frame; -1 if it could not be written. */
static int
jp_send(const Envelope *env)
{
	uint8_t	*buf;
	size_t	 len, n;
	int	 rc;

	if ((buf = frame_pack(env, &len)) == NULL)
		return (-1);
	rc = SSL_write_ex(jp_ssl, buf, len, &n) == 1 ? 0 : -1;
	free(buf);
	return (rc);
}

/* Read exactly len bytes; -1 on close, error or silence. */
static int
jp_get(uint8_t *buf, size_t len)
{
	size_t	 n;

	while (len > 0) {
		if (SSL_read_ex(jp_ssl, buf, len, &n) != 1)
			return (-1);
		buf += n;
		len -= n;
	}
	return (0);
}

/*
 * The next frame, or NULL when the master closed (or 10 s of silence);
 * valid until the next call.
 */
static Envelope *
jp_recv(void)
{
	uint8_t		 hdr[FRAME_HDRLEN], *body;
	uint32_t	 len;
	Envelope	*env = NULL;
	char		 err[256];

	if (jp_env != NULL)
		frame_free(jp_env);
	jp_env = NULL;

	if (jp_get(hdr, sizeof(hdr)) == -1 ||
	    frame_header_decode(hdr, FRAME_MAX_DEFAULT, &len, err,
	    sizeof(err)) == -1)
		return (NULL);
	if ((body = malloc(len + 1)) == NULL || jp_get(body, len) == -1 ||
	    frame_unpack(body, len, FRAME_MAX_DEFAULT, &env, err,
	    sizeof(err)) == -1)
		env = NULL;
	free(body);
	return (jp_env = env);
}

/* A request for CN=name with a new P-256 key (kept in *keyp): DER. */
static int
jp_csr(const char *name, EVP_PKEY **keyp, unsigned char **der)
{
	X509_REQ	*req;
	int		 len;

	EVP_PKEY_free(jp_key);
	OPENSSL_free(jp_der);
	jp_key = NULL;
	jp_der = NULL;
	if ((*keyp = EVP_EC_gen("P-256")) == NULL ||
	    (req = X509_REQ_new()) == NULL)
		exit(2);
	X509_NAME_add_entry_by_NID(X509_REQ_get_subject_name(req),
	    NID_commonName, MBSTRING_ASC, (const unsigned char *)name, -1, -1,
	    0);
	X509_REQ_set_pubkey(req, *keyp);
	X509_REQ_sign(req, *keyp, EVP_sha256());
	*der = NULL;
	len = i2d_X509_REQ(req, der);
	X509_REQ_free(req);
	jp_key = *keyp;
	jp_der = *der;
	if (len <= 0)
		exit(2);
	return (len);
}

/* Fill env with a hello of name. */
static void
jp_hello(Envelope *env, R3q__Hello *h, const char *name)
{
	r3q__hello__init(h);
	h->protocol = R3Q_PROTOCOL;
	h->name = (char *)(uintptr_t)name;
	h->cpus = 1;
	env->body_case = R3Q__ENVELOPE__BODY_HELLO;
	env->hello = h;
}

/* Fill env with a renewal request (no token) for name. */
static void
jp_renewal(Envelope *env, R3q__JoinRequest *jr, const char *name,
    EVP_PKEY **keyp, unsigned char **der)
{
	r3q__join_request__init(jr);
	jr->protocol = R3Q_PROTOCOL;
	jr->token = (char *)(uintptr_t)"";
	jr->csr.len = (size_t)jp_csr(name, keyp, der);
	jr->csr.data = *der;
	env->id = 7;
	env->body_case = R3Q__ENVELOPE__BODY_JOIN_REQUEST;
	env->join_request = jr;
}

/* The subject and serial of a JoinAnswer's certificate. */
static X509 *
jp_answer_cert(const R3q__JoinAnswer *ja, char *subj, size_t len)
{
	BIO	*b;
	X509	*x;

	b = BIO_new_mem_buf(ja->cert.data, (int)ja->cert.len);
	x = PEM_read_bio_X509(b, NULL, NULL, NULL);
	BIO_free(b);
	if (x == NULL)
		snprintf(subj, len, "(unreadable)");
	else
		X509_NAME_oneline(X509_get_subject_name(x), subj, (int)len);
	return (x);
}

/* relay: a relay asks for a certificate in a stream's name. */
static int
do_relay(char **argv)
{
	Envelope		 env = R3Q__ENVELOPE__INIT, inner, *ans, *in;
	R3q__Hello		 h, ih;
	R3q__JoinRequest	 jr;
	R3q__RelayControl	 rc = R3Q__RELAY_CONTROL__INIT;
	R3q__RelayData		 rd = R3Q__RELAY_DATA__INIT;
	EVP_PKEY		*key;
	X509			*x;
	unsigned char		*der;
	uint8_t			*buf;
	char			*via[1], subj[256], err[256];
	const char		*self = argv[5], *name = argv[6];
	size_t			 len;
	int			 step = 0;

	if (jp_dial(jp_ctx(argv[2], argv[3], argv[4]), argv[0], argv[1],
	    NULL) == -1)
		return (0);
	jp_hello(&env, &h, self);
	if (jp_send(&env) == -1 || (ans = jp_recv()) == NULL ||
	    ans->body_case != R3Q__ENVELOPE__BODY_WELCOME) {
		printf("refused: relay %s not welcomed\n", self);
		return (0);
	}
	via[0] = (char *)(uintptr_t)self;
	rc.stream = 1;
	rc.op = 1;
	rc.name = (char *)(uintptr_t)name;
	rc.role = (char *)(uintptr_t)"worker";
	rc.via = via;
	rc.n_via = 1;
	rc.address = (char *)(uintptr_t)"192.0.2.1:1";
	env.body_case = R3Q__ENVELOPE__BODY_RELAY_CONTROL;
	env.relay_control = &rc;
	(void)jp_send(&env);
	/* The stream's hello, then (once welcomed, or at once) the request. */
	for (step = 0; step < 2; step++) {
		r3q__envelope__init(&inner);
		if (step == 0)
			jp_hello(&inner, &ih, name);
		else
			jp_renewal(&inner, &jr, name, &key, &der);
		if ((buf = frame_pack(&inner, &len)) == NULL)
			return (2);
		r3q__envelope__init(&env);
		rd.stream = 1;
		rd.data.data = buf;
		rd.data.len = len;
		env.body_case = R3Q__ENVELOPE__BODY_RELAY_DATA;
		env.relay_data = &rd;
		(void)jp_send(&env);
		free(buf);
	}
	while ((ans = jp_recv()) != NULL) {
		if (ans->body_case == R3Q__ENVELOPE__BODY_RELAY_CONTROL &&
		    ans->relay_control->op == 2) {
			printf("refused: stream closed: %s\n",
			    ans->relay_control->reason);
			return (0);
		}
		if (ans->body_case == R3Q__ENVELOPE__BODY_ERROR) {
			printf("refused: %s\n", ans->error->message);
			return (0);
		}
		if (ans->body_case != R3Q__ENVELOPE__BODY_RELAY_DATA ||
		    ans->relay_data->data.len <= FRAME_HDRLEN ||
		    frame_unpack(ans->relay_data->data.data + FRAME_HDRLEN,
		    ans->relay_data->data.len - FRAME_HDRLEN, 1 << 20, &in,
		    err, sizeof(err)) == -1)
			continue;
		if (jp_inner != NULL)
			frame_free(jp_inner);
		jp_inner = in;
		if (in->body_case == R3Q__ENVELOPE__BODY_JOIN_ANSWER &&
		    in->join_answer->cert.len > 0) {
			x = jp_answer_cert(in->join_answer, subj, sizeof(subj));
			printf("minted: %s\n", subj);
			X509_free(x);
			return (1);
		}
		if (in->body_case == R3Q__ENVELOPE__BODY_ERROR &&
		    in->id == 7) {
			printf("refused: %s\n", in->error->message);
			return (0);
		}
	}
	printf("refused: closed\n");
	return (0);
}

/* renew: a worker's key (stolen, say) asks for a successor. */
static int
do_renew(char **argv)
{
	Envelope		 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__Hello		 h;
	R3q__JoinRequest	 jr;
	EVP_PKEY		*key;
	X509			*x;
	FILE			*f;
	unsigned char		*der;
	char			 subj[256], path[1024], *hex;
	BIGNUM			*bn;

	if (jp_dial(jp_ctx(argv[2], argv[3], argv[4]), argv[0], argv[1],
	    NULL) == -1)
		return (1);
	jp_hello(&env, &h, argv[5]);
	if (jp_send(&env) == -1 || (ans = jp_recv()) == NULL ||
	    ans->body_case != R3Q__ENVELOPE__BODY_WELCOME) {
		printf("refused: not welcomed\n");
		return (1);
	}
	r3q__envelope__init(&env);
	jp_renewal(&env, &jr, argv[5], &key, &der);
	(void)jp_send(&env);
	while ((ans = jp_recv()) != NULL) {
		if (ans->body_case == R3Q__ENVELOPE__BODY_ERROR) {
			printf("refused: %s\n", ans->error->message);
			return (1);
		}
		if (ans->body_case == R3Q__ENVELOPE__BODY_JOIN_ANSWER)
			break;
	}
	if (ans == NULL) {
		printf("refused: closed\n");
		return (1);
	}
	if ((x = jp_answer_cert(ans->join_answer, subj, sizeof(subj))) ==
	    NULL)
		return (2);
	snprintf(path, sizeof(path), "%s.pem", argv[6]);
	if ((f = fopen(path, "w")) == NULL || PEM_write_X509(f, x) != 1 ||
	    fwrite(ans->join_answer->ca.data, 1, ans->join_answer->ca.len,
	    f) != ans->join_answer->ca.len || fclose(f) != 0)
		return (2);
	snprintf(path, sizeof(path), "%s.key", argv[6]);
	if ((f = fopen(path, "w")) == NULL || PEM_write_PrivateKey(f, key,
	    NULL, NULL, 0, NULL, NULL) != 1 || fclose(f) != 0)
		return (2);
	bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(x), NULL);
	hex = BN_bn2hex(bn);
	printf("renewed: %s\n", hex);
	OPENSSL_free(hex);
	BN_free(bn);
	X509_free(x);
	return (0);
}

/* hello: is this certificate still taken? */
static int
do_hello(char **argv, int hold)
{
	Envelope	 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__Hello	 h;
	struct timeval	 tv = { 120, 0 };

	if (jp_dial(jp_ctx(argv[2], argv[3], argv[4]), argv[0], argv[1],
	    NULL) == -1)
		return (1);
	jp_hello(&env, &h, argv[5]);
	if (jp_send(&env) == -1 || (ans = jp_recv()) == NULL) {
		printf("refused: closed\n");
		return (1);
	}
	if (ans->body_case != R3Q__ENVELOPE__BODY_WELCOME) {
		printf("refused: %s\n", ans->body_case ==
		    R3Q__ENVELOPE__BODY_ERROR ? ans->error->message :
		    frame_body_name(ans));
		return (1);
	}
	printf("welcomed\n");
	fflush(stdout);
	if (!hold)
		return (0);
	setsockopt(SSL_get_fd(jp_ssl), SOL_SOCKET, SO_RCVTIMEO, &tv,
	    sizeof(tv));
	while ((ans = jp_recv()) != NULL) {
		if (ans->body_case == R3Q__ENVELOPE__BODY_ERROR) {
			printf("closed: %s\n", ans->error->message);
			return (0);
		}
		if (ans->body_case == R3Q__ENVELOPE__BODY_HEARTBEAT)
			(void)jp_send(ans);
	}
	printf("closed\n");
	return (0);
}

/* Count the answer to a guess from src. */
static void
jp_count(const Envelope *ans, const char *src, unsigned *wrong,
    unsigned *busy, unsigned *global)
{
	const char	*m;

	if (ans->body_case != R3Q__ENVELOPE__BODY_ERROR)
		return;
	m = ans->error->message;
	if (strstr(m, "unknown token") != NULL ||
	    strstr(m, "wrong secret") != NULL)
		(*wrong)++;
	else if (strstr(m, "from all addresses") != NULL)
		(*global)++;
	else if (strstr(m, "too many failed join") != NULL)
		(*busy)++;
	else
		printf("%s: %s\n", src, m);
}

/* guess: wrong tokens from many addresses, round-robin. */
static int
do_guess(int argc, char **argv)
{
	Envelope		 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__JoinRequest	 jr = R3Q__JOIN_REQUEST__INIT;
	SSL_CTX			*ctx = jp_ctx(NULL, NULL, NULL);
	unsigned		*wrong, *busy, *global, max = 0;
	int			 rounds = atoi(argv[2]), r, i, n = argc - 3;
	char			 tok[64];

	if (rounds <= 0 || n <= 0)
		usage();
	wrong = calloc((size_t)n, sizeof(*wrong));
	busy = calloc((size_t)n, sizeof(*busy));
	global = calloc((size_t)n, sizeof(*global));
	for (r = 0; r < rounds; r++)
		for (i = 0; i < n; i++) {
			if (jp_dial(ctx, argv[0], argv[1], argv[3 + i]) == -1) {
				jp_close();
				continue;
			}
			if ((ans = jp_recv()) == NULL) {
				jp_close();
				continue;
			}
			snprintf(tok, sizeof(tok), "%012x.%032x", 0xabc000 + i,
			    r);
			jr.protocol = R3Q_PROTOCOL;
			jr.token = tok;
			env.id = 1;
			env.body_case = R3Q__ENVELOPE__BODY_JOIN_REQUEST;
			env.join_request = &jr;
			if (jp_send(&env) == 0 && (ans = jp_recv()) != NULL) {
				jp_count(ans, argv[3 + i], &wrong[i], &busy[i],
				    &global[i]);
			}
			jp_close();
		}
	for (i = 0; i < n; i++) {
		printf("%s wrong %u busy %u global %u\n", argv[3 + i],
		    wrong[i], busy[i], global[i]);
		if (wrong[i] > max)
			max = wrong[i];
	}
	printf("max wrong %u\n", max);
	free(wrong);
	free(busy);
	free(global);
	return (0);
}

/* Free what the mode made (atexit). */
static void
jp_exit(void)
{
	jp_close();
	if (jp_env != NULL)
		frame_free(jp_env);
	if (jp_inner != NULL)
		frame_free(jp_inner);
	EVP_PKEY_free(jp_key);
	OPENSSL_free(jp_der);
	SSL_CTX_free(jp_sctx);
}

int
main(int argc, char *argv[])
{
	if (argc < 2)
		usage();
	atexit(jp_exit);
	if (strcmp(argv[1], "relay") == 0 && argc == 9)
		return (do_relay(argv + 2));
	if (strcmp(argv[1], "renew") == 0 && argc == 9)
		return (do_renew(argv + 2));
	if (strcmp(argv[1], "hello") == 0 && (argc == 8 || (argc == 9 &&
	    strcmp(argv[8], "hold") == 0)))
		return (do_hello(argv + 2, argc == 9));
	if (strcmp(argv[1], "guess") == 0 && argc >= 6)
		return (do_guess(argc - 2, argv + 2));
	usage();
}

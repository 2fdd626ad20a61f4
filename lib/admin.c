/*
 * Requests and their answers on a libr3q connection, for r3qctl: it sends
 * an Envelope (a list of jobs, a watch, a token) and reads what masterd
 * answers, streamed answers included, over TLS or the control socket
 * alike.  Not exported: the shared library's symbols are r3q_* only, and
 * r3qctl links these files from a static copy (libr3qclient.a).
 *
 * A connection in admin mode (lr_admin_connect) is r3qctl's: every frame
 * that arrives goes to its queue (r_admq) as it came, none to jobs, and it
 * is not reconnected (a watch or a request in flight would be lost
 * silently): a broken connection is dead, and lr_admin_recv says why once
 * the frames that came before are taken.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "r3q-int.h"

/* A frame as it arrived, until r3qctl takes it. */
struct lr_admsg {
	TAILQ_ENTRY(lr_admsg)	 m_entry;
	size_t			 m_len;
	uint8_t			 m_body[];
};

/* Connect as r3q_connect does, in admin mode. */
struct r3q *
lr_admin_connect(const struct r3q_options *o, char *err, size_t errlen)
{
	struct r3q	*r;

	if ((r = r3q_connect(o, err, errlen)) == NULL)
		return (NULL);
	pthread_mutex_lock(&r->r_mtx);
	r->r_admin = 1;
	pthread_mutex_unlock(&r->r_mtx);
	return (r);
}

/* conn.c: a frame arrived in admin mode; keep it, packed again. */
void
lr_admin_take(struct r3q *r, const Envelope *env)
{
	struct lr_admsg	*m;
	size_t		 len;

	len = protobuf_c_message_get_packed_size(&env->base);
	if ((m = malloc(sizeof(*m) + (len ? len : 1))) == NULL) {
		lr_seterr(r, "out of memory for an answer");
		r->r_admin_lost = 1;
		return;
	}
	m->m_len = protobuf_c_message_pack(&env->base, m->m_body);
	TAILQ_INSERT_TAIL(&r->r_admq, m, m_entry);
	r->r_resolved = 1;
}

/* conn.c: forget what nobody took (r3q_close). */
void
lr_admin_clear(struct r3q *r)
{
	struct lr_admsg	*m;

	while ((m = TAILQ_FIRST(&r->r_admq)) != NULL) {
		TAILQ_REMOVE(&r->r_admq, m, m_entry);
		free(m);
	}
}

/* Send a request; its id (from 1) in *idp. */
int
lr_admin_send(struct r3q *r, Envelope *env, uint64_t *idp)
{
	int	 rc = R3Q_OK;

	pthread_mutex_lock(&r->r_mtx);
	if (!r->r_admin)
		rc = R3Q_EINVAL;
	else if (lr_send(r, env, idp) == -1 || lr_write(r) == -1)
		rc = R3Q_ECONN;
	pthread_mutex_unlock(&r->r_mtx);
	return (rc);
}

/* lr_wait's test: a frame is queued, or one was lost. */
static int
lr_admin_ready(void *arg)
{
	struct r3q	*r = arg;

	return (!TAILQ_EMPTY(&r->r_admq) || r->r_admin_lost);
}

/*
 * The next frame from masterd, whatever it is (an Error too), for
 * frame_free(); or R3Q_ESIGNALLED when r3q_signal woke the wait,
 * R3Q_ETIMEDOUT, R3Q_ECONN when the connection broke (r3q_error says
 * why), R3Q_ENOMEM.
 */
int
lr_admin_recv(struct r3q *r, Envelope **envp, int timeout_ms)
{
	struct lr_admsg	*m;
	char		 err[200];
	int		 rc;

	*envp = NULL;
	pthread_mutex_lock(&r->r_mtx);
	if (!r->r_admin) {
		pthread_mutex_unlock(&r->r_mtx);
		return (R3Q_EINVAL);
	}
	rc = lr_wait(r, lr_admin_ready, r, timeout_ms, 1);
	if ((m = TAILQ_FIRST(&r->r_admq)) != NULL) {
		TAILQ_REMOVE(&r->r_admq, m, m_entry);
		rc = R3Q_OK;
	} else if (rc == R3Q_OK)
		rc = R3Q_ENOMEM;	/* r_admin_lost */
	pthread_mutex_unlock(&r->r_mtx);
	if (m == NULL)
		return (rc);
	if (frame_unpack(m->m_body, m->m_len, LR_MAX_FRAME, envp, err,
	    sizeof(err)) == -1) {
		free(m);
		pthread_mutex_lock(&r->r_mtx);
		lr_seterr(r, "bad answer from masterd: %s", err);
		pthread_mutex_unlock(&r->r_mtx);
		return (R3Q_EPROTO);
	}
	free(m);
	return (R3Q_OK);
}

/*
 * The master's host:port as this connection reached it over TLS, or
 * NULL on the control socket (where it is not known).
 */
const char *
lr_admin_master(const struct r3q *r)
{
	return (r->r_tls ? r->r_master : NULL);
}

/*
 * A masterd without sockets (master.h): its state set up as main() does,
 * minus the listeners, the signals and the randomness.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "log.h"
#include "master.h"
#include "exchange.h"
#include "util.h"

/* masterd's state as main() makes it; journal: a path, or NULL for none. */
void
fz_master_init(const char *journal)
{
	md = xcalloc(1, sizeof(*md));
	masterd_config_defaults(&md->conf);
	/*
	 * A job's state at most 16 MB, not 1 GB: the refusal is the same
	 * code, and an input that asks for the most an ES may take no
	 * longer costs the fuzzer a second of page faults (master-client
	 * spent a quarter of its time initialising large populations).
	 */
	md->conf.max_memory = md->conf.max_job_memory = 16ULL << 20;
	snprintf(md->conf.journal, sizeof(md->conf.journal), "%s",
	    journal != NULL ? journal : "none");
	md->epoch = FZ_EPOCH;
	md->boot = 2;
	md->mac.k0 = 0x0706050403020100ULL;
	md->mac.k1 = 0x0f0e0d0c0b0a0908ULL;
	if ((md->base = event_base_new()) == NULL)
		fatalx("event_base_new");
	if ((md->sched = sched_new()) == NULL)
		fatal("sched_new");
	masterd_apply_fault();
	server_init(md->base, &md->conf, md->sched);
	control_init(md->base, &md->conf);
	job_init(md->sched, &md->conf);
	limits_init(&md->conf);
	/* A failure is said in the log. */
	(void)job_journal_open(md->base, &md->conf);
	exchange_init();
}

/* Everything main() frees at exit. */
void
fz_master_free(void)
{
	server_close();
	exchange_free_all();
	job_journal_close();
	job_free_all();
	sched_free(md->sched);
	event_base_free(md->base);
	free(md);
	md = NULL;
}

/*
 * A peer on a new session: tls as for a connection on the TLS port (its
 * role comes later: a Hello makes a worker) or on the control socket.
 * role ROLE_CLIENT on a TLS session stands for a client certificate:
 * name is its CN, as session_verified() takes it.
 */
void
fz_peer_new(struct fz_peer *p, int tls, enum role role, const char *name)
{
	struct bufferevent	*pair[2];
	static unsigned		 n;

	if (bufferevent_pair_new(md->base, BEV_OPT_CLOSE_ON_FREE |
	    BEV_OPT_DEFER_CALLBACKS, pair) == -1)
		fatalx("bufferevent_pair_new");
	snprintf(p->p_addr, sizeof(p->p_addr), "fake%u", n++);
	p->p_bev = pair[1];
	p->p_s = session_new(pair[0], p->p_addr, tls);
	if (name != NULL)
		snprintf(p->p_s->s_name, sizeof(p->p_s->s_name), "%s", name);
	if (role == ROLE_CLIENT) {
		p->p_s->s_role = ROLE_CLIENT;
		snprintf(p->p_s->s_owner, sizeof(p->p_s->s_owner), "%s",
		    name != NULL ? name : "control");
		if (!tls)
			p->p_s->s_admin = 1;	/* as control_accept() */
		bufferevent_set_timeouts(pair[0], NULL, NULL);
	}
	bufferevent_enable(p->p_bev, EV_READ | EV_WRITE);
}

/* Is the peer's session still in masterd's list? */
int
fz_peer_alive(const struct fz_peer *p)
{
	struct session	*s;

	for (s = session_first(); s != NULL; s = session_next(s))
		if (s == p->p_s)
			return (!s->s_closing);
	return (0);
}

/* The peer hangs up: masterd sees it as it would an EOF. */
void
fz_peer_free(struct fz_peer *p)
{
	if (p->p_bev != NULL)
		bufferevent_free(p->p_bev);
	p->p_bev = NULL;
}

/* Bytes from the peer, as they would come off the wire. */
void
fz_write(struct fz_peer *p, const void *buf, size_t len)
{
	bufferevent_write(p->p_bev, buf, len);
}

void
fz_send(struct fz_peer *p, const Envelope *env)
{
	uint8_t	*buf;
	size_t	 len;

	if ((buf = frame_pack(env, &len)) == NULL)
		fatalx("frame_pack");
	fz_write(p, buf, len);
	free(buf);
}

/* A frame masterd sent the peer: 1 and env (frame_free it), 0 or -1. */
int
fz_recv(struct fz_peer *p, Envelope **env)
{
	char	 err[256];

	return (frame_read(bufferevent_get_input(p->p_bev), UINT32_MAX, env,
	    err, sizeof(err)));
}

/* Forget what masterd sent the peer. */
void
fz_drop_input(struct fz_peer *p)
{
	struct evbuffer	*in = bufferevent_get_input(p->p_bev);

	evbuffer_drain(in, evbuffer_get_length(in));
}

/* Run the event loop until nothing is left to do now. */
void
fz_run(void)
{
	int	 i;

	for (i = 0; i < 10000; i++) {
		event_base_loop(md->base, EVLOOP_NONBLOCK);
		if (event_base_get_num_events(md->base,
		    EVENT_BASE_COUNT_ACTIVE) == 0)
			break;
	}
}

/* A worker's Hello, with every built-in kind, appended to buf. */
void
fz_hello_buf(struct evbuffer *buf, const char *name, uint32_t cpus)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__Hello	 h = R3Q__HELLO__INIT;
	char		 k0[] = "echo", k1[] = "synth", k2[] = "ridge_lu",
			 k3[] = "pfsp", ver[] = "fuzz";
	char		*kinds[] = { k0, k1, k2, k3 };

	h.protocol = R3Q_PROTOCOL;
	h.name = (char *)(uintptr_t)name;
	h.cpus = cpus;
	h.kinds = kinds;
	h.n_kinds = sizeof(kinds) / sizeof(kinds[0]);
	h.version = ver;
	h.speed = 1.0;
	env.body_case = R3Q__ENVELOPE__BODY_HELLO;
	env.hello = &h;
	if (frame_write(buf, &env) == -1)
		fatalx("frame_write");
}

/* The peer says Hello. */
void
fz_hello(struct fz_peer *p, const char *name, uint32_t cpus)
{
	fz_hello_buf(bufferevent_get_output(p->p_bev), name, cpus);
	fz_run();
}

/*
 * A batch job of n echo tasks (payloads "task K"), its one batch closed:
 * the job's id, 0 if masterd refused it.
 */
uint64_t
fz_job_open(struct fz_peer *p, uint32_t n)
{
	Envelope	 env = R3Q__ENVELOPE__INIT, *in;
	R3q__OpenJob	 oj = R3Q__OPEN_JOB__INIT;
	R3q__SubmitTasks st = R3Q__SUBMIT_TASKS__INIT;
	R3q__TaskSpec	*specs, **sp;
	char		(*pl)[32];
	uint64_t	 job = 0;
	uint32_t	 i;
	char		 name[] = "fuzz", kind[] = "echo";

	oj.name = name;
	env.id = 1;
	env.body_case = R3Q__ENVELOPE__BODY_OPEN_JOB;
	env.open_job = &oj;
	fz_send(p, &env);
	fz_run();
	while (fz_recv(p, &in) == 1) {
		if (in->body_case == R3Q__ENVELOPE__BODY_JOB_OPENED)
			job = in->job_opened->job;
		frame_free(in);
	}
	if (job == 0)
		return (0);
	specs = xcalloc(n, sizeof(*specs));
	sp = xcalloc(n, sizeof(*sp));
	pl = xcalloc(n, sizeof(*pl));
	for (i = 0; i < n; i++) {
		r3q__task_spec__init(&specs[i]);
		specs[i].key = i + 1;
		snprintf(pl[i], sizeof(pl[i]), "task %u", i + 1);
		specs[i].payload.data = (uint8_t *)pl[i];
		specs[i].payload.len = strlen(pl[i]);
		sp[i] = &specs[i];
	}
	st.job = job;
	st.batch = 1;
	st.kind = kind;
	st.n_tasks = n;
	st.tasks = sp;
	st.close = 1;
	env.id = 2;
	env.body_case = R3Q__ENVELOPE__BODY_SUBMIT_TASKS;
	env.submit_tasks = &st;
	fz_send(p, &env);
	fz_run();
	free(specs);
	free(sp);
	free(pl);
	return (job);
}

/* An honest echo worker's Results for the tasks of a, appended to buf. */
void
fz_results_buf(struct evbuffer *buf, const R3q__Assign *a)
{
	Envelope	 out = R3Q__ENVELOPE__INIT;
	R3q__Results	 rs = R3Q__RESULTS__INIT;
	R3q__Result	*r, **rp;
	R3q__Task	*t;
	size_t		 i;

	r = xcalloc(a->n_tasks, sizeof(*r));
	rp = xcalloc(a->n_tasks, sizeof(*rp));
	for (i = 0; i < a->n_tasks; i++) {
		t = a->tasks[i];
		r3q__result__init(&r[i]);
		r[i].id = t->id;
		r[i].epoch = a->epoch;
		r[i].tag = t->tag;
		r[i].output = t->payload;
		r[i].start_ns = 1000;
		r[i].end_ns = 2000;
		r[i].received_ns = 500;
		rp[i] = &r[i];
	}
	rs.n_results = a->n_tasks;
	rs.results = rp;
	out.body_case = R3Q__ENVELOPE__BODY_RESULTS;
	out.results = &rs;
	if (frame_write(buf, &out) == -1)
		fatalx("frame_write");
	free(r);
	free(rp);
}

/*
 * Be an honest echo worker for one round: answer every Assign masterd
 * sent the peer with the tasks' results.  Returns how many it answered.
 */
size_t
fz_work(struct fz_peer *p)
{
	Envelope	*in;
	size_t		 n = 0;

	while (fz_recv(p, &in) == 1) {
		if (in->body_case == R3Q__ENVELOPE__BODY_ASSIGN) {
			fz_results_buf(bufferevent_get_output(p->p_bev),
			    in->assign);
			n += in->assign->n_tasks;
		}
		frame_free(in);
	}
	fz_run();
	return (n);
}

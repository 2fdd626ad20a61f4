/*
 * workerd's dispatch of the master's messages (workerd/link.c, included
 * here whole, as chrony's tests include the file under test): the link
 * is set up as link_start() and the TLS handshake would leave it, Hello
 * sent, on one end of a libevent bufferevent pair; the input is what the
 * master sends, read by link_read() as off the wire.  The execution
 * threads are a stand-in (below) that finishes an echo task at once and
 * fails any other, so that Results go back without running anything.
 */
#include "../workerd/link.c"

#include <syslog.h>

#include "fuzz.h"

static struct workerd_config	 fz_conf;
static struct wtasklist		 fz_done = TAILQ_HEAD_INITIALIZER(fz_done);
static unsigned			 fz_held;

/* The stand-in for workerd/exec.c (wtask_free() is kinds.c's). */
void
exec_assign(struct wtasklist *tl, unsigned n)
{
	struct wtask	*t;

	(void)n;
	while ((t = TAILQ_FIRST(tl)) != NULL) {
		TAILQ_REMOVE(tl, t, wt_entry);
		if (strcmp(t->wt_kind, "echo") == 0) {
			t->wt_res.status = TASK_OK;
			t->wt_res.out_ext = t->wt_payload;
			t->wt_res.out_len = t->wt_payload_len;
		} else {
			t->wt_res.status = TASK_FAILED;
			snprintf(t->wt_res.error, sizeof(t->wt_res.error),
			    "kind %s is not run under fuzzing", t->wt_kind);
		}
		TAILQ_INSERT_TAIL(&fz_done, t, wt_entry);
		fz_held++;
	}
	link_wake();
}

int
exec_cancel(uint64_t id)
{
	struct wtask	*t;

	TAILQ_FOREACH(t, &fz_done, wt_entry)
		if (t->wt_id == id) {
			TAILQ_REMOVE(&fz_done, t, wt_entry);
			wtask_free(t);
			fz_held--;
			return (1);
		}
	return (0);
}

/* Relays (issue 20): the fuzzed workerd is none; relay frames are refused. */
int
relay_enabled(void)
{
	return (0);
}

void
relay_from_up(const Envelope *env)
{
	(void)env;
}

void
relay_up_lost(const char *why)
{
	(void)why;
}

void
relay_up_writable(void)
{
}

void
relay_up_ready(void)
{
}

/* Worker links (issue 22): the fuzzed workerd has no peer_listen. */
const char *
peer_address(void)
{
	return (NULL);
}

void
peer_order(uint64_t id, const R3q__PeerOrder *po)
{
	(void)id;
	(void)po;
}

void
peer_link_down(void)
{
}

/* The master's CRLs: this workerd checks no certificate, keeps none. */
void
mcrl_receive(const uint8_t *p, size_t len, const char *peer)
{
	(void)p;
	(void)len;
	(void)peer;
}

/* Balancing: every task here has run already, so none is given back. */
int
exec_withdraw(uint64_t id)
{
	(void)id;
	return (0);
}

/* Incumbent exchange: nothing runs here, so no task takes it. */
int
exec_push(uint64_t id, int32_t v)
{
	(void)id;
	(void)v;
	return (0);
}

int
exec_donate(uint64_t id)
{
	(void)id;
	return (0);
}

void
exec_news_take(struct wnewslist *nl)
{
	(void)nl;
}

size_t
exec_drop_held(void)
{
	struct wtask	*t;
	size_t		 n = 0;

	while ((t = TAILQ_FIRST(&fz_done)) != NULL) {
		TAILQ_REMOVE(&fz_done, t, wt_entry);
		wtask_free(t);
		n++;
	}
	fz_held = 0;
	return (n);
}

void
exec_collect(struct wtasklist *done, uint64_t *started, size_t *nstarted,
    uint64_t *half, size_t *nhalf)
{
	(void)started;
	(void)half;
	*nstarted = *nhalf = 0;
	TAILQ_CONCAT(done, &fz_done, wt_entry);
	fz_held = 0;
}

unsigned
exec_threads(void)
{
	return (2);
}

void
exec_counts(unsigned *held, unsigned *running)
{
	*held = fz_held;
	*running = 0;
}

void
exec_halves(uint64_t **first, size_t *nfirst, uint64_t **second,
    size_t *nsecond)
{
	*first = xcalloc(2, sizeof(**first));
	*second = xcalloc(2, sizeof(**second));
	*nfirst = *nsecond = 0;
}

/* Drain: nothing is held here (every task has run already). */
size_t
exec_take_held(uint64_t **ids)
{
	*ids = xcalloc(1, sizeof(**ids));
	return (0);
}

int
exec_busy(void)
{
	return (fz_held > 0 || !TAILQ_EMPTY(&fz_done));
}

unsigned
exec_interrupt_all(void)
{
	return (0);
}

/* A DrainRequest drains the link as workerd's would. */
void
workerd_drain(const char *why)
{
	link_drain(why);
}

/* A permanent failure would make workerd exit: here, it cannot. */
void
workerd_exit(int status)
{
	(void)status;
}

double
workerd_speed(void)
{
	return (1.0);
}

static void
fz_noop(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	log_init("workerd", 1, LOG_DAEMON);
	log_setverbose(getenv("FUZZ_VERBOSE") != NULL);
	memset(&fz_conf, 0, sizeof(fz_conf));
	snprintf(fz_conf.master, sizeof(fz_conf.master), "master:7411");
	fz_conf.cpus = 2;
	fz_conf.max_frame = FRAME_MAX_DEFAULT;
	fz_conf.max_output = 1 << 20;
	fz_conf.reconnect_max = 1000;
	fz_conf.heartbeat = 1000;
	fz_conf.speed = 1.0;
	fz_conf.retry_permanent = 1;
	return (0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct event_base	*base;
	struct bufferevent	*pair[2];
	int			 i;

	if ((base = event_base_new()) == NULL)
		abort();
	/* link_start() without the TLS context and the first attempt */
	memset(&lk, 0, sizeof(lk));
	lk.l_base = base;
	lk.l_conf = &fz_conf;
	snprintf(lk.l_name, sizeof(lk.l_name), "w1");
	TAILQ_INIT(&lk.l_outbox);
	snprintf(lk.l_host, sizeof(lk.l_host), "master");
	snprintf(lk.l_port, sizeof(lk.l_port), "7411");
	link_set_peer();
	lk.l_backoff = BACKOFF_MIN_MS;
	lk.l_retry = evtimer_new(base, fz_noop, NULL);
	lk.l_wake = event_new(base, -1, 0, link_collect, NULL);
	delay_ev = evtimer_new(base, link_delay_fire, NULL);
	lk.l_frame = evtimer_new(base, link_frame_late, NULL);
	lk.l_leave = evtimer_new(base, link_drain_late, NULL);
	lk.l_heartbeat = event_new(base, -1, EV_PERSIST, link_heartbeat, NULL);
	link_heartbeat_arm(fz_conf.heartbeat);
	/* ... and the TLS handshake */
	if (bufferevent_pair_new(base, BEV_OPT_CLOSE_ON_FREE |
	    BEV_OPT_DEFER_CALLBACKS, pair) == -1)
		abort();
	lk.l_bev = pair[0];
	lk.l_state = LINK_CONNECTING;
	bufferevent_setcb(lk.l_bev, link_read, NULL, link_event, NULL);
	bufferevent_enable(lk.l_bev, EV_READ | EV_WRITE);
	bufferevent_enable(pair[1], EV_READ | EV_WRITE);
	link_hello();

	bufferevent_write(pair[1], data, size);
	for (i = 0; i < 1000; i++) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		if (event_base_get_num_events(base,
		    EVENT_BASE_COUNT_ACTIVE) == 0)
			break;
	}

	exec_drop_held();
	link_stop();
	batch = NULL;		/* link_stop() frees it, once in a process */
	bufferevent_free(pair[1]);
	event_base_free(base);
	return (0);
}

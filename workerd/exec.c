/*
 * The local queue and the execution threads of workerd (RWQ steps 2 and 4:
 * one thread per CPU takes tasks from this worker's own queue).  Threads
 * hand finished tasks back through the done list and wake the loop thread;
 * a task withdrawn by the master is removed while held or interrupted
 * through its cancel flag while running.
 */
#include "config.h"

#ifdef HAVE_SYS_PRCTL_H
#include <sys/prctl.h>
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "log.h"
#include "util.h"
#include "workerd.h"

/* Everything below is shared with the threads: guarded by ex_mtx. */
static struct {
	pthread_mutex_t	 ex_mtx;
	pthread_cond_t	 ex_cv;
	struct wtasklist ex_held;	/* the local queue */
	struct wtasklist ex_done;	/* finished, for the loop thread */
	struct wnewslist ex_newsq;	/* running tasks' news, likewise */
	struct wtask	**ex_running;	/* per thread */
	struct wtask	**ex_next;	/* per thread: taken from the queue
					   and handed to its persistent
					   process, to run next (ctx->next) */
	unsigned	 ex_nnext;
	unsigned	 ex_nheld;
	unsigned	 ex_nrunning;
	unsigned	 ex_nidle;	/* threads waiting for a task */
	unsigned	 ex_nthreads;
	pthread_t	*ex_threads;
	int		 ex_news;	/* the loop thread has been woken */
	int		 ex_stop;
	void		(*ex_wake)(void);
} ex;

/* max_output: set by the loop thread (start, SIGHUP), read by threads. */
static _Atomic uint64_t	 ex_max_output = MAX_OUTPUT_DEFAULT;

/* The largest output a task may give; a longer one fails the task. */
void
exec_set_max_output(uint64_t max)
{
	atomic_store(&ex_max_output, max);
}

/*
 * Wake the loop thread unless it has been woken since it last collected:
 * under load one wake-up carries many tasks' news.  Called with ex_mtx
 * held; returns whether to call ex_wake (after unlocking).
 */
static int
exec_news(void)
{
	if (ex.ex_news)
		return (0);
	ex.ex_news = 1;
	return (1);
}

/* Half-way callback from a task kind. */
static void
exec_progress(void *arg, int half)
{
	struct wtask	*t = arg;
	int		 wake;

	if (half != 2)
		return;
	pthread_mutex_lock(&ex.ex_mtx);
	atomic_store(&t->wt_half, 1);
	wake = exec_news();
	pthread_mutex_unlock(&ex.ex_mtx);
	if (wake)
		ex.ex_wake();
}

/*
 * News from a running task (ctx->share): copied into the news queue for
 * the loop thread, which sends it before any result it collects after.
 */
static void
exec_share(void *arg, const uint8_t *data, size_t len)
{
	struct wtask	*t = arg;
	struct wnews	*n;
	int		 wake;

	if ((n = malloc(sizeof(*n) + len)) == NULL) {
		log_warn("task %llu: news of %zu bytes",
		    (unsigned long long)t->wt_id, len);
		return;
	}
	n->wn_id = t->wt_id;
	n->wn_epoch = t->wt_epoch;
	n->wn_tag = t->wt_tag;
	n->wn_len = len;
	memcpy(n->wn_data, data, len);
	pthread_mutex_lock(&ex.ex_mtx);
	TAILQ_INSERT_TAIL(&ex.ex_newsq, n, wn_entry);
	wake = exec_news();
	pthread_mutex_unlock(&ex.ex_mtx);
	if (wake)
		ex.ex_wake();
}

/*
 * ctx->launched, and after the task if its kind did not call it: the
 * wake-up of the loop thread that was put off (exec_thread()).
 */
static void
exec_launched(void *arg)
{
	struct wtask	*t = arg;

	if (t->wt_wake) {
		t->wt_wake = 0;
		ex.ex_wake();
	}
}

/*
 * ctx->busy: a task of a persistent kind still runs a while after it was
 * handed over; the master now hears of its start (exec_thread()).
 */
static void
exec_running(void *arg)
{
	struct wtask	*t = arg;
	int		 wake;

	if (!t->wt_busy)
		return;
	t->wt_busy = 0;
	pthread_mutex_lock(&ex.ex_mtx);
	wake = exec_news();
	pthread_mutex_unlock(&ex.ex_mtx);
	if (wake)
		ex.ex_wake();
}

/*
 * ctx->next (pipelining): the head of the local queue, if it is of the
 * running task's persistent kind, leaves the queue to run next on this
 * thread; its frame goes to the process now.  From here on it is as good
 * as running for the master (not withdrawn, cancelled through its flag),
 * but it is not reported started, nor in a heartbeat's halves, until it
 * starts.
 */
static int
exec_next(void *arg, struct task_params *p, const atomic_int **cancel)
{
	struct wtask	*t = arg, *n;
	unsigned	 slot = t->wt_slot;

	pthread_mutex_lock(&ex.ex_mtx);
	n = TAILQ_FIRST(&ex.ex_held);
	if (ex.ex_stop || ex.ex_next[slot] != NULL || n == NULL ||
	    n->wt_ext != t->wt_ext || atomic_load(&n->wt_cancel)) {
		pthread_mutex_unlock(&ex.ex_mtx);
		return (0);
	}
	TAILQ_REMOVE(&ex.ex_held, n, wt_entry);
	ex.ex_nheld--;
	ex.ex_next[slot] = n;
	ex.ex_nnext++;
	n->wt_slot = slot;
	pthread_mutex_unlock(&ex.ex_mtx);
	p->kind = n->wt_kind;
	p->payload = n->wt_payload;
	p->payload_len = n->wt_payload_len;
	*cancel = &n->wt_cancel;
	return (1);
}

/*
 * One execution thread: take the head of the local queue, run it.  The
 * loop thread is woken for a task's start and for the result of the task
 * before it once the task is handed to its persistent process, not
 * before: woken first, it (and masterd, which it writes to) would take
 * the CPU the process is to wake on, and each task of a persistent kind
 * would start that much later.
 */
static void *
exec_thread(void *arg)
{
	struct task_params	 p;
	struct task_ctx		 ctx;
	struct wtask		*t, *next = NULL;
	unsigned		 slot = (unsigned)(uintptr_t)arg;
	int			 wake;

#if defined(HAVE_SYS_PRCTL_H) && defined(PR_SET_TIMERSLACK)
	/*
	 * Timers of this thread fire when asked, not up to 50 us later (the
	 * default slack): a task that sleeps (synth) lasts its time.
	 */
	(void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
#endif
	wake = 0;
	pthread_mutex_lock(&ex.ex_mtx);
	for (;;) {
		/* Stopping: a task handed over and not started is freed. */
		if (next != NULL && ex.ex_stop) {
			TAILQ_INSERT_HEAD(&ex.ex_held, next, wt_entry);
			ex.ex_nheld++;
			next = NULL;
		}
		while (next == NULL && !ex.ex_stop &&
		    TAILQ_EMPTY(&ex.ex_held)) {
			if (wake) {
				/* A result, and no next task to wait for. */
				wake = 0;
				pthread_mutex_unlock(&ex.ex_mtx);
				ex.ex_wake();
				pthread_mutex_lock(&ex.ex_mtx);
				continue;
			}
			ex.ex_nidle++;
			pthread_cond_wait(&ex.ex_cv, &ex.ex_mtx);
			ex.ex_nidle--;
		}
		if (ex.ex_stop) {
			pthread_mutex_unlock(&ex.ex_mtx);
			if (wake)
				ex.ex_wake();
			return (NULL);
		}
		if ((t = next) == NULL) {
			t = TAILQ_FIRST(&ex.ex_held);
			TAILQ_REMOVE(&ex.ex_held, t, wt_entry);
			ex.ex_nheld--;
		}
		ex.ex_running[slot] = t;
		ex.ex_nrunning++;
		t->wt_slot = slot;
		/*
		 * The master hears of the start (section 3's state 1).  A
		 * task of a persistent kind that answers within TASK_BUSY_MS
		 * is told of by its result alone (exec_collect()), which
		 * saves a wake-up of the loop thread, a frame and masterd's
		 * work on it; one that runs longer is news then (ctx->busy),
		 * and the start is said at the next collect in any case.
		 */
		t->wt_busy = t->wt_ext != NULL &&
		    t->wt_ext->k_type == EXT_PERSISTENT;
		if (!t->wt_busy && exec_news())
			wake = 1;
		pthread_mutex_unlock(&ex.ex_mtx);
		t->wt_wake = wake;
		wake = 0;
		if (t->wt_ext == NULL || t->wt_ext->k_type != EXT_PERSISTENT)
			exec_launched(t);

		memset(&p, 0, sizeof(p));
		p.kind = t->wt_kind;
		p.payload = t->wt_payload;
		p.payload_len = t->wt_payload_len;
		memset(&ctx, 0, sizeof(ctx));
		ctx.cancel = &t->wt_cancel;
		ctx.speed = workerd_speed();
		ctx.progress = exec_progress;
		ctx.arg = t;
		ctx.bound = &t->wt_bound;
		ctx.donate = &t->wt_donate;
		ctx.share = exec_share;
		ctx.launched = exec_launched;
		ctx.busy = exec_running;
		ctx.next = exec_next;
		ctx.queued = next != NULL;
		next = NULL;
		/* A queued task starts as the answer before it is read. */
		t->wt_start = wall_ns();
		if (t->wt_ext != NULL)
			ext_run(t->wt_ext, slot, &p, &ctx,
			    atomic_load(&ex_max_output), &t->wt_res);
		else
			task_run(&p, &ctx, &t->wt_res);
		t->wt_end = wall_ns();
		exec_launched(t);
		/* Over max_output: fail it here rather than send it. */
		task_result_limit(&t->wt_res, atomic_load(&ex_max_output));

		/*
		 * Take the next task in the same critical section: a busy
		 * thread locks once per task, and the loop thread is woken
		 * only if it has not been since it last collected: once the
		 * next task is handed over, or now if there is none.
		 */
		pthread_mutex_lock(&ex.ex_mtx);
		ex.ex_running[slot] = NULL;
		ex.ex_nrunning--;
		TAILQ_INSERT_TAIL(&ex.ex_done, t, wt_entry);
		wake = exec_news();
		if ((next = ex.ex_next[slot]) != NULL) {
			ex.ex_next[slot] = NULL;
			ex.ex_nnext--;
		}
	}
}

/* Start n execution threads; wake is called when there is news. */
int
exec_start(struct event_base *base, unsigned n, void (*wake)(void))
{
	unsigned	 i;

	(void)base;
	pthread_mutex_init(&ex.ex_mtx, NULL);
	pthread_cond_init(&ex.ex_cv, NULL);
	TAILQ_INIT(&ex.ex_held);
	TAILQ_INIT(&ex.ex_done);
	TAILQ_INIT(&ex.ex_newsq);
	ex.ex_wake = wake;
	ex.ex_nthreads = n;
	ex.ex_running = xcalloc(n, sizeof(*ex.ex_running));
	ex.ex_next = xcalloc(n, sizeof(*ex.ex_next));
	ex.ex_threads = xcalloc(n, sizeof(*ex.ex_threads));
	for (i = 0; i < n; i++)
		if (pthread_create(&ex.ex_threads[i], NULL, exec_thread,
		    (void *)(uintptr_t)i) != 0)
			fatalx("cannot start execution thread %u", i);
	return (0);
}

/* Interrupt everything and join the threads. */
void
exec_stop(void)
{
	struct wtask	*t;
	unsigned	 i;

	pthread_mutex_lock(&ex.ex_mtx);
	ex.ex_stop = 1;
	for (i = 0; i < ex.ex_nthreads; i++) {
		if (ex.ex_running[i] != NULL)
			task_cancel_raise(&ex.ex_running[i]->wt_cancel);
		if (ex.ex_next[i] != NULL)
			task_cancel_raise(&ex.ex_next[i]->wt_cancel);
	}
	pthread_cond_broadcast(&ex.ex_cv);
	pthread_mutex_unlock(&ex.ex_mtx);
	for (i = 0; i < ex.ex_nthreads; i++)
		pthread_join(ex.ex_threads[i], NULL);
	while ((t = TAILQ_FIRST(&ex.ex_held)) != NULL) {
		TAILQ_REMOVE(&ex.ex_held, t, wt_entry);
		wtask_free(t);
	}
	while ((t = TAILQ_FIRST(&ex.ex_done)) != NULL) {
		TAILQ_REMOVE(&ex.ex_done, t, wt_entry);
		wtask_free(t);
	}
	exec_news_free(&ex.ex_newsq);
	free(ex.ex_running);
	free(ex.ex_next);
	free(ex.ex_threads);
}

/*
 * RWQ step 5, worker side: the tasks of one Assign join the tail of the
 * local queue together, and only idle threads are woken.  A task moved
 * here by balancing goes before every task held that was not (the Power
 * paper's Active Queue, served before the Schedule Queue: §4), after those moved
 * before it.
 */
void
exec_assign(struct wtasklist *tl, unsigned n)
{
	struct wtask	*t, *after;
	unsigned	 wake;

	if (n == 0)
		return;
	pthread_mutex_lock(&ex.ex_mtx);
	after = NULL;
	TAILQ_FOREACH(t, &ex.ex_held, wt_entry) {
		if (!t->wt_active)
			break;
		after = t;
	}
	while ((t = TAILQ_FIRST(tl)) != NULL) {
		TAILQ_REMOVE(tl, t, wt_entry);
		if (!t->wt_active)
			TAILQ_INSERT_TAIL(&ex.ex_held, t, wt_entry);
		else {
			if (after == NULL)
				TAILQ_INSERT_HEAD(&ex.ex_held, t, wt_entry);
			else
				TAILQ_INSERT_AFTER(&ex.ex_held, after, t,
				    wt_entry);
			after = t;
		}
	}
	ex.ex_nheld += n;
	wake = n < ex.ex_nidle ? n : ex.ex_nidle;
	if (wake == ex.ex_nidle)
		pthread_cond_broadcast(&ex.ex_cv);
	else
		while (wake-- > 0)
			pthread_cond_signal(&ex.ex_cv);
	pthread_mutex_unlock(&ex.ex_mtx);
}

/*
 * Forced termination (R3Q): a held copy is removed from the local queue, a
 * running one is interrupted.  Returns 1 held, 2 running, 0 not here.
 */
int
exec_cancel(uint64_t id)
{
	struct wtask	*t;
	unsigned	 i;
	int		 rc = 0;

	pthread_mutex_lock(&ex.ex_mtx);
	TAILQ_FOREACH(t, &ex.ex_held, wt_entry) {
		if (t->wt_id == id) {
			TAILQ_REMOVE(&ex.ex_held, t, wt_entry);
			ex.ex_nheld--;
			wtask_free(t);
			rc = 1;
			goto out;
		}
	}
	for (i = 0; i < ex.ex_nthreads; i++) {
		if (ex.ex_running[i] != NULL && ex.ex_running[i]->wt_id == id) {
			task_cancel_raise(&ex.ex_running[i]->wt_cancel);
			rc = 2;
			break;
		}
		/* Handed to its process: stopped there, its result comes. */
		if (ex.ex_next[i] != NULL && ex.ex_next[i]->wt_id == id) {
			task_cancel_raise(&ex.ex_next[i]->wt_cancel);
			rc = 2;
			break;
		}
	}
out:
	pthread_mutex_unlock(&ex.ex_mtx);
	return (rc);
}

/* Lower a bound to v: the master's incumbent only goes down. */
static void
exec_lower(_Atomic int32_t *b, int32_t v)
{
	int32_t	 cur = atomic_load(b);

	while (v < cur && !atomic_compare_exchange_weak(b, &cur, v))
		;
}

/*
 * TaskPush: the bound of task id, held or running, drops to v; a running
 * task reads it at its next step.  Returns 1 held, 2 running, 0 not here.
 */
int
exec_push(uint64_t id, int32_t v)
{
	struct wtask	*t;
	unsigned	 i;
	int		 rc = 0;

	pthread_mutex_lock(&ex.ex_mtx);
	for (i = 0; i < ex.ex_nthreads; i++) {
		if ((t = ex.ex_running[i]) != NULL && t->wt_id == id) {
			exec_lower(&t->wt_bound, v);
			rc = 2;
		}
		if ((t = ex.ex_next[i]) != NULL && t->wt_id == id) {
			exec_lower(&t->wt_bound, v);
			rc = 2;
		}
	}
	TAILQ_FOREACH(t, &ex.ex_held, wt_entry)
		if (t->wt_id == id) {
			exec_lower(&t->wt_bound, v);
			rc = rc ? rc : 1;
		}
	pthread_mutex_unlock(&ex.ex_mtx);
	return (rc);
}

/*
 * TaskPush: task id is asked to give part of its open work back (its
 * kind answers through ctx->share, or not at all).  A held one is asked
 * too, and answers once it runs.  Returns as exec_push().
 */
int
exec_donate(uint64_t id)
{
	struct wtask	*t;
	unsigned	 i;
	int		 rc = 0;

	pthread_mutex_lock(&ex.ex_mtx);
	for (i = 0; i < ex.ex_nthreads; i++) {
		if ((t = ex.ex_running[i]) != NULL && t->wt_id == id) {
			atomic_store(&t->wt_donate, 1);
			rc = 2;
		}
		if ((t = ex.ex_next[i]) != NULL && t->wt_id == id) {
			atomic_store(&t->wt_donate, 1);
			rc = 2;
		}
	}
	if (rc == 0)
		TAILQ_FOREACH(t, &ex.ex_held, wt_entry)
			if (t->wt_id == id) {
				atomic_store(&t->wt_donate, 1);
				rc = 1;
			}
	pthread_mutex_unlock(&ex.ex_mtx);
	return (rc);
}

/*
 * Take the running tasks' news for the loop thread.  Called after
 * exec_collect(): a result collected then had its news queued before it.
 */
void
exec_news_take(struct wnewslist *nl)
{
	pthread_mutex_lock(&ex.ex_mtx);
	TAILQ_CONCAT(nl, &ex.ex_newsq, wn_entry);
	pthread_mutex_unlock(&ex.ex_mtx);
}

/*
 * Balancing: give a held task back (1), unless a thread has taken it
 * already or it is not here (0).  The lock makes the answer exact: a
 * thread takes a task from the queue under it.
 */
int
exec_withdraw(uint64_t id)
{
	struct wtask	*t;
	int		 rc = 0;

	pthread_mutex_lock(&ex.ex_mtx);
	TAILQ_FOREACH(t, &ex.ex_held, wt_entry) {
		if (t->wt_id == id) {
			TAILQ_REMOVE(&ex.ex_held, t, wt_entry);
			ex.ex_nheld--;
			wtask_free(t);
			rc = 1;
			break;
		}
	}
	pthread_mutex_unlock(&ex.ex_mtx);
	return (rc);
}

/*
 * Drain: drop every held task, for the master to requeue; the
 * ids go into *ids (the caller frees it).  Returns how many.
 */
size_t
exec_take_held(uint64_t **ids)
{
	struct wtask	*t;
	size_t		 n = 0;

	pthread_mutex_lock(&ex.ex_mtx);
	*ids = xcalloc(ex.ex_nheld + 1, sizeof(**ids));
	while ((t = TAILQ_FIRST(&ex.ex_held)) != NULL) {
		TAILQ_REMOVE(&ex.ex_held, t, wt_entry);
		(*ids)[n++] = t->wt_id;
		wtask_free(t);
	}
	ex.ex_nheld = 0;
	pthread_mutex_unlock(&ex.ex_mtx);
	return (n);
}

/*
 * drain_timeout ran out: interrupt every running task to hand it back.
 * Each comes back through the done list marked wt_handback; one the
 * master cancelled already is left as it was.  Returns how many.
 */
unsigned
exec_interrupt_all(void)
{
	struct wtask	*t;
	unsigned	 i, n = 0;

	pthread_mutex_lock(&ex.ex_mtx);
	for (i = 0; i < 2 * ex.ex_nthreads; i++) {
		t = i < ex.ex_nthreads ? ex.ex_running[i] :
		    ex.ex_next[i - ex.ex_nthreads];
		if (t == NULL || atomic_load(&t->wt_cancel))
			continue;
		t->wt_handback = 1;
		task_cancel_raise(&t->wt_cancel);
		n++;
	}
	pthread_mutex_unlock(&ex.ex_mtx);
	return (n);
}

/* The master went away and re-queued our held tasks: drop them. */
size_t
exec_drop_held(void)
{
	struct wtask	*t;
	size_t		 n = 0;

	pthread_mutex_lock(&ex.ex_mtx);
	while ((t = TAILQ_FIRST(&ex.ex_held)) != NULL) {
		TAILQ_REMOVE(&ex.ex_held, t, wt_entry);
		wtask_free(t);
		n++;
	}
	ex.ex_nheld = 0;
	pthread_mutex_unlock(&ex.ex_mtx);
	return (n);
}

/*
 * Take the finished tasks for the loop thread, and note in the caller's
 * arrays (of at least as many entries as threads) the running tasks whose
 * start or half-way point the master has not heard of.  A task that
 * started and ended since the last collect is only reported by its
 * result, which says both.
 */
void
exec_collect(struct wtasklist *done, uint64_t *started, size_t *nstarted,
    uint64_t *half, size_t *nhalf)
{
	struct wtask	*t;
	unsigned	 i;

	*nstarted = *nhalf = 0;
	pthread_mutex_lock(&ex.ex_mtx);
	ex.ex_news = 0;
	TAILQ_CONCAT(done, &ex.ex_done, wt_entry);
	for (i = 0; i < ex.ex_nthreads; i++) {
		if ((t = ex.ex_running[i]) == NULL)
			continue;
		if (!t->wt_said_start) {
			t->wt_said_start = 1;
			started[(*nstarted)++] = t->wt_id;
		}
		if (!t->wt_said_half && atomic_load(&t->wt_half)) {
			t->wt_said_half = 1;
			half[(*nhalf)++] = t->wt_id;
		}
	}
	pthread_mutex_unlock(&ex.ex_mtx);
}

/* The number of execution threads. */
unsigned
exec_threads(void)
{
	return (ex.ex_nthreads);
}

/*
 * The running tasks split by half (the worker monitoring of doc/algorithms.md
 * section 3), for a heartbeat; the caller frees both arrays.
 */
void
exec_halves(uint64_t **first, size_t *nfirst, uint64_t **second,
    size_t *nsecond)
{
	struct wtask	*t;
	unsigned	 i;

	pthread_mutex_lock(&ex.ex_mtx);
	*first = xcalloc(ex.ex_nthreads, sizeof(**first));
	*second = xcalloc(ex.ex_nthreads, sizeof(**second));
	*nfirst = *nsecond = 0;
	for (i = 0; i < ex.ex_nthreads; i++) {
		if ((t = ex.ex_running[i]) == NULL)
			continue;
		if (atomic_load(&t->wt_half))
			(*second)[(*nsecond)++] = t->wt_id;
		else
			(*first)[(*nfirst)++] = t->wt_id;
	}
	pthread_mutex_unlock(&ex.ex_mtx);
}

/*
 * Is anything left here: held, running, or finished and not collected yet
 * (the loop thread is woken for those)?  A drain ends only when not.
 */
int
exec_busy(void)
{
	int	 busy;

	pthread_mutex_lock(&ex.ex_mtx);
	busy = ex.ex_nheld > 0 || ex.ex_nrunning > 0 || ex.ex_nnext > 0 ||
	    !TAILQ_EMPTY(&ex.ex_done);
	pthread_mutex_unlock(&ex.ex_mtx);
	return (busy);
}

/* How many tasks are held and running now. */
void
exec_counts(unsigned *held, unsigned *running)
{
	pthread_mutex_lock(&ex.ex_mtx);
	*held = ex.ex_nheld + ex.ex_nnext;	/* handed over, not started */
	*running = ex.ex_nrunning;
	pthread_mutex_unlock(&ex.ex_mtx);
}

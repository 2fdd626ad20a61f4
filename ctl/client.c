/*
 * r3qctl's connection to masterd, the one every command uses: a libr3q
 * connection in admin mode (lib/admin.c), so that TLS (R3Q_MASTER with
 * R3Q_CA, R3Q_CERT, R3Q_KEY) and the control socket (-s, R3Q_CONTROL or
 * the default one) behave the same.  Where to connect is libr3q's rule
 * (r3q(3)): -s first, then R3Q_MASTER (TLS), then R3Q_CONTROL, then the
 * default socket.
 *
 * Signals while es, bnb, islands or wait follow a job: SIGINT, SIGTERM,
 * SIGHUP and SIGPIPE (the reader of our output went away) are caught;
 * the handler counts them and wakes the wait (r3q_signal, one write(2)),
 * and ctl_recv_any calls ctl_onsignal after each wait to say what one
 * means there: es cancels its job, wait stops following.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "r3q-int.h"
#include "r3qctl.h"

static struct r3q *volatile	 ctl_conn;
static volatile sig_atomic_t	 ctl_signo;	/* the last signal caught */
static volatile sig_atomic_t	 ctl_nsig;	/* signals caught */
static void			(*ctl_onsignal)(void);
uint64_t			 ctl_job;

/* Where to connect: -s, else what libr3q finds in the environment. */
void
ctl_options(struct r3q_options *o)
{
	memset(o, 0, sizeof(*o));
	o->control = ctl_sflag;
}

/* Connect to masterd, once; r3qctl ends if it cannot. */
void
ctl_connect(void)
{
	struct r3q_options	 o;
	char			 err[512];

	if (ctl_conn != NULL)
		return;
	ctl_options(&o);
	if ((ctl_conn = lr_admin_connect(&o, err, sizeof(err))) == NULL)
		die(EX_UNAVAILABLE, "%s", err);
}

/* The master's host:port if reached over TLS, else NULL. */
const char *
ctl_master(void)
{
	ctl_connect();
	return (lr_admin_master(ctl_conn));
}

/* Send a request; returns its id. */
uint64_t
ctl_send(Envelope *env)
{
	uint64_t	 id;
	int		 rc;

	ctl_connect();
	if ((rc = lr_admin_send(ctl_conn, env, &id)) != R3Q_OK)
		die(rc == R3Q_ECONN ? EX_UNAVAILABLE : EX_FAIL, "%s",
		    r3q_error(ctl_conn)[0] != '\0' ? r3q_error(ctl_conn) :
		    r3q_strerror(rc));
	return (id);
}

/* Read one answer, an Error from the master included. */
Envelope *
ctl_recv_any(void)
{
	Envelope	*env;
	int		 rc;

	ctl_connect();
	for (;;) {
		/*
		 * A signal caught before the connection was made woke no
		 * wait (ctl_catch() had none to wake): see to it before
		 * blocking.  One caught from now on wakes the wait.
		 */
		if (ctl_nsig > 0 && ctl_onsignal != NULL)
			ctl_onsignal();
		rc = lr_admin_recv(ctl_conn, &env, -1);
		if (ctl_nsig > 0 && ctl_onsignal != NULL)
			ctl_onsignal();
		if (rc == R3Q_OK)
			return (env);
		if (rc == R3Q_ESIGNALLED)
			continue;
		die(rc == R3Q_ECONN ? EX_UNAVAILABLE : EX_FAIL, "%s",
		    r3q_error(ctl_conn)[0] != '\0' ? r3q_error(ctl_conn) :
		    r3q_strerror(rc));
	}
}

/* Read one answer; an Error from the master ends r3qctl. */
Envelope *
ctl_recv(void)
{
	static char	*msg;	/* the refusal, kept (reachable) until exit */
	Envelope	*env;

	env = ctl_recv_any();
	if (env->body_case == R3Q__ENVELOPE__BODY_ERROR) {
		/* The reply is freed before exiting (LeakSanitizer). */
		msg = strdup(env->error->message);
		frame_free(env);
		die(EX_FAIL, "%s", msg != NULL ? msg : "refused");
	}
	return (env);
}

/* An answer of the kind asked for, or r3qctl ends. */
Envelope *
ctl_expect(Envelope *env, int body)
{
	if ((int)env->body_case != body)
		die(EX_FAIL, "unexpected %s answer", frame_body_name(env));
	return (env);
}

/* A signal: counted, and the wait woken. */
static void
ctl_catch(int signo)
{
	struct r3q	*r = ctl_conn;

	ctl_signo = signo;
	ctl_nsig++;
	if (r != NULL)
		r3q_signal(r);
}

/*
 * Catch SIGINT, SIGTERM, SIGHUP and SIGPIPE for onsignal.  A signal
 * ignored when r3qctl started (nohup, a background job of a shell without
 * job control) stays ignored.
 */
void
ctl_catch_signals(void (*onsignal)(void))
{
	static const int	 sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
	struct sigaction	 sa, old;
	size_t			 i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = ctl_catch;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		if (sigaction(sigs[i], NULL, &old) == -1 ||
		    old.sa_handler == SIG_IGN)
			continue;
		if (sigaction(sigs[i], &sa, NULL) == -1)
			die(EX_FAIL, "sigaction: %s", strerror(errno));
	}
	ctl_onsignal = onsignal;
}

/*
 * Die of the signal caught, as a shell expects of a command it
 * interrupted: it reports status 128 plus the signal's number (130 for
 * SIGINT) and a script stops rather than going on to its next command.
 */
void
ctl_die_signal(void)
{
	sigset_t	 set;
	int		 signo = ctl_signo;

	signal(SIGPIPE, SIG_IGN);
	fflush(stdout);
	signal(signo, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, signo);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(signo);
	_exit(128 + signo);
}

/*
 * Close the connection and make a new one, the handler kept off the old
 * one while it goes.
 */
static void
ctl_reconnect(void)
{
	sigset_t	 all, old;
	struct r3q	*r;

	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	r = ctl_conn;
	ctl_conn = NULL;
	sigprocmask(SIG_SETMASK, &old, NULL);
	r3q_close(r);
	ctl_connect();
}

/*
 * A signal while es, bnb or islands submits or follows its job: cancel
 * the job, as srun does, say so, and die of the signal.  Before masterd
 * has answered the submission there is no id to cancel yet: wait for it
 * (masterd answers at once).  A second signal while submitting or
 * cancelling gives up.
 */
void
ctl_cancel_interrupted(void)
{
	static int	 busy;
	Envelope	 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__CancelJob	 c = R3Q__CANCEL_JOB__INIT;

	if (ctl_job == 0 || busy) {
		if (ctl_nsig < 2)
			return;
		if (ctl_job == 0)
			fprintf(stderr, "r3qctl: interrupted before masterd "
			    "gave the job's id; r3qctl jobs lists it\n");
		else
			fprintf(stderr, "r3qctl: job %" PRIu64 " may still "
			    "run; r3qctl cancel %" PRIu64 " stops it\n",
			    ctl_job, ctl_job);
		ctl_die_signal();
	}
	busy = 1;
	/* What the watch would still say no longer matters. */
	ctl_reconnect();
	c.job = ctl_job;
	env.body_case = R3Q__ENVELOPE__BODY_CANCEL_JOB;
	env.cancel_job = &c;
	ctl_send(&env);
	ans = ctl_recv_any();
	if (ans->body_case == R3Q__ENVELOPE__BODY_ERROR)
		fprintf(stderr, "r3qctl: job %" PRIu64 " not cancelled: %s\n",
		    ctl_job, ans->error->message);
	else
		fprintf(stderr, "r3qctl: cancelled job %" PRIu64 "\n",
		    ctl_job);
	frame_free(ans);
	ctl_die_signal();
}

/* One generation's line, as `es` prints it while following a job. */
void
ctl_print_gen(uint32_t gen, double best, uint64_t elapsed_ns)
{
	printf("gen %4u  best %-24.17g  elapsed %8.3fs\n", gen, best,
	    (double)elapsed_ns / 1e9);
	fflush(stdout);
}

/*
 * Follow a job until it ends: print each generation unless quiet, then
 * return its final JobInfo (the caller frees the envelope).
 */
Envelope *
ctl_follow(uint64_t job, int quiet)
{
	Envelope	 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__JobQuery	 q = R3Q__JOB_QUERY__INIT;

	q.job = job;
	q.watch = 1;
	env.body_case = R3Q__ENVELOPE__BODY_JOB_QUERY;
	env.job_query = &q;
	ctl_send(&env);
	for (;;) {
		ans = ctl_recv();
		if (ans->body_case == R3Q__ENVELOPE__BODY_JOB_INFO)
			return (ans);
		if (ans->body_case == R3Q__ENVELOPE__BODY_GEN_REPORT && !quiet)
			ctl_print_gen(ans->gen_report->generation,
			    ans->gen_report->best,
			    ans->gen_report->elapsed_ns);
		frame_free(ans);
	}
}

/*
 * Submit a job (SubmitEs, SubmitBnb or SubmitIslands in env) and return
 * its id, a signal cancelling it once it has one.
 */
uint64_t
ctl_submit(Envelope *env, int follow)
{
	Envelope	*ans;

	if (follow)
		ctl_catch_signals(ctl_cancel_interrupted);
	ctl_send(env);
	ans = ctl_expect(ctl_recv(), R3Q__ENVELOPE__BODY_JOB_INFO);
	ctl_job = ans->job_info->id;
	frame_free(ans);
	return (ctl_job);
}

/*
 * Submit a bnb job (bnb.c) and follow it to its end; a signal cancels
 * it, as it does an es job.  Returns the final JobInfo's envelope, for
 * frame_free().
 */
Envelope *
ctl_bnb_run(R3q__BnbParams *p)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__SubmitBnb	 sub = R3Q__SUBMIT_BNB__INIT;

	sub.params = p;
	env.body_case = R3Q__ENVELOPE__BODY_SUBMIT_BNB;
	env.submit_bnb = &sub;
	ctl_submit(&env, 1);
	if (ctl_nsig > 0)
		ctl_cancel_interrupted();
	return (ctl_follow(ctl_job, 1));
}

/*
 * Submit an islands job (island.c) and follow it to its end; a signal
 * cancels it, as it does an es job.  Returns the final JobInfo's
 * envelope, for frame_free().
 */
Envelope *
ctl_islands_run(R3q__IslandParams *p)
{
	Envelope		 env = R3Q__ENVELOPE__INIT;
	R3q__SubmitIslands	 sub = R3Q__SUBMIT_ISLANDS__INIT;

	sub.params = p;
	env.body_case = R3Q__ENVELOPE__BODY_SUBMIT_ISLANDS;
	env.submit_islands = &sub;
	ctl_submit(&env, 1);
	if (ctl_nsig > 0)
		ctl_cancel_interrupted();
	return (ctl_follow(ctl_job, 1));
}

/* Signals caught so far (es checks before it follows). */
int
ctl_signalled(void)
{
	return (ctl_nsig > 0);
}

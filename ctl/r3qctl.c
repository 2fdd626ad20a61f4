/*
 * r3qctl: submit and follow jobs, and look at masterd, through its control
 * socket.  `es --local` runs the same ES in-process: the reference every
 * distributed run must match bit for bit.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


#include "bnb.h"
#include "island.h"
#include "conf.h"
#include "es/es.h"
#include "es/payload.h"
#include "exchange.h"
#include "frame.h"
#include "map.h"
#include "report/report.h"
#include "sched/sched.h"
#include "task/task.h"
#include "util.h"

#define CONTROL_DEFAULT	R3Q_RUNDIR "/masterd.sock"	/* from configure */
#define CTL_MAX_FRAME	(256u << 20)

#define EX_OK		0
#define EX_FAIL		1
#define EX_USAGE	64
#define EX_UNAVAILABLE	69

static const char	*ctl_socket;
static const char	*ctl_sflag;	/* -s, for map (libr3q) */
static int		 ctl_fd = -1;
static uint64_t		 ctl_reqid;

/*
 * Signals while es or wait follows a job.  SIGINT, SIGTERM, SIGHUP and
 * SIGPIPE (the reader of our output went away) are caught but kept
 * blocked; ctl_readn lets them in only while it waits in ppoll, so none
 * slips in between a check and a read, and a write to a closed pipe or
 * socket fails with EPIPE.  ctl_onsignal says what one means there: es
 * cancels its job, wait stops following.
 */
static volatile sig_atomic_t	 ctl_signo;	/* the last signal caught */
static volatile sig_atomic_t	 ctl_nsig;	/* signals caught */
static sigset_t			 ctl_waitmask;	/* lets them in */
static void			(*ctl_onsignal)(void);
static uint64_t			 ctl_job;	/* followed; 0 before submit */

/*
 * The usage summary: on standard output with status 0 when asked for
 * (-h, --help), on standard error with status 64 after a usage error.
 */
static void __attribute__((noreturn))
usage(int code)
{
	fprintf(code == EX_OK ? stdout : stderr,
	    "usage: r3qctl [-h] [-s socket] command [arguments]\n"
	    "  -h, --help  print this help and exit (also after a command)\n"
	    "  --version   print the version and the protocol version\n"
	    "  -s socket   masterd's control socket\n"
	    "commands:\n"
	    "  es [options]           submit an ES job, follow it, print the "
	    "result\n"
	    "  submit es [options]    submit an ES job and print its id\n"
	    "  wait [--quiet] JOB     follow a job until it ends\n"
	    "  result JOB [--json] [--csv FILE]  the result and the "
	    "measurements\n"
	    "  jobs                   list jobs\n"
	    "  workers                list connected workers\n"
	    "  cancel JOB             stop a running job\n"
	    "  drain [--wait] WORKER  the worker takes no new task, hands "
	    "back those it\n"
	    "                         holds, finishes those it runs, leaves "
	    "(--wait: until\n"
	    "                         it has left)\n"
	    "  token create [--ttl D] [--uses N]  a join token for a "
	    "workerd\n"
	    "                         (default 24h, 1 use)\n"
	    "  token list             the join tokens (never their secrets)\n"
	    "  token revoke ID        a token joins no more\n"
	    "  certs                  the certificates masterd's CA issued\n"
	    "  report JOB [-o DIR] [--generations A-B] [--trace FILE]\n"
	    "                         draw a job: Gantt chart, convergence, "
	    "time\n"
	    "                         breakdown (SVG, HTML), trace JSON\n"
	    "  map [options] KIND [FILE]  one task of KIND per input line, "
	    "outputs\n"
	    "                         in input order (r3qctl map -h)\n"
	    "  exchange plan [options]  schedule a total exchange and print "
	    "it\n"
	    "                         (r3qctl exchange -h)\n"
	    "  exchange run [options]  a total exchange among the workers, "
	    "for real:\n"
	    "                         predicted vs measured (r3qctl exchange "
	    "run -h)\n"
	    "  links [--measure] [--bytes N] [--json]  the measured link "
	    "matrix\n"
	    "                         between workers (start-up, MB/s, age)\n"
	    "  bnb pfsp FILE [options]  solve a flow-shop instance by branch "
	    "and bound\n"
	    "                         (r3qctl bnb -h)\n"
	    "  islands [options]      the island-model ES, one task an "
	    "island's epoch\n"
	    "                         (r3qctl islands -h)\n"
	    "es options:\n"
	    "  --mu N  --lambda N  --generations N  --dim N  --lu N  --seed N\n"
	    "  --policy wq|rr|rwq|r3q  --queue-factor N|auto  "
	    "--reevaluate-parents\n"
	    "  --work-ms MS  --spin  --verify N  --local  --csv FILE  --json  "
	    "--quiet  --detach\n"
	    "  --balance none|one|power|global\n"
	    "map options:\n"
	    "  -0  --json  --policy P  --queue-factor N|auto  --balance B  "
	    "--timeout S\n"
	    "  --window N\n"
	    "exchange plan options:\n"
	    "  --algo A  --matrix FILE  --random P  --fatal P  --seed N  "
	    "--json\n"
	    "exchange run options:\n"
	    "  --algo A  --bytes N  --timeout D  --fatal  --json\n"
	    "bnb options:\n"
	    "  --instance N  --lb lb1|lb2  --local  --json  --node-budget N  "
	    "--max-nodes N\n"
	    "  --branching forward|bidir  --ig N  --policy P  "
	    "--multiplicity LIST\n"
	    "  --interrupt on|off  --split-depth N  --exchange INTERVAL  "
	    "--resplit\n"
	    "islands options:\n"
	    "  --islands P  --migrate-every G  --migrants K  --migrant-bytes B"
	    "\n"
	    "  --exchange-algo A  --generations N  --mu N  --lambda N  --dim N"
	    "  --seed N\n"
	    "  --work-ms MS  --spin  --policy P  --queue-factor N|auto  "
	    "--local  --json\n"
	    "  --quiet\n"
	    "report options:\n"
	    "  -o DIR  --output DIR  --generations A-B  --trace FILE\n"
	    "the control socket is -s, else $R3Q_CONTROL, else "
	    CONTROL_DEFAULT "\n"
	    "(map without -s: TLS to $R3Q_MASTER if it is set)\n");
	if (code == EX_OK && (fflush(stdout) == EOF || ferror(stdout)))
		code = EX_FAIL;
	exit(code);
}

void
die(int code, const char *fmt, ...)
{
	va_list	 ap;

	fprintf(stderr, "r3qctl: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}

/* Connect to masterd's control socket. */
static void
ctl_connect(void)
{
	struct sockaddr_un	 sun;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(ctl_socket) >= sizeof(sun.sun_path))
		die(EX_USAGE, "socket path too long: %s", ctl_socket);
	strcpy(sun.sun_path, ctl_socket);
	if ((ctl_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		die(EX_UNAVAILABLE, "socket: %s", strerror(errno));
	if (connect(ctl_fd, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		die(EX_UNAVAILABLE, "cannot reach masterd at %s: %s",
		    ctl_socket, strerror(errno));
}

/* A signal: remembered for ctl_poll, which lets it in. */
static void
ctl_catch(int signo)
{
	ctl_signo = signo;
	ctl_nsig++;
}

/*
 * Catch SIGINT, SIGTERM, SIGHUP and SIGPIPE for onsignal, blocked until
 * ctl_poll waits.  A signal ignored when r3qctl started (nohup, a
 * background job of a shell without job control) stays ignored.
 */
static void
ctl_catch_signals(void (*onsignal)(void))
{
	static const int	 sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
	struct sigaction	 sa, old;
	sigset_t		 set;
	size_t			 i;

	sigemptyset(&set);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&set, sigs[i]);
	if (sigprocmask(SIG_BLOCK, &set, &ctl_waitmask) == -1)
		die(EX_FAIL, "sigprocmask: %s", strerror(errno));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = ctl_catch;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		if (sigaction(sigs[i], NULL, &old) == -1 ||
		    old.sa_handler == SIG_IGN)
			continue;
		if (sigaction(sigs[i], &sa, NULL) == -1)
			die(EX_FAIL, "sigaction: %s", strerror(errno));
		sigdelset(&ctl_waitmask, sigs[i]);
	}
	ctl_onsignal = onsignal;
}

/*
 * Die of the signal caught, as a shell expects of a command it
 * interrupted: it reports status 128 plus the signal's number (130 for
 * SIGINT) and a script stops rather than going on to its next command.
 */
static void __attribute__((noreturn))
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
 * Wait until the control socket is readable, letting signals in.  When
 * ppoll finds the socket ready at once, Linux puts the old mask back
 * before a signal that came meanwhile is delivered: it would stay pending
 * behind the mask for as long as data keeps arriving.  So the mask is
 * opened once more after each wait, which delivers it.
 */
static void
ctl_poll(void)
{
	struct pollfd	 pfd;
	sigset_t	 blocked;

	pfd.fd = ctl_fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	while (ppoll(&pfd, 1, NULL, &ctl_waitmask) == -1) {
		if (errno != EINTR)
			die(EX_FAIL, "ppoll: %s", strerror(errno));
		if (ctl_nsig > 0 && ctl_onsignal != NULL)
			ctl_onsignal();
	}
	if (sigprocmask(SIG_SETMASK, &ctl_waitmask, &blocked) == 0)
		sigprocmask(SIG_SETMASK, &blocked, NULL);
	if (ctl_nsig > 0 && ctl_onsignal != NULL)
		ctl_onsignal();
}

/* Write all of buf. */
static void
ctl_write(const uint8_t *buf, size_t len)
{
	ssize_t	 n;

	while (len > 0) {
		if ((n = write(ctl_fd, buf, len)) == -1) {
			if (errno == EINTR)
				continue;
			die(EX_UNAVAILABLE, "write to masterd: %s",
			    strerror(errno));
		}
		buf += n;
		len -= (size_t)n;
	}
}

/* Read exactly len bytes; the master closing is an error. */
static void
ctl_readn(uint8_t *buf, size_t len)
{
	ssize_t	 n;

	while (len > 0) {
		if (ctl_onsignal != NULL)
			ctl_poll();
		if ((n = read(ctl_fd, buf, len)) == -1) {
			if (errno == EINTR)
				continue;
			die(EX_UNAVAILABLE, "read from masterd: %s",
			    strerror(errno));
		}
		if (n == 0)
			die(EX_UNAVAILABLE, "masterd closed the connection");
		buf += n;
		len -= (size_t)n;
	}
}

/* Send a request; returns its id. */
static uint64_t
ctl_send(Envelope *env)
{
	uint8_t	*buf;
	size_t	 len;

	env->id = ++ctl_reqid;
	if ((buf = frame_pack(env, &len)) == NULL)
		die(EX_FAIL, "out of memory");
	ctl_write(buf, len);
	free(buf);
	return (env->id);
}

/* Read one answer, an Error from the master included. */
static Envelope *
ctl_recv_any(void)
{
	uint8_t		 hdr[FRAME_HDRLEN], *body;
	uint32_t	 len;
	Envelope	*env;
	char		 err[256];

	ctl_readn(hdr, sizeof(hdr));
	if (frame_header_decode(hdr, CTL_MAX_FRAME, &len, err,
	    sizeof(err)) == -1)
		die(EX_FAIL, "bad answer from masterd: %s", err);
	if ((body = malloc(len ? len : 1)) == NULL)
		die(EX_FAIL, "out of memory");
	ctl_readn(body, len);
	if (frame_unpack(body, len, CTL_MAX_FRAME, &env, err,
	    sizeof(err)) == -1)
		die(EX_FAIL, "bad answer from masterd: %s", err);
	free(body);
	return (env);
}

/* Read one answer; an Error from the master ends r3qctl. */
static Envelope *
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

/* A job id argument. */
static uint64_t
parse_job(const char *s)
{
	uint64_t	 v;

	if (parse_u64(s, 1, UINT64_MAX, &v) == -1)
		die(EX_USAGE, "'%s' is not a job id", s);
	return (v);
}

/*
 * The options of a command that has none but -h and --help; returns the
 * index of its first operand.
 */
static int
parse_none(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int	 ch;

	optind = 0;	/* glibc: re-read the ordering, not main's "+" */
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1)
		usage(ch == 'h' ? EX_OK : EX_USAGE);
	return (optind);
}

/* One generation's line, as `es` prints it while following a job. */
static void
print_gen(uint32_t gen, double best, uint64_t elapsed_ns)
{
	printf("gen %4u  best %-24.17g  elapsed %8.3fs\n", gen, best,
	    (double)elapsed_ns / 1e9);
	fflush(stdout);
}

/* Write per-generation bests as CSV. */
static void
write_csv(const char *path, const R3q__JobInfo *ji)
{
	FILE	*f;
	size_t	 i;

	if ((f = fopen(path, "w")) == NULL)
		die(EX_FAIL, "%s: %s", path, strerror(errno));
	fprintf(f, "generation,best\n");
	for (i = 0; i < ji->n_gens; i++)
		fprintf(f, "%u,%.17g\n", ji->gens[i]->generation,
		    ji->gens[i]->best);
	if (fclose(f) == EOF)
		die(EX_FAIL, "%s: %s", path, strerror(errno));
}

#define S(ns)	((double)(ns) / 1e9)

/* "name":value, or null for a measure not known (0: none measured). */
static void
json_measure(const char *name, double v, const char *sep)
{
	if (v > 0 && isfinite(v))
		printf("\"%s\":%.17g%s", name, v, sep);
	else
		printf("\"%s\":null%s", name, sep);
}

/* A job's result as JSON. */
static void
print_json(const R3q__JobInfo *ji)
{
	const R3q__EsParams	*p = ji->params;
	const R3q__GenReport	*g;
	size_t			 i;

	printf("{\"job\":%" PRIu64 ",\"state\":\"%s\",\"policy\":\"%s\",",
	    ji->id, ji->state, ji->policy);
	if (ji->bnb != NULL) {
		/* A bnb job: the answer, 1-based jobs, as r3qctl bnb --json. */
		printf("\"driver\":\"bnb\",\"jobs\":%u,\"machines\":%u,"
		    "\"makespan\":", ji->bnb->jobs, ji->bnb->machines);
		if (ji->makespan > 0)
			printf("%u", ji->makespan);
		else
			printf("null");
		printf(",\"permutation\":[");
		for (i = 0; i < ji->n_permutation; i++)
			printf("%s%u", i ? "," : "", ji->permutation[i] + 1u);
		printf("],\"nodes\":%" PRIu64 ",\"tasks\":%" PRIu64 ","
		    "\"open\":%" PRIu64 ",\"proved\":%s,\"elapsed\":%.6f}\n",
		    ji->nodes, ji->bnb_tasks, ji->pool, ji->proved ? "true" :
		    "false", (double)ji->elapsed_ns / 1e9);
		return;
	}
	if (p != NULL)
		printf("\"mu\":%u,\"lambda\":%u,\"dim\":%u,\"generations\":%u,"
		    "\"lu\":%u,\"seed\":%" PRIu64 ",\"reevaluate_parents\":%s,"
		    "\"verify\":%u,", p->mu, p->lambda, p->dim, p->generations,
		    p->lu, p->seed, p->reevaluate_parents ? "true" : "false",
		    p->verify ? p->verify : 1);
	/* A job cancelled before its generation 0 has no best. */
	if (ji->n_gens > 0)
		printf("\"best\":%.17g,", ji->best);
	else
		printf("\"best\":null,");
	printf("\"best_x\":[");
	for (i = 0; i < ji->n_best_x; i++)
		printf("%s%.17g", i ? "," : "", ji->best_x[i]);
	printf("],\"elapsed\":%.6f,\"tasks_done\":%" PRIu64 ","
	    "\"results_dropped\":%" PRIu64 ",\"executions\":%" PRIu64 ","
	    "\"error\":\"", (double)ji->elapsed_ns / 1e9, ji->tasks_done,
	    ji->results_dropped, ji->executions);
	for (i = 0; ji->error != NULL && ji->error[i] != '\0'; i++) {
		if (ji->error[i] == '"' || ji->error[i] == '\\')
			putchar('\\');
		if ((unsigned char)ji->error[i] >= 0x20)
			putchar(ji->error[i]);
	}
	printf("\",\"work_ms\":%.17g,", ji->work_ms);
	if (ji->balance != NULL && ji->balance[0] != '\0')
		printf("\"balance\":\"%s\",\"moved\":%" PRIu64 ",",
		    ji->balance, ji->moved);
	/*
	 * Known after a generation (not for --local); the lower bound and
	 * the efficiency only with a synthetic load as well.
	 */
	json_measure("speed_sum", ji->speed_sum, ",");
	json_measure("lower_bound", ji->lower_bound_s, ",");
	json_measure("efficiency", ji->efficiency, ",");
	printf("\"sync\":%.6f,\"comm\":%.6f,\"compute\":%.6f,"
	    "\"replicas\":%u,\"killed_held\":%u,\"killed_running\":%u,",
	    S(ji->sync_ns), S(ji->comm_ns), S(ji->compute_ns), ji->replicas,
	    ji->killed_held, ji->killed_running);
	printf("\"generations_done\":[");
	for (i = 0; i < ji->n_gens; i++) {
		g = ji->gens[i];
		printf("%s{\"generation\":%u,\"best\":%.17g,\"elapsed\":%.6f,"
		    "\"tasks\":%u,\"total\":%.6f,\"sync\":%.6f,\"comm\":%.6f,"
		    "\"compute\":%.6f,\"replicas\":%u,\"killed_held\":%u,"
		    "\"killed_running\":%u}", i ? "," : "", g->generation,
		    g->best, S(g->elapsed_ns), g->tasks, S(g->total_ns),
		    S(g->sync_ns), S(g->comm_ns), S(g->compute_ns), g->replicas,
		    g->killed_held, g->killed_running);
	}
	printf("]}\n");
}

/* A job's result for a person. */
static void
print_result(const R3q__JobInfo *ji)
{
	size_t	 i;

	if (ji->error != NULL && ji->error[0] != '\0')
		printf("job %" PRIu64 " %s: %s\n", ji->id, ji->state,
		    ji->error);
	if (ji->bnb != NULL) {
		/* A bnb job: what r3qctl bnb prints, 1-based jobs. */
		printf("job %" PRIu64 " %s, bnb %s\n", ji->id, ji->state,
		    ji->name);
		if (ji->makespan > 0) {
			printf("makespan %u\npermutation", ji->makespan);
			for (i = 0; i < ji->n_permutation; i++)
				printf(" %u", ji->permutation[i] + 1u);
			printf("\n");
		}
		printf("nodes %" PRIu64 "\ntasks %" PRIu64 "\nopen %" PRIu64
		    "\nproved %s\n", ji->nodes, ji->bnb_tasks, ji->pool,
		    ji->proved ? "yes" : "no");
		return;
	}
	if (ji->n_gens == 0)
		return;
	if (ji->params == NULL) {
		/* A batch job: no fitness, its tasks' outcomes. */
		printf("summary: job %" PRIu64 " %s, batch job '%s' of %s, "
		    "policy %s, %zu batches, %" PRIu64 " tasks done, %" PRIu64
		    " failed, %" PRIu64 " cancelled, %.3f s\n", ji->id,
		    ji->state, ji->name, ji->owner, ji->policy, ji->n_gens,
		    ji->tasks_done, ji->tasks_failed, ji->tasks_cancelled,
		    (double)ji->elapsed_ns / 1e9);
		printf("time: compute %.3f s, communication %.3f s, "
		    "synchronisation wait %.3f s\n", S(ji->compute_ns),
		    S(ji->comm_ns), S(ji->sync_ns));
		printf("replicas %u, losing copies terminated: %u held, %u "
		    "running\n", ji->replicas, ji->killed_held,
		    ji->killed_running);
		return;
	}
	printf("best fitness: %.17g\n", ji->best);
	printf("best individual:");
	for (i = 0; i < ji->n_best_x; i++)
		printf(" %.17g", ji->best_x[i]);
	printf("\n");
	printf("summary: job %" PRIu64 " %s, policy %s, %u generations, "
	    "%" PRIu64 " evaluations, %.3f s", ji->id, ji->state, ji->policy,
	    ji->gens[ji->n_gens - 1]->generation, ji->tasks_done,
	    (double)ji->elapsed_ns / 1e9);
	if (ji->params != NULL && ji->params->verify > 1)
		printf(", each verified by %u workers", ji->params->verify);
	if (ji->results_dropped > 0)
		printf(", %" PRIu64 " duplicate results dropped",
		    ji->results_dropped);
	printf("\n");
	if (strcmp(ji->policy, "local") == 0)
		return;
	printf("time: compute %.3f s, communication %.3f s, synchronisation "
	    "wait %.3f s\n", S(ji->compute_ns), S(ji->comm_ns),
	    S(ji->sync_ns));
	printf("replicas %u, losing copies terminated: %u held, %u running\n",
	    ji->replicas, ji->killed_held, ji->killed_running);
	if (ji->balance != NULL && ji->balance[0] != '\0' &&
	    strcmp(ji->balance, "none") != 0)
		printf("balance %s: %" PRIu64 " held tasks moved\n",
		    ji->balance, ji->moved);
	if (ji->efficiency > 0)
		printf("efficiency: %.1f %% (lower bound %.3f s = %.1f s of "
		    "work / speed %.2f)\n", ji->efficiency * 100,
		    ji->lower_bound_s, ji->work_ms / 1000, ji->speed_sum);
}

/* The per-generation measurements as a table. */
static void
print_table(const R3q__JobInfo *ji)
{
	const R3q__GenReport	*g;
	size_t			 i;
	char			 best[32];

	printf("%4s %-24s %9s %9s %9s %9s %5s %5s %5s\n", "GEN", "BEST",
	    "TOTAL", "SYNC", "COMM", "COMPUTE", "REPL", "KHELD", "KRUN");
	for (i = 0; i < ji->n_gens; i++) {
		g = ji->gens[i];
		/* A batch job's batches have no best. */
		if (ji->params != NULL)
			snprintf(best, sizeof(best), "%.17g", g->best);
		else
			snprintf(best, sizeof(best), "-");
		printf("%4u %-24s %8.3fs %8.3fs %8.3fs %8.3fs %5u %5u %5u\n",
		    g->generation, best, S(g->total_ns), S(g->sync_ns),
		    S(g->comm_ns), S(g->compute_ns), g->replicas,
		    g->killed_held, g->killed_running);
	}
}

struct es_opts {
	R3q__EsParams	 p;
	int		 local;
	int		 json;
	int		 quiet;
	int		 detach;
	const char	*csv;
};

/* Parse `es` options (shared by `es` and `submit es`). */
static void
parse_es(int argc, char *argv[], struct es_opts *o)
{
	static const struct option longopts[] = {
		{ "mu",			required_argument, NULL, 'm' },
		{ "lambda",		required_argument, NULL, 'l' },
		{ "generations",	required_argument, NULL, 'g' },
		{ "dim",		required_argument, NULL, 'd' },
		{ "lu",			required_argument, NULL, 'u' },
		{ "seed",		required_argument, NULL, 's' },
		{ "policy",		required_argument, NULL, 'p' },
		{ "reevaluate-parents",	no_argument,	   NULL, 'r' },
		{ "local",		no_argument,	   NULL, 'L' },
		{ "csv",		required_argument, NULL, 'c' },
		{ "json",		no_argument,	   NULL, 'j' },
		{ "quiet",		no_argument,	   NULL, 'q' },
		{ "queue-factor",	required_argument, NULL, 'Q' },
		{ "work-ms",		required_argument, NULL, 'w' },
		{ "spin",		no_argument,	   NULL, 'S' },
		{ "verify",		required_argument, NULL, 'V' },
		{ "balance",		required_argument, NULL, 'B' },
		{ "detach",		no_argument,	   NULL, 'D' },
		{ "help",		no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	enum sched_policy	 pol;
	char			*end;
	uint64_t		 v;
	int			 ch;

	memset(o, 0, sizeof(*o));
	r3q__es_params__init(&o->p);
	o->p.mu = 30;
	o->p.lambda = 70;
	o->p.generations = 100;
	o->p.dim = 30;
	o->p.lu = 0;
	o->p.seed = 1;
	o->p.policy = (char *)(uintptr_t)"";
	o->p.balance = (char *)(uintptr_t)"";
	optind = 0;	/* glibc: re-read the ordering, not main's "+" */
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			usage(EX_OK);
		case 'm': case 'l': case 'g': case 'd': case 'u':
			if (parse_u64(optarg, 0, UINT32_MAX, &v) == -1)
				die(EX_USAGE, "--%s: '%s' is not a number",
				    longopts[ch == 'm' ? 0 : ch == 'l' ? 1 :
				    ch == 'g' ? 2 : ch == 'd' ? 3 : 4].name,
				    optarg);
			if (ch == 'm')
				o->p.mu = (uint32_t)v;
			else if (ch == 'l')
				o->p.lambda = (uint32_t)v;
			else if (ch == 'g')
				o->p.generations = (uint32_t)v;
			else if (ch == 'd')
				o->p.dim = (uint32_t)v;
			else
				o->p.lu = (uint32_t)v;
			break;
		case 's':
			if (parse_u64(optarg, 0, UINT64_MAX, &v) == -1)
				die(EX_USAGE, "--seed: '%s' is not a number",
				    optarg);
			o->p.seed = v;
			break;
		case 'p':
			if (sched_policy_parse(optarg, &pol) == -1)
				die(EX_USAGE, "--policy: '%s' is not one of "
				    "wq, rr, rwq, r3q", optarg);
			o->p.policy = optarg;
			break;
		case 'r':
			o->p.reevaluate_parents = 1;
			break;
		case 'L':
			o->local = 1;
			break;
		case 'c':
			o->csv = optarg;
			break;
		case 'j':
			o->json = 1;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'Q':
			if (strcmp(optarg, "auto") == 0)
				o->p.queue_factor = SCHED_QF_AUTO;
			else if (parse_u64(optarg, 1, SCHED_QF_MAX, &v) == 0)
				o->p.queue_factor = (uint32_t)v;
			else
				die(EX_USAGE, "--queue-factor: '%s' is not a "
				    "number from 1 to %d or auto", optarg,
				    SCHED_QF_MAX);
			break;
		case 'w':
			o->p.work_ms = strtod(optarg, &end);
			if (*optarg == '\0' || *end != '\0' ||
			    !(o->p.work_ms >= 0) || o->p.work_ms > 3600000)
				die(EX_USAGE, "--work-ms: '%s' is not a number "
				    "of milliseconds", optarg);
			break;
		case 'S':
			o->p.spin = 1;
			break;
		case 'V':
			if (parse_u64(optarg, 1, SCHED_VERIFY_MAX, &v) == -1)
				die(EX_USAGE, "--verify: '%s' is not a number "
				    "from 1 to %d", optarg, SCHED_VERIFY_MAX);
			o->p.verify = (uint32_t)v;
			break;
		case 'B':
			if (sched_balance_parse(optarg, NULL) == -1)
				die(EX_USAGE, "--balance: '%s' is not one of "
				    "none, one, power, global", optarg);
			o->p.balance = optarg;
			break;
		case 'D':
			o->detach = 1;
			break;
		default:
			usage(EX_USAGE);
		}
	}
	if (optind != argc)
		die(EX_USAGE, "unexpected argument '%s'", argv[optind]);
}

/* Submit an es job; returns the job id. */
static uint64_t
submit_es(struct es_opts *o)
{
	Envelope	 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__SubmitEs	 sub = R3Q__SUBMIT_ES__INIT;
	uint64_t	 id;

	sub.params = &o->p;
	env.body_case = R3Q__ENVELOPE__BODY_SUBMIT_ES;
	env.submit_es = &sub;
	ctl_send(&env);
	ans = ctl_recv();
	if (ans->body_case != R3Q__ENVELOPE__BODY_JOB_INFO)
		die(EX_FAIL, "unexpected %s answer", frame_body_name(ans));
	id = ans->job_info->id;
	frame_free(ans);
	return (id);
}

/*
 * Follow a job until it ends: print each generation unless quiet, then
 * return its final JobInfo (the caller frees the envelope).
 */
static Envelope *
follow(uint64_t job, int quiet)
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
			print_gen(ans->gen_report->generation,
			    ans->gen_report->best,
			    ans->gen_report->elapsed_ns);
		frame_free(ans);
	}
}

/* Print a finished job the way the options ask; returns the exit code. */
static int
report(const R3q__JobInfo *ji, const struct es_opts *o)
{
	if (o->csv != NULL)
		write_csv(o->csv, ji);
	if (o->json)
		print_json(ji);
	else
		print_result(ji);
	return (strcmp(ji->state, "done") == 0 ? EX_OK : EX_FAIL);
}

/* The same ES in this process, one evaluation after the other. */
static int
es_local(struct es_opts *o)
{
	struct es_params	 ep;
	struct task_params	 tp;
	struct task_ctx		 ctx;
	struct task_result	 tr;
	R3q__JobInfo		 ji = R3Q__JOB_INFO__INIT;
	R3q__GenReport		*gens, **gp;
	struct es		*es;
	atomic_int		 cancel = 0;
	uint64_t		 start, evals = 0;
	uint8_t			*payload;
	const uint8_t		*out;
	double			 f;
	size_t			 i, n, outlen;
	uint32_t		 g;
	char			 err[256];
	int			 rc;

	memset(&ep, 0, sizeof(ep));
	ep.mu = o->p.mu;
	ep.lambda = o->p.lambda;
	ep.dim = o->p.dim;
	ep.generations = o->p.generations;
	ep.seed = o->p.seed;
	ep.reevaluate_parents = o->p.reevaluate_parents;
	if (es_params_check(&ep, err, sizeof(err)) == -1)
		die(EX_USAGE, "%s", err);
	if ((es = es_new(&ep)) == NULL)
		die(EX_FAIL, "out of memory");
	gens = calloc(ep.generations + 1, sizeof(*gens));
	gp = calloc(ep.generations + 1, sizeof(*gp));
	if (gens == NULL || gp == NULL)
		die(EX_FAIL, "out of memory");
	memset(&ctx, 0, sizeof(ctx));
	ctx.cancel = &cancel;
	ctx.speed = 1.0;
	/* The very payload masterd sends (common/es/payload.h). */
	if ((payload = malloc(es_payload_len(ep.dim))) == NULL)
		die(EX_FAIL, "out of memory");
	start = mono_ns();
	while (!es_finished(es)) {
		g = es_generation(es);
		n = es_batch_size(es);
		for (i = 0; i < n; i++) {
			es_payload_encode(payload, o->p.lu, o->p.spin ?
			    ES_PAYLOAD_SPIN : 0, o->p.work_ms,
			    es_batch_x(es, i), ep.dim);
			memset(&tp, 0, sizeof(tp));
			tp.kind = o->p.work_ms > 0 ? "synth" : "ridge-lu";
			tp.payload = payload;
			tp.payload_len = es_payload_len(ep.dim);
			if (task_run(&tp, &ctx, &tr) != TASK_OK)
				die(EX_FAIL, "generation %u individual %zu: %s",
				    g, i, tr.error);
			out = task_output(&tr, &outlen);
			if (es_output_decode(out, outlen, &f) == -1)
				die(EX_FAIL, "generation %u individual %zu: "
				    "an output of %zu bytes", g, i, outlen);
			task_result_free(&tr);
			es_set_fitness(es, i, f);
		}
		evals += n;
		if (es_advance(es) == -1)
			die(EX_FAIL, "internal error: generation %u incomplete",
			    g);
		r3q__gen_report__init(&gens[g]);
		gens[g].generation = g;
		gens[g].best = es_gen_best(es, g);
		gens[g].elapsed_ns = mono_ns() - start;
		gens[g].tasks = (uint32_t)n;
		gp[g] = &gens[g];
		if (!o->quiet && !o->json)
			print_gen(g, gens[g].best, gens[g].elapsed_ns);
	}
	ji.id = 0;
	ji.state = (char *)(uintptr_t)"done";
	ji.policy = (char *)(uintptr_t)"local";
	ji.params = &o->p;
	ji.best = es_best_f(es);
	ji.n_best_x = ep.dim;
	ji.best_x = (double *)(uintptr_t)es_best_x(es);
	ji.n_gens = ep.generations + 1;
	ji.gens = gp;
	ji.elapsed_ns = mono_ns() - start;
	ji.tasks_done = evals;
	rc = report(&ji, o);
	free(payload);
	free(gens);
	free(gp);
	es_free(es);
	return (rc);
}

/*
 * A signal while es submits or follows its job: cancel the job, as srun
 * does, say so, and die of the signal.  Before masterd has answered the
 * submission there is no id to cancel yet: wait for it (masterd answers
 * at once).  A second signal while submitting or cancelling gives up.
 */
static void
es_interrupted(void)
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
	close(ctl_fd);
	ctl_connect();
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

/*
 * Submit a bnb job (ctl/bnb.c) on the control socket and follow it to
 * its end; a signal cancels it, as it does an es job.  Returns the final
 * JobInfo's envelope, for frame_free().
 */
Envelope *
ctl_bnb_run(R3q__BnbParams *p)
{
	Envelope	 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__SubmitBnb	 sub = R3Q__SUBMIT_BNB__INIT;

	ctl_catch_signals(es_interrupted);
	ctl_connect();
	sub.params = p;
	env.body_case = R3Q__ENVELOPE__BODY_SUBMIT_BNB;
	env.submit_bnb = &sub;
	ctl_send(&env);
	ans = ctl_recv();
	if (ans->body_case != R3Q__ENVELOPE__BODY_JOB_INFO)
		die(EX_FAIL, "unexpected %s answer", frame_body_name(ans));
	ctl_job = ans->job_info->id;
	frame_free(ans);
	if (ctl_nsig > 0)
		es_interrupted();
	return (follow(ctl_job, 1));
}

/*
 * Submit an islands job (ctl/island.c) and follow it to its end; a signal
 * cancels it, as it does an es job.  Returns the final JobInfo's
 * envelope, for frame_free().
 */
Envelope *
ctl_islands_run(R3q__IslandParams *p)
{
	Envelope		 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__SubmitIslands	 sub = R3Q__SUBMIT_ISLANDS__INIT;

	ctl_catch_signals(es_interrupted);
	ctl_connect();
	sub.params = p;
	env.body_case = R3Q__ENVELOPE__BODY_SUBMIT_ISLANDS;
	env.submit_islands = &sub;
	ctl_send(&env);
	ans = ctl_recv();
	if (ans->body_case != R3Q__ENVELOPE__BODY_JOB_INFO)
		die(EX_FAIL, "unexpected %s answer", frame_body_name(ans));
	ctl_job = ans->job_info->id;
	frame_free(ans);
	if (ctl_nsig > 0)
		es_interrupted();
	return (follow(ctl_job, 1));
}

/* A signal while wait follows a job: the job goes on without us. */
static void
wait_interrupted(void)
{
	fprintf(stderr, "r3qctl: job %" PRIu64 " continues; r3qctl wait %"
	    PRIu64 " to follow it again\n", ctl_job, ctl_job);
	ctl_die_signal();
}

/* r3qctl es / submit es. */
static int
cmd_es(int argc, char *argv[], int submit_only)
{
	struct es_opts	 o;
	Envelope	*ans;
	uint64_t	 id;
	int		 rc;

	parse_es(argc, argv, &o);
	if (o.local) {
		if (submit_only || o.detach)
			die(EX_USAGE, "--local runs here: it cannot be %s",
			    submit_only ? "submitted" : "detached");
		return (es_local(&o));
	}
	/* A job followed is cancelled by a signal, a detached one is not. */
	if (!submit_only && !o.detach)
		ctl_catch_signals(es_interrupted);
	ctl_connect();
	id = submit_es(&o);
	if (submit_only || (o.detach && o.quiet)) {
		printf("%" PRIu64 "\n", id);
		return (EX_OK);
	}
	if (o.detach && o.json) {
		printf("{\"job\":%" PRIu64 "}\n", id);
		return (EX_OK);
	}
	if (!o.quiet && !o.json)
		printf("job %" PRIu64 ": (%u+%u)-ES, %u dimensions, %u "
		    "generations, lu %u, seed %" PRIu64 "%s\n", id, o.p.mu,
		    o.p.lambda, o.p.dim, o.p.generations, o.p.lu, o.p.seed,
		    o.p.reevaluate_parents ? ", parents re-evaluated" : "");
	if (o.detach) {
		printf("job %" PRIu64 " runs on: r3qctl wait %" PRIu64
		    " follows it, r3qctl result %" PRIu64 " reports it\n", id,
		    id, id);
		return (EX_OK);
	}
	fflush(stdout);
	ctl_job = id;
	if (ctl_nsig > 0)
		es_interrupted();
	/*
	 * One plain line per generation, to a terminal, a pipe or a file
	 * alike (a log wants them as much as a person); none with --json.
	 */
	ans = follow(id, o.quiet || o.json);
	rc = report(ans->job_info, &o);
	frame_free(ans);
	return (rc);
}

/* r3qctl wait [--quiet] JOB. */
static int
cmd_wait(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "quiet",	no_argument,	   NULL, 'q' },
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	Envelope	*ans;
	int		 ch, quiet = 0, rc;

	optind = 0;	/* glibc: re-read the ordering, not main's "+" */
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (ch == 'h')
			usage(EX_OK);
		else if (ch == 'q')
			quiet = 1;
		else
			usage(EX_USAGE);
	}
	if (optind + 1 != argc)
		usage(EX_USAGE);
	ctl_job = parse_job(argv[optind]);
	ctl_catch_signals(wait_interrupted);
	ctl_connect();
	ans = follow(ctl_job, quiet);
	printf("job %" PRIu64 " %s%s%s\n", ans->job_info->id,
	    ans->job_info->state, ans->job_info->error[0] ? ": " : "",
	    ans->job_info->error);
	rc = strcmp(ans->job_info->state, "done") == 0 ? EX_OK : EX_FAIL;
	frame_free(ans);
	return (rc);
}

/* r3qctl result JOB [--json] [--csv FILE]. */
static int
cmd_result(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "json",	no_argument,	   NULL, 'j' },
		{ "csv",	required_argument, NULL, 'c' },
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	Envelope	 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__JobQuery	 q = R3Q__JOB_QUERY__INIT;
	struct es_opts	 o;
	int		 ch, rc;

	memset(&o, 0, sizeof(o));
	optind = 0;	/* glibc: re-read the ordering, not main's "+" */
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (ch == 'h')
			usage(EX_OK);
		else if (ch == 'j')
			o.json = 1;
		else if (ch == 'c')
			o.csv = optarg;
		else
			usage(EX_USAGE);
	}
	if (optind + 1 != argc)
		usage(EX_USAGE);
	q.job = parse_job(argv[optind]);
	ctl_connect();
	env.body_case = R3Q__ENVELOPE__BODY_JOB_QUERY;
	env.job_query = &q;
	ctl_send(&env);
	ans = ctl_recv();
	if (ans->body_case != R3Q__ENVELOPE__BODY_JOB_INFO)
		die(EX_FAIL, "unexpected %s answer", frame_body_name(ans));
	if (ans->job_info->islands != NULL) {
		/* An islands job: what r3qctl islands prints. */
		rc = islands_print_info(ans->job_info, o.json);
		frame_free(ans);
		return (rc);
	}
	if (!o.json && ans->job_info->n_gens > 0)
		print_table(ans->job_info);
	if (strcmp(ans->job_info->state, "running") == 0 && !o.json) {
		printf("job %" PRIu64 " running: generation %u, best so far "
		    "%.17g\n", ans->job_info->id, ans->job_info->generation,
		    ans->job_info->best);
		rc = EX_OK;
	} else
		rc = report(ans->job_info, &o);
	frame_free(ans);
	return (rc);
}

/* r3qctl jobs. */
static int
cmd_jobs(void)
{
	Envelope	 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__ListJobs	 l = R3Q__LIST_JOBS__INIT;
	R3q__JobInfo	*j;
	char		 best[32];
	size_t		 i;

	ctl_connect();
	env.body_case = R3Q__ENVELOPE__BODY_LIST_JOBS;
	env.list_jobs = &l;
	ctl_send(&env);
	ans = ctl_recv();
	if (ans->body_case != R3Q__ENVELOPE__BODY_JOB_LIST)
		die(EX_FAIL, "unexpected %s answer", frame_body_name(ans));
	printf("%-6s %-10s %-6s %5s %-24s %10s %-6s %9s %s\n", "JOB", "STATE",
	    "POLICY", "GEN", "BEST", "ELAPSED", "DRIVER", "DONE", "NAME");
	for (i = 0; i < ans->job_list->n_jobs; i++) {
		j = ans->job_list->jobs[i];
		if (j->params != NULL)
			snprintf(best, sizeof(best), "%.17g", j->best);
		else
			snprintf(best, sizeof(best), "-");
		printf("%-6" PRIu64 " %-10s %-6s %5u %-24s %9.3fs %-6s %9" PRIu64
		    " %s%s%s%s\n", j->id, j->state, j->policy, j->generation,
		    best, (double)j->elapsed_ns / 1e9,
		    j->driver[0] ? j->driver : "es", j->tasks_done,
		    j->name[0] ? j->name : "-",
		    j->owner[0] ? " (" : "", j->owner, j->owner[0] ? ")" : "");
		/* Why it does not progress, on a line of its own. */
		if (j->waiting[0] != '\0')
			printf("       waiting: %s\n", j->waiting);
	}
	frame_free(ans);
	return (EX_OK);
}

/* A worker certificate this close to its end is marked (issue 24). */
#define CERT_WARN	(30 * 86400)

/* Whole days from now to a certificate's end, 0 once past. */
static int
cert_days(uint64_t not_after, time_t now)
{
	if ((time_t)not_after <= now)
		return (0);
	return ((int)(((time_t)not_after - now) / 86400));
}

/* r3qctl workers. */
static int
cmd_workers(void)
{
	Envelope	 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__ListWorkers l = R3Q__LIST_WORKERS__INIT;
	R3q__WorkerInfo	*w;
	char		 kinds[2048], since[32], hb[32], rtt[32], task[32];
	char		 cert[32], power[32];
	size_t		 i, k, off;
	struct tm	 tm;
	time_t		 t, now = time(NULL);
	int		 days;
	char		 name[256];

	ctl_connect();
	env.body_case = R3Q__ENVELOPE__BODY_LIST_WORKERS;
	env.list_workers = &l;
	ctl_send(&env);
	ans = ctl_recv();
	if (ans->body_case != R3Q__ENVELOPE__BODY_WORKER_LIST)
		die(EX_FAIL, "unexpected %s answer", frame_body_name(ans));
	printf("%-12s %-22s %4s %6s %-15s %4s %4s %7s %8s %8s %8s %7s %4s "
	    "%9s %-8s %6s %-19s %s\n", "NAME", "ADDRESS", "CPUS", "SPEED",
	    "KINDS", "CAP", "HELD", "RUNNING", "DONE", "RTT", "TASK", "LASTHB",
	    "SUSP", "POWER", "STATE", "CERT", "SINCE", "PEER");
	for (i = 0; i < ans->worker_list->n_workers; i++) {
		w = ans->worker_list->workers[i];
		kinds[0] = '\0';
		for (k = 0, off = 0; k < w->n_kinds && off < sizeof(kinds);
		    k++)
			off += (size_t)snprintf(kinds + off, sizeof(kinds) - off,
			    "%s%s", k ? "," : "", w->kinds[k]);
		t = (time_t)w->since_unix;
		localtime_r(&t, &tm);
		strftime(since, sizeof(since), "%Y-%m-%d %H:%M:%S", &tm);
		if (w->last_heartbeat_ms == UINT64_MAX)
			snprintf(hb, sizeof(hb), "-");
		else
			snprintf(hb, sizeof(hb), "%.1fs",
			    (double)w->last_heartbeat_ms / 1000);
		/* The master's estimates: none before a first result. */
		if (w->rtt_ns == 0)
			snprintf(rtt, sizeof(rtt), "-");
		else
			snprintf(rtt, sizeof(rtt), "%.1fms",
			    (double)w->rtt_ns / 1e6);
		if (w->task_ns == 0)
			snprintf(task, sizeof(task), "-");
		else
			snprintf(task, sizeof(task), "%.1fms",
			    (double)w->task_ns / 1e6);
		/* Days its certificate has left; "!" within 30 days. */
		days = cert_days(w->cert_not_after, now);
		if (w->cert_not_after == 0)
			snprintf(cert, sizeof(cert), "-");
		else
			snprintf(cert, sizeof(cert), "%dd%s", days,
			    (time_t)w->cert_not_after - now < CERT_WARN ? "!" :
			    "");
		/* Power: the master's count / the heartbeat's (issue 19). */
		snprintf(power, sizeof(power), "%u/%u", w->power,
		    w->power_reported);
		/* A relayed worker: its path (issue 20). */
		if (w->via != NULL && w->via[0] != '\0')
			snprintf(name, sizeof(name), "%s via %s", w->name,
			    w->via);
		else
			snprintf(name, sizeof(name), "%s", w->name);
		printf("%-12s %-22s %4u %6.2f %-15s %4u %4u %7u %8" PRIu64
		    " %8s %8s %7s %4" PRIu64 " %9s %-8s %6s %-19s %s\n", name,
		    w->address, w->cpus, w->speed, kinds, w->capacity, w->held,
		    w->running, w->done, rtt, task, hb, w->suspects, power,
		    w->state, cert, since, w->peer_addr[0] ? w->peer_addr :
		    "-");
	}
	/* A certificate that runs out soon: say when. */
	for (i = 0; i < ans->worker_list->n_workers; i++) {
		w = ans->worker_list->workers[i];
		if (w->cert_not_after == 0 ||
		    (time_t)w->cert_not_after - now >= CERT_WARN)
			continue;
		t = (time_t)w->cert_not_after;
		gmtime_r(&t, &tm);
		strftime(since, sizeof(since), "%Y-%m-%d %H:%M:%S UTC", &tm);
		days = cert_days(w->cert_not_after, now);
		if (t <= now)
			printf("%s: its certificate expired on %s\n", w->name,
			    since);
		else
			printf("%s: its certificate expires in %d day%s, on "
			    "%s\n", w->name, days, days == 1 ? "" : "s", since);
	}
	/* Then why any of them is not ok, and the kinds they withdrew. */
	for (i = 0; i < ans->worker_list->n_workers; i++) {
		w = ans->worker_list->workers[i];
		if (w->why != NULL && w->why[0] != '\0')
			printf("%s: %s\n", w->name, w->why);
		for (k = 0; k < w->n_unavailable; k++)
			printf("%s: withdrew kind %s\n", w->name,
			    w->unavailable[k]);
	}
	frame_free(ans);
	return (EX_OK);
}

/* JSON string: the names here are certificate CNs, printable. */
static void
json_str(const char *s)
{
	putchar('"');
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", (unsigned char)*s);
		else
			putchar(*s);
	}
	putchar('"');
}

/* r3qctl links [--measure] [--bytes N] [--json] (issue 22). */
static int
cmd_links(int argc, char *argv[])
{
	enum { O_MEASURE = 256, O_BYTES, O_JSON };
	static const struct option longopts[] = {
		{ "measure",	no_argument,	   NULL, O_MEASURE },
		{ "bytes",	required_argument, NULL, O_BYTES },
		{ "json",	no_argument,	   NULL, O_JSON },
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	Envelope	 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__LinksRequest lr = R3Q__LINKS_REQUEST__INIT;
	R3q__LinksAnswer *a;
	R3q__LinkInfo	*l;
	size_t		 i;
	int		 ch, json = 0, rc = EX_OK;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			printf("usage: r3qctl links [--measure] [--bytes N] "
			    "[--json]\n"
			    "  --measure  have the workers probe every link "
			    "first (a round trip,\n"
			    "             then a timed bulk transfer)\n"
			    "  --bytes N  of each bulk transfer (default 1M)\n"
			    "  --json     as JSON\n"
			    "prints the link matrix between the workers with "
			    "peer_listen: start-up\n(us), bandwidth (MB/s) "
			    "and the age of each measurement\n");
			return (fflush(stdout) == EOF ? EX_FAIL : EX_OK);
		case O_MEASURE:
			lr.measure = 1;
			break;
		case O_BYTES:
			if (conf_parse_size(optarg, &lr.bytes) == -1 ||
			    lr.bytes == 0)
				die(EX_USAGE, "--bytes: '%s' is not a size",
				    optarg);
			break;
		case O_JSON:
			json = 1;
			break;
		default:
			die(EX_USAGE, "links: see r3qctl links -h");
		}
	}
	if (optind != argc)
		die(EX_USAGE, "links: unexpected argument '%s'", argv[optind]);
	ctl_connect();
	env.body_case = R3Q__ENVELOPE__BODY_LINKS_REQUEST;
	env.links_request = &lr;
	ctl_send(&env);
	ans = ctl_recv();
	if (ans->body_case != R3Q__ENVELOPE__BODY_LINKS_ANSWER)
		die(EX_FAIL, "unexpected %s answer", frame_body_name(ans));
	a = ans->links_answer;
	if (json) {
		printf("{\"links\":[");
		for (i = 0; i < a->n_links; i++) {
			l = a->links[i];
			printf("%s\n{\"src\":", i ? "," : "");
			json_str(l->src);
			printf(",\"dst\":");
			json_str(l->dst);
			printf(",\"startup_us\":%.17g,\"mbps\":%.17g,"
			    "\"bandwidth\":%.17g,\"age_ms\":%" PRIu64 "}",
			    l->startup_s * 1e6, l->bandwidth / 1e6,
			    l->bandwidth, l->age_ms);
		}
		printf("],\"error\":");
		json_str(a->error);
		printf("}\n");
	} else {
		printf("%-16s %-16s %12s %10s %8s\n", "SRC", "DST",
		    "STARTUP_US", "MB/S", "AGE_S");
		for (i = 0; i < a->n_links; i++) {
			l = a->links[i];
			printf("%-16s %-16s %12.1f %10.2f %8.1f\n", l->src,
			    l->dst, l->startup_s * 1e6, l->bandwidth / 1e6,
			    (double)l->age_ms / 1000);
		}
	}
	if (a->error[0] != '\0') {
		fprintf(stderr, "r3qctl: links: %s\n", a->error);
		rc = EX_FAIL;
	}
	frame_free(ans);
	return (rc);
}

/* r3qctl exchange run [--algo A] [--bytes N] [--timeout D] [--json]. */
static int
cmd_exchange_run(int argc, char *argv[])
{
	enum { O_ALGO = 256, O_BYTES, O_TIMEOUT, O_JSON, O_FATAL };
	static const struct option longopts[] = {
		{ "algo",	required_argument, NULL, O_ALGO },
		{ "fatal",	no_argument,	   NULL, O_FATAL },
		{ "bytes",	required_argument, NULL, O_BYTES },
		{ "timeout",	required_argument, NULL, O_TIMEOUT },
		{ "json",	no_argument,	   NULL, O_JSON },
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	Envelope	 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__ExchangeRequest er = R3Q__EXCHANGE_REQUEST__INIT;
	R3q__ExchangeAnswer *a;
	R3q__ExchangeEvent *e;
	size_t		 i;
	int		 ch, json = 0, rc;

	er.algo = (char *)(uintptr_t)"";
	optind = 1;
	while ((ch = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			printf("usage: r3qctl exchange run [--algo A] "
			    "[--bytes N] [--timeout D] [--fatal] [--json]\n"
			    "  --algo A     the scheduler (r3qctl exchange -h; "
			    "default portfolio)\n"
			    "  --bytes N    each worker sends N bytes to each "
			    "other (default 1M)\n"
			    "  --timeout D  give up after D (default: from the "
			    "prediction)\n"
			    "  --json       as JSON, every event\n"
			    "  --fatal      the fatal matrix's sizes, x = N "
			    "bytes (3 workers or more)\n"
			    "a total exchange among the workers with "
			    "peer_listen, planned by the\nmaster from the "
			    "measured links (measured first if need be); "
			    "prints the\nschedule's predicted completion "
			    "beside the measured one\n");
			return (fflush(stdout) == EOF ? EX_FAIL : EX_OK);
		case O_ALGO:
			er.algo = optarg;
			break;
		case O_BYTES:
			if (conf_parse_size(optarg, &er.bytes) == -1 ||
			    er.bytes == 0)
				die(EX_USAGE, "--bytes: '%s' is not a size",
				    optarg);
			break;
		case O_TIMEOUT:
			if (conf_parse_duration(optarg, &er.timeout_ms) == -1 ||
			    er.timeout_ms == 0)
				die(EX_USAGE, "--timeout: '%s' is not a "
				    "duration", optarg);
			break;
		case O_JSON:
			json = 1;
			break;
		case O_FATAL:
			er.fatal = 1;
			break;
		default:
			die(EX_USAGE, "exchange run: see r3qctl exchange run "
			    "-h");
		}
	}
	if (optind != argc)
		die(EX_USAGE, "exchange run: unexpected argument '%s'",
		    argv[optind]);
	ctl_connect();
	env.body_case = R3Q__ENVELOPE__BODY_EXCHANGE_REQUEST;
	env.exchange_request = &er;
	ctl_send(&env);
	ans = ctl_recv();
	if (ans->body_case != R3Q__ENVELOPE__BODY_EXCHANGE_ANSWER)
		die(EX_FAIL, "unexpected %s answer", frame_body_name(ans));
	a = ans->exchange_answer;
	if (json) {
		printf("{\"ok\":%s,\"error\":", a->ok ? "true" : "false");
		json_str(a->error);
		printf(",\"algo\":");
		json_str(a->algo);
		printf(",\"workers\":[");
		for (i = 0; i < a->n_workers; i++) {
			printf("%s", i ? "," : "");
			json_str(a->workers[i]);
		}
		printf("],\"t_tb\":%.17g,\"predicted\":%.17g,"
		    "\"measured\":%.17g,\"wall\":%.17g,\"events\":[",
		    a->t_tb, a->predicted, a->measured, a->wall);
		for (i = 0; i < a->n_events; i++) {
			e = a->events[i];
			printf("%s\n{\"src\":", i ? "," : "");
			json_str(e->src);
			printf(",\"dst\":");
			json_str(e->dst);
			printf(",\"piece\":%u,\"bytes\":%" PRIu64 ","
			    "\"pred_start\":%.17g,\"pred_end\":%.17g,"
			    "\"start\":%.17g,\"end\":%.17g}", e->piece,
			    e->bytes, e->pred_start, e->pred_end, e->start,
			    e->end);
		}
		printf("]}\n");
	} else {
		printf("workers:   ");
		for (i = 0; i < a->n_workers; i++)
			printf(" %s", a->workers[i]);
		printf("\nalgorithm:  %s, %zu events\n", a->algo,
		    a->n_events);
		printf("t_tb:       %.6f s\npredicted:  %.6f s (%.3f x "
		    "t_tb)\n", a->t_tb, a->predicted, a->t_tb > 0 ?
		    a->predicted / a->t_tb : 1.0);
		if (a->ok)
			printf("measured:   %.6f s (%.3f x predicted, %.3f x "
			    "t_tb)\n", a->measured, a->predicted > 0 ?
			    a->measured / a->predicted : 1.0, a->t_tb > 0 ?
			    a->measured / a->t_tb : 1.0);
	}
	rc = EX_OK;
	if (!a->ok) {
		fprintf(stderr, "r3qctl: exchange failed: %s\n", a->error);
		rc = EX_FAIL;
	}
	frame_free(ans);
	return (rc);
}

/* A Unix time as the lists print it, UTC. */
static const char *
utc_str(uint64_t t, char *buf, size_t len)
{
	struct tm	 tm;
	time_t		 tt = (time_t)t;

	gmtime_r(&tt, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return (buf);
}

/* One token's line of r3qctl token list. */
static void
token_line(const R3q__TokenInfo *t, time_t now)
{
	char		 c[32], e[32], left[32];
	const char	*state;

	if (t->revoked)
		state = "revoked";
	else if ((time_t)t->expires <= now)
		state = "expired";
	else if (t->used >= t->uses)
		state = "used-up";
	else
		state = "valid";
	snprintf(left, sizeof(left), "%u/%u",
	    t->used < t->uses ? t->uses - t->used : 0, t->uses);
	printf("%-12s %-20s %-20s %9s %s\n", t->id, utc_str(t->created, c,
	    sizeof(c)), utc_str(t->expires, e, sizeof(e)), left, state);
}

/*
 * r3qctl token create | list | revoke (issue 25): on the control socket,
 * root or the r3q group.  create prints the token alone on standard
 * output, the only time its secret is shown.
 */
static int
cmd_token(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "ttl",	required_argument, NULL, 't' },
		{ "uses",	required_argument, NULL, 'u' },
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	Envelope	 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__TokenCreate tc = R3Q__TOKEN_CREATE__INIT;
	R3q__TokenList	 tl = R3Q__TOKEN_LIST__INIT;
	R3q__TokenRevoke tr = R3Q__TOKEN_REVOKE__INIT;
	R3q__TokenInfo	*t;
	const char	*sub;
	uint64_t	 ms, v;
	char		 e[32];
	size_t		 i;
	int		 ch;

	if (argc < 2)
		die(EX_USAGE, "token: create, list or revoke ID");
	sub = argv[1];
	if (strcmp(sub, "-h") == 0 || strcmp(sub, "--help") == 0)
		usage(EX_OK);
	argc--;
	argv++;
	optind = 0;
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 't':
			if (strcmp(sub, "create") != 0)
				die(EX_USAGE, "token %s: no --ttl", sub);
			if (conf_parse_duration(optarg, &ms) == -1 ||
			    ms < 1000 || ms > 366ULL * 86400000)
				die(EX_USAGE, "--ttl %s: a duration from 1s to "
				    "366d, such as 30m, 24h or 7d", optarg);
			tc.ttl_s = ms / 1000;
			break;
		case 'u':
			if (strcmp(sub, "create") != 0)
				die(EX_USAGE, "token %s: no --uses", sub);
			if (parse_u64(optarg, 1, 1000000, &v) == -1)
				die(EX_USAGE, "--uses %s: a number of joins "
				    "from 1 to 1000000", optarg);
			tc.uses = (uint32_t)v;
			break;
		case 'h':
			usage(EX_OK);
		default:
			usage(EX_USAGE);
		}
	}
	if (strcmp(sub, "create") == 0) {
		if (optind != argc)
			usage(EX_USAGE);
		env.body_case = R3Q__ENVELOPE__BODY_TOKEN_CREATE;
		env.token_create = &tc;
	} else if (strcmp(sub, "list") == 0) {
		if (optind != argc)
			usage(EX_USAGE);
		env.body_case = R3Q__ENVELOPE__BODY_TOKEN_LIST;
		env.token_list = &tl;
	} else if (strcmp(sub, "revoke") == 0) {
		if (optind != argc - 1)
			die(EX_USAGE, "token revoke: one token ID");
		tr.id = argv[optind];
		env.body_case = R3Q__ENVELOPE__BODY_TOKEN_REVOKE;
		env.token_revoke = &tr;
	} else
		die(EX_USAGE, "token: unknown command '%s' (create, list or "
		    "revoke)", sub);
	ctl_connect();
	ctl_send(&env);
	ans = ctl_recv();
	if (ans->body_case != R3Q__ENVELOPE__BODY_TOKEN_ANSWER)
		die(EX_FAIL, "unexpected %s answer", frame_body_name(ans));
	if (strcmp(sub, "create") == 0) {
		if (ans->token_answer->n_tokens != 1)
			die(EX_FAIL, "no token in the answer");
		t = ans->token_answer->tokens[0];
		printf("%s\n", ans->token_answer->token);
		fprintf(stderr, "token %s: %u join%s until %s; give it to "
		    "workerd: --join HOST:PORT TOKEN\n", t->id, t->uses,
		    t->uses == 1 ? "" : "s", utc_str(t->expires, e,
		    sizeof(e)));
	} else if (strcmp(sub, "revoke") == 0) {
		if (ans->token_answer->n_tokens == 1)
			printf("token %s revoked\n",
			    ans->token_answer->tokens[0]->id);
	} else {
		printf("%-12s %-20s %-20s %9s %s\n", "ID", "CREATED",
		    "EXPIRES", "USES-LEFT", "STATE");
		for (i = 0; i < ans->token_answer->n_tokens; i++)
			token_line(ans->token_answer->tokens[i], time(NULL));
	}
	frame_free(ans);
	if (fflush(stdout) == EOF || ferror(stdout))
		return (EX_FAIL);
	return (EX_OK);
}

/* r3qctl certs: what masterd's CA issued, by joins and renewals. */
static int
cmd_certs(void)
{
	Envelope	 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__TokenList	 tl = R3Q__TOKEN_LIST__INIT;
	R3q__CertInfo	*c;
	char		 a[32], b[32];
	size_t		 i;

	tl.certs = 1;
	ctl_connect();
	env.body_case = R3Q__ENVELOPE__BODY_TOKEN_LIST;
	env.token_list = &tl;
	ctl_send(&env);
	ans = ctl_recv();
	if (ans->body_case != R3Q__ENVELOPE__BODY_CERT_LIST)
		die(EX_FAIL, "unexpected %s answer", frame_body_name(ans));
	printf("%-16s %-32s %-20s %-20s %-12s %s\n", "NAME", "SERIAL",
	    "ISSUED", "NOT-AFTER", "TOKEN", "ADDRESS");
	for (i = 0; i < ans->cert_list->n_certs; i++) {
		c = ans->cert_list->certs[i];
		printf("%-16s %-32s %-20s %-20s %-12s %s\n", c->name,
		    c->serial, utc_str(c->issued, a, sizeof(a)),
		    utc_str(c->not_after, b, sizeof(b)),
		    c->token[0] ? c->token : "renewal", c->address);
	}
	frame_free(ans);
	return (EX_OK);
}

/* r3qctl cancel JOB. */
static int
cmd_cancel(int argc, char *argv[])
{
	Envelope	 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__CancelJob	 c = R3Q__CANCEL_JOB__INIT;

	if (parse_none(argc, argv) != argc - 1)
		usage(EX_USAGE);
	c.job = parse_job(argv[argc - 1]);
	ctl_connect();
	env.body_case = R3Q__ENVELOPE__BODY_CANCEL_JOB;
	env.cancel_job = &c;
	ctl_send(&env);
	ans = ctl_recv();
	printf("job %" PRIu64 " cancelled\n", c.job);
	frame_free(ans);
	return (EX_OK);
}

/*
 * r3qctl drain [--wait] WORKER (issue 25): masterd gives the worker no
 * new task and tells it to drain; it hands back what it holds, finishes
 * what runs within its drain_timeout and leaves.  --wait follows it
 * until it has left.
 */
static int
cmd_drain(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "help",	no_argument,	   NULL, 'h' },
		{ "wait",	no_argument,	   NULL, 'w' },
		{ NULL, 0, NULL, 0 }
	};
	struct timespec		 ts = { 0, 200000000 };
	Envelope		 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__DrainWorker	 d = R3Q__DRAIN_WORKER__INIT;
	R3q__ListWorkers	 l = R3Q__LIST_WORKERS__INIT;
	R3q__WorkerInfo		*w;
	size_t			 i;
	int			 ch, wait = 0, here;

	optind = 0;
	while ((ch = getopt_long(argc, argv, "hw", longopts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			usage(EX_OK);
		case 'w':
			wait = 1;
			break;
		default:
			usage(EX_USAGE);
		}
	}
	if (optind != argc - 1)
		usage(EX_USAGE);
	d.name = argv[optind];
	ctl_connect();
	env.body_case = R3Q__ENVELOPE__BODY_DRAIN_WORKER;
	env.drain_worker = &d;
	ctl_send(&env);
	ans = ctl_recv();
	if (ans->body_case != R3Q__ENVELOPE__BODY_WORKER_DRAINING ||
	    (w = ans->worker_draining->worker) == NULL)
		die(EX_FAIL, "unexpected %s answer", frame_body_name(ans));
	printf("%s: draining: no new tasks; it hands back the %u it holds "
	    "and leaves once its %u running finish\n", w->name, w->held,
	    w->running);
	fflush(stdout);
	frame_free(ans);
	while (wait) {
		env.body_case = R3Q__ENVELOPE__BODY_LIST_WORKERS;
		env.list_workers = &l;
		ctl_send(&env);
		ans = ctl_recv();
		if (ans->body_case != R3Q__ENVELOPE__BODY_WORKER_LIST)
			die(EX_FAIL, "unexpected %s answer",
			    frame_body_name(ans));
		for (i = 0, here = 0; i < ans->worker_list->n_workers; i++)
			if (strcmp(ans->worker_list->workers[i]->name,
			    d.name) == 0)
				here = 1;
		frame_free(ans);
		if (!here) {
			printf("%s: drained and left\n", d.name);
			break;
		}
		nanosleep(&ts, NULL);
	}
	return (EX_OK);
}

/* Parse --generations A-B (or A, or A-); -1 on junk. */
static int
parse_gens(const char *s, uint32_t *from, uint32_t *to)
{
	char		*end;
	unsigned long	 a, b;

	errno = 0;
	a = strtoul(s, &end, 10);
	if (end == s || errno != 0 || a > UINT32_MAX - 1 || *s == '-')
		return (-1);
	*from = (uint32_t)a;
	if (*end == '\0') {
		*to = (uint32_t)a;
		return (0);
	}
	if (*end++ != '-')
		return (-1);
	if (*end == '\0') {
		*to = UINT32_MAX;
		return (0);
	}
	s = end;
	b = strtoul(s, &end, 10);
	if (end == s || *end != '\0' || errno != 0 || b < a ||
	    b > UINT32_MAX - 1 || *s == '-')
		return (-1);
	*to = (uint32_t)b;
	return (0);
}

/* Open dir/name for writing, or die naming it. */
static FILE *
report_open(const char *dir, const char *name, char *path, size_t len)
{
	FILE	*f;

	if (dir != NULL)
		snprintf(path, len, "%s/%s", dir, name);
	else
		snprintf(path, len, "%s", name);
	if ((f = fopen(path, "w")) == NULL)
		die(EX_FAIL, "%s: %s", path, strerror(errno));
	return (f);
}

/* Close a report file, or die naming it. */
static void
report_close(FILE *f, const char *path, int rc)
{
	if (rc == -1 || ferror(f))
		die(EX_FAIL, "%s: %s", path, strerror(errno));
	if (fclose(f) == EOF)
		die(EX_FAIL, "%s: %s", path, strerror(errno));
}

/*
 * Turn masterd's JobTrace into the renderer's job: one worker per name
 * seen (its CPUs from the roster, or enough for the slots it used), the
 * generations from the job's reports, the executions and withdrawn
 * copies relative to the job's start.
 */
static void
report_build(const R3q__JobTrace *t, struct report_job *rj,
    struct report_worker **wp, struct report_gen **gp,
    struct report_span **sp, struct report_mark **mp)
{
	const R3q__JobInfo	*ji = t->info;
	struct report_worker	*w;
	struct report_gen	*g;
	struct report_span	*s;
	struct report_mark	*m;
	const R3q__Span		*x;
	size_t			 i, k, nw = 0, ns = 0, nm = 0;
	uint64_t		 prev = 0;

	w = xcalloc(t->n_workers + t->n_spans + 1, sizeof(*w));
	for (i = 0; i < t->n_workers; i++, nw++) {
		snprintf(w[nw].name, sizeof(w[nw].name), "%s",
		    t->workers[i]->name);
		w[nw].cpus = t->workers[i]->cpus ? t->workers[i]->cpus : 1;
		w[nw].speed = t->workers[i]->speed;
	}
	s = xcalloc(t->n_spans + 1, sizeof(*s));
	m = xcalloc(t->n_spans + 1, sizeof(*m));
	for (i = 0; i < t->n_spans; i++) {
		x = t->spans[i];
		for (k = 0; k < nw; k++)
			if (strcmp(w[k].name, x->worker) == 0)
				break;
		if (k == nw) {
			snprintf(w[nw].name, sizeof(w[nw].name), "%s",
			    x->worker);
			w[nw].cpus = 1;
			w[nw++].speed = 1;
		}
		if (x->outcome == 4) {
			m[nm].worker = (uint32_t)k;
			m[nm].gen = x->gen;
			m[nm].task = x->task;
			m[nm].replica = x->replica;
			m[nm].moved = x->moved;
			m[nm++].t_ns = x->start_ns > t->start_ns ?
			    x->start_ns - t->start_ns : 0;
			continue;
		}
		if (x->slot >= w[k].cpus)
			w[k].cpus = x->slot + 1;
		s[ns].worker = (uint32_t)k;
		s[ns].slot = x->slot;
		s[ns].gen = x->gen;
		s[ns].task = x->task;
		s[ns].start_ns = x->start_ns > t->start_ns ?
		    x->start_ns - t->start_ns : 0;
		s[ns].end_ns = x->end_ns > t->start_ns ?
		    x->end_ns - t->start_ns : 0;
		s[ns].outcome = x->outcome <= REPORT_FAILED ?
		    (enum report_outcome)x->outcome : REPORT_FAILED;
		s[ns].moved = x->moved;
		s[ns++].replica = x->replica;
	}
	g = xcalloc(ji->n_gens + 1, sizeof(*g));
	for (i = 0; i < ji->n_gens; i++) {
		g[i].gen = ji->gens[i]->generation;
		g[i].best = ji->gens[i]->best;
		g[i].start_ns = prev;
		g[i].total_ns = ji->gens[i]->total_ns;
		g[i].sync_ns = ji->gens[i]->sync_ns;
		g[i].comm_ns = ji->gens[i]->comm_ns;
		g[i].compute_ns = ji->gens[i]->compute_ns;
		if (ji->gens[i]->sync_ns > 0 &&
		    ji->gens[i]->elapsed_ns > ji->gens[i]->sync_ns)
			g[i].sync_start_ns = ji->gens[i]->elapsed_ns -
			    ji->gens[i]->sync_ns;
		g[i].tasks = ji->gens[i]->tasks;
		g[i].replicas = ji->gens[i]->replicas;
		g[i].killed_held = ji->gens[i]->killed_held;
		g[i].killed_running = ji->gens[i]->killed_running;
		prev = ji->gens[i]->elapsed_ns;
	}
	memset(rj, 0, sizeof(*rj));
	rj->id = ji->id;
	snprintf(rj->policy, sizeof(rj->policy), "%s", ji->policy);
	snprintf(rj->state, sizeof(rj->state), "%s", ji->state);
	/* The delay the workers emulate, if they agree on one. */
	rj->delay_ms = t->n_workers > 0 ? (double)t->workers[0]->delay_ms : -1;
	for (i = 1; i < t->n_workers; i++)
		if (t->workers[i]->delay_ms != t->workers[0]->delay_ms)
			rj->delay_ms = -1;
	rj->total_ns = ji->elapsed_ns;
	rj->efficiency = ji->efficiency > 0 ? ji->efficiency : -1;
	rj->lower_bound_s = ji->lower_bound_s > 0 ? ji->lower_bound_s : -1;
	rj->replicas = ji->replicas;
	rj->killed_held = ji->killed_held;
	rj->killed_running = ji->killed_running;
	rj->workers = w;
	rj->nworkers = nw;
	rj->gens = g;
	rj->ngens = ji->n_gens;
	rj->spans = s;
	rj->nspans = ns;
	rj->marks = m;
	rj->nmarks = nm;
	*wp = w;
	*gp = g;
	*sp = s;
	*mp = m;
}

/*
 * r3qctl report JOB [-o DIR] [--generations A-B] [--trace FILE]: the job
 * drawn as report.html plus gantt.svg, convergence.svg and breakdown.svg
 * in DIR, and/or the Chrome trace-event JSON in FILE.
 */
static int
cmd_report(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "generations", required_argument, NULL, 'g' },
		{ "trace",	 required_argument, NULL, 't' },
		{ "output",	 required_argument, NULL, 'o' },
		{ "help",	 no_argument,	    NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	Envelope		 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__JobTraceRequest	 q = R3Q__JOB_TRACE_REQUEST__INIT;
	struct report_job	 rj;
	struct report_worker	*w;
	struct report_gen	*g;
	struct report_span	*s;
	struct report_mark	*m;
	const char		*dir = NULL, *trace = NULL;
	char			 path[PATH_MAX];
	uint32_t		 from = 0, to = UINT32_MAX;
	FILE			*f;
	int			 ch;

	optind = 0;
	while ((ch = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			usage(EX_OK);
		case 'o':
			dir = optarg;
			break;
		case 'g':
			if (parse_gens(optarg, &from, &to) == -1)
				die(EX_USAGE, "--generations: '%s' is not A-B",
				    optarg);
			break;
		case 't':
			trace = optarg;
			break;
		default:
			usage(EX_USAGE);
		}
	}
	if (optind + 1 != argc)
		usage(EX_USAGE);
	if (dir == NULL && trace == NULL)
		dir = ".";
	q.job = parse_job(argv[optind]);
	ctl_connect();
	env.body_case = R3Q__ENVELOPE__BODY_JOB_TRACE_REQUEST;
	env.job_trace_request = &q;
	ctl_send(&env);
	ans = ctl_recv();
	if (ans->body_case != R3Q__ENVELOPE__BODY_JOB_TRACE ||
	    ans->job_trace->info == NULL)
		die(EX_FAIL, "unexpected %s answer", frame_body_name(ans));
	report_build(ans->job_trace, &rj, &w, &g, &s, &m);
	if (dir != NULL) {
		if (mkdir(dir, 0755) == -1 && errno != EEXIST)
			die(EX_FAIL, "%s: %s", dir, strerror(errno));
		f = report_open(dir, "report.html", path, sizeof(path));
		report_close(f, path, report_html(f, &rj, from, to));
		f = report_open(dir, "gantt.svg", path, sizeof(path));
		report_close(f, path, report_svg_gantt(f, &rj, from, to));
		f = report_open(dir, "convergence.svg", path, sizeof(path));
		report_close(f, path, report_svg_convergence(f, &rj));
		f = report_open(dir, "breakdown.svg", path, sizeof(path));
		report_close(f, path, report_svg_breakdown(f, &rj));
		printf("%s/report.html: job %" PRIu64 ", %zu executions on "
		    "%zu workers, %zu generations\n", dir, rj.id, rj.nspans,
		    rj.nworkers, rj.ngens);
	}
	if (trace != NULL) {
		f = report_open(NULL, trace, path, sizeof(path));
		report_close(f, path, report_trace_json(f, &rj));
	}
	free(w);
	free(g);
	free(s);
	free(m);
	frame_free(ans);
	return (EX_OK);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "help",	no_argument,	   NULL, 'h' },
		{ "version",	no_argument,	   NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	int	 ch;

	ctl_socket = getenv("R3Q_CONTROL");
	if (ctl_socket == NULL || *ctl_socket == '\0')
		ctl_socket = CONTROL_DEFAULT;
	while ((ch = getopt_long(argc, argv, "+hs:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			usage(EX_OK);
		case 'V':
			printf("r3qctl %s (R3Q protocol %d)\n", PACKAGE_VERSION,
			    R3Q_PROTOCOL);
			return (fflush(stdout) == EOF ? EX_FAIL : EX_OK);
		case 's':
			ctl_socket = ctl_sflag = optarg;
			break;
		default:
			usage(EX_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		usage(EX_USAGE);
	if (strcmp(argv[0], "help") == 0)
		usage(argc == 1 ? EX_OK : EX_USAGE);
	if (strcmp(argv[0], "es") == 0)
		return (cmd_es(argc, argv, 0));
	if (strcmp(argv[0], "submit") == 0) {
		if (argc == 2 && (strcmp(argv[1], "-h") == 0 ||
		    strcmp(argv[1], "--help") == 0))
			usage(EX_OK);
		if (argc < 2 || strcmp(argv[1], "es") != 0)
			die(EX_USAGE, "submit: only 'es' jobs exist");
		return (cmd_es(argc - 1, argv + 1, 1));
	}
	if (strcmp(argv[0], "wait") == 0)
		return (cmd_wait(argc, argv));
	if (strcmp(argv[0], "result") == 0)
		return (cmd_result(argc, argv));
	if (strcmp(argv[0], "jobs") == 0) {
		if (parse_none(argc, argv) != argc)
			usage(EX_USAGE);
		return (cmd_jobs());
	}
	if (strcmp(argv[0], "workers") == 0) {
		if (parse_none(argc, argv) != argc)
			usage(EX_USAGE);
		return (cmd_workers());
	}
	if (strcmp(argv[0], "cancel") == 0)
		return (cmd_cancel(argc, argv));
	if (strcmp(argv[0], "drain") == 0)
		return (cmd_drain(argc, argv));
	if (strcmp(argv[0], "token") == 0)
		return (cmd_token(argc, argv));
	if (strcmp(argv[0], "certs") == 0) {
		if (parse_none(argc, argv) != argc)
			usage(EX_USAGE);
		return (cmd_certs());
	}
	if (strcmp(argv[0], "report") == 0)
		return (cmd_report(argc, argv));
	if (strcmp(argv[0], "map") == 0)
		return (cmd_map(argc, argv, ctl_sflag));
	if (strcmp(argv[0], "exchange") == 0 && argc >= 2 &&
	    strcmp(argv[1], "run") == 0)
		return (cmd_exchange_run(argc - 1, argv + 1));
	if (strcmp(argv[0], "exchange") == 0)
		return (cmd_exchange(argc, argv));
	if (strcmp(argv[0], "links") == 0)
		return (cmd_links(argc, argv));
	if (strcmp(argv[0], "bnb") == 0)
		return (cmd_bnb(argc, argv));
	if (strcmp(argv[0], "islands") == 0)
		return (cmd_islands(argc, argv));
	die(EX_USAGE, "unknown command '%s' (see r3qctl -h)", argv[0]);
}

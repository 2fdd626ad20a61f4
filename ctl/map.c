/*
 * r3qctl map: one task per line (or NUL-separated record) of a file or
 * standard input, run through libr3q as one batch of a new job, outputs
 * printed in input order as they become ready (GNU parallel's
 * --keep-order).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "r3q.h"
#include "sched/sched.h"
#include "r3qctl.h"
#include "util.h"


#define MAP_TICK_MS	250	/* progress, and a look at the deadline */
#define MAP_WATCH_MS	5000	/* no output this long: ask masterd why */
#define MAP_PROCESS	1024	/* records between looks while reading */
#define MAP_WINDOW	100000	/* tasks in flight, by default */
#define MAP_WINDOW_MAX	10000000
#define MAP_WBYTES	(256ULL << 20)	/* their payloads' bytes, at most */

struct map_opts {
	int		 nul;
	int		 json;
	const char	*policy;
	const char	*balance;
	unsigned	 queue_factor;
	uint64_t	 timeout_ms;	/* 0: none */
	uint64_t	 window;	/* tasks in flight, at most */
	int		 window_set;	/* given: the master's caps aside */
	const char	*kind;
	const char	*file;
};

/* What a record became. */
struct map_task {
	struct r3q_future	*t_f;
	size_t			 t_len;
	int			 t_timedout;
};

/*
 * The input, read by hand rather than with getdelim(): map must know when
 * no record is waiting, to send what it holds and print what is ready
 * while a slow producer (tail -f, a pipeline) makes the next one.
 */
struct map_in {
	int		 fd;
	char		*buf;
	size_t		 start, end, cap;
	int		 eof;
};

static struct r3q		*map_r;
static volatile sig_atomic_t	 map_signo;
/*
 * The tasks in flight, submitted and not yet printed: records next to n - 1
 * of the input, in a ring of map_cap (the window), and their payloads'
 * bytes.
 */
static struct map_task		*map_ts;
static size_t			 map_cap;
static uint64_t			 map_inflight;
static uint64_t			 map_since;	/* ms: last output seen */
static size_t			 map_seen;	/* outputs then */
static char			 map_said[512];	/* the last reason said */
#define MAP_T(i)	(&map_ts[(i) % map_cap])

static void
map_usage(int code)
{
	fprintf(code == EX_OK ? stdout : stderr,
	    "usage: r3qctl map [-0] [--json] [--policy P] "
	    "[--queue-factor N|auto]\n"
	    "                  [--balance B] [--timeout S] [--window N] KIND "
	    "[FILE]\n"
	    "  -0                  records end with NUL, not newline "
	    "(input and output)\n"
	    "  --json              one JSON object per task: index, status, "
	    "output\n"
	    "                      (output_base64 if not UTF-8), error\n"
	    "  --policy P          %s (the master's default "
	    "otherwise)\n"
	    "  --queue-factor N    1 to 128, or auto\n"
	    "  --balance B         none, one, power or global: move held "
	    "tasks between\n"
	    "                      workers (the master's default otherwise)\n"
	    "  --timeout S         give up on tasks unfinished after S "
	    "seconds\n"
	    "  --window N          at most N tasks in flight (default 100000, "
	    "within the\n"
	    "                      master's max_job_tasks and max_job_memory)"
	    "\n"
	    "one task of KIND per line of FILE (or standard input, or -); "
	    "outputs in\n"
	    "input order, failures on standard error; exit 0 only if every "
	    "task succeeded\n", sched_policy_list());
	if (code == EX_OK && (fflush(stdout) == EOF || ferror(stdout)))
		code = EX_FAIL;
	exit(code);
}


/*
 * The next record of in: 1 with *rec and *len (its delimiter left out;
 * the last record may lack one), 0 at the end of the input, -1 on an
 * error (errno; EINTR for a signal).  With nowait, 2 when no whole record
 * is buffered and nothing can be read now.
 */
static int
map_getrec(struct map_in *in, int delim, int nowait, char **rec,
    size_t *len)
{
	struct pollfd	 pfd;
	char		*p, *nb;
	size_t		 cap;
	ssize_t		 n;

	for (;;) {
		if (in->end > in->start && (p = memchr(in->buf + in->start,
		    delim, in->end - in->start)) != NULL) {
			*rec = in->buf + in->start;
			*len = (size_t)(p - *rec);
			in->start = (size_t)(p - in->buf) + 1;
			return (1);
		}
		if (in->eof) {
			if (in->start == in->end)
				return (0);
			*rec = in->buf + in->start;
			*len = in->end - in->start;
			in->start = in->end;
			return (1);
		}
		if (in->start > 0) {
			memmove(in->buf, in->buf + in->start,
			    in->end - in->start);
			in->end -= in->start;
			in->start = 0;
		}
		if (in->end == in->cap) {
			cap = in->cap ? in->cap * 2 : 65536;
			if ((nb = realloc(in->buf, cap)) == NULL)
				return (-1);
			in->buf = nb;
			in->cap = cap;
		}
		if (nowait) {
			pfd.fd = in->fd;
			pfd.events = POLLIN;
			if (poll(&pfd, 1, 0) == 0)
				return (2);
		}
		if ((n = read(in->fd, in->buf + in->end,
		    in->cap - in->end)) == -1)
			return (-1);
		if (n == 0)
			in->eof = 1;
		in->end += (size_t)n;
	}
}

/*
 * A signal: remembered, and the library's wait is woken (a second one
 * wakes r3q_job_cancel in map_interrupted).
 */
static void
map_catch(int signo)
{
	/* Every write to a closed pipe raises SIGPIPE: one is enough. */
	if (signo == SIGPIPE && map_signo != 0)
		return;
	map_signo = signo;
	if (map_r != NULL)
		r3q_signal(map_r);
}

/*
 * Catch SIGINT, SIGTERM, SIGHUP and SIGPIPE (our reader went away)
 * without SA_RESTART, so a read of the input stops too.  One ignored at
 * start stays ignored.
 */
static void
map_catch_signals(void)
{
	static const int	 sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
	struct sigaction	 sa, old;
	size_t			 i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = map_catch;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		if (sigaction(sigs[i], NULL, &old) == -1 ||
		    old.sa_handler == SIG_IGN)
			continue;
		sigaction(sigs[i], &sa, NULL);
	}
}

/*
 * Interrupted: cancel the job, say so, and die of the signal as a shell
 * expects (status 128 plus its number).
 */
static void __attribute__((noreturn))
map_interrupted(struct r3q_job *job)
{
	uint64_t	 id = r3q_job_id(job);
	size_t		 i;
	int		 signo = map_signo, k;

	signal(SIGPIPE, SIG_IGN);
	fflush(stdout);
	/*
	 * The signal that brought us here may not have been taken by a
	 * wait yet: take it now, on a task still out, so that only a new
	 * one interrupts the cancel.
	 */
	for (i = 0; i < map_cap; i++) {
		if (map_ts[i].t_f == NULL || r3q_future_done(map_ts[i].t_f))
			continue;
		for (k = 0; k < 16 && r3q_future_get(map_ts[i].t_f, 0, NULL,
		    NULL) == R3Q_ESIGNALLED; k++)
			;
		break;
	}
	/* A second signal gives up waiting for the master's answer. */
	switch (r3q_job_cancel(job)) {
	case R3Q_OK:
		fprintf(stderr, "r3qctl: cancelled job %llu\n",
		    (unsigned long long)id);
		break;
	case R3Q_ESIGNALLED:
		fprintf(stderr, "r3qctl: job %llu may still run; r3qctl "
		    "cancel %llu stops it\n", (unsigned long long)id,
		    (unsigned long long)id);
		break;
	default:
		fprintf(stderr, "r3qctl: job %llu not cancelled: %s\n",
		    (unsigned long long)id, r3q_error(map_r));
	}
	r3q_close(map_r);
	if (signo == 0)
		exit(EX_FAIL);
	signal(signo, SIG_DFL);
	raise(signo);
	_exit(128 + signo);
}

static void
map_parse(int argc, char *argv[], struct map_opts *o)
{
	static const struct option longopts[] = {
		{ "json",		no_argument,	   NULL, 'j' },
		{ "policy",		required_argument, NULL, 'p' },
		{ "queue-factor",	required_argument, NULL, 'Q' },
		{ "balance",		required_argument, NULL, 'B' },
		{ "timeout",		required_argument, NULL, 't' },
		{ "window",		required_argument, NULL, 'w' },
		{ "help",		no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	uint64_t		 v;
	char			*end;
	double			 d;
	int			 ch;

	memset(o, 0, sizeof(*o));
	o->window = MAP_WINDOW;
	optind = 0;	/* glibc: re-read the ordering, not main's "+" */
	while ((ch = getopt_long(argc, argv, "0h", longopts, NULL)) != -1) {
		switch (ch) {
		case '0':
			o->nul = 1;
			break;
		case 'j':
			o->json = 1;
			break;
		case 'p':
			o->policy = cmd_parse_policy(optarg);
			break;
		case 'B':
			if (sched_balance_parse(optarg, NULL) == -1)
				die(EX_USAGE, "--balance: '%s' is not one of "
				    "none, one, power, global", optarg);
			o->balance = optarg;
			break;
		case 'Q':
			if (strcmp(optarg, "auto") == 0)
				o->queue_factor = R3Q_QF_AUTO;
			else if (parse_u64(optarg, 1, SCHED_QF_MAX, &v) == 0)
				o->queue_factor = (unsigned)v;
			else
				die(EX_USAGE, "--queue-factor: '%s' is "
				    "not a number from 1 to %d or auto",
				    optarg, SCHED_QF_MAX);
			break;
		case 't':
			d = strtod(optarg, &end);
			if (*optarg == '\0' || *end != '\0' || !(d > 0) ||
			    d > 1e7)
				die(EX_USAGE, "--timeout: '%s' is not a "
				    "number of seconds", optarg);
			o->timeout_ms = (uint64_t)(d * 1000 + 0.5);
			if (o->timeout_ms == 0)
				o->timeout_ms = 1;
			break;
		case 'w':
			if (parse_u64(optarg, 1, MAP_WINDOW_MAX, &o->window) ==
			    -1)
				die(EX_USAGE, "--window: '%s' is not a number "
				    "from 1 to %d", optarg, MAP_WINDOW_MAX);
			o->window_set = 1;
			break;
		case 'h':
			map_usage(EX_OK);
			break;
		default:
			map_usage(EX_USAGE);
		}
	}
	if (argc - optind < 1 || argc - optind > 2)
		map_usage(EX_USAGE);
	o->kind = argv[optind];
	if (*o->kind == '\0')
		die(EX_USAGE, "the kind is empty");
	o->file = argc - optind == 2 ? argv[optind + 1] : NULL;
}

/* Milliseconds since t0. */
static uint64_t
map_ms(const struct timespec *t0)
{
	struct timespec	 t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return ((uint64_t)(t.tv_sec - t0->tv_sec) * 1000 +
	    (uint64_t)((t.tv_nsec - t0->tv_nsec) / 1000000));
}

/* Length of the valid UTF-8 sequence at p (at most n bytes), or 0. */
static size_t
map_utf8(const unsigned char *p, size_t n)
{
	uint32_t	 c;
	size_t		 len, i;

	if (p[0] < 0x80)
		return (1);
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2, c = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3, c = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4, c = p[0] & 0x07;
	else
		return (0);
	if (len > n)
		return (0);
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return (0);
		c = (c << 6) | (p[i] & 0x3f);
	}
	if ((len == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
	    (len == 4 && (c < 0x10000 || c > 0x10ffff)))
		return (0);
	return (len);
}

static int
map_is_utf8(const unsigned char *p, size_t n)
{
	size_t	 k;

	while (n > 0) {
		if ((k = map_utf8(p, n)) == 0)
			return (0);
		p += k;
		n -= k;
	}
	return (1);
}

/*
 * A JSON string.  Bytes that are not UTF-8 (only in error texts: outputs
 * that are not UTF-8 go as base64) become U+FFFD.
 */
static void
map_json_str(FILE *out, const unsigned char *p, size_t n)
{
	size_t	 k;

	fputc('"', out);
	while (n > 0) {
		if ((k = map_utf8(p, n)) == 0) {
			fputs("\\ufffd", out);
			k = 1;
		} else if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", out);
		else if (*p == '\r')
			fputs("\\r", out);
		else if (*p == '\t')
			fputs("\\t", out);
		else if (*p < 0x20)
			fprintf(out, "\\u%04x", *p);
		else
			fwrite(p, 1, k, out);
		p += k;
		n -= k;
	}
	fputc('"', out);
}

static void
map_base64(FILE *out, const unsigned char *p, size_t n)
{
	static const char	 b64[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	uint32_t		 v;
	size_t			 i;

	fputc('"', out);
	for (i = 0; i + 2 < n; i += 3) {
		v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		fputc(b64[v >> 18], out);
		fputc(b64[(v >> 12) & 63], out);
		fputc(b64[(v >> 6) & 63], out);
		fputc(b64[v & 63], out);
	}
	if (n - i == 1) {
		v = (uint32_t)p[i] << 16;
		fprintf(out, "%c%c==", b64[v >> 18], b64[(v >> 12) & 63]);
	} else if (n - i == 2) {
		v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
		fprintf(out, "%c%c%c=", b64[v >> 18], b64[(v >> 12) & 63],
		    b64[(v >> 6) & 63]);
	}
	fputc('"', out);
}

/* The --json name of a status. */
static const char *
map_status(int rc, int timedout)
{
	if (timedout)
		return ("timeout");
	switch (rc) {
	case R3Q_OK:
		return ("ok");
	case R3Q_EREMOTE:
		return ("failed");
	case R3Q_EKILLED:
		return ("killed");
	case R3Q_ECANCELLED:
		return ("cancelled");
	case R3Q_ECONN:
		return ("unreachable");
	case R3Q_EDENIED:
		return ("refused");
	case R3Q_ETOOBIG:
		return ("toobig");
	default:
		return ("error");
	}
}

/* Clear the progress line before other text goes to the terminal. */
static void
map_progress_clear(int *shown)
{
	if (*shown) {
		fputs("\r\033[K", stderr);
		*shown = 0;
	}
}

/*
 * Print task i (0-based) and free its future.  Returns its status.
 */
static int
map_print(const struct map_opts *o, struct map_task *t, size_t i,
    int *shown)
{
	const unsigned char	*out;
	const char		*err;
	char			 tmo[64];
	size_t			 len;
	int			 rc, delim = o->nul ? '\0' : '\n';

	rc = r3q_future_result(t->t_f, (const void **)&out, &len);
	err = r3q_future_error(t->t_f);
	if (t->t_timedout) {
		snprintf(tmo, sizeof(tmo), "timed out after %.3g s",
		    (double)o->timeout_ms / 1000);
		err = tmo;
		rc = R3Q_ETIMEDOUT;
	}
	if (o->json) {
		printf("{\"index\":%zu,\"status\":\"%s\",", i + 1,
		    map_status(rc, t->t_timedout));
		if (rc != R3Q_OK)
			fputs("\"output\":null", stdout);
		else if (map_is_utf8(out, len)) {
			fputs("\"output\":", stdout);
			map_json_str(stdout, out, len);
		} else {
			fputs("\"output_base64\":", stdout);
			map_base64(stdout, out, len);
		}
		fputs(",\"error\":", stdout);
		if (rc == R3Q_OK)
			fputs("null", stdout);
		else
			map_json_str(stdout, (const unsigned char *)err,
			    strlen(err));
		fputs("}\n", stdout);
	} else if (rc == R3Q_OK) {
		fwrite(out, 1, len, stdout);
		if (len == 0 || out[len - 1] != delim)
			putchar(delim);
	} else {
		map_progress_clear(shown);
		fprintf(stderr, "r3qctl: task %zu (line %zu): %s\n", i + 1,
		    i + 1, err);
	}
	r3q_future_free(t->t_f);
	t->t_f = NULL;
	return (rc);
}

/* Print the next task and count what it was. */
static void
map_take(const struct map_opts *o, size_t *next, size_t *failed, int *lost,
    int *shown)
{
	int	 rc;

	map_inflight -= MAP_T(*next)->t_len;
	rc = map_print(o, MAP_T(*next), *next, shown);
	if (rc != R3Q_OK)
		(*failed)++;
	if (rc == R3Q_ECONN)
		*lost = 1;
	(*next)++;
}

/* "r3qctl: map: 12 of 100 done, 1 failed" on a terminal. */
static void
map_progress(size_t next, size_t n, size_t failed, int *shown)
{
	size_t	 i, done = next;

	for (i = next; i < n; i++)
		done += r3q_future_done(MAP_T(i)->t_f);
	fprintf(stderr, "\r\033[Kr3qctl: map: %zu of %zu done", done, n);
	if (failed > 0)
		fprintf(stderr, ", %zu failed", failed);
	*shown = 1;
}

/* On a terminal, the progress line once a tick has passed since the last. */
static void
map_tick(const struct timespec *t0, uint64_t *last, size_t next, size_t n,
    size_t failed, int *shown)
{
	uint64_t	 now = map_ms(t0);

	if (now - *last < MAP_TICK_MS)
		return;
	fflush(stdout);
	map_progress(next, n, failed, shown);
	*last = now;
}

/*
 * No output for MAP_WATCH_MS: ask masterd why the job's tasks wait, if
 * they do (no worker offers the kind, say: they wait for one rather than
 * fail, as workers come and go), and say each new reason once.
 */
static void
map_watch(struct r3q_job *job, const struct timespec *t0, size_t next,
    int *shown)
{
	char		 why[sizeof(map_said)];
	uint64_t	 now = map_ms(t0);

	if (next != map_seen) {
		map_seen = next;
		map_since = now;
		return;
	}
	if (now - map_since < MAP_WATCH_MS)
		return;
	map_since = now;
	if (r3q_job_waiting(job, why, sizeof(why)) != R3Q_OK)
		return;
	if (why[0] != '\0' && strcmp(why, map_said) != 0) {
		map_progress_clear(shown);
		fprintf(stderr, "r3qctl: job %llu waits: %s (r3qctl workers "
		    "lists the workers and their kinds)\n",
		    (unsigned long long)r3q_job_id(job), why);
	}
	snprintf(map_said, sizeof(map_said), "%s", why);
}

/*
 * Wait for task next's output: a tick at most on a terminal (for the
 * progress line), MAP_WATCH_MS otherwise, never past --timeout.  What
 * r3q_future_get() says, or 1 once --timeout has passed (not waiting
 * then).
 */
static int
map_wait(const struct map_opts *o, const struct timespec *t0, size_t next,
    int progress)
{
	uint64_t	 now = map_ms(t0);
	int		 tmo = progress ? MAP_TICK_MS : MAP_WATCH_MS;

	if (o->timeout_ms != 0) {
		if (now >= o->timeout_ms)
			return (1);
		if (o->timeout_ms - now < (uint64_t)tmo)
			tmo = (int)(o->timeout_ms - now);
	}
	return (r3q_future_get(MAP_T(next)->t_f, tmo, NULL, NULL));
}

/* r3qctl map. */
static int
cmd_map_exec(const struct cmd_entry *self, int argc, char *argv[])
{
	struct map_opts		 o;
	struct r3q_options	 ro;
	struct r3q_job_options	 jo;
	struct r3q_job		*job;
	struct map_task		*t;
	struct timespec		 t0;
	struct map_in		 in;
	struct pollfd		 pfd[2];
	char			*line, err[512], name[128];
	size_t			 len, n = 0, next = 0, failed = 0;
	size_t			 i;
	uint64_t		 last = 0, maxt, maxm, wbytes;
	int			 rc, progress, shown = 0, lost = 0;
	int			 delim, nowait = 1, unread = 0;

	(void)self;
	map_parse(argc, argv, &o);
	delim = o.nul ? '\0' : '\n';
	memset(&in, 0, sizeof(in));
	if (o.file == NULL || strcmp(o.file, "-") == 0)
		in.fd = STDIN_FILENO;
	else if ((in.fd = open(o.file, O_RDONLY)) == -1)
		die(EX_FAIL, "%s: %s", o.file, strerror(errno));
	progress = isatty(STDERR_FILENO);

	ctl_options(&ro);
	if ((map_r = r3q_connect(&ro, err, sizeof(err))) == NULL)
		die(EX_UNAVAILABLE, "%s", err);
	memset(&jo, 0, sizeof(jo));
	snprintf(name, sizeof(name), "map %s", o.kind);
	jo.name = name;
	jo.policy = o.policy;
	jo.queue_factor = o.queue_factor;
	jo.balance = o.balance;
	if ((job = r3q_job_open(map_r, &jo)) == NULL)
		die(EX_FAIL, "cannot open a job: %s", r3q_error(map_r));
	map_catch_signals();
	clock_gettime(CLOCK_MONOTONIC, &t0);

	/*
	 * The window: at most this many tasks in flight (submitted, not yet
	 * printed), and their payloads at most half the master's share of
	 * a job, so that an input of any length streams through without
	 * being refused by max_job_tasks or max_job_memory, nor held whole
	 * here.  A --window given is taken as it is.
	 */
	r3q_job_limits(job, &maxt, &maxm);
	map_cap = o.window;
	wbytes = UINT64_MAX;
	if (!o.window_set) {
		if (maxt != 0 && maxt < map_cap)
			map_cap = maxt;
		wbytes = MAP_WBYTES;
		if (maxm != 0 && maxm / 2 < wbytes)
			wbytes = maxm / 2;
	}
	if ((map_ts = calloc(map_cap, sizeof(*map_ts))) == NULL)
		die(EX_FAIL, "out of memory");

	/*
	 * Read and submit; print what is ready now and then, and whenever
	 * the input keeps us waiting: what was submitted goes out (not
	 * closing the batch) and every output ready is printed meanwhile.
	 * With the window full, the next output is waited for first (not
	 * past --timeout: what is not read by then does not run).
	 */
	for (;;) {
		if (n - next >= map_cap || (n > next && map_inflight >= wbytes)) {
			if (map_wait(&o, &t0, next, progress) == 1) {
				unread = 1;
				break;
			}
			if (map_signo != 0)
				map_interrupted(job);
			while (next < n && r3q_future_done(MAP_T(next)->t_f))
				map_take(&o, &next, &failed, &lost, &shown);
			if (ferror(stdout))
				break;		/* said below */
			if (progress)
				map_tick(&t0, &last, next, n, failed, &shown);
			continue;
		}
		rc = map_getrec(&in, delim, nowait, &line, &len);
		nowait = 1;
		if (rc == 2) {
			pfd[0].fd = in.fd;
			pfd[0].events = POLLIN;
			pfd[1].fd = r3q_fd(map_r);
			pfd[1].events = POLLIN;
			r3q_process(map_r);
			while (next < n && r3q_future_done(MAP_T(next)->t_f))
				map_take(&o, &next, &failed, &lost,
				    &shown);
			if (fflush(stdout) == EOF && map_signo == 0)
				break;		/* said below */
			if (poll(pfd, 2, progress ? MAP_TICK_MS : MAP_WATCH_MS) ==
			    -1 && errno != EINTR)
				die(EX_FAIL, "poll: %s", strerror(errno));
			if (map_signo != 0)
				map_interrupted(job);
			map_watch(job, &t0, next, &shown);
			if (pfd[0].revents != 0)
				nowait = 0;
			if (progress)
				map_tick(&t0, &last, next, n, failed, &shown);
			continue;
		}
		if (rc == -1 && map_signo != 0)
			map_interrupted(job);
		if (rc == -1)
			die(EX_FAIL, "%s: %s", o.file != NULL ? o.file :
			    "standard input", strerror(errno));
		if (rc == 0)
			break;
		t = MAP_T(n);
		t->t_timedout = 0;
		t->t_len = len;
		if ((t->t_f = r3q_submit(job, o.kind, line, len)) == NULL)
			die(EX_FAIL, "%s", r3q_error(map_r));
		map_inflight += len;
		n++;
		if (n % MAP_PROCESS == 0) {
			r3q_process(map_r);
			while (next < n && r3q_future_done(MAP_T(next)->t_f))
				map_take(&o, &next, &failed, &lost,
				    &shown);
			if (map_signo != 0)
				map_interrupted(job);
		}
	}
	free(in.buf);
	if (in.fd != STDIN_FILENO)
		close(in.fd);
	if (r3q_flush(job) != R3Q_OK)
		lost = 1;

	/* Outputs in input order, each as soon as it and those before are. */
	while (next < n) {
		if (map_signo != 0)
			map_interrupted(job);
		if (map_wait(&o, &t0, next, progress) == 1) {
			for (i = next; i < n; i++)
				if (r3q_cancel(MAP_T(i)->t_f) == R3Q_OK)
					MAP_T(i)->t_timedout = 1;
			while (next < n)
				map_take(&o, &next, &failed, &lost, &shown);
			break;
		}
		while (next < n && r3q_future_done(MAP_T(next)->t_f))
			map_take(&o, &next, &failed, &lost, &shown);
		if (ferror(stdout))
			break;
		map_watch(job, &t0, next, &shown);
		if (progress)
			map_tick(&t0, &last, next, n, failed, &shown);
	}
	map_progress_clear(&shown);
	if (fflush(stdout) == EOF || ferror(stdout)) {
		if (map_signo != 0)
			map_interrupted(job);
		fprintf(stderr, "r3qctl: standard output: %s\n",
		    strerror(errno));
		r3q_job_cancel(job);
		r3q_close(map_r);
		free(map_ts);
		return (EX_FAIL);
	}
	if (failed > 0)
		fprintf(stderr, "r3qctl: %zu of %zu tasks failed\n", failed, n);
	if (unread) {
		fprintf(stderr, "r3qctl: --timeout came with the window full: "
		    "the input after record %zu was not run\n", n);
		failed++;
	}
	r3q_job_close(job);
	r3q_close(map_r);
	free(map_ts);
	if (lost)
		return (EX_UNAVAILABLE);
	return (failed > 0 ? EX_FAIL : EX_OK);
}

const struct cmd_entry cmd_map_entry = {
	"map", "[options] KIND [FILE]",
	"one task of KIND per input line, outputs in input order\n"
	"(r3qctl map -h)",
	"  -0  --json  --policy P  --queue-factor N|auto  --balance B  "
	"--timeout S\n"
	"  --window N\n",
	cmd_map_exec
};

/*
 * bench/kinds: what running a task costs beyond its work, for each way a
 * worker can run one, side by side in one thread: the built-in echo kind,
 * an exec kind (/bin/cat, a process per task) and the persistent C and
 * Python examples (a process per slot, frames).  Each round runs n no-op
 * tasks (an es payload of dimension 10, work_ms 0) back to back; the table
 * shows the median round's tasks/s and µs/task, the slowest and fastest
 * rounds, and the target where there is one.  A first task before the
 * rounds starts a persistent process.  The "spawn floor" row is no kind:
 * posix_spawn of /bin/cat (stdin and stdout /dev/null) and waitpid, what
 * creating a process costs on this host, which no exec kind can beat.
 * Prints a table and CSV.
 *
 * Programs are found under $top_srcdir and $top_builddir (default ".",
 * the build tree when run as build/bench/kinds from its top).
 *
 * usage: bench/kinds [-n tasks] [-r rounds] [-o file.csv]
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>

#include "es/payload.h"
#include "task/ext.h"
#include "task/task.h"

#define ROW_BUILTIN	(-1)		/* a built-in kind, by name */
#define ROW_FLOOR	(-2)		/* posix_spawn and waitpid only */
#define KINDS_DIM	10
#define KINDS_MAX_OUT	(1024 * 1024)

/*
 * One row of the table: a built-in kind (argv[0] its name) or a kind of
 * ext.h's types, argv with "@S/" and "@B/" standing for top_srcdir and
 * top_builddir.  A row is one line here.
 */
struct row {
	const char	*name;
	int		 type;
	const char	*argv[4];
	double		 target;	/* tasks/s; 0: none */
};

static const struct row rows[] = {
	{ "echo (built-in)", ROW_BUILTIN, { "echo" }, 0 },
	{ "spawn floor", ROW_FLOOR, { "/bin/cat" }, 0 },
	{ "exec /bin/cat", EXT_EXEC, { "/bin/cat" }, 1000 },
	{ "persistent C", EXT_PERSISTENT, { "@B/examples/persistent" },
	    20000 },
	{ "persistent Python", EXT_PERSISTENT,
	    { "/usr/bin/python3", "@S/examples/persistent.py" }, 0 },
};

static double	 now_s(void);
static char	*expand(const char *);
static struct ext_kind *kind_new(const struct row *, char *, size_t);
static int	 run_one(const struct row *, struct ext_kind *,
		    const struct task_params *, struct task_result *);
static int	 cmp_double(const void *, const void *);
static int	 spawn_floor(const struct row *, struct task_result *);

extern char	**environ;

/* The floor: start the program with nothing to read or write, reap it. */
static int
spawn_floor(const struct row *r, struct task_result *res)
{
	posix_spawn_file_actions_t	 fa;
	pid_t				 pid;
	int				 rc, status;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	rc = posix_spawn(&pid, r->argv[0], &fa, NULL,
	    (char *const *)(uintptr_t)r->argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		snprintf(res->error, sizeof(res->error), "%s: %s",
		    r->argv[0], strerror(rc));
		return (TASK_FAILED);
	}
	if (waitpid(pid, &status, 0) == -1 || status != 0) {
		snprintf(res->error, sizeof(res->error), "%s: status %d",
		    r->argv[0], status);
		return (TASK_FAILED);
	}
	return (TASK_OK);
}

/* The monotonic clock in seconds. */
static double
now_s(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
}

/* An argument with @S/ or @B/ replaced by an absolute path, malloc'd. */
static char *
expand(const char *arg)
{
	const char	*dir;
	char		*s, *abs;

	if (strncmp(arg, "@S/", 3) == 0 || strncmp(arg, "@B/", 3) == 0) {
		dir = getenv(arg[1] == 'S' ? "top_srcdir" : "top_builddir");
		if ((abs = realpath(dir != NULL ? dir : ".", NULL)) == NULL) {
			perror(dir != NULL ? dir : ".");
			exit(1);
		}
		if (asprintf(&s, "%s/%s", abs, arg + 3) == -1)
			s = NULL;
		free(abs);
	} else
		s = strdup(arg);
	if (s == NULL) {
		perror("kinds");
		exit(1);
	}
	return (s);
}

/* The kind of a row, opened as workerd opens it; NULL with err set. */
static struct ext_kind *
kind_new(const struct row *r, char *err, size_t errlen)
{
	struct ext_kind	*k;
	size_t		 i, n;

	if ((k = calloc(1, sizeof(*k))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (NULL);
	}
	snprintf(k->k_name, sizeof(k->k_name), "bench");
	k->k_type = (enum ext_type)r->type;
	for (n = 0; n < 4 && r->argv[n] != NULL; n++)
		;
	k->k_argv = calloc(n + 1, sizeof(char *));
	for (i = 0; i < n; i++)
		k->k_argv[i] = expand(r->argv[i]);
	k->k_env = calloc(1, sizeof(char *));
	k->k_grace = EXT_GRACE_DEFAULT;
	k->k_nslots = 1;
	atomic_init(&k->k_refs, 1);
	if (ext_open(k, err, errlen) == -1) {
		ext_close(k);
		return (NULL);
	}
	return (k);
}

/* Run one task of a row. */
static int
run_one(const struct row *r, struct ext_kind *k, const struct task_params *p,
    struct task_result *res)
{
	int	 st;

	if (r->type == ROW_FLOOR)
		return (spawn_floor(r, res));
	if (r->type == ROW_BUILTIN)
		st = task_run(p, NULL, res);
	else
		st = ext_run(k, 0, p, NULL, KINDS_MAX_OUT, res);
	task_result_free(res);
	return (st);
}

static int
cmp_double(const void *a, const void *b)
{
	double	 x = *(const double *)a, y = *(const double *)b;

	return (x < y ? -1 : x > y);
}

int
main(int argc, char *argv[])
{
	static uint8_t		 payload[ES_PAYLOAD_HEAD + KINDS_DIM * 8];
	enum { NROWS = sizeof(rows) / sizeof(rows[0]) };
	struct ext_kind		*k[NROWS];
	double			 x[KINDS_DIM], *rate[NROWS], t0, med;
	struct task_params	 p;
	struct task_result	 res;
	const char		*csv = "bench/results/kinds.csv";
	char			 err[TASK_ERRLEN], target[16];
	size_t			 n = 1000, rounds = 5, i, j, c;
	FILE			*f;
	int			 ch, st, ok[NROWS];

	while ((ch = getopt(argc, argv, "n:o:r:")) != -1) {
		if (ch == 'n')
			n = (size_t)atol(optarg);
		else if (ch == 'o')
			csv = optarg;
		else if (ch == 'r')
			rounds = (size_t)atol(optarg);
		else {
			fprintf(stderr, "usage: kinds [-n tasks] [-r rounds] "
			    "[-o csv]\n");
			return (64);
		}
	}
	if (n < 1)
		n = 1;
	if (rounds < 1)
		rounds = 1;
	signal(SIGPIPE, SIG_IGN);	/* as workerd */
	openblas_set_num_threads(1);	/* no BLAS thread spinning by */
	for (i = 0; i < KINDS_DIM; i++)
		x[i] = (double)i / 3.0;
	es_payload_encode(payload, 0, 0, 0.0, x, KINDS_DIM);
	memset(&p, 0, sizeof(p));
	p.payload = payload;
	p.payload_len = sizeof(payload);
	if (strncmp(csv, "bench/results/", 14) == 0)
		(void)mkdir("bench/results", 0777);
	if ((f = fopen(csv, "w")) == NULL) {
		perror(csv);
		return (1);
	}

	/* Open every kind and run a first task (a persistent one starts). */
	for (c = 0; c < NROWS; c++) {
		k[c] = NULL;
		ok[c] = 0;
		if ((rate[c] = calloc(rounds, sizeof(double))) == NULL) {
			perror("kinds");
			return (1);
		}
		p.kind = rows[c].type == ROW_BUILTIN ? rows[c].argv[0] :
		    "bench";
		if (rows[c].type >= 0 &&
		    (k[c] = kind_new(&rows[c], err, sizeof(err))) == NULL) {
			printf("%-20s skipped: %s\n", rows[c].name, err);
			continue;
		}
		if ((st = run_one(&rows[c], k[c], &p, &res)) != TASK_OK) {
			printf("%-20s failed: %s: %s\n", rows[c].name,
			    task_status_name(st), res.error);
			continue;
		}
		ok[c] = 1;
	}

	/*
	 * Rounds go through the rows in turn, so that a host whose speed
	 * drifts (a busy neighbour, a throttled VM) slows every row alike.
	 */
	for (j = 0; j < rounds; j++) {
		for (c = 0; c < NROWS; c++) {
			if (!ok[c])
				continue;
			p.kind = rows[c].type == ROW_BUILTIN ?
			    rows[c].argv[0] : "bench";
			t0 = now_s();
			for (i = 0; i < n; i++)
				if ((st = run_one(&rows[c], k[c], &p, &res)) !=
				    TASK_OK)
					break;
			rate[c][j] = (double)n / (now_s() - t0);
			if (st != TASK_OK) {
				printf("%-20s failed: %s: %s\n", rows[c].name,
				    task_status_name(st), res.error);
				ok[c] = 0;
			}
		}
	}

	fprintf(f, "kind,tasks,rounds,median_tasks_per_s,median_us_per_task,"
	    "min_tasks_per_s,max_tasks_per_s,target_tasks_per_s\n");
	printf("%zu no-op tasks a round, median of %zu rounds, one thread\n\n",
	    n, rounds);
	printf("%-20s %12s %10s %12s %12s %9s\n", "kind", "tasks/s",
	    "us/task", "slowest", "fastest", "target");
	for (c = 0; c < NROWS; c++) {
		ext_close(k[c]);
		if (!ok[c]) {
			free(rate[c]);
			continue;
		}
		qsort(rate[c], rounds, sizeof(double), cmp_double);
		med = rate[c][rounds / 2];
		if (rows[c].target > 0)
			snprintf(target, sizeof(target), ">= %.0f",
			    rows[c].target);
		else
			snprintf(target, sizeof(target), "-");
		printf("%-20s %12.0f %10.2f %12.0f %12.0f %9s\n",
		    rows[c].name, med, 1e6 / med, rate[c][0],
		    rate[c][rounds - 1], target);
		fprintf(f, "%s,%zu,%zu,%.1f,%.3f,%.1f,%.1f,%.0f\n",
		    rows[c].name, n, rounds, med, 1e6 / med, rate[c][0],
		    rate[c][rounds - 1], rows[c].target);
		free(rate[c]);
	}
	fclose(f);
	printf("\nCSV: %s\n", csv);
	return (0);
}

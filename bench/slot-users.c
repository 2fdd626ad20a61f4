/*
 * bench/slot-users: what a slot user (workerd.conf(5), "Slot users")
 * costs an exec kind.  The same exec kind, /bin/cat on a 64-byte payload,
 * run n tasks at a time back to back in one thread, as workerd's own user
 * (slot_users = none) and as a slot user: the two rows alternate, round
 * after round, so that a loaded machine weighs on both alike.  A slot
 * user's task adds a second directory (workerd's, then the user's inside
 * it), a chown, the change of user in the child and, after the task, the
 * sweep of the user's processes (a vfork'd kill(-1)).  Prints the median
 * round of each, their ratio, and CSV.  Needs root and a user to run as:
 *
 *	useradd --system --user-group --no-create-home r3q-bench0
 *	build/bench/slot-users -u r3q-bench0 [-n tasks] [-r rounds] [-o csv]
 */
#include "config.h"

#include <sys/stat.h>

#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "task/ext.h"
#include "task/task.h"

#define SLOT_ROUNDS_MAX	101

/* The monotonic clock in seconds. */
static double
now_s(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
}

/* qsort: ascending doubles. */
static int
cmp_double(const void *a, const void *b)
{
	double	 x = *(const double *)a, y = *(const double *)b;

	return (x < y ? -1 : x > y);
}

/* One round: n tasks of k back to back; tasks/s, or -1 with a message. */
static double
round_rate(struct ext_kind *k, size_t n)
{
	static uint8_t		 payload[64];
	struct task_params	 p;
	struct task_result	 res;
	double			 t0;
	size_t			 i;

	memset(payload, 'x', sizeof(payload));
	memset(&p, 0, sizeof(p));
	p.kind = k->k_name;
	p.payload = payload;
	p.payload_len = sizeof(payload);
	t0 = now_s();
	for (i = 0; i < n; i++) {
		if (ext_run(k, 0, &p, NULL, 1 << 20, &res) != TASK_OK) {
			fprintf(stderr, "slot-users: %s\n", res.error);
			return (-1);
		}
		task_result_free(&res);
	}
	return ((double)n / (now_s() - t0));
}

int
main(int argc, char *argv[])
{
	static char		 prog[] = "/bin/cat", path[] = "PATH=/usr/bin:/bin";
	static char		 tmp[] = "/tmp";
	char			*av[] = { prog, NULL }, *ev[] = { path, NULL };
	struct ext_kind		 k[2];
	struct ext_cred		 cr;
	struct passwd		*pw;
	const char		*user = NULL, *csv = "bench/results/slot-users.csv";
	const char		*name[2] = { "workerd's user", "slot user" };
	double			 rate[2][SLOT_ROUNDS_MAX], med[2];
	char			 err[256];
	size_t			 n = 500, rounds = 9, r, m;
	FILE			*f;
	int			 ch;

	while ((ch = getopt(argc, argv, "n:o:r:u:")) != -1) {
		if (ch == 'n')
			n = (size_t)atol(optarg);
		else if (ch == 'o')
			csv = optarg;
		else if (ch == 'r')
			rounds = (size_t)atol(optarg);
		else if (ch == 'u')
			user = optarg;
		else {
			fprintf(stderr, "usage: slot-users -u user [-n tasks] "
			    "[-r rounds] [-o csv]\n");
			return (64);
		}
	}
	if (user == NULL || (pw = getpwnam(user)) == NULL || pw->pw_uid == 0) {
		fprintf(stderr, "slot-users: -u names a user other than root "
		    "to run the tasks as\n");
		return (64);
	}
	if (geteuid() != 0) {
		fprintf(stderr, "slot-users: run me as root (the tasks change "
		    "user)\n");
		return (77);
	}
	if (n < 1)
		n = 1;
	if (rounds < 1 || rounds > SLOT_ROUNDS_MAX)
		rounds = 9;
	signal(SIGPIPE, SIG_IGN);	/* as workerd */
	cr.cr_uid = pw->pw_uid;
	cr.cr_gid = pw->pw_gid;
	for (m = 0; m < 2; m++) {
		memset(&k[m], 0, sizeof(k[m]));
		snprintf(k[m].k_name, sizeof(k[m].k_name), "cat");
		k[m].k_type = EXT_EXEC;
		k[m].k_argv = av;
		k[m].k_env = ev;
		k[m].k_workdir = tmp;
		k[m].k_grace = EXT_GRACE_DEFAULT;
		k[m].k_nslots = 1;
		k[m].k_creds = m == 1 ? &cr : NULL;
		if (ext_open(&k[m], err, sizeof(err)) == -1) {
			fprintf(stderr, "slot-users: %s\n", err);
			return (1);
		}
	}
	for (r = 0; r < rounds; r++)
		for (m = 0; m < 2; m++)
			if ((rate[m][r] = round_rate(&k[m], n)) < 0)
				return (1);
	for (m = 0; m < 2; m++) {
		qsort(rate[m], rounds, sizeof(double), cmp_double);
		med[m] = rate[m][rounds / 2];
	}
	printf("exec /bin/cat, %zu tasks a round, median of %zu rounds, one "
	    "thread\n\n", n, rounds);
	printf("%-16s %9s %9s %9s %9s\n", "runs as", "tasks/s", "us/task",
	    "slowest", "fastest");
	for (m = 0; m < 2; m++)
		printf("%-16s %9.0f %9.0f %9.0f %9.0f\n", name[m], med[m],
		    1e6 / med[m], rate[m][0], rate[m][rounds - 1]);
	printf("%-16s %9.2f %9.0f\n", "slot / own", med[1] / med[0],
	    1e6 / med[1] - 1e6 / med[0]);

	if (strncmp(csv, "bench/results/", 14) == 0)
		(void)mkdir("bench/results", 0777);
	if ((f = fopen(csv, "w")) == NULL) {
		perror(csv);
		return (1);
	}
	fprintf(f, "runs_as,tasks_per_s,us_per_task,slowest,fastest\n");
	for (m = 0; m < 2; m++)
		fprintf(f, "%s,%.0f,%.1f,%.0f,%.0f\n", m == 0 ? "own" : "slot",
		    med[m], 1e6 / med[m], rate[m][0], rate[m][rounds - 1]);
	fclose(f);
	printf("\nCSV: %s\n", csv);
	return (0);
}

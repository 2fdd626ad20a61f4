/*
 * r3qctl jobs, wait, result and cancel: the jobs masterd holds (on the
 * control socket every job, over TLS the client's own).
 */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "r3qctl.h"

/* A signal while wait follows a job: the job goes on without us. */
static void
wait_interrupted(void)
{
	fprintf(stderr, "r3qctl: job %" PRIu64 " continues; r3qctl wait %"
	    PRIu64 " to follow it again\n", ctl_job, ctl_job);
	ctl_die_signal();
}

/* r3qctl wait [--quiet] JOB. */
static int
cmd_wait_exec(const struct cmd_entry *self, int argc, char *argv[])
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
			cmd_usage(self, EX_OK);
		else if (ch == 'q')
			quiet = 1;
		else
			cmd_usage(self, EX_USAGE);
	}
	if (optind + 1 != argc)
		cmd_usage(self, EX_USAGE);
	ctl_job = cmd_parse_job(argv[optind]);
	ctl_catch_signals(wait_interrupted);
	ans = ctl_follow(ctl_job, quiet);
	printf("job %" PRIu64 " %s%s%s\n", ans->job_info->id,
	    ans->job_info->state, ans->job_info->error[0] ? ": " : "",
	    ans->job_info->error);
	rc = strcmp(ans->job_info->state, "done") == 0 ? EX_OK : EX_FAIL;
	frame_free(ans);
	return (rc);
}

/* r3qctl result JOB [--json] [--csv FILE]. */
static int
cmd_result_exec(const struct cmd_entry *self, int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "json",	no_argument,	   NULL, 'j' },
		{ "csv",	required_argument, NULL, 'c' },
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	Envelope	 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__JobQuery	 q = R3Q__JOB_QUERY__INIT;
	const char	*csv = NULL;
	int		 ch, json = 0, rc;

	optind = 0;	/* glibc: re-read the ordering, not main's "+" */
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (ch == 'h')
			cmd_usage(self, EX_OK);
		else if (ch == 'j')
			json = 1;
		else if (ch == 'c')
			csv = optarg;
		else
			cmd_usage(self, EX_USAGE);
	}
	if (optind + 1 != argc)
		cmd_usage(self, EX_USAGE);
	q.job = cmd_parse_job(argv[optind]);
	env.body_case = R3Q__ENVELOPE__BODY_JOB_QUERY;
	env.job_query = &q;
	ctl_send(&env);
	ans = ctl_expect(ctl_recv(), R3Q__ENVELOPE__BODY_JOB_INFO);
	if (ans->job_info->islands != NULL) {
		/* An islands job: what r3qctl islands prints. */
		rc = islands_print_info(ans->job_info, json);
		frame_free(ans);
		return (rc);
	}
	if (!json && ans->job_info->n_gens > 0)
		es_print_table(ans->job_info);
	if (strcmp(ans->job_info->state, "running") == 0 && !json) {
		printf("job %" PRIu64 " running: generation %u, best so far "
		    "%.17g\n", ans->job_info->id, ans->job_info->generation,
		    ans->job_info->best);
		rc = EX_OK;
	} else
		rc = es_report(ans->job_info, json, csv);
	frame_free(ans);
	return (rc);
}

/* r3qctl jobs. */
static int
cmd_jobs_exec(const struct cmd_entry *self, int argc, char *argv[])
{
	Envelope	 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__ListJobs	 l = R3Q__LIST_JOBS__INIT;
	R3q__JobInfo	*j;
	char		 best[32];
	size_t		 i;

	if (cmd_parse_none(self, argc, argv) != argc)
		cmd_usage(self, EX_USAGE);
	env.body_case = R3Q__ENVELOPE__BODY_LIST_JOBS;
	env.list_jobs = &l;
	ctl_send(&env);
	ans = ctl_expect(ctl_recv(), R3Q__ENVELOPE__BODY_JOB_LIST);
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

/* r3qctl cancel JOB. */
static int
cmd_cancel_exec(const struct cmd_entry *self, int argc, char *argv[])
{
	Envelope	 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__CancelJob	 c = R3Q__CANCEL_JOB__INIT;

	if (cmd_parse_none(self, argc, argv) != argc - 1)
		cmd_usage(self, EX_USAGE);
	c.job = cmd_parse_job(argv[argc - 1]);
	env.body_case = R3Q__ENVELOPE__BODY_CANCEL_JOB;
	env.cancel_job = &c;
	ctl_send(&env);
	ans = ctl_recv();
	printf("job %" PRIu64 " cancelled\n", c.job);
	frame_free(ans);
	return (EX_OK);
}

const struct cmd_entry cmd_jobs_entry = {
	"jobs", "", "list jobs", NULL, cmd_jobs_exec
};

const struct cmd_entry cmd_wait_entry = {
	"wait", "[--quiet] JOB", "follow a job until it ends", NULL,
	cmd_wait_exec
};

const struct cmd_entry cmd_result_entry = {
	"result", "JOB [--json] [--csv FILE]",
	"the result and the measurements", NULL, cmd_result_exec
};

const struct cmd_entry cmd_cancel_entry = {
	"cancel", "JOB", "stop a running job", NULL, cmd_cancel_exec
};

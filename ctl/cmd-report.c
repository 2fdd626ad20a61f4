/*
 * r3qctl report: a job drawn from masterd's trace of it (common/report):
 * a Gantt chart, its convergence and its time breakdown as SVG and HTML,
 * and the Chrome trace-event JSON.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "r3qctl.h"
#include "report/report.h"
#include "util.h"

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
	/* After folded ones, the first listed began when it was submitted. */
	if (ji->gens_folded > 0 && ji->n_gens > 0 &&
	    ji->gens[0]->elapsed_ns > ji->gens[0]->total_ns)
		prev = ji->gens[0]->elapsed_ns - ji->gens[0]->total_ns;
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
cmd_report_exec(const struct cmd_entry *self, int argc, char *argv[])
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
			cmd_usage(self, EX_OK);
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
			cmd_usage(self, EX_USAGE);
		}
	}
	if (optind + 1 != argc)
		cmd_usage(self, EX_USAGE);
	if (dir == NULL && trace == NULL)
		dir = ".";
	q.job = cmd_parse_job(argv[optind]);
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
		    "%zu workers, %zu generations", dir, rj.id, rj.nspans,
		    rj.nworkers, rj.ngens);
		if (ans->job_trace->info->gens_folded > 0)
			printf(" (the %" PRIu64 " before them folded)",
			    ans->job_trace->info->gens_folded);
		printf("\n");
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

const struct cmd_entry cmd_report_entry = {
	"report", "JOB [-o DIR] [--generations A-B] [--trace FILE]",
	"draw a job: Gantt chart, convergence, time breakdown (SVG,\n"
	"HTML), trace JSON",
	"  -o DIR  --output DIR  --generations A-B  --trace FILE\n",
	cmd_report_exec
};

/*
 * Unit tests for the report renderers: on a small synthetic job (two
 * workers with two and one CPUs, three generations, every outcome,
 * replicas, withdrawn copies) the task-flow figure has one lane per CPU
 * slot and one bar per execution, zooming selects generations, text is
 * escaped, output is byte-for-byte repeatable and independent of the
 * locale, an empty job still renders, write errors are reported, the trace
 * holds one event per execution, and xmllint(1) accepts every document.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "report/report.h"
#include "report/times.h"

#define XMLLINT	"/usr/bin/xmllint"
#define MS	1000000ULL

/* An in-memory FILE and what was written to it. */
struct mem {
	FILE	*f;
	char	*buf;
	size_t	 len;
};

static const struct report_worker workers[] = {
	{ "w0", 2, 1.0 },
	{ "a<b&\"c\"", 1, 0.5 },
};

static const struct report_gen gens[] = {
	{ 0, 10.0, 0, 1000 * MS, 200 * MS, 50 * MS, 750 * MS, 800 * MS,
	    4, 1, 0, 0 },
	{ 1, 0.5, 1000 * MS, 1000 * MS, 300 * MS, 60 * MS, 640 * MS, 1700 * MS,
	    4, 1, 1, 1 },
	{ 2, 0.0, 2000 * MS, 900 * MS, 0, 40 * MS, 860 * MS, 0,
	    3, 0, 1, 0 },
};

static const struct report_span spans[] = {
	{ 0, 0, 0, 1, 0, 500 * MS, REPORT_DONE, 0, 0 },
	{ 0, 1, 0, 2, 0, 600 * MS, REPORT_DONE, 0, 0 },
	{ 1, 0, 0, 3, 0, 800 * MS, REPORT_DONE, 0, 0 },
	{ 0, 0, 0, 3, 500 * MS, 700 * MS, REPORT_LOST_RACE, 1, 0 },
	{ 0, 0, 1, 4, 1000 * MS, 1400 * MS, REPORT_DONE, 0, 0 },
	{ 0, 1, 1, 5, 1000 * MS, 1300 * MS, REPORT_FAILED, 0, 0 },
	{ 1, 0, 1, 6, 1000 * MS, 1900 * MS, REPORT_INTERRUPTED, 0, 0 },
	{ 0, 1, 1, 6, 1300 * MS, 1700 * MS, REPORT_DONE, 1, 0 },
	{ 0, 0, 2, 7, 2000 * MS, 2500 * MS, REPORT_DONE, 0, 0 },
	{ 0, 1, 2, 8, 2000 * MS, 2600 * MS, REPORT_DONE, 0, 0 },
	{ 1, 0, 2, 9, 2000 * MS, 2900 * MS, REPORT_DONE, 0, 1 },
};

static const struct report_mark marks[] = {
	{ 1, 1, 5, 1350 * MS, 1, 0 },
	{ 0, 2, 9, 2600 * MS, 0, 1 },
};

#define NSPANS	(sizeof(spans) / sizeof(spans[0]))
#define NMARKS	(sizeof(marks) / sizeof(marks[0]))

/* The synthetic job every test starts from. */
static struct report_job
job_make(void)
{
	struct report_job	 j;

	memset(&j, 0, sizeof(j));
	j.id = 42;
	strcpy(j.policy, "r3q");
	strcpy(j.state, "done");
	j.delay_ms = 10;
	j.total_ns = 2900 * MS;
	j.efficiency = 0.723;
	j.lower_bound_s = 2.1;
	j.replicas = 2;
	j.killed_held = 2;
	j.killed_running = 1;
	j.workers = workers;
	j.nworkers = sizeof(workers) / sizeof(workers[0]);
	j.gens = gens;
	j.ngens = sizeof(gens) / sizeof(gens[0]);
	j.spans = spans;
	j.nspans = NSPANS;
	j.marks = marks;
	j.nmarks = NMARKS;
	return (j);
}

/* Start writing into memory. */
static void
mem_open(struct mem *m)
{
	m->buf = NULL;
	m->len = 0;
	m->f = open_memstream(&m->buf, &m->len);
	assert_non_null(m->f);
}

/* Stop writing into memory; the text is the caller's to free. */
static char *
mem_close(struct mem *m)
{
	assert_int_equal(fclose(m->f), 0);
	assert_non_null(m->buf);
	return (m->buf);
}

/* How often needle occurs in s. */
static size_t
count(const char *s, const char *needle)
{
	size_t	 n = 0;

	while ((s = strstr(s, needle)) != NULL) {
		n++;
		s += strlen(needle);
	}
	return (n);
}

/* The task-flow figure of generations from..to, as a string. */
static char *
gantt(const struct report_job *j, uint32_t from, uint32_t to)
{
	struct mem	 m;

	mem_open(&m);
	assert_int_equal(report_svg_gantt(m.f, j, from, to), 0);
	return (mem_close(&m));
}

/* The convergence figure, as a string. */
static char *
convergence(const struct report_job *j)
{
	struct mem	 m;

	mem_open(&m);
	assert_int_equal(report_svg_convergence(m.f, j), 0);
	return (mem_close(&m));
}

/* The breakdown figure, as a string. */
static char *
breakdown(const struct report_job *j)
{
	struct mem	 m;

	mem_open(&m);
	assert_int_equal(report_svg_breakdown(m.f, j), 0);
	return (mem_close(&m));
}

/* The report page, as a string. */
static char *
html(const struct report_job *j, uint32_t from, uint32_t to)
{
	struct mem	 m;

	mem_open(&m);
	assert_int_equal(report_html(m.f, j, from, to), 0);
	return (mem_close(&m));
}

/* The trace, as a string. */
static char *
trace(const struct report_job *j)
{
	struct mem	 m;

	mem_open(&m);
	assert_int_equal(report_trace_json(m.f, j), 0);
	return (mem_close(&m));
}

/* A bar chart, as a string. */
static char *
bars(const struct report_bars *b)
{
	struct mem	 m;

	mem_open(&m);
	assert_int_equal(report_svg_bars(m.f, b), 0);
	return (mem_close(&m));
}

/* Every rendering of the test job, concatenated, for whole-output checks. */
static char *
everything(const struct report_job *j)
{
	const char *const tags[] = { "g", "c", "b", "h", "t" };
	char		*part[5], *all;
	size_t		 i, n = 1;

	part[0] = gantt(j, 0, UINT32_MAX);
	part[1] = convergence(j);
	part[2] = breakdown(j);
	part[3] = html(j, 1, 2);
	part[4] = trace(j);
	for (i = 0; i < 5; i++)
		n += strlen(part[i]) + strlen(tags[i]) + 1;
	all = calloc(1, n);
	assert_non_null(all);
	for (i = 0; i < 5; i++) {
		strcat(all, tags[i]);
		strcat(all, "\n");
		strcat(all, part[i]);
		free(part[i]);
	}
	return (all);
}

/* Fail if s holds a printed NaN or infinity. */
static void
assert_finite_text(const char *s)
{
	const char	*bad[] = { "nan", "NaN", "NAN", "inf", "INF" };
	size_t		 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (strstr(s, bad[i]) != NULL)
			fail_msg("output holds \"%s\"", bad[i]);
}

/* One lane per worker and CPU slot, in order, and one bar per execution. */
static void
test_gantt_lanes_bars(void **state)
{
	struct report_job	 j = job_make();
	char			*s;
	const char		*a, *b, *c;

	(void)state;
	s = gantt(&j, 0, UINT32_MAX);
	assert_int_equal(count(s, "class=\"lane\""), 3);
	assert_int_equal(count(s, "class=\"bar\""), NSPANS);
	assert_int_equal(count(s, "class=\"mark\""), NMARKS);
	assert_int_equal(count(s, "data-outcome=\"done\""), 8);
	assert_int_equal(count(s, "data-outcome=\"lost\""), 1);
	assert_int_equal(count(s, "data-outcome=\"interrupted\""), 1);
	assert_int_equal(count(s, "data-outcome=\"failed\""), 1);
	assert_int_equal(count(s, "data-replica=\"1\""), 2);
	/* The task balancing moved is marked, and the mark has a key. */
	assert_int_equal(count(s, "data-moved=\"1\""), 1);
	assert_int_equal(count(s, "class=\"moved\""), 1);
	assert_non_null(strstr(s, "moved by balancing"));
	assert_int_equal(count(s, "class=\"xcap\""), 1);
	assert_int_equal(count(s, "class=\"sync\""), 2);
	assert_int_equal(count(s, "<title>task "), NSPANS + NMARKS);
	a = strstr(s, "data-lane=\"w0/0\"");
	b = strstr(s, "data-lane=\"w0/1\"");
	c = strstr(s, "data-lane=\"a&lt;b&amp;&quot;c&quot;/0\"");
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	assert_true(a < b && b < c);
	assert_non_null(strstr(s, "generations 0-2"));
	assert_null(strstr(s, "no data"));
	assert_finite_text(s);
	free(s);
}

/* Zooming keeps every lane but only the selected generations' bars. */
static void
test_gantt_zoom(void **state)
{
	struct report_job	 j = job_make();
	char			*s;

	(void)state;
	s = gantt(&j, 1, 1);
	assert_int_equal(count(s, "class=\"lane\""), 3);
	assert_int_equal(count(s, "class=\"bar\""), 4);
	assert_int_equal(count(s, "class=\"bar\" data-gen=\"1\""), 4);
	assert_int_equal(count(s, "class=\"mark\""), 1);
	assert_int_equal(count(s, "class=\"sync\""), 1);
	assert_non_null(strstr(s, "generation 1<"));
	free(s);

	s = gantt(&j, 2, UINT32_MAX);
	assert_int_equal(count(s, "class=\"bar\""), 3);
	assert_int_equal(count(s, "class=\"bar\" data-gen=\"2\""), 3);
	assert_int_equal(count(s, "class=\"mark\""), 1);
	free(s);

	/* Nothing selected: the lanes and a message, still no bars. */
	s = gantt(&j, 7, 9);
	assert_int_equal(count(s, "class=\"lane\""), 3);
	assert_int_equal(count(s, "class=\"bar\""), 0);
	assert_non_null(strstr(s, "no data"));
	free(s);
	s = gantt(&j, 2, 1);
	assert_int_equal(count(s, "class=\"bar\""), 0);
	free(s);
}

/* Spans and marks on a worker or slot that does not exist: left out, noted. */
static void
test_gantt_bad_lane(void **state)
{
	struct report_job	 j = job_make();
	struct report_span	 sp[NSPANS + 2];
	struct report_mark	 mk[NMARKS + 1];
	char			*s;

	(void)state;
	memcpy(sp, spans, sizeof(spans));
	sp[NSPANS] = spans[0];
	sp[NSPANS].worker = 2;
	sp[NSPANS + 1] = spans[0];
	sp[NSPANS + 1].slot = 2;
	memcpy(mk, marks, sizeof(marks));
	mk[NMARKS] = marks[0];
	mk[NMARKS].worker = 5;
	j.spans = sp;
	j.nspans = NSPANS + 2;
	j.marks = mk;
	j.nmarks = NMARKS + 1;
	s = gantt(&j, 0, UINT32_MAX);
	assert_int_equal(count(s, "class=\"bar\""), NSPANS);
	assert_int_equal(count(s, "class=\"mark\""), NMARKS);
	assert_non_null(strstr(s, "not shown: 2 task execution(s) and 1 "));
	free(s);
	s = trace(&j);
	assert_int_equal(count(s, "\"ph\":\"X\""), NSPANS + 2);
	free(s);
}

/* Worker names and other text are escaped everywhere they appear. */
static void
test_escaping(void **state)
{
	struct report_job	 j = job_make();
	struct report_worker	 w[2];
	char			*s;

	(void)state;
	s = gantt(&j, 0, UINT32_MAX);
	assert_non_null(strstr(s, "a&lt;b&amp;&quot;c&quot;/0<"));
	assert_null(strstr(s, "a<b"));
	free(s);
	s = html(&j, 0, UINT32_MAX);
	assert_non_null(strstr(s, "<td>a&lt;b&amp;&quot;c&quot;</td>"));
	assert_null(strstr(s, "a<b"));
	/* Withdrawn copies say how many were replicas. */
	assert_non_null(strstr(s, "withdrawn while queued</th><td>2 (1 "
	    "replicas)</td>"));
	free(s);
	s = trace(&j);
	assert_non_null(strstr(s, "\"name\":\"a<b&\\\"c\\\"\""));
	free(s);

	/* Control characters and broken UTF-8 never reach the output. */
	memcpy(w, workers, sizeof(w));
	memcpy(w[1].name, "x\ty\x01\xff\xc3\xa9'", 8);
	memset(w[1].name + 8, 'z', sizeof(w[1].name) - 8);	/* no NUL */
	strcpy(j.policy, "p&q");
	j.workers = w;
	s = html(&j, 0, UINT32_MAX);
	assert_non_null(strstr(s, "x?y?\xef\xbf\xbd\xc3\xa9&#39;zzz"));
	assert_non_null(strstr(s, "p&amp;q"));
	assert_null(strstr(s, "\x01"));
	free(s);
	s = trace(&j);
	assert_non_null(strstr(s, "x\\u0009y\\u0001\\ufffd\xc3\xa9'zzz"));
	free(s);
}

/* The same job renders to the same bytes, whatever the numeric locale. */
static void
test_deterministic(void **state)
{
	static const char *const locs[] = {
		"de_DE.UTF-8", "fr_FR.UTF-8", "nl_NL.UTF-8", "ru_RU.UTF-8"
	};
	struct report_job	 j = job_make();
	char			*a, *b;
	size_t			 i;

	(void)state;
	a = everything(&j);
	b = everything(&j);
	assert_string_equal(a, b);
	free(b);

	for (i = 0; i < sizeof(locs) / sizeof(locs[0]); i++)
		if (setlocale(LC_NUMERIC, locs[i]) != NULL)
			break;
	if (i == sizeof(locs) / sizeof(locs[0]))
		print_message("no decimal-comma locale installed: "
		    "rendered under the C locale only\n");
	else {
		b = everything(&j);
		setlocale(LC_NUMERIC, "C");
		assert_string_equal(a, b);
		free(b);
	}
	free(a);
}

/* A job with nothing recorded still gives every document, saying so. */
static void
test_empty(void **state)
{
	struct report_job	 j;
	struct report_bars	 b;
	char			*s;

	(void)state;
	memset(&j, 0, sizeof(j));
	j.delay_ms = -1;
	j.efficiency = -1;
	j.lower_bound_s = -1;
	s = gantt(&j, 0, UINT32_MAX);
	assert_non_null(strstr(s, "no data"));
	assert_int_equal(count(s, "class=\"lane\""), 0);
	assert_int_equal(count(s, "class=\"bar\""), 0);
	free(s);
	s = convergence(&j);
	assert_non_null(strstr(s, "no data"));
	free(s);
	s = breakdown(&j);
	assert_non_null(strstr(s, "no data"));
	free(s);
	s = html(&j, 0, UINT32_MAX);
	assert_int_equal(count(s, "no data"), 3);
	assert_non_null(strstr(s, "unknown"));
	free(s);
	s = trace(&j);
	assert_int_equal(count(s, "\"ph\""), 0);
	assert_non_null(strstr(s, "\"traceEvents\":["));
	free(s);
	memset(&b, 0, sizeof(b));
	s = bars(&b);
	assert_non_null(strstr(s, "no data"));
	free(s);
}

/*
 * Best fitness on a log scale: one point per generation, decade labels,
 * the 0 drawn hollow at the floor with a note; NaN and infinities are
 * missing, never printed.
 */
static void
test_convergence(void **state)
{
	struct report_job	 j = job_make();
	struct report_gen	 g[5];
	char			*s;

	(void)state;
	s = convergence(&j);
	assert_int_equal(count(s, "class=\"point\""), 2);
	assert_int_equal(count(s, "class=\"point clipped\""), 1);
	assert_non_null(strstr(s, ">0.1<"));
	assert_non_null(strstr(s, ">10<"));
	assert_non_null(strstr(s, "1 value(s) &lt;= 0 drawn hollow at the "
	    "axis floor 0.1"));
	free(s);

	memcpy(g, gens, sizeof(gens));
	g[3] = gens[2];
	g[3].gen = 3;
	g[3].best = NAN;
	g[4] = gens[2];
	g[4].gen = 4;
	g[4].best = INFINITY;
	j.gens = g;
	j.ngens = 5;
	j.efficiency = NAN;
	j.lower_bound_s = INFINITY;
	j.delay_ms = NAN;
	s = everything(&j);
	assert_finite_text(s);
	assert_non_null(strstr(s, "2 generation(s) without a finite value"));
	free(s);
}

/* Stacked time per generation, the efficiency line and the reference. */
static void
test_breakdown(void **state)
{
	struct report_job	 j = job_make();
	char			*s;

	(void)state;
	s = breakdown(&j);
	assert_int_equal(count(s, "class=\"gen\""), 3);
	assert_int_equal(count(s, "data-part=\"compute\""), 3);
	assert_int_equal(count(s, "data-part=\"comm\""), 3);
	assert_int_equal(count(s, "data-part=\"sync\""), 2);
	assert_non_null(strstr(s, "parallel efficiency LB/E 72.3 % "
	    "(lower bound 2.100 s, elapsed 2.900 s)"));
	assert_non_null(strstr(s, "lower bound / generation 0.700 s"));
	free(s);
	j.efficiency = -1;
	j.lower_bound_s = -1;
	s = breakdown(&j);
	assert_non_null(strstr(s, "parallel efficiency unknown (lower bound "
	    "unknown"));
	assert_null(strstr(s, "class=\"lower-bound\""));
	free(s);
}

/*
 * Scan JSON text: strings skipped, braces and brackets balanced and never
 * below zero.  Not a parser, only a guard against broken nesting.
 */
static void
assert_json_balanced(const char *s)
{
	int	 depth = 0, instr = 0;

	assert_int_equal(*s, '{');
	for (; *s != '\0'; s++) {
		if (instr) {
			if (*s == '\\' && s[1] != '\0')
				s++;
			else if (*s == '"')
				instr = 0;
			else
				assert_true((unsigned char)*s >= 0x20);
			continue;
		}
		if (*s == '"')
			instr = 1;
		else if (*s == '{' || *s == '[')
			depth++;
		else if (*s == '}' || *s == ']') {
			depth--;
			assert_true(depth >= 0);
		}
	}
	assert_int_equal(instr, 0);
	assert_int_equal(depth, 0);
}

/* One complete event per execution, one instant per withdrawn copy. */
static void
test_trace(void **state)
{
	struct report_job	 j = job_make();
	char			*s;

	(void)state;
	s = trace(&j);
	assert_json_balanced(s);
	assert_non_null(strstr(s, "\"displayTimeUnit\":\"ms\""));
	assert_int_equal(count(s, "\"ph\":\"X\""), NSPANS);
	assert_int_equal(count(s, "\"ph\":\"i\",\"s\":\"t\""), NMARKS);
	assert_int_equal(count(s, "\"name\":\"process_name\""), 2);
	assert_int_equal(count(s, "\"name\":\"thread_name\""), 3);
	assert_int_equal(count(s, "\"cat\":\"lost\""), 1);
	assert_non_null(strstr(s, "\"name\":\"task 6\",\"cat\":\"interrupted\","
	    "\"ph\":\"X\",\"pid\":2,\"tid\":1,\"ts\":1000000.000,"
	    "\"dur\":900000.000,\"args\":{\"gen\":1,\"task\":6,\"replica\":0,"
	    "\"outcome\":\"interrupted\"}"));
	free(s);
}

/* times(TEXT, ...): report_times_parse() on a string; its return. */
static int
times(const char *text, size_t len, double **ms, size_t *n, char *err)
{
	return (report_times_parse(text, len, "f", ms, n, err, 256));
}

/*
 * r3q-sim --trace reads back what report_trace() writes: the durations of
 * the executions done, in milliseconds; and a CSV of times, or an error
 * naming the line.
 */
static void
test_trace_times(void **state)
{
	struct report_job	 j = job_make();
	char			*s, err[256];
	double			*ms;
	size_t			 n, i;

	(void)state;
	s = trace(&j);
	assert_int_equal(times(s, strlen(s), &ms, &n, err), 0);
	assert_int_equal(n, count(s, "\"outcome\":\"done\""));
	for (i = 0; i < n; i++)
		assert_true(ms[i] > 0 && isfinite(ms[i]));
	free(ms);
	free(s);

	/* A header, a comment, a blank line, a second field; no last \n. */
	assert_int_equal(times("duration_ms\n50\n# c\n\n 150 ,x\n2.5", 31,
	    &ms, &n, err), 0);
	assert_int_equal(n, 3);
	assert_true(ms[0] == 50 && ms[1] == 150 && ms[2] == 2.5);
	free(ms);
	/* A NUL ends a line's number, not the file. */
	assert_int_equal(times("5\0junk\n7\n", 9, &ms, &n, err), 0);
	assert_int_equal(n, 2);
	assert_true(ms[0] == 5 && ms[1] == 7);
	free(ms);

	assert_int_equal(times("10\n-5\n", 6, &ms, &n, err), -1);
	assert_string_equal(err, "f:2: a time must be above 0 and at most "
	    "3600000 ms");
	assert_null(ms);
	assert_int_equal(times("1\nx\n", 4, &ms, &n, err), -1);
	assert_string_equal(err, "f:2: not a time in milliseconds");
	assert_int_equal(times("1\n4000000\n", 10, &ms, &n, err), -1);
	assert_int_equal(times("", 0, &ms, &n, err), -1);
	assert_string_equal(err, "f: no task times (no executions done in a "
	    "trace, no times in a CSV)");
	assert_int_equal(times("{\n{\"ph\":\"X\",\"outcome\":\"done\"}\n",
	    30, &ms, &n, err), -1);
	assert_string_equal(err, "f:2: an execution without \"dur\"");
	assert_int_equal(times("{\n\"ph\":\"X\",\"dur\":-1,\"outcome\":"
	    "\"done\"\n", 37, &ms, &n, err), -1);
	assert_string_equal(err, "f:2: \"dur\" is not a positive number");
}

/* The benchmark chart: a bar per present value, gaps for missing ones. */
static void
test_bars(void **state)
{
	static const char *const groups[] = {
		"100 ms / 0 ms", "100 ms / 50 ms"
	};
	static const char *const series[] = { "wq", "rr", "r3q<&>" };
	const double		 values[] = {
		1.5, NAN, 2.25, 3, INFINITY, -0.5
	};
	struct report_bars	 b = { "Total <time>", "seconds", groups, 2,
	    series, 3, values };
	char			*s, *t;

	(void)state;
	s = bars(&b);
	assert_int_equal(count(s, "class=\"bar\""), 4);
	assert_int_equal(count(s, "class=\"group\""), 2);
	assert_non_null(strstr(s, "r3q&lt;&amp;&gt;"));
	assert_non_null(strstr(s, "Total &lt;time&gt;"));
	assert_non_null(strstr(s, "2 value(s) missing"));
	assert_finite_text(s);
	t = bars(&b);
	assert_string_equal(s, t);
	free(s);
	free(t);
	b.values = NULL;
	assert_int_equal(report_svg_bars(stdout, &b), -1);
	assert_int_equal(errno, EINVAL);
}

/* A stream that cannot be written gives -1 and its errno. */
static void
test_write_error(void **state)
{
	struct report_job	 j = job_make();
	struct report_bars	 b;
	FILE			*f;

	(void)state;
	memset(&b, 0, sizeof(b));
	f = fopen("/dev/null", "r");
	assert_non_null(f);
	errno = 0;
	assert_int_equal(report_svg_gantt(f, &j, 0, UINT32_MAX), -1);
	assert_int_equal(errno, EBADF);
	errno = 0;
	assert_int_equal(report_svg_convergence(f, &j), -1);
	assert_int_equal(errno, EBADF);
	errno = 0;
	assert_int_equal(report_svg_breakdown(f, &j), -1);
	assert_int_equal(errno, EBADF);
	errno = 0;
	assert_int_equal(report_html(f, &j, 0, UINT32_MAX), -1);
	assert_int_equal(errno, EBADF);
	errno = 0;
	assert_int_equal(report_trace_json(f, &j), -1);
	assert_int_equal(errno, EBADF);
	errno = 0;
	assert_int_equal(report_svg_bars(f, &b), -1);
	assert_int_equal(errno, EBADF);
	fclose(f);
	assert_int_equal(report_svg_gantt(NULL, &j, 0, 1), -1);
	assert_int_equal(errno, EINVAL);
}

/* Write text to dir/name; the path is the caller's to free. */
static char *
write_file(const char *dir, const char *name, const char *text)
{
	char	*path;
	size_t	 n;
	FILE	*f;

	n = strlen(dir) + strlen(name) + 2;
	path = malloc(n);
	assert_non_null(path);
	snprintf(path, n, "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	return (path);
}

/* Run xmllint --noout on path; fail unless it accepts the file. */
static void
xmllint_ok(const char *path)
{
	pid_t	 pid;
	int	 status;

	pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		execl(XMLLINT, "xmllint", "--noout", path, (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("xmllint rejects %s (status %d)", path, status);
}

/*
 * Every document of the full, a zoomed and an empty job, and a bar chart,
 * through xmllint.  Without xmllint this cannot be checked, which is a
 * failure: install libxml2-utils.
 */
static void
test_xmllint(void **state)
{
	static const char *const groups[] = { "100 ms / 0 ms", "1 s / 50 ms" };
	static const char *const series[] = { "wq", "rr", "a<b&\"c\"" };
	const double		 values[] = { 1, 2, NAN, 4, 5, 6 };
	struct report_bars	 b = {
		"T&t", "s<", groups, 2, series, 3, values
	};
	struct report_job	 j = job_make(), e;
	char			 dir[] = "/tmp/test_report.XXXXXX";
	const char		*names[12];
	char			*docs[12], *path;
	size_t			 i, n = 0;

	(void)state;
	if (access(XMLLINT, X_OK) == -1)
		fail_msg("%s not found: install libxml2-utils to check that "
		    "the SVG and XHTML output is well-formed", XMLLINT);
	memset(&e, 0, sizeof(e));
	e.efficiency = e.lower_bound_s = e.delay_ms = -1;

	names[n] = "gantt.svg";
	docs[n++] = gantt(&j, 0, UINT32_MAX);
	names[n] = "gantt-1.svg";
	docs[n++] = gantt(&j, 1, 1);
	names[n] = "gantt-none.svg";
	docs[n++] = gantt(&j, 5, 6);
	names[n] = "convergence.svg";
	docs[n++] = convergence(&j);
	names[n] = "breakdown.svg";
	docs[n++] = breakdown(&j);
	names[n] = "report.html";
	docs[n++] = html(&j, 0, UINT32_MAX);
	names[n] = "empty-gantt.svg";
	docs[n++] = gantt(&e, 0, UINT32_MAX);
	names[n] = "empty-convergence.svg";
	docs[n++] = convergence(&e);
	names[n] = "empty-breakdown.svg";
	docs[n++] = breakdown(&e);
	names[n] = "empty.html";
	docs[n++] = html(&e, 0, UINT32_MAX);
	names[n] = "bars.svg";
	docs[n++] = bars(&b);
	b.ngroups = 0;
	names[n] = "empty-bars.svg";
	docs[n++] = bars(&b);

	assert_non_null(mkdtemp(dir));
	for (i = 0; i < n; i++) {
		path = write_file(dir, names[i], docs[i]);
		xmllint_ok(path);
		assert_int_equal(unlink(path), 0);
		free(path);
		free(docs[i]);
	}
	assert_int_equal(rmdir(dir), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gantt_lanes_bars),
		cmocka_unit_test(test_gantt_zoom),
		cmocka_unit_test(test_gantt_bad_lane),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_convergence),
		cmocka_unit_test(test_breakdown),
		cmocka_unit_test(test_trace),
		cmocka_unit_test(test_trace_times),
		cmocka_unit_test(test_bars),
		cmocka_unit_test(test_write_error),
		cmocka_unit_test(test_xmllint),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}

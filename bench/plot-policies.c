/*
 * bench/plot-policies: the figures of bench/policies, drawn from its CSV.
 * One group of bars per (task granularity, delay), in the order the CSV
 * first names them, one bar per policy:
 *
 *	fig5-total.svg		total time (the paper's Fig. 5)
 *	fig6-sync.svg		synchronisation wait (Fig. 6)
 *	fig8-efficiency.svg	parallel efficiency LB/E in % (Fig. 8)
 *
 * An empty field is a missing value and gets no bar.  The efficiency
 * column is taken as a fraction when no value in the file exceeds 1 (what
 * r3qctl --json prints) and as a percentage otherwise; 0 means unknown.
 *
 * usage: plot-policies CSV OUTDIR
 */
#include <err.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/report.h"

#define NFIELDS		13

/* The columns bench/policies writes, in order. */
enum field {
	F_GRAN = 0, F_DELAY, F_POLICY, F_GENS, F_TOTAL, F_SYNC, F_COMM,
	F_COMPUTE, F_EFF, F_LB, F_REPL, F_KHELD, F_KRUN
};

/* What a figure shows of a run. */
enum measure {
	M_TOTAL = 0, M_SYNC, M_EFF
};

static const char *const fieldname[NFIELDS] = {
	"granularity_ms", "delay_ms", "policy", "generations", "total_s",
	"sync_s", "comm_s", "compute_s", "efficiency", "lower_bound_s",
	"replicas", "killed_held", "killed_running"
};

/* One run: which bar it is and the values drawn. */
struct row {
	size_t		 r_group, r_series;
	size_t		 r_line;
	double		 r_total, r_sync, r_eff;
};

/*
 * Everything read from the CSV.  Groups and series are kept in the order
 * they first appear, so the figures follow the order of the benchmark.
 */
struct table {
	const char	*t_path;
	char		**t_groups;	/* "100 ms / 0 ms" */
	double		*t_gran, *t_delay;
	size_t		 t_ngroups;
	char		**t_series;	/* policies */
	size_t		 t_nseries;
	struct row	*t_rows;
	size_t		 t_nrows;
};

static void	 usage(void) __attribute__((__noreturn__));
static void	*grow(void *, size_t, size_t);
static char	*concat(const char *, const char *, const char *,
		    const char *);
static int	 parse_num(const char *, int, double *);
static size_t	 split(char *, char **);
static size_t	 group_find(struct table *, const char *, const char *,
		    double, double);
static size_t	 series_find(struct table *, const char *);
static void	 read_row(struct table *, char **, size_t);
static void	 read_csv(struct table *, const char *);
static double	 row_value(const struct row *, enum measure);
static void	 plot(const struct table *, const char *, const char *,
		    const char *, const char *, enum measure);

/* How to call us. */
static void
usage(void)
{
	fprintf(stderr, "usage: plot-policies CSV OUTDIR\n");
	exit(64);
}

/* Room for n + 1 elements of size sz in p, or die. */
static void *
grow(void *p, size_t n, size_t sz)
{
	if ((p = reallocarray(p, n + 1, sz)) == NULL)
		err(1, NULL);
	return (p);
}

/* a, b, c and d joined in a new string, or die. */
static char *
concat(const char *a, const char *b, const char *c, const char *d)
{
	size_t	 n;
	char	*s;

	n = strlen(a) + strlen(b) + strlen(c) + strlen(d) + 1;
	if ((s = malloc(n)) == NULL)
		err(1, NULL);
	snprintf(s, n, "%s%s%s%s", a, b, c, d);
	return (s);
}

/*
 * A finite decimal number filling the whole field; an empty field is NaN
 * (missing) where allowed.
 */
static int
parse_num(const char *s, int empty_ok, double *v)
{
	char	*end;

	if (*s == '\0') {
		*v = NAN;
		return (empty_ok ? 0 : -1);
	}
	errno = 0;
	*v = strtod(s, &end);
	if (end == s || *end != '\0' || errno == ERANGE || !isfinite(*v))
		return (-1);
	return (0);
}

/* Split a line at commas, in place; returns the number of fields. */
static size_t
split(char *line, char **f)
{
	size_t	 n = 0;
	char	*p;

	for (p = line;; p++) {
		if (n < NFIELDS + 1)
			f[n] = p;
		n++;
		if ((p = strchr(p, ',')) == NULL)
			break;
		*p = '\0';
	}
	return (n);
}

/* The index of the group (granularity, delay), added if new. */
static size_t
group_find(struct table *t, const char *gs, const char *ds, double gran,
    double delay)
{
	size_t	 i;

	for (i = 0; i < t->t_ngroups; i++)
		if (t->t_gran[i] == gran && t->t_delay[i] == delay)
			return (i);
	t->t_groups = grow(t->t_groups, t->t_ngroups, sizeof(*t->t_groups));
	t->t_gran = grow(t->t_gran, t->t_ngroups, sizeof(*t->t_gran));
	t->t_delay = grow(t->t_delay, t->t_ngroups, sizeof(*t->t_delay));
	t->t_groups[i] = concat(gs, " ms / ", ds, " ms");
	t->t_gran[i] = gran;
	t->t_delay[i] = delay;
	t->t_ngroups++;
	return (i);
}

/* The index of a policy, added if new. */
static size_t
series_find(struct table *t, const char *policy)
{
	size_t	 i;

	for (i = 0; i < t->t_nseries; i++)
		if (strcmp(t->t_series[i], policy) == 0)
			return (i);
	t->t_series = grow(t->t_series, t->t_nseries, sizeof(*t->t_series));
	if ((t->t_series[i] = strdup(policy)) == NULL)
		err(1, NULL);
	t->t_nseries++;
	return (i);
}

/* Check the fields of one data line and keep its run. */
static void
read_row(struct table *t, char **f, size_t line)
{
	struct row	*r;
	double		 v[NFIELDS];
	size_t		 i, g, s;

	for (i = 0; i < NFIELDS; i++) {
		if (i == F_POLICY)
			continue;
		if (parse_num(f[i], i != F_GRAN && i != F_DELAY, &v[i]) == -1) {
			if (*f[i] == '\0')
				errx(1, "%s:%zu: %s: missing", t->t_path, line,
				    fieldname[i]);
			errx(1, "%s:%zu: %s: '%s' is not a number", t->t_path,
			    line, fieldname[i], f[i]);
		}
		if (v[i] < 0)
			errx(1, "%s:%zu: %s: '%s' is negative", t->t_path, line,
			    fieldname[i], f[i]);
	}
	if (*f[F_POLICY] == '\0')
		errx(1, "%s:%zu: policy: missing", t->t_path, line);

	g = group_find(t, f[F_GRAN], f[F_DELAY], v[F_GRAN], v[F_DELAY]);
	s = series_find(t, f[F_POLICY]);
	for (i = 0; i < t->t_nrows; i++)
		if (t->t_rows[i].r_group == g && t->t_rows[i].r_series == s)
			errx(1, "%s:%zu: a second run of %s at %s (first at "
			    "line %zu)", t->t_path, line, t->t_series[s],
			    t->t_groups[g], t->t_rows[i].r_line);
	t->t_rows = grow(t->t_rows, t->t_nrows, sizeof(*t->t_rows));
	r = &t->t_rows[t->t_nrows++];
	r->r_group = g;
	r->r_series = s;
	r->r_line = line;
	r->r_total = v[F_TOTAL];
	r->r_sync = v[F_SYNC];
	r->r_eff = v[F_EFF] > 0 ? v[F_EFF] : NAN;
}

/*
 * Read the CSV: the exact header of bench/policies, then one run per line
 * (blank lines ignored).  Any other content is an error naming its line.
 */
static void
read_csv(struct table *t, const char *path)
{
	FILE	*fp;
	char	*line = NULL, *f[NFIELDS + 1];
	size_t	 cap = 0, lineno = 0, n, i;
	ssize_t	 len;
	double	 emax = 0;
	int	 header = 0;

	memset(t, 0, sizeof(*t));
	t->t_path = path;
	if ((fp = fopen(path, "r")) == NULL)
		err(1, "%s", path);
	while ((len = getline(&line, &cap, fp)) != -1) {
		lineno++;
		while (len > 0 && (line[len - 1] == '\n' ||
		    line[len - 1] == '\r'))
			line[--len] = '\0';
		if (strlen(line) != (size_t)len)
			errx(1, "%s:%zu: NUL byte", path, lineno);
		if (!header) {
			if ((n = split(line, f)) != NFIELDS)
				errx(1, "%s:%zu: not the header of "
				    "bench/policies (%zu columns, want %d)",
				    path, lineno, n, NFIELDS);
			for (i = 0; i < NFIELDS; i++)
				if (strcmp(f[i], fieldname[i]) != 0)
					errx(1, "%s:%zu: column %zu is '%s', "
					    "want '%s'", path, lineno, i + 1,
					    f[i], fieldname[i]);
			header = 1;
			continue;
		}
		if (len == 0)
			continue;
		if (strchr(line, '"') != NULL)
			errx(1, "%s:%zu: quoted fields are not supported",
			    path, lineno);
		if ((n = split(line, f)) != NFIELDS)
			errx(1, "%s:%zu: %zu fields, want %d", path, lineno, n,
			    NFIELDS);
		read_row(t, f, lineno);
	}
	if (ferror(fp))
		err(1, "%s", path);
	fclose(fp);
	free(line);
	if (!header)
		errx(1, "%s: empty, want the header of bench/policies", path);

	/* A fraction (as r3qctl prints it) or already a percentage. */
	for (i = 0; i < t->t_nrows; i++)
		if (t->t_rows[i].r_eff > emax)
			emax = t->t_rows[i].r_eff;
	if (emax <= 1)
		for (i = 0; i < t->t_nrows; i++)
			t->t_rows[i].r_eff *= 100;
}

/* One measure of a run. */
static double
row_value(const struct row *r, enum measure m)
{
	switch (m) {
	case M_TOTAL:
		return (r->r_total);
	case M_SYNC:
		return (r->r_sync);
	default:
		return (r->r_eff);
	}
}

/* Draw one measure of every run as dir/name. */
static void
plot(const struct table *t, const char *dir, const char *name,
    const char *title, const char *ylabel, enum measure m)
{
	struct report_bars	 b;
	const struct row	*r;
	double			*v;
	char			*path;
	FILE			*fp;
	size_t			 i;

	if ((v = calloc(t->t_ngroups * t->t_nseries + 1, sizeof(*v))) == NULL)
		err(1, NULL);
	for (i = 0; i < t->t_ngroups * t->t_nseries; i++)
		v[i] = NAN;
	for (i = 0; i < t->t_nrows; i++) {
		r = &t->t_rows[i];
		v[r->r_group * t->t_nseries + r->r_series] = row_value(r, m);
	}
	b.title = title;
	b.ylabel = ylabel;
	b.groups = (const char *const *)t->t_groups;
	b.ngroups = t->t_ngroups;
	b.series = (const char *const *)t->t_series;
	b.nseries = t->t_nseries;
	b.values = v;

	path = concat(dir, "/", name, "");
	if ((fp = fopen(path, "w")) == NULL)
		err(1, "%s", path);
	if (report_svg_bars(fp, &b) == -1 || fclose(fp) == EOF) {
		warn("%s", path);
		unlink(path);
		exit(1);
	}
	free(path);
	free(v);
}

int
main(int argc, char *argv[])
{
	struct table	 t;
	size_t		 i;

	if (argc != 3)
		usage();
	read_csv(&t, argv[1]);
	plot(&t, argv[2], "fig5-total.svg",
	    "Total time per task granularity / delay (Fig. 5)",
	    "total time (s)", M_TOTAL);
	plot(&t, argv[2], "fig6-sync.svg",
	    "Synchronisation wait per task granularity / delay (Fig. 6)",
	    "synchronisation wait (s)", M_SYNC);
	plot(&t, argv[2], "fig8-efficiency.svg",
	    "Parallel efficiency LB/E per task granularity / delay (Fig. 8)",
	    "parallel efficiency (%)", M_EFF);

	for (i = 0; i < t.t_ngroups; i++)
		free(t.t_groups[i]);
	for (i = 0; i < t.t_nseries; i++)
		free(t.t_series[i]);
	free(t.t_groups);
	free(t.t_gran);
	free(t.t_delay);
	free(t.t_series);
	free(t.t_rows);
	return (0);
}

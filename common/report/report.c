/*
 * Rendering of a job's record: the task flow per CPU slot (the R3Q paper's
 * Fig. 1/2), best fitness per generation, the time of each generation split
 * into computation, communication and synchronisation wait, a
 * self-contained XHTML page holding all three, a Chrome trace-event file,
 * and the grouped bar chart the benchmarks draw their figures with.
 *
 * Every renderer writes through a struct out that remembers the first write
 * error, so the drawing code stays free of error paths; the public entry
 * point reports that error once at the end.  Numbers are printed under a
 * private "C" locale (uselocale), never NaN or infinity: a non-finite value
 * is missing data and is left out, with a note where that matters.  Nothing
 * here depends on the clock, on the environment or on the order of a hash,
 * so the same record always gives the same bytes.
 */
#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define NPALETTE	10
#define COL_FAILED	"#222222"
#define COL_INTR	"#d62728"
#define COL_MOVED	"#1f4e9c"	/* a task moved by balancing */
#define COL_SYNC	"#7f7f7f"
#define COL_AXIS	"#333333"
#define COL_GRID	"#dddddd"
#define CHAR_W		6.2		/* about a character's width at 11 px */

/* Tableau 10: distinct, and readable on white. */
static const char *const palette[NPALETTE] = {
	"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
	"#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"
};

/*
 * Where a rendering goes.  Owned by the public entry point for the length
 * of one call: o_err holds the first errno seen, after which nothing more
 * is written.
 */
struct out {
	FILE		*o_f;
	int		 o_err;
	locale_t	 o_loc;
	locale_t	 o_old;
};

/* A plot area and the value range its y axis maps. */
struct plot {
	double		 x, y, w, h;
	double		 lo, hi;
};

/* The task-flow figure's geometry and selection, computed before drawing. */
struct gantt {
	const struct report_job	*g_job;
	uint32_t	 g_from, g_to;
	uint64_t	*g_base;	/* first lane of each worker */
	uint64_t	 g_nlanes;
	uint64_t	 g_t0, g_t1;	/* time shown, ns since the job began */
	uint32_t	 g_gmin, g_gmax;	/* generations selected */
	int		 g_data;	/* anything selected at all */
	size_t		 g_nbad;	/* selected spans with no lane */
	size_t		 g_nbadmarks;	/* selected marks with no lane */
	struct lspan	*g_ls;		/* selected spans, by lane */
	size_t		 g_nls;
	double		 g_left, g_top, g_pw, g_ph, g_w, g_h;
};

/* A selected span and its lane, for drawing lane by lane. */
struct lspan {
	uint64_t	 lane;
	size_t		 idx;
};

/* A generation record's place when sorted by generation number. */
struct gidx {
	uint32_t	 gen;
	size_t		 idx;
};

static int	 out_begin(struct out *, FILE *);
static int	 out_end(struct out *);
static void	 out_printf(struct out *, const char *, ...)
		    __attribute__((__format__(__printf__, 2, 3)));
static void	 out_putc(struct out *, int);
static void	 out_write(struct out *, const char *, size_t);
static size_t	 utf8_len(const unsigned char *, size_t);
static void	 out_xml(struct out *, const char *, size_t);
static void	 out_xmls(struct out *, const char *);
static void	 out_json(struct out *, const char *, size_t);
static void	 out_worker(struct out *, const struct report_job *, size_t);
static void	 out_decade(struct out *, int);
static void	 out_us(struct out *, uint64_t);
static size_t	 worker_len(const struct report_job *, size_t);
static const char *outcome_key(enum report_outcome);
static const char *outcome_text(enum report_outcome);
static int	 in_range(uint32_t, uint32_t, uint32_t);
static uint64_t	 add_sat(uint64_t, uint64_t);
static double	 nice_step(double, int);
static int	 step_decimals(double);
static double	 plot_y(const struct plot *, double);
static void	 svg_open(struct out *, int, double, double, const char *);
static void	 svg_close(struct out *);
static void	 svg_nodata(struct out *, double, double, const char *);
static void	 axis_y(struct out *, const struct plot *, const char *);
static int	 lspan_cmp(const void *, const void *);
static int	 gidx_cmp(const void *, const void *);
static struct gidx *gen_order(struct out *, const struct report_job *);
static int	 gantt_prepare(struct out *, struct gantt *,
		    const struct report_job *, uint32_t, uint32_t);
static double	 gantt_x(const struct gantt *, uint64_t);
static void	 gantt_defs(struct out *);
static void	 gantt_bands(struct out *, const struct gantt *);
static void	 gantt_bar(struct out *, const struct gantt *,
		    const struct report_span *, uint64_t);
static void	 gantt_lanes(struct out *, const struct gantt *);
static void	 gantt_marks(struct out *, const struct gantt *);
static void	 gantt_axis(struct out *, const struct gantt *);
static void	 gantt_legend(struct out *, const struct gantt *);
static void	 gantt_render(struct out *, const struct report_job *,
		    uint32_t, uint32_t, int);
static void	 conv_render(struct out *, const struct report_job *, int);
static void	 brk_render(struct out *, const struct report_job *, int);
static void	 bars_render(struct out *, const struct report_bars *);
static void	 html_render(struct out *, const struct report_job *,
		    uint32_t, uint32_t);
static void	 trace_render(struct out *, const struct report_job *);

/* Start a rendering into f under the "C" locale. */
static int
out_begin(struct out *o, FILE *f)
{
	memset(o, 0, sizeof(*o));
	o->o_f = f;
	o->o_loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
	if (o->o_loc == (locale_t)0)
		return (-1);
	o->o_old = uselocale(o->o_loc);
	return (0);
}

/* End a rendering: restore the locale, flush and report the first error. */
static int
out_end(struct out *o)
{
	uselocale(o->o_old);
	freelocale(o->o_loc);
	if (o->o_err == 0) {
		errno = 0;
		if (fflush(o->o_f) == EOF || ferror(o->o_f))
			o->o_err = errno != 0 ? errno : EIO;
	}
	if (o->o_err != 0) {
		errno = o->o_err;
		return (-1);
	}
	return (0);
}

/* Formatted output; the first failure sticks. */
static void
out_printf(struct out *o, const char *fmt, ...)
{
	va_list	 ap;
	int	 r;

	if (o->o_err != 0)
		return;
	errno = 0;
	va_start(ap, fmt);
	r = vfprintf(o->o_f, fmt, ap);
	va_end(ap);
	if (r < 0)
		o->o_err = errno != 0 ? errno : EIO;
}

/* One byte of output. */
static void
out_putc(struct out *o, int c)
{
	if (o->o_err != 0)
		return;
	errno = 0;
	if (putc(c, o->o_f) == EOF)
		o->o_err = errno != 0 ? errno : EIO;
}

/* Raw bytes of output. */
static void
out_write(struct out *o, const char *s, size_t n)
{
	if (o->o_err != 0 || n == 0)
		return;
	errno = 0;
	if (fwrite(s, 1, n, o->o_f) != n)
		o->o_err = errno != 0 ? errno : EIO;
}

/*
 * The length of the well-formed UTF-8 sequence at s (at most n bytes), or 0
 * if there is none: overlong forms, surrogates, code points past U+10FFFF
 * and the non-characters U+FFFE and U+FFFF (not allowed in XML) are refused.
 */
static size_t
utf8_len(const unsigned char *s, size_t n)
{
	uint32_t	 cp, min;
	size_t		 len, i;

	if (s[0] < 0x80)
		return (1);
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2;
		cp = s[0] & 0x1f;
		min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3;
		cp = s[0] & 0x0f;
		min = 0x800;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4;
		cp = s[0] & 0x07;
		min = 0x10000;
	} else
		return (0);
	if (len > n)
		return (0);
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return (0);
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ||
	    cp == 0xfffe || cp == 0xffff)
		return (0);
	return (len);
}

/*
 * Text or an attribute value, escaped for XML: the five special characters
 * become entities, control characters (not allowed in XML 1.0) become '?'
 * and bytes that are not UTF-8 become U+FFFD.  At most n bytes, stopping at
 * a NUL.
 */
static void
out_xml(struct out *o, const char *s, size_t n)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 i = 0, len;

	while (i < n && p[i] != '\0') {
		switch (p[i]) {
		case '&':
			out_write(o, "&amp;", 5);
			break;
		case '<':
			out_write(o, "&lt;", 4);
			break;
		case '>':
			out_write(o, "&gt;", 4);
			break;
		case '"':
			out_write(o, "&quot;", 6);
			break;
		case '\'':
			out_write(o, "&#39;", 5);
			break;
		default:
			if (p[i] < 0x20) {
				out_putc(o, '?');
				break;
			}
			len = utf8_len(p + i, strnlen(s + i, n - i));
			if (len == 0) {
				out_write(o, "\xef\xbf\xbd", 3);
				break;
			}
			out_write(o, s + i, len);
			i += len;
			continue;
		}
		i++;
	}
}

/* A NUL-terminated string, escaped for XML; NULL prints nothing. */
static void
out_xmls(struct out *o, const char *s)
{
	if (s != NULL)
		out_xml(o, s, strlen(s));
}

/*
 * The inside of a JSON string: quote, backslash and control characters
 * escaped, bytes that are not UTF-8 replaced by U+FFFD.
 */
static void
out_json(struct out *o, const char *s, size_t n)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 i = 0, len;

	while (i < n && p[i] != '\0') {
		if (p[i] == '"' || p[i] == '\\') {
			out_putc(o, '\\');
			out_putc(o, p[i]);
		} else if (p[i] < 0x20)
			out_printf(o, "\\u%04x", p[i]);
		else {
			len = utf8_len(p + i, strnlen(s + i, n - i));
			if (len == 0)
				out_write(o, "\\ufffd", 6);
			else {
				out_write(o, s + i, len);
				i += len;
				continue;
			}
		}
		i++;
	}
}

/* The length of a worker's name (the field need not be terminated). */
static size_t
worker_len(const struct report_job *j, size_t w)
{
	return (strnlen(j->workers[w].name, sizeof(j->workers[w].name)));
}

/* A worker's name for XML, or "worker N" when it has none. */
static void
out_worker(struct out *o, const struct report_job *j, size_t w)
{
	if (w >= j->nworkers || worker_len(j, w) == 0)
		out_printf(o, "worker %zu", w);
	else
		out_xml(o, j->workers[w].name, worker_len(j, w));
}

/* 10^e for an axis label: plain when short, 1eN otherwise. */
static void
out_decade(struct out *o, int e)
{
	int	 i;

	if (e >= 0 && e <= 5) {
		out_putc(o, '1');
		for (i = 0; i < e; i++)
			out_putc(o, '0');
	} else if (e < 0 && e >= -4) {
		out_write(o, "0.", 2);
		for (i = 0; i < -e - 1; i++)
			out_putc(o, '0');
		out_putc(o, '1');
	} else
		out_printf(o, "1e%d", e);
}

/* Nanoseconds as microseconds with three exact decimals. */
static void
out_us(struct out *o, uint64_t ns)
{
	out_printf(o, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

/* The short name of an outcome; anything out of range counts as failed. */
static const char *
outcome_key(enum report_outcome oc)
{
	switch (oc) {
	case REPORT_DONE:
		return ("done");
	case REPORT_LOST_RACE:
		return ("lost");
	case REPORT_INTERRUPTED:
		return ("interrupted");
	default:
		return ("failed");
	}
}

/* An outcome in words, for tooltips. */
static const char *
outcome_text(enum report_outcome oc)
{
	switch (oc) {
	case REPORT_DONE:
		return ("done");
	case REPORT_LOST_RACE:
		return ("lost race (duplicate)");
	case REPORT_INTERRUPTED:
		return ("interrupted while running");
	default:
		return ("failed");
	}
}

/* Is generation g in from..to? */
static int
in_range(uint32_t g, uint32_t from, uint32_t to)
{
	return (g >= from && g <= to);
}

/* a + b, stopping at the largest value. */
static uint64_t
add_sat(uint64_t a, uint64_t b)
{
	return (a > UINT64_MAX - b ? UINT64_MAX : a + b);
}

/* A round step (1, 2 or 5 times a power of ten) for about n ticks. */
static double
nice_step(double range, int n)
{
	double	 raw, mag, f;

	if (!isfinite(range) || range <= 0)
		return (1);
	raw = range / n;
	mag = pow(10, floor(log10(raw)));
	f = raw / mag;
	if (f <= 1)
		f = 1;
	else if (f <= 2)
		f = 2;
	else if (f <= 5)
		f = 5;
	else
		f = 10;
	return (f * mag);
}

/* The decimals that print multiples of step without losing them. */
static int
step_decimals(double step)
{
	int	 d;

	if (step >= 1)
		return (0);
	d = (int)ceil(-log10(step) - 1e-9);
	return (d > 9 ? 9 : d);
}

/* The y coordinate of v in a plot. */
static double
plot_y(const struct plot *p, double v)
{
	if (v < p->lo)
		v = p->lo;
	if (v > p->hi)
		v = p->hi;
	return (p->y + p->h - (v - p->lo) / (p->hi - p->lo) * p->h);
}

/*
 * The root element; a standalone figure also gets the XML declaration.  A
 * white background keeps the figure readable on any page.
 */
static void
svg_open(struct out *o, int standalone, double w, double h, const char *cls)
{
	if (standalone)
		out_printf(o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	out_printf(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" "
	    "class=\"%s\" width=\"%.0f\" height=\"%.0f\" "
	    "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" "
	    "font-size=\"11\">\n", cls, w, h, w, h);
	out_printf(o, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" "
	    "fill=\"#ffffff\"/>\n", w, h);
}

/* The end of a figure. */
static void
svg_close(struct out *o)
{
	out_printf(o, "</svg>\n");
}

/* The message a figure shows instead of data. */
static void
svg_nodata(struct out *o, double x, double y, const char *why)
{
	out_printf(o, "<text class=\"nodata\" x=\"%.2f\" y=\"%.2f\" "
	    "text-anchor=\"middle\" font-size=\"14\" fill=\"#777777\">"
	    "no data", x, y);
	if (why != NULL) {
		out_write(o, ": ", 2);
		out_xmls(o, why);
	}
	out_printf(o, "</text>\n");
}

/* A linear y axis on the left of a plot, with gridlines and a label. */
static void
axis_y(struct out *o, const struct plot *p, const char *label)
{
	double	 step, i, first, last, v, y;
	int	 dec, n;

	step = nice_step(p->hi - p->lo, 6);
	dec = step_decimals(step);
	first = ceil(p->lo / step - 1e-9);
	last = floor(p->hi / step + 1e-9);
	out_printf(o, "<g class=\"yaxis\">\n");
	for (i = first, n = 0; i <= last && n < 100; i++, n++) {
		v = i * step;
		if (v == 0)
			v = 0;	/* no "-0" */
		y = plot_y(p, v);
		out_printf(o, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" "
		    "y2=\"%.2f\" stroke=\"%s\" stroke-width=\"%s\"/>\n", p->x,
		    y, p->x + p->w, y, v == 0 ? COL_AXIS : COL_GRID,
		    v == 0 ? "1" : "0.5");
		out_printf(o, "<text x=\"%.2f\" y=\"%.2f\" "
		    "text-anchor=\"end\">%.*f</text>\n", p->x - 4, y + 4, dec,
		    v);
	}
	out_printf(o, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
	    "stroke=\"%s\"/>\n", p->x, p->y, p->x, p->y + p->h, COL_AXIS);
	out_printf(o, "<text x=\"14\" y=\"%.2f\" text-anchor=\"middle\" "
	    "transform=\"rotate(-90 14 %.2f)\">", p->y + p->h / 2,
	    p->y + p->h / 2);
	out_xmls(o, label);
	out_printf(o, "</text>\n</g>\n");
}

/* Order selected spans by lane, then by their place in the record. */
static int
lspan_cmp(const void *a, const void *b)
{
	const struct lspan	*x = a, *y = b;

	if (x->lane != y->lane)
		return (x->lane < y->lane ? -1 : 1);
	if (x->idx != y->idx)
		return (x->idx < y->idx ? -1 : 1);
	return (0);
}

/* Order generation records by number, then by their place in the record. */
static int
gidx_cmp(const void *a, const void *b)
{
	const struct gidx	*x = a, *y = b;

	if (x->gen != y->gen)
		return (x->gen < y->gen ? -1 : 1);
	if (x->idx != y->idx)
		return (x->idx < y->idx ? -1 : 1);
	return (0);
}

/* The generation records sorted by number; NULL when there are none. */
static struct gidx *
gen_order(struct out *o, const struct report_job *j)
{
	struct gidx	*gi;
	size_t		 i;

	if (j->ngens == 0)
		return (NULL);
	if ((gi = calloc(j->ngens, sizeof(*gi))) == NULL) {
		if (o->o_err == 0)
			o->o_err = errno;
		return (NULL);
	}
	for (i = 0; i < j->ngens; i++) {
		gi[i].gen = j->gens[i].gen;
		gi[i].idx = i;
	}
	qsort(gi, j->ngens, sizeof(*gi), gidx_cmp);
	return (gi);
}

/*
 * Work out what the task-flow figure shows: the lanes (one per worker and
 * CPU slot, workers in record order), the spans, marks and generations
 * selected, the time range they cover and the figure's size.
 */
static int
gantt_prepare(struct out *o, struct gantt *g, const struct report_job *j,
    uint32_t from, uint32_t to)
{
	const struct report_span	*s;
	const struct report_gen		*gr;
	const struct report_mark	*m;
	uint64_t			 t0 = UINT64_MAX, t1 = 0, end;
	size_t				 i, w, maxlab = 0, len;
	int				 any = 0;

	memset(g, 0, sizeof(*g));
	g->g_job = j;
	g->g_from = from;
	g->g_to = to;
	g->g_gmin = UINT32_MAX;
	if (j->nworkers > 0 &&
	    (g->g_base = calloc(j->nworkers, sizeof(*g->g_base))) == NULL)
		goto fail;
	if (j->nspans > 0 &&
	    (g->g_ls = calloc(j->nspans, sizeof(*g->g_ls))) == NULL)
		goto fail;
	for (w = 0; w < j->nworkers; w++) {
		g->g_base[w] = g->g_nlanes;
		g->g_nlanes += j->workers[w].cpus;
		len = worker_len(j, w);
		if (len == 0)
			len = 16;
		len += 11;	/* "/slot" */
		if (j->workers[w].cpus > 0 && len > maxlab)
			maxlab = len;
	}

	for (i = 0; i < j->ngens; i++) {
		gr = &j->gens[i];
		if (!in_range(gr->gen, from, to))
			continue;
		any = 1;
		if (gr->gen < g->g_gmin)
			g->g_gmin = gr->gen;
		if (gr->gen > g->g_gmax)
			g->g_gmax = gr->gen;
		if (gr->start_ns < t0)
			t0 = gr->start_ns;
		if ((end = add_sat(gr->start_ns, gr->total_ns)) > t1)
			t1 = end;
	}
	for (i = 0; i < j->nspans; i++) {
		s = &j->spans[i];
		if (!in_range(s->gen, from, to))
			continue;
		if (s->worker >= j->nworkers ||
		    s->slot >= j->workers[s->worker].cpus) {
			g->g_nbad++;
			continue;
		}
		any = 1;
		g->g_ls[g->g_nls].lane = g->g_base[s->worker] + s->slot;
		g->g_ls[g->g_nls].idx = i;
		g->g_nls++;
		if (s->gen < g->g_gmin)
			g->g_gmin = s->gen;
		if (s->gen > g->g_gmax)
			g->g_gmax = s->gen;
		end = s->end_ns > s->start_ns ? s->end_ns : s->start_ns;
		if (s->start_ns < t0)
			t0 = s->start_ns;
		if (end > t1)
			t1 = end;
	}
	for (i = 0; i < j->nmarks; i++) {
		m = &j->marks[i];
		if (!in_range(m->gen, from, to))
			continue;
		if (m->worker >= j->nworkers ||
		    j->workers[m->worker].cpus == 0) {
			g->g_nbadmarks++;
			continue;
		}
		any = 1;
		if (m->gen < g->g_gmin)
			g->g_gmin = m->gen;
		if (m->gen > g->g_gmax)
			g->g_gmax = m->gen;
		if (m->t_ns < t0)
			t0 = m->t_ns;
		if (m->t_ns > t1)
			t1 = m->t_ns;
	}
	if (g->g_nls > 1)
		qsort(g->g_ls, g->g_nls, sizeof(*g->g_ls), lspan_cmp);

	g->g_data = any && g->g_nlanes > 0;
	if (g->g_data) {
		g->g_t0 = t0;
		g->g_t1 = t1 > t0 ? t1 : add_sat(t0, 1000000);
		if (g->g_t1 == g->g_t0)
			g->g_t0 = g->g_t1 - 1000000;
	}
	g->g_left = 16 + CHAR_W * (double)maxlab;
	if (g->g_left < 70)
		g->g_left = 70;
	if (g->g_left > 330)
		g->g_left = 330;
	g->g_top = 44;
	g->g_w = 1000;
	g->g_pw = g->g_w - g->g_left - 20;
	g->g_ph = 16 * (double)g->g_nlanes;
	g->g_h = g->g_top + g->g_ph + (g->g_data ? 48 + 44 : 30);
	if (g->g_nbad > 0 || g->g_nbadmarks > 0)
		g->g_h += 20;
	return (0);

fail:
	if (o->o_err == 0)
		o->o_err = errno;
	free(g->g_base);
	free(g->g_ls);
	return (-1);
}

/* The x coordinate of time t (ns) in the task-flow figure. */
static double
gantt_x(const struct gantt *g, uint64_t t)
{
	if (t < g->g_t0)
		t = g->g_t0;
	if (t > g->g_t1)
		t = g->g_t1;
	return (g->g_left + (double)(t - g->g_t0) * g->g_pw /
	    (double)(g->g_t1 - g->g_t0));
}

/*
 * Hatch patterns for replicas: white stripes over each palette colour, and
 * over the colour of failures.
 */
static void
gantt_defs(struct out *o)
{
	int	 k;

	out_printf(o, "<defs>\n");
	for (k = 0; k <= NPALETTE; k++) {
		out_printf(o, "<pattern id=\"r3q-h%c\" width=\"5\" "
		    "height=\"5\" patternUnits=\"userSpaceOnUse\" "
		    "patternTransform=\"rotate(45)\"><rect x=\"0\" y=\"0\" "
		    "width=\"5\" height=\"5\" fill=\"%s\"/><path d=\"M1 0V5\" "
		    "stroke=\"#ffffff\" stroke-width=\"2\" "
		    "stroke-opacity=\"0.85\"/></pattern>\n",
		    k < NPALETTE ? '0' + k : 'f',
		    k < NPALETTE ? palette[k] : COL_FAILED);
	}
	out_printf(o, "</defs>\n");
}

/*
 * Behind the bars: alternate lane shading, the synchronisation wait of each
 * selected generation as a translucent band over all lanes, and a thin line
 * at each generation's start (and at the end of the last), labelled above
 * the lanes where there is room.
 */
static void
gantt_bands(struct out *o, const struct gantt *g)
{
	const struct report_job	*j = g->g_job;
	const struct report_gen	*gr;
	uint64_t		 l, end, last = 0;
	double			 x, xe, lastlab = -1e9;
	size_t			 i;
	int			 have = 0;

	out_printf(o, "<g class=\"lanes-bg\">\n");
	for (l = 0; l < g->g_nlanes; l += 2)
		out_printf(o, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
		    "height=\"16\" fill=\"#f4f4f4\"/>\n", g->g_left,
		    g->g_top + 16 * (double)l, g->g_pw);
	out_printf(o, "</g>\n<g class=\"sync-bands\">\n");
	for (i = 0; i < j->ngens; i++) {
		gr = &j->gens[i];
		if (!in_range(gr->gen, g->g_from, g->g_to))
			continue;
		end = add_sat(gr->start_ns, gr->total_ns);
		if (gr->sync_start_ns == 0 || gr->sync_start_ns >= end)
			continue;
		x = gantt_x(g, gr->sync_start_ns);
		xe = gantt_x(g, end);
		out_printf(o, "<rect class=\"sync\" data-gen=\"%" PRIu32 "\" "
		    "x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
		    "fill=\"%s\" fill-opacity=\"0.22\"><title>generation %"
		    PRIu32 ": synchronisation wait %.3f s (%.3f s to %.3f s)"
		    "</title></rect>\n", gr->gen, x, g->g_top, xe - x, g->g_ph,
		    COL_SYNC, gr->gen, (double)(end - gr->sync_start_ns) / 1e9,
		    (double)gr->sync_start_ns / 1e9, (double)end / 1e9);
	}
	out_printf(o, "</g>\n<g class=\"gen-lines\">\n");
	for (i = 0; i < j->ngens; i++) {
		gr = &j->gens[i];
		if (!in_range(gr->gen, g->g_from, g->g_to))
			continue;
		end = add_sat(gr->start_ns, gr->total_ns);
		if (!have || end > last)
			last = end;
		have = 1;
		x = gantt_x(g, gr->start_ns);
		out_printf(o, "<line class=\"genline\" x1=\"%.2f\" y1=\"%.2f\" "
		    "x2=\"%.2f\" y2=\"%.2f\" stroke=\"#555555\" "
		    "stroke-width=\"0.6\"/>\n", x, g->g_top - 10, x,
		    g->g_top + g->g_ph);
		if (fabs(x - lastlab) >= 26) {
			out_printf(o, "<text x=\"%.2f\" y=\"%.2f\" "
			    "font-size=\"9\" fill=\"#555555\">g%" PRIu32
			    "</text>\n", x + 2, g->g_top - 3, gr->gen);
			lastlab = x;
		}
	}
	if (have) {
		x = gantt_x(g, last);
		out_printf(o, "<line class=\"genline\" x1=\"%.2f\" y1=\"%.2f\" "
		    "x2=\"%.2f\" y2=\"%.2f\" stroke=\"#555555\" "
		    "stroke-width=\"0.6\"/>\n", x, g->g_top - 10, x,
		    g->g_top + g->g_ph);
	}
	out_printf(o, "</g>\n");
}

/*
 * One task bar.  Colour says the generation; a lost race is pale and
 * dashed, an interruption has a red outline and an "x" at its end, a
 * failure is dark, and a replica is hatched.
 */
static void
gantt_bar(struct out *o, const struct gantt *g, const struct report_span *s,
    uint64_t lane)
{
	const char	*col, *key;
	char		 fill[16];
	uint64_t	 end;
	double		 x, xe, y, w;
	int		 k, failed;

	key = outcome_key(s->outcome);
	failed = strcmp(key, "failed") == 0;
	k = (int)(s->gen % NPALETTE);
	col = failed ? COL_FAILED : palette[k];
	if (s->replica)
		snprintf(fill, sizeof(fill), "url(#r3q-h%c)",
		    failed ? 'f' : '0' + k);
	else
		snprintf(fill, sizeof(fill), "%s", col);

	end = s->end_ns > s->start_ns ? s->end_ns : s->start_ns;
	x = gantt_x(g, s->start_ns);
	xe = gantt_x(g, end);
	w = xe - x < 1 ? 1 : xe - x;
	y = g->g_top + 16 * (double)lane + 2;

	out_printf(o, "<rect class=\"bar\" data-gen=\"%" PRIu32 "\" "
	    "data-outcome=\"%s\" data-replica=\"%d\" x=\"%.2f\" y=\"%.2f\" "
	    "width=\"%.2f\" height=\"12\" fill=\"%s\"", s->gen, key,
	    s->replica ? 1 : 0, x, y, w, fill);
	switch (s->outcome) {
	case REPORT_DONE:
		out_printf(o, " stroke=\"#ffffff\" stroke-width=\"0.5\"");
		break;
	case REPORT_LOST_RACE:
		out_printf(o, " fill-opacity=\"0.35\" stroke=\"%s\" "
		    "stroke-width=\"1\" stroke-dasharray=\"3 2\"", col);
		break;
	case REPORT_INTERRUPTED:
		out_printf(o, " fill-opacity=\"0.75\" stroke=\"%s\" "
		    "stroke-width=\"1.5\"", COL_INTR);
		break;
	default:
		break;
	}
	if (s->moved)
		out_printf(o, " data-moved=\"1\"");
	out_printf(o, "><title>task %" PRIu64 "%s%s, generation %" PRIu32
	    ", ", s->task, s->replica ? " (replica)" : "",
	    s->moved ? " (moved here by balancing)" : "", s->gen);
	out_worker(o, g->g_job, s->worker);
	out_printf(o, "/%" PRIu32 ", %.3f s to %.3f s (%.3f s), %s</title>"
	    "</rect>\n", s->slot, (double)s->start_ns / 1e9,
	    (double)end / 1e9, (double)(end - s->start_ns) / 1e9,
	    outcome_text(s->outcome));
	/* Moved by balancing (doc/algorithms.md §4): a blue wedge at its start. */
	if (s->moved)
		out_printf(o, "<polygon class=\"moved\" points=\"%.2f,%.2f "
		    "%.2f,%.2f %.2f,%.2f\" fill=\"%s\"/>\n", x, y, x + 6,
		    y + 6, x, y + 12, COL_MOVED);
	if (s->outcome == REPORT_INTERRUPTED)
		out_printf(o, "<path class=\"xcap\" d=\"M%.2f %.2fL%.2f %.2f"
		    "M%.2f %.2fL%.2f %.2f\" stroke=\"%s\" "
		    "stroke-width=\"1.5\"/>\n", x + w - 3, y + 3, x + w + 3,
		    y + 9, x + w - 3, y + 9, x + w + 3, y + 3, COL_INTR);
}

/* One group per lane: its label and its bars. */
static void
gantt_lanes(struct out *o, const struct gantt *g)
{
	const struct report_job	*j = g->g_job;
	size_t			 w, k = 0;
	uint32_t		 slot;
	uint64_t		 lane;

	for (w = 0; w < j->nworkers; w++) {
		for (slot = 0; slot < j->workers[w].cpus; slot++) {
			lane = g->g_base[w] + slot;
			out_printf(o, "<g class=\"lane\" data-lane=\"");
			out_worker(o, j, w);
			out_printf(o, "/%" PRIu32 "\">\n<text x=\"%.2f\" "
			    "y=\"%.2f\" text-anchor=\"end\">", slot,
			    g->g_left - 6, g->g_top + 16 * (double)lane + 12);
			out_worker(o, j, w);
			out_printf(o, "/%" PRIu32 "</text>\n", slot);
			while (k < g->g_nls && g->g_ls[k].lane == lane) {
				gantt_bar(o, g, &j->spans[g->g_ls[k].idx],
				    lane);
				k++;
			}
			out_printf(o, "</g>\n");
		}
	}
}

/* Copies withdrawn while queued: triangles on the worker's first lane. */
static void
gantt_marks(struct out *o, const struct gantt *g)
{
	const struct report_job		*j = g->g_job;
	const struct report_mark	*m;
	double				 x, y;
	size_t				 i;

	out_printf(o, "<g class=\"marks\">\n");
	for (i = 0; i < j->nmarks; i++) {
		m = &j->marks[i];
		if (!in_range(m->gen, g->g_from, g->g_to) ||
		    m->worker >= j->nworkers || j->workers[m->worker].cpus == 0)
			continue;
		x = gantt_x(g, m->t_ns);
		y = g->g_top + 16 * (double)g->g_base[m->worker];
		out_printf(o, "<polygon class=\"mark\" data-gen=\"%" PRIu32
		    "\" points=\"%.2f,%.2f %.2f,%.2f %.2f,%.2f\" "
		    "fill=\"#000000\"><title>task %" PRIu64 ", generation %"
		    PRIu32 ": copy withdrawn while queued on ", m->gen, x - 4,
		    y, x + 4, y, x, y + 7, m->task, m->gen);
		out_worker(o, j, m->worker);
		out_printf(o, " at %.3f s</title></polygon>\n",
		    (double)m->t_ns / 1e9);
	}
	out_printf(o, "</g>\n");
}

/* The time axis, in seconds from the job's start. */
static void
gantt_axis(struct out *o, const struct gantt *g)
{
	double	 lo, hi, step, i, first, last, v, x, y;
	int	 dec, n;

	lo = (double)g->g_t0 / 1e9;
	hi = (double)g->g_t1 / 1e9;
	step = nice_step(hi - lo, 10);
	dec = step_decimals(step);
	first = ceil(lo / step - 1e-9);
	last = floor(hi / step + 1e-9);
	y = g->g_top + g->g_ph;
	out_printf(o, "<g class=\"xaxis\">\n<line x1=\"%.2f\" y1=\"%.2f\" "
	    "x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\"/>\n", g->g_left, y,
	    g->g_left + g->g_pw, y, COL_AXIS);
	for (i = first, n = 0; i <= last && n < 100; i++, n++) {
		v = i * step;
		if (v == 0)
			v = 0;
		x = g->g_left + (v - lo) / (hi - lo) * g->g_pw;
		out_printf(o, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" "
		    "y2=\"%.2f\" stroke=\"%s\"/>\n<text x=\"%.2f\" y=\"%.2f\" "
		    "text-anchor=\"middle\">%.*f</text>\n", x, y, x, y + 4,
		    COL_AXIS, x, y + 16, dec, v);
	}
	out_printf(o, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">"
	    "time since job start (s)</text>\n</g>\n",
	    g->g_left + g->g_pw / 2, y + 32);
}

/* What the colours and shapes mean. */
static void
gantt_legend(struct out *o, const struct gantt *g)
{
	static const char *const what[] = {
		"done", "replica (extra copy)", "lost race (duplicate)",
		"interrupted", "failed", "withdrawn while queued",
		"synchronisation wait"
	};
	const char	*c;
	double		 x, y;
	uint32_t	 gen;
	size_t		 i;
	int		 k;

	y = g->g_top + g->g_ph + 48;
	k = (int)(g->g_gmin % NPALETTE);
	c = palette[k];
	out_printf(o, "<g class=\"legend\">\n<text x=\"10\" y=\"%.2f\">"
	    "generation:</text>\n", y + 9);
	x = 84;
	for (gen = g->g_gmin; gen <= g->g_gmax && gen - g->g_gmin < NPALETTE;
	    gen++) {
		out_printf(o, "<rect x=\"%.2f\" y=\"%.2f\" width=\"10\" "
		    "height=\"10\" fill=\"%s\"/><text x=\"%.2f\" y=\"%.2f\">"
		    "%" PRIu32 "</text>\n", x, y, palette[gen % NPALETTE],
		    x + 13, y + 9, gen);
		x += 24 + CHAR_W * (gen < 10 ? 1 : gen < 100 ? 2 : 10);
		if (gen == UINT32_MAX)
			break;
	}
	if (g->g_gmax - g->g_gmin >= NPALETTE)
		out_printf(o, "<text x=\"%.2f\" y=\"%.2f\" fill=\"#555555\">"
		    "(colours repeat every %d generations)</text>\n", x,
		    y + 9, NPALETTE);

	y += 20;
	x = 10;
	for (i = 0; i < sizeof(what) / sizeof(what[0]); i++) {
		if (i == 5)
			out_printf(o, "<polygon points=\"%.2f,%.2f %.2f,%.2f "
			    "%.2f,%.2f\" fill=\"#000000\"/>\n", x + 1, y + 1,
			    x + 9, y + 1, x + 5, y + 8);
		else
			out_printf(o, "<rect x=\"%.2f\" y=\"%.2f\" "
			    "width=\"10\" height=\"10\"", x, y);
		switch (i) {
		case 0:
			out_printf(o, " fill=\"%s\"/>\n", c);
			break;
		case 1:
			out_printf(o, " fill=\"url(#r3q-h%d)\"/>\n", k);
			break;
		case 2:
			out_printf(o, " fill=\"%s\" fill-opacity=\"0.35\" "
			    "stroke=\"%s\" stroke-dasharray=\"3 2\"/>\n", c, c);
			break;
		case 3:
			out_printf(o, " fill=\"%s\" fill-opacity=\"0.75\" "
			    "stroke=\"%s\" stroke-width=\"1.5\"/>\n", c,
			    COL_INTR);
			break;
		case 4:
			out_printf(o, " fill=\"%s\"/>\n", COL_FAILED);
			break;
		case 5:
			break;
		default:
			out_printf(o, " fill=\"%s\" fill-opacity=\"0.4\"/>\n",
			    COL_SYNC);
			break;
		}
		out_printf(o, "<text x=\"%.2f\" y=\"%.2f\">%s</text>\n",
		    x + 14, y + 9, what[i]);
		x += 28 + CHAR_W * (double)strlen(what[i]);
	}
	/* Only a job that balanced shows the mark's key. */
	for (i = 0; i < g->g_job->nspans && !g->g_job->spans[i].moved; i++)
		;
	if (i < g->g_job->nspans)
		out_printf(o, "<polygon points=\"%.2f,%.2f %.2f,%.2f %.2f,%.2f\""
		    " fill=\"%s\"/>\n<text x=\"%.2f\" y=\"%.2f\">moved by "
		    "balancing</text>\n", x, y, x + 6, y + 6, x, y + 12,
		    COL_MOVED, x + 14, y + 9);
	out_printf(o, "</g>\n");
}

/*
 * The task flow per CPU slot: a lane per worker and slot, a bar per task
 * execution of the selected generations, idle time as the gaps.
 */
static void
gantt_render(struct out *o, const struct report_job *j, uint32_t from,
    uint32_t to, int standalone)
{
	struct gantt	 g;
	double		 y;

	if (gantt_prepare(o, &g, j, from, to) == -1)
		return;
	svg_open(o, standalone, g.g_w, g.g_h, "r3q-gantt");
	out_printf(o, "<title>job %" PRIu64 ": task flow per CPU slot"
	    "</title>\n<text x=\"10\" y=\"18\" font-size=\"14\" "
	    "font-weight=\"bold\">Job %" PRIu64 " (", j->id, j->id);
	out_xml(o, j->policy, strnlen(j->policy, sizeof(j->policy)));
	out_printf(o, "): task flow per CPU slot");
	if (g.g_data && g.g_gmin == g.g_gmax)
		out_printf(o, ", generation %" PRIu32, g.g_gmin);
	else if (g.g_data)
		out_printf(o, ", generations %" PRIu32 "-%" PRIu32, g.g_gmin,
		    g.g_gmax);
	out_printf(o, "</text>\n");

	if (g.g_data) {
		gantt_defs(o);
		gantt_bands(o, &g);
	}
	gantt_lanes(o, &g);
	if (g.g_data) {
		gantt_marks(o, &g);
		gantt_axis(o, &g);
		gantt_legend(o, &g);
	} else if (g.g_nlanes == 0)
		svg_nodata(o, g.g_w / 2, g.g_top + 4, "no CPU slots");
	else
		svg_nodata(o, g.g_left + g.g_pw / 2, g.g_top + g.g_ph + 20,
		    "no task ran in the generations selected");
	if (g.g_nbad > 0 || g.g_nbadmarks > 0) {
		y = g.g_h - 8;
		out_printf(o, "<text class=\"note\" x=\"10\" y=\"%.2f\" "
		    "fill=\"%s\">not shown: %zu task execution(s) and %zu "
		    "withdrawn copy(ies) on an unknown worker or CPU slot"
		    "</text>\n", y, COL_INTR, g.g_nbad, g.g_nbadmarks);
	}
	svg_close(o);
	free(g.g_base);
	free(g.g_ls);
}

/*
 * Best fitness per generation on a log scale.  The y range runs over whole
 * decades around the positive values; a value <= 0 cannot be shown on it
 * and is drawn hollow at the axis floor, with a note.  Non-finite values
 * are missing.
 */
static void
conv_render(struct out *o, const struct report_job *j, int standalone)
{
	const struct report_gen	*gr;
	struct gidx		*gi;
	struct plot		 p = { 70, 40, 630, 270, 0, 1 };
	double			 minpos = INFINITY, maxpos = 0, v, x, y, step;
	double			 span;
	uint32_t		 gmin = 0, gmax = 0;
	size_t			 i, nfin = 0, nclip = 0, nmiss = 0, n;
	int			 lo, hi, e, de;

	gi = gen_order(o, j);
	svg_open(o, standalone, 720, 360, "r3q-convergence");
	out_printf(o, "<title>job %" PRIu64 ": best fitness per generation"
	    "</title>\n<text x=\"10\" y=\"18\" font-size=\"14\" "
	    "font-weight=\"bold\">Job %" PRIu64 ": best fitness per "
	    "generation (log scale)</text>\n", j->id, j->id);
	for (i = 0; gi != NULL && i < j->ngens; i++) {
		v = j->gens[gi[i].idx].best;
		if (!isfinite(v)) {
			nmiss++;
			continue;
		}
		if (nfin++ == 0)
			gmin = gi[i].gen;
		gmax = gi[i].gen;
		if (v <= 0) {
			nclip++;
			continue;
		}
		if (v < minpos)
			minpos = v;
		if (v > maxpos)
			maxpos = v;
	}
	if (nfin == 0) {
		svg_nodata(o, 360, 180, j->ngens > 0 ?
		    "no finite fitness value" : NULL);
		svg_close(o);
		free(gi);
		return;
	}
	if (maxpos > 0) {
		lo = (int)floor(log10(minpos));
		hi = (int)ceil(log10(maxpos));
	} else
		lo = hi = 0;
	if (hi <= lo)
		hi = lo + 1;
	p.lo = lo;
	p.hi = hi;

	/* Decade gridlines, at most about ten labelled. */
	de = (hi - lo + 9) / 10;
	out_printf(o, "<g class=\"yaxis\">\n");
	for (e = lo; e <= hi; e += de) {
		y = plot_y(&p, e);
		out_printf(o, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" "
		    "y2=\"%.2f\" stroke=\"%s\" stroke-width=\"0.5\"/>\n"
		    "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">", p.x, y,
		    p.x + p.w, y, COL_GRID, p.x - 4, y + 4);
		out_decade(o, e);
		out_printf(o, "</text>\n");
	}
	out_printf(o, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
	    "stroke=\"%s\"/>\n<text x=\"14\" y=\"%.2f\" text-anchor=\"middle\" "
	    "transform=\"rotate(-90 14 %.2f)\">best fitness</text>\n</g>\n",
	    p.x, p.y, p.x, p.y + p.h, COL_AXIS, p.y + p.h / 2, p.y + p.h / 2);

	/* Generations along x, centred in equal slots. */
	span = (double)gmax - gmin + 1;
	step = nice_step(span, 10);
	if (step < 1)
		step = 1;
	out_printf(o, "<g class=\"xaxis\">\n<line x1=\"%.2f\" y1=\"%.2f\" "
	    "x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\"/>\n", p.x, p.y + p.h,
	    p.x + p.w, p.y + p.h, COL_AXIS);
	for (v = ceil(gmin / step) * step, n = 0; v <= gmax && n < 100;
	    v += step, n++) {
		x = p.x + (v - gmin + 0.5) / span * p.w;
		out_printf(o, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" "
		    "y2=\"%.2f\" stroke=\"%s\"/>\n<text x=\"%.2f\" y=\"%.2f\" "
		    "text-anchor=\"middle\">%.0f</text>\n", x, p.y + p.h, x,
		    p.y + p.h + 4, COL_AXIS, x, p.y + p.h + 16, v);
	}
	out_printf(o, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">"
	    "generation</text>\n</g>\n", p.x + p.w / 2, p.y + p.h + 32);

	out_printf(o, "<polyline class=\"best\" fill=\"none\" stroke=\"%s\" "
	    "stroke-width=\"1.5\" points=\"", palette[0]);
	for (i = 0, n = 0; i < j->ngens; i++) {
		gr = &j->gens[gi[i].idx];
		if (!isfinite(gr->best))
			continue;
		x = p.x + ((double)gr->gen - gmin + 0.5) / span * p.w;
		y = gr->best > 0 ? plot_y(&p, log10(gr->best)) : p.y + p.h;
		out_printf(o, "%s%.2f,%.2f", n++ > 0 ? " " : "", x, y);
	}
	out_printf(o, "\"/>\n<g class=\"points\">\n");
	for (i = 0; i < j->ngens; i++) {
		gr = &j->gens[gi[i].idx];
		if (!isfinite(gr->best))
			continue;
		x = p.x + ((double)gr->gen - gmin + 0.5) / span * p.w;
		if (gr->best > 0)
			out_printf(o, "<circle class=\"point\" cx=\"%.2f\" "
			    "cy=\"%.2f\" r=\"2.5\" fill=\"%s\"><title>"
			    "generation %" PRIu32 ": best %.6g</title>"
			    "</circle>\n", x, plot_y(&p, log10(gr->best)),
			    palette[0], gr->gen, gr->best);
		else
			out_printf(o, "<circle class=\"point clipped\" "
			    "cx=\"%.2f\" cy=\"%.2f\" r=\"3\" fill=\"#ffffff\" "
			    "stroke=\"%s\" stroke-width=\"1.5\"><title>"
			    "generation %" PRIu32 ": best %.6g, drawn at the "
			    "axis floor</title></circle>\n", x, p.y + p.h,
			    COL_INTR, gr->gen, gr->best);
	}
	out_printf(o, "</g>\n");
	if (nclip > 0 || nmiss > 0) {
		out_printf(o, "<text class=\"note\" x=\"%.2f\" y=\"350\" "
		    "fill=\"%s\">", p.x, COL_INTR);
		if (nclip > 0) {
			out_printf(o, "%zu value(s) &lt;= 0 drawn hollow at "
			    "the axis floor ", nclip);
			out_decade(o, lo);
			out_printf(o, "%s", nmiss > 0 ? "; " : "");
		}
		if (nmiss > 0)
			out_printf(o, "%zu generation(s) without a finite "
			    "value not drawn", nmiss);
		out_printf(o, "</text>\n");
	}
	svg_close(o);
	free(gi);
}

/*
 * The time of each generation stacked as computation, communication and
 * synchronisation wait, with the job's parallel efficiency and, when the
 * lower bound is known, its mean per generation as a dashed reference.
 */
static void
brk_render(struct out *o, const struct report_job *j, int standalone)
{
	static const char *const part[] = { "compute", "comm", "sync" };
	static const char *const partname[] = {
		"computation", "communication", "synchronisation wait"
	};
	static const char *const partcol[] = { "#59a14f", "#4e79a7",
	    "#f28e2b" };
	const struct report_gen	*gr;
	struct gidx		*gi;
	struct plot		 p = { 70, 40, 630, 260, 0, 1 };
	double			 w, slot, bw, x, y, v[3], sum, top, lbg = -1;
	double			 lastlab = -1e9;
	size_t			 i, k;

	gi = gen_order(o, j);
	w = 720;
	if (j->ngens > 210)
		w = 90 + 3 * (double)j->ngens;
	p.w = w - 90;
	svg_open(o, standalone, w, 380, "r3q-breakdown");
	out_printf(o, "<title>job %" PRIu64 ": time per generation</title>\n"
	    "<text x=\"10\" y=\"18\" font-size=\"14\" font-weight=\"bold\">"
	    "Job %" PRIu64 ": time per generation</text>\n", j->id, j->id);
	if (gi == NULL) {
		svg_nodata(o, w / 2, 170, NULL);
		svg_close(o);
		return;
	}
	if (isfinite(j->lower_bound_s) && j->lower_bound_s >= 0)
		lbg = j->lower_bound_s / (double)j->ngens;
	top = lbg > 0 ? lbg : 0;
	for (i = 0; i < j->ngens; i++) {
		gr = &j->gens[i];
		sum = ((double)gr->compute_ns + (double)gr->comm_ns +
		    (double)gr->sync_ns) / 1e9;
		if (sum > top)
			top = sum;
	}
	if (top <= 0)
		top = 1;
	p.hi = ceil(top / nice_step(top, 6) - 1e-9) * nice_step(top, 6);
	axis_y(o, &p, "seconds");

	slot = p.w / (double)j->ngens;
	bw = slot * 0.7;
	out_printf(o, "<g class=\"gens\">\n");
	for (i = 0; i < j->ngens; i++) {
		gr = &j->gens[gi[i].idx];
		x = p.x + slot * (double)i + (slot - bw) / 2;
		v[0] = (double)gr->compute_ns / 1e9;
		v[1] = (double)gr->comm_ns / 1e9;
		v[2] = (double)gr->sync_ns / 1e9;
		sum = 0;
		out_printf(o, "<g class=\"gen\" data-gen=\"%" PRIu32 "\">\n",
		    gr->gen);
		for (k = 0; k < 3; k++) {
			if (v[k] <= 0)
				continue;
			y = plot_y(&p, sum + v[k]);
			out_printf(o, "<rect class=\"seg\" data-part=\"%s\" "
			    "x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
			    "height=\"%.2f\" fill=\"%s\"><title>generation %"
			    PRIu32 ": %s %.3f s of %.3f s</title></rect>\n",
			    part[k], x, y, bw, plot_y(&p, sum) - y, partcol[k],
			    gr->gen, partname[k], v[k],
			    (double)gr->total_ns / 1e9);
			sum += v[k];
		}
		out_printf(o, "</g>\n");
	}
	out_printf(o, "</g>\n<g class=\"xaxis\">\n<line x1=\"%.2f\" "
	    "y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\"/>\n", p.x,
	    p.y + p.h, p.x + p.w, p.y + p.h, COL_AXIS);
	for (i = 0; i < j->ngens; i++) {
		x = p.x + slot * ((double)i + 0.5);
		if (x - lastlab < 30)
			continue;
		out_printf(o, "<text x=\"%.2f\" y=\"%.2f\" "
		    "text-anchor=\"middle\">%" PRIu32 "</text>\n", x,
		    p.y + p.h + 14, gi[i].gen);
		lastlab = x;
	}
	out_printf(o, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">"
	    "generation</text>\n</g>\n", p.x + p.w / 2, p.y + p.h + 30);

	if (lbg > 0) {
		y = plot_y(&p, lbg);
		out_printf(o, "<line class=\"lower-bound\" x1=\"%.2f\" "
		    "y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" "
		    "stroke-width=\"1.2\" stroke-dasharray=\"6 3\"><title>"
		    "lower bound / generation %.3f s</title></line>\n", p.x, y,
		    p.x + p.w, y, COL_INTR, lbg);
	}

	y = p.y + p.h + 48;
	out_printf(o, "<g class=\"legend\">\n");
	for (k = 0, x = p.x; k < 3; k++) {
		out_printf(o, "<rect x=\"%.2f\" y=\"%.2f\" width=\"10\" "
		    "height=\"10\" fill=\"%s\"/><text x=\"%.2f\" y=\"%.2f\">%s"
		    "</text>\n", x, y - 9, partcol[k], x + 14, y, partname[k]);
		x += 34 + CHAR_W * (double)strlen(partname[k]);
	}
	if (lbg > 0)
		out_printf(o, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" "
		    "y2=\"%.2f\" stroke=\"%s\" stroke-width=\"1.2\" "
		    "stroke-dasharray=\"6 3\"/><text x=\"%.2f\" y=\"%.2f\">"
		    "lower bound / generation %.3f s</text>\n", x, y - 4,
		    x + 18, y - 4, COL_INTR, x + 22, y, lbg);
	out_printf(o, "</g>\n<text class=\"efficiency\" x=\"%.2f\" "
	    "y=\"%.2f\">", p.x, y + 22);
	if (isfinite(j->efficiency) && j->efficiency >= 0)
		out_printf(o, "parallel efficiency LB/E %.1f %%", 100 *
		    j->efficiency);
	else
		out_printf(o, "parallel efficiency unknown");
	if (lbg >= 0)
		out_printf(o, " (lower bound %.3f s", j->lower_bound_s);
	else
		out_printf(o, " (lower bound unknown");
	out_printf(o, ", elapsed %.3f s)</text>\n", (double)j->total_ns / 1e9);
	svg_close(o);
	free(gi);
}

/*
 * A grouped bar chart: groups along x, one bar per series in each, a
 * legend on the right.  Missing (non-finite) values get no bar.
 */
static void
bars_render(struct out *o, const struct report_bars *b)
{
	struct plot	 p = { 70, 40, 0, 260, 0, 1 };
	const char	*s;
	double		 v, vmin = 0, vmax = 0, gw, bw = 14, x, y, yz, w, h;
	double		 maxlab = 0, len, step, lx;
	size_t		 gi, si, nmiss = 0;
	int		 rot, empty;

	empty = b->ngroups == 0 || b->nseries == 0;
	for (si = 0; !empty && si < b->nseries; si++) {
		s = b->series[si] != NULL ? b->series[si] : "";
		if ((len = (double)strlen(s)) > maxlab)
			maxlab = len;
	}
	gw = (double)b->nseries * bw + 18;
	p.w = empty ? 560 : (double)b->ngroups * gw;
	if (p.w < 560)
		p.w = 560;
	gw = empty ? p.w : p.w / (double)b->ngroups;
	rot = 0;
	for (gi = 0; !empty && gi < b->ngroups; gi++) {
		s = b->groups[gi] != NULL ? b->groups[gi] : "";
		if (CHAR_W * (double)strlen(s) > gw - 4)
			rot = 1;
	}
	if (maxlab > 40)
		maxlab = 40;
	w = p.x + p.w + 40 + CHAR_W * maxlab;
	h = p.y + p.h + (rot ? 110 : 50);

	svg_open(o, 1, w, h, "r3q-bars");
	out_printf(o, "<title>");
	out_xmls(o, b->title);
	out_printf(o, "</title>\n<text x=\"10\" y=\"18\" font-size=\"14\" "
	    "font-weight=\"bold\">");
	out_xmls(o, b->title);
	out_printf(o, "</text>\n");
	if (empty) {
		svg_nodata(o, w / 2, p.y + p.h / 2, NULL);
		svg_close(o);
		return;
	}
	for (gi = 0; gi < b->ngroups * b->nseries; gi++) {
		v = b->values[gi];
		if (!isfinite(v)) {
			nmiss++;
			continue;
		}
		if (v < vmin)
			vmin = v;
		if (v > vmax)
			vmax = v;
	}
	if (vmax <= vmin)
		vmax = vmin + 1;
	step = nice_step(vmax - vmin, 6);
	p.lo = floor(vmin / step + 1e-9) * step;
	p.hi = ceil(vmax / step - 1e-9) * step;
	if (p.hi <= p.lo)
		p.hi = p.lo + step;
	axis_y(o, &p, b->ylabel);
	yz = plot_y(&p, 0);

	for (gi = 0; gi < b->ngroups; gi++) {
		out_printf(o, "<g class=\"group\" data-group=\"");
		out_xmls(o, b->groups[gi]);
		out_printf(o, "\">\n");
		x = p.x + gw * (double)gi + (gw - bw * (double)b->nseries) / 2;
		for (si = 0; si < b->nseries; si++, x += bw) {
			v = b->values[gi * b->nseries + si];
			if (!isfinite(v))
				continue;
			y = plot_y(&p, v);
			out_printf(o, "<rect class=\"bar\" data-series=\"");
			out_xmls(o, b->series[si]);
			out_printf(o, "\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
			    "height=\"%.2f\" fill=\"%s\"><title>", x + 1,
			    y < yz ? y : yz, bw - 2, fabs(yz - y),
			    palette[si % NPALETTE]);
			out_xmls(o, b->groups[gi]);
			out_write(o, ", ", 2);
			out_xmls(o, b->series[si]);
			out_printf(o, ": %.4g</title></rect>\n", v);
		}
		lx = p.x + gw * ((double)gi + 0.5);
		if (rot)
			out_printf(o, "<text x=\"%.2f\" y=\"%.2f\" "
			    "text-anchor=\"end\" transform=\"rotate(-35 %.2f "
			    "%.2f)\">", lx, p.y + p.h + 14, lx, p.y + p.h + 14);
		else
			out_printf(o, "<text x=\"%.2f\" y=\"%.2f\" "
			    "text-anchor=\"middle\">", lx, p.y + p.h + 16);
		out_xmls(o, b->groups[gi]);
		out_printf(o, "</text>\n</g>\n");
	}
	out_printf(o, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
	    "stroke=\"%s\"/>\n", p.x, yz, p.x + p.w, yz, COL_AXIS);

	out_printf(o, "<g class=\"legend\">\n");
	for (si = 0; si < b->nseries; si++) {
		y = p.y + 16 * (double)si;
		out_printf(o, "<rect x=\"%.2f\" y=\"%.2f\" width=\"10\" "
		    "height=\"10\" fill=\"%s\"/><text x=\"%.2f\" y=\"%.2f\">",
		    p.x + p.w + 16, y, palette[si % NPALETTE], p.x + p.w + 30,
		    y + 9);
		out_xmls(o, b->series[si]);
		out_printf(o, "</text>\n");
	}
	out_printf(o, "</g>\n");
	if (nmiss > 0)
		out_printf(o, "<text class=\"note\" x=\"%.2f\" y=\"%.2f\" "
		    "fill=\"#777777\">%zu value(s) missing, not drawn</text>\n",
		    p.x, h - 8, nmiss);
	svg_close(o);
}

/*
 * The report page: a summary table, the workers, then the three figures
 * inline.  XHTML, so that an XML parser accepts it; no script, no URL.
 */
static void
html_render(struct out *o, const struct report_job *j, uint32_t from,
    uint32_t to)
{
	size_t		 i, n[4] = { 0, 0, 0, 0 }, nrep = 0, nmrep = 0;
	uint64_t	 cpus = 0;
	const char	*key;

	for (i = 0; i < j->nworkers; i++)
		cpus += j->workers[i].cpus;
	for (i = 0; i < j->nspans; i++) {
		key = outcome_key(j->spans[i].outcome);
		if (strcmp(key, "done") == 0)
			n[0]++;
		else if (strcmp(key, "lost") == 0)
			n[1]++;
		else if (strcmp(key, "interrupted") == 0)
			n[2]++;
		else
			n[3]++;
		if (j->spans[i].replica)
			nrep++;
	}
	for (i = 0; i < j->nmarks; i++)
		if (j->marks[i].replica)
			nmrep++;

	out_printf(o, "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/"
	    "xhtml\" lang=\"en\" xml:lang=\"en\">\n<head>\n<meta charset=\""
	    "utf-8\"/>\n<title>R3Q job %" PRIu64 "</title>\n<style>\n"
	    "body { font-family: sans-serif; margin: 1.5em; color: #222; }\n"
	    "table { border-collapse: collapse; margin: 0.5em 0 1.5em; }\n"
	    "th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; "
	    "text-align: left; }\n"
	    "th { background: #f4f4f4; }\n"
	    "td.num { text-align: right; }\n"
	    "svg { max-width: 100%%; height: auto; display: block; }\n"
	    "p.key { color: #555; max-width: 60em; }\n"
	    "</style>\n</head>\n<body>\n<h1>R3Q job %" PRIu64 "</h1>\n",
	    j->id, j->id);

	out_printf(o, "<table class=\"summary\">\n<tr><th>job</th><td>%"
	    PRIu64 "</td></tr>\n<tr><th>policy</th><td>", j->id);
	out_xml(o, j->policy, strnlen(j->policy, sizeof(j->policy)));
	out_printf(o, "</td></tr>\n<tr><th>state</th><td>");
	out_xml(o, j->state, strnlen(j->state, sizeof(j->state)));
	out_printf(o, "</td></tr>\n<tr><th>workers</th><td>%zu (%" PRIu64
	    " CPUs)</td></tr>\n<tr><th>emulated delay</th><td>", j->nworkers,
	    cpus);
	if (isfinite(j->delay_ms) && j->delay_ms >= 0)
		out_printf(o, "%.1f ms one way", j->delay_ms);
	else
		out_printf(o, "unknown");
	out_printf(o, "</td></tr>\n<tr><th>total time</th><td>%.3f s</td>"
	    "</tr>\n<tr><th>lower bound</th><td>", (double)j->total_ns / 1e9);
	if (isfinite(j->lower_bound_s) && j->lower_bound_s >= 0)
		out_printf(o, "%.3f s", j->lower_bound_s);
	else
		out_printf(o, "unknown");
	out_printf(o, "</td></tr>\n<tr><th>parallel efficiency (LB/E)</th>"
	    "<td>");
	if (isfinite(j->efficiency) && j->efficiency >= 0)
		out_printf(o, "%.1f %%", 100 * j->efficiency);
	else
		out_printf(o, "unknown");
	out_printf(o, "</td></tr>\n<tr><th>generations</th><td>%zu</td></tr>\n"
	    "<tr><th>task executions</th><td>%zu: %zu done, %zu lost race, "
	    "%zu interrupted, %zu failed; %zu were replicas</td></tr>\n"
	    "<tr><th>withdrawn while queued</th><td>%zu (%zu replicas)</td>"
	    "</tr>\n"
	    "<tr><th>replicas sent</th><td>%" PRIu32 "</td></tr>\n"
	    "<tr><th>terminations</th><td>%" PRIu32 " held, %" PRIu32
	    " running</td></tr>\n</table>\n", j->ngens, j->nspans, n[0], n[1],
	    n[2], n[3], nrep, j->nmarks, nmrep, j->replicas, j->killed_held,
	    j->killed_running);

	out_printf(o, "<h2>Workers</h2>\n<table class=\"workers\">\n<tr>"
	    "<th>#</th><th>name</th><th>CPUs</th><th>speed</th></tr>\n");
	for (i = 0; i < j->nworkers; i++) {
		out_printf(o, "<tr><td class=\"num\">%zu</td><td>", i);
		out_worker(o, j, i);
		out_printf(o, "</td><td class=\"num\">%" PRIu32 "</td>"
		    "<td class=\"num\">", j->workers[i].cpus);
		if (isfinite(j->workers[i].speed))
			out_printf(o, "%.2f", j->workers[i].speed);
		else
			out_printf(o, "unknown");
		out_printf(o, "</td></tr>\n");
	}
	if (j->nworkers == 0)
		out_printf(o, "<tr><td colspan=\"4\">none</td></tr>\n");
	out_printf(o, "</table>\n");

	out_printf(o, "<h2>Task flow per CPU slot</h2>\n<p class=\"key\">One "
	    "lane per worker and CPU slot, one bar per task execution, "
	    "coloured by generation; gaps are idle time.  Hatched bars are "
	    "replicas, pale dashed ones lost the race to another copy, a red "
	    "outline and cross mark an interrupted copy, dark bars failed.  "
	    "Triangles are copies withdrawn before they ran; grey bands are "
	    "the synchronisation wait at the end of each generation.  Hover "
	    "a bar for its details.</p>\n");
	gantt_render(o, j, from, to, 0);
	out_printf(o, "<h2>Convergence</h2>\n");
	conv_render(o, j, 0);
	out_printf(o, "<h2>Time per generation</h2>\n");
	brk_render(o, j, 0);
	out_printf(o, "</body>\n</html>\n");
}

/*
 * Chrome trace events: a process per worker, a thread per CPU slot, a
 * complete event per task execution and an instant event per copy
 * withdrawn while queued.  Times are microseconds, printed exactly.
 */
static void
trace_render(struct out *o, const struct report_job *j)
{
	const struct report_span	*s;
	const struct report_mark	*m;
	const char			*sep = "\n";
	uint64_t			 end;
	uint32_t			 slot;
	size_t				 i, w;

	out_printf(o, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"job\":\"%"
	    PRIu64 "\",\"policy\":\"", j->id);
	out_json(o, j->policy, strnlen(j->policy, sizeof(j->policy)));
	out_printf(o, "\",\"state\":\"");
	out_json(o, j->state, strnlen(j->state, sizeof(j->state)));
	out_printf(o, "\"},\"traceEvents\":[");
	for (w = 0; w < j->nworkers; w++) {
		out_printf(o, "%s{\"name\":\"process_name\",\"ph\":\"M\","
		    "\"pid\":%zu,\"tid\":0,\"args\":{\"name\":\"", sep, w + 1);
		if (worker_len(j, w) > 0)
			out_json(o, j->workers[w].name, worker_len(j, w));
		else
			out_printf(o, "worker %zu", w);
		out_printf(o, "\"}},\n{\"name\":\"process_sort_index\","
		    "\"ph\":\"M\",\"pid\":%zu,\"tid\":0,\"args\":"
		    "{\"sort_index\":%zu}}", w + 1, w);
		sep = ",\n";
		for (slot = 0; slot < j->workers[w].cpus; slot++)
			out_printf(o, ",\n{\"name\":\"thread_name\","
			    "\"ph\":\"M\",\"pid\":%zu,\"tid\":%" PRIu64
			    ",\"args\":{\"name\":\"slot %" PRIu32 "\"}}", w + 1,
			    (uint64_t)slot + 1, slot);
	}
	for (i = 0; i < j->nspans; i++) {
		s = &j->spans[i];
		end = s->end_ns > s->start_ns ? s->end_ns : s->start_ns;
		out_printf(o, "%s{\"name\":\"task %" PRIu64 "\",\"cat\":\"%s\","
		    "\"ph\":\"X\",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64
		    ",\"ts\":", sep, s->task, outcome_key(s->outcome),
		    (uint64_t)s->worker + 1, (uint64_t)s->slot + 1);
		out_us(o, s->start_ns);
		out_printf(o, ",\"dur\":");
		out_us(o, end - s->start_ns);
		out_printf(o, ",\"args\":{\"gen\":%" PRIu32 ",\"task\":%" PRIu64
		    ",\"replica\":%d,\"outcome\":\"%s\"%s}}", s->gen, s->task,
		    s->replica ? 1 : 0, outcome_key(s->outcome),
		    s->moved ? ",\"moved\":1" : "");
		sep = ",\n";
	}
	for (i = 0; i < j->nmarks; i++) {
		m = &j->marks[i];
		out_printf(o, "%s{\"name\":\"withdrawn task %" PRIu64 "\","
		    "\"cat\":\"withdrawn\",\"ph\":\"i\",\"s\":\"t\",\"pid\":%"
		    PRIu64 ",\"tid\":1,\"ts\":", sep, m->task,
		    (uint64_t)m->worker + 1);
		out_us(o, m->t_ns);
		out_printf(o, ",\"args\":{\"gen\":%" PRIu32 ",\"task\":%" PRIu64
		    "}}", m->gen, m->task);
		sep = ",\n";
	}
	out_printf(o, "\n]}\n");
}

/* The task flow per CPU slot of generations from..to, as an SVG file. */
int
report_svg_gantt(FILE *f, const struct report_job *j, uint32_t gen_from,
    uint32_t gen_to)
{
	struct out	 o;

	if (f == NULL || j == NULL) {
		errno = EINVAL;
		return (-1);
	}
	if (out_begin(&o, f) == -1)
		return (-1);
	gantt_render(&o, j, gen_from, gen_to, 1);
	return (out_end(&o));
}

/* Best fitness per generation, as an SVG file. */
int
report_svg_convergence(FILE *f, const struct report_job *j)
{
	struct out	 o;

	if (f == NULL || j == NULL) {
		errno = EINVAL;
		return (-1);
	}
	if (out_begin(&o, f) == -1)
		return (-1);
	conv_render(&o, j, 1);
	return (out_end(&o));
}

/* Computation, communication and synchronisation per generation, as SVG. */
int
report_svg_breakdown(FILE *f, const struct report_job *j)
{
	struct out	 o;

	if (f == NULL || j == NULL) {
		errno = EINVAL;
		return (-1);
	}
	if (out_begin(&o, f) == -1)
		return (-1);
	brk_render(&o, j, 1);
	return (out_end(&o));
}

/* The self-contained report page. */
int
report_html(FILE *f, const struct report_job *j, uint32_t gen_from,
    uint32_t gen_to)
{
	struct out	 o;

	if (f == NULL || j == NULL) {
		errno = EINVAL;
		return (-1);
	}
	if (out_begin(&o, f) == -1)
		return (-1);
	html_render(&o, j, gen_from, gen_to);
	return (out_end(&o));
}

/* The job as a Chrome trace-event file (chrome://tracing, Perfetto). */
int
report_trace_json(FILE *f, const struct report_job *j)
{
	struct out	 o;

	if (f == NULL || j == NULL) {
		errno = EINVAL;
		return (-1);
	}
	if (out_begin(&o, f) == -1)
		return (-1);
	trace_render(&o, j);
	return (out_end(&o));
}

/* A grouped bar chart, as an SVG file. */
int
report_svg_bars(FILE *f, const struct report_bars *b)
{
	struct out	 o;

	if (f == NULL || b == NULL || (b->ngroups > 0 && b->nseries > 0 &&
	    (b->groups == NULL || b->series == NULL || b->values == NULL))) {
		errno = EINVAL;
		return (-1);
	}
	if (out_begin(&o, f) == -1)
		return (-1);
	bars_render(&o, b);
	return (out_end(&o));
}

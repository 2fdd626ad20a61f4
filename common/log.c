#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>
#include <time.h>

#include "log.h"
#include "util.h"

static int	 log_debug_mode;	/* 1: stderr with time stamps */
static int	 log_journal;		/* 1: stderr with <N> prefixes */
static int	 log_verbose;
static const char *log_procname = "r3q";
int		 log_tracing;		/* TRACE_* bits */

static const struct {
	const char	*name;
	int		 bit;
} log_trace_subsys[] = {
	{ "sched",	TRACE_SCHED },
	{ "journal",	TRACE_JOURNAL },
	{ "net",	TRACE_NET },
};
#define NSUBSYS	(sizeof(log_trace_subsys) / sizeof(log_trace_subsys[0]))

/* Choose where log lines go; called once at start-up. */
void
log_init(const char *name, int n_debug, int facility)
{
	log_procname = name;
	log_debug_mode = n_debug;
	log_journal = !n_debug && getenv("JOURNAL_STREAM") != NULL;
	if (!log_debug_mode && !log_journal)
		openlog(name, LOG_PID | LOG_NDELAY, facility);
	tzset();
}

void
log_setverbose(int v)
{
	log_verbose = v;
}

int
log_getverbose(void)
{
	return (log_verbose);
}

/* Write one line at a priority. */
void
vlog(int pri, const char *fmt, va_list ap)
{
	char		 raw[2048], buf[2048];
	struct timespec	 ts;
	struct tm	 tm;

	/* Whatever a peer put in the text stays on this one line. */
	vsnprintf(raw, sizeof(raw), fmt, ap);
	str_vis(buf, sizeof(buf), raw);
	if (log_journal) {
		fprintf(stderr, "<%d>%s\n", pri, buf);
		fflush(stderr);
	} else if (log_debug_mode) {
		clock_gettime(CLOCK_REALTIME, &ts);
		localtime_r(&ts.tv_sec, &tm);
		fprintf(stderr, "%02d:%02d:%02d.%03ld %s: %s\n", tm.tm_hour,
		    tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000, log_procname,
		    buf);
		fflush(stderr);
	} else
		syslog(pri, "%s", buf);
}

void
logit(int pri, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(pri, fmt, ap);
	va_end(ap);
}

/* Log with the text of errno appended. */
static void
vlog_errno(int pri, const char *fmt, va_list ap)
{
	char	 buf[1024];
	int	 saved = errno;

	if (fmt == NULL)
		logit(pri, "%s", strerror(saved));
	else {
		vsnprintf(buf, sizeof(buf), fmt, ap);
		logit(pri, "%s: %s", buf, strerror(saved));
	}
	errno = saved;
}

void
log_warn(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog_errno(LOG_WARNING, fmt, ap);
	va_end(ap);
}

void
log_warnx(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(LOG_WARNING, fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(LOG_INFO, fmt, ap);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list	 ap;

	if (log_verbose < 1)
		return;
	va_start(ap, fmt);
	vlog(LOG_DEBUG, fmt, ap);
	va_end(ap);
}

/* One trace line of subsystem m (a single TRACE_* bit). */
void
log_trace0(int m, const char *fmt, ...)
{
	char		 buf[1536];
	const char	*name = "?";
	struct timespec	 ts;
	size_t		 i;
	va_list		 ap;

	for (i = 0; i < NSUBSYS; i++)
		if (log_trace_subsys[i].bit & m)
			name = log_trace_subsys[i].name;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	logit(LOG_INFO, "trace %s %lld.%06ld %s", name, (long long)ts.tv_sec,
	    ts.tv_nsec / 1000, buf);
}

/*
 * "sched,journal,net", "all" or "none" into TRACE_* bits; -1 and a
 * message naming the word that is none of them.
 */
int
log_trace_parse(const char *list, int *bits, char *err, size_t errlen)
{
	char		 w[32];
	const char	*p = list, *e;
	size_t		 i, n;
	int		 b = 0;

	while (*p != '\0') {
		e = p + strcspn(p, ", ");
		n = (size_t)(e - p);
		if (n == 0) {
			p++;
			continue;
		}
		if (n >= sizeof(w))
			n = sizeof(w) - 1;
		memcpy(w, p, n);
		w[n] = '\0';
		if (strcasecmp(w, "all") == 0)
			b |= TRACE_ALL;
		else if (strcasecmp(w, "none") != 0) {
			for (i = 0; i < NSUBSYS; i++)
				if (strcasecmp(w, log_trace_subsys[i].name) == 0)
					break;
			if (i == NSUBSYS) {
				snprintf(err, errlen, "trace: unknown subsystem "
				    "'%s' (sched, journal, net, all or none)",
				    w);
				return (-1);
			}
			b |= log_trace_subsys[i].bit;
		}
		p = e;
	}
	*bits = b;
	return (0);
}

/* The bits as a list that log_trace_parse() reads back: "none" if 0. */
const char *
log_trace_names(int bits, char *buf, size_t len)
{
	size_t	 i, n = 0;
	int	 r;

	if (len == 0)
		return (buf);
	buf[0] = '\0';
	for (i = 0; i < NSUBSYS; i++) {
		if (!(bits & log_trace_subsys[i].bit))
			continue;
		r = snprintf(buf + n, len - n, "%s%s", n > 0 ? "," : "",
		    log_trace_subsys[i].name);
		if (r < 0 || (size_t)r >= len - n) {
			buf[n] = '\0';	/* whole names only */
			break;
		}
		n += (size_t)r;
	}
	if (n == 0)
		snprintf(buf, len, "none");
	return (buf);
}

void
fatal(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog_errno(LOG_CRIT, fmt, ap);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(LOG_CRIT, fmt, ap);
	va_end(ap);
	exit(1);
}

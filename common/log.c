#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "log.h"
#include "util.h"

static int	 log_debug_mode;	/* 1: stderr with time stamps */
static int	 log_journal;		/* 1: stderr with <N> prefixes */
static int	 log_verbose;
static const char *log_procname = "r3q";

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

/*
 * Logging in the shape of OpenBSD's log.c: log_warn adds strerror(errno),
 * log_warnx does not; fatal exits.  In the foreground (-d) lines go to
 * stderr; under systemd (JOURNAL_STREAM set) they go to stderr with a
 * "<N>" priority prefix and no time stamp; otherwise to syslog.
 */
#ifndef R3Q_LOG_H
#define R3Q_LOG_H

#include <stdarg.h>

void	log_init(const char *, int, int);
void	log_setverbose(int);
int	log_getverbose(void);
void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void	logit(int, const char *, ...) __attribute__((format(printf, 2, 3)));
void	vlog(int, const char *, va_list) __attribute__((format(printf, 2, 0)));
void	fatal(const char *, ...) __attribute__((noreturn, format(printf, 1, 2)));
void	fatalx(const char *, ...) __attribute__((noreturn, format(printf, 1, 2)));

/*
 * Tracing, as OpenSMTPD's log_trace(TRACE_SCHEDULER, ...): lines of the
 * subsystems in log_tracing go out at LOG_INFO, prefixed "trace NAME"
 * and a monotonic time in microseconds.  Off, a trace point costs one
 * test of a global; its arguments are not even evaluated.
 */
#define TRACE_SCHED	0x01	/* every decision drained from the core */
#define TRACE_JOURNAL	0x02	/* every commit, with its writes and time */
#define TRACE_NET	0x04	/* every frame in and out */
#define TRACE_ALL	(TRACE_SCHED | TRACE_JOURNAL | TRACE_NET)

extern int	log_tracing;

#ifdef R3Q_NO_TRACE	/* bench/trace's baseline: no trace point at all */
#define log_trace(m, ...)	do { } while (0)
#else
#define log_trace(m, ...)	do {					\
	if (__builtin_expect((log_tracing & (m)) != 0, 0))		\
		log_trace0((m), __VA_ARGS__);				\
} while (0)
#endif

void	log_trace0(int, const char *, ...) __attribute__((format(printf, 2, 3)));
int	log_trace_parse(const char *, int *, char *, size_t);
const char *log_trace_names(int, char *, size_t);

#endif /* R3Q_LOG_H */

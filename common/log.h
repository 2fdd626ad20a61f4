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

#endif /* R3Q_LOG_H */

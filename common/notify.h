/*
 * systemd notifications (sd_notify): READY=1 once a daemon serves, STATUS=
 * lines saying what it is doing, and WATCHDOG=1 from the event loop when
 * the unit sets WatchdogSec.  Without NOTIFY_SOCKET they do nothing.
 */
#ifndef R3Q_NOTIFY_H
#define R3Q_NOTIFY_H

#include <stdint.h>

struct event_base;

void	notify_ready(void);
void	notify_status(const char *, ...) __attribute__((format(printf, 1, 2)));
void	notify_reloading(void);
void	notify_stopping(void);
void	notify_extend_timeout(uint64_t);
int	notify_watchdog_start(struct event_base *);
void	notify_watchdog_stop(void);

#endif /* R3Q_NOTIFY_H */

#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <event2/event.h>
#include <systemd/sd-daemon.h>

#include "log.h"
#include "notify.h"

static struct event	*watchdog_ev;
static char		 last_status[256];

/* The daemon serves: systemd may start what depends on it. */
void
notify_ready(void)
{
	sd_notify(0, "READY=1");
}

/* A reload begins; notify_ready() says it ended. */
void
notify_reloading(void)
{
	sd_notify(0, "RELOADING=1");
}

void
notify_stopping(void)
{
	sd_notify(0, "STOPPING=1");
}

/*
 * Ask systemd (236 and later) to wait ms more before it kills the daemon
 * for a timeout of its current state (TimeoutStopSec= while it stops):
 * a drain says how long it may still need.  Without systemd, or with an
 * older one, nothing happens.
 */
void
notify_extend_timeout(uint64_t ms)
{
	sd_notifyf(0, "EXTEND_TIMEOUT_USEC=%llu",
	    (unsigned long long)ms * 1000ULL);
}

/* Say what the daemon is doing; repeated identical lines are not sent. */
void
notify_status(const char *fmt, ...)
{
	char	 buf[256];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (strcmp(buf, last_status) == 0)
		return;
	strcpy(last_status, buf);
	sd_notifyf(0, "STATUS=%s", buf);
}

/* Ping the watchdog; running from the loop, it proves the loop runs. */
static void
notify_watchdog(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	sd_notify(0, "WATCHDOG=1");
}

/*
 * If the unit sets WatchdogSec, ping at half the interval from the event
 * loop.  Returns 1 if the watchdog is on.
 */
int
notify_watchdog_start(struct event_base *base)
{
	struct timeval	 tv;
	uint64_t	 usec;

	if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0)
		return (0);
	usec /= 2;
	tv.tv_sec = usec / 1000000;
	tv.tv_usec = usec % 1000000;
	watchdog_ev = event_new(base, -1, EV_PERSIST, notify_watchdog, NULL);
	if (watchdog_ev == NULL || event_add(watchdog_ev, &tv) == -1) {
		log_warnx("cannot start the watchdog timer");
		return (0);
	}
	sd_notify(0, "WATCHDOG=1");
	log_debug("watchdog: pinging every %llu ms",
	    (unsigned long long)(usec / 1000));
	return (1);
}

void
notify_watchdog_stop(void)
{
	if (watchdog_ev != NULL)
		event_free(watchdog_ev);
	watchdog_ev = NULL;
}

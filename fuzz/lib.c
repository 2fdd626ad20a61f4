/*
 * libr3q's handling of the master's replies (lib/conn.c, lib/job.c,
 * lib/future.c): a program connects to a "master" on a UNIX socket (this
 * file, the other end), opens a job (the answer, JobOpened for job 7, is
 * written before it is asked for), submits four echo tasks (keys 1 to 4)
 * and flushes them; the input is what the master sends next, read and
 * dispatched by r3q_process() as it arrives.  Then the master hangs up
 * and the program closes everything.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frame.h"
#include "fuzz.h"
#include "r3q.h"

#define FZ_JOB		7
#define FZ_NFUT		4

static char	 sockdir[256], sockpath[300];
static int	 lfd = -1;

static void
lib_cleanup(void)
{
	if (lfd != -1)
		close(lfd);
	lfd = -1;
	unlink(sockpath);
	rmdir(sockdir);
}

/* The master's listening socket, made anew for each input. */
static void
lib_listen(void)
{
	struct sockaddr_un	 sun;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(sockpath) >= sizeof(sun.sun_path))
		abort();
	memcpy(sun.sun_path, sockpath, strlen(sockpath) + 1);
	unlink(sockpath);
	if ((lfd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
	    bind(lfd, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    listen(lfd, 4) == -1)
		abort();
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char		*t;

	(void)argc;
	(void)argv;
	if ((t = getenv("TMPDIR")) == NULL || *t == '\0')
		t = "/tmp";
	fz_evmem_init();		/* before r3q_connect's first evbuffer */
	snprintf(sockdir, sizeof(sockdir), "%s/fuzz.r3q.XXXXXX", t);
	if (mkdtemp(sockdir) == NULL)
		abort();
	snprintf(sockpath, sizeof(sockpath), "%s/master.sock", sockdir);
	atexit(lib_cleanup);
	return (0);
}

/* Read and forget what the program sent the master. */
static void
drain(int fd)
{
	char	 buf[65536];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

/* The answer to the program's OpenJob, request 1. */
static void
send_opened(int fd)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__JobOpened	 jo = R3Q__JOB_OPENED__INIT;
	uint8_t		*buf;
	size_t		 len;
	char		 state[] = "running";

	jo.job = FZ_JOB;
	jo.max_payload = 1 << 20;
	jo.state = state;
	env.id = 1;
	env.body_case = R3Q__ENVELOPE__BODY_JOB_OPENED;
	env.job_opened = &jo;
	if ((buf = frame_pack(&env, &len)) == NULL ||
	    write(fd, buf, len) != (ssize_t)len)
		abort();
	free(buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct r3q_options	 o;
	struct r3q		*r;
	struct r3q_job		*j;
	struct r3q_future	*f[FZ_NFUT];
	const void		*out;
	size_t			 off = 0, len, i;
	ssize_t			 n;
	char			 err[256], pl[16];
	int			 sfd, k;

	memset(&o, 0, sizeof(o));
	o.control = sockpath;
	o.reconnect_ms = 1;		/* then give up: no master */
	lib_listen();
	if ((r = r3q_connect(&o, err, sizeof(err))) == NULL)
		abort();
	if ((sfd = accept(lfd, NULL, NULL)) == -1)
		abort();
	send_opened(sfd);
	if ((j = r3q_job_open(r, NULL)) == NULL)
		abort();
	for (i = 0; i < FZ_NFUT; i++) {
		snprintf(pl, sizeof(pl), "task %zu", i + 1);
		f[i] = r3q_submit(j, "echo", pl, strlen(pl));
	}
	r3q_flush(j);
	fcntl(sfd, F_SETFL, O_NONBLOCK);
	drain(sfd);

	/* the input, as fast as the program takes it */
	for (k = 0; off < size && k < 100000; k++) {
		if ((n = write(sfd, data + off, size - off)) > 0)
			off += (size_t)n;
		else if (n == -1 && errno != EAGAIN)
			break;
		if (r3q_process(r) != R3Q_OK)
			break;
		drain(sfd);
	}
	for (k = 0; k < 4; k++) {
		r3q_process(r);
		drain(sfd);
	}
	for (i = 0; i < FZ_NFUT; i++) {
		if (f[i] == NULL)
			continue;
		if (r3q_future_done(f[i]))
			(void)r3q_future_result(f[i], &out, &len);
		(void)r3q_future_error(f[i]);
	}
	/* the master hangs up for good; the program closes */
	close(lfd);
	lfd = -1;
	unlink(sockpath);
	close(sfd);
	r3q_process(r);
	for (i = 0; i < FZ_NFUT; i++)
		r3q_future_free(f[i]);
	r3q_job_cancel(j);
	r3q_close(r);
	return (0);
}

/* Small helpers of the fuzz targets: inputs that must be files. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"

static char	 tmpdir[256];
static char	 tmppath[300];

/* Remove the file and its directory at exit. */
void
fz_tmpfile_done(void)
{
	char	 p[320];

	if (tmpdir[0] == '\0')
		return;
	unlink(tmppath);
	/* SQLite's companions, if the input was a journal */
	snprintf(p, sizeof(p), "%s-wal", tmppath);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", tmppath);
	unlink(p);
	snprintf(p, sizeof(p), "%s-journal", tmppath);
	unlink(p);
	rmdir(tmpdir);
	tmpdir[0] = '\0';
}

/*
 * Write the input to a file of this process's own directory (under
 * TMPDIR, else /dev/shm if it is there, else /tmp), replacing what the
 * last input left, and return its path.  /dev/shm first: the journal
 * target opens each input with SQLite, whose WAL and checkpoints fsync:
 * 300 inputs from its seeds took 83 and 97 s under /tmp (a disk), 60 and
 * 27 s under /dev/shm, on a machine loaded to 15 (-seed=1 -runs=300).
 */
char *
fz_tmpfile(const void *data, size_t len)
{
	const char	*t;
	char		 p[320];
	int		 fd;

	if (tmpdir[0] == '\0') {
		if ((t = getenv("TMPDIR")) == NULL || *t == '\0')
			t = access("/dev/shm", W_OK | X_OK) == 0 ?
			    "/dev/shm" : "/tmp";
		snprintf(tmpdir, sizeof(tmpdir), "%s/fuzz.r3q.XXXXXX", t);
		if (mkdtemp(tmpdir) == NULL) {
			fprintf(stderr, "mkdtemp %s: %s\n", tmpdir,
			    strerror(errno));
			abort();
		}
		snprintf(tmppath, sizeof(tmppath), "%s/input", tmpdir);
		atexit(fz_tmpfile_done);
	}
	snprintf(p, sizeof(p), "%s-wal", tmppath);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", tmppath);
	unlink(p);
	snprintf(p, sizeof(p), "%s-journal", tmppath);
	unlink(p);
	unlink(tmppath);
	if ((fd = open(tmppath, O_WRONLY | O_CREAT | O_TRUNC, 0600)) == -1 ||
	    (len > 0 && write(fd, data, len) != (ssize_t)len) ||
	    close(fd) == -1) {
		fprintf(stderr, "%s: %s\n", tmppath, strerror(errno));
		abort();
	}
	return (tmppath);
}

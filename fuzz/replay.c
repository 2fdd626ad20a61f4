/*
 * The driver of a fuzz target without libFuzzer (a build with gcc, or
 * without --enable-fuzz): runs LLVMFuzzerTestOneInput once on each file
 * named, or on each file of each directory named, and says how many it
 * ran.  A crash is a crash, as under libFuzzer; make check replays the
 * corpus and the regress inputs this way (tests/regress/fuzz-replay.sh).
 */
#include "config.h"

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

static size_t	 nrun;

/* Run the target on one file. */
static int
replay_file(const char *path)
{
	FILE	*f;
	uint8_t	*buf = NULL;
	size_t	 len = 0, cap = 0, n;

	if ((f = fopen(path, "rb")) == NULL) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return (-1);
	}
	for (;;) {
		if (cap - len < 65536) {
			cap = cap ? cap * 2 : 65536;
			if ((buf = realloc(buf, cap)) == NULL) {
				fprintf(stderr, "replay: out of memory\n");
				exit(1);
			}
		}
		if ((n = fread(buf + len, 1, cap - len, f)) == 0)
			break;
		len += n;
	}
	if (ferror(f)) {
		fprintf(stderr, "replay: %s: read error\n", path);
		fclose(f);
		free(buf);
		return (-1);
	}
	fclose(f);
	fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
	/* An exact-size copy, so an overread is caught as under libFuzzer. */
	buf = realloc(buf, len ? len : 1);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	nrun++;
	return (0);
}

static int
name_cmp(const void *a, const void *b)
{
	return (strcmp(*(char *const *)a, *(char *const *)b));
}

/* Run the target on every file of a directory, in name order. */
static int
replay_dir(const char *dir)
{
	struct dirent	*de;
	DIR		*d;
	char		**names = NULL, path[4096];
	size_t		 n = 0, i;
	int		 rc = 0;

	if ((d = opendir(dir)) == NULL) {
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
		return (-1);
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if ((names = realloc(names, (n + 1) * sizeof(*names))) == NULL ||
		    (names[n] = strdup(de->d_name)) == NULL) {
			fprintf(stderr, "replay: out of memory\n");
			exit(1);
		}
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), name_cmp);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (replay_file(path) == -1)
			rc = -1;
		free(names[i]);
	}
	free(names);
	return (rc);
}

int
main(int argc, char *argv[])
{
	struct stat	 st;
	int		 i, rc = 0;

	LLVMFuzzerInitialize(&argc, &argv);
	for (i = 1; i < argc; i++) {
		if (argv[i][0] == '-')		/* libFuzzer's flags */
			continue;
		if (stat(argv[i], &st) == -1) {
			fprintf(stderr, "replay: %s: %s\n", argv[i],
			    strerror(errno));
			rc = 1;
		} else if (S_ISDIR(st.st_mode)) {
			if (replay_dir(argv[i]) == -1)
				rc = 1;
		} else if (replay_file(argv[i]) == -1)
			rc = 1;
	}
	fprintf(stderr, "replay: %zu inputs run\n", nrun);
	return (rc);
}

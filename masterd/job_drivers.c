/*
 * The table of job drivers: every kind of job masterd runs is one row.
 * The journal finds a job's driver here by name, the control side a
 * submission's by its request, and the batch driver's session hooks are
 * reached through it.  Adding a driver: doc/hacking.md, "Adding a job
 * driver".
 */
#include "config.h"

#include <string.h>

#include "masterd.h"

/*
 * The drivers, one row each: its declaration and its entry.  A unit test
 * that includes this file may add its own after them (JOB_DRIVERS_TEST,
 * tests/unit/test_driver.c).
 */
extern const struct job_driver job_es_driver;		/* job_es.c */
extern const struct job_driver job_batch_driver;	/* job_batch.c */
extern const struct job_driver job_bnb_driver;		/* job_bnb.c */
extern const struct job_driver job_island_driver;	/* job_island.c */

static const struct job_driver *const job_drivers[] = {
	&job_es_driver,
	&job_batch_driver,
	&job_bnb_driver,
	&job_island_driver,
#ifdef JOB_DRIVERS_TEST
	JOB_DRIVERS_TEST
#endif
};
#define NDRIVERS	(sizeof(job_drivers) / sizeof(job_drivers[0]))

/* The driver named name (a journal row's); NULL if this masterd has none. */
const struct job_driver *
job_driver_find(const char *name)
{
	size_t	 i;

	for (i = 0; i < NDRIVERS; i++)
		if (strcmp(job_drivers[i]->d_name, name) == 0)
			return (job_drivers[i]);
	return (NULL);
}

/* The driver whose submission is Envelope body body; NULL if none. */
const struct job_driver *
job_driver_submits(int body)
{
	size_t	 i;

	for (i = 0; i < NDRIVERS && body != 0; i++)
		if (job_drivers[i]->d_body == body &&
		    job_drivers[i]->d_submit != NULL)
			return (job_drivers[i]);
	return (NULL);
}

/* The driver after d in the table (NULL: the first); NULL after the last. */
const struct job_driver *
job_driver_next(const struct job_driver *d)
{
	size_t	 i;

	if (d == NULL)
		return (job_drivers[0]);
	for (i = 0; i + 1 < NDRIVERS; i++)
		if (job_drivers[i] == d)
			return (job_drivers[i + 1]);
	return (NULL);
}

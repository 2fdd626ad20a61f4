/*
 * How a task ended, and the name logs and the protocol print for it.
 * Apart from the task kinds (task.h) so that a program that only reads
 * results, masterd, links none of the kinds' libraries (LAPACKE, the
 * BLAS).  The numbers travel in Result.status: bump the protocol if any
 * of them changes.
 */
#ifndef R3Q_TASK_STATUS_H
#define R3Q_TASK_STATUS_H

enum task_status {
	TASK_OK = 0,
	TASK_FAILED,		/* the kind ran and failed */
	TASK_CANCELLED,		/* ctx->cancel was raised */
	TASK_UNKNOWN_KIND,	/* no such kind in this build */
	TASK_BAD_PARAMS,	/* the payload does not decode or is out
				   of range */
	TASK_UNAVAILABLE	/* the kind cannot run on this worker (a
				   persistent process said 'U'): workerd
				   withdraws it until a reload */
};

const char	*task_status_name(int);

#endif /* R3Q_TASK_STATUS_H */

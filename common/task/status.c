/*
 * The names of the task statuses (status.h): pure, in libr3qcore.a, so
 * that masterd names a result's status without the task kinds.
 */
#include "task/status.h"

/* The name of a status, as logs and the protocol print it. */
const char *
task_status_name(int status)
{
	switch (status) {
	case TASK_OK:
		return ("ok");
	case TASK_FAILED:
		return ("failed");
	case TASK_CANCELLED:
		return ("cancelled");
	case TASK_UNKNOWN_KIND:
		return ("unknown-kind");
	case TASK_BAD_PARAMS:
		return ("bad-params");
	case TASK_UNAVAILABLE:
		return ("unavailable");
	}
	return ("invalid");
}

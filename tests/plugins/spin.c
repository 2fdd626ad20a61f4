/*
 * Test plugin whose tasks never end unless cancelled: it reports half-way
 * at once, then polls cancelled() every 100 microseconds.
 */
#include <time.h>

#include <r3q-plugin.h>

const unsigned	 r3q_plugin_abi = R3Q_PLUGIN_ABI;

/* Nothing to set up. */
int
r3q_plugin_init(const char *kind, unsigned nslots, void **state, char *err,
    size_t errlen)
{
	(void)kind;
	(void)nslots;
	(void)err;
	(void)errlen;
	*state = NULL;
	return (0);
}

/* Wait for cancelled(). */
int
r3q_plugin_run(const struct r3q_plugin_task *t)
{
	struct timespec	 ts = { 0, 100000 };

	t->halfway(t);
	while (!t->cancelled(t))
		nanosleep(&ts, NULL);
	return (R3Q_PLUGIN_CANCELLED);
}

/* Nothing to free. */
void
r3q_plugin_fini(void *state)
{
	(void)state;
}

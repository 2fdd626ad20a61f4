/*
 * Test plugin that asks for an output of 1 MiB and fills it with 'x', or
 * fails when output() gives none.
 */
#include <string.h>

#include <r3q-plugin.h>

#define BIGOUT_LEN	(1 << 20)

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

/* Ask for 1 MiB. */
int
r3q_plugin_run(const struct r3q_plugin_task *t)
{
	void	*out;

	if ((out = t->output(t, BIGOUT_LEN)) == NULL) {
		t->error(t, "no room for %d bytes", BIGOUT_LEN);
		return (R3Q_PLUGIN_FAILED);
	}
	memset(out, 'x', BIGOUT_LEN);
	return (R3Q_PLUGIN_OK);
}

/* Nothing to free. */
void
r3q_plugin_fini(void *state)
{
	(void)state;
}

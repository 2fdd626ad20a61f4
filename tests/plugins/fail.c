/*
 * Test plugin whose tasks fail: with a message naming the payload's length,
 * or, for an empty payload, without one.
 */
#include <stddef.h>

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

/* Fail, saying why unless the payload is empty. */
int
r3q_plugin_run(const struct r3q_plugin_task *t)
{
	if (t->payload_len > 0)
		t->error(t, "bad individual: %zu bytes", t->payload_len);
	return (R3Q_PLUGIN_FAILED);
}

/* Nothing to free. */
void
r3q_plugin_fini(void *state)
{
	(void)state;
}

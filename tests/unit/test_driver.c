/*
 * A job driver as small as one can be, and the proof that a driver is
 * its own code and one row of the table (doc/hacking.md, "Adding a job
 * driver"): nothing else in masterd names it.  A "count" job runs n
 * tasks of one kind with one payload, in one batch, and reports how many
 * succeeded as its batch's best.
 *
 * It is a test's driver, not masterd's: a real one is submitted with its
 * own message, which is a line in proto/r3q.proto and one in
 * masterd/limits.c's table besides.  This one borrows SubmitTasks as its
 * request (the kind, the first task's payload, n_tasks tasks), and its
 * row goes after the table's own (JOB_DRIVERS_TEST) in this test's copy
 * of masterd/job_drivers.c.  The test submits it through control_dispatch()
 * as r3qctl would, lets an echo worker of fuzz/master.c run the tasks,
 * and checks what the job says.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <cmocka.h>

#include "log.h"
#include "master.h"
#include "util.h"

extern const struct job_driver count_driver;

#define JOB_DRIVERS_TEST	&count_driver,
#include "job_drivers.c"

/* A count job's state (j_ds). */
struct count_job {
	char		 c_kind[KIND_NAME_MAX + 1];
	uint8_t		*c_payload;
	size_t		 c_len;
	uint32_t	 c_n;
	uint64_t	 c_ok;		/* tasks that succeeded */
};
#define CJ(j)	((struct count_job *)(j)->j_ds)

/* The tasks of its one batch, for admission. */
static uint64_t
count_first(const Envelope *env)
{
	return (env->submit_tasks->n_tasks);
}

/* Check the request and start the job: one batch of c_n tasks. */
static struct job *
count_submit(const Envelope *env, const char *owner, char *err,
    size_t errlen)
{
	const R3q__SubmitTasks	*st = env->submit_tasks;
	struct job_sched	 js;
	struct job_batch	*b;
	struct sched_task	*t;
	struct count_job	*cj;
	struct job		*j;
	uint64_t		 first;
	uint32_t		 i;

	(void)owner;
	if (st->n_tasks == 0 || kind_check(st->kind) == -1) {
		snprintf(err, errlen, "count: a kind and one task at least");
		return (NULL);
	}
	job_sched_default(&js);
	j = job_new(&count_driver, &js);
	j->j_ds = cj = xcalloc(1, sizeof(*cj));
	snprintf(cj->c_kind, sizeof(cj->c_kind), "%s", st->kind);
	cj->c_n = (uint32_t)st->n_tasks;
	cj->c_len = st->tasks[0]->payload.len;
	cj->c_payload = xcalloc(1, cj->c_len + 1);
	memcpy(cj->c_payload, st->tasks[0]->payload.data, cj->c_len);
	b = job_batch_open(j, kind_intern(cj->c_kind), 0);
	first = job_batch_reserve(b, 0, cj->c_n);
	t = xcalloc(cj->c_n, sizeof(*t));
	for (i = 0; i < cj->c_n; i++)
		t[i].id = first + i;
	job_batch_submit(b, t, cj->c_n);
	job_batch_close(b);
	free(t);
	return (j);
}

/* Every task has the one payload. */
static void
count_task(struct job *j, struct job_batch *b, size_t idx, R3q__Task *t)
{
	(void)b;
	(void)idx;
	t->payload.data = CJ(j)->c_payload;
	t->payload.len = CJ(j)->c_len;
}

/* A task ended: count it if it succeeded. */
static void
count_result(struct job *j, struct job_batch *b, size_t idx, uint64_t seq,
    uint32_t st, const void *out, size_t len, const char *why)
{
	(void)b;
	(void)idx;
	(void)seq;
	(void)out;
	(void)len;
	(void)why;
	if (st == OUTCOME_OK)
		CJ(j)->c_ok++;
}

/* The batch is over: its best is how many succeeded. */
static void
count_batch_done(struct job *j, struct job_batch *b, struct gen_report *g)
{
	(void)b;
	g->g_best = (double)CJ(j)->c_ok;
}

/* ... and the job is done. */
static void
count_next(struct job *j, struct job_batch *b)
{
	(void)b;
	job_end(j, JOB_DONE);
}

static void
count_info(const struct job *j, R3q__JobInfo *info, int full)
{
	(void)full;
	info->tasks_submitted = CJ(j)->c_n;
}

/* Nothing to journal: a count job does not resume. */
static uint8_t *
count_params(const struct job *j, size_t *len)
{
	(void)j;
	*len = 0;
	return (xcalloc(1, 1));
}

static int
count_load(struct job *j, const struct journal_job *row,
    const R3q__JobState *st, char *err, size_t errlen)
{
	(void)j;
	(void)row;
	(void)st;
	snprintf(err, errlen, "a count job does not resume");
	return (-1);
}

static void
count_free(struct job *j)
{
	if (CJ(j) == NULL)
		return;
	free(CJ(j)->c_payload);
	free(CJ(j));
	j->j_ds = NULL;
}

const struct job_driver count_driver = {
	.d_name = "count",
	.d_body = R3Q__ENVELOPE__BODY_SUBMIT_TASKS,
	.d_first = count_first,
	.d_submit = count_submit,
	.d_task = count_task,
	.d_result = count_result,
	.d_batch_done = count_batch_done,
	.d_next = count_next,
	.d_info = count_info,
	.d_params = count_params,
	.d_load = count_load,
	.d_free = count_free,
};

/* Submit a count job of n echo tasks as a client; its JobInfo's id. */
static uint64_t
count_submit_as(struct fz_peer *p, uint32_t n)
{
	Envelope	 env = R3Q__ENVELOPE__INIT, *in;
	R3q__SubmitTasks st = R3Q__SUBMIT_TASKS__INIT;
	R3q__TaskSpec	 ts = R3Q__TASK_SPEC__INIT, **tsp;
	uint64_t	 job = 0;
	uint32_t	 i;
	char		 kind[] = "echo", payload[] = "counted";

	ts.payload.data = (uint8_t *)payload;
	ts.payload.len = strlen(payload);
	tsp = xcalloc(n, sizeof(*tsp));
	for (i = 0; i < n; i++)
		tsp[i] = &ts;
	st.kind = kind;
	st.n_tasks = n;
	st.tasks = tsp;
	env.id = 7;
	env.body_case = R3Q__ENVELOPE__BODY_SUBMIT_TASKS;
	env.submit_tasks = &st;
	fz_send(p, &env);
	fz_run();
	free(tsp);
	while (fz_recv(p, &in) == 1) {
		if (in->body_case == R3Q__ENVELOPE__BODY_JOB_INFO) {
			assert_int_equal(in->id, 7);
			assert_string_equal(in->job_info->driver, "count");
			assert_string_equal(in->job_info->state, "running");
			job = in->job_info->id;
		}
		frame_free(in);
	}
	return (job);
}

/* The row is found by name, and the job runs through the table alone. */
static void
test_count(void **state)
{
	struct fz_peer	 ctl, w;
	struct job	*j;
	R3q__JobInfo	 info;
	uint64_t	 id;
	int		 i;

	(void)state;
	fz_master_init(NULL);
	assert_ptr_equal(job_driver_find("count"), &count_driver);
	assert_ptr_equal(job_driver_submits(R3Q__ENVELOPE__BODY_SUBMIT_TASKS),
	    &count_driver);
	fz_peer_new(&ctl, 0, ROLE_CLIENT, NULL);
	assert_int_not_equal(id = count_submit_as(&ctl, 5), 0);
	fz_peer_new(&w, 1, ROLE_NONE, "w1");
	fz_hello(&w, "w1", 2);
	for (i = 0; i < 16 && fz_work(&w) > 0; i++)
		;
	assert_non_null(j = job_find(id));
	assert_int_equal(j->j_state, JOB_DONE);
	assert_int_equal(j->j_done, 5);
	assert_int_equal(j->j_ngens, 1);
	assert_true(j->j_gens[0].g_best == 5.0);
	job_info(j, &info, 1);
	assert_string_equal(info.driver, "count");
	assert_int_equal(info.tasks_done, 5);
	assert_int_equal(info.tasks_submitted, 5);
	job_info_clear(&info);
	fz_peer_free(&w);
	fz_peer_free(&ctl);
	fz_run();
	fz_master_free();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_count),
	};

	log_init("masterd", 0, LOG_DAEMON);
	return (cmocka_run_group_tests(tests, NULL, NULL));
}

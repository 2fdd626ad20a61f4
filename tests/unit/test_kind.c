/*
 * masterd's tables that must cost O(1) or O(log n) whatever a client
 * leaves in them: the kinds (masterd/kind.c: found by a keyed hash,
 * held by batches, forgotten with the last holder, at most
 * max_client_kinds distinct ones per client, never-held names swept) and
 * the ranges of task ids (masterd/job_range.c: found by binary search,
 * dropped ranges marked dead and compacted).
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "masterd.h"

/* Names are found again, numbers are distinct. */
static void
test_kind_find(void **state)
{
	char		 name[32];
	uint32_t	 id, ids[500];
	size_t		 i;

	(void)state;
	for (i = 0; i < 500; i++) {
		snprintf(name, sizeof(name), "k%zu", i);
		ids[i] = kind_intern(name);
		assert_int_not_equal(ids[i], UINT32_MAX);
		(void)kind_hold(ids[i], NULL);
	}
	for (i = 0; i < 500; i++) {
		snprintf(name, sizeof(name), "k%zu", i);
		assert_int_equal(kind_find(name, &id), 0);
		assert_int_equal(id, ids[i]);
		assert_string_equal(kind_name(id), name);
		assert_int_equal(kind_intern(name), ids[i]);
	}
	assert_int_equal(kind_find("nope", &id), -1);
	assert_int_equal(kind_count(), 500);
	for (i = 0; i < 500; i++)
		kind_release(ids[i], NULL);
	assert_int_equal(kind_count(), 0);
	kind_free_all();
}

/* The last holder forgets a kind; its number goes to the next name. */
static void
test_kind_refs(void **state)
{
	struct kind_owner	*o1, *o2;
	uint32_t		 a, b, id;

	(void)state;
	a = kind_intern("alpha");
	o1 = kind_hold(a, "alice");
	o2 = kind_hold(a, "alice");
	assert_ptr_equal(o1, o2);
	assert_int_equal(kind_client_count("alice"), 1);
	kind_release(a, o1);
	assert_int_equal(kind_find("alpha", &id), 0);	/* one holder left */
	kind_release(a, o2);
	assert_int_equal(kind_find("alpha", &id), -1);
	assert_int_equal(kind_client_count("alice"), 0);
	b = kind_intern("beta");
	assert_int_equal(b, a);				/* reused */
	assert_string_equal(kind_name(b), "beta");
	kind_free_all();
}

/* max_client_kinds: a client's next distinct kind is refused, others not. */
static void
test_kind_client_cap(void **state)
{
	char		 err[256], name[32];
	uint32_t	 id, held[3];
	size_t		 i;

	(void)state;
	for (i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "a%zu", i);
		held[i] = kind_intern_client(name, "unix:alice", 3, err,
		    sizeof(err));
		assert_int_not_equal(held[i], UINT32_MAX);
		(void)kind_hold(held[i], "unix:alice");
	}
	assert_int_equal(kind_intern_client("a3", "unix:alice", 3, err,
	    sizeof(err)), UINT32_MAX);
	assert_non_null(strstr(err, "client unix:alice"));
	assert_non_null(strstr(err, "max_client_kinds (3)"));
	assert_non_null(strstr(err, "a3"));
	assert_int_equal(kind_find("a3", &id), -1);	/* not interned */
	/* One it holds is still its own. */
	assert_int_equal(kind_intern_client("a1", "unix:alice", 3, err,
	    sizeof(err)), held[1]);
	/* Another client's new kind, and one alice holds, are taken. */
	assert_int_not_equal(kind_intern_client("b0", "tls:bob", 3, err,
	    sizeof(err)), UINT32_MAX);
	assert_int_equal(kind_intern_client("a0", "tls:bob", 3, err,
	    sizeof(err)), held[0]);
	/* Released, alice may name another. */
	kind_release(held[2], kind_hold(held[2], "unix:alice"));
	kind_release(held[2], kind_hold(held[2], "unix:alice"));
	(void)kind_hold(held[2], "unix:alice");
	assert_int_equal(kind_client_count("unix:alice"), 3);
	kind_free_all();
}

/* Names interned and never held are swept: the table stays bounded. */
static void
test_kind_sweep(void **state)
{
	char	 name[32];
	size_t	 i;

	(void)state;
	for (i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "unheld%zu", i);
		assert_int_not_equal(kind_intern(name), UINT32_MAX);
	}
	assert_true(kind_count() <= 2048);
	kind_free_all();
}

/* Ranges: found by id, by index, dropped and compacted. */
static void
test_ranges(void **state)
{
	struct job_batch	*b;
	size_t			 i, idx, n = 3000;

	(void)state;
	assert_non_null(b = calloc(n + 1, sizeof(*b)));
	/* Ids 1000.., two a batch, in two pieces each. */
	for (i = 0; i < n; i++) {
		job_range_add(&b[i], 1000 + 2 * i, 1, 0);
		job_range_add(&b[i], 1000 + 2 * i + 1, 1, 1);
	}
	/* A batch resumed with lower ids, put in its place. */
	job_range_add(&b[n], 10, 5, 0);
	for (i = 0; i < n; i += 2)
		job_range_drop(&b[i]);
	for (i = 0; i < n; i++) {
		if (i % 2 == 0) {
			assert_null(job_task_find(1000 + 2 * i + 1, &idx));
			continue;
		}
		assert_ptr_equal(job_task_find(1000 + 2 * i + 1, &idx), &b[i]);
		assert_int_equal(idx, 1);
		assert_int_equal(job_task_id(&b[i], 0), 1000 + 2 * i);
		assert_int_equal(job_task_id(&b[i], 1), 1000 + 2 * i + 1);
		assert_int_equal(job_task_id(&b[i], 2), 0);
	}
	assert_ptr_equal(job_task_find(14, &idx), &b[n]);
	assert_int_equal(idx, 4);
	assert_null(job_task_find(15, &idx));
	assert_int_equal(job_task_id(&b[n], 3), 13);
	for (i = 1; i <= n; i += 2)
		job_range_drop(&b[i < n ? i : n]);
	job_range_drop(&b[n]);
	assert_null(job_task_find(14, &idx));
	job_range_free_all();
	free(b);
}

int
main(void)
{
	struct masterd_config	 c;
	const struct CMUnitTest	 tests[] = {
		cmocka_unit_test(test_kind_find),
		cmocka_unit_test(test_kind_refs),
		cmocka_unit_test(test_kind_client_cap),
		cmocka_unit_test(test_kind_sweep),
		cmocka_unit_test(test_ranges),
	};

	/* The defaults say max_client_kinds is 64 (and link masterd.c). */
	masterd_config_defaults(&c);
	if (c.max_client_kinds != 64)
		return (1);
	return (cmocka_run_group_tests(tests, NULL, NULL));
}

/*
 * Unit tests for the island model (common/es/island.c, issue 22):
 * determinism, migrants merged in island order whatever order they came
 * in, an epoch run in pieces equal to it run at once, the payload path
 * (what the master sends and a worker runs) equal to the direct one,
 * parameter checks, and that islands do optimise Ridge and do exchange.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "es/island.h"

static void
params_default(struct island_params *p)
{
	memset(p, 0, sizeof(*p));
	p->islands = 4;
	p->mu = 6;
	p->lambda = 14;
	p->dim = 5;
	p->generations = 23;	/* epochs of 5, 5, 5, 5, 3 */
	p->migrate_every = 5;
	p->migrants = 2;
	p->seed = 7;
}

/*
 * A whole run with the API: epochs cut into pieces of `piece'
 * generations (0: at once), migrants put in the order `order' gives
 * (NULL: island order).  Returns the digest of the final states; the
 * best fitness in *best.
 */
static uint64_t
run_direct(const struct island_params *p, uint32_t piece,
    const uint32_t *order, double *best)
{
	struct island		**is;
	uint8_t			*buf;
	uint64_t		 h = 0;
	uint32_t		 e, i, j, k;

	is = calloc(p->islands, sizeof(*is));
	buf = malloc(island_state_len(p));
	assert_non_null(is);
	assert_non_null(buf);
	for (i = 0; i < p->islands; i++)
		assert_non_null(is[i] = island_new(p, i));
	*best = INFINITY;
	for (e = 0; e < island_epochs(p); e++) {
		/*
		 * Every island sends what it has at the end of epoch e - 1
		 * before any merges (the master keeps those states).
		 */
		if (e > 0) {
			struct island_mig	*all;

			all = calloc(p->islands, sizeof(*all));
			assert_non_null(all);
			for (i = 0; i < p->islands; i++) {
				assert_int_equal(island_mig_init(&all[i], p),
				    0);
				for (k = 0; k < p->islands; k++) {
					j = order != NULL ? order[k] : k;
					if (j != i)
						assert_int_equal(
						    island_mig_from(&all[i],
						    is[j]), 0);
				}
			}
			for (i = 0; i < p->islands; i++) {
				assert_int_equal(island_migrate(is[i],
				    &all[i]), 0);
				island_mig_free(&all[i]);
			}
			free(all);
		}
		for (i = 0; i < p->islands; i++) {
			if (piece == 0)
				island_run(is[i], UINT32_MAX);
			else
				while (!island_epoch_done(is[i]))
					assert_true(island_run(is[i],
					    piece) > 0);
			assert_true(island_epoch_done(is[i]));
			assert_int_equal(island_run(is[i], 1), 0);
		}
	}
	for (i = 0; i < p->islands; i++) {
		assert_true(island_finished(is[i]));
		island_state_encode(is[i], buf);
		h = island_digest(h, buf, island_state_len(p));
		if (island_best_f(is[i]) < *best)
			*best = island_best_f(is[i]);
		island_free(is[i]);
	}
	free(buf);
	free(is);
	return (h);
}

/*
 * The same run as the master and a worker make it: payloads built from
 * the encoded states, decoded, run, encoded.  Islands run in `order'.
 */
static uint64_t
run_payload(const struct island_params *p, const uint32_t *order)
{
	uint8_t		**st, **nst, *pl;
	struct island_params	 q;
	struct island	*is;
	uint64_t	 h = 0;
	uint32_t	 e, i, k, flags;
	double		 work;
	char		 err[256];

	st = calloc(p->islands, sizeof(*st));
	nst = calloc(p->islands, sizeof(*nst));
	assert_non_null(st);
	assert_non_null(nst);
	pl = malloc(island_payload_len(p, 1));
	assert_non_null(pl);
	for (i = 0; i < p->islands; i++) {
		st[i] = malloc(island_state_len(p));
		nst[i] = malloc(island_state_len(p));
	}
	for (e = 0; e < island_epochs(p); e++) {
		for (k = 0; k < p->islands; k++) {
			i = order != NULL ? order[k] : k;
			island_payload_build(pl, p, i, 0, 0.0,
			    e == 0 ? NULL : (const uint8_t *const *)st);
			if (island_epoch_from_payload(pl,
			    island_payload_len(p, e > 0), &is, &q, &work,
			    &flags, err, sizeof(err)) == -1)
				fail_msg("epoch %u island %u: %s", e, i, err);
			island_run(is, UINT32_MAX);
			island_state_encode(is, nst[i]);
			island_free(is);
			assert_int_equal(island_state_check(p, i, e, nst[i],
			    island_state_len(p), err, sizeof(err)), 0);
		}
		for (i = 0; i < p->islands; i++) {
			uint8_t *t = st[i];

			st[i] = nst[i];
			nst[i] = t;
		}
	}
	for (i = 0; i < p->islands; i++) {
		h = island_digest(h, st[i], island_state_len(p));
		free(st[i]);
		free(nst[i]);
	}
	free(st);
	free(nst);
	free(pl);
	return (h);
}

static void
test_determinism(void **state)
{
	struct island_params	 p;
	double			 b1, b2;
	uint64_t		 h1, h2, h3;

	(void)state;
	params_default(&p);
	h1 = run_direct(&p, 0, NULL, &b1);
	h2 = run_direct(&p, 0, NULL, &b2);
	assert_true(h1 == h2);
	assert_memory_equal(&b1, &b2, sizeof(b1));
	p.seed = 8;
	h3 = run_direct(&p, 0, NULL, &b2);
	assert_true(h1 != h3);
}

/* Each island draws from its own stream: same start, different islands. */
static void
test_streams(void **state)
{
	struct island_params	 p;
	struct island		*a, *b;

	(void)state;
	params_default(&p);
	a = island_new(&p, 0);
	b = island_new(&p, 1);
	island_run(a, 1);
	island_run(b, 1);
	assert_true(island_best_f(a) != island_best_f(b));
	island_free(a);
	island_free(b);
}

/* Migrants put in any order merge to the same bits. */
static void
test_merge_order(void **state)
{
	static const uint32_t	 rev[] = { 3, 2, 1, 0 };
	static const uint32_t	 odd[] = { 1, 3, 0, 2 };
	struct island_params	 p;
	struct island		*is[4], *x, *y;
	struct island_mig	 m1, m2;
	uint8_t			*s1, *s2;
	double			 b;
	uint32_t		 i;
	uint64_t		 h;

	(void)state;
	params_default(&p);
	for (i = 0; i < 4; i++) {
		is[i] = island_new(&p, i);
		island_run(is[i], UINT32_MAX);
	}
	assert_int_equal(island_mig_init(&m1, &p), 0);
	assert_int_equal(island_mig_init(&m2, &p), 0);
	for (i = 1; i < 4; i++)
		island_mig_from(&m1, is[i]);
	for (i = 0; i < 4; i++)
		if (rev[i] != 0)
			island_mig_from(&m2, is[rev[i]]);
	/* Island 0's copies, merged from either set. */
	s1 = malloc(island_state_len(&p));
	s2 = malloc(island_state_len(&p));
	x = island_new(&p, 0);
	y = island_new(&p, 0);
	island_state_encode(is[0], s1);
	assert_int_equal(island_state_decode(x, s1, island_state_len(&p),
	    NULL, 0), 0);
	assert_int_equal(island_state_decode(y, s1, island_state_len(&p),
	    NULL, 0), 0);
	assert_int_equal(island_migrate(x, &m1), 0);
	assert_int_equal(island_migrate(y, &m2), 0);
	island_state_encode(x, s1);
	island_state_encode(y, s2);
	assert_memory_equal(s1, s2, island_state_len(&p));
	/* Immigrants did come in: the best is at least the senders' best. */
	for (i = 1; i < 4; i++)
		assert_true(island_best_f(x) <= island_best_f(is[i]));
	assert_int_equal(island_epoch(x), 1);
	/* A missing slot: no merge, nothing changed. */
	island_mig_clear(&m1);
	island_mig_from(&m1, is[1]);
	island_mig_from(&m1, is[2]);
	assert_int_equal(island_migrate(is[0], &m1), -1);
	assert_int_equal(island_epoch(is[0]), 0);
	/* Not at the end of an epoch: no merge. */
	island_run(x, 1);
	island_mig_from(&m1, is[3]);
	assert_int_equal(island_migrate(x, &m1), -1);
	/* Whole runs: any send order, any island order, the same bits. */
	h = run_direct(&p, 0, NULL, &b);
	assert_true(h == run_direct(&p, 0, rev, &b));
	assert_true(h == run_direct(&p, 0, odd, &b));
	assert_true(h == run_payload(&p, NULL));
	assert_true(h == run_payload(&p, rev));
	assert_true(h == run_payload(&p, odd));
	for (i = 0; i < 4; i++)
		island_free(is[i]);
	island_free(x);
	island_free(y);
	island_mig_free(&m1);
	island_mig_free(&m2);
	free(s1);
	free(s2);
}

/* An epoch in pieces (and through encode/decode) equals it at once. */
static void
test_pieces(void **state)
{
	struct island_params	 p;
	struct island		*a, *b;
	uint8_t			*sa, *sb;
	uint32_t		 n;
	double			 x, y;

	(void)state;
	params_default(&p);
	assert_true(run_direct(&p, 0, NULL, &x) ==
	    run_direct(&p, 1, NULL, &y));
	assert_true(run_direct(&p, 0, NULL, &x) ==
	    run_direct(&p, 3, NULL, &y));
	/* Within an epoch, stopped and carried over as bytes. */
	sa = malloc(island_state_len(&p));
	sb = malloc(island_state_len(&p));
	a = island_new(&p, 2);
	b = island_new(&p, 2);
	n = island_run(a, UINT32_MAX);
	assert_int_equal(n, island_epoch_end(&p, 0) + 1);
	assert_int_equal(island_run(b, 2), 2);
	assert_false(island_epoch_done(b));
	assert_int_equal(island_run(b, UINT32_MAX), n - 2);
	island_state_encode(a, sa);
	island_state_encode(b, sb);
	assert_memory_equal(sa, sb, island_state_len(&p));
	island_free(a);
	island_free(b);
	free(sa);
	free(sb);
}

static void
test_params_check(void **state)
{
	struct island_params	 p;
	char			 err[256];

	(void)state;
	params_default(&p);
	assert_int_equal(island_params_check(&p, err, sizeof(err)), 0);
	p.islands = 1;
	assert_int_equal(island_params_check(&p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "islands 1"));
	p.islands = 2;
	assert_int_equal(island_params_check(&p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "islands 2"));
	params_default(&p);
	p.migrants = p.mu + 1;
	assert_int_equal(island_params_check(&p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "migrants 7"));
	p.migrants = 0;
	assert_int_equal(island_params_check(&p, err, sizeof(err)), -1);
	params_default(&p);
	p.migrate_every = 0;
	assert_int_equal(island_params_check(&p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "migrate-every"));
	p.migrate_every = p.generations + 1;
	assert_int_equal(island_params_check(&p, err, sizeof(err)), -1);
	params_default(&p);
	p.mu = 0;
	assert_int_equal(island_params_check(&p, err, sizeof(err)), -1);
	assert_null(island_new(&p, 0));
	params_default(&p);
	assert_null(island_new(&p, 4));
	assert_int_equal(island_epochs(&p), 5);
	assert_int_equal(island_epoch_end(&p, 0), 5);
	assert_int_equal(island_epoch_end(&p, 4), 23);
}

/* Payloads that do not decode are refused with a reason, nothing run. */
static void
test_payload_bad(void **state)
{
	struct island_params	 p, q;
	struct island		*is;
	uint8_t			*pl, *st[4];
	uint32_t		 i, flags;
	double			 w;
	char			 err[256];

	(void)state;
	params_default(&p);
	pl = calloc(1, island_payload_len(&p, 1) + 8);
	island_payload_build(pl, &p, 1, 0, 0.0, NULL);
	assert_int_equal(island_epoch_from_payload(pl, ISLAND_PAYLOAD_HEAD,
	    &is, &q, &w, &flags, err, sizeof(err)), 0);
	island_free(is);
	assert_int_equal(island_epoch_from_payload(pl, ISLAND_PAYLOAD_HEAD - 1,
	    &is, &q, &w, &flags, err, sizeof(err)), -1);
	assert_int_equal(island_epoch_from_payload(pl, ISLAND_PAYLOAD_HEAD + 8,
	    &is, &q, &w, &flags, err, sizeof(err)), -1);
	/* A state of generation 0 is not one at the end of an epoch. */
	for (i = 0; i < 4; i++) {
		st[i] = calloc(1, island_state_len(&p));
		is = island_new(&p, i);
		island_state_encode(is, st[i]);
		island_free(is);
	}
	island_payload_build(pl, &p, 1, 0, 0.0, (const uint8_t *const *)st);
	assert_int_equal(island_epoch_from_payload(pl,
	    island_payload_len(&p, 1), &is, &q, &w, &flags, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "generation"));
	/* p = 2 in the bytes. */
	island_payload_build(pl, &p, 1, 0, 0.0, NULL);
	pl[4] = 2;
	assert_int_equal(island_epoch_from_payload(pl, ISLAND_PAYLOAD_HEAD,
	    &is, &q, &w, &flags, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "islands 2"));
	pl[0] ^= 1;
	assert_int_equal(island_epoch_from_payload(pl, ISLAND_PAYLOAD_HEAD,
	    &is, &q, &w, &flags, err, sizeof(err)), -1);
	for (i = 0; i < 4; i++)
		free(st[i]);
	free(pl);
}

/* The islands optimise Ridge, and migration spreads the best. */
static void
test_optimises(void **state)
{
	struct island_params	 p;
	double			 b;

	(void)state;
	params_default(&p);
	p.generations = 60;
	p.migrate_every = 10;
	run_direct(&p, 0, NULL, &b);
	assert_true(b < 1000.0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_streams),
		cmocka_unit_test(test_merge_order),
		cmocka_unit_test(test_pieces),
		cmocka_unit_test(test_params_check),
		cmocka_unit_test(test_payload_bad),
		cmocka_unit_test(test_optimises),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}

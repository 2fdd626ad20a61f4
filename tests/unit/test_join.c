/*
 * Unit tests of common/join.c (issue 25): the join token's format, both
 * whole (r3q1.ID.SECRET.CAHASH) and as a JoinRequest carries it
 * (ID.SECRET); new tokens; SHA-256 against FIPS 180-2's vector; worker
 * names (mkcerts's rule, a NUL inside); the keys the CA takes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <openssl/evp.h>

#include "join.h"

#define HASH	"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
#define GOOD	"r3q1.0123456789ab.0123456789abcdef0123456789abcdef." HASH

static void
test_token_parse(void **state)
{
	struct join_token	 t;
	char			 err[256], buf[JOIN_TOKEN_MAX];

	(void)state;
	assert_int_equal(join_token_parse(GOOD, &t, err, sizeof(err)), 0);
	assert_string_equal(t.jt_id, "0123456789ab");
	assert_string_equal(t.jt_secret, "0123456789abcdef0123456789abcdef");
	assert_string_equal(t.jt_hash, HASH);
	join_token_format(&t, buf, sizeof(buf));
	assert_string_equal(buf, GOOD);

	/* Each part wrong in turn: a message, never the secret. */
	assert_int_equal(join_token_parse("r3q2.0123456789ab."
	    "0123456789abcdef0123456789abcdef." HASH, &t, err, sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "begins with 'r3q1.'"));
	assert_int_equal(join_token_parse("r3q1.0123456789aB."
	    "0123456789abcdef0123456789abcdef." HASH, &t, err, sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "its id is 12"));
	assert_int_equal(join_token_parse("r3q1.0123456789ab."
	    "0123456789abcdef0123456789abcdeg." HASH, &t, err, sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "its secret is 32"));
	assert_null(strstr(err, "0123456789abcdef"));
	assert_int_equal(join_token_parse(GOOD "0", &t, err, sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "CA's SHA-256"));
	assert_int_equal(join_token_parse("r3q1.0123456789ab."
	    "0123456789abcdef0123456789abcdef", &t, err, sizeof(err)), -1);
	assert_int_equal(join_token_parse("", &t, err, sizeof(err)), -1);
}

static void
test_request_parse(void **state)
{
	struct join_token	 t;
	char			 err[256];

	(void)state;
	assert_int_equal(join_request_parse("0123456789ab."
	    "0123456789abcdef0123456789abcdef", &t, err, sizeof(err)), 0);
	assert_string_equal(t.jt_id, "0123456789ab");
	assert_string_equal(t.jt_hash, "");
	assert_int_equal(join_request_parse("0123456789ab."
	    "0123456789abcdef0123456789abcdef.", &t, err, sizeof(err)), -1);
	assert_int_equal(join_request_parse("0123456789ab", &t, err,
	    sizeof(err)), -1);
	assert_int_equal(join_request_parse("", &t, err, sizeof(err)), -1);
}

static void
test_token_new(void **state)
{
	struct join_token	 a, b;
	char			 err[256], buf[JOIN_TOKEN_MAX];
	struct join_token	 back;

	(void)state;
	assert_int_equal(join_token_new(&a, HASH, err, sizeof(err)), 0);
	assert_int_equal(join_token_new(&b, HASH, err, sizeof(err)), 0);
	assert_string_not_equal(a.jt_id, b.jt_id);
	assert_string_not_equal(a.jt_secret, b.jt_secret);
	join_token_format(&a, buf, sizeof(buf));
	assert_int_equal(strlen(buf), JOIN_TOKEN_MAX - 1);
	assert_int_equal(join_token_parse(buf, &back, err, sizeof(err)), 0);
	assert_string_equal(back.jt_secret, a.jt_secret);
}

static void
test_sha256(void **state)
{
	char	 h[JOIN_HASH_HEX + 1];

	(void)state;
	join_sha256_hex("abc", 3, h);
	assert_string_equal(h, HASH);
}

static void
test_name_check(void **state)
{
	static const char *const good[] = {
		"w1", "node-7.example.org", "A", "x_y", "0abc",
		"a23456789012345678901234567890123456789012345678901234567890123",
	};
	static const struct {
		const char	*name;
		size_t		 len;
		const char	*why;
	} bad[] = {
		{ "a/b", 3, "'/' at offset 1" },
		{ "a,b", 3, "',' at offset 1" },
		{ "a\0b", 3, "a NUL byte at offset 1" },
		{ "-ab", 3, "'-' at offset 0" },
		{ ".ab", 3, "'.' at offset 0" },
		{ "a b", 3, "' ' at offset 1" },
		{ "caf\xc3\xa9", 5, "byte 0xc3 at offset 3" },
		{ "", 0, "empty worker name" },
		{ "a234567890123456789012345678901234567890123456789012345678901234",
		    64, "64 characters, more than 63" },
		{ "master", 6, "is reserved" },
		{ "ca", 2, "is reserved" },
		{ "client", 6, "is reserved" },
	};
	char	 err[256];
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_int_equal(join_name_check(good[i], strlen(good[i]), err,
		    sizeof(err)), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(join_name_check(bad[i].name, bad[i].len, err,
		    sizeof(err)), -1);
		if (strstr(err, bad[i].why) == NULL)
			fail_msg("%zu: '%s' lacks '%s'", i, err, bad[i].why);
	}
}

static void
test_key_check(void **state)
{
	EVP_PKEY	*k;
	char		 err[256];

	(void)state;
	k = EVP_EC_gen("P-256");
	assert_int_equal(join_key_check(k, err, sizeof(err)), 0);
	EVP_PKEY_free(k);
	k = EVP_EC_gen("P-384");
	assert_int_equal(join_key_check(k, err, sizeof(err)), 0);
	EVP_PKEY_free(k);
	k = EVP_EC_gen("P-521");
	assert_int_equal(join_key_check(k, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "curve secp521r1"));
	EVP_PKEY_free(k);
	k = EVP_RSA_gen(1024);
	assert_int_equal(join_key_check(k, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "RSA key of 1024 bits"));
	EVP_PKEY_free(k);
	k = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	assert_int_equal(join_key_check(k, err, sizeof(err)), 0);
	EVP_PKEY_free(k);
	k = EVP_PKEY_Q_keygen(NULL, NULL, "X25519");
	assert_int_equal(join_key_check(k, err, sizeof(err)), -1);
	EVP_PKEY_free(k);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_token_parse),
		cmocka_unit_test(test_request_parse),
		cmocka_unit_test(test_token_new),
		cmocka_unit_test(test_sha256),
		cmocka_unit_test(test_name_check),
		cmocka_unit_test(test_key_check),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}

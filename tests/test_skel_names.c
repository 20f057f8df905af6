/*
 * test_skel_names.c: the node ids of skeleton names (server/codec/skel_names.c).
 *
 * Every byte value alone and inside a name round-trips and gives the id
 * the rule says (kept, or '_' and two lowercase hex digits); distinct
 * names of up to two bytes over all byte values give distinct ids
 * (injective); ids the encoder never writes are refused by the decoder;
 * the size limit is exact.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/skel_names.h"
#include "core/scene.h"

/* The rule, restated independently: which bytes stay. */
static int stays(int c)
{
	return strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-", c) && c != 0;
}

static void every_byte_round_trips(void **state)
{
	(void)state;
	for (int c = 0; c < 256; c++) {
		char name[3] = {'a', (char)c, 'z'}, id[16], expect[16], back[8];
		int n = skel_id_encode(name, 3, id, sizeof(id));

		if (stays(c))
			snprintf(expect, sizeof(expect), "a%cz", c);
		else
			snprintf(expect, sizeof(expect), "a_%02xz", c);
		assert_string_equal(id, expect);
		assert_int_equal(n, (int)strlen(expect));
		assert_int_equal(skel_id_length(name, 3), strlen(expect));
		assert_true(scene_id_valid(id));
		assert_int_equal(skel_id_decode(id, back, sizeof(back)), 3);
		assert_memory_equal(back, name, 3);

		/* The byte alone. */
		n = skel_id_encode(name + 1, 1, id, sizeof(id));
		assert_int_equal(n, stays(c) ? 1 : 3);
		assert_int_equal(skel_id_decode(id, back, sizeof(back)), 1);
		assert_int_equal((unsigned char)back[0], c);
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* All 256 + 65536 names of one or two bytes: their ids are pairwise
 * distinct (sorted, no neighbour equal). */
static void injective(void **state)
{
	(void)state;
	enum { N = 256 + 65536 };
	char **ids = calloc(N, sizeof(*ids));
	int k = 0;

	assert_non_null(ids);
	for (int a = 0; a < 256; a++) {
		char name[1] = {(char)a}, id[8];
		assert_true(skel_id_encode(name, 1, id, sizeof(id)) > 0);
		ids[k] = strdup(id);
		assert_non_null(ids[k++]);
	}
	for (int a = 0; a < 256; a++)
		for (int b = 0; b < 256; b++) {
			char name[2] = {(char)a, (char)b}, id[8];
			assert_true(skel_id_encode(name, 2, id, sizeof(id)) > 0);
			ids[k] = strdup(id);
			assert_non_null(ids[k++]);
		}
	assert_int_equal(k, N);
	qsort(ids, N, sizeof(*ids), cmp_str);
	for (int i = 1; i < N; i++)
		assert_true(strcmp(ids[i - 1], ids[i]) != 0);
	for (int i = 0; i < N; i++)
		free(ids[i]);
	free(ids);
}

static void examples(void **state)
{
	char id[SCENE_ID_MAX + 1], back[64];
	(void)state;

	assert_int_equal(skel_id_encode("arm_l", 5, id, sizeof(id)), 7);
	assert_string_equal(id, "arm_5fl");
	assert_int_equal(skel_id_encode("hip.L", 5, id, sizeof(id)), 7);
	assert_string_equal(id, "hip_2eL");
	assert_int_equal(skel_id_encode("a:b c", 5, id, sizeof(id)), 9);
	assert_string_equal(id, "a_3ab_20c");
	assert_int_equal(skel_id_encode("\xc3\xbc", 2, id, sizeof(id)), 6);
	assert_string_equal(id, "_c3_bc");
	assert_int_equal(skel_id_decode("Torso-2", back, sizeof(back)), 7);
	assert_string_equal(back, "Torso-2");
}

static void refusals(void **state)
{
	char id[SCENE_ID_MAX + 1], back[64];
	char name[65];
	(void)state;

	/* The empty name has no id. */
	assert_int_equal(skel_id_encode("", 0, id, sizeof(id)), -1);
	assert_string_equal(id, "");
	/* 64 kept bytes fit a node id exactly, 65 do not; 21 escaped bytes
	 * (63 characters) fit, 22 (66) do not. */
	memset(name, 'b', sizeof(name));
	assert_int_equal(skel_id_encode(name, 64, id, sizeof(id)), 64);
	assert_int_equal(skel_id_encode(name, 65, id, sizeof(id)), -1);
	assert_string_equal(id, "");
	memset(name, '_', sizeof(name));
	assert_int_equal(skel_id_encode(name, 21, id, sizeof(id)), 63);
	assert_int_equal(skel_id_encode(name, 22, id, sizeof(id)), -1);
	assert_int_equal(skel_id_length(name, 22), 66);

	/* Ids no name encodes to. */
	const char *bad[] = {"", "a.b", "a:b", "_", "_4", "_4g", "_4A", "_41", "_2d", "a b", "_zz"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(skel_id_decode(bad[i], back, sizeof(back)), -1);
	/* A name too long for the decoder's buffer. */
	assert_int_equal(skel_id_decode("abcd", back, 4), -1);
	assert_int_equal(skel_id_decode("abc", back, 4), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_byte_round_trips),
		cmocka_unit_test(injective),
		cmocka_unit_test(examples),
		cmocka_unit_test(refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

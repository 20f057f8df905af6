/*
 * fake_entry.h: hiredis replies made by hand, for the tests of the cluster
 * layer's readers of stream entries (test_cluster_entries, test_cluster_calls):
 * what rigd or another program could have appended to a stream.
 */
#ifndef RIGD_TESTS_FAKE_ENTRY_H
#define RIGD_TESTS_FAKE_ENTRY_H

#include <hiredis/hiredis.h>

/* An array reply of 'n' strings "f1", "v1", ... ("\x01" stands for a NUL
 * inside a value, for the tests of embedded NULs). Freed by
 * fake_entry_free. */
redisReply *fake_entry(int n, const char *const *s);

void fake_entry_free(redisReply *r);

/* ok = fn(c, the entry of the strings given), then the entry is freed:
 * 'ok' and 'c' are the caller's. */
#define TAKE(fn, ...) do { \
	static const char *const f_[] = {__VA_ARGS__}; \
	redisReply *r_ = fake_entry((int)(sizeof(f_) / sizeof(*f_)), f_); \
	ok = fn(c, r_); \
	fake_entry_free(r_); \
} while (0)

#endif

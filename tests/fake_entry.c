/*
 * fake_entry.c: hiredis replies made by hand (see fake_entry.h).
 */
#include "fake_entry.h"

#include <stdlib.h>
#include <string.h>

redisReply *fake_entry(int n, const char *const *s)
{
	redisReply *r = calloc(1, sizeof(*r));

	r->type = REDIS_REPLY_ARRAY;
	r->elements = (size_t)n;
	r->element = calloc((size_t)n + 1, sizeof(*r->element));
	for (int i = 0; i < n; i++) {
		redisReply *e = calloc(1, sizeof(*e));

		e->type = REDIS_REPLY_STRING;
		e->str = strdup(s[i]);
		e->len = strlen(s[i]);
		for (size_t k = 0; k < e->len; k++)
			if (e->str[k] == '\x01')
				e->str[k] = '\0';
		r->element[i] = e;
	}
	return r;
}

void fake_entry_free(redisReply *r)
{
	for (size_t i = 0; i < r->elements; i++) {
		free(r->element[i]->str);
		free(r->element[i]);
	}
	free(r->element);
	free(r);
}

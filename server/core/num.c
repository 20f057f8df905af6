/*
 * num.c: decimal integers from text (num.h).
 */
#include "num.h"

#include <assert.h>

bool num_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
	bool neg = false;
	uint64_t mag = 0;            /* magnitude read so far */
	uint64_t limit;              /* the largest magnitude of the sign */
	int64_t v;

	assert(lo <= hi);
	if (!s)
		return false;
	if (*s == '-') {
		neg = true;
		s++;
	}
	if (*s < '0' || *s > '9')
		return false;
	limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; *s; s++) {
		unsigned d = (unsigned)(*s - '0');

		if (d > 9 || mag > (limit - d) / 10)
			return false;
		mag = mag * 10 + d;
	}
	if (neg)
		v = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
	else
		v = (int64_t)mag;
	if (v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

/*
 * tmpdb.c: temporary databases for the tests (see tmpdb.h).
 */
#include "tmpdb.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void tmpdb_make(tmpdb *t, const char *parent, const char *prefix)
{
	snprintf(t->dir, sizeof(t->dir), "%s/%s.XXXXXX", parent, prefix);
	assert_non_null(mkdtemp(t->dir));
	snprintf(t->path, sizeof(t->path), "%s/rig.db", t->dir);
}

void tmpdb_remove(tmpdb *t)
{
	const char *suffix[] = { "", "-wal", "-shm", "-journal" };
	char p[128];

	if (!t->dir[0])
		return;
	for (int i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s%s", t->path, suffix[i]);
		unlink(p);
	}
	rmdir(t->dir);
}

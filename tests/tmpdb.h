/*
 * tmpdb.h: a fresh database path in a private temporary directory, for the
 * tests that open databases (test_engine, test_store, test_oom). A failure
 * to make the directory fails the running cmocka test.
 */
#ifndef RIGD_TESTS_TMPDB_H
#define RIGD_TESTS_TMPDB_H

typedef struct tmpdb {
	char dir[64];
	char path[96];
} tmpdb;

/* Makes a directory '<parent>/<prefix>.XXXXXX' and sets t->path to rig.db
 * in it (the file itself is not created). */
void tmpdb_make(tmpdb *t, const char *parent, const char *prefix);

/* Removes the database, its WAL, shared-memory and journal files, and the
 * directory. Does nothing for a tmpdb zeroed and never made. */
void tmpdb_remove(tmpdb *t);

#endif

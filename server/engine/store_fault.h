/*
 * store_fault.h: the fault VFS, a shim over SQLite's default VFS that fails
 * xWrite or xSync on demand (store_fault_set), the way SQLite's own test
 * harness injects I/O errors.
 *
 * Private to server/engine/ (the store's files). Each store opened with
 * fault_injection registers its own instance, so stores do not share fault
 * settings. Never used unless a test asks for it.
 */
#ifndef RIGD_STORE_FAULT_H
#define RIGD_STORE_FAULT_H

#include <sqlite3.h>

#include <stdbool.h>

typedef struct store_fault_vfs {
	sqlite3_vfs base;
	sqlite3_vfs *real;
	char name[48];
	bool armed;
	unsigned ops;      /* enum store_fault_op */
	long remaining;    /* calls that still succeed once armed */
	int kind;          /* enum store_fault_kind */
	long hits;
	int sync_delay_ms; /* each xSync sleeps this long first (a slow disk) */
} store_fault_vfs;

/* A new fault VFS over the default one, registered under a unique name
 * (its 'name'), disarmed. NULL when it cannot be made. Free it with
 * store_fault_vfs_free once no connection uses it. */
store_fault_vfs *store_fault_vfs_new(void);

/* Unregisters and frees 'v'; accepts NULL. */
void store_fault_vfs_free(store_fault_vfs *v);

#endif

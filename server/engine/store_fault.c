/*
 * store_fault.c: the fault VFS (see store_fault.h). Every method but xWrite
 * and xSync passes straight through to the real VFS.
 *
 * The one file beside store.c that includes sqlite3.h; it never opens a
 * database itself.
 */
#include "store_fault.h"
#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* An open file: ours, with the real VFS's file right after it. */
typedef struct fault_file {
	sqlite3_file base;
	store_fault_vfs *vfs;
	sqlite3_file *real; /* placed right after this struct */
} fault_file;

/* Whether this call of 'op' fails: armed, its op chosen, and its
 * 'remaining' successful calls used up. Counts the failure. */
static bool fault_hit(store_fault_vfs *v, unsigned op)
{
	if (!v->armed || !(v->ops & op))
		return false;
	if (v->remaining > 0) {
		v->remaining--;
		return false;
	}
	v->hits++;
	return true;
}

static sqlite3_file *real_file(sqlite3_file *f)
{
	return ((fault_file *)f)->real;
}

static int ff_close(sqlite3_file *f)
{
	sqlite3_file *r = real_file(f);
	return r->pMethods->xClose(r);
}

static int ff_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off)
{
	sqlite3_file *r = real_file(f);
	return r->pMethods->xRead(r, buf, n, off);
}

static int ff_write(sqlite3_file *f, const void *buf, int n, sqlite3_int64 off)
{
	fault_file *ff = (fault_file *)f;
	if (fault_hit(ff->vfs, STORE_FAULT_WRITE))
		return ff->vfs->kind == STORE_FAULT_FULL ? SQLITE_FULL : SQLITE_IOERR_WRITE;
	return ff->real->pMethods->xWrite(ff->real, buf, n, off);
}

static int ff_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	sqlite3_file *r = real_file(f);
	return r->pMethods->xTruncate(r, size);
}

static int ff_sync(sqlite3_file *f, int flags)
{
	fault_file *ff = (fault_file *)f;
	if (ff->vfs->sync_delay_ms > 0) {
		struct timespec ts = { ff->vfs->sync_delay_ms / 1000,
				       (long)(ff->vfs->sync_delay_ms % 1000) * 1000000L };
		while (nanosleep(&ts, &ts) != 0)
			;
	}
	if (fault_hit(ff->vfs, STORE_FAULT_SYNC))
		return ff->vfs->kind == STORE_FAULT_FULL ? SQLITE_FULL : SQLITE_IOERR_FSYNC;
	return ff->real->pMethods->xSync(ff->real, flags);
}

static int ff_file_size(sqlite3_file *f, sqlite3_int64 *size)
{
	sqlite3_file *r = real_file(f);
	return r->pMethods->xFileSize(r, size);
}

static int ff_lock(sqlite3_file *f, int level)
{
	sqlite3_file *r = real_file(f);
	return r->pMethods->xLock(r, level);
}

static int ff_unlock(sqlite3_file *f, int level)
{
	sqlite3_file *r = real_file(f);
	return r->pMethods->xUnlock(r, level);
}

static int ff_check_reserved(sqlite3_file *f, int *out)
{
	sqlite3_file *r = real_file(f);
	return r->pMethods->xCheckReservedLock(r, out);
}

static int ff_file_control(sqlite3_file *f, int op, void *arg)
{
	sqlite3_file *r = real_file(f);
	return r->pMethods->xFileControl(r, op, arg);
}

static int ff_sector_size(sqlite3_file *f)
{
	sqlite3_file *r = real_file(f);
	return r->pMethods->xSectorSize(r);
}

static int ff_device_characteristics(sqlite3_file *f)
{
	sqlite3_file *r = real_file(f);
	return r->pMethods->xDeviceCharacteristics(r);
}

static int ff_shm_map(sqlite3_file *f, int region, int size, int extend, void volatile **pp)
{
	sqlite3_file *r = real_file(f);
	if (r->pMethods->iVersion < 2 || !r->pMethods->xShmMap)
		return SQLITE_IOERR_SHMMAP;
	return r->pMethods->xShmMap(r, region, size, extend, pp);
}

static int ff_shm_lock(sqlite3_file *f, int offset, int n, int flags)
{
	sqlite3_file *r = real_file(f);
	if (r->pMethods->iVersion < 2 || !r->pMethods->xShmLock)
		return SQLITE_IOERR_SHMLOCK;
	return r->pMethods->xShmLock(r, offset, n, flags);
}

static void ff_shm_barrier(sqlite3_file *f)
{
	sqlite3_file *r = real_file(f);
	if (r->pMethods->iVersion >= 2 && r->pMethods->xShmBarrier)
		r->pMethods->xShmBarrier(r);
}

static int ff_shm_unmap(sqlite3_file *f, int delete_flag)
{
	sqlite3_file *r = real_file(f);
	if (r->pMethods->iVersion < 2 || !r->pMethods->xShmUnmap)
		return SQLITE_OK;
	return r->pMethods->xShmUnmap(r, delete_flag);
}

static int ff_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **pp)
{
	sqlite3_file *r = real_file(f);
	if (r->pMethods->iVersion < 3 || !r->pMethods->xFetch) {
		*pp = NULL;
		return SQLITE_OK;
	}
	return r->pMethods->xFetch(r, off, n, pp);
}

static int ff_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
	sqlite3_file *r = real_file(f);
	if (r->pMethods->iVersion < 3 || !r->pMethods->xUnfetch)
		return SQLITE_OK;
	return r->pMethods->xUnfetch(r, off, p);
}

static const sqlite3_io_methods fault_io = {
	.iVersion = 3,
	.xClose = ff_close,
	.xRead = ff_read,
	.xWrite = ff_write,
	.xTruncate = ff_truncate,
	.xSync = ff_sync,
	.xFileSize = ff_file_size,
	.xLock = ff_lock,
	.xUnlock = ff_unlock,
	.xCheckReservedLock = ff_check_reserved,
	.xFileControl = ff_file_control,
	.xSectorSize = ff_sector_size,
	.xDeviceCharacteristics = ff_device_characteristics,
	.xShmMap = ff_shm_map,
	.xShmLock = ff_shm_lock,
	.xShmBarrier = ff_shm_barrier,
	.xShmUnmap = ff_shm_unmap,
	.xFetch = ff_fetch,
	.xUnfetch = ff_unfetch,
};

static int fv_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags,
		   int *out_flags)
{
	store_fault_vfs *v = (store_fault_vfs *)vfs;
	fault_file *f = (fault_file *)file;
	f->vfs = v;
	f->real = (sqlite3_file *)(f + 1);
	int rc = v->real->xOpen(v->real, name, f->real, flags, out_flags);
	f->base.pMethods = f->real->pMethods ? &fault_io : NULL;
	return rc;
}

static int fv_delete(sqlite3_vfs *vfs, const char *name, int sync_dir)
{
	sqlite3_vfs *r = ((store_fault_vfs *)vfs)->real;
	return r->xDelete(r, name, sync_dir);
}

static int fv_access(sqlite3_vfs *vfs, const char *name, int flags, int *out)
{
	sqlite3_vfs *r = ((store_fault_vfs *)vfs)->real;
	return r->xAccess(r, name, flags, out);
}

static int fv_full_pathname(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
	sqlite3_vfs *r = ((store_fault_vfs *)vfs)->real;
	return r->xFullPathname(r, name, n, out);
}

static void *fv_dl_open(sqlite3_vfs *vfs, const char *name)
{
	sqlite3_vfs *r = ((store_fault_vfs *)vfs)->real;
	return r->xDlOpen(r, name);
}

static void fv_dl_error(sqlite3_vfs *vfs, int n, char *msg)
{
	sqlite3_vfs *r = ((store_fault_vfs *)vfs)->real;
	r->xDlError(r, n, msg);
}

static void (*fv_dl_sym(sqlite3_vfs *vfs, void *h, const char *sym))(void)
{
	sqlite3_vfs *r = ((store_fault_vfs *)vfs)->real;
	return r->xDlSym(r, h, sym);
}

static void fv_dl_close(sqlite3_vfs *vfs, void *h)
{
	sqlite3_vfs *r = ((store_fault_vfs *)vfs)->real;
	r->xDlClose(r, h);
}

static int fv_randomness(sqlite3_vfs *vfs, int n, char *out)
{
	sqlite3_vfs *r = ((store_fault_vfs *)vfs)->real;
	return r->xRandomness(r, n, out);
}

static int fv_sleep(sqlite3_vfs *vfs, int us)
{
	sqlite3_vfs *r = ((store_fault_vfs *)vfs)->real;
	return r->xSleep(r, us);
}

static int fv_current_time(sqlite3_vfs *vfs, double *out)
{
	sqlite3_vfs *r = ((store_fault_vfs *)vfs)->real;
	return r->xCurrentTime(r, out);
}

static int fv_get_last_error(sqlite3_vfs *vfs, int n, char *out)
{
	sqlite3_vfs *r = ((store_fault_vfs *)vfs)->real;
	return r->xGetLastError ? r->xGetLastError(r, n, out) : 0;
}

static int fv_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *out)
{
	sqlite3_vfs *r = ((store_fault_vfs *)vfs)->real;
	return r->xCurrentTimeInt64(r, out);
}

static int fv_set_system_call(sqlite3_vfs *vfs, const char *name, sqlite3_syscall_ptr p)
{
	sqlite3_vfs *r = ((store_fault_vfs *)vfs)->real;
	return r->xSetSystemCall(r, name, p);
}

static sqlite3_syscall_ptr fv_get_system_call(sqlite3_vfs *vfs, const char *name)
{
	sqlite3_vfs *r = ((store_fault_vfs *)vfs)->real;
	return r->xGetSystemCall(r, name);
}

static const char *fv_next_system_call(sqlite3_vfs *vfs, const char *name)
{
	sqlite3_vfs *r = ((store_fault_vfs *)vfs)->real;
	return r->xNextSystemCall(r, name);
}

/* A new fault VFS over the default one, registered under a unique name. */
store_fault_vfs *store_fault_vfs_new(void)
{
	static unsigned long serial;
	sqlite3_vfs *real = sqlite3_vfs_find(NULL);
	if (!real)
		return NULL;
	store_fault_vfs *v = calloc(1, sizeof(*v));
	if (!v)
		return NULL;
	v->real = real;
	snprintf(v->name, sizeof(v->name), "rigd-fault-%lu", ++serial);
	sqlite3_vfs *b = &v->base;
	b->iVersion = real->iVersion < 3 ? real->iVersion : 3;
	b->szOsFile = (int)sizeof(fault_file) + real->szOsFile;
	b->mxPathname = real->mxPathname;
	b->zName = v->name;
	b->pAppData = v;
	b->xOpen = fv_open;
	b->xDelete = fv_delete;
	b->xAccess = fv_access;
	b->xFullPathname = fv_full_pathname;
	b->xDlOpen = real->xDlOpen ? fv_dl_open : NULL;
	b->xDlError = real->xDlError ? fv_dl_error : NULL;
	b->xDlSym = real->xDlSym ? fv_dl_sym : NULL;
	b->xDlClose = real->xDlClose ? fv_dl_close : NULL;
	b->xRandomness = fv_randomness;
	b->xSleep = fv_sleep;
	b->xCurrentTime = fv_current_time;
	b->xGetLastError = fv_get_last_error;
	if (b->iVersion >= 2)
		b->xCurrentTimeInt64 = fv_current_time_int64;
	if (b->iVersion >= 3) {
		b->xSetSystemCall = fv_set_system_call;
		b->xGetSystemCall = fv_get_system_call;
		b->xNextSystemCall = fv_next_system_call;
	}
	if (sqlite3_vfs_register(b, 0) != SQLITE_OK) {
		free(v);
		return NULL;
	}
	return v;
}

void store_fault_vfs_free(store_fault_vfs *v)
{
	if (!v)
		return;
	sqlite3_vfs_unregister(&v->base);
	free(v);
}


/*
 * skel_report.h: what a skeleton import (Spine, DragonBones) hands the
 * route besides its batch: the asset to store (file name, bytes, element
 * ids), the counts it answers with and the features it kept in the file
 * without applying them live.
 *
 * Filled by spine_import_batch (spine.h) and the DragonBones importer;
 * the route stores the asset with asset_set_add(file, ids, ids_len)
 * before it applies the batch (so the slots' layers "FILE#GROUP"
 * validate), then answers with the counts and the two lists. Header only:
 * no module of its own, so both importers and the route can include it.
 */
#ifndef RIGD_SKEL_REPORT_H
#define RIGD_SKEL_REPORT_H

#include <stdlib.h>

#define SKEL_FILE_MAX 128   /* bytes of an asset file name, not counting NUL */

typedef struct skel_import_report {
	/* The asset's file name: the body's "file" ([A-Za-z0-9_.-], 1..128,
	 * not starting with '.') or the importer's default. */
	char file[SKEL_FILE_MAX + 1];
	/* The skeleton file to store as the asset (owned; UTF-8 JSON, not
	 * NUL-counted: asset_len bytes, a NUL follows them). */
	char *asset;
	size_t asset_len;
	/* The asset's element ids, one per line, each line ended by '\n'
	 * (what asset_set_add takes): every GROUP = encoded slot name + "." +
	 * encoded attachment name over all skins, sorted, each once. Owned;
	 * NULL with ids_len 0 when there is none. */
	char *ids;
	size_t ids_len;
	int n_ids;
	/* What the file holds. */
	int bones, slots, skins, clips;
	/* Features kept verbatim in the stored file and not evaluated live
	 * ("ik 'aim': not solved live"), one per line, each '\n'-ended;
	 * owned, NULL when empty. */
	char *kept;
	size_t kept_len;
	int n_kept;
	/* Where the setup pose's worlds differ from the authoring runtime's
	 * ("not applied: the setup pose's worlds differ from the runtime's for
	 * bones X, Y (ik 'aim', mix 1)"), one per line, '\n'-ended; owned,
	 * NULL when empty. */
	char *not_applied;
	size_t not_applied_len;
	int n_not_applied;
} skel_import_report;

/* Frees what *r owns and zeroes it; accepts NULL. */
static inline void skel_import_report_release(skel_import_report *r)
{
	if (!r)
		return;
	free(r->asset);
	free(r->ids);
	free(r->kept);
	free(r->not_applied);
	*r = (skel_import_report){0};
}

#endif

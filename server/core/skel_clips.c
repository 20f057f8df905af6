/*
 * skel_clips.c: the skeletons of a scene and their clips (skel_clips.h).
 *
 * A plain array of owned skeletons, in the order the engine added them; a
 * scene holds a handful, so a look-up by file name is a linear scan.
 * Never parses JSON and never touches a node.
 */
#include "skel_clips.h"

#include "err.h"

#include <stdlib.h>
#include <string.h>

struct skel_set {
	skel_clips **k;                  /* owned */
	int n, cap;
};

skel_clips *skel_clips_new(const char *file, int format, int n_bones, int n_slots)
{
	skel_clips *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	k->format = format;
	k->file = strdup(file);
	k->bones = n_bones ? calloc((size_t)n_bones, sizeof(*k->bones)) : NULL;
	k->slots = n_slots ? calloc((size_t)n_slots, sizeof(*k->slots)) : NULL;
	k->n_bones = n_bones;
	k->n_slots = n_slots;
	if (!k->file || (n_bones && !k->bones) || (n_slots && !k->slots)) {
		skel_clips_free(k);
		return NULL;
	}
	for (int i = 0; i < n_bones; i++)
		k->bones[i].setup = clip_channels_identity();
	return k;
}

void skel_clips_free(skel_clips *k)
{
	if (!k)
		return;
	for (int i = 0; k->slots && i < k->n_slots; i++)
		free(k->slots[i].setup_group);
	free(k->slots);
	free(k->bones);
	free(k->iks);
	clip_set_release(&k->clips);
	free(k->file);
	free(k);
}

skel_set *skel_set_new(void)
{
	return calloc(1, sizeof(skel_set));
}

void skel_set_free(skel_set *ks)
{
	if (!ks)
		return;
	for (int i = 0; i < ks->n; i++)
		skel_clips_free(ks->k[i]);
	free(ks->k);
	free(ks);
}

int skel_set_count(const skel_set *ks)
{
	return ks ? ks->n : 0;
}

const skel_clips *skel_set_at(const skel_set *ks, int i)
{
	return ks->k[i];
}

static int find(const skel_set *ks, const char *file)
{
	for (int i = 0; ks && i < ks->n; i++)
		if (strcmp(ks->k[i]->file, file) == 0)
			return i;
	return -1;
}

const skel_clips *skel_set_find(const skel_set *ks, const char *file)
{
	int i = find(ks, file);

	return i < 0 ? NULL : ks->k[i];
}

int skel_set_add(skel_set *ks, skel_clips *k)
{
	int at = find(ks, k->file);

	if (at >= 0) {
		/* The same file's bytes never change, so this replaces a
		 * skeleton with its equal (or one a failed commit left). */
		skel_clips_free(ks->k[at]);
		ks->k[at] = k;
		return 0;
	}
	if (ks->n == ks->cap) {
		int nc = ks->cap ? 2 * ks->cap : 4;
		skel_clips **v = realloc(ks->k, sizeof(*v) * (size_t)nc);

		if (!v) {
			skel_clips_free(k);
			return RIGD_E_NOMEM;
		}
		ks->k = v;
		ks->cap = nc;
	}
	ks->k[ks->n++] = k;
	return 0;
}

void skel_set_remove(skel_set *ks, const char *file)
{
	int i = find(ks, file);

	if (i < 0)
		return;
	/* i >= 0: ks is not NULL. */
	skel_clips_free(ks->k[i]);
	memmove(&ks->k[i], &ks->k[i + 1], sizeof(*ks->k) * (size_t)(ks->n - i - 1));
	ks->n--;
}

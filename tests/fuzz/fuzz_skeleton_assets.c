/*
 * fuzz_skeleton_assets.c: libFuzzer target for the files a skeleton import
 * uploads beside its skeleton: PNG pages (png_check) and texture atlases
 * (atlas_read_spine, atlas_read_dragonbones).
 *
 * The first byte chooses the reader (its value modulo 3: PNG, Spine
 * .atlas, DragonBones _tex.json); the rest is the file. PNGs are checked
 * with small limits (sides up to 256, 256 KiB of RGBA) so that the limit
 * paths are reached and a run stays fast. Checks:
 *   - refused: bad_image (PNG) or bad_atlas (atlases), or nomem, with the
 *     field "images" or "atlas" and every output empty;
 *   - a PNG kept: within the limits; the canonical file is accepted again
 *     and re-encodes to the same bytes and the same pixels (a fixed point:
 *     the stored file is our own encoding);
 *   - an atlas kept: within the limits, each page's regions a range of the
 *     list in order, each region inside its page and its trim, names UTF-8
 *     and found again by name and index; read again with images of the
 *     pages' own sizes it is accepted with the same regions, and with one
 *     page's image a pixel wider it is refused.
 */
#include "codec/atlas.h"
#include "codec/png.h"
#include "core/err.h"

#include "fuzz_common.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_png(const uint8_t *data, size_t size)
{
	png_limits lim = png_limits_default();
	png_image_info info, again_info;
	unsigned char *canon, *rgba, *again, *again_rgba;
	size_t clen, alen;
	edit_error e;

	lim.max_side = 256;
	lim.max_pixel_bytes = 256u << 10;
	int rc = png_check(data, size, &lim, "f.png", &info, &canon, &clen, &rgba, &e);
	if (rc) {
		FUZZ_CHECK(rc == RIGD_E_BAD_IMAGE || rc == RIGD_E_NOMEM, "refused with %s",
			   err_code(rc));
		FUZZ_CHECK(e.code == rc && !strcmp(e.field, "images"), "error names '%s'", e.field);
		FUZZ_CHECK(!canon && !clen && !rgba, "refusal with output");
		return;
	}
	FUZZ_CHECK(info.width >= 1 && info.height >= 1 && info.width <= 256 && info.height <= 256,
		   "%u x %u kept", info.width, info.height);
	FUZZ_CHECK((size_t)info.width * info.height * 4 <= lim.max_pixel_bytes, "pixel bytes");
	FUZZ_CHECK(canon && clen > 8 && rgba, "no output");
	rc = png_check(canon, clen, &lim, "f.png", &again_info, &again, &alen, &again_rgba, &e);
	FUZZ_CHECK(rc == 0, "canonical file refused: %s", e.message);
	FUZZ_CHECK(again_info.width == info.width && again_info.height == info.height &&
			   again_info.bit_depth == 8 && again_info.color_type == 6 &&
			   !again_info.interlaced,
		   "canonical file is %u x %u, depth %d, type %d", again_info.width,
		   again_info.height, again_info.bit_depth, again_info.color_type);
	FUZZ_CHECK(alen == clen && !memcmp(again, canon, clen), "not a fixed point");
	FUZZ_CHECK(!memcmp(again_rgba, rgba, (size_t)info.width * info.height * 4),
		   "pixels changed in re-encoding");
	free(again);
	free(again_rgba);
	free(canon);
	free(rgba);
}

static void check_kept(const atlas *a, const atlas_limits *lim)
{
	FUZZ_CHECK(a->n_pages >= 1 && a->n_pages <= lim->max_pages, "%d pages", a->n_pages);
	FUZZ_CHECK(a->n_regions <= lim->max_regions, "%d regions", a->n_regions);
	int next = 0;
	for (int i = 0; i < a->n_pages; i++) {
		const atlas_page *p = &a->pages[i];
		fuzz_check_utf8(p->name, strlen(p->name), "page name");
		FUZZ_CHECK(p->first_region == next, "page %d starts at %d, not %d", i,
			   p->first_region, next);
		FUZZ_CHECK(p->width >= 1 && p->height >= 1, "page %d is %d x %d", i, p->width,
			   p->height);
		next += p->n_regions;
	}
	FUZZ_CHECK(next == a->n_regions, "pages hold %d of %d regions", next, a->n_regions);
	for (int i = 0; i < a->n_regions; i++) {
		const atlas_region *g = &a->regions[i];
		const atlas_page *p = &a->pages[g->page];
		FUZZ_CHECK(i >= p->first_region && i < p->first_region + p->n_regions,
			   "region %d outside its page's range", i);
		fuzz_check_utf8(g->name, strlen(g->name), "region name");
		FUZZ_CHECK(g->x >= 0 && g->y >= 0 && g->w >= 0 && g->h >= 0 &&
				   g->x + g->w <= p->width && g->y + g->h <= p->height,
			   "region '%s' %d,%d,%d,%d leaves %d x %d", g->name, g->x, g->y, g->w,
			   g->h, p->width, p->height);
		bool turned = g->rotate_deg == 90 || g->rotate_deg == 270;
		FUZZ_CHECK(g->rotate_deg % 90 == 0 && g->rotate_deg >= 0 && g->rotate_deg < 360,
			   "rotate %d", g->rotate_deg);
		int uw = turned ? g->h : g->w, uh = turned ? g->w : g->h;
		FUZZ_CHECK(g->offset_x >= 0 && g->offset_y >= 0 &&
				   g->offset_x + uw <= g->orig_width &&
				   g->offset_y + uh <= g->orig_height,
			   "region '%s' leaves its trim", g->name);
		FUZZ_CHECK(atlas_find_region(a, g->page, g->name, g->index) == i,
			   "region '%s' index %d not found as itself", g->name, g->index);
	}
}

typedef int (*atlas_reader)(const char *, size_t, const atlas_limits *, const atlas_image *,
			    int, atlas *, edit_error *);

static void fuzz_atlas(atlas_reader read, const char *text, size_t size)
{
	atlas_limits lim = atlas_limits_default();
	atlas a, b;
	edit_error e;

	lim.max_pages = 8;
	lim.max_regions = 256;
	lim.max_line = 512;
	int rc = read(text, size, &lim, NULL, 0, &a, &e);
	if (rc) {
		FUZZ_CHECK(rc == RIGD_E_BAD_ATLAS || rc == RIGD_E_NOMEM, "refused with %s",
			   err_code(rc));
		FUZZ_CHECK(e.code == rc && !strcmp(e.field, "atlas"), "error names '%s'", e.field);
		FUZZ_CHECK(!a.pages && !a.regions && !a.n_pages && !a.n_regions,
			   "refusal with output");
		return;
	}
	check_kept(&a, &lim);
	atlas_image *im = calloc((size_t)a.n_pages, sizeof(*im));
	FUZZ_CHECK(im, "out of memory");
	for (int i = 0; i < a.n_pages; i++)
		im[i] = (atlas_image){a.pages[i].name, (uint32_t)a.pages[i].width,
				      (uint32_t)a.pages[i].height};
	rc = read(text, size, &lim, im, a.n_pages, &b, &e);
	FUZZ_CHECK(rc == 0, "refused with the pages' own images: %s", e.message);
	FUZZ_CHECK(b.n_regions == a.n_regions && b.n_pages == a.n_pages, "read differently");
	for (int i = 0; i < a.n_regions; i++)
		FUZZ_CHECK(!strcmp(a.regions[i].name, b.regions[i].name) &&
				   a.regions[i].x == b.regions[i].x && a.regions[i].w == b.regions[i].w,
			   "region %d read differently", i);
	atlas_release(&b);
	im[0].width++;
	rc = read(text, size, &lim, im, a.n_pages, &b, &e);
	FUZZ_CHECK(rc == RIGD_E_BAD_ATLAS, "accepted with an image of another size");
	free(im);
	atlas_release(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	const uint8_t *file = data + 1;
	size_t n = size - 1;
	switch (data[0] % 3) {
	case 0:
		fuzz_png(file, n);
		break;
	case 1:
		fuzz_atlas(atlas_read_spine, (const char *)file, n);
		break;
	default:
		fuzz_atlas(atlas_read_dragonbones, (const char *)file, n);
		break;
	}
	return 0;
}

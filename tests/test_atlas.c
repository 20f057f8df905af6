/*
 * test_atlas.c: texture atlases (server/codec/atlas.c).
 *
 * Spine: tests/data/atlas/two-pages.atlas (4.x keys, two pages, regions
 * turned 90 and 270 degrees, a name used twice with two indices, kept
 * keys) and old-keys.atlas (the older xy/size/orig/offset keys, CRLF line
 * ends, a leading blank line); the rectangles expected are worked out by
 * hand from docs/atlas.md. DragonBones: the real mecha_1406_tex.json (read
 * from beside the glTF samples, RIGD_GLTF_SAMPLES/../dragonbones; skipped
 * when absent) with its PNG through png_check, and small_tex.json (a
 * trimmed frame, a rotated region). Then the refusals: bad_atlas, field
 * "atlas", the line or SubTexture, region and page in the message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/atlas.h"
#include "codec/png.h"
#include "core/err.h"

#define DATA RIGD_SOURCE_DIR "/tests/data/atlas/"
#define MECHA RIGD_GLTF_SAMPLES "/../dragonbones/mecha_1406/mecha_1406_tex"

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	long n = ftell(f);
	assert_true(n >= 0);
	assert_int_equal(fseek(f, 0, SEEK_SET), 0);
	char *buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = 0;
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static void rect(const atlas_region *g, int x, int y, int w, int h, int rot)
{
	assert_int_equal(g->x, x);
	assert_int_equal(g->y, y);
	assert_int_equal(g->w, w);
	assert_int_equal(g->h, h);
	assert_int_equal(g->rotate_deg, rot);
}

static void trim(const atlas_region *g, int ox, int oy, int ow, int oh)
{
	assert_int_equal(g->offset_x, ox);
	assert_int_equal(g->offset_y, oy);
	assert_int_equal(g->orig_width, ow);
	assert_int_equal(g->orig_height, oh);
}

static void test_spine_two_pages(void **state)
{
	(void)state;
	size_t n;
	char *text = read_file(DATA "two-pages.atlas", &n);
	atlas a;
	edit_error e;
	int rc = atlas_read_spine(text, n, NULL, NULL, 0, &a, &e);
	if (rc)
		print_message("%s\n", e.message);
	assert_int_equal(rc, 0);
	assert_int_equal(a.n_pages, 2);
	assert_int_equal(a.n_regions, 4);
	atlas_page *p = &a.pages[0];
	assert_string_equal(p->name, "hero.png");
	assert_int_equal(p->width, 256);
	assert_int_equal(p->height, 128);
	assert_string_equal(p->format, "RGBA8888");
	assert_string_equal(p->filter_min, "Linear");
	assert_string_equal(p->filter_mag, "Linear");
	assert_string_equal(p->repeat, "none");
	assert_true(p->pma);
	assert_true(p->scale == 1.0);
	assert_int_equal(p->first_region, 0);
	assert_int_equal(p->n_regions, 3);
	p = &a.pages[1];
	assert_string_equal(p->name, "hero2.png");
	assert_int_equal(p->width, 128);
	assert_int_equal(p->height, 64);
	assert_false(p->pma);
	assert_true(p->scale == 0.5);
	assert_string_equal(p->format, "RGBA8888");   /* the default */
	assert_string_equal(p->filter_min, "Nearest");
	assert_int_equal(p->first_region, 3);
	assert_int_equal(p->n_regions, 1);

	const atlas_region *g = &a.regions[0];
	assert_string_equal(g->name, "head");
	assert_int_equal(g->line, 7);
	rect(g, 2, 2, 100, 60, 0);
	trim(g, 3, 4, 110, 70);
	assert_int_equal(g->index, -1);
	/* Turned 90 degrees: bounds 50 x 120 cover 120 across, 50 down. */
	g = &a.regions[1];
	assert_string_equal(g->name, "torso");
	rect(g, 104, 2, 120, 50, 90);
	trim(g, 0, 0, 50, 120);
	assert_int_equal(g->index, 0);
	g = &a.regions[2];
	rect(g, 160, 60, 20, 30, 0);
	assert_int_equal(g->index, 1);
	assert_int_equal(g->n_extra, 2);
	assert_string_equal(g->extra[0].key, "split");
	assert_string_equal(g->extra[0].value, "1, 2, 3, 4");
	assert_string_equal(g->extra[1].key, "pad");
	assert_string_equal(g->extra[1].value, "-1, -1, 2, 2");
	/* 270 degrees, unindented keys: 32 x 100 covers 100 x 32 of 128 x 64
	 * (unturned it would leave the page). */
	g = &a.regions[3];
	assert_string_equal(g->name, "arm");
	assert_int_equal(g->page, 1);
	rect(g, 0, 0, 100, 32, 270);
	assert_int_equal(atlas_find_region(&a, 0, "torso", 1), 2);
	assert_int_equal(atlas_find_region(&a, 0, "torso", 0), 1);
	assert_int_equal(atlas_find_region(&a, 1, "torso", 0), -1);
	assert_int_equal(atlas_find_region(&a, 1, "arm", -1), 3);
	atlas_release(&a);

	/* With the images given: sizes must match, and a page needs its image. */
	atlas_image im[2] = {{"hero.png", 256, 128}, {"hero2.png", 128, 64}};
	assert_int_equal(atlas_read_spine(text, n, NULL, im, 2, &a, &e), 0);
	atlas_release(&a);
	im[1].height = 65;
	assert_int_equal(atlas_read_spine(text, n, NULL, im, 2, &a, &e), RIGD_E_BAD_ATLAS);
	assert_string_equal(e.message,
			    "atlas line 20: page 'hero2.png' is 128 x 64 but its image is 128 x 65");
	assert_int_equal(a.n_pages, 0);
	assert_null(a.pages);
	assert_int_equal(atlas_read_spine(text, n, NULL, im, 1, &a, &e), RIGD_E_BAD_ATLAS);
	assert_string_equal(e.message,
			    "atlas line 20: page 'hero2.png': no uploaded image of that name");
	free(text);
}

static void test_spine_old_keys(void **state)
{
	(void)state;
	size_t n;
	char *text = read_file(DATA "old-keys.atlas", &n);
	atlas a;
	edit_error e;
	int rc = atlas_read_spine(text, n, NULL, NULL, 0, &a, &e);
	if (rc)
		print_message("%s\n", e.message);
	assert_int_equal(rc, 0);
	assert_int_equal(a.n_pages, 1);
	assert_int_equal(a.pages[0].width, 512);
	assert_int_equal(a.pages[0].height, 256);
	assert_int_equal(a.n_regions, 2);
	/* rotate: true is 90 degrees; size 26 x 108 covers 108 x 26. */
	rect(&a.regions[0], 372, 100, 108, 26, 90);
	trim(&a.regions[0], 0, 0, 26, 108);
	assert_int_equal(a.regions[0].line, 7);
	rect(&a.regions[1], 10, 20, 21, 42, 0);
	trim(&a.regions[1], 2, 3, 25, 50);
	assert_int_equal(a.regions[1].index, -1);
	atlas_release(&a);
	free(text);
}

/* Expects a Spine atlas refused with bad_atlas and exactly 'message'. */
static void spine_refused_lim(const char *text, const atlas_limits *lim, const char *message)
{
	atlas a;
	edit_error e;
	int rc = atlas_read_spine(text, strlen(text), lim, NULL, 0, &a, &e);
	if (rc != RIGD_E_BAD_ATLAS || strcmp(e.message, message))
		print_message("got %d '%s'\nwanted  '%s'\n", rc, rc ? e.message : "", message);
	assert_int_equal(rc, RIGD_E_BAD_ATLAS);
	assert_string_equal(e.field, "atlas");
	assert_string_equal(e.message, message);
	assert_null(a.pages);
	assert_null(a.regions);
}

static void spine_refused(const char *text, const char *message)
{
	spine_refused_lim(text, NULL, message);
}

static void test_spine_refusals(void **state)
{
	(void)state;
	/* The region at line 14 leaves its 256 x 256 page. */
	spine_refused("hero.png\nsize: 256, 256\nformat: RGBA8888\nfilter: Linear, Linear\n"
		      "repeat: none\nneck\n  bounds: 0, 0, 10, 10\nbody\n  bounds: 10, 0, 10, 10\n"
		      "  offsets: 0, 0, 10, 10\n  rotate: false\n  index: -1\n  split: 1, 1, 1, 1\n"
		      "head\n  bounds: 300, 10, 64, 64\n",
		      "atlas line 14: region 'head': bounds 300,10,64,64 leave page 'hero.png' (256 x 256)");
	spine_refused("p.png\nsize: 64, 64\nleg\nbounds: 0, 0, 10, 70\nrotate: 90\n",
		      "atlas line 3: region 'leg': bounds 0,0,10,70 turned 90 degrees leave page 'p.png' (64 x 64)");
	spine_refused("p.png\nsize: 64, 64\nleg\nbounds: 0, 60, 8, 5\n",
		      "atlas line 3: region 'leg': bounds 0,60,8,5 leave page 'p.png' (64 x 64)");
	spine_refused("p.png\nsize: 64,64\na\nbounds: 0,0,1,1\nb\nbounds: 0,0,1,1\na\nbounds: 1,1,1,1\n",
		      "atlas line 7: region 'a': a second region of that name and index -1 on page 'p.png' (line 3)");
	spine_refused("p.png\nsize: 64,64\na\nbounds: 1.5,0,1,1\n",
		      "atlas line 4: region 'a': bounds '1.5,0,1,1' is not 4 integers 0 to 65535");
	spine_refused("p.png\nsize: 64,64\na\nbounds: -1,0,1,1\n",
		      "atlas line 4: region 'a': bounds '-1,0,1,1' is not 4 integers 0 to 65535");
	spine_refused("p.png\nsize: 64,64\na\nbounds: 1e3,0,1,1\n",
		      "atlas line 4: region 'a': bounds '1e3,0,1,1' is not 4 integers 0 to 65535");
	spine_refused("p.png\nsize: 64,64\na\nbounds: 0,0,1\n",
		      "atlas line 4: region 'a': bounds '0,0,1' is not 4 integers 0 to 65535");
	spine_refused("p.png\nsize: 64,64\na\nbounds: 0,0,1,1,1\n",
		      "atlas line 4: region 'a': bounds '0,0,1,1,1' is not 4 integers 0 to 65535");
	spine_refused("p.png\nsize: 64,64\na\nbounds: 0,0,99999,1\n",
		      "atlas line 4: region 'a': bounds '0,0,99999,1' is not 4 integers 0 to 65535");
	spine_refused("p.png\nsize: 64,64\na\nbounds: 0,0,nan,1\n",
		      "atlas line 4: region 'a': bounds '0,0,nan,1' is not 4 integers 0 to 65535");
	spine_refused("size: 64,64\np.png\n", "atlas line 1: key 'size' before a page name");
	spine_refused("p.png\nsize: 64,64\na\nrotate: 45\nbounds: 0,0,1,1\n",
		      "atlas line 4: region 'a': rotate '45' is not true, false, 0, 90, 180 or 270");
	spine_refused("p.png\nsize: 64,64\na\nbounds: 0,0,1,1\nbounds: 0,0,1,1\n",
		      "atlas line 5: key 'bounds' given twice");
	spine_refused("p.png\nsize: 64,64\na\nindex: 2\n",
		      "atlas line 3: region 'a': no bounds (nor xy and size)");
	spine_refused("p.png\nsize: 64,64\na\nbounds: 0,0,4,4\nxy: 0,0\n",
		      "atlas line 3: region 'a': mixes bounds/offsets with xy/size/orig/offset");
	spine_refused("p.png\nsize: 64,64\na\nbounds: 0,0,10,10\noffsets: 2,0,11,10\n",
		      "atlas line 3: region 'a': its 10 x 10 pixels at offset 2,0 leave its original 11 x 10");
	spine_refused("p.png\nsize: 1,1\n\np.png\nsize: 1,1\n", "atlas line 4: page 'p.png' named a second time");
	spine_refused("p.png\nformat: RGBA8888\n",
		      "atlas line 1: page 'p.png': size 0 x 0 (1 to 65535 each; absent, it comes from the image)");
	spine_refused("p.png\nsize: 64,64\npma: yes\n",
		      "atlas line 3: page 'p.png': pma 'yes' is not true or false");
	spine_refused("p.png\nsize: 64,64\nscale: inf\n",
		      "atlas line 3: page 'p.png': scale 'inf' is not a positive number");
	spine_refused("p.png\nsize: 64,64\nrepeat: z\n",
		      "atlas line 3: page 'p.png': repeat 'z' is not x, y, xy or none");
	spine_refused("p.png\nsize: 64,64\nb\x01""ad\nbounds: 0,0,1,1\n",
		      "atlas line 3: region name is not UTF-8 text");
	spine_refused("p.png\nsize: 64,64\n\xc0\xaf\nbounds: 0,0,1,1\n",
		      "atlas line 3: region name is not UTF-8 text");
	spine_refused("", "atlas: no page");

	atlas_limits lim = atlas_limits_default();
	lim.max_pages = 2;
	spine_refused_lim("a.png\nsize: 1,1\n\nb.png\nsize: 1,1\n\nc.png\nsize: 1,1\n", &lim,
			  "atlas line 7: more than 2 pages");
	lim = atlas_limits_default();
	lim.max_regions = 2;
	spine_refused_lim("a.png\nsize: 9,9\nr\nbounds: 0,0,1,1\ns\nbounds: 0,0,1,1\nt\n", &lim,
			  "atlas line 7: more than 2 regions");
	lim = atlas_limits_default();
	lim.max_line = 16;
	spine_refused_lim("a.png\nsize: 9,9\nregion-with-a-long-name\n", &lim,
			  "atlas line 3: 23 bytes, over the limit of 16");
	lim = atlas_limits_default();
	lim.max_bytes = 10;
	spine_refused_lim("a.png\nsize: 9,9\n", &lim, "atlas: 16 bytes, over the limit of 10");
}

static void test_dragonbones_small(void **state)
{
	(void)state;
	size_t n;
	char *json = read_file(DATA "small_tex.json", &n);
	atlas a;
	edit_error e;
	int rc = atlas_read_dragonbones(json, n, NULL, NULL, 0, &a, &e);
	if (rc)
		print_message("%s\n", e.message);
	assert_int_equal(rc, 0);
	assert_int_equal(a.n_pages, 1);
	assert_string_equal(a.pages[0].name, "small_tex.png");
	assert_int_equal(a.pages[0].width, 64);
	assert_int_equal(a.pages[0].n_regions, 3);
	assert_string_equal(a.pages[0].extra[0].key, "name");
	assert_string_equal(a.pages[0].extra[0].value, "small");
	/* frameX -2, frameY -3 in a 16 x 30 frame: 2 columns stripped at the
	 * left, 3 rows at the top, so 30 - 20 - 3 = 7 at the bottom. */
	rect(&a.regions[0], 0, 0, 10, 20, 0);
	trim(&a.regions[0], 2, 7, 16, 30);
	/* Rotated: covers 20 x 10 in the page, an image of 10 x 20. */
	rect(&a.regions[1], 0, 20, 20, 10, 90);
	trim(&a.regions[1], 0, 0, 10, 20);
	rect(&a.regions[2], 54, 44, 10, 20, 0);
	atlas_release(&a);
	free(json);
}

static void test_dragonbones_mecha(void **state)
{
	(void)state;
	if (access(MECHA ".json", R_OK) != 0) {
		print_message("DragonBones sample not found at %s.json\n", MECHA);
		skip();
	}
	size_t n, pn;
	char *json = read_file(MECHA ".json", &n);
	char *png = read_file(MECHA ".png", &pn);
	png_image_info info;
	unsigned char *canon;
	size_t clen;
	edit_error e;
	assert_int_equal(png_check((unsigned char *)png, pn, NULL, "mecha_1406_tex.png", &info,
				   &canon, &clen, NULL, &e), 0);
	free(canon);
	assert_int_equal(info.width, 256);
	assert_int_equal(info.height, 512);
	atlas_image im = {"mecha_1406_tex.png", info.width, info.height};
	atlas a;
	int rc = atlas_read_dragonbones(json, n, NULL, &im, 1, &a, &e);
	if (rc)
		print_message("%s\n", e.message);
	assert_int_equal(rc, 0);
	assert_int_equal(a.n_pages, 1);
	assert_int_equal(a.n_regions, 13);
	int i = atlas_find_region(&a, 0, "mecha_1406_folder/shouder_l", -1);
	assert_true(i >= 0);
	rect(&a.regions[i], 143, 193, 85, 59, 0);
	trim(&a.regions[i], 0, 0, 85, 59);
	i = atlas_find_region(&a, 0, "mecha_1406_folder/chest", -1);
	assert_true(i >= 0);
	rect(&a.regions[i], 1, 1, 132, 136, 0);
	atlas_release(&a);
	/* Its image a pixel shorter: refused. */
	im.height = 511;
	assert_int_equal(atlas_read_dragonbones(json, n, NULL, &im, 1, &a, &e), RIGD_E_BAD_ATLAS);
	assert_string_equal(e.message,
			    "atlas: page 'mecha_1406_tex.png' is 256 x 512 but its image is 256 x 511");
	free(json);
	free(png);
}

static void db_refused(const char *json, const char *message)
{
	atlas a;
	edit_error e;
	int rc = atlas_read_dragonbones(json, strlen(json), NULL, NULL, 0, &a, &e);
	if (rc != RIGD_E_BAD_ATLAS || strcmp(e.message, message))
		print_message("got %d '%s'\nwanted  '%s'\n", rc, rc ? e.message : "", message);
	assert_int_equal(rc, RIGD_E_BAD_ATLAS);
	assert_string_equal(e.field, "atlas");
	assert_string_equal(e.message, message);
	assert_null(a.pages);
}

#define DB_HEAD "{\"imagePath\":\"a.png\",\"width\":32,\"height\":32,\"SubTexture\":["

static void test_dragonbones_refusals(void **state)
{
	(void)state;
	size_t n;
	char *json = read_file(DATA "out-of-page_tex.json", &n);
	db_refused(json, "atlas SubTexture[1]: region 'b': x,y,width,height 30,0,8,8 leave page 'a.png' (32 x 32)");
	free(json);
	db_refused("{", "atlas: not valid JSON");
	db_refused("[]", "atlas: not a JSON object");
	db_refused("{\"SubTexture\":[]}", "atlas: no imagePath string");
	db_refused("{\"imagePath\":\"a.png\",\"width\":32,\"height\":32}", "atlas: no SubTexture array");
	db_refused("{\"imagePath\":\"a.png\",\"width\":1.5,\"height\":32,\"SubTexture\":[]}",
		   "atlas: width is not an integer 0 to 65535");
	db_refused("{\"imagePath\":\"a.png\",\"SubTexture\":[]}",
		   "atlas: page 'a.png': size 0 x 0 (1 to 65535 each; absent, it comes from the image)");
	db_refused(DB_HEAD "{\"name\":\"a\",\"x\":\"1\",\"y\":0,\"width\":1,\"height\":1}]}",
		   "atlas SubTexture[0]: region 'a': x is not an integer 0 to 65535");
	db_refused(DB_HEAD "{\"name\":\"a\",\"x\":-1,\"y\":0,\"width\":1,\"height\":1}]}",
		   "atlas SubTexture[0]: region 'a': x is not an integer 0 to 65535");
	db_refused(DB_HEAD "{\"name\":\"a\",\"x\":0,\"y\":0,\"width\":1e9,\"height\":1}]}",
		   "atlas SubTexture[0]: region 'a': width is not an integer 0 to 65535");
	db_refused(DB_HEAD "{\"name\":\"a\",\"x\":0,\"y\":0,\"width\":1}]}",
		   "atlas SubTexture[0]: region 'a': no height");
	db_refused(DB_HEAD "{\"x\":0,\"y\":0,\"width\":1,\"height\":1}]}",
		   "atlas SubTexture[0]: no name string");
	db_refused(DB_HEAD "7]}", "atlas SubTexture[0]: not an object");
	db_refused(DB_HEAD "{\"name\":\"a\",\"x\":0,\"y\":0,\"width\":1,\"height\":1,\"rotated\":1}]}",
		   "atlas SubTexture[0]: region 'a': rotated is not true or false");
	db_refused(DB_HEAD "{\"name\":\"a\",\"x\":0,\"y\":0,\"width\":4,\"height\":4,\"frameX\":2}]}",
		   "atlas SubTexture[0]: region 'a': frameX is not an integer -65535 to 0");
	db_refused(DB_HEAD "{\"name\":\"a\",\"x\":0,\"y\":0,\"width\":4,\"height\":4,\"frameX\":-1,\"frameWidth\":4}]}",
		   "atlas SubTexture[0]: region 'a': its 4 x 4 pixels at frame -1,0 leave the frame 4 x 4");
	db_refused(DB_HEAD "{\"name\":\"a\",\"x\":0,\"y\":0,\"width\":1,\"height\":1},"
		   "{\"name\":\"b\",\"x\":0,\"y\":0,\"width\":1,\"height\":1},"
		   "{\"name\":\"a\",\"x\":1,\"y\":0,\"width\":1,\"height\":1}]}",
		   "atlas SubTexture[2]: region 'a': a second region of that name (SubTexture[0])");
	db_refused(DB_HEAD "{\"name\":\"\",\"x\":0,\"y\":0,\"width\":1,\"height\":1}]}",
		   "atlas SubTexture[0]: region name of 0 bytes (1 to 255)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spine_two_pages),
		cmocka_unit_test(test_spine_old_keys),
		cmocka_unit_test(test_spine_refusals),
		cmocka_unit_test(test_dragonbones_small),
		cmocka_unit_test(test_dragonbones_mecha),
		cmocka_unit_test(test_dragonbones_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

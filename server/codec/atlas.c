/*
 * atlas.c: Spine .atlas and DragonBones _tex.json texture atlases (atlas.h)
 * into one list of pages and regions, and the checks both share.
 *
 * It reads untrusted text: it must never read past 'len', accept a number
 * that is not a plain integer in range, or keep a region that leaves its
 * page. The line-by-line reader keeps the state of the entry being read in
 * a 'reader'; the checks run once the whole file is read.
 */
#include "atlas.h"

#include "core/err.h"

#include <cjson/cJSON.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

atlas_limits atlas_limits_default(void)
{
	atlas_limits l = {
		.max_bytes = ATLAS_DEFAULT_MAX_BYTES,
		.max_line = ATLAS_DEFAULT_MAX_LINE,
		.max_pages = ATLAS_DEFAULT_MAX_PAGES,
		.max_regions = ATLAS_DEFAULT_MAX_REGIONS,
	};
	return l;
}

/* The keys of a region (Spine) that have a meaning here, as bits: each may
 * appear once. */
enum {
	K_BOUNDS = 1 << 0, K_XY = 1 << 1, K_SIZE = 1 << 2, K_OFFSETS = 1 << 3,
	K_OFFSET = 1 << 4, K_ORIG = 1 << 5, K_ROTATE = 1 << 6, K_INDEX = 1 << 7,
};
/* The same for a page. */
enum {
	P_SIZE = 1 << 0, P_FORMAT = 1 << 1, P_FILTER = 1 << 2, P_REPEAT = 1 << 3,
	P_PMA = 1 << 4, P_SCALE = 1 << 5,
};

/* The region being read, before it is checked and stored. */
typedef struct pending {
	bool open;
	int keys;                  /* K_* seen */
	int x, y, w, h;            /* unrotated width and height */
	int off_x, off_y, orig_w, orig_h;
} pending;

typedef struct reader {
	const atlas_limits *lim;
	atlas *a;
	int cap_pages, cap_regions;
	int *page_lines;           /* the line of each page's name (Spine) */
	int page_keys;             /* P_* seen on the current page */
	pending cur;
	bool json;                 /* DragonBones: locations are SubTexture indices */
	edit_error *err;
} reader;

/* Fills the error with "atlas line N: ..." (Spine) or "atlas
 * SubTexture[N]: ..." (DragonBones; line is the index + 1), or "atlas: ..."
 * for line 0. Returns RIGD_E_BAD_ATLAS. */
static int bad(reader *r, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int bad(reader *r, int line, const char *fmt, ...)
{
	char what[EDIT_MESSAGE_MAX], where[48];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (!line)
		snprintf(where, sizeof(where), "atlas");
	else if (r->json)
		snprintf(where, sizeof(where), "atlas SubTexture[%d]", line - 1);
	else
		snprintf(where, sizeof(where), "atlas line %d", line);
	edit_error_set(r->err, RIGD_E_BAD_ATLAS, -1, "atlas", "%s: %s", where, what);
	return RIGD_E_BAD_ATLAS;
}

static int nomem(reader *r)
{
	edit_error_set(r->err, RIGD_E_NOMEM, -1, "atlas", "%s", err_str(RIGD_E_NOMEM));
	return RIGD_E_NOMEM;
}

static char *dup_n(const char *s, size_t n)
{
	char *p = malloc(n + 1);

	if (p) {
		memcpy(p, s, n);
		p[n] = 0;
	}
	return p;
}

/* Whether 'n' bytes of 's' are UTF-8 without control characters (RFC 3629:
 * no overlong forms, surrogates or code points over U+10FFFF). */
static bool text_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < n;) {
		unsigned c = p[i], k, cp;
		if (c < 0x80) {
			if (c < 0x20 || c == 0x7f)
				return false;
			i++;
			continue;
		}
		k = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
		if (!k || c >= 0xF5 || n - i < k)
			return false;
		cp = c & (0x7F >> k);
		for (unsigned j = 1; j < k; j++) {
			if ((p[i + j] & 0xC0) != 0x80)
				return false;
			cp = cp << 6 | (p[i + j] & 0x3F);
		}
		if ((k == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
		    (k == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
			return false;
		i += k;
	}
	return true;
}

static int check_name(reader *r, int line, const char *what, const char *s, size_t n)
{
	if (!n || n > ATLAS_NAME_MAX)
		return bad(r, line, "%s name of %zu bytes (1 to %d)", what, n, ATLAS_NAME_MAX);
	if (!text_valid(s, n))
		return bad(r, line, "%s name is not UTF-8 text", what);
	return 0;
}

static int add_kv(reader *r, atlas_kv **list, int *n, const char *key, size_t klen,
		  const char *value, size_t vlen)
{
	atlas_kv *grown = realloc(*list, sizeof(**list) * (size_t)(*n + 1));
	if (!grown)
		return nomem(r);
	*list = grown;
	atlas_kv *kv = &grown[*n];
	kv->key = dup_n(key, klen);
	kv->value = dup_n(value, vlen);
	(*n)++;
	if (!kv->key || !kv->value)
		return nomem(r);
	return 0;
}

static void free_kv(atlas_kv *list, int n)
{
	for (int i = 0; i < n; i++) {
		free(list[i].key);
		free(list[i].value);
	}
	free(list);
}

void atlas_release(atlas *a)
{
	if (!a)
		return;
	for (int i = 0; i < a->n_pages; i++) {
		atlas_page *p = &a->pages[i];
		free(p->name);
		free(p->format);
		free(p->filter_min);
		free(p->filter_mag);
		free(p->repeat);
		free_kv(p->extra, p->n_extra);
	}
	for (int i = 0; i < a->n_regions; i++) {
		free(a->regions[i].name);
		free_kv(a->regions[i].extra, a->regions[i].n_extra);
	}
	free(a->pages);
	free(a->regions);
	memset(a, 0, sizeof(*a));
}

static int add_page(reader *r, int line, const char *name, size_t n)
{
	atlas *a = r->a;
	int rc = check_name(r, line, "page", name, n);

	if (rc)
		return rc;
	if (a->n_pages >= r->lim->max_pages)
		return bad(r, line, "more than %d pages", r->lim->max_pages);
	if (a->n_pages == r->cap_pages) {
		int cap = r->cap_pages ? r->cap_pages * 2 : 4;
		atlas_page *p = realloc(a->pages, sizeof(*p) * (size_t)cap);
		if (!p)
			return nomem(r);
		a->pages = p;
		int *l = realloc(r->page_lines, sizeof(*l) * (size_t)cap);
		if (!l)
			return nomem(r);
		r->page_lines = l;
		r->cap_pages = cap;
	}
	atlas_page *p = &a->pages[a->n_pages];
	memset(p, 0, sizeof(*p));
	p->scale = 1;
	p->first_region = a->n_regions;
	r->page_lines[a->n_pages] = line;
	a->n_pages++;
	r->page_keys = 0;
	p->name = dup_n(name, n);
	if (!p->name)
		return nomem(r);
	return 0;
}

/* Appends a region named 'name' to the last page, zeroed but for its name,
 * page, index (-1) and line. */
static int add_region(reader *r, int line, const char *name, size_t n)
{
	atlas *a = r->a;
	int rc = check_name(r, line, "region", name, n);

	if (rc)
		return rc;
	if (a->n_regions >= r->lim->max_regions)
		return bad(r, line, "more than %d regions", r->lim->max_regions);
	if (a->n_regions == r->cap_regions) {
		int cap = r->cap_regions ? r->cap_regions * 2 : 16;
		atlas_region *g = realloc(a->regions, sizeof(*g) * (size_t)cap);
		if (!g)
			return nomem(r);
		a->regions = g;
		r->cap_regions = cap;
	}
	atlas_region *g = &a->regions[a->n_regions++];
	memset(g, 0, sizeof(*g));
	g->page = a->n_pages - 1;
	g->index = -1;
	g->line = line;
	a->pages[g->page].n_regions++;
	g->name = dup_n(name, n);
	if (!g->name)
		return nomem(r);
	return 0;
}

static const char *trim(const char *s, size_t *n)
{
	while (*n && (*s == ' ' || *s == '\t')) {
		s++;
		(*n)--;
	}
	while (*n && (s[*n - 1] == ' ' || s[*n - 1] == '\t'))
		(*n)--;
	return s;
}

/* Parses 'want' comma-separated integers of 'value' into 'out': digits
 * only (a leading '-' when 'signed_ok'), each at most ATLAS_COORD_MAX in
 * size. Returns 0 or -1. */
static int parse_ints(const char *value, size_t n, int want, bool signed_ok, int *out)
{
	size_t i = 0;

	for (int k = 0; k < want; k++) {
		size_t start = i;
		while (i < n && value[i] != ',')
			i++;
		size_t len = i - start;
		const char *f = trim(value + start, &len);
		bool neg = len && f[0] == '-';
		if (neg && !signed_ok)
			return -1;
		if (neg) {
			f++;
			len--;
		}
		if (!len || len > 5)
			return -1;
		long v = 0;
		for (size_t j = 0; j < len; j++) {
			if (f[j] < '0' || f[j] > '9')
				return -1;
			v = v * 10 + (f[j] - '0');
		}
		if (v > ATLAS_COORD_MAX)
			return -1;
		out[k] = (int)(neg ? -v : v);
		if (k + 1 < want) {
			if (i >= n)
				return -1;
			i++;   /* the comma */
		}
	}
	return i == n ? 0 : -1;
}

static bool is(const char *s, size_t n, const char *word)
{
	return strlen(word) == n && !memcmp(s, word, n);
}

/* Takes a key the reader knows once only: 'bit' in '*seen'. */
static int once(reader *r, int line, int *seen, int bit, const char *key, size_t klen)
{
	if (*seen & bit)
		return bad(r, line, "key '%.*s' given twice", (int)klen, key);
	*seen |= bit;
	return 0;
}

static int page_key(reader *r, int line, const char *key, size_t klen, const char *v, size_t vlen)
{
	atlas_page *p = &r->a->pages[r->a->n_pages - 1];
	int rc, nums[2];

	if (!text_valid(key, klen) || !text_valid(v, vlen))
		return bad(r, line, "page '%s': a key or value that is not UTF-8 text", p->name);
	if (is(key, klen, "size")) {
		if ((rc = once(r, line, &r->page_keys, P_SIZE, key, klen)))
			return rc;
		if (parse_ints(v, vlen, 2, false, nums))
			return bad(r, line, "page '%s': size '%.*s' is not two integers 0 to %d",
				   p->name, (int)vlen, v, ATLAS_COORD_MAX);
		p->width = nums[0];
		p->height = nums[1];
		return 0;
	}
	if (is(key, klen, "format")) {
		if ((rc = once(r, line, &r->page_keys, P_FORMAT, key, klen)))
			return rc;
		return (p->format = dup_n(v, vlen)) ? 0 : nomem(r);
	}
	if (is(key, klen, "filter")) {
		if ((rc = once(r, line, &r->page_keys, P_FILTER, key, klen)))
			return rc;
		const char *comma = memchr(v, ',', vlen);
		if (!comma)
			return bad(r, line, "page '%s': filter '%.*s' is not two names", p->name,
				   (int)vlen, v);
		size_t n1 = (size_t)(comma - v), n2 = vlen - n1 - 1;
		const char *a1 = trim(v, &n1), *a2 = trim(comma + 1, &n2);
		p->filter_min = dup_n(a1, n1);
		p->filter_mag = dup_n(a2, n2);
		return p->filter_min && p->filter_mag ? 0 : nomem(r);
	}
	if (is(key, klen, "repeat")) {
		if ((rc = once(r, line, &r->page_keys, P_REPEAT, key, klen)))
			return rc;
		if (!is(v, vlen, "x") && !is(v, vlen, "y") && !is(v, vlen, "xy") &&
		    !is(v, vlen, "none"))
			return bad(r, line, "page '%s': repeat '%.*s' is not x, y, xy or none",
				   p->name, (int)vlen, v);
		return (p->repeat = dup_n(v, vlen)) ? 0 : nomem(r);
	}
	if (is(key, klen, "pma")) {
		if ((rc = once(r, line, &r->page_keys, P_PMA, key, klen)))
			return rc;
		if (!is(v, vlen, "true") && !is(v, vlen, "false"))
			return bad(r, line, "page '%s': pma '%.*s' is not true or false", p->name,
				   (int)vlen, v);
		p->pma = is(v, vlen, "true");
		return 0;
	}
	if (is(key, klen, "scale")) {
		char num[32], *end;
		if ((rc = once(r, line, &r->page_keys, P_SCALE, key, klen)))
			return rc;
		if (vlen >= sizeof(num) || !vlen)
			return bad(r, line, "page '%s': scale '%.*s' is not a number", p->name,
				   (int)vlen, v);
		memcpy(num, v, vlen);
		num[vlen] = 0;
		double s = strtod(num, &end);
		if (*end || !isfinite(s) || s <= 0)
			return bad(r, line, "page '%s': scale '%s' is not a positive number",
				   p->name, num);
		p->scale = s;
		return 0;
	}
	return add_kv(r, &p->extra, &p->n_extra, key, klen, v, vlen);
}

static int region_key(reader *r, int line, const char *key, size_t klen, const char *v,
		      size_t vlen)
{
	atlas_region *g = &r->a->regions[r->a->n_regions - 1];
	pending *c = &r->cur;
	int rc, n[4];

	if (!text_valid(key, klen) || !text_valid(v, vlen))
		return bad(r, line, "region '%s': a key or value that is not UTF-8 text", g->name);
	struct {
		const char *key;
		int bit, count;
	} coords[] = {
		{"bounds", K_BOUNDS, 4}, {"xy", K_XY, 2}, {"size", K_SIZE, 2},
		{"offsets", K_OFFSETS, 4}, {"offset", K_OFFSET, 2}, {"orig", K_ORIG, 2},
	};
	for (size_t i = 0; i < sizeof(coords) / sizeof(coords[0]); i++) {
		if (!is(key, klen, coords[i].key))
			continue;
		if ((rc = once(r, line, &c->keys, coords[i].bit, key, klen)))
			return rc;
		if (parse_ints(v, vlen, coords[i].count, false, n))
			return bad(r, line, "region '%s': %s '%.*s' is not %d integers 0 to %d",
				   g->name, coords[i].key, (int)vlen, v, coords[i].count,
				   ATLAS_COORD_MAX);
		switch (coords[i].bit) {
		case K_BOUNDS: c->x = n[0]; c->y = n[1]; c->w = n[2]; c->h = n[3]; break;
		case K_XY: c->x = n[0]; c->y = n[1]; break;
		case K_SIZE: c->w = n[0]; c->h = n[1]; break;
		case K_OFFSETS:
			c->off_x = n[0]; c->off_y = n[1]; c->orig_w = n[2]; c->orig_h = n[3];
			break;
		case K_OFFSET: c->off_x = n[0]; c->off_y = n[1]; break;
		case K_ORIG: c->orig_w = n[0]; c->orig_h = n[1]; break;
		}
		return 0;
	}
	if (is(key, klen, "rotate")) {
		if ((rc = once(r, line, &c->keys, K_ROTATE, key, klen)))
			return rc;
		if (is(v, vlen, "true") || is(v, vlen, "90"))
			g->rotate_deg = 90;
		else if (is(v, vlen, "false") || is(v, vlen, "0"))
			g->rotate_deg = 0;
		else if (is(v, vlen, "180"))
			g->rotate_deg = 180;
		else if (is(v, vlen, "270"))
			g->rotate_deg = 270;
		else
			return bad(r, line,
				   "region '%s': rotate '%.*s' is not true, false, 0, 90, 180 or 270",
				   g->name, (int)vlen, v);
		return 0;
	}
	if (is(key, klen, "index")) {
		if ((rc = once(r, line, &c->keys, K_INDEX, key, klen)))
			return rc;
		if (parse_ints(v, vlen, 1, true, n) || n[0] < -1)
			return bad(r, line, "region '%s': index '%.*s' is not an integer -1 to %d",
				   g->name, (int)vlen, v, ATLAS_COORD_MAX);
		g->index = n[0];
		return 0;
	}
	return add_kv(r, &g->extra, &g->n_extra, key, klen, v, vlen);
}

/* Stores the rectangle and trim of the region being read, from the 4.x
 * keys or the older ones (not both). */
static int finish_region(reader *r)
{
	pending *c = &r->cur;

	if (!c->open)
		return 0;
	c->open = false;
	atlas_region *g = &r->a->regions[r->a->n_regions - 1];
	bool modern = c->keys & (K_BOUNDS | K_OFFSETS), old = c->keys & (K_XY | K_SIZE | K_OFFSET | K_ORIG);
	if (modern && old)
		return bad(r, g->line, "region '%s': mixes bounds/offsets with xy/size/orig/offset",
			   g->name);
	if (!(c->keys & K_BOUNDS) && (c->keys & (K_XY | K_SIZE)) != (K_XY | K_SIZE))
		return bad(r, g->line, "region '%s': no bounds (nor xy and size)", g->name);
	if (!(c->keys & (K_OFFSETS | K_ORIG))) {
		c->orig_w = c->w;
		c->orig_h = c->h;
	}
	bool turned = g->rotate_deg == 90 || g->rotate_deg == 270;
	g->x = c->x;
	g->y = c->y;
	g->w = turned ? c->h : c->w;
	g->h = turned ? c->w : c->h;
	g->offset_x = c->off_x;
	g->offset_y = c->off_y;
	g->orig_width = c->orig_w;
	g->orig_height = c->orig_h;
	return 0;
}

static const atlas_image *find_image(const atlas_image *images, int n, const char *file)
{
	for (int i = 0; i < n; i++)
		if (images[i].file && !strcmp(images[i].file, file))
			return &images[i];
	return NULL;
}

/* The regions' order for the duplicate check: page, name, index, line. */
static int cmp_region(const void *pa, const void *pb)
{
	const atlas_region *a = *(const atlas_region *const *)pa;
	const atlas_region *b = *(const atlas_region *const *)pb;
	int c = strcmp(a->name, b->name);

	if (a->page != b->page)
		return a->page < b->page ? -1 : 1;
	if (c)
		return c;
	if (a->index != b->index)
		return a->index < b->index ? -1 : 1;
	return a->line < b->line ? -1 : a->line > b->line;
}

/*
 * The checks of a whole atlas: pages named once, found among the images
 * (when given) with the same size, a known size; each region inside its
 * page, its trim holding it; (name, index) unique on a page.
 */
static int check_all(reader *r, const atlas_image *images, int n_images)
{
	atlas *a = r->a;

	if (!a->n_pages)
		return bad(r, 0, "no page");
	for (int i = 0; i < a->n_pages; i++) {
		atlas_page *p = &a->pages[i];
		int line = r->page_lines[i];
		for (int j = 0; j < i; j++)
			if (!strcmp(a->pages[j].name, p->name))
				return bad(r, line, "page '%s' named a second time", p->name);
		if (images) {
			const atlas_image *im = find_image(images, n_images, p->name);
			if (!im)
				return bad(r, line, "page '%s': no uploaded image of that name",
					   p->name);
			if (!p->width && !p->height) {
				p->width = (int)im->width;
				p->height = (int)im->height;
			} else if ((uint32_t)p->width != im->width ||
				   (uint32_t)p->height != im->height) {
				return bad(r, line, "page '%s' is %d x %d but its image is %u x %u",
					   p->name, p->width, p->height, (unsigned)im->width,
					   (unsigned)im->height);
			}
		}
		if (p->width <= 0 || p->height <= 0 || p->width > ATLAS_COORD_MAX ||
		    p->height > ATLAS_COORD_MAX)
			return bad(r, line, "page '%s': size %d x %d (1 to %d each; absent, it comes from the image)",
				   p->name, p->width, p->height, ATLAS_COORD_MAX);
	}
	for (int i = 0; i < a->n_regions; i++) {
		atlas_region *g = &a->regions[i];
		atlas_page *p = &a->pages[g->page];
		bool turned = g->rotate_deg == 90 || g->rotate_deg == 270;
		int uw = turned ? g->h : g->w, uh = turned ? g->w : g->h;
		if ((long)g->x + g->w > p->width || (long)g->y + g->h > p->height) {
			if (r->json || !turned)
				return bad(r, g->line, "region '%s': %s %d,%d,%d,%d leave page '%s' (%d x %d)",
					   g->name, r->json ? "x,y,width,height" : "bounds", g->x, g->y,
					   g->w, g->h, p->name, p->width, p->height);
			return bad(r, g->line,
				   "region '%s': bounds %d,%d,%d,%d turned %d degrees leave page '%s' (%d x %d)",
				   g->name, g->x, g->y, uw, uh, g->rotate_deg, p->name, p->width,
				   p->height);
		}
		if ((long)g->offset_x + uw > g->orig_width ||
		    (long)g->offset_y + uh > g->orig_height)
			return bad(r, g->line,
				   "region '%s': its %d x %d pixels at offset %d,%d leave its original %d x %d",
				   g->name, uw, uh, g->offset_x, g->offset_y, g->orig_width,
				   g->orig_height);
	}
	if (a->n_regions < 2)
		return 0;
	const atlas_region **order = malloc(sizeof(*order) * (size_t)a->n_regions);
	if (!order)
		return nomem(r);
	for (int i = 0; i < a->n_regions; i++)
		order[i] = &a->regions[i];
	qsort(order, (size_t)a->n_regions, sizeof(*order), cmp_region);
	int rc = 0;
	for (int i = 1; i < a->n_regions && !rc; i++) {
		const atlas_region *x = order[i - 1], *y = order[i];
		if (x->page == y->page && x->index == y->index && !strcmp(x->name, y->name)) {
			const atlas_region *later = x->line > y->line ? x : y;
			const atlas_region *first = later == x ? y : x;
			if (r->json)
				rc = bad(r, later->line, "region '%s': a second region of that name (SubTexture[%d])",
					 later->name, first->line - 1);
			else
				rc = bad(r, later->line,
					 "region '%s': a second region of that name and index %d on page '%s' (line %d)",
					 later->name, later->index, a->pages[later->page].name,
					 first->line);
		}
	}
	free(order);
	return rc;
}

/* Fills the Spine defaults of the text keys left absent. */
static int page_defaults(reader *r)
{
	for (int i = 0; i < r->a->n_pages; i++) {
		atlas_page *p = &r->a->pages[i];
		if (!p->format && !(p->format = dup_n("RGBA8888", 8)))
			return nomem(r);
		if (!p->filter_min && !(p->filter_min = dup_n("Nearest", 7)))
			return nomem(r);
		if (!p->filter_mag && !(p->filter_mag = dup_n("Nearest", 7)))
			return nomem(r);
		if (!p->repeat && !(p->repeat = dup_n("none", 4)))
			return nomem(r);
	}
	return 0;
}

static int read_spine_lines(reader *r, const char *text, size_t len)
{
	enum { EXPECT_PAGE, PAGE_HEADER, REGION } state = EXPECT_PAGE;
	size_t pos = 0;
	int line = 0, rc;

	while (pos < len) {
		const char *s = text + pos, *nl = memchr(s, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - s) : len - pos;
		pos += n + (nl ? 1 : 0);
		line++;
		if (n > (size_t)r->lim->max_line)
			return bad(r, line, "%zu bytes, over the limit of %d", n, r->lim->max_line);
		if (n && s[n - 1] == '\r')
			n--;
		s = trim(s, &n);
		if (!n) {
			if ((rc = finish_region(r)))
				return rc;
			state = EXPECT_PAGE;
			continue;
		}
		const char *colon = memchr(s, ':', n);
		if (colon) {
			size_t klen = (size_t)(colon - s), vlen = n - klen - 1;
			const char *key = trim(s, &klen), *v = trim(colon + 1, &vlen);
			if (state == EXPECT_PAGE)
				return bad(r, line, "key '%.*s' before a page name",
					   (int)(klen < 64 ? klen : 64), key);
			if (!klen)
				return bad(r, line, "a value without a key");
			rc = state == PAGE_HEADER ? page_key(r, line, key, klen, v, vlen)
						  : region_key(r, line, key, klen, v, vlen);
			if (rc)
				return rc;
			continue;
		}
		if ((rc = finish_region(r)))
			return rc;
		if (state == EXPECT_PAGE) {
			if ((rc = add_page(r, line, s, n)))
				return rc;
			state = PAGE_HEADER;
		} else {
			if ((rc = add_region(r, line, s, n)))
				return rc;
			memset(&r->cur, 0, sizeof(r->cur));
			r->cur.open = true;
			state = REGION;
		}
	}
	return finish_region(r);
}

int atlas_read_spine(const char *text, size_t len, const atlas_limits *lim,
		     const atlas_image *images, int n_images, atlas *out, edit_error *err)
{
	atlas_limits dflt = atlas_limits_default();
	reader r = {.lim = lim ? lim : &dflt, .a = out, .err = err};
	int rc;

	memset(out, 0, sizeof(*out));
	if (len > r.lim->max_bytes) {
		rc = bad(&r, 0, "%zu bytes, over the limit of %zu", len, r.lim->max_bytes);
		goto out;
	}
	rc = read_spine_lines(&r, text, len);
	if (!rc)
		rc = page_defaults(&r);
	if (!rc)
		rc = check_all(&r, images, n_images);
out:
	free(r.page_lines);
	if (rc)
		atlas_release(out);
	return rc;
}

/* A member of a SubTexture or of the root that must be an integer in
 * [lo, hi]; 'dflt' when absent and 'optional'. Returns 0 or the error. */
static int json_int(reader *r, int line, const cJSON *obj, const char *key, bool optional,
		    int dflt, int lo, int hi, const char *region, int *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!v) {
		if (!optional)
			return region ? bad(r, line, "region '%s': no %s", region, key)
				      : bad(r, line, "no %s", key);
		*out = dflt;
		return 0;
	}
	double d = cJSON_IsNumber(v) ? v->valuedouble : NAN;
	if (!isfinite(d) || d != floor(d) || d < lo || d > hi) {
		if (region)
			return bad(r, line, "region '%s': %s is not an integer %d to %d", region, key,
				   lo, hi);
		return bad(r, line, "%s is not an integer %d to %d", key, lo, hi);
	}
	*out = (int)d;
	return 0;
}

static int read_sub_texture(reader *r, int line, const cJSON *st)
{
	if (!cJSON_IsObject(st))
		return bad(r, line, "not an object");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(st, "name");
	if (!cJSON_IsString(name))
		return bad(r, line, "no name string");
	int rc = add_region(r, line, name->valuestring, strlen(name->valuestring));
	if (rc)
		return rc;
	atlas_region *g = &r->a->regions[r->a->n_regions - 1];
	const char *nm = g->name;
	int fx, fy, fw, fh;
	if ((rc = json_int(r, line, st, "x", false, 0, 0, ATLAS_COORD_MAX, nm, &g->x)) ||
	    (rc = json_int(r, line, st, "y", false, 0, 0, ATLAS_COORD_MAX, nm, &g->y)) ||
	    (rc = json_int(r, line, st, "width", false, 0, 0, ATLAS_COORD_MAX, nm, &g->w)) ||
	    (rc = json_int(r, line, st, "height", false, 0, 0, ATLAS_COORD_MAX, nm, &g->h)))
		return rc;
	const cJSON *rot = cJSON_GetObjectItemCaseSensitive(st, "rotated");
	if (rot && !cJSON_IsBool(rot))
		return bad(r, line, "region '%s': rotated is not true or false", nm);
	g->rotate_deg = cJSON_IsTrue(rot) ? 90 : 0;
	int uw = g->rotate_deg ? g->h : g->w, uh = g->rotate_deg ? g->w : g->h;
	/* frameX and frameY place the trimmed image in its frame: zero or
	 * negative, the blank columns and rows stripped at the left and top. */
	if ((rc = json_int(r, line, st, "frameX", true, 0, -ATLAS_COORD_MAX, 0, nm, &fx)) ||
	    (rc = json_int(r, line, st, "frameY", true, 0, -ATLAS_COORD_MAX, 0, nm, &fy)) ||
	    (rc = json_int(r, line, st, "frameWidth", true, uw, 0, ATLAS_COORD_MAX, nm, &fw)) ||
	    (rc = json_int(r, line, st, "frameHeight", true, uh, 0, ATLAS_COORD_MAX, nm, &fh)))
		return rc;
	if ((long)-fx + uw > fw || (long)-fy + uh > fh)
		return bad(r, line, "region '%s': its %d x %d pixels at frame %d,%d leave the frame %d x %d",
			   nm, uw, uh, fx, fy, fw, fh);
	g->offset_x = -fx;
	g->offset_y = fh - uh - -fy;
	g->orig_width = fw;
	g->orig_height = fh;
	return 0;
}

int atlas_read_dragonbones(const char *json, size_t len, const atlas_limits *lim,
			   const atlas_image *images, int n_images, atlas *out, edit_error *err)
{
	atlas_limits dflt = atlas_limits_default();
	reader r = {.lim = lim ? lim : &dflt, .a = out, .json = true, .err = err};
	cJSON *root = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	if (len > r.lim->max_bytes) {
		rc = bad(&r, 0, "%zu bytes, over the limit of %zu", len, r.lim->max_bytes);
		goto out;
	}
	root = cJSON_ParseWithLength(json, len);
	if (!cJSON_IsObject(root)) {
		rc = root ? bad(&r, 0, "not a JSON object") : bad(&r, 0, "not valid JSON");
		goto out;
	}
	const cJSON *path = cJSON_GetObjectItemCaseSensitive(root, "imagePath");
	if (!cJSON_IsString(path)) {
		rc = bad(&r, 0, "no imagePath string");
		goto out;
	}
	if ((rc = add_page(&r, 0, path->valuestring, strlen(path->valuestring))))
		goto out;
	atlas_page *p = &out->pages[0];
	if ((rc = json_int(&r, 0, root, "width", true, 0, 0, ATLAS_COORD_MAX, NULL, &p->width)) ||
	    (rc = json_int(&r, 0, root, "height", true, 0, 0, ATLAS_COORD_MAX, NULL, &p->height)))
		goto out;
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "name");
	if (name && !cJSON_IsString(name)) {
		rc = bad(&r, 0, "name is not a string");
		goto out;
	}
	if (name) {
		size_t n = strlen(name->valuestring);
		if (!text_valid(name->valuestring, n)) {
			rc = bad(&r, 0, "name is not UTF-8 text");
			goto out;
		}
		if ((rc = add_kv(&r, &p->extra, &p->n_extra, "name", 4, name->valuestring, n)))
			goto out;
	}
	const cJSON *subs = cJSON_GetObjectItemCaseSensitive(root, "SubTexture");
	if (!cJSON_IsArray(subs)) {
		rc = bad(&r, 0, "no SubTexture array");
		goto out;
	}
	int i = 0;
	for (const cJSON *st = subs->child; st; st = st->next, i++)
		if ((rc = read_sub_texture(&r, i + 1, st)))
			goto out;
	rc = check_all(&r, images, n_images);
out:
	cJSON_Delete(root);
	free(r.page_lines);
	if (rc)
		atlas_release(out);
	return rc;
}

int atlas_find_region(const atlas *a, int page, const char *name, int index)
{
	if (page < 0 || page >= a->n_pages)
		return -1;
	const atlas_page *p = &a->pages[page];
	for (int i = p->first_region; i < p->first_region + p->n_regions; i++)
		if (a->regions[i].index == index && !strcmp(a->regions[i].name, name))
			return i;
	return -1;
}

/*
 * svg.h: the SVG sanitiser. An SVG document posted to the server is hostile
 * input: it is parsed by libxml2 with the network off and entities never
 * expanded, walked against an allow-list of SVG elements and attributes,
 * and written out again; what it had outside the list is removed and
 * reported. The bytes it writes are what the server stores and serves.
 *
 * Refused outright (RIGD_E_BAD_SVG or RIGD_E_LIMIT, nothing written): a
 * document that is not well-formed XML, one whose DOCTYPE declares entities
 * (general or parameter, the "billion laughs" among them) or that
 * references an entity, a root other than <svg> in the SVG namespace, and
 * a document over a limit (bytes, depth, elements). Stripped and reported
 * (the document is kept without them): elements outside the allow-list
 * (script, foreignObject, image, a, animation, anything in another
 * namespace) with their whole subtree, attributes outside the list (every
 * on* handler among them), href and xlink:href that are not a same-document
 * "#id", values with a javascript:, vbscript: or data: URL or a url() that
 * is not "url(#id)", style attributes and <style> elements with @import,
 * @font-face, backslash escapes, expression() or a url() that is not
 * "url(#id)", comments, processing instructions and the DOCTYPE.
 *
 * The output is the root element serialised by libxml2 in UTF-8, without an
 * XML declaration (so without the input's encoding declaration). It is a
 * fixed point: sanitising it again gives the same bytes and removes
 * nothing, which log import relies on to check an asset's digest.
 *
 * This is the only file besides the other codecs that parses a file format;
 * it includes libxml2, and no other folder may.
 */
#ifndef RIGD_SVG_H
#define RIGD_SVG_H

#include "core/edit.h"
#include "json.h"

#include <stdbool.h>
#include <stddef.h>

#define SVG_DEFAULT_MAX_BYTES (2u << 20)   /* 2 MiB of SVG text */
#define SVG_DEFAULT_MAX_DEPTH 64           /* element nesting, the root is depth 1 */
#define SVG_DEFAULT_MAX_ELEMENTS 20000     /* elements in the document */
#define SVG_REPORT_MAX 200                 /* removals listed; more are counted */
#define SVG_ID_MAX 128                     /* bytes of an element id the manifest may name */

typedef struct svg_limits {
	size_t max_bytes;
	int max_depth;
	int max_elements;
} svg_limits;

/* SVG_DEFAULT_MAX_BYTES, _DEPTH and _ELEMENTS. */
svg_limits svg_limits_default(void);

/* One thing the sanitiser removed: what ("element script", "attribute
 * onload", "comment", ...) and where (the path of element names from the
 * root, each with its id when it has one: "svg/g#torso/circle"). */
typedef struct svg_removal {
	char what[96];
	char where[256];
} svg_removal;

/* A sanitised document. Release with svg_clean_release. */
typedef struct svg_clean {
	char *svg;                 /* the sanitised bytes, NUL-terminated, owned */
	size_t len;                /* bytes, the NUL not counted */
	svg_removal *removed;      /* the first SVG_REPORT_MAX removals, owned */
	int n_removed;             /* entries in 'removed' */
	int n_removed_total;       /* every removal, listed or not */
	char **ids;                /* every element id kept, sorted, unique, owned */
	int n_ids;
} svg_clean;

/*
 * Sanitises 'len' bytes of 'in' (need not be NUL-terminated) under 'lim'
 * (NULL: the defaults). Returns 0 with *out filled (the caller releases
 * it), or RIGD_E_BAD_SVG / RIGD_E_LIMIT / RIGD_E_NOMEM with 'err' (may be
 * NULL) naming field "svg" and the reason (the limit by name, the parser's
 * line and message); *out is then empty.
 */
int svg_sanitize(const char *in, size_t len, const svg_limits *lim, svg_clean *out,
		 edit_error *err);

/* Frees everything *c owns and empties it; accepts NULL. */
void svg_clean_release(svg_clean *c);

/* True when the sanitised document has an element with id 'id'. */
bool svg_clean_has_id(const svg_clean *c, const char *id);

/* Whether 'file' is a valid asset file name: 1 to 128 characters of
 * [A-Za-z0-9_.-], not starting with a dot. */
bool svg_file_name_valid(const char *file);

/* Appends the report {"removed":[{"what","where"}...],"removed_total":N}.
 * 0 or RIGD_E_NOMEM (b unchanged). */
int svg_encode_report(json_buf *b, const svg_clean *c);

#endif

/*
 * svg.c: the SVG sanitiser (svg.h): libxml2 parses with the network off and
 * entities neither declared nor expanded, an allow-list walk removes and
 * reports what a picture does not need, libxml2 writes the rest out.
 *
 * It must never expand an entity, load anything (a DTD, an XInclude, a
 * URL), or let through an element or attribute that is not on its lists.
 */
#include "svg.h"

#include "core/err.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include <assert.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SVG_NS "http://www.w3.org/2000/svg"
#define XLINK_NS "http://www.w3.org/1999/xlink"
#define XML_NS "http://www.w3.org/XML/1998/namespace"

/* The elements a picture keeps (SVG namespace only): shapes, text,
 * structure, paint servers, clipping, masking, markers and the filter
 * primitives that read nothing from outside the document. */
static const char *const ELEMENTS[] = {
	"svg", "g", "defs", "title", "desc", "symbol", "use", "path", "rect", "circle",
	"ellipse", "line", "polyline", "polygon", "text", "tspan", "linearGradient",
	"radialGradient", "stop", "clipPath", "mask", "pattern", "marker", "style", "filter",
	"feGaussianBlur", "feOffset", "feBlend", "feFlood", "feColorMatrix", "feComposite",
	"feMerge", "feMergeNode", "feDropShadow", "feMorphology",
};

/* The attributes without a namespace a picture keeps. */
static const char *const ATTRIBUTES[] = {
	"id", "class", "style", "transform", "d", "x", "y", "x1", "y1", "x2", "y2", "cx",
	"cy", "r", "rx", "ry", "width", "height", "viewBox", "preserveAspectRatio", "points",
	"pathLength", "fill", "fill-opacity", "fill-rule", "stroke", "stroke-width",
	"stroke-linecap", "stroke-linejoin", "stroke-miterlimit", "stroke-dasharray",
	"stroke-dashoffset", "stroke-opacity", "opacity", "visibility", "display", "color",
	"clip-path", "clip-rule", "mask", "filter", "marker-start", "marker-mid", "marker-end",
	"offset", "stop-color", "stop-opacity", "gradientUnits", "gradientTransform",
	"spreadMethod", "fx", "fy", "fr", "patternUnits", "patternContentUnits",
	"patternTransform", "clipPathUnits", "maskUnits", "maskContentUnits", "markerWidth",
	"markerHeight", "refX", "refY", "orient", "markerUnits", "font-family", "font-size",
	"font-weight", "font-style", "text-anchor", "dominant-baseline", "letter-spacing",
	"word-spacing", "dx", "dy", "rotate", "textLength", "lengthAdjust", "version",
	"baseProfile", "href", "paint-order", "vector-effect", "shape-rendering",
	"stdDeviation", "in", "in2", "result", "mode", "values", "type", "operator", "k1", "k2",
	"k3", "k4", "flood-color", "flood-opacity", "filterUnits", "primitiveUnits", "radius",
	"overflow", "lang",
};

/* Text that no kept value may hold (compared without case, whitespace or
 * control characters): URLs that run or embed something, and the CSS that
 * loads, escapes or evaluates. */
static const char *const FORBIDDEN[] = {
	"javascript:", "vbscript:", "data:", "@import", "@font-face", "\\", "expression(",
	"-moz-binding", "behavior:", "image-set(", "src(",
};

svg_limits svg_limits_default(void)
{
	svg_limits l = {
		.max_bytes = SVG_DEFAULT_MAX_BYTES,
		.max_depth = SVG_DEFAULT_MAX_DEPTH,
		.max_elements = SVG_DEFAULT_MAX_ELEMENTS,
	};
	return l;
}

static bool in_list(const char *const *list, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(list[i], name))
			return true;
	return false;
}

#define IN_LIST(list, name) in_list((list), sizeof(list) / sizeof((list)[0]), (name))

static bool id_char(int c)
{
	return isalnum(c) || c == '_' || c == '.' || c == ':' || c == '-';
}

/* The state of one walk: the report being built and the first error. */
typedef struct walk {
	svg_clean *out;
	int rc;                    /* RIGD_E_NOMEM once an allocation failed */
} walk;

static void note(walk *w, const char *where, const char *fmt, const char *a, const char *b)
{
	svg_clean *c = w->out;

	c->n_removed_total++;
	if (c->n_removed >= SVG_REPORT_MAX)
		return;
	if (!c->removed) {
		c->removed = calloc(SVG_REPORT_MAX, sizeof(*c->removed));
		if (!c->removed) {
			w->rc = RIGD_E_NOMEM;
			return;
		}
	}
	svg_removal *r = &c->removed[c->n_removed++];
	/* What does not fit is cut: the report shows the start of a long name. */
	if (snprintf(r->what, sizeof(r->what), fmt, a, b ? b : "") < 0)
		r->what[0] = '\0';
	snprintf(r->where, sizeof(r->where), "%s", where);
}

/* What value_bad answers when it cannot look: the walk then fails with
 * RIGD_E_NOMEM rather than remove what it did not judge. */
static const char NO_MEMORY[] = "out of memory";

/* The reason a value may not stay, or NULL when it may: a forbidden text,
 * or a url() that is not "url(#id)" (quotes allowed); NO_MEMORY when it
 * cannot tell. */
static const char *value_bad(const char *value)
{
	size_t n = strlen(value), k = 0;
	char *norm = malloc(n + 1);

	if (!norm)
		return NO_MEMORY;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)value[i];
		if (ch > ' ' && ch != 0x7f)
			norm[k++] = (char)tolower(ch);
	}
	norm[k] = 0;
	const char *why = NULL;
	for (size_t i = 0; !why && i < sizeof(FORBIDDEN) / sizeof(FORBIDDEN[0]); i++)
		if (strstr(norm, FORBIDDEN[i]))
			why = FORBIDDEN[i];
	for (const char *p = norm; !why && (p = strstr(p, "url(")) != NULL;) {
		p += 4;
		char quote = (*p == '\'' || *p == '"') ? *p++ : 0;
		if (*p++ != '#' || !id_char((unsigned char)*p)) {
			why = "url() outside the document";
			break;
		}
		while (id_char((unsigned char)*p))
			p++;
		if ((quote && *p++ != quote) || *p != ')')
			why = "url() outside the document";
	}
	free(norm);
	return why;
}

/* Whether an href is a same-document reference "#id". */
static bool href_ok(const char *v)
{
	if (v[0] != '#' || !v[1])
		return false;
	for (const char *p = v + 1; *p; p++)
		if (!id_char((unsigned char)*p))
			return false;
	return true;
}

/* Why attribute 'a' must go, or NULL when it stays. */
static const char *attr_bad(xmlAttrPtr a, const char *value)
{
	const char *name = (const char *)a->name;
	const char *ns = a->ns ? (const char *)a->ns->href : NULL;

	if ((name[0] == 'o' || name[0] == 'O') && (name[1] == 'n' || name[1] == 'N'))
		return "an event handler";
	if (ns && !strcmp(ns, XLINK_NS)) {
		if (strcmp(name, "href"))
			return "not on the allow-list";
	} else if (ns && !strcmp(ns, XML_NS)) {
		if (strcmp(name, "space"))
			return "not on the allow-list";
	} else if (ns || !IN_LIST(ATTRIBUTES, name)) {
		return "not on the allow-list";
	}
	if (!strcmp(name, "href") && !href_ok(value))
		return "a link outside the document";
	return value_bad(value);
}

static void attr_qname(xmlAttrPtr a, char *out, size_t cap)
{
	if (a->ns && a->ns->prefix)
		snprintf(out, cap, "%s:%s", (const char *)a->ns->prefix, (const char *)a->name);
	else
		snprintf(out, cap, "%s", (const char *)a->name);
}

static void clean_attributes(walk *w, xmlNodePtr el, const char *where)
{
	xmlAttrPtr a = el->properties;

	while (a && !w->rc) {
		xmlAttrPtr next = a->next;
		xmlChar *v = xmlNodeListGetString(el->doc, a->children, 1);
		/* No string for a value that has text: libxml2 ran out of memory,
		 * and an unread value must not stay. */
		const char *why = !v && a->children ? NO_MEMORY
				  : attr_bad(a, v ? (const char *)v : "");
		if (why == NO_MEMORY) {
			w->rc = RIGD_E_NOMEM;
		} else if (why) {
			char q[96];
			attr_qname(a, q, sizeof(q));
			note(w, where, "attribute %.60s (%.30s)", q, why);
			xmlRemoveProp(a);
		}
		xmlFree(v);
		a = next;
	}
}

/* Namespace declarations other than SVG's and XLink's go with the elements
 * and attributes that used them; called once the subtree is clean, since a
 * descendant removed on the way may have used one. */
static void clean_namespaces(xmlNodePtr el)
{
	xmlNsPtr *link = &el->nsDef;

	while (*link) {
		xmlNsPtr ns = *link;
		if (ns->href && (!strcmp((const char *)ns->href, SVG_NS) ||
				 !strcmp((const char *)ns->href, XLINK_NS))) {
			link = &ns->next;
			continue;
		}
		*link = ns->next;
		ns->next = NULL;
		xmlFreeNs(ns);
	}
}

static bool element_allowed(xmlNodePtr n)
{
	return n->ns && n->ns->href && !strcmp((const char *)n->ns->href, SVG_NS) &&
	       IN_LIST(ELEMENTS, (const char *)n->name);
}

static void path_of(xmlNodePtr el, const char *parent, char *out, size_t cap)
{
	xmlChar *id = xmlGetNoNsProp(el, (const xmlChar *)"id");
	int k = snprintf(out, cap, "%s%s%s", parent, parent[0] ? "/" : "", (const char *)el->name);
	if (id && k >= 0 && (size_t)k < cap)
		snprintf(out + k, cap - (size_t)k, "#%s", (const char *)id);
	xmlFree(id);
}

static void drop(xmlNodePtr n)
{
	xmlUnlinkNode(n);
	xmlFreeNode(n);
}

/* A <style> element's CSS: the reason it must go, or NULL. */
static const char *style_bad(xmlNodePtr el)
{
	for (xmlNodePtr c = el->children; c; c = c->next)
		if (c->type != XML_TEXT_NODE && c->type != XML_CDATA_SECTION_NODE)
			return "markup inside";
	xmlChar *css = xmlNodeGetContent(el);
	const char *why = !css && el->children ? NO_MEMORY : value_bad(css ? (const char *)css : "");
	xmlFree(css);
	return why;
}

/* Cleans element 'el' (allowed) and its subtree in place. */
static void clean_element(walk *w, xmlNodePtr el, const char *parent_where)
{
	char where[256];

	path_of(el, parent_where, where, sizeof(where));
	clean_attributes(w, el, where);
	for (xmlNodePtr c = el->children, next; c && !w->rc; c = next) {
		next = c->next;
		switch (c->type) {
		case XML_TEXT_NODE:
		case XML_CDATA_SECTION_NODE:
			break;
		case XML_ELEMENT_NODE: {
			const char *why = NULL;
			if (!element_allowed(c))
				why = "not on the allow-list";
			else if (!strcmp((const char *)c->name, "style"))
				why = style_bad(c);
			if (why == NO_MEMORY) {
				w->rc = RIGD_E_NOMEM;
			} else if (why) {
				note(w, where, "element %.60s (%.30s)", (const char *)c->name, why);
				drop(c);
			} else {
				clean_element(w, c, where);
			}
			break;
		}
		case XML_COMMENT_NODE:
			note(w, where, "comment%s%s", "", NULL);
			drop(c);
			break;
		case XML_PI_NODE:
			note(w, where, "processing instruction %.60s%s", (const char *)c->name, NULL);
			drop(c);
			break;
		default:
			note(w, where, "node of type %.10s%s", "other", NULL);
			drop(c);
			break;
		}
	}
	clean_namespaces(el);
}

/* Counts elements and depth below 'n' (at depth 'depth'), and finds entity
 * references; stops at the first limit. 0 or the refusal in 'err'. */
static int measure(xmlNodePtr n, int depth, const svg_limits *lim, int *elements,
		   edit_error *err)
{
	for (; n; n = n->next) {
		if (n->type == XML_ENTITY_REF_NODE || n->type == XML_ENTITY_NODE) {
			edit_error_set(err, RIGD_E_BAD_SVG, -1, "svg",
				       "svg: entity reference '&%.60s;': entities are refused",
				       (const char *)n->name);
			return RIGD_E_BAD_SVG;
		}
		if (n->type != XML_ELEMENT_NODE)
			continue;
		if (++*elements > lim->max_elements) {
			edit_error_set(err, RIGD_E_LIMIT, -1, "svg",
				       "svg: more than %d elements (max_elements)", lim->max_elements);
			return RIGD_E_LIMIT;
		}
		if (depth > lim->max_depth) {
			edit_error_set(err, RIGD_E_LIMIT, -1, "svg",
				       "svg: elements nested deeper than %d (max_depth)", lim->max_depth);
			return RIGD_E_LIMIT;
		}
		int rc = measure(n->children, depth + 1, lim, elements, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* Set by the SAX hook when the document declares an entity. */
typedef struct guard {
	bool entity;
	char name[64];
} guard;

static void on_entity_decl(void *vctx, const xmlChar *name, int type, const xmlChar *public_id,
			   const xmlChar *system_id, xmlChar *content)
{
	xmlParserCtxtPtr ctx = vctx;
	guard *g = ctx->_private;

	(void)type, (void)public_id, (void)system_id, (void)content;
	if (!g->entity)
		snprintf(g->name, sizeof(g->name), "%s", name ? (const char *)name : "");
	g->entity = true;
	xmlStopParser(ctx);
}

static void on_unparsed_entity_decl(void *vctx, const xmlChar *name, const xmlChar *public_id,
				    const xmlChar *system_id, const xmlChar *notation)
{
	(void)notation;
	on_entity_decl(vctx, name, 0, public_id, system_id, NULL);
}

/* libxml2 reports some errors (encoding conversions) through its generic
 * handler, which prints on stderr whatever the parse options say: an
 * upload could fill the server's log. The parser's own last error, which
 * the refusal quotes, is kept all the same. */
static void ignore_error(void *ctx, const char *msg, ...)
{
	(void)ctx, (void)msg;
}

/* Parses 'in' into *doc, refusing entity declarations. 0 or the refusal. */
static int parse(const char *in, size_t len, xmlDocPtr *doc, edit_error *err)
{
	guard g = { 0 };
	xmlParserCtxtPtr ctx = xmlNewParserCtxt();

	*doc = NULL;
	xmlSetGenericErrorFunc(NULL, ignore_error);
	if (!ctx) {
		edit_error_set(err, RIGD_E_NOMEM, -1, "svg", "%s", err_str(RIGD_E_NOMEM));
		return RIGD_E_NOMEM;
	}
	ctx->_private = &g;
	ctx->sax->entityDecl = on_entity_decl;
	ctx->sax->unparsedEntityDecl = on_unparsed_entity_decl;
	/* No XML_PARSE_NOENT (substitution), DTDLOAD, DTDATTR, XINCLUDE or
	 * HUGE: nothing is expanded or fetched, libxml2's own limits stay. */
	*doc = xmlCtxtReadMemory(ctx, in, (int)len, NULL, NULL,
				 XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
					 XML_PARSE_NOCDATA);
	int rc = 0;
	if (g.entity) {
		edit_error_set(err, RIGD_E_BAD_SVG, -1, "svg",
			       "svg: the DOCTYPE declares entity '%.60s': entities are refused", g.name);
		rc = RIGD_E_BAD_SVG;
	} else if (!*doc || !ctx->wellFormed) {
		xmlErrorPtr e = xmlCtxtGetLastError(ctx);
		char msg[200] = "not well-formed XML";
		if (e && e->message) {
			snprintf(msg, sizeof(msg), "%s", e->message);
			size_t n = strlen(msg);
			while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
				msg[--n] = 0;
		}
		bool depth = e && strstr(msg, "depth");
		edit_error_set(err, depth ? RIGD_E_LIMIT : RIGD_E_BAD_SVG, -1, "svg",
			       "svg: line %d: %s", e ? e->line : 0, msg);
		rc = depth ? RIGD_E_LIMIT : RIGD_E_BAD_SVG;
	}
	if (rc) {
		xmlFreeDoc(*doc);
		*doc = NULL;
	}
	xmlFreeParserCtxt(ctx);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Collects the ids of the kept elements below and at 'n' into out->ids. */
static int collect_ids(xmlNodePtr n, svg_clean *out, int *cap)
{
	for (; n; n = n->next) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		xmlChar *id = xmlGetNoNsProp(n, (const xmlChar *)"id");
		if (id) {
			if (out->n_ids == *cap) {
				int nc = *cap ? *cap * 2 : 16;
				char **ids = realloc(out->ids, sizeof(*ids) * (size_t)nc);
				if (!ids) {
					xmlFree(id);
					return RIGD_E_NOMEM;
				}
				out->ids = ids;
				*cap = nc;
			}
			char *copy = strdup((const char *)id);
			xmlFree(id);
			if (!copy)
				return RIGD_E_NOMEM;
			out->ids[out->n_ids++] = copy;
		}
		int rc = collect_ids(n->children, out, cap);
		if (rc)
			return rc;
	}
	return 0;
}

/* Sorts the collected ids and drops repeats (an id used twice). */
static int finish_ids(svg_clean *out)
{
	int k = 0;

	if (out->n_ids > 1)
		qsort(out->ids, (size_t)out->n_ids, sizeof(*out->ids), cmp_str);
	for (int i = 0; i < out->n_ids; i++) {
		if (k && !strcmp(out->ids[k - 1], out->ids[i]))
			free(out->ids[i]);
		else
			out->ids[k++] = out->ids[i];
	}
	out->n_ids = k;
	return 0;
}

/* Writes the root element as UTF-8 into out->svg. */
static int serialise(xmlDocPtr doc, xmlNodePtr root, svg_clean *out)
{
	/* Without a document encoding libxml2 writes UTF-8 whatever encoding
	 * the input declared, so sanitising the output again (UTF-8, no
	 * declaration) writes the same bytes: a fixed point. */
	if (doc->encoding) {
		xmlFree((xmlChar *)doc->encoding);
		doc->encoding = NULL;
	}
	xmlBufferPtr buf = xmlBufferCreate();
	if (!buf)
		return RIGD_E_NOMEM;
	int rc = 0;
	if (xmlNodeDump(buf, doc, root, 0, 0) < 0) {
		rc = RIGD_E_NOMEM;
	} else {
		size_t n = (size_t)xmlBufferLength(buf);
		out->svg = malloc(n + 1);
		if (!out->svg) {
			rc = RIGD_E_NOMEM;
		} else {
			memcpy(out->svg, xmlBufferContent(buf), n);
			out->svg[n] = 0;
			out->len = n;
		}
	}
	xmlBufferFree(buf);
	return rc;
}

/* Refuses a root that is not <svg> in the SVG namespace, and reports what
 * stood beside it (the DOCTYPE, comments, processing instructions). */
static int check_root(walk *w, xmlDocPtr doc, xmlNodePtr root, edit_error *err)
{
	if (!root || strcmp((const char *)root->name, "svg") || !root->ns ||
	    !root->ns->href || strcmp((const char *)root->ns->href, SVG_NS)) {
		edit_error_set(err, RIGD_E_BAD_SVG, -1, "svg",
			       "svg: the root element must be <svg xmlns=\"" SVG_NS "\">, not <%.60s>",
			       root ? (const char *)root->name : "");
		return RIGD_E_BAD_SVG;
	}
	for (xmlNodePtr n = doc->children; n; n = n->next) {
		if (n == root)
			continue;
		if (n->type == XML_DTD_NODE)
			note(w, "", "doctype%s%s", "", NULL);
		else if (n->type == XML_PI_NODE)
			note(w, "", "processing instruction %.60s%s", (const char *)n->name, NULL);
		else if (n->type == XML_COMMENT_NODE)
			note(w, "", "comment%s%s", "", NULL);
	}
	return 0;
}

int svg_sanitize(const char *in, size_t len, const svg_limits *lim, svg_clean *out,
		 edit_error *err)
{
	svg_limits defaults = svg_limits_default();
	xmlDocPtr doc = NULL;
	walk w = { .out = out };
	int elements = 0, cap = 0, rc;

	memset(out, 0, sizeof(*out));
	edit_error_clear(err);
	if (!lim)
		lim = &defaults;
	if (len > lim->max_bytes || len > (size_t)0x7fffffff) {
		edit_error_set(err, RIGD_E_LIMIT, -1, "svg",
			       "svg: %zu bytes is over the limit of %zu (max_bytes)", len,
			       lim->max_bytes);
		return RIGD_E_LIMIT;
	}
	if ((rc = parse(in, len, &doc, err)) != 0)
		return rc;
	xmlNodePtr root = xmlDocGetRootElement(doc);
	if ((rc = check_root(&w, doc, root, err)) != 0 ||
	    (rc = measure(root, 1, lim, &elements, err)) != 0)
		goto out;
	clean_element(&w, root, "");
	rc = w.rc;
	if (!rc)
		rc = collect_ids(root, out, &cap);
	if (!rc)
		rc = finish_ids(out);
	if (!rc)
		rc = serialise(doc, root, out);
	if (rc)
		edit_error_set(err, rc, -1, "svg", "%s", err_str(rc));
out:
	xmlFreeDoc(doc);
	if (rc)
		svg_clean_release(out);
	return rc;
}

void svg_clean_release(svg_clean *c)
{
	if (!c)
		return;
	free(c->svg);
	free(c->removed);
	for (int i = 0; i < c->n_ids; i++)
		free(c->ids[i]);
	free(c->ids);
	memset(c, 0, sizeof(*c));
}

bool svg_clean_has_id(const svg_clean *c, const char *id)
{
	int lo = 0, hi = c->n_ids - 1;

	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		int d = strcmp(c->ids[mid], id);
		if (!d)
			return true;
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return false;
}

bool svg_file_name_valid(const char *file)
{
	size_t n = strlen(file);

	if (n < 1 || n > 128 || file[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)file[i]) && file[i] != '_' && file[i] != '.' &&
		    file[i] != '-')
			return false;
	return true;
}

int svg_encode_report(json_buf *b, const svg_clean *c)
{
	size_t start = b->len;

	if (JSON_BUF_LIT(b, "{\"removed\":["))
		goto fail;
	for (int i = 0; i < c->n_removed; i++)
		if ((i && JSON_BUF_LIT(b, ",")) || JSON_BUF_LIT(b, "{\"what\":") ||
		    json_buf_string(b, c->removed[i].what, JSON_STR_REPAIR_UTF8) ||
		    JSON_BUF_LIT(b, ",\"where\":") ||
		    json_buf_string(b, c->removed[i].where, JSON_STR_REPAIR_UTF8) ||
		    JSON_BUF_LIT(b, "}"))
			goto fail;
	if (JSON_BUF_LIT(b, "],\"removed_total\":") || json_buf_int(b, c->n_removed_total) ||
	    JSON_BUF_LIT(b, "}"))
		goto fail;
	return 0;
fail:
	json_buf_truncate(b, start);
	return RIGD_E_NOMEM;
}

/*
 * auth.js: this tab's access token (docs/security.md).
 *
 * The token is kept in sessionStorage: it survives a reload but not the
 * tab, and it never goes into a URL (URLs end up in server logs, history
 * and Referer headers). connection.js sends it as the first message of
 * every websocket connection; api.js sends it as "Authorization: Bearer" on
 * every request. Whoever meets a refusal for want of a token or of a role
 * (HTTP 401/403, websocket "unauthorized"/"forbidden") calls report(), and
 * the page offers the token field (main.js). Without tokens on the server
 * none of this shows: no token is asked for, none is sent.
 */
import { Emitter } from './util.js';

const KEY = 'rigd.token';

/* What rigd accepts in an auth message: 1 to 256 visible ASCII characters. */
export function validToken(token) {
	return typeof token === 'string' && /^[\x21-\x7e]{1,256}$/.test(token);
}

/*
 * Events:
 *   change   {token} the token was set or forgotten
 *   refused  {code: 'unauthorized'|'forbidden', message} the server refused
 *            something for want of a (better) token
 */
class TokenStore extends Emitter {
	constructor() {
		super();
		// Where sessionStorage is disabled the token lives as long as the page.
		this._fallback = null;
	}

	/* The token, or null. */
	get token() {
		try {
			return sessionStorage.getItem(KEY) || null;
		} catch {
			return this._fallback;
		}
	}

	/* Keeps 'token' (validToken) for this tab; null forgets it. */
	set(token) {
		if (token !== null && !validToken(token)) throw new Error('a token is 1 to 256 visible characters, without spaces');
		this._fallback = token;
		try {
			if (token === null) sessionStorage.removeItem(KEY);
			else sessionStorage.setItem(KEY, token);
		} catch {
			/* storage may be disabled: the fallback holds it */
		}
		this.emit('change', { token });
	}

	/* 'headers' with the Authorization header added when there is a token. */
	headers(headers = {}) {
		const token = this.token;
		return token ? { ...headers, authorization: `Bearer ${token}` } : { ...headers };
	}

	/* Reports a refusal; codes other than unauthorized and forbidden are
	 * ignored. */
	report(code, message) {
		if (code === 'unauthorized' || code === 'forbidden') this.emit('refused', { code, message: message || '' });
	}
}

export const auth = new TokenStore();

/*
 * What to tell the user about a refusal, in words: 'code' is unauthorized
 * or forbidden, 'message' the server's own words, 'hasToken' whether a
 * token was sent.
 */
export function refusalText(code, message, hasToken) {
	if (code === 'forbidden') {
		const why = message ? ` (the server says: ${message})` : '';
		return `Your token lacks the role for this${why}. Enter a token with more rights, such as an editor's token to edit.`;
	}
	return hasToken
		? 'The server did not accept this token. Check it, or enter another.'
		: 'This server needs an access token. Enter yours to see and edit scenes.';
}

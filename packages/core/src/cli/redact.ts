/**
 * Store addresses as they may be printed. Every line the command writes goes through `redactUrls`
 * (sluice.ts), so an address reaching a message by any path (a label, a client's error) is hidden.
 */

/** A query parameter whose value is a credential: pg and ioredis read `?password=`. */
const SECRET_PARAM = /([?&;][^=&#\s]*(?:pass|pwd|secret|token|auth|key)[^=&#\s]*=)[^&#;\s]*/gi;

/**
 * One address, the whole of `text`, without its password. The userinfo runs from `scheme://` to the
 * LAST '@': a password may hold '@', '/' or '?' (base64 ones hold '/'), and the first '@' or '/' cut
 * it short (review: the hostile tester's password-leaks.sh). Text with no scheme is masked the same.
 */
export function redactUrl(text: string): string {
  const scheme = text.indexOf('://');
  const start = scheme === -1 ? 0 : scheme + 3;
  const at = text.lastIndexOf('@');
  const host = at < start ? text.slice(start) : text.slice(at + 1);
  const auth = at < start ? '' : `${maskAuth(text.slice(start, at))}@`;
  return `${text.slice(0, start)}${auth}${host.replace(SECRET_PARAM, '$1***')}`;
}

/** The user is kept (it says which account); a userinfo holding another URL is masked whole. */
function maskAuth(auth: string): string {
  const colon = auth.indexOf(':');
  return colon === -1 || auth.includes('//') ? '***' : `${auth.slice(0, colon)}:***`;
}

/**
 * Every address in a line: each `scheme://` up to a space, a quote or a '[' (the --help forms such as
 * `redis://[:password@]host` are left whole; an IPv6 host's userinfo is before it), a URL inside
 * another's userinfo (ioredis Cluster's URL startup nodes) hidden with it; the punctuation of the
 * sentence after it (': ', ')') is not its. Twice changes nothing.
 */
export function redactUrls(text: string): string {
  return text.replace(/[a-z][a-z0-9+.-]*:\/\/(?:[^\s'"`<>\\[]*[^\s'"`<>\\[:;,.)])?/gi, redactUrl);
}

// Credentials in URLs never reach disk or output: `--engine http://user:pass@host` or a
// `?api_key=...` would otherwise be copied into run.json, run-card.json, /api/status, bus events
// and logs. Works on a URL or on any text that contains URLs (an error message that quotes one);
// text without credentials comes back unchanged, byte for byte.

// A URL inside text ends at whitespace, a quote or a backslash (a JSON log line's next field).
/** userinfo of scheme://userinfo@host: everything between "//" and "@" before the host ends. */
const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"'<>\\]+@/gi;
/** A query (or fragment) parameter whose name says it holds a secret. */
const SECRET_PARAM = /([?&#;])([^=&#\s"'<>\\]*(?:token|key|secret|pass|pwd|auth|sig|credential|session)[^=&#\s"'<>\\]*)=([^&#\s"'<>\\]*)/gi;

export const REDACTED = "***";

/** `value` with URL userinfo and secret-named query parameters replaced by "***". */
export function redactUrl(value: string): string {
  return value.replace(USERINFO, `$1${REDACTED}@`).replace(SECRET_PARAM, (_m, sep: string, name: string) => `${sep}${name}=${REDACTED}`);
}

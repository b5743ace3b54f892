// vLLM's API key check (`vllm serve --api-key KEY`, or the environment variable VLLM_API_KEY when
// no --api-key is given), as its AuthenticationMiddleware does it in vLLM v0.33.0
// (vllm/entrypoints/openai/api_server.py, class AuthenticationMiddleware; build_app adds it when
// a key is set): only paths that start with /v1 are checked, so /health, /metrics, /tokenize,
// /detokenize stay open; OPTIONS is never checked; the header is "Authorization: <scheme> <key>"
// with the scheme "bearer" in any case; a missing or wrong key is a 401 with the body
// {"error": "Unauthorized"} before any route runs (an unknown /v1 path too).
import type { IncomingMessage } from "node:http";
import { timingSafeEqual, createHash } from "node:crypto";

/** vLLM's variable for the key, read when no --api-key is given. */
export const VLLM_API_KEY_ENV = "VLLM_API_KEY";

/** The body vLLM's middleware sends with its 401. */
export const UNAUTHORIZED_BODY = { error: "Unauthorized" } as const;

/** The keys a server accepts: --api-key's (several may be given) beat the variable's; empty ones count as none. */
export function apiKeysOf(flagKeys: readonly string[] | undefined, env: NodeJS.ProcessEnv = process.env): string[] {
  const given = flagKeys && flagKeys.length > 0 ? flagKeys : [env[VLLM_API_KEY_ENV] ?? ""];
  return given.filter((k) => k !== "");
}

const digest = (text: string): Buffer => createHash("sha256").update(text, "utf8").digest();

/** A check of requests against `keys`; with no keys every request passes, as in vLLM. */
export function apiKeyCheck(keys: readonly string[]): (req: IncomingMessage) => boolean {
  if (keys.length === 0) return () => true;
  const hashes = keys.map(digest);
  return (req) => {
    if (req.method === "OPTIONS") return true;
    const path = (req.url ?? "/").split("?", 1)[0]!;
    if (!path.startsWith("/v1")) return true;
    const header = req.headers.authorization;
    if (!header) return false;
    const space = header.indexOf(" ");
    const scheme = space < 0 ? header : header.slice(0, space);
    const param = space < 0 ? "" : header.slice(space + 1);
    if (scheme.toLowerCase() !== "bearer") return false;
    const hash = digest(param);
    // Every key compared, in constant time, as vLLM does.
    let match = false;
    for (const h of hashes) match = timingSafeEqual(hash, h) || match;
    return match;
  };
}

// The engine's API key (`agent --engine-api-key`, vLLM's --api-key / VLLM_API_KEY): every request
// of this process to that engine carries it as `Authorization: Bearer KEY`, whichever part of the
// agent sends it (methods, probe, load and settings reads, the --vllm-cmd supervisor). Kept by the
// engine's origin, as vLLM keys a whole server: the agents of a process that share an engine share
// its key, and a second, different key for the same engine is refused. The key is never part of a
// URL, an error message or a log line.
import { UsageError } from "../common/errors.js";

/** Keys by engine origin, one per registration (all equal); each agent releases its own. */
const keys = new Map<string, string[]>();

function originOf(url: string | URL): string | undefined {
  try {
    return (typeof url === "string" ? new URL(url) : url).origin;
  } catch {
    return undefined;
  }
}

/** Sends `key` with every request to the engine at `engineUrl` until the returned function is called. */
export function useEngineApiKey(engineUrl: string, key: string): () => void {
  const origin = originOf(engineUrl);
  if (origin === undefined || key === "") return () => {};
  const list = keys.get(origin) ?? [];
  if (list.length > 0 && list[0] !== key) throw new UsageError(`--engine-api-key: this process already sends another key to the engine at ${origin}; an engine has one key`);
  list.push(key);
  keys.set(origin, list);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const i = list.lastIndexOf(key);
    if (i >= 0) list.splice(i, 1);
    if (list.length === 0 && keys.get(origin) === list) keys.delete(origin);
  };
}

/** The Authorization header value for a request to `url`, when its engine has a key. */
export function engineAuthorization(url: string | URL): string | undefined {
  const origin = originOf(url);
  const key = origin === undefined ? undefined : keys.get(origin)?.at(-1);
  return key === undefined ? undefined : `Bearer ${key}`;
}

/** Whether requests to `url` carry a key (the 401 report says "check" rather than "give"). */
export function hasEngineApiKey(url: string): boolean {
  return engineAuthorization(url) !== undefined;
}

/** The statuses with which an engine refuses a missing or wrong key (vLLM: 401). */
export function isKeyRefusal(status: number): boolean {
  return status === 401;
}

/** The one line an agent logs when its engine refuses the key. */
export function keyRefusalMessage(engineUrl: string, status: number): string {
  return hasEngineApiKey(engineUrl)
    ? `engine refused the API key (HTTP ${status}): check --engine-api-key (the key the engine was started with, vLLM's --api-key or VLLM_API_KEY)`
    : `engine refused the API key (HTTP ${status}): give --engine-api-key (the key the engine was started with, vLLM's --api-key or VLLM_API_KEY)`;
}

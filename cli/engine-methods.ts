// The engine-method flags of `agent` and `run`: --engine URLs and --seeds checked at start (exit 2);
// the methods themselves are agent/method-table.ts.
import { UsageError } from "../common/errors.js";
import { csv } from "./options.js";

export { METHODS, methodFactory, type MethodSetup, type SeededMethod } from "../agent/index.js";

/**
 * --engine: an http(s) base URL, checked at start (exit 2) rather than failing every request. No
 * query or fragment: endpoint paths are appended to the URL (".../v1?x=1/health" never answers).
 */
export function engineUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--engine must be a URL such as http://127.0.0.1:8000, got ${JSON.stringify(value)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError(`--engine must be http(s), got ${JSON.stringify(value)}`);
  if (url.port !== "" && (Number(url.port) < 1 || Number(url.port) > 65535)) throw new UsageError(`--engine port must be 1..65535, got ${JSON.stringify(value)}`);
  if (value.includes("?") || value.includes("#")) throw new UsageError(`--engine must be a base URL without a query or fragment (endpoint paths are appended to it), got ${JSON.stringify(value)}`);
  return value.replace(/\/+$/, "");
}

export function parseSeeds(value: string | undefined): number[] {
  if (value === undefined) return [];
  const seeds = (csv(value) ?? []).map((s) => Number(s));
  if (seeds.some((n) => !Number.isInteger(n) || n < 0)) throw new UsageError(`--seeds must be non-negative integers, e.g. 0,1,2; got ${JSON.stringify(value)}`);
  return [...new Set(seeds)];
}

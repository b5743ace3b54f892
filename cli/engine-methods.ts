// The engine methods the CLI can drive (`agent --method`, `run --method`), built the same way for both.
import { UsageError } from "../common/errors.js";
import { type EngineMethod, type RunParams, type AdaptiveConcurrency, type RetryPolicy, SystemOneMethod, DecisionsMethod, LabelReadMethod } from "../agent/index.js";
import { csv } from "./options.js";
import type { Logger } from "../common/log.js";

export interface MethodSetup {
  baseUrl: string;
  model: string | undefined;
  capacity: number | undefined;
  api: "completions" | "chat";
  /** Engine requests in flight, adapted to the engine's queue (vllm:num_requests_waiting). */
  limiter: AdaptiveConcurrency;
  /** --seeds: label-permutation seeds until the run's Welcome names its own. */
  seeds: number[];
  /** --request-timeout-ms, --retries, and who hears of timeouts. */
  retry?: Partial<RetryPolicy>;
  /** Where a method says what it found out about the engine (seed support). */
  logger?: Logger;
}

/** Every method takes the run's label-permutation seeds from the coordinator's Welcome (--seeds when the run names none). */
export type SeededMethod = EngineMethod & { applyRunParams(params: RunParams): void };

/** Engine methods this build can run, by --method name. */
export const METHODS: Record<string, (setup: MethodSetup) => SeededMethod> = {
  systemone: (m) => new SystemOneMethod({ baseUrl: m.baseUrl, ...(m.model ? { model: m.model } : {}), ...(m.capacity ? { capacity: m.capacity } : {}), seeds: m.seeds, limiter: m.limiter, ...(m.logger ? { logger: m.logger } : {}), ...(m.retry ? { retry: m.retry } : {}) }),
  decisions: (m) => new DecisionsMethod({ baseUrl: m.baseUrl, ...(m.model ? { model: m.model } : {}), ...(m.capacity ? { capacity: m.capacity } : {}), seeds: m.seeds, limiter: m.limiter, ...(m.logger ? { logger: m.logger } : {}), ...(m.retry ? { retry: m.retry } : {}) }),
  "label-read": (m) => new LabelReadMethod({ baseUrl: m.baseUrl, ...(m.model ? { model: m.model } : {}), ...(m.capacity ? { capacity: m.capacity } : {}), api: m.api, seeds: m.seeds, limiter: m.limiter, ...(m.logger ? { logger: m.logger } : {}), ...(m.retry ? { retry: m.retry } : {}) }),
};

/** --engine: an http(s) base URL, checked at start (exit 2) rather than failing every request. */
export function engineUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--engine must be a URL such as http://127.0.0.1:8000, got ${JSON.stringify(value)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError(`--engine must be http(s), got ${JSON.stringify(value)}`);
  if (url.port !== "" && (Number(url.port) < 1 || Number(url.port) > 65535)) throw new UsageError(`--engine port must be 1..65535, got ${JSON.stringify(value)}`);
  return value.replace(/\/+$/, "");
}

export function parseSeeds(value: string | undefined): number[] {
  if (value === undefined) return [];
  const seeds = (csv(value) ?? []).map((s) => Number(s));
  if (seeds.some((n) => !Number.isInteger(n) || n < 0)) throw new UsageError(`--seeds must be non-negative integers, e.g. 0,1,2; got ${JSON.stringify(value)}`);
  return [...new Set(seeds)];
}

/** The factory of a --method name; a usage error names the choices. */
export function methodFactory(name: string): (setup: MethodSetup) => SeededMethod {
  const make = METHODS[name];
  if (!make) throw new UsageError(`--method ${JSON.stringify(name)} is not available; choose one of ${Object.keys(METHODS).join(", ")}`);
  return make;
}

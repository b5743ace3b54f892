// The engine methods an agent can drive, by name (`agent --method`, `run --method`, the one-process
// run's agents), built the same way for each.
import { UsageError } from "../common/errors.js";
import { type EngineMethod, type RunParams, type AdaptiveConcurrency, type RetryPolicy, SystemOneMethod, DecisionsMethod, LabelReadMethod } from "../agent/index.js";
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

/** The factory of a --method name; a usage error names the choices. */
export function methodFactory(name: string): (setup: MethodSetup) => SeededMethod {
  const make = METHODS[name];
  if (!make) throw new UsageError(`--method ${JSON.stringify(name)} is not available; choose one of ${Object.keys(METHODS).join(", ")}`);
  return make;
}

// The engine methods this build can run, by name (`agent --method`, `run --method`), each built
// from the same setup so an agent and an embedded run ask the engine the same way.
import { UsageError } from "../common/errors.js";
import type { Logger } from "../common/log.js";
import type { AdaptiveConcurrency } from "./adaptive-concurrency.js";
import type { EngineMethod, RunParams } from "./engine-method.js";
import type { RetryPolicy } from "./methods/engine-call.js";
import { DecisionsMethod } from "./methods/decisions.js";
import { LabelReadMethod } from "./methods/label-read.js";
import { SystemOneMethod } from "./methods/systemone.js";

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

/** The --method name of an agent that runs whichever method each run names (a sweep). */
export const ANY_METHOD = "any";

/** The factory of a --method name; a usage error names the choices. */
export function methodFactory(name: string): (setup: MethodSetup) => SeededMethod {
  const make = METHODS[name];
  if (!make) throw new UsageError(`--method ${JSON.stringify(name)} is not available; choose one of ${Object.keys(METHODS).join(", ")}`);
  return make;
}

// The engine methods the CLI can drive (`agent --method`, `run --method`), built the same way for both.
import { UsageError } from "../common/errors.js";
import type { EngineMethod, RunParams } from "../agent/engine-method.js";
import type { AdaptiveConcurrency } from "../agent/adaptive-concurrency.js";
import { SystemOneMethod } from "../agent/methods/systemone.js";
import { DecisionsMethod } from "../agent/methods/decisions.js";
import { LabelReadMethod } from "../agent/methods/label-read.js";
import { csv } from "./options.js";

export interface MethodSetup {
  baseUrl: string;
  model: string | undefined;
  capacity: number | undefined;
  api: "completions" | "chat";
  /** Engine requests in flight, adapted to the engine's queue (vllm:num_requests_waiting). */
  limiter: AdaptiveConcurrency;
  /** --seeds: label-permutation seeds until the run's Welcome names its own. */
  seeds: number[];
}

/** Every method takes the run's label-permutation seeds from the coordinator's Welcome (--seeds when the run names none). */
export type SeededMethod = EngineMethod & { applyRunParams(params: RunParams): void };

/** Engine methods this build can run, by --method name. */
export const METHODS: Record<string, (setup: MethodSetup) => SeededMethod> = {
  systemone: (m) => new SystemOneMethod({ baseUrl: m.baseUrl, ...(m.model ? { model: m.model } : {}), ...(m.capacity ? { capacity: m.capacity } : {}), seeds: m.seeds, limiter: m.limiter }),
  decisions: (m) => new DecisionsMethod({ baseUrl: m.baseUrl, ...(m.model ? { model: m.model } : {}), ...(m.capacity ? { capacity: m.capacity } : {}), seeds: m.seeds, limiter: m.limiter }),
  "label-read": (m) => new LabelReadMethod({ baseUrl: m.baseUrl, ...(m.model ? { model: m.model } : {}), ...(m.capacity ? { capacity: m.capacity } : {}), api: m.api, seeds: m.seeds, limiter: m.limiter }),
};

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

// The coordinator's defaults that its flags show in --help. A stand-in for COORDINATOR_DEFAULTS of
// coordinator/coordinator-options.ts, added there in parallel: once merged, the flags read that
// object and this file goes. The values are the ones coordinator/server.ts and worker-host.ts apply.
import { DEFAULT_COORDINATOR_HEAP_MB } from "../../coordinator/index.js";
import { DEFAULT_SCORER_HEAP_MB } from "../../scorer/index.js";

export const COORDINATOR_DEFAULTS = {
  leaseMs: 30_000,
  heartbeatMs: 5_000,
  drainTimeoutMs: 30_000,
  maxHeapMb: DEFAULT_COORDINATOR_HEAP_MB,
  scorerMaxHeapMb: DEFAULT_SCORER_HEAP_MB,
} as const;

/** The method of a run when no flag names one (coordinator/run-manifest.ts MethodConfig). */
export const METHOD_DEFAULTS = { method: "systemone", seeds: [] as number[], temperature: 0, model: "" } as const;

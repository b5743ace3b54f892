// The coordinator's own flags (`coordinator`; --lease-ms and --heartbeat-ms also `run`): leases, heartbeats, the drain,
// and the heap caps of its thread and of its scorer's. Defaults shown in --help come from
// COORDINATOR_DEFAULTS.
import { flagGroup, type FlagSpec } from "../flag-group.js";
import { intArg } from "../options.js";
import { COORDINATOR_DEFAULTS } from "../../coordinator/index.js";
import { DEFAULT_SCORER_HEAP_MB } from "../../scorer/index.js";

export interface CoordinatorFlagOptions {
  leaseMs: number;
  heartbeatMs: number;
  drainTimeoutMs: number;
  maxHeapMb: number;
  scorerMaxHeapMb: number;
}

/** The coordinator's defaults with its scorer thread's heap cap (scorer/ declares that one). */
const DEFAULTS: Partial<CoordinatorFlagOptions> = { ...COORDINATOR_DEFAULTS, scorerMaxHeapMb: DEFAULT_SCORER_HEAP_MB };

const intAtLeast =
  (min: number) =>
  (raw: string, flag: string): number =>
    intArg(flag, raw, min)!;

export const LEASE_FLAG: FlagSpec<CoordinatorFlagOptions> = { key: "leaseMs", flags: "--lease-ms <ms>", description: "lease of a work unit, renewed by heartbeats", parse: intAtLeast(100) };

export const HEARTBEAT_FLAG: FlagSpec<CoordinatorFlagOptions> = {
  key: "heartbeatMs",
  flags: "--heartbeat-ms <ms>",
  description: "heartbeat period asked of agents; --lease-ms must be at least twice it (not given: at most a third of --lease-ms)",
  parse: intAtLeast(10),
};

/** --lease-ms and --heartbeat-ms (`run`). */
export const LEASE_FLAGS = flagGroup<CoordinatorFlagOptions>(DEFAULTS, [LEASE_FLAG, HEARTBEAT_FLAG]);

export const COORDINATOR_FLAGS = flagGroup<CoordinatorFlagOptions>(DEFAULTS, [
  LEASE_FLAG,
  HEARTBEAT_FLAG,
  { key: "drainTimeoutMs", flags: "--drain-timeout-ms <ms>", description: "how long a drain waits for agents", parse: intAtLeast(0) },
  { key: "maxHeapMb", flags: "--max-heap-mb <mb>", description: "V8 old-generation cap of the coordinator thread, bounding its memory", parse: intAtLeast(64) },
  { key: "scorerMaxHeapMb", flags: "--scorer-max-heap-mb <mb>", description: "V8 old-generation cap of the scorer thread that writes metrics.json", parse: intAtLeast(64) },
]);

// What a coordinator is started with, declared once: each field documents its default, the
// defaults live in COORDINATOR_DEFAULTS, and withCoordinatorDefaults() is the one place they are
// applied (server.ts, the results store); cli/ reads the same object for --help.
import type { GoldMessage } from "../common/suite/index.js";
import type { Bus } from "../common/bus/index.js";
import type { Logger } from "../common/log.js";
import { UsageError } from "../common/errors.js";
import { DEFAULT_PLAN_LIMITS, type PlanLimits } from "./planner.js";
import type { LineWriterThread } from "./line-writer-thread.js";
import type { CommittedLine } from "../common/results/index.js";
import type { MethodConfig } from "./run-manifest.js";
import type { TlsOptions } from "./transport/tls.js";
import type { CoordinatorMetricsOptions } from "./observability/coordinator-metrics.js";
import type { LiveEvent } from "./observability/live-event.js";

export interface CoordinatorOptions {
  suiteDir: string;
  outDir: string;
  tracks?: readonly string[];
  families?: readonly string[];
  /** Records per track at most, whole groups, the same every time (common/suite/record-limit.ts); all when absent. Pinned in run.json. */
  limit?: number;
  /**
   * host:port to listen on (port 0: a free port).
   * @default "127.0.0.1:0"
   */
  listen?: string;
  /**
   * The run's name, kept in run.json (`run_name`) and published in its bus status, so a scorer
   * given the same name (`scorer --run-name`) scores this run and no other. Not given: the name
   * run.json records, if any.
   */
  runName?: string;
  /** Bearer token agents and status clients must send as `authorization: Bearer <token>`. */
  token?: string;
  tls?: TlsOptions;
  /**
   * Engine method the agents run; the fields given replace those of the default.
   * @default { method: "systemone", seeds: [], temperature: 0, model: "" } (model "": the engine's)
   */
  method?: Partial<MethodConfig>;
  /**
   * Lease of a unit in ms, renewed by heartbeats and results.
   * @default 30000
   */
  leaseMs?: number;
  /**
   * Heartbeat period asked of agents, in ms. Not given, it is at most a third of leaseMs (a
   * heartbeat renews the leases, so a lease outlives two missed beats); given, leaseMs must be at
   * least twice it (leaseHeartbeatError).
   * @default 5000
   */
  heartbeatMs?: number;
  /**
   * Resume even when run.json names another suite, tracks or method.
   * @default false
   */
  force?: boolean;
  /**
   * How long drain() waits for agents to hand in what they hold, in ms.
   * @default 30000
   */
  drainTimeoutMs?: number;
  /**
   * Size limits of a work unit; the fields given replace those of the default.
   * @default DEFAULT_PLAN_LIMITS (planner.ts)
   */
  planLimits?: Partial<PlanLimits>;
  /**
   * Results store batching: lines per fsync batch.
   * @default 256
   */
  storeBatchLines?: number;
  /**
   * Results store batching: longest wait of a line before its batch is fsynced, in ms.
   * @default 50
   */
  storeFlushMs?: number;
  /**
   * V8 old-generation cap, in MB, of the worker thread a bounded coordinator runs in
   * (worker-host.ts, Coordinator); a coordinator in the caller's thread has no cap.
   * @default 256 (DEFAULT_COORDINATOR_HEAP_MB)
   */
  maxHeapMb?: number;
  /** Called once per committed (fsynced) result line. */
  onCommitted?: (line: CommittedLine) => void;
  /**
   * Results lines are written and fsynced in this thread (worker-run.ts starts it), not the
   * coordinator's; the store closes it. Its texts must be wanted where onCommitted or a bus is given.
   */
  lineWriter?: LineWriterThread;
  /** Called once per track whose every record is committed (at start for tracks already complete). */
  onTrackComplete?: (track: string, family: string) => void;
  /**
   * Called with each selected track's gold as the suite is read, then the suite identity (before the
   * coordinator serves): the scorer of this process takes its gold from here (CommitScorer.goldFeed).
   */
  onGold?: (message: GoldMessage) => void;
  /**
   * Test hook: awaited before each suite file is read (in the coordinator's thread), so a test can
   * hold a late track back deterministically while the early ones are served. Not for production use.
   */
  beforeTrackRead?: (relPath: string) => Promise<void>;
  /**
   * A sweep's runs follow each other on one address: at the end agents are let go (told with a
   * reconnecting Drain that the next run follows, then their stream ends; they reattach to the next
   * run) instead of drained (which stops them).
   * @default false
   */
  releaseAgentsAtEnd?: boolean;
  /**
   * Where committed results, run events and the run's status are published (coordinator/bus-publisher.ts).
   * Owned by the caller: the coordinator stops publishing when it stops, the caller closes the bus.
   */
  bus?: Bus;
  /** Keep Prometheus metrics (udm_*) in a registry of the coordinator's thread; read with metricsText(). */
  metrics?: CoordinatorMetricsOptions;
  /** Called with each event the live page shows (track complete, agents, expired leases, the end). */
  onLiveEvent?: (event: LiveEvent) => void;
  /** @default createLogger("coordinator") */
  logger?: Logger;
}

/** Default V8 old-generation cap of the coordinator thread (bench/coordinator-bench.ts: ~250 MB peak RSS on the full suite). */
export const DEFAULT_COORDINATOR_HEAP_MB = 256;

/** The options that have a default, with it. */
export const COORDINATOR_DEFAULTS = {
  listen: "127.0.0.1:0",
  method: { method: "systemone", seeds: [], temperature: 0, model: "" } as Readonly<MethodConfig>,
  leaseMs: 30_000,
  heartbeatMs: 5_000,
  force: false,
  drainTimeoutMs: 30_000,
  planLimits: DEFAULT_PLAN_LIMITS as Readonly<Required<PlanLimits>>,
  storeBatchLines: 256,
  storeFlushMs: 50,
  maxHeapMb: DEFAULT_COORDINATOR_HEAP_MB,
  releaseAgentsAtEnd: false,
} as const satisfies Partial<CoordinatorOptions>;

/** Coordinator options with every default applied (the method and plan limits whole). */
export type ResolvedCoordinatorOptions = Omit<CoordinatorOptions, keyof typeof COORDINATOR_DEFAULTS> & {
  [K in Exclude<keyof typeof COORDINATOR_DEFAULTS, "method" | "planLimits">]-?: NonNullable<CoordinatorOptions[K]>;
} & { method: MethodConfig; planLimits: Required<PlanLimits> };

/** Leases renewed by heartbeats need at least this many beats per lease. */
export const BEATS_PER_LEASE = 2;

/**
 * The heartbeat period for a lease: the one given, else the default lowered to a third of the lease.
 * A lease shorter than two periods expires between heartbeats, and no unit is ever finished: a
 * UsageError naming both flags.
 */
export function heartbeatFor(leaseMs: number, heartbeatMs?: number): number {
  if (heartbeatMs === undefined) return Math.min(COORDINATOR_DEFAULTS.heartbeatMs, Math.floor(leaseMs / 3));
  if (leaseMs < BEATS_PER_LEASE * heartbeatMs) {
    throw new UsageError(`--lease-ms ${leaseMs} is shorter than ${BEATS_PER_LEASE} heartbeats (--heartbeat-ms ${heartbeatMs}): leases would expire between heartbeats; give --lease-ms of at least ${BEATS_PER_LEASE * heartbeatMs} or a shorter --heartbeat-ms`);
  }
  return heartbeatMs;
}

export function withCoordinatorDefaults(options: CoordinatorOptions): ResolvedCoordinatorOptions {
  const d = COORDINATOR_DEFAULTS;
  const leaseMs = options.leaseMs ?? d.leaseMs;
  return {
    ...options,
    listen: options.listen ?? d.listen,
    method: { ...d.method, seeds: [...d.method.seeds], ...options.method },
    leaseMs,
    heartbeatMs: heartbeatFor(leaseMs, options.heartbeatMs),
    force: options.force ?? d.force,
    drainTimeoutMs: options.drainTimeoutMs ?? d.drainTimeoutMs,
    planLimits: { ...d.planLimits, ...options.planLimits },
    storeBatchLines: options.storeBatchLines ?? d.storeBatchLines,
    storeFlushMs: options.storeFlushMs ?? d.storeFlushMs,
    maxHeapMb: options.maxHeapMb ?? d.maxHeapMb,
    releaseAgentsAtEnd: options.releaseAgentsAtEnd ?? d.releaseAgentsAtEnd,
  };
}

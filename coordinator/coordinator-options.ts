// What a coordinator is started with (server.ts startCoordinator), with the defaults.
import type { GoldMessage } from "../common/suite/index.js";
import type { Bus } from "../common/bus/index.js";
import type { Logger } from "../common/log.js";
import type { PlanLimits } from "./planner.js";
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
  /** host:port to listen on. Default "127.0.0.1:0" (a free port). */
  listen?: string;
  /** Bearer token agents and status clients must send as `authorization: Bearer <token>`. */
  token?: string;
  tls?: TlsOptions;
  /** Engine method the agents run. Default systemone, no seeds, temperature 0, the engine's model. */
  method?: Partial<MethodConfig>;
  /** Lease of a unit, renewed by heartbeats and results. Default 30000. */
  leaseMs?: number;
  /** Heartbeat period asked of agents. Default 5000. */
  heartbeatMs?: number;
  /** Resume even when run.json names another suite, tracks or method. */
  force?: boolean;
  /** How long drain() waits for agents to hand in what they hold. Default 30000. */
  drainTimeoutMs?: number;
  planLimits?: Partial<PlanLimits>;
  /** Results store batching: lines per fsync batch (default 256), longest wait (default 50 ms). */
  storeBatchLines?: number;
  storeFlushMs?: number;
  /** Called once per committed (fsynced) result line. */
  onCommitted?: (line: CommittedLine) => void;
  /** Called once per track whose every record is committed (at start for tracks already complete). */
  onTrackComplete?: (track: string, family: string) => void;
  /**
   * Called with each selected track's gold as the suite is read, then the suite identity (before the
   * coordinator serves): the scorer of this process takes its gold from here (CommitScorer.goldFeed).
   */
  onGold?: (message: GoldMessage) => void;
  /**
   * A sweep's runs follow each other on one address: at the end agents are let go (their stream
   * ends, they reattach to the next run) instead of drained (which stops them). Default false.
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
  logger?: Logger;
}

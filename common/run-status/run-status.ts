// RunStatus: what the coordinator reports of its run, as the one domain type with its totals. Its
// forms are made at each edge only: the proto (Status RPC, coordinator/transport/wire.ts), the bus's
// KV record (common/bus busStatusOf), the live page and the run card's figures (card/run-snapshot.ts).

/** What RunStatus.state reports: the lifecycle state until stopped, then how the run ended. */
export const RUN_STATES = ["starting", "running", "draining", "complete", "failed", "cancelled"] as const;
export type RunStatusState = (typeof RUN_STATES)[number];

/** How a run ended. */
export const RUN_END_STATES = ["complete", "failed", "cancelled"] as const;

/** Why a result was not committed (the validator's verdicts), as the status counts them. */
export const REJECT_REASONS = [
  "unknown_run_id",
  "no_lease",
  "not_in_unit",
  "payload_mismatch",
  "unknown_question",
  "bad_distribution",
  "unanswered_question",
  "conflicting_question",
] as const;
export type RejectReason = (typeof REJECT_REASONS)[number];

export interface AgentStatus {
  agentId: string;
  model: string;
  ready: boolean;
  inflightUnits: number;
  credit: number;
  results: number;
  rejected: number;
  engineUrl: string;
  /** From the agent's last heartbeat: requests in flight to its engine, and the engine's queue. */
  inflightRequests: number;
  engineWaiting: number;
  engineRunning: number;
  /** Set on the agents of RunStatus.agentsLeft: why and when it left. */
  left?: { reason: string; at: string };
}

export interface TrackProgress {
  track: string;
  family: string;
  records: number;
  committed: number;
  complete: boolean;
}

/** Per-record latency as the agents measured it (RecordResult.latency_ms), over committed results. */
export interface LatencySummary {
  count: number;
  meanMs: number;
  /** Linearly interpolated between the nearest ranks; 0 when count is 0. */
  p50Ms: number;
  p95Ms: number;
}

/**
 * The run's totals, computed once (coordinator/run-progress.ts) for every reader: observability and run
 * cards do not compute them again. Tokens and latency are over results committed since this
 * coordinator started (a resumed run's earlier results are counted in recordsResumed only).
 */
export interface RunTotals {
  promptTokens: number;
  completionTokens: number;
  /**
   * Prompt tokens served from the engine's prefix cache; undefined (unknown) while no committed
   * result reported any: vLLM's systemone usage has no cached count, and Usage.cached_tokens has
   * no presence on the wire, so a run of zeros cannot be told from a run of unreported counts.
   */
  cachedTokens: number | undefined;
  /** Sum over agents of seconds attached while the run was active (running, not yet complete). */
  gpuSeconds: number;
  latency: LatencySummary;
  /** Committed records per second over the last 30 s (throughput-meter.ts). */
  recordsPerSecond: number;
  /** Seconds until every record is committed at recordsPerSecond; 0 when complete, undefined while no pace is known. */
  etaSeconds: number | undefined;
}

export interface RunStatus {
  runId: string;
  state: RunStatusState;
  suiteIdentity: string;
  recordsTotal: number;
  recordsCommitted: number;
  recordsResumed: number;
  unitsQueued: number;
  unitsInflight: number;
  resultsRejected: number;
  leasesExpired: number;
  backupUnits: number;
  recordsPerSecond: number;
  /** Seconds of the run over every session of its --out (earlier coordinators' time included). */
  elapsedSeconds: number;
  /** Of elapsedSeconds, what earlier sessions ran before this coordinator started. */
  elapsedBeforeSeconds: number;
  /** Agents attached now. */
  agents: AgentStatus[];
  /** Agents that left lately (coordinator/left-agents.ts: 10 minutes, at most 64), with `left` set. */
  agentsLeft: AgentStatus[];
  tracks: TrackProgress[];
  rejectedByReason: Partial<Record<RejectReason, number>>;
  /** Results dropped because their run_id was already answered (the first result wins). */
  resultsDuplicate: number;
  /** Records committed with every question in errors after repeated invalid results. */
  recordsGivenUp: number;
  totals: RunTotals;
  /**
   * Results accepted since this coordinator started, per model as the answering agent's engine
   * served it (its Hello): the run card's model id as served. Kept after the agents have left.
   */
  answeredByModel: Record<string, number>;
}

/** What a coordinator reports while it reads the suite (before it knows the run). */
export function startingStatus(): RunStatus {
  return {
    runId: "",
    state: "starting",
    suiteIdentity: "",
    recordsTotal: 0,
    recordsCommitted: 0,
    recordsResumed: 0,
    unitsQueued: 0,
    unitsInflight: 0,
    resultsRejected: 0,
    leasesExpired: 0,
    backupUnits: 0,
    recordsPerSecond: 0,
    elapsedSeconds: 0,
    elapsedBeforeSeconds: 0,
    agents: [],
    agentsLeft: [],
    tracks: [],
    rejectedByReason: {},
    resultsDuplicate: 0,
    recordsGivenUp: 0,
    totals: {
      promptTokens: 0,
      completionTokens: 0,
      cachedTokens: undefined,
      gpuSeconds: 0,
      latency: { count: 0, meanMs: 0, p50Ms: 0, p95Ms: 0 },
      recordsPerSecond: 0,
      etaSeconds: undefined,
    },
    answeredByModel: {},
  };
}

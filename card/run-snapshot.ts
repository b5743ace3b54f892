// The run card's view of a coordinator's RunStatus, made at the card's edge: the cluster it saw and
// the run totals in the card's units. The recorder reads the status; nothing outside card/ builds these.
import type { RunStatus } from "../common/run-status/index.js";

/** The run totals as the card records them (RunStatus.totals in seconds; null: unknown), summed over the run's sessions by the recorder. */
export interface CardTotals {
  promptTokens: number | null;
  completionTokens: number | null;
  /** null: unknown. */
  cachedTokens: number | null;
  gpuSeconds: number | null;
  /** Per-record latency in seconds; null when no record was timed. */
  latency: { count: number; mean: number; p50: number; p95: number } | null;
}

export interface ClusterView {
  /** Agents seen, with the model their engine served when last seen and the results they sent. */
  agents: ReadonlyArray<{ agent_id: string; model: string; engine_url: string; results: number }>;
  /**
   * The models whose engines answered the run's records, every session (the coordinator's tally,
   * RunStatus.answeredByModel); empty when none is known, then the agents seen give the model id.
   */
  answeredModels?: readonly string[];
  leasesExpired: number;
  backupUnits: number;
  resultsRejected: number;
}

/** What the card reads of a coordinator's RunStatus. */
export type CardStatus = Pick<RunStatus, "agents" | "answeredByModel" | "leasesExpired" | "backupUnits" | "resultsRejected" | "totals">;

/** A RunStatus as the recorder keeps it. */
export interface RunSnapshot {
  cluster: ClusterView;
  /** This session's totals (the coordinator's run progress); undefined when it has none. */
  totals: CardTotals | undefined;
}

/** The card's view of a RunStatus, run totals included (the coordinator's run progress). */
export function snapshotOf(status: CardStatus): RunSnapshot {
  const t = status.totals;
  const l = t.latency;
  return {
    cluster: {
      agents: status.agents.map((a) => ({ agent_id: a.agentId, model: a.model, engine_url: a.engineUrl, results: a.results })),
      answeredModels: Object.keys(status.answeredByModel).filter((m) => status.answeredByModel[m]! > 0),
      leasesExpired: status.leasesExpired,
      backupUnits: status.backupUnits,
      resultsRejected: status.resultsRejected,
    },
    totals: {
      promptTokens: t.promptTokens,
      completionTokens: t.completionTokens,
      cachedTokens: t.cachedTokens ?? null,
      gpuSeconds: t.gpuSeconds,
      latency: l.count > 0 ? { count: l.count, mean: l.meanMs / 1000, p50: l.p50Ms / 1000, p95: l.p95Ms / 1000 } : null,
    },
  };
}

// sweep.json: the sweep's matrix and where each run stands (its card, status, cost), rewritten
// whenever a run starts, ends or is skipped.
import { writeFileAtomic } from "../../common/atomic-file.js";
import type { RunCard } from "../run-card.js";
import { rankingMean } from "../quality-tier.js";
import type { SweepRun } from "./sweep-config.js";

export const SWEEP_RECORD_FORMAT = 1;

/** `complete_with_errors`: the run's card says so (some records errored); the next invocation reruns it. */
export type SweepRunStatus = "pending" | "running" | "complete" | "complete_with_errors" | "skipped" | "failed" | "cancelled";

export interface SweepRunEntry extends SweepRun {
  /** Run directory, relative to sweep.json. */
  out: string;
  status: SweepRunStatus;
  /** Why a run was skipped. */
  note?: string;
  card: string | null;
  fingerprint: string;
  run_card_hash: string | null;
  v1_mean: number | null;
  total_cost_usd: number | null;
  elapsed_seconds: number | null;
}

export interface SweepRecord {
  format: number;
  config: string;
  suite: string;
  dataset_sha256: string;
  started_at: string;
  updated_at: string;
  runs: SweepRunEntry[];
  /** Ids of the agents that attached to any run of the sweep (a resumed sweep drains them too at its end). */
  agents: string[];
  totals: { runs: number; complete: number; skipped: number; with_errors: number; failed: number; cost_usd: number | null; elapsed_seconds: number };
}

export function entryFromCard(entry: SweepRunEntry, card: RunCard): SweepRunEntry {
  return {
    ...entry,
    fingerprint: card.fingerprint,
    run_card_hash: card.run_card_hash,
    v1_mean: rankingMean(card.scores.summary),
    total_cost_usd: card.totals.total_cost_usd,
    elapsed_seconds: card.elapsed_seconds,
  };
}

export function writeSweepRecord(path: string, record: Omit<SweepRecord, "totals" | "updated_at">): SweepRecord {
  const done = record.runs.filter((r) => r.status === "complete" || r.status === "skipped");
  const costs = done.map((r) => r.total_cost_usd);
  const full: SweepRecord = {
    ...record,
    updated_at: new Date().toISOString(),
    totals: {
      runs: record.runs.length,
      complete: record.runs.filter((r) => r.status === "complete").length,
      skipped: record.runs.filter((r) => r.status === "skipped").length,
      with_errors: record.runs.filter((r) => r.status === "complete_with_errors").length,
      failed: record.runs.filter((r) => r.status === "failed" || r.status === "cancelled").length,
      cost_usd: costs.length > 0 && costs.every((c) => c !== null) ? costs.reduce((a, b) => a! + b!, 0) : null,
      elapsed_seconds: done.reduce((a, r) => a + (r.elapsed_seconds ?? 0), 0),
    },
  };
  writeFileAtomic(path, JSON.stringify(full, null, 2) + "\n");
  return full;
}

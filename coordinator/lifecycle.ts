// The coordinator's lifecycle, in one place, and the pure function that decides how a
// run ended.
import type { RunStatusState } from "../common/run-status/index.js";

/**
 * - `starting`: reading the suite, checking run.json, scanning committed results; no agent served.
 * - `running`: units are handed out and results committed.
 * - `draining`: no new units; agents were sent Drain; the store is being flushed.
 * - `stopped`: the server is shut down; `done` has resolved.
 */
export type CoordinatorState = "starting" | "running" | "draining" | "stopped";

/** How a run ended: every record committed, stopped before that, or a fatal error (disk, ...). */
export type RunEnd = "complete" | "cancelled" | "failed";

export function runEnd(input: { committed: number; total: number; fatal: unknown }): RunEnd {
  if (input.fatal !== undefined) return "failed";
  return input.committed >= input.total ? "complete" : "cancelled";
}

export function statusState(state: CoordinatorState, end: RunEnd | undefined, committed: number, total: number): RunStatusState {
  if (state !== "stopped") {
    // A run whose every record is committed reports complete even before the server stops.
    return state === "running" && total > 0 && committed >= total ? "complete" : state;
  }
  return end ?? "cancelled";
}

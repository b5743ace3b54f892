// What the live run page's event feed shows (GET /api/events): the run events that matter to a
// person watching (track complete, agents joining, leaving or not ready, expired leases, the end),
// and a track's headline once the scorer has it. Unit-by-unit events stay on the bus only.
import type { BusEvent } from "../../common/bus/index.js";
import { isScoredInV1 } from "../../common/catalogue.js";

export type LiveEvent = (
  | Extract<BusEvent, { type: "track_complete" | "agent_joined" | "agent_left" | "unit_expired" | "run_complete" }>
  | { type: "agent_ready"; at: string; agentId: string; ready: boolean }
  /** A coordinator took the run up again (a restart): what was committed before it, and its time. */
  | { type: "resumed"; at: string; session: number; recordsCommitted: number; recordsTotal: number; elapsedBeforeSeconds: number }
  | {
      type: "track_scored";
      at: string;
      track: string;
      metric: string;
      value: number | null;
      ci_low: number | null;
      ci_high: number | null;
      /** The track's pillar, and whether it counts in the v1 mean: the page's running summary. */
      pillar?: string;
      v1?: boolean;
    }
) & {
  /** An event of an earlier session, replayed from <out>/run-events.log after a restart. */
  replayed?: boolean;
};

const LIVE_BUS_TYPES = new Set(["track_complete", "agent_joined", "agent_left", "unit_expired", "run_complete"]);

/** The bus event as a live event, or undefined for the unit-by-unit ones. */
export function liveEventOf(e: BusEvent): LiveEvent | undefined {
  return LIVE_BUS_TYPES.has(e.type) ? (e as LiveEvent) : undefined;
}

/** A track's headline as the live page shows it (from this process's scorer or the bus's). */
export function trackScoredEvent(track: string, headline: { metric: string; value: unknown; ci_low: unknown; ci_high: unknown }, pillar?: unknown): LiveEvent {
  const num = (v: unknown) => (typeof v === "number" ? v : null);
  return {
    type: "track_scored",
    at: new Date().toISOString(),
    track,
    metric: headline.metric,
    value: num(headline.value),
    ci_low: num(headline.ci_low),
    ci_high: num(headline.ci_high),
    ...(typeof pillar === "string" && pillar ? { pillar } : {}),
    v1: isScoredInV1(track),
  };
}

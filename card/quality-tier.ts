// The protocol's quality tiers from the v1 mean. Automatic tiers are provisional:
// a nomination for review, never a claim of quality; only human evaluation can confirm one.
import type { QualityTierName, RunCard } from "./run-card.js";

const TIERS: ReadonlyArray<[number, QualityTierName]> = [
  [0.85, "Fluent"],
  [0.7, "Deployable"],
  [0.5, "Functional"],
  [0.3, "Emerging"],
  [0, "Baseline"],
];

export const PROVISIONAL_NOTE = "provisional: an automatic nomination from the v1 mean, not a validated quality claim (the UDM benchmark protocol)";

/** Baseline < 0.30 <= Emerging < 0.50 <= Functional < 0.70 <= Deployable < 0.85 <= Fluent. */
export function qualityTier(v1Mean: number | null): QualityTierName | null {
  if (v1Mean === null || !Number.isFinite(v1Mean)) return null;
  for (const [min, name] of TIERS) if (v1Mean >= min) return name;
  return "Baseline";
}

/** The tier of a run's summary: its v1 mean, or over a partial scope the mean of the scored tracks present. */
export function qualityTierOf(summary: { v1_mean: number | null; v1_mean_partial?: number | null | undefined }): RunCard["quality_tier"] {
  if (summary.v1_mean === null && summary.v1_mean_partial !== undefined && summary.v1_mean_partial !== null) {
    return { tier: qualityTier(summary.v1_mean_partial), basis: "v1_mean_partial", provisional: true, note: PROVISIONAL_NOTE };
  }
  return { tier: qualityTier(summary.v1_mean), basis: "v1_mean", provisional: true, note: PROVISIONAL_NOTE };
}

/** The mean a leaderboard ranks by: v1 mean, else the partial mean of a narrower scope. */
export function rankingMean(summary: { v1_mean: number | null; v1_mean_partial?: number | null | undefined }): number | null {
  return summary.v1_mean ?? summary.v1_mean_partial ?? null;
}

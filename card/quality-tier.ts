// The protocol's quality tiers (seed 003 §5) from the v1 mean. Automatic tiers are provisional:
// a nomination for review, never a claim of quality; only human evaluation can confirm one.
import type { QualityTierName, RunCard } from "./run-card.js";

const TIERS: ReadonlyArray<[number, QualityTierName]> = [
  [0.85, "Fluent"],
  [0.7, "Deployable"],
  [0.5, "Functional"],
  [0.3, "Emerging"],
  [0, "Baseline"],
];

export const PROVISIONAL_NOTE = "provisional: an automatic nomination from the v1 mean, not a validated quality claim (seed 003 §5)";

/** Baseline < 0.30 <= Emerging < 0.50 <= Functional < 0.70 <= Deployable < 0.85 <= Fluent. */
export function qualityTier(v1Mean: number | null): QualityTierName | null {
  if (v1Mean === null || !Number.isFinite(v1Mean)) return null;
  for (const [min, name] of TIERS) if (v1Mean >= min) return name;
  return "Baseline";
}

export function qualityTierOf(v1Mean: number | null): RunCard["quality_tier"] {
  return { tier: qualityTier(v1Mean), basis: "v1_mean", provisional: true, note: PROVISIONAL_NOTE };
}

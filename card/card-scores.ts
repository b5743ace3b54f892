// A card's scores against the same results rescored: `card verify --suite` and `leaderboard --suite`
// recompute every number the card reports (track headlines, pillars, the v1 mean and its interval)
// from the sealed results files, so a card rewritten and resealed by hand does not verify.
import type { Interval, MetricsJson } from "../scorer/index.js";
import type { RunCard } from "./run-card.js";

/** Rescoring the same files gives the same numbers; only float printing may differ. */
export const SCORE_TOLERANCE = 1e-9;

/** Each field of `card.scores` that differs from the rescored metrics, named by its path in the card. */
export function scoreDifferences(card: RunCard, metrics: MetricsJson, v1Interval: Interval | null): string[] {
  const out: string[] = [];
  const cmp = (field: string, recorded: unknown, recomputed: number | null | undefined) => {
    const r = recomputed ?? null;
    const c = recorded === undefined ? null : recorded;
    const same = c === null || r === null ? c === r : typeof c === "number" && Math.abs(c - r) <= SCORE_TOLERANCE;
    if (!same) out.push(`scores.${field}: card records ${fmt(c)}, the results files score ${fmt(r)}`);
  };
  const s = card.scores;
  if (metrics.suite.identity !== card.dataset.sha256) out.push(`dataset.sha256: card records ${card.dataset.sha256}, the suite given is ${metrics.suite.identity}`);
  cmp("summary.v1_mean", s.summary.v1_mean, metrics.summary.v1_mean);
  if (s.summary.v1_mean_partial !== undefined || metrics.summary.v1_mean_partial !== undefined) cmp("summary.v1_mean_partial", s.summary.v1_mean_partial, metrics.summary.v1_mean_partial);
  cmp("summary.v1_tracks", s.summary.v1_tracks, metrics.summary.v1_tracks);
  cmp("summary.family_macro_mean", s.summary.family_macro_mean, metrics.summary.family_macro_mean);
  // Cards from before the interval was recorded have no v1_ci.
  if (s.v1_ci !== undefined) {
    cmp("v1_ci.ci_low", s.v1_ci?.ci_low, v1Interval?.ci_low);
    cmp("v1_ci.ci_high", s.v1_ci?.ci_high, v1Interval?.ci_high);
  }
  for (const [name, c, m] of both("pillars", s.pillars, metrics.pillars, out)) {
    cmp(`pillars.${name}.mean`, c.mean, m.mean);
    cmp(`pillars.${name}.ci_low`, c.ci_low, m.ci_low);
    cmp(`pillars.${name}.ci_high`, c.ci_high, m.ci_high);
    cmp(`pillars.${name}.tracks`, c.tracks, m.tracks);
  }
  for (const [name, c, m] of both("tracks", s.tracks, metrics.tracks, out)) {
    if (c.headline.metric !== m.headline.metric) out.push(`scores.tracks.${name}.headline.metric: card records ${c.headline.metric}, the results files score ${m.headline.metric}`);
    cmp(`tracks.${name}.headline.value`, c.headline.value, m.headline.value);
    cmp(`tracks.${name}.headline.ci_low`, c.headline.ci_low, m.headline.ci_low);
    cmp(`tracks.${name}.headline.ci_high`, c.headline.ci_high, m.headline.ci_high);
    cmp(`tracks.${name}.records`, c.records, m.records);
    cmp(`tracks.${name}.missing`, c.missing, m.missing);
  }
  return out;
}

/** Each name (sorted) in both the card's and the rescored map, with both entries; a name in one only is reported. */
function* both<C, M>(what: string, card: Record<string, C>, rescored: Record<string, M>, out: string[]): Generator<[string, C, M]> {
  for (const name of [...new Set([...Object.keys(card), ...Object.keys(rescored)])].sort()) {
    const c = card[name];
    const m = rescored[name];
    if (c && m) yield [name, c, m];
    else out.push(`scores.${what}.${name}: ${c ? "in the card, not in the rescored results" : "in the rescored results, not in the card"}`);
  }
}

function fmt(x: unknown): string {
  return x === null ? "null" : String(x);
}

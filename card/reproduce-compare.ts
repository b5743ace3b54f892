// The protocol's reproducibility criterion: a rerun of the same setup
// reproduces a card when every headline is within ±2% of the original's. Relative to the
// original value; when the original is 0, the difference itself must be within 0.02.
import type { RunCard } from "./run-card.js";
import { rankingMean } from "./quality-tier.js";

export const REPRODUCE_TOLERANCE = 0.02;

export interface HeadlineComparison {
  compared: number;
  outside: Array<{ track: string; original: number | null; reproduced: number | null }>;
  within: boolean;
}

export function withinTolerance(original: number, reproduced: number, tolerance = REPRODUCE_TOLERANCE): boolean {
  const diff = Math.abs(reproduced - original);
  return original === 0 ? diff <= tolerance : diff / Math.abs(original) <= tolerance + 1e-12;
}

/** Every track headline and the v1 mean of `original` against `reproduced`. */
export function compareHeadlines(original: RunCard, reproduced: RunCard, tolerance = REPRODUCE_TOLERANCE): HeadlineComparison {
  const outside: HeadlineComparison["outside"] = [];
  let compared = 0;
  const check = (name: string, a: number | null | undefined, b: number | null | undefined) => {
    compared++;
    const av = a ?? null;
    const bv = b ?? null;
    if (av === null && bv === null) return;
    if (av === null || bv === null || !withinTolerance(av, bv, tolerance)) outside.push({ track: name, original: av, reproduced: bv });
  };
  const names = new Set([...Object.keys(original.scores.tracks), ...Object.keys(reproduced.scores.tracks)]);
  for (const name of [...names].sort()) check(name, original.scores.tracks[name]?.headline.value, reproduced.scores.tracks[name]?.headline.value);
  check("v1_mean", rankingMean(original.scores.summary), rankingMean(reproduced.scores.summary));
  return { compared, outside, within: outside.length === 0 };
}

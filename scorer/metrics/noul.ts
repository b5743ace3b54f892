// Metrics of one noul (yes/no) question key (docs/scoring.md "noul"): prediction is p(true) >= 0.5.
import { macroF1 } from "./macro-f1.js";
import { meanOrNull } from "./mean.js";
import { negLogLikelihood } from "./nll.js";

export const NOUL_THRESHOLD = 0.5;

export interface NoulItem {
  gold: boolean;
  /** p(true); null when the question is missing. */
  pTrue: number | null;
}

export interface NoulMetrics {
  kind: "noul";
  n: number;
  accuracy: number | null;
  macro_f1: number | null;
  nll: number | null;
  missing: number;
}

export function noulPrediction(pTrue: number): boolean {
  return pTrue >= NOUL_THRESHOLD;
}

export function noulMetrics(items: readonly NoulItem[]): NoulMetrics {
  let correct = 0;
  let missing = 0;
  const nlls: number[] = [];
  const pred: (boolean | null)[] = [];
  for (const item of items) {
    if (item.pTrue === null) {
      missing++;
      pred.push(null);
      continue;
    }
    const p = noulPrediction(item.pTrue);
    pred.push(p);
    if (p === item.gold) correct++;
    nlls.push(negLogLikelihood(item.gold ? item.pTrue : 1 - item.pTrue));
  }
  const n = items.length;
  return {
    kind: "noul",
    n,
    accuracy: n === 0 ? null : correct / n,
    // Always over both labels, whatever occurs in gold. Written here, not as a module constant: a
    // mutant of a value set at module load is activated too late by Stryker's vitest runner
    // (stryker-js#6144), so a test that kills it would not be seen to.
    macro_f1: n === 0 ? null : macroF1(items.map((i) => i.gold), pred, [true, false]),
    nll: meanOrNull(nlls),
    missing,
  };
}

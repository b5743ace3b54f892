// Metrics of one choice question key over the records of a track that have gold for it (docs/scoring.md "choice").
import { goldLabelsPresent, macroF1 } from "./macro-f1.js";
import { meanOrNull } from "./mean.js";
import { negLogLikelihood } from "./nll.js";

export interface ChoiceItem {
  gold: string;
  /** Predicted option key; null when the question is missing. */
  pred: string | null;
  /** Probability given to the gold option; ignored when missing. */
  pGold: number;
  /** Ordinal levels (position in criteria order) of gold and prediction; only read when ordinal. */
  goldLevel?: number;
  predLevel?: number;
}

export interface ChoiceMetrics {
  kind: "choice";
  n: number;
  accuracy: number | null;
  macro_f1: number | null;
  nll: number | null;
  mae?: number | null;
  missing: number;
}

export function choiceMetrics(items: readonly ChoiceItem[], ordinal = false): ChoiceMetrics {
  const gold = items.map((i) => i.gold);
  const pred = items.map((i) => i.pred);
  let correct = 0;
  let missing = 0;
  const nlls: number[] = [];
  const errors: number[] = [];
  for (const item of items) {
    if (item.pred === null) {
      missing++;
      continue;
    }
    if (item.pred === item.gold) correct++;
    nlls.push(negLogLikelihood(item.pGold));
    // Stryker disable next-line ConditionalExpression: "true" fills errors for a non-ordinal question too, where mae is not reported
    if (ordinal) errors.push(Math.abs((item.predLevel ?? 0) - (item.goldLevel ?? 0)));
  }
  const n = items.length;
  return {
    kind: "choice",
    n,
    accuracy: n === 0 ? null : correct / n,
    macro_f1: macroF1(gold, pred, goldLabelsPresent(gold)),
    nll: meanOrNull(nlls),
    ...(ordinal ? { mae: meanOrNull(errors) } : {}),
    missing,
  };
}

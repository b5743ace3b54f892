// Macro-F1 as scikit-learn f1_score(average="macro", labels=..., zero_division=0).
// A missing prediction (null) is a false negative for its gold label and a false positive for no label.

export interface LabelCounts {
  tp: number;
  fp: number;
  fn: number;
}

/** Per-label true/false positives and false negatives for the given labels. */
export function labelCounts<L>(gold: readonly L[], pred: readonly (L | null)[], labels: readonly L[]): Map<L, LabelCounts> {
  const counts = new Map<L, LabelCounts>(labels.map((l) => [l, { tp: 0, fp: 0, fn: 0 }]));
  // Stryker disable next-line EqualityOperator: "<=" reads one past the end: gold undefined and pred null (pred has gold's length), which count for no label
  for (let i = 0; i < gold.length; i++) {
    const g = gold[i] as L;
    const p = pred[i] ?? null;
    // Stryker disable next-line ConditionalExpression: without "p !== null", p === g is false for a null p all the same (a gold label is never null)
    if (p !== null && p === g) {
      const c = counts.get(g);
      if (c) c.tp++;
      continue;
    }
    const cg = counts.get(g);
    if (cg) cg.fn++;
    // Stryker disable next-line ConditionalExpression: "true" looks up null, which is no label: counts.get gives undefined
    if (p !== null) {
      const cp = counts.get(p);
      if (cp) cp.fp++;
    }
  }
  return counts;
}

/** F1 of one label: 2tp / (2tp + fp + fn), 0 when the denominator is 0 (zero_division=0). */
export function f1FromCounts(tp: number, fp: number, fn: number): number {
  const denom = 2 * tp + fp + fn;
  return denom === 0 ? 0 : (2 * tp) / denom;
}

/** Unweighted mean of per-label F1 over `labels`; null when there are no labels. */
export function macroF1<L>(gold: readonly L[], pred: readonly (L | null)[], labels: readonly L[]): number | null {
  if (labels.length === 0) return null;
  let sum = 0;
  for (const c of labelCounts(gold, pred, labels).values()) sum += f1FromCounts(c.tp, c.fp, c.fn);
  return sum / labels.length;
}

/** The labels that occur in gold, in order of first occurrence. */
export function goldLabelsPresent<L>(gold: readonly L[]): L[] {
  return [...new Set(gold)];
}

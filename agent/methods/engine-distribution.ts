// Turning an engine's answer into the suite's distribution, shared by the methods: the engines
// round, so probabilities are renormalised against float error only; a real shortfall means
// options are missing or renamed and is reported as a problem string.
import type { Distribution } from "../../common/results/index.js";

/** How far an engine's probabilities may stray from [0,1] and from summing to 1. */
export const ENGINE_TOLERANCE = 1e-3;

/** `{true: p, false: 1-p}` from p(yes), or a problem string. */
export function noulDistribution(p: number | undefined, what: string): Distribution | string {
  // Stryker disable next-line ConditionalExpression: `p === undefined` is for the type; without it, !Number.isFinite(undefined) returns the same problem
  if (p === undefined || !Number.isFinite(p) || p < -ENGINE_TOLERANCE || p > 1 + ENGINE_TOLERANCE) return `${what} in [0,1] (got ${p})`;
  const yes = Math.min(1, Math.max(0, p));
  return { true: yes, false: 1 - yes };
}

/** A distribution over exactly `keys` (criteria order) from `probabilityOf(key)`, or a problem string. */
export function choiceDistribution(keys: readonly string[], probabilityOf: (key: string) => number | undefined, noun: string): Distribution | string {
  const raw: number[] = [];
  for (const k of keys) {
    const p = probabilityOf(k);
    // Stryker disable next-line ConditionalExpression: `p === undefined` is for the type; without it, !Number.isFinite(undefined) returns the same problem
    if (p === undefined || !Number.isFinite(p) || p < 0) return `answer has no probability for ${noun} ${JSON.stringify(k)}`;
    raw.push(p);
  }
  const sum = raw.reduce((a, b) => a + b, 0);
  // Stryker disable next-line EqualityOperator: `>=` differs only at |sum - 1| = 1e-3 exactly, which no sum of floats reaches (sum - 1 is exact, a multiple of 2^-53, near 1; 1e-3 is not)
  if (Math.abs(sum - 1) > ENGINE_TOLERANCE) return `answer probabilities sum to ${sum}, not 1`;
  return Object.fromEntries(keys.map((k, i) => [k, raw[i]! / sum]));
}

// The sim's "model": label logits from a seeded hash of state, question and option, then a softmax
// over the labels as vLLM does (question_types.py label_softmax). In oracle mode the answer is the
// oracle's distribution over the options (oracle.ts oracleDistribution: gold on top with
// probability `accuracy`, decided per question), whatever the labels or the options' order, so the
// expected accuracy of a run is known before it starts and is the same under every method.
import { hashUnit } from "./deterministic.js";
import { goldName, oracleDistribution, type Oracle } from "./oracle.js";
import { labelPermutation } from "../../../common/engine-protocol/index.js";
import type { ParsedQuestion } from "../protocol/systemone-request.js";

/** Logit bonus of the first label over the last (label-position bias). */
export const LABEL_BIAS = 0.6;

export interface PseudoModelOptions {
  seed: number;
  oracle?: Oracle;
  /** Oracle mode: probability that the gold option is the argmax. */
  accuracy?: number;
}

export interface QuestionRead {
  /** Probability of each option, in option order; sums to 1. */
  probs: number[];
  /** Probability mass the labels got over the whole vocabulary. */
  labelMass: number;
  /** True when the oracle decided this answer. */
  fromOracle: boolean;
}

export function softmax(logits: readonly number[]): number[] {
  const top = Math.max(...logits);
  const w = logits.map((l) => Math.exp(l - top));
  const total = w.reduce((a, b) => a + b, 0);
  return w.map((x) => x / total);
}

export class PseudoModel {
  constructor(private readonly options: PseudoModelOptions) {}

  /**
   * `labelSeed` (the request's seed) changes which label each option gets; the model prefers the
   * first labels a little (LABEL_BIAS), as real models do, so averaging over seeds moves answers.
   */
  read(state: unknown, stateText: string, q: ParsedQuestion, labelSeed: number | null = null): QuestionRead {
    const { seed } = this.options;
    const labelMass = 0.8 + 0.19 * hashUnit(seed, "mass", stateText, q.id);
    const entry = this.options.oracle?.lookup(state, q.id, q.oracleOptions);
    if (entry && q.options.length > 1) {
      // A yes/no question (noul, or a Decisions predicate) has no option names for the oracle: its sides are yes and no.
      const noul = q.oracleOptions === null;
      const names = q.options.map((o) => o.name);
      if (names.includes(goldName(entry.gold, noul))) {
        return { probs: oracleDistribution(seed, this.options.accuracy ?? 1, entry, names, noul), labelMass, fromOracle: true };
      }
    }
    const positions = labelPermutation(labelSeed ?? 0, q.options.length);
    const n = q.options.length;
    const logits = q.options.map((o, i) => 6 * (hashUnit(seed, "logit", stateText, q.id, q.instructions, o.name) - 0.5) + (n > 1 ? LABEL_BIAS * (1 - positions[i]! / (n - 1)) : 0));
    return { probs: softmax(logits), labelMass, fromOracle: false };
  }
}

/** The answer object of one question, shaped like question_types.py's QuestionType.answer. */
export function answerObject(q: ParsedQuestion, probs: readonly number[], labelMass: number): Record<string, unknown> {
  let top = 0;
  probs.forEach((p, i) => {
    if (p > (probs[top] ?? -1)) top = i;
  });
  const confidence = (probs[top] ?? 0) * labelMass;
  if (q.type === "noul") {
    return { type: "noul", noul: probs[0], probabilities: { yes: probs[0], no: probs[1] }, confidence };
  }
  if (q.type === "score") {
    return {
      type: "score",
      score: probs.reduce((s, p, i) => s + i * p, 0),
      legend: Object.fromEntries(q.options.map((o, i) => [String(i), o.name])),
      probabilities: Object.fromEntries(probs.map((p, i) => [String(i), p])),
      confidence,
    };
  }
  return {
    type: "choice",
    choice: q.options[top]?.name,
    probabilities: Object.fromEntries(q.options.map((o, i) => [o.name, probs[i]])),
    confidence,
  };
}

// Every RecordResult is checked before it may be committed (DESIGN.md "gRPC contract"): the sender
// holds a lease on the unit, the run_id is one of the unit's records, and the answer covers
// exactly the record's questions with valid distributions.
import { distributionProblem, SUM_TOLERANCE } from "../common/results/format.js";
import type { IncomingResult } from "./incoming-result.js";
import { questionSpecs, type QuestionSpec, type RecordEntry } from "./suite-index.js";

export const REJECT_REASONS = [
  "unknown_run_id",
  "no_lease",
  "not_in_unit",
  "payload_mismatch",
  "unknown_question",
  "bad_distribution",
  "unanswered_question",
  "conflicting_question",
] as const;
export type RejectReason = (typeof REJECT_REASONS)[number];

export interface Rejection {
  reason: RejectReason;
  detail: string;
}

export interface ValidationContext {
  /** The record the run_id names; undefined when no record in scope has it. */
  record: RecordEntry | undefined;
  /** The sender holds a lease (primary or backup copy) on result.unitId. */
  holdsLease: boolean;
  /** The run_id is one of the unit's records. */
  inUnit: boolean;
}

export function validateResult(result: IncomingResult, ctx: ValidationContext): Rejection | undefined {
  const { record } = ctx;
  if (!record) return { reason: "unknown_run_id", detail: `run_id ${JSON.stringify(result.runId)} is in no record of the run` };
  if (!ctx.holdsLease) return { reason: "no_lease", detail: `sender holds no lease on unit ${JSON.stringify(result.unitId)}` };
  if (!ctx.inUnit) return { reason: "not_in_unit", detail: `run_id ${JSON.stringify(result.runId)} is not in unit ${JSON.stringify(result.unitId)}` };
  if (result.payloadSha256 !== "" && record.payloadSha256 !== "" && result.payloadSha256 !== record.payloadSha256) {
    return { reason: "payload_mismatch", detail: `payload_sha256 ${result.payloadSha256} is not the record's ${record.payloadSha256}` };
  }
  const specs = questionSpecs(record);
  const known = (key: string): QuestionSpec | undefined => {
    for (const q of specs) if (q.key === key) return q;
    return undefined;
  };
  for (const key of Object.keys(result.probs)) if (!known(key)) return unknownQuestion(key);
  for (const key of result.skipped) if (!known(key)) return unknownQuestion(key);
  for (const key of Object.keys(result.errors)) if (!known(key)) return unknownQuestion(key);
  const compact = result.compactProbs;
  if (compact) {
    let expected = 0;
    for (const key of compact.questions) {
      const q = known(key);
      if (!q) return unknownQuestion(key);
      expected += q.options.length;
    }
    if (compact.values.length !== expected) {
      return { reason: "bad_distribution", detail: `prob_values has ${compact.values.length} values, expected ${expected} for prob_questions` };
    }
  }
  for (const { key, options } of specs) {
    const inProbs = Object.hasOwn(result.probs, key);
    const inSkipped = result.skipped.includes(key);
    const inErrors = Object.hasOwn(result.errors, key);
    let inCompact = 0;
    if (compact) for (const k of compact.questions) if (k === key) inCompact++;
    const places = Number(inProbs) + Number(inSkipped) + Number(inErrors) + inCompact;
    if (places === 0) return { reason: "unanswered_question", detail: `question ${JSON.stringify(key)} is in none of probs, skipped, errors` };
    if (places > 1) return { reason: "conflicting_question", detail: `question ${JSON.stringify(key)} is in more than one of probs, skipped, errors` };
    if (inProbs) {
      const problem = distributionProblem(result.probs[key], options);
      if (problem) return { reason: "bad_distribution", detail: `probs.${key}: ${problem}` };
    } else if (inCompact) {
      const problem = compactDistributionProblem(compact!, key, known);
      if (problem) return { reason: "bad_distribution", detail: `prob_values of ${key}: ${problem}` };
    }
  }
  return undefined;
}

function unknownQuestion(key: string): Rejection {
  return { reason: "unknown_question", detail: `question ${JSON.stringify(key)} is not in the record` };
}

/** Where a question's values start in prob_values: after those of the questions before it. */
function compactOffset(compact: NonNullable<IncomingResult["compactProbs"]>, key: string, known: (key: string) => QuestionSpec | undefined): number {
  let offset = 0;
  for (const k of compact.questions) {
    if (k === key) return offset;
    offset += known(k)!.options.length;
  }
  return -1;
}

/** The same rules as distributionProblem (common/results/format.ts) on the values of one question. */
function compactDistributionProblem(
  compact: NonNullable<IncomingResult["compactProbs"]>,
  key: string,
  known: (key: string) => QuestionSpec | undefined,
): string | undefined {
  const options = known(key)!.options;
  const at = compactOffset(compact, key, known);
  let sum = 0;
  for (let i = 0; i < options.length; i++) {
    const p = compact.values[at + i]!;
    if (!Number.isFinite(p) || p < 0 || p > 1 + SUM_TOLERANCE) return `option ${JSON.stringify(options[i])} = ${p} is not a probability`;
    sum += p;
  }
  if (Math.abs(sum - 1) > SUM_TOLERANCE) return `sums to ${sum}, not 1`;
  return undefined;
}

/**
 * The probabilities of an accepted result as the results line holds them (question -> option ->
 * probability), from the map form or the compact one; the line orders them by criteria.
 */
export function acceptedProbs(result: IncomingResult, specs: readonly QuestionSpec[]): Record<string, Record<string, number>> {
  const compact = result.compactProbs;
  if (!compact || compact.questions.length === 0) return result.probs;
  const probs: Record<string, Record<string, number>> = Object.keys(result.probs).length > 0 ? { ...result.probs } : {};
  const values = compact.values;
  let at = 0;
  for (const key of compact.questions) {
    let options: readonly string[] = [];
    for (const q of specs) if (q.key === key) options = q.options;
    const dist: Record<string, number> = {};
    for (const o of options) dist[o] = values[at++]!;
    probs[key] = dist;
  }
  return probs;
}

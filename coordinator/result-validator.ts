// Every RecordResult is checked before it may be committed (docs/design.md "gRPC contract"): the sender
// holds a lease on the unit, the run_id is one of the unit's records, and the answer covers
// exactly the record's questions with valid distributions.
import { compactDistributionProblem, distributionProblem } from "../common/results/index.js";
import type { RejectReason } from "../common/run-status/index.js";
import type { IncomingResult } from "./incoming-result.js";
import { RecordQuestions } from "./record-questions.js";
import type { RecordEntry } from "./suite-index.js";

export { REJECT_REASONS, type RejectReason } from "../common/run-status/index.js";

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
  if (!record) return { reason: "unknown_run_id", detail: `run_id ${JSON.stringify(result.recordKey)} is in no record of the run` };
  if (!ctx.holdsLease) return { reason: "no_lease", detail: `sender holds no lease on unit ${JSON.stringify(result.unitId)}` };
  if (!ctx.inUnit) return { reason: "not_in_unit", detail: `run_id ${JSON.stringify(result.recordKey)} is not in unit ${JSON.stringify(result.unitId)}` };
  if (result.payloadSha256 !== "" && record.payloadSha256 !== "" && result.payloadSha256 !== record.payloadSha256) {
    return { reason: "payload_mismatch", detail: `payload_sha256 ${result.payloadSha256} is not the record's ${record.payloadSha256}` };
  }
  const qs = RecordQuestions.of(record);
  const n = qs.count;
  // Per question: in how many of probs, skipped, errors and prob_questions it is, and where.
  const { places, where } = scratchFor(n);
  /** Counts each key's question as placed once more; returns the first key not in the record. */
  const place = (keys: readonly string[], inProbs: boolean): string | undefined => {
    let hint = 0;
    for (const key of keys) {
      const i = qs.indexOf(key, hint);
      if (i < 0) return key;
      places[i] = places[i]! + 1;
      if (inProbs) where[i] = IN_PROBS;
      // Stryker disable next-line ArithmeticOperator: the hint only speeds indexOf up, which finds the key from any hint
      hint = i + 1;
    }
    return undefined;
  };
  const unknown = place(Object.keys(result.probs), true) ?? place(result.skipped, false) ?? place(Object.keys(result.errors), false);
  if (unknown !== undefined) return unknownQuestion(unknown);
  const compact = result.compactProbs;
  if (compact) {
    let expected = 0;
    let hint = 0;
    for (const key of compact.questions) {
      const i = qs.indexOf(key, hint);
      if (i < 0) return unknownQuestion(key);
      // A question listed twice is refused below (conflicting); its values are the first listing's.
      // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator: a question placed before is refused as conflicting whatever its offset
      if (where[i]! < 0 && places[i] === 0) where[i] = expected;
      places[i] = places[i]! + 1;
      expected += qs.options(i).length;
      // Stryker disable next-line ArithmeticOperator: the hint only speeds indexOf up
      hint = i + 1;
    }
    if (compact.values.length !== expected) {
      return { reason: "bad_distribution", detail: `prob_values has ${compact.values.length} values, expected ${expected} for prob_questions` };
    }
  }
  for (let i = 0; i < n; i++) {
    const key = qs.keys[i]!;
    if (places[i] === 0) return { reason: "unanswered_question", detail: `question ${JSON.stringify(key)} is in none of probs, skipped, errors` };
    if (places[i]! > 1) return { reason: "conflicting_question", detail: `question ${JSON.stringify(key)} is in more than one of probs, skipped, errors` };
    const at = where[i]!;
    if (at === IN_PROBS) {
      const problem = distributionProblem(result.probs[key], qs.options(i));
      if (problem) return { reason: "bad_distribution", detail: `probs.${key}: ${problem}` };
    } else if (at >= 0) {
      const problem = compactDistributionProblem(compact!.values, at, qs.options(i));
      if (problem) return { reason: "bad_distribution", detail: `prob_values of ${key}: ${problem}` };
    }
  }
  return undefined;
}

const IN_PROBS = -2;
let scratch = { places: new Int32Array(256), where: new Int32Array(256) };

/** Per-question counters for one check, reused: a check runs to its end before the next begins. */
function scratchFor(n: number): { places: Int32Array; where: Int32Array } {
  // Stryker disable next-line ConditionalExpression,EqualityOperator: growing always or at n == length only allocates more (never growing fails the 300-question test)
  if (scratch.places.length < n) scratch = { places: new Int32Array(n * 2), where: new Int32Array(n * 2) };
  scratch.places.fill(0, 0, n);
  scratch.where.fill(-1, 0, n);
  return scratch;
}

function unknownQuestion(key: string): Rejection {
  return { reason: "unknown_question", detail: `question ${JSON.stringify(key)} is not in the record` };
}

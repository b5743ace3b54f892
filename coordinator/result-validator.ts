// Every RecordResult is checked before it may be committed (DESIGN.md "gRPC contract"): the sender
// holds a lease on the unit, the run_id is one of the unit's records, and the answer covers
// exactly the record's questions with valid distributions.
import { distributionProblem } from "../common/results/format.js";
import type { IncomingResult } from "./incoming-result.js";
import { questionSpecs, type RecordEntry } from "./suite-index.js";

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
  const known = new Map(questionSpecs(record).map((q) => [q.key, q.options]));
  for (const key of [...Object.keys(result.probs), ...result.skipped, ...Object.keys(result.errors)]) {
    if (!known.has(key)) return { reason: "unknown_question", detail: `question ${JSON.stringify(key)} is not in the record` };
  }
  for (const [key, options] of known) {
    const inProbs = Object.hasOwn(result.probs, key);
    const inSkipped = result.skipped.includes(key);
    const inErrors = Object.hasOwn(result.errors, key);
    const places = Number(inProbs) + Number(inSkipped) + Number(inErrors);
    if (places === 0) return { reason: "unanswered_question", detail: `question ${JSON.stringify(key)} is in none of probs, skipped, errors` };
    if (places > 1) return { reason: "conflicting_question", detail: `question ${JSON.stringify(key)} is in more than one of probs, skipped, errors` };
    if (inProbs) {
      const problem = distributionProblem(result.probs[key], options);
      if (problem) return { reason: "bad_distribution", detail: `probs.${key}: ${problem}` };
    }
  }
  return undefined;
}

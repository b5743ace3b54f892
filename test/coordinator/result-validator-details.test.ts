// The rejection details of validateResult (coordinator/result-validator.ts): each names what is
// wrong, as the coordinator logs it and the status page counts it; prob_values with more or fewer
// values than the listed questions take; a record of more questions than the validator's first
// scratch space (256) is checked whole.
import { describe, expect, it } from "vitest";
import { validateResult } from "../../coordinator/result-validator.js";
import type { IncomingResult } from "../../coordinator/incoming-result.js";
import { compactQuestions, OptionInterner, type RecordEntry } from "../../coordinator/suite-index.js";

const interner = new OptionInterner();
function recordOf(questions: Array<{ key: string; options: string[] }>, sha = "abc"): RecordEntry {
  return { recordKey: "t:1", id: "1", groupId: "g", payloadSha256: sha, offset: 0, stateBytes: 1, questionsBytes: 1, ...compactQuestions(questions, interner) };
}
const record = recordOf([
  { key: "harmful", options: ["true", "false"] },
  { key: "category", options: ["a", "b", "c"] },
]);
const base: IncomingResult = {
  unitId: "t/0",
  recordKey: "t:1",
  probs: {},
  skipped: [],
  errors: {},
  promptTokens: 0,
  cachedTokens: 0,
  completionTokens: 0,
  requests: 0,
  latencyMs: 0,
  payloadSha256: "abc",
  answeredBy: {},
  retries: 0,
  approximate: false,
};
const ctx = { record, holdsLease: true, inUnit: true };
const compact = (questions: string[], values: number[]) => ({ ...base, compactProbs: { questions, values } });

describe("validateResult details", () => {
  it("names the run_id, the unit, the payload and the question", () => {
    expect(validateResult(base, { ...ctx, record: undefined })).toEqual({ reason: "unknown_run_id", detail: 'run_id "t:1" is in no record of the run' });
    expect(validateResult(base, { ...ctx, holdsLease: false })).toEqual({ reason: "no_lease", detail: 'sender holds no lease on unit "t/0"' });
    expect(validateResult(base, { ...ctx, inUnit: false })).toEqual({ reason: "not_in_unit", detail: 'run_id "t:1" is not in unit "t/0"' });
    expect(validateResult({ ...base, payloadSha256: "def" }, ctx)).toEqual({ reason: "payload_mismatch", detail: "payload_sha256 def is not the record's abc" });
    expect(validateResult({ ...base, skipped: ["harmful", "nope"] }, ctx)).toEqual({ reason: "unknown_question", detail: 'question "nope" is not in the record' });
    expect(validateResult({ ...base, skipped: ["harmful"] }, ctx)).toEqual({ reason: "unanswered_question", detail: 'question "category" is in none of probs, skipped, errors' });
    expect(validateResult({ ...base, skipped: ["harmful", "category"], errors: { category: "x" } }, ctx)).toEqual({
      reason: "conflicting_question",
      detail: 'question "category" is in more than one of probs, skipped, errors',
    });
  });

  it("an empty payload_sha256 on either side is not compared", () => {
    const all = { ...base, skipped: ["harmful", "category"] };
    expect(validateResult({ ...all, payloadSha256: "" }, ctx)).toBeUndefined();
    expect(validateResult({ ...all, payloadSha256: "def" }, { ...ctx, record: recordOf([{ key: "harmful", options: ["true", "false"] }, { key: "category", options: ["a", "b", "c"] }], "") })).toBeUndefined();
  });

  it("prob_values must have exactly the values of the listed questions", () => {
    expect(validateResult(compact(["harmful", "category"], [0.5, 0.5, 0.2, 0.3, 0.5]), ctx)).toBeUndefined();
    expect(validateResult(compact(["harmful", "category"], [0.5, 0.5, 0.2, 0.3, 0.5, 0]), ctx)).toEqual({
      reason: "bad_distribution",
      detail: "prob_values has 6 values, expected 5 for prob_questions",
    });
    expect(validateResult(compact(["harmful", "category"], [0.5, 0.5, 0.2, 0.3]), ctx)).toEqual({ reason: "bad_distribution", detail: "prob_values has 4 values, expected 5 for prob_questions" });
    expect(validateResult(compact(["harmful", "category"], [0.5, 0.5, 0.2, 0.3, 0.6]), ctx)).toEqual({ reason: "bad_distribution", detail: "prob_values of category: sums to 1.1, not 1" });
    expect(validateResult(compact(["harmful", "zzz"], [0.5, 0.5]), ctx)).toEqual({ reason: "unknown_question", detail: 'question "zzz" is not in the record' });
    expect(validateResult({ ...base, probs: { harmful: { true: 2, false: -1 } }, skipped: ["category"] }, ctx)).toEqual({ reason: "bad_distribution", detail: 'probs.harmful: option "true" = 2 is not a probability' });
  });

  it("a record of 300 questions is checked to its last question", () => {
    const keys = Array.from({ length: 300 }, (_, i) => `q${i}`);
    const big = recordOf(keys.map((key) => ({ key, options: ["true", "false"] })));
    const bigCtx = { record: big, holdsLease: true, inUnit: true };
    expect(validateResult({ ...base, skipped: keys }, bigCtx)).toBeUndefined();
    expect(validateResult({ ...base, skipped: keys.slice(0, 299) }, bigCtx)).toEqual({ reason: "unanswered_question", detail: 'question "q299" is in none of probs, skipped, errors' });
    expect(validateResult({ ...base, skipped: keys, errors: { q298: "x" } }, bigCtx)).toEqual({ reason: "conflicting_question", detail: 'question "q298" is in more than one of probs, skipped, errors' });
    // The last question's distribution is checked too, in probs and in prob_values.
    const rest = keys.slice(0, 299);
    expect(validateResult({ ...base, skipped: rest, probs: { q299: { true: 2, false: -1 } } }, bigCtx)).toEqual({ reason: "bad_distribution", detail: 'probs.q299: option "true" = 2 is not a probability' });
    expect(validateResult({ ...base, skipped: rest, compactProbs: { questions: ["q299"], values: [0.5, 0.6] } }, bigCtx)).toEqual({ reason: "bad_distribution", detail: "prob_values of q299: sums to 1.1, not 1" });
    expect(validateResult({ ...base, skipped: rest, compactProbs: { questions: ["q299"], values: [0.5, 0.5] } }, bigCtx)).toBeUndefined();
    // And a small record after it still starts from clean counters.
    expect(validateResult({ ...base, skipped: ["harmful", "category"] }, ctx)).toBeUndefined();
  });
});

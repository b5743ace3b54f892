import { describe, expect, it } from "vitest";
import { validateResult, type RejectReason } from "../../coordinator/result-validator.js";
import type { IncomingResult } from "../../coordinator/incoming-result.js";
import { compactQuestions, OptionInterner, type RecordEntry } from "../../coordinator/suite-index.js";

const record: RecordEntry = {
  recordKey: "t:1",
  id: "1",
  groupId: "g",
  payloadSha256: "abc",
  offset: 0,
  stateBytes: 1,
  questionsBytes: 1,
  ...compactQuestions(
    [
      { key: "harmful", options: ["true", "false"] },
      { key: "category", options: ["cybercrime", "none", "skill:x"] },
    ],
    new OptionInterner(),
  ),
};

const good: IncomingResult = {
  unitId: "u",
  recordKey: "t:1",
  probs: { harmful: { true: 0.3, false: 0.7 }, category: { cybercrime: 0.2, none: 0.5, "skill:x": 0.3 } },
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

describe("validateResult", () => {
  it("accepts exact distributions, and questions moved to skipped or errors", () => {
    expect(validateResult(good, ctx)).toBeUndefined();
    expect(validateResult({ ...good, probs: { harmful: good.probs.harmful! }, skipped: ["category"] }, ctx)).toBeUndefined();
    expect(validateResult({ ...good, probs: {}, skipped: ["category"], errors: { harmful: "HTTP 500" } }, ctx)).toBeUndefined();
    expect(validateResult({ ...good, payloadSha256: "" }, ctx)).toBeUndefined();
    expect(validateResult({ ...good, probs: { ...good.probs, harmful: { true: 0.3 + 5e-7, false: 0.7 } } }, ctx)).toBeUndefined();
  });

  const cat = (p: Record<string, number>) => ({ ...good, probs: { ...good.probs, category: p } });
  it.each<[string, IncomingResult, Partial<typeof ctx>, RejectReason]>([
    ["unknown run_id", good, { record: undefined }, "unknown_run_id"],
    ["no lease", good, { holdsLease: false }, "no_lease"],
    ["run_id of another unit", good, { inUnit: false }, "not_in_unit"],
    ["another payload", { ...good, payloadSha256: "zzz" }, {}, "payload_mismatch"],
    ["wrong option keys", cat({ A: 0.2, B: 0.5, C: 0.3 }), {}, "bad_distribution"],
    ["an option missing", cat({ cybercrime: 0.5, none: 0.5 }), {}, "bad_distribution"],
    ["an extra option", cat({ cybercrime: 0.2, none: 0.5, "skill:x": 0.3, other: 0 }), {}, "bad_distribution"],
    ["sum 1.1", cat({ cybercrime: 0.3, none: 0.5, "skill:x": 0.3 }), {}, "bad_distribution"],
    ["NaN", cat({ cybercrime: Number.NaN, none: 0.5, "skill:x": 0.5 }), {}, "bad_distribution"],
    ["Infinity", cat({ cybercrime: Infinity, none: 0, "skill:x": 0 }), {}, "bad_distribution"],
    ["negative", cat({ cybercrime: -0.5, none: 1, "skill:x": 0.5 }), {}, "bad_distribution"],
    ["noul as yes/no", { ...good, probs: { ...good.probs, harmful: { yes: 0.5, no: 0.5 } } }, {}, "bad_distribution"],
    ["unknown question in probs", { ...good, probs: { ...good.probs, extra: { true: 1, false: 0 } } }, {}, "unknown_question"],
    ["unknown question in skipped", { ...good, skipped: ["nope"] }, {}, "unknown_question"],
    ["unknown question in errors", { ...good, errors: { nope: "x" } }, {}, "unknown_question"],
    ["question missing", { ...good, probs: { harmful: good.probs.harmful! } }, {}, "unanswered_question"],
    ["question in probs and skipped", { ...good, skipped: ["harmful"] }, {}, "conflicting_question"],
  ])("rejects %s", (_name, result, over, reason) => {
    expect(validateResult(result, { ...ctx, ...over })?.reason).toBe(reason);
  });
});

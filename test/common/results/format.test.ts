// The results format's rules (common/results/format.ts, docs/suite-format.md "Results") held to
// known answers: a line's fields and their order, a given-up record, and each distribution problem.
import { describe, expect, it } from "vitest";
import { acceptedResultLine, compactDistributionProblem, distributionProblem, givenUpResultLine, lineHasErrors, NOUL_KEYS, RESULT_FORMAT, ResultLineSchema, SUM_TOLERANCE } from "../../../common/results/format.js";

const RECORD = {
  recordKey: "vihsd:7",
  id: "7",
  track: "vihsd",
  family: "toxicity",
  payloadSha256: "ab".repeat(32),
  questions: [
    { key: "label", options: ["A", "B", "C"] },
    { key: "toxic", options: ["true", "false"] },
    { key: "extra", options: ["X", "Y"] },
  ],
};
const ANSWER = {
  probs: { toxic: { false: 0.75, true: 0.25 }, label: { C: 0.5, A: 0.25, B: 0.25 } },
  skipped: ["extra"],
  errors: {},
  agent: "agent-a",
  latencyMs: 12.5,
  promptTokens: 300,
  cachedTokens: null,
  completionTokens: 2,
  answeredBy: { label: "logprobs" },
  retries: 0,
  approximate: false,
};

describe("results format", () => {
  it("an accepted line: fields in order, distributions and skipped questions in criteria order, optional fields only when set", () => {
    const line = acceptedResultLine(RECORD, ANSWER);
    expect(JSON.stringify(line)).toBe(
      '{"run_id":"vihsd:7","id":"7","track":"vihsd","family":"toxicity","probs":{"label":{"A":0.25,"B":0.25,"C":0.5},"toxic":{"true":0.25,"false":0.75}},' +
        `"skipped":["extra"],"payload_sha256":"${"ab".repeat(32)}","agent":"agent-a","latency_ms":12.5,"prompt_tokens":300,"completion_tokens":2,"answered_by":{"label":"logprobs"},"format":1}`,
    );
    const full = acceptedResultLine(RECORD, { ...ANSWER, skipped: ["extra", "label"], errors: { toxic: "engine: HTTP 500" }, cachedTokens: 0, retries: 2, approximate: true });
    expect(full.skipped).toEqual(["label", "extra"]);
    expect(full).toMatchObject({ errors: { toxic: "engine: HTTP 500" }, cached_tokens: 0, retries: 2, approximate: true, format: RESULT_FORMAT });
    expect(Object.keys(full).indexOf("errors")).toBe(Object.keys(full).indexOf("skipped") + 1);
    expect(ResultLineSchema.safeParse(full).success).toBe(true);
  });

  it("a given-up record: every question in errors with the reason, nothing answered", () => {
    expect(givenUpResultLine(RECORD, "bad_distribution: sums to 2")).toEqual({
      run_id: "vihsd:7",
      id: "7",
      track: "vihsd",
      family: "toxicity",
      probs: {},
      skipped: [],
      errors: {
        label: "rejected by the coordinator: bad_distribution: sums to 2",
        toxic: "rejected by the coordinator: bad_distribution: sums to 2",
        extra: "rejected by the coordinator: bad_distribution: sums to 2",
      },
      payload_sha256: "ab".repeat(32),
      agent: "",
      format: 1,
    });
  });

  it("lineHasErrors: only a non-empty errors object", () => {
    expect(lineHasErrors({})).toBe(false);
    expect(lineHasErrors({ errors: {} })).toBe(false);
    expect(lineHasErrors({ errors: { q: "x" } })).toBe(true);
  });

  it("distributionProblem names what is wrong", () => {
    const keys = ["A", "B"];
    expect(distributionProblem({ A: 0.5, B: 0.5 }, keys)).toBeUndefined();
    expect(distributionProblem({ true: 1, false: 0 }, [...NOUL_KEYS])).toBeUndefined();
    expect(distributionProblem(null, keys)).toBe("not an object");
    expect(distributionProblem([0.5, 0.5], keys)).toBe("not an object");
    expect(distributionProblem("x", keys)).toBe("not an object");
    expect(distributionProblem({ A: 1 }, keys)).toBe("has 1 options, expected 2");
    expect(distributionProblem({ A: 0.5, B: 0.25, C: 0.25 }, keys)).toBe("has 3 options, expected 2");
    expect(distributionProblem({ A: 0.5, C: 0.5 }, keys)).toBe('option "B" missing or not a number');
    expect(distributionProblem({ A: "0.5", B: 0.5 }, keys)).toBe('option "A" missing or not a number');
    expect(distributionProblem({ A: -0.1, B: 1.1 }, keys)).toBe('option "A" = -0.1 is not a probability');
    expect(distributionProblem({ A: 0, B: 1.01 }, keys)).toBe('option "B" = 1.01 is not a probability');
    expect(distributionProblem({ A: NaN, B: 1 }, keys)).toBe('option "A" = NaN is not a probability');
    expect(distributionProblem({ A: 0.5, B: 0.6 }, keys)).toBe("sums to 1.1, not 1");
    expect(distributionProblem({ A: 0.5, B: 0.4 }, keys)).toBe("sums to 0.9, not 1");
    // Within the tolerance either way.
    expect(distributionProblem({ A: 0.5, B: 0.5 + SUM_TOLERANCE / 2 }, keys)).toBeUndefined();
    expect(distributionProblem({ A: 0, B: 1 + SUM_TOLERANCE / 2 }, keys)).toBeUndefined();
    expect(distributionProblem({ A: 0.5, B: 0.5 - SUM_TOLERANCE / 2 }, keys)).toBeUndefined();
    expect(SUM_TOLERANCE).toBe(1e-6);
  });

  it("a value of exactly 1 + 1e-6 is a probability (docs/suite-format.md: [0, 1 + 1e-6]); a hair above is not", () => {
    // 1 + 1e-6 and 0 sum to 1.000001, within 1e-6 of 1 in binary (9.99999999917733e-7).
    expect(distributionProblem({ A: 1 + 1e-6, B: 0 }, ["A", "B"])).toBeUndefined();
    expect(distributionProblem({ A: 1 + 2e-6, B: 0 }, ["A", "B"])).toBe(`option "A" = ${1 + 2e-6} is not a probability`);
  });

  it("a line without probs or skipped (the reference runner's shortest): nothing answered, nothing skipped", () => {
    expect(ResultLineSchema.parse({ run_id: "vihsd:7" })).toEqual({ run_id: "vihsd:7", probs: {}, skipped: [] });
  });

  it("a longer check does not leave values behind for a shorter one", () => {
    expect(distributionProblem({ A: 0.2, B: 0.3, C: 0.5 }, ["A", "B", "C"])).toBeUndefined();
    expect(distributionProblem({ A: 0.2, B: 0.8 }, ["A", "B"])).toBeUndefined();
  });

  it("compactDistributionProblem reads a question's values from its offset", () => {
    const values = [0.5, 0.5, 0.1, 0.9, 2];
    expect(compactDistributionProblem(values, 2, ["t", "f"])).toBeUndefined();
    expect(compactDistributionProblem(values, 0, ["a", "b"])).toBeUndefined();
    expect(compactDistributionProblem(values, 3, ["t", "f"])).toBe('option "f" = 2 is not a probability');
    expect(compactDistributionProblem(values, 4, ["t", "f"])).toBe('option "t" = 2 is not a probability');
    expect(compactDistributionProblem(values, 5, ["t"])).toBe('option "t" missing or not a number');
  });
});

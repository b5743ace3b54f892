// The fast path of record parsing must agree with RecordSchema: whatever it accepts, zod accepts
// with the same value; whatever zod rejects, it rejects.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { RecordSchema, ScoringSchema, wellFormedRecord, wellFormedScoring } from "../../../common/suite/schema.js";

const base = () => ({
  id: "r1",
  family: "passage_reranking",
  split: "test",
  state: { query: "q" },
  questions: {
    "doc:1": { type: "noul", instructions: "Passage one", criteria: {} },
    label: { type: "choice", instructions: "Pick", criteria: { A: "a", B: "b" } },
  },
  expected: { "doc:1": true, label: "B" },
  metadata: { group_id: "g1", lang: "vi", source: "x" },
  scoring: { type: "retrieval_ranking", qrels: { "1": 2 }, relevance_threshold: 1, fully_judged: true },
  _evaluation: { run_id: "t:r1", payload_sha256: "ab" },
  extra_field: { kept: true },
});

/** A mutation changes the record in place, or returns a value that replaces it. */
type Mutation = [string, (r: Record<string, any>) => unknown];
const mutations: Mutation[] = [
  ["unchanged", () => undefined],
  ["no scoring", (r) => delete r.scoring],
  ["ordinal scoring", (r) => (r.scoring = { ordinal: true })],
  ["routing scoring", (r) => (r.scoring = { type: "routing_outcome", outcomes: { m: { quality: 1, cost_usd: 0.1 } }, accepted: ["m"] })],
  ["qrels as a list (normalised by zod)", (r) => (r.scoring.qrels = [{ doc: "1", grade: 2 }])],
  ["no split", (r) => delete r.split],
  ["no expected (zod defaults it)", (r) => delete r.expected],
  ["no payload_sha256", (r) => delete r._evaluation.payload_sha256],
  ["id not a string", (r) => (r.id = 5)],
  ["missing family", (r) => delete r.family],
  ["split a number", (r) => (r.split = 1)],
  ["state value a number", (r) => (r.state.query = 3)],
  ["state an array", (r) => (r.state = ["q"])],
  ["question type unknown", (r) => (r.questions.label.type = "score")],
  ["question without instructions", (r) => delete r.questions.label.instructions],
  ["criteria value not a string", (r) => (r.questions.label.criteria.A = 1)],
  ["question not an object", (r) => (r.questions.label = "x")],
  ["expected value a number", (r) => (r.expected.label = 1)],
  ["metadata without group_id", (r) => delete r.metadata.group_id],
  ["metadata lang a number", (r) => (r.metadata.lang = 1)],
  ["_evaluation without run_id", (r) => delete r._evaluation.run_id],
  ["payload_sha256 a number", (r) => (r._evaluation.payload_sha256 = 1)],
  ["scoring with a bad qrels grade", (r) => (r.scoring.qrels = { "1": "high" })],
  ["routing without accepted", (r) => (r.scoring = { type: "routing_outcome", outcomes: {} })],
  ["record is an array", () => [base()]],
  ["record is null", () => null],
];

describe("wellFormedRecord agrees with RecordSchema", () => {
  it.each(mutations)("%s", (_name, mutate) => {
    const a = base();
    const replaced = mutate(a);
    const value = replaced === undefined ? a : replaced;
    const zod = RecordSchema.safeParse(JSON.parse(JSON.stringify(value)));
    const fast = wellFormedRecord(JSON.parse(JSON.stringify(value)));
    if (fast) {
      expect(zod.success).toBe(true);
      expect(fast).toEqual(zod.data);
    }
    if (!zod.success) expect(fast).toBeUndefined();
  });

  it("takes the fast path for a plain well-formed record", () => {
    expect(wellFormedRecord(base())).toBeDefined();
  });
});

describe("wellFormedScoring gives zod's output", () => {
  /** `value`, or the JSON text of a value when a string starting with `{` (1e400 parses as Infinity). */
  const same = (value: unknown) => {
    const text = typeof value === "string" && value.startsWith("{") ? value : JSON.stringify(value);
    const zod = ScoringSchema.safeParse(JSON.parse(text));
    const fast = wellFormedScoring(JSON.parse(text));
    if (fast !== undefined) {
      expect(zod.success).toBe(true);
      // JSON text: the same values and the same key order (the gold handed to the scorer is this text).
      expect(JSON.stringify(fast)).toBe(JSON.stringify(zod.data));
      expect(fast).toEqual(zod.data);
    }
    if (!zod.success) expect(fast).toBeUndefined();
    return fast;
  };

  it.each([
    ["retrieval, every field, extras before and after", { x: 1, fully_judged: true, qrels: { b: 1, a: 2.5 }, type: "retrieval_ranking", combine_chunks_by: "metadata.query_id", relevance_threshold: 1, scorable_ids: ["a"], field_to_document: { "doc:1": "1" }, y: [2] }],
    ["routing, outcomes with extras", { accepted: ["m"], type: "routing_outcome", outcomes: { m: { z: 3, cost_usd: 0.1, quality: 1 }, n: {} } }],
    ["plain ordinal after an extra", { extra: 2, ordinal: true }],
    ["plain empty", {}],
  ])("takes the fast path: %s", (_name, value) => {
    expect(same(value)).toBeDefined();
  });

  it.each([
    ["qrels grade a string", { type: "retrieval_ranking", qrels: { a: "2" } }],
    ["qrels grade out of range (JSON's 1e400 is Infinity)", '{"type":"retrieval_ranking","qrels":{"a":1e400}}'],
    ["qrels missing", { type: "retrieval_ranking" }],
    ["scorable_ids with a number", { type: "retrieval_ranking", qrels: {}, scorable_ids: ["a", 1] }],
    ["field_to_document value a number", { type: "retrieval_ranking", qrels: {}, field_to_document: { a: 1 } }],
    ["fully_judged a string", { type: "retrieval_ranking", qrels: {}, fully_judged: "yes" }],
    ["routing outcome quality a string", { type: "routing_outcome", outcomes: { m: { quality: "1" } }, accepted: [] }],
    ["routing outcome not an object", { type: "routing_outcome", outcomes: { m: 1 }, accepted: [] }],
    ["routing accepted not strings", { type: "routing_outcome", outcomes: {}, accepted: [1] }],
    ["unknown type", { type: "other" }],
    ["ordinal a string", { ordinal: "yes" }],
    ["an array", [1]],
  ])("refuses as zod does: %s", (_name, value) => {
    expect(same(value)).toBeUndefined();
  });

  it("leaves __proto__ keys to zod (which drops them from a record)", () => {
    expect(wellFormedScoring(JSON.parse('{"type":"retrieval_ranking","qrels":{"__proto__":1,"a":2}}'))).toBeUndefined();
    expect(wellFormedScoring(JSON.parse('{"__proto__":{},"ordinal":true}'))).toBeUndefined();
    expect(wellFormedScoring(JSON.parse('{"type":"routing_outcome","outcomes":{"__proto__":{}},"accepted":[]}'))).toBeUndefined();
  });

  it("agrees with zod on generated scoring blocks", () => {
    const key = fc.constantFrom("type", "qrels", "field_to_document", "scorable_ids", "relevance_threshold", "fully_judged", "combine_chunks_by", "outcomes", "accepted", "ordinal", "quality", "cost_usd", "x");
    const leaf = fc.oneof(fc.constantFrom("retrieval_ranking", "routing_outcome", "a", true, false, null, 0, 1.5, -3), fc.string({ maxLength: 3 }));
    const value = fc.letrec<{ v: unknown }>((tie) => ({
      v: fc.oneof({ depthSize: "small" }, leaf, fc.array(tie("v"), { maxLength: 3 }), fc.dictionary(fc.oneof(key, fc.string({ maxLength: 2 })), tie("v"), { maxKeys: 4 })),
    })).v;
    const scoring = fc.oneof(
      fc.dictionary(key, value, { maxKeys: 6 }),
      fc.record({ type: fc.constant("retrieval_ranking"), qrels: fc.dictionary(fc.string({ maxLength: 3 }), fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), leaf), { maxKeys: 4 }) }, { requiredKeys: ["type"] }),
      fc.record({ type: fc.constant("routing_outcome"), outcomes: fc.dictionary(fc.string({ maxLength: 2 }), fc.dictionary(fc.constantFrom("quality", "cost_usd", "z"), fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), leaf))), accepted: fc.array(fc.oneof(fc.string({ maxLength: 2 }), leaf), { maxLength: 3 }) }, { requiredKeys: ["type"] }),
    );
    let fastTaken = 0;
    fc.assert(
      fc.property(scoring, (s) => {
        if (same(s) !== undefined) fastTaken++;
      }),
      { numRuns: 3000, seed: 26 },
    );
    // The generator reaches the fast path often, not only refusals.
    expect(fastTaken).toBeGreaterThan(300);
  });
});

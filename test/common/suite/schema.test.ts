// The fast path of record parsing must agree with RecordSchema: whatever it accepts, zod accepts
// with the same value; whatever zod rejects, it rejects.
import { describe, expect, it } from "vitest";
import { RecordSchema, wellFormedRecord } from "../../../common/suite/schema.js";

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

// TrackAccumulator (scorer/track-accumulator.ts): gold corners its last mutation survivors showed
// untested (issue 24): documents all renamed by field_to_document, a combine_chunks_by path through a
// string, question-gold ids that would run together, a key noul in its first record and choice in a
// later one. Known answers from docs/scoring.md.
import { describe, expect, it } from "vitest";
import { FormatError } from "../../common/errors.js";
import { RecordSchema } from "../../common/suite/schema.js";
import { TrackAccumulator } from "../../scorer/track-accumulator.js";
import { ABC, noul, peaked, record } from "./suite-fixture.js";

const parse = (r: Record<string, unknown>) => RecordSchema.parse(r);
const KEYS = ["A", "B", "C"];

describe("TrackAccumulator gold corners", () => {
  it("every document named by field_to_document: the named documents are ranked, not the keys less doc:", () => {
    const acc = new TrackAccumulator("rk", "passage_reranking");
    acc.addRecord(
      parse(
        record("rk", {
          id: "c1",
          group: "q",
          family: "passage_reranking",
          questions: { "doc:x": { type: "noul" }, "doc:y": { type: "noul" } },
          scoring: { type: "retrieval_ranking", qrels: { p1: 1, x: 3 }, field_to_document: { "doc:x": "p1", "doc:y": "p2" } },
        }),
      ),
    );
    acc.addResult({ run_id: "rk:c1", probs: { "doc:x": noul(0.2), "doc:y": noul(0.9) } });
    // Ranked p2 (0.9), p1 (0.2): p1, relevant, second. IDCG@10 over all qrels (x 3, p1 1): 3 + 1/log2(3).
    const m = acc.finish().retrieval!;
    expect(m["mrr@10"]).toBe(0.5);
    expect(m["ndcg@10"]).toBeCloseTo(1 / Math.log2(3) / (3 + 1 / Math.log2(3)), 12);
  });

  it("a document answered in one chunk and not in the other keeps its answered score, whichever chunk comes first (unanswered only if no chunk answered it)", () => {
    const chunk = (id: string, docs: string[]) =>
      parse(record("rk", { id, group: "q", family: "passage_reranking", questions: Object.fromEntries(docs.map((d) => [`doc:${d}`, { type: "noul" as const }])), scoring: { type: "retrieval_ranking", qrels: { a: 1 } } }));
    for (const answeredFirst of [true, false]) {
      const acc = new TrackAccumulator("rk", "passage_reranking");
      // c1 holds a alone, answered; c2 holds a and b, answers b only: a's question there is missing.
      const chunks = [chunk("c1", ["a"]), chunk("c2", ["a", "b"])];
      for (const c of answeredFirst ? chunks : chunks.reverse()) acc.addRecord(c);
      acc.addResult({ run_id: "rk:c1", probs: { "doc:a": noul(0.3) } });
      acc.addResult({ run_id: "rk:c2", probs: { "doc:b": noul(0.6) } });
      // Ranked b (0.6), a (0.3): a, the relevant one, second.
      const m = acc.finish();
      expect(m.retrieval, `answered chunk first: ${answeredFirst}`).toMatchObject({ "mrr@10": 0.5 });
      expect(m.retrieval!["ndcg@10"]).toBeCloseTo(1 / Math.log2(3), 12);
      expect(m.missing).toBe(1);
    }
  });

  it("a combine_chunks_by path through a string is a format error (a string's length is no query)", () => {
    const acc = new TrackAccumulator("rk", "passage_reranking");
    const bad = parse(record("rk", { id: "n", group: "query-7", family: "passage_reranking", questions: { "doc:a": { type: "noul" } }, scoring: { type: "retrieval_ranking", qrels: { a: 1 }, combine_chunks_by: "metadata.group_id.length" } }));
    expect(() => acc.addRecord(bad, { file: "rk.jsonl.gz", line: 2 })).toThrow(
      new FormatError("rk.jsonl.gz", 2, "metadata.group_id.length", 'combine_chunks_by names "metadata.group_id.length", which is not a string in this record'),
    );
  });

  it("records whose question-gold ids would run together without a separator (1,2,3 and 12,3) keep their own questions", () => {
    const acc = new TrackAccumulator("t", "sentiment");
    // Thirteen single-question records: question golds k0..k12 get ids 0..12 in this order.
    for (let i = 0; i <= 12; i++) acc.addRecord(parse(record("t", { id: `s${i}`, questions: { [`k${i}`]: { type: "choice", criteria: ABC } }, expected: { [`k${i}`]: "A" } })));
    const golds = (keys: string[]) => Object.fromEntries(keys.map((k) => [k, "A"]));
    const choice = (keys: string[]) => Object.fromEntries(keys.map((k) => [k, { type: "choice" as const, criteria: ABC }]));
    acc.addRecord(parse(record("t", { id: "a", questions: choice(["k1", "k2", "k3"]), expected: golds(["k1", "k2", "k3"]) })));
    acc.addRecord(parse(record("t", { id: "b", questions: choice(["k12", "k3"]), expected: golds(["k12", "k3"]) })));
    acc.addResult({ run_id: "t:b", probs: { k12: peaked(KEYS, "A"), k3: peaked(KEYS, "A") } });
    const q = acc.finish().questions;
    // k12: s12 (no result) and b (right); k1: s1 and a, both without a result.
    expect(q.k12).toMatchObject({ n: 2, accuracy: 0.5, missing: 1 });
    expect(q.k1).toMatchObject({ n: 2, accuracy: 0, missing: 2 });
    expect(q.k3).toMatchObject({ n: 3, accuracy: 1 / 3, missing: 2 });
  });

  it("a key noul in its first record and choice (with gold) in a later one: its noul metrics and sums leave the choice record out", () => {
    const acc = new TrackAccumulator("t", "toxicity");
    acc.addRecord(parse(record("t", { id: "a", group: "g1", questions: { x: { type: "noul" } }, expected: { x: true } })));
    acc.addRecord(parse(record("t", { id: "b", group: "g2", questions: { x: { type: "choice", criteria: ABC } }, expected: { x: "B" } })));
    acc.addResult({ run_id: "t:a", probs: { x: noul(0.9) } });
    acc.addResult({ run_id: "t:b", probs: { x: peaked(KEYS, "B") } });
    const m = acc.finish();
    expect(m.questions.x).toMatchObject({ kind: "noul", n: 1, accuracy: 1, missing: 0 });
    // Headline macro-F1 of x: a is a true positive of true; F1 of false is 0 (neither gold nor predicted).
    expect(m.headline).toMatchObject({ metric: "macro_f1", value: 0.5 });
    // [tp, fp, fn] of true, then of false, per group: g1 holds a; g2 (b, a choice record) nothing.
    expect([...acc.headlineGroupSums().sums]).toEqual([1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
  });
});

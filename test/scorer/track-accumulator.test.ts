// TrackAccumulator (scorer/track-accumulator.ts) in the corners its mutation survivors showed untested
// (issue 24): answers simply absent, a track with no record, a key typed differently across records,
// mixed reranking and plain records, the noul sums of every kind of miss, numeric and null paths of
// combine_chunks_by. Known answers from docs/scoring.md.
import { describe, expect, it } from "vitest";
import { FormatError } from "../../common/errors.js";
import { RecordSchema } from "../../common/suite/schema.js";
import { TrackAccumulator } from "../../scorer/track-accumulator.js";
import { ABC, noul, peaked, record } from "./suite-fixture.js";

const parse = (r: Record<string, unknown>) => RecordSchema.parse(r);
const KEYS = ["A", "B", "C"];

describe("TrackAccumulator corners", () => {
  it("a question the result does not answer is missing, not an invalid distribution", () => {
    const acc = new TrackAccumulator("t", "sentiment");
    acc.addRecord(parse(record("t", { id: "a", questions: { label: { type: "choice", criteria: ABC }, tone: { type: "choice", criteria: ABC } }, expected: { label: "A", tone: "A" } })));
    acc.addResult({ run_id: "t:a", probs: { label: peaked(KEYS, "A") } });
    expect(acc.finish().questions.tone).toMatchObject({ n: 1, missing: 1 });
    expect(acc.invalidDistributions).toBe(0);
  });

  it("a track with no record: language unknown, headline metric accuracy, no value", () => {
    const m = new TrackAccumulator("t", "sentiment").finish();
    expect(m).toMatchObject({ lang: "unknown", records: 0, groups: 0, missing: 0 });
    expect(m.headline).toEqual({ metric: "accuracy", value: null, ci_low: null, ci_high: null });
  });

  it("a key ordinal in its first record stays ordinal after a record that is not", () => {
    const acc = new TrackAccumulator("o", "sentiment");
    acc.addRecord(parse(record("o", { id: "1", questions: { level: { type: "choice", criteria: ABC } }, expected: { level: "A" }, scoring: { ordinal: true } })));
    acc.addRecord(parse(record("o", { id: "2", questions: { level: { type: "choice", criteria: ABC } }, expected: { level: "B" } })));
    acc.addResult({ run_id: "o:1", probs: { level: peaked(KEYS, "C") } });
    acc.addResult({ run_id: "o:2", probs: { level: peaked(KEYS, "B") } });
    expect(acc.finish().questions.level).toMatchObject({ mae: 1 });
  });

  it("a key that is choice in one record and noul in another: each kind's metrics take only its own records; noul without gold is left out", () => {
    const acc = new TrackAccumulator("t", "sentiment");
    acc.addRecord(parse(record("t", { id: "a", questions: { x: { type: "choice", criteria: ABC } }, expected: { x: "A" } })));
    acc.addRecord(parse(record("t", { id: "b", questions: { x: { type: "noul" } }, expected: { x: true } })));
    acc.addRecord(parse(record("t", { id: "c", questions: { y: { type: "noul" } }, expected: { y: false } })));
    acc.addRecord(parse(record("t", { id: "d", questions: { y: { type: "noul" } }, expected: {} })));
    acc.addResult({ run_id: "t:a", probs: { x: peaked(KEYS, "A") } });
    acc.addResult({ run_id: "t:b", probs: { x: noul(0.9) } });
    acc.addResult({ run_id: "t:c", probs: { y: noul(0.1) } });
    acc.addResult({ run_id: "t:d", probs: { y: noul(0.9) } });
    const m = acc.finish();
    // x is a choice key (its first record): its one choice record, right.
    expect(m.questions.x).toMatchObject({ kind: "choice", n: 1, accuracy: 1 });
    // y: only c has gold (false, predicted false).
    expect(m.questions.y).toMatchObject({ kind: "noul", n: 1, accuracy: 1 });
  });

  it("a reranking track with a plain choice record: the plain record is in no outcome and in no question metric", () => {
    const acc = new TrackAccumulator("rk", "passage_reranking");
    acc.addRecord(parse(record("rk", { id: "c1", group: "q1", family: "passage_reranking", questions: { "doc:a": { type: "noul" } }, scoring: { type: "retrieval_ranking", qrels: { a: 1 } } })));
    acc.addRecord(parse(record("rk", { id: "p", group: "q9", family: "passage_reranking", questions: { label: { type: "choice", criteria: ABC } }, expected: { label: "A" } })));
    acc.addResult({ run_id: "rk:p", probs: { label: peaked(KEYS, "A") } });
    // Sums before any finish: the unanswered query is scored on the way (nDCG 0, eligible).
    expect([...acc.headlineGroupSums().sums]).toEqual([0, 1, 0, 0]);
    expect(acc.headlineOutcomes()).toEqual([]);
    expect(acc.finish().questions).toEqual({});
  });

  it("a query's qrels keep the highest grade whichever chunk comes first", () => {
    const acc = new TrackAccumulator("rk", "passage_reranking");
    acc.addRecord(parse(record("rk", { id: "c1", group: "q", family: "passage_reranking", questions: { "doc:a": { type: "noul" } }, scoring: { type: "retrieval_ranking", qrels: { a: 2 }, relevance_threshold: 2 } })));
    acc.addRecord(parse(record("rk", { id: "c2", group: "q", family: "passage_reranking", questions: { "doc:b": { type: "noul" } }, scoring: { type: "retrieval_ranking", qrels: { a: 0 } } })));
    acc.addResult({ run_id: "rk:c1", probs: { "doc:a": noul(0.9) } });
    acc.addResult({ run_id: "rk:c2", probs: { "doc:b": noul(0.2) } });
    // a keeps grade 2: the query is eligible, a ranked first.
    expect(acc.finish().retrieval).toMatchObject({ "ndcg@10": 1, "mrr@10": 1, queries: 1 });
  });

  it("combine_chunks_by may name a number (its text is the query); a path through null is a format error", () => {
    const acc = new TrackAccumulator("rk", "passage_reranking");
    // Both chunks have relevance_threshold 1: one query "1".
    for (const id of ["c1", "c2"]) {
      acc.addRecord(parse(record("rk", { id, group: id, family: "passage_reranking", questions: { [`doc:${id}`]: { type: "noul" } }, scoring: { type: "retrieval_ranking", qrels: { c1: 1 }, relevance_threshold: 1, combine_chunks_by: "scoring.relevance_threshold" } })));
    }
    acc.addResult({ run_id: "rk:c1", probs: { "doc:c1": noul(0.4) } });
    acc.addResult({ run_id: "rk:c2", probs: { "doc:c2": noul(0.6) } });
    expect(acc.finish().retrieval).toMatchObject({ queries_total: 1, "mrr@10": 0.5 });
    const bad = parse(record("rk", { id: "n", family: "passage_reranking", questions: { "doc:a": { type: "noul" } }, scoring: { type: "retrieval_ranking", qrels: { a: 1 }, parent: null, combine_chunks_by: "scoring.parent.id" } }));
    expect(() => acc.addRecord(bad, { file: "rk.jsonl.gz", line: 4 })).toThrow(
      new FormatError("rk.jsonl.gz", 4, "scoring.parent.id", 'combine_chunks_by names "scoring.parent.id", which is not a string in this record'),
    );
  });

  it("headline outcomes of a record whose headline question is not its first", () => {
    const acc = new TrackAccumulator("t", "sentiment");
    acc.addRecord(parse(record("t", { id: "a", questions: { label: { type: "choice", criteria: ABC } }, expected: { label: "A" } })));
    acc.addRecord(parse(record("t", { id: "b", questions: { other: { type: "choice", criteria: ABC }, label: { type: "choice", criteria: ABC } }, expected: { other: "A", label: "B" } })));
    acc.addResult({ run_id: "t:a", probs: { label: peaked(KEYS, "A") } });
    acc.addResult({ run_id: "t:b", probs: { other: peaked(KEYS, "A"), label: peaked(KEYS, "C") } });
    expect(acc.headlineOutcomes()).toEqual([{ runId: "t:a", right: true }, { runId: "t:b", right: false }]);
  });

  it("noul sums: a missing false is a false negative of false; a false predicted for true is a false positive of false; other records left out", () => {
    const acc = new TrackAccumulator("t", "toxicity");
    acc.addRecord(parse(record("t", { id: "a", group: "g1", questions: { toxic: { type: "noul" } }, expected: { toxic: true } })));
    acc.addRecord(parse(record("t", { id: "b", group: "g2", questions: { toxic: { type: "noul" } }, expected: { toxic: false } })));
    acc.addRecord(parse(record("t", { id: "c", group: "g2", questions: { toxic: { type: "noul" } }, expected: { toxic: true } })));
    acc.addRecord(parse(record("t", { id: "d", group: "g2", questions: { toxic: { type: "noul" } }, expected: {} })));
    acc.addRecord(parse(record("t", { id: "e", group: "g2", questions: { other: { type: "noul" } }, expected: { other: true } })));
    acc.addResult({ run_id: "t:a", probs: { toxic: noul(0.9) } });
    acc.addResult({ run_id: "t:c", probs: { toxic: noul(0.1) } });
    acc.addResult({ run_id: "t:d", probs: { toxic: noul(0.9) } });
    acc.addResult({ run_id: "t:e", probs: { other: noul(0.9) } });
    const g = acc.headlineGroupSums();
    // g1: a tp of true. g2: b missing -> fn of false; c predicted false -> fn of true, fp of false; d, e no gold for toxic.
    expect([...g.sums]).toEqual([1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1]);
    // tp/fp/fn of false only (1, 0, 1): F1 of true 0, of false 2/3, mean 1/3; fn of true and tp of false: (0 + 1) / 2.
    expect(g.headline(Float64Array.from([0, 0, 0, 1, 0, 1]))).toBeCloseTo(1 / 3, 12);
    expect(g.headline(Float64Array.from([0, 0, 1, 1, 0, 0]))).toBe(0.5);
  });
});

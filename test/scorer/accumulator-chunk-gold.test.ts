// TrackAccumulator (scorer/track-accumulator.ts) fed a reranking chunk's gold in the form the
// coordinator hands its scorer (common/suite/gold-feed.ts goldLine, a ScoredChunk: questions and
// qrels as lists): the same metrics as the record itself, and qrels read as lists (the highest grade
// of a document kept, the grades paired with their documents).
import { describe, expect, it } from "vitest";
import { goldLine } from "../../common/suite/gold-feed.js";
import { RecordSchema, type ScoredChunk, type SuiteRecord } from "../../common/suite/schema.js";
import type { ResultInput } from "../../common/results/index.js";
import { TrackAccumulator } from "../../scorer/track-accumulator.js";
import { noul, record } from "./suite-fixture.js";

const parse = (r: Record<string, unknown>) => RecordSchema.parse(r);

function chunk(id: string, group: string, docs: string[], scoring: Record<string, unknown>): SuiteRecord {
  return parse(record("rk", { id, group, family: "passage_reranking", questions: Object.fromEntries(docs.map((d) => [d, { type: "noul" as const }])), scoring: { type: "retrieval_ranking", ...scoring } }));
}

/** The record as the gold feed writes it, parsed back as the scorer's thread does. */
function fed(r: SuiteRecord, line: number): ScoredChunk {
  const gold = JSON.parse(goldLine({ ...r, line })) as ScoredChunk;
  expect(gold).toHaveProperty("questionKeys");
  return gold;
}

describe("TrackAccumulator: reranking gold as lists", () => {
  it("scores every query as the records themselves: documents derived or mapped, scorable ids, thresholds, grades given by several chunks", () => {
    const records = [
      chunk("a1", "qa", ["doc:x", "doc:y", "doc:z"], { qrels: { x: 1, z: 3, w: 2 } }),
      chunk("a2", "qa", ["doc:w", "doc:v"], { qrels: { x: 2, v: 1 } }),
      chunk("b1", "qb", ["doc:1", "doc:2", "doc:3"], { qrels: { 3: 2, 1: 1 }, relevance_threshold: 2, fully_judged: true }),
      chunk("c1", "qc", ["doc:p", "doc:q"], { qrels: { P: 1, q: 2 }, field_to_document: { "doc:p": "P", "doc:q": "q" } }),
      chunk("d1", "qd", ["doc:m", "doc:n", "doc:o"], { qrels: { m: 1, n: 2, o: 1 }, scorable_ids: ["n", "o"] }),
    ];
    const results: ResultInput[] = [
      { run_id: "rk:a1", probs: { "doc:x": noul(0.7), "doc:y": noul(0.9), "doc:z": noul(0.2) } },
      { run_id: "rk:a2", probs: { "doc:w": noul(0.8), "doc:v": noul(0.1) } },
      { run_id: "rk:b1", probs: { "doc:1": noul(0.6), "doc:2": noul(0.4), "doc:3": noul(0.5) } },
      { run_id: "rk:c1", probs: { "doc:p": noul(0.3), "doc:q": noul(0.35) } },
      { run_id: "rk:d1", probs: { "doc:m": noul(0.9), "doc:n": noul(0.1), "doc:o": noul(0.5) } },
    ];
    const asRecords = new TrackAccumulator("rk", "passage_reranking");
    const asLists = new TrackAccumulator("rk", "passage_reranking");
    records.forEach((r, i) => {
      asRecords.addRecord(r);
      asLists.addRecord(fed(r, i + 1));
    });
    for (const r of results) {
      asRecords.addResult(r);
      asLists.addResult(r);
    }
    const m = asLists.finish();
    expect(m).toEqual(asRecords.finish());
    // Each query scored something, and not all alike: the comparison has something to hold.
    expect(m.retrieval!["ndcg@10"]).toBeGreaterThan(0);
    expect(m.retrieval!["ndcg@10"]).toBeLessThan(1);
  });

  it("a document listed twice keeps its highest grade, and each grade goes with its own document", () => {
    const acc = new TrackAccumulator("rk", "passage_reranking");
    const gold: ScoredChunk = {
      _evaluation: { run_id: "rk:c" },
      metadata: { group_id: "q", lang: "vi" },
      questionKeys: ["doc:a", "doc:b"],
      qrelDocuments: ["b", "a", "b"],
      qrelGrades: [1, 0, 3],
      scoring: { type: "retrieval_ranking" },
    };
    acc.addRecord(gold);
    acc.addResult({ run_id: "rk:c", probs: { "doc:a": noul(0.9), "doc:b": noul(0.1) } });
    // Ranked a (grade 0), b (grade 3, not 1): DCG 3/log2(3) over IDCG 3; b, the only relevant one, second.
    const m = acc.finish().retrieval!;
    expect(m["mrr@10"]).toBe(0.5);
    expect(m["ndcg@10"]).toBeCloseTo(1 / Math.log2(3), 12);
  });
});

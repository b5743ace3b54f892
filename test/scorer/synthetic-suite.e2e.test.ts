// End to end on a synthetic suite from sim/suite-maker: results written with a known pattern, scored,
// and the metrics checked against what the pattern implies.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSuite, readTrackRecords } from "../../common/suite/suite.js";
import type { SuiteRecord } from "../../common/suite/schema.js";
import { V1_SCORED_TRACKS } from "../../common/catalogue.js";
import type { MetricsJson } from "../../scorer/metrics-json.js";
import { scoreResults } from "../../scorer/score-results.js";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { noul, peaked, tempDir, writeResults } from "./suite-fixture.js";

const silent = { debug() {}, info() {}, warn() {}, error() {}, child() { return silent; } };

type Rec = SuiteRecord & { track: string; family: string };

/** Oracle-like probabilities: p(gold) 0.7 for choice, 0.9/0.1 for noul, p(true) rising with the qrels grade. */
function oracleProbs(r: Rec): Record<string, unknown> {
  const probs: Record<string, unknown> = {};
  const scoring = r.scoring as { type?: string; qrels?: Record<string, number>; field_to_document?: Record<string, string> } | undefined;
  for (const [key, q] of Object.entries(r.questions)) {
    if (scoring?.type === "retrieval_ranking") {
      const doc = scoring.field_to_document?.[key] ?? key.replace(/^doc:/, "");
      const grade = scoring.qrels?.[doc];
      probs[key] = noul(grade === undefined ? 0.02 : Math.min(0.95, 0.1 + 0.2 * Math.max(grade, 0)));
      continue;
    }
    const gold = r.expected[key];
    if (q.type === "noul") probs[key] = noul(gold === undefined ? 0.5 : gold ? 0.9 : 0.1);
    else {
      const keys = Object.keys(q.criteria);
      probs[key] = typeof gold === "string" ? peaked(keys, gold) : Object.fromEntries(keys.map((k) => [k, 1 / keys.length]));
    }
  }
  return probs;
}

describe("score a synthetic small suite", () => {
  let dir: string;
  let cleanup: () => void;
  const records: Rec[] = [];
  let oracle: MetricsJson;
  let dropped: MetricsJson;

  beforeAll(async () => {
    ({ dir, cleanup } = tempDir("synthetic"));
    const suiteDir = join(dir, "suite");
    await makeSuite({ out: suiteDir, scale: "small", seed: 7 });
    for (const file of openSuite(suiteDir).files) {
      for await (const r of readTrackRecords(file)) records.push(Object.assign(r, { track: file.track, family: file.family }));
    }
    const byTrack = new Map<string, Rec[]>();
    for (const r of records) byTrack.set(r.track, [...(byTrack.get(r.track) ?? []), r]);
    for (const [track, recs] of byTrack) {
      const fam = recs[0]!.family;
      const lines = recs.map((r) => ({ run_id: r._evaluation.run_id, id: r.id, track, family: fam, probs: oracleProbs(r), skipped: [] }));
      writeResults(join(dir, "oracle", fam, `${track}.jsonl`), lines);
      // Every third record of the track has no result line.
      writeResults(join(dir, "dropped", fam, `${track}.jsonl`), lines.filter((_, i) => i % 3 !== 0));
    }
    oracle = await scoreResults({ suiteDir, resultsDir: join(dir, "oracle"), log: silent });
    dropped = await scoreResults({ suiteDir, resultsDir: join(dir, "dropped"), log: silent });
  }, 120_000);
  afterAll(() => cleanup());

  it("scores all 44 tracks and reports the v1 mean over the 43", () => {
    expect(Object.keys(oracle.tracks)).toHaveLength(44);
    const values = V1_SCORED_TRACKS.map((t) => oracle.tracks[t]!.headline.value!);
    expect(oracle.summary.v1_tracks).toBe(43);
    expect(oracle.summary.v1_mean).toBeCloseTo(values.reduce((a, b) => a + b) / 43, 12);
    expect(oracle.summary.v1_mean_partial).toBeUndefined();
  });

  it("choice and noul questions: exact accuracy, NLL and macro-F1 of the oracle pattern", () => {
    for (const [track, t] of Object.entries(oracle.tracks)) {
      for (const [key, q] of Object.entries(t.questions)) {
        if (q.n === 0) continue;
        expect(q.accuracy, `${track}.${key}`).toBe(1);
        expect(q.missing).toBe(0);
        if (q.kind === "choice") {
          expect(q.nll, `${track}.${key}`).toBeCloseTo(-Math.log(0.7), 9);
          expect(q.macro_f1).toBe(1);
        } else {
          expect(q.nll).toBeCloseTo(-Math.log(0.9), 9);
          const golds = new Set(records.filter((r) => r.track === track && r.expected[key] !== undefined).map((r) => r.expected[key]));
          expect(q.macro_f1, `${track}.${key}`).toBe(golds.size === 2 ? 1 : 0.5);
        }
      }
    }
  });

  it("reranking: nDCG@10 is the pool's best DCG over the ideal of every judged document", () => {
    const rerank = Object.entries(oracle.tracks).filter(([, t]) => t.family === "passage_reranking");
    expect(rerank.length).toBe(12);
    for (const [track, t] of rerank) {
      // Independent of the scorer's ranking code: the oracle ranks the pool by grade, so DCG is the
      // discounted sum of the pool's grades sorted descending.
      const queries = new Map<string, { pool: Map<string, number>; qrels: Record<string, number>; threshold: number }>();
      for (const r of records.filter((x) => x.track === track)) {
        const s = r.scoring as { qrels: Record<string, number>; field_to_document?: Record<string, string>; scorable_ids?: string[]; relevance_threshold?: number };
        const q = queries.get(r.metadata.group_id) ?? { pool: new Map(), qrels: s.qrels, threshold: s.relevance_threshold ?? 1 };
        for (const key of Object.keys(r.questions)) {
          const doc = s.field_to_document?.[key] ?? key.replace(/^doc:/, "");
          if (!s.scorable_ids || s.scorable_ids.includes(doc)) q.pool.set(doc, Math.max(s.qrels[doc] ?? 0, 0));
        }
        queries.set(r.metadata.group_id, q);
      }
      const dcg = (grades: number[]) => grades.sort((a, b) => b - a).slice(0, 10).reduce((sum, g, i) => sum + g / Math.log2(i + 2), 0);
      const eligible = [...queries.values()].filter((q) => Object.values(q.qrels).some((g) => g >= q.threshold));
      const ndcg = eligible.map((q) => dcg([...q.pool.values()]) / dcg(Object.values(q.qrels).map((g) => Math.max(g, 0))));
      const mrr = eligible.map((q): number => (Math.max(0, ...q.pool.values()) >= q.threshold ? 1 : 0));
      expect(t.retrieval!.queries, track).toBe(eligible.length);
      expect(t.retrieval!.queries_total, track).toBe(queries.size);
      expect(t.retrieval!["ndcg@10"], track).toBeCloseTo(ndcg.reduce((a, b) => a + b, 0) / ndcg.length, 12);
      expect(t.retrieval!["mrr@10"], track).toBeCloseTo(mrr.reduce((a, b) => a + b, 0) / mrr.length, 12);
      expect(t.headline.value).toBe(t.retrieval!["ndcg@10"]);
    }
  });

  it("routing: accepted accuracy of routing to the gold model", () => {
    const recs = records.filter((r) => r.track === "routerbench");
    const ok = recs.filter((r) => (r.scoring as { accepted: string[] }).accepted.includes(r.expected.route as string)).length;
    expect(oracle.tracks.routerbench!.routing!.accepted_accuracy).toBeCloseTo(ok / recs.length, 12);
  });

  it("dropped lines are missing and wrong", () => {
    for (const [track, t] of Object.entries(dropped.tracks)) {
      if (t.family === "passage_reranking") continue;
      const recs = records.filter((r) => r.track === track);
      const key = Object.keys(t.questions).find((k) => recs.some((r) => r.expected[k] !== undefined))!;
      const withGold = recs.map((r, i) => ({ r, i })).filter(({ r }) => r.expected[key] !== undefined);
      const kept = withGold.filter(({ i }) => i % 3 !== 0).length;
      expect(t.questions[key]!.missing, track).toBe(withGold.length - kept);
      expect(t.questions[key]!.accuracy, track).toBeCloseTo(kept / withGold.length, 12);
    }
    expect(dropped.summary.v1_mean!).toBeLessThan(oracle.summary.v1_mean!);
  });
});

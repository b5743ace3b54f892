// scoreResults and TrackAccumulator on hand-made suites in temp dirs; expected values worked out by hand.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FormatError, UsageError } from "../../common/errors.js";
import type { MetricsJson } from "../../scorer/metrics-json.js";
import { scoreResults } from "../../scorer/score-results.js";
import { TrackAccumulator } from "../../scorer/track-accumulator.js";
import { RecordSchema } from "../../common/suite/schema.js";
import { ABC, noul, peaked, record, tempDir, writeResults, writeSuite, type FixtureTrack } from "./suite-fixture.js";

const silent = { debug() {}, info() {}, warn() {}, error() {}, child() { return silent; } };

function fixtureTracks(): FixtureTrack[] {
  const sa = [
    record("sa", { id: "r1", questions: { label: { type: "choice", criteria: ABC } }, expected: { label: "A" } }),
    record("sa", { id: "r2", questions: { label: { type: "choice", criteria: ABC } }, expected: { label: "B" } }),
    record("sa", { id: "r3", questions: { label: { type: "choice", criteria: ABC } }, expected: { label: "C" } }),
    record("sa", { id: "r4", questions: { label: { type: "choice", criteria: ABC } }, expected: { label: "C" } }),
  ];
  const xy = { x: "cat x", y: "cat y" };
  const guard = [
    // The first record has gold only for `harmful`, so the headline is harmful's macro-F1 even though
    // `category` comes first in questions order.
    record("guard", { id: "g1", family: "safety_guardrail", lang: "en", questions: { category: { type: "choice", criteria: xy }, harmful: { type: "noul" } }, expected: { harmful: true } }),
    record("guard", { id: "g2", family: "safety_guardrail", lang: "en", questions: { category: { type: "choice", criteria: xy }, harmful: { type: "noul" } }, expected: { harmful: false, category: "x" } }),
  ];
  const qrels1 = { a: 3, b: 0, c: 1, z: 2 };
  const rr = [
    record("rr", {
      id: "q1c1", family: "passage_reranking", lang: "en", group: "g1",
      questions: { "doc:a": { type: "noul" }, "doc:b": { type: "noul" }, "doc:c": { type: "noul" } },
      expected: { "doc:a": true, "doc:b": false, "doc:c": false },
      scoring: { type: "retrieval_ranking", qrels: qrels1, field_to_document: { "doc:a": "a" }, relevance_threshold: 2, fully_judged: true, combine_chunks_by: "metadata.group_id" },
    }),
    record("rr", {
      id: "q1c2", family: "passage_reranking", lang: "en", group: "g1",
      questions: { "doc:d": { type: "noul" }, "doc:e": { type: "noul" } },
      scoring: { type: "retrieval_ranking", qrels: [{ doc: "a", grade: 3 }, { doc: "b", grade: 0 }, { doc: "c", grade: 1 }, { doc: "z", grade: 2 }], scorable_ids: ["d"], relevance_threshold: 2, fully_judged: true },
    }),
    record("rr", {
      id: "q2", family: "passage_reranking", lang: "en", group: "g2",
      questions: { "doc:p": { type: "noul" }, "doc:q": { type: "noul" } },
      scoring: { type: "retrieval_ranking", qrels: { p: 1, q: 0 }, relevance_threshold: 2, fully_judged: true },
    }),
    record("rr", {
      id: "q3", family: "passage_reranking", lang: "en", group: "g3",
      questions: { "doc:m": { type: "noul" }, "doc:n": { type: "noul" } },
      scoring: { type: "retrieval_ranking", qrels: { m: 2 }, relevance_threshold: 2, fully_judged: false },
    }),
  ];
  const m12 = { m1: "model one", m2: "model two" };
  const rb = [
    record("routerbench", {
      id: "b1", family: "model_routing", lang: "multi", questions: { route: { type: "choice", criteria: m12 } }, expected: { route: "m1" },
      scoring: { type: "routing_outcome", outcomes: { m1: { quality: 0.8, cost_usd: 0.1 }, m2: { quality: 0.9, cost_usd: 0.5 } }, accepted: ["m1", "m2"] },
    }),
    record("routerbench", {
      id: "b2", family: "model_routing", lang: "multi", questions: { route: { type: "choice", criteria: m12 } }, expected: { route: "m1" },
      scoring: { type: "routing_outcome", outcomes: { m1: { quality: 0.4, cost_usd: 0.1 }, m2: { quality: 0.2, cost_usd: 0.3 } }, accepted: ["m1"] },
    }),
  ];
  const levels = { "0": "0", "1": "1", "2": "2", "3": "3", "4": "4" };
  const fw = [
    record("fw", { id: "f1", family: "quality_scoring", questions: { quality: { type: "choice", criteria: levels } }, expected: { quality: "1" }, scoring: { ordinal: true } }),
    record("fw", { id: "f2", family: "quality_scoring", questions: { quality: { type: "choice", criteria: levels } }, expected: { quality: "4" }, scoring: { ordinal: true } }),
  ];
  return [
    { family: "sentiment", track: "sa", records: sa },
    { family: "safety_guardrail", track: "guard", records: guard },
    { family: "passage_reranking", track: "rr", records: rr },
    { family: "model_routing", track: "routerbench", records: rb },
    { family: "quality_scoring", track: "fw", records: fw },
  ];
}

const LEVEL_KEYS = ["0", "1", "2", "3", "4"];

function writeFixtureResults(dir: string): void {
  // a/ sorts before b/: the r1 line in b/ (correct) replaces the one in a/ (wrong).
  writeResults(join(dir, "a", "sentiment", "sa.jsonl"), [{ run_id: "sa:r1", probs: { label: peaked(["A", "B", "C"], "C") } }]);
  writeResults(
    join(dir, "b", "sentiment", "sa.jsonl"),
    [
      { run_id: "sa:r2", probs: { label: peaked(["A", "B", "C"], "B") } },
      { run_id: "sa:r1", probs: { label: peaked(["A", "B", "C"], "A") } },
      // tie A/B -> A (first in criteria): wrong; this later line replaces the r2 line above
      { run_id: "sa:r2", probs: { label: { A: 0.4, B: 0.4, C: 0.2 } } },
      { run_id: "sa:r3", probs: { label: peaked(["A", "B", "C"], "C") }, skipped: ["label"] },
      // r4: no line at all
    ],
    '{"run_id": "sa:r4", "probs": {"lab', // torn last line of a run still appending
  );
  writeResults(join(dir, "b", "safety_guardrail", "guard.jsonl"), [
    { run_id: "guard:g1", probs: { harmful: noul(0.9), category: { x: 0.5, y: 0.5 } } },
    { run_id: "guard:g2", probs: { harmful: noul(0.6), category: { x: 0.8, y: 0.2 } } },
  ]);
  writeResults(join(dir, "b", "passage_reranking", "rr.jsonl"), [
    { run_id: "rr:q1c1", probs: { "doc:a": noul(0.6), "doc:b": noul(0.6), "doc:c": noul(0.9) } },
    { run_id: "rr:q1c2", probs: { "doc:d": noul(0.6), "doc:e": noul(0.99) } },
    { run_id: "rr:q2", probs: { "doc:p": noul(0.2), "doc:q": noul(0.1) } },
    { run_id: "rr:q3", probs: { "doc:n": noul(0.7), "doc:m": noul(0.9) }, errors: { "doc:m": "HTTP 500 after 3 retries" } },
  ]);
  writeResults(join(dir, "b", "model_routing", "routerbench.jsonl"), [{ run_id: "routerbench:b1", probs: { route: { m1: 0.3, m2: 0.7 } } }]);
  // fw.jsonl sorts before fw.jsonl.gz, so the gzip lines (right levels) replace these.
  writeResults(join(dir, "b", "quality_scoring", "fw.jsonl"), [
    { run_id: "fw:f1", probs: { quality: peaked(LEVEL_KEYS, "0") } },
    { run_id: "fw:f2", probs: { quality: peaked(LEVEL_KEYS, "0") } },
  ]);
  const gz = [
    { run_id: "fw:f1", probs: { quality: peaked(LEVEL_KEYS, "3") } },
    { run_id: "fw:f2", probs: { quality: peaked(LEVEL_KEYS, "4", 0.9) } },
  ];
  writeFileSync(join(dir, "b", "quality_scoring", "fw.jsonl.gz"), gzipSync(gz.map((l) => JSON.stringify(l) + "\n").join("")));
}

describe("scoreResults on a hand-made suite", () => {
  let suiteDir: string;
  let resultsDir: string;
  let cleanup: () => void;
  let metrics: MetricsJson;

  beforeEach(async () => {
    const t = tempDir("score");
    cleanup = t.cleanup;
    suiteDir = join(t.dir, "suite");
    resultsDir = join(t.dir, "results");
    writeSuite(suiteDir, fixtureTracks());
    writeFixtureResults(resultsDir);
    metrics = await scoreResults({ suiteDir, resultsDir, log: silent });
  });
  afterEach(() => cleanup());

  it("choice: later duplicate wins, argmax tie to the first option, skipped and absent are missing", () => {
    const t = metrics.tracks.sa!;
    // r1 right (p .7), r2 tie -> A wrong (p(B) .4), r3 skipped, r4 no line. accuracy 1/4.
    // A: tp1 fp1 -> 2/3; B: fn1 -> 0; C: fn2 -> 0; macro (2/3)/3 = 2/9. nll (-ln .7 - ln .4)/2
    expect(t.questions.label).toEqual({
      kind: "choice", n: 4, accuracy: 0.25, macro_f1: expect.closeTo(2 / 9, 12),
      nll: expect.closeTo((-Math.log(0.7) - Math.log(0.4)) / 2, 12), missing: 2,
    });
    expect(t.headline).toMatchObject({ metric: "accuracy", value: 0.25 });
    expect(t).toMatchObject({ family: "sentiment", pillar: "language_understanding", lang: "vi", records: 4, groups: 4, missing: 2, retrieval: null, routing: null });
  });

  it("headline from the first question with gold in the first record that has gold", () => {
    const t = metrics.tracks.guard!;
    // harmful: preds T (.9), T (.6); gold T, F. true: tp1 fp1 -> 2/3; false: fn1 -> 0. macro 1/3
    expect(t.headline).toMatchObject({ metric: "macro_f1", value: expect.closeTo(1 / 3, 12) });
    expect(t.questions.harmful).toMatchObject({ kind: "noul", n: 2, accuracy: 0.5 });
    // category: only g2 has gold; tie x/y on g1 does not count. g2 x .8 -> right
    expect(t.questions.category).toMatchObject({ kind: "choice", n: 1, accuracy: 1, missing: 0 });
    expect(Object.keys(t.questions)).toEqual(["category", "harmful"]);
  });

  it("retrieval: chunks merged, ties by doc id, gold outside the pool, nothing-relevant queries left out", () => {
    const r = metrics.tracks.rr!;
    // q1 pool {a,b,c,d} (e not scorable). Ranked: c .9, then the .6 tie by greater id: d, b, a.
    // DCG = 1/log2(2) + 0 + 0 + 3/log2(5); IDCG over [3,2,1] (z:2 outside the pool) = 3 + 2/log2(3) + 1/log2(4)
    const ndcg1 = (1 + 3 / Math.log2(5)) / (3 + 2 / Math.log2(3) + 0.5);
    // q2 has nothing >= 2: left out. q3: m missing, n unjudged -> nDCG 0, RR 0.
    expect(r.retrieval).toEqual({
      "ndcg@10": expect.closeTo(ndcg1 / 2, 12),
      "mrr@10": expect.closeTo((1 / 4 + 0) / 2, 12), // a (grade 3) at rank 4
      queries: 2,
      queries_total: 3,
      // keep-set only on q1 (q3 not fully judged): kept {a,b,c,d}, relevant {a}: P 1/4, R 1, F1 2*.25/1.25 = .4
      keep_precision: 0.25, keep_recall: 1, keep_f1: expect.closeTo(0.4, 12),
    });
    expect(r.headline).toMatchObject({ metric: "ndcg@10", value: expect.closeTo(ndcg1 / 2, 12) });
    expect(r.questions).toEqual({});
    expect(r.missing).toBe(1);
    expect(r).toMatchObject({ records: 4, groups: 3, lang: "en", pillar: "retrieval_grounding" });
  });

  it("routing: accepted accuracy with missing = wrong", () => {
    const t = metrics.tracks.routerbench!;
    // b1 -> m2 accepted (quality .9, cost .5); b2 missing. oracle (.9 + .4)/2
    expect(t.routing).toEqual({ accepted_accuracy: 0.5, mean_quality: 0.9, mean_cost_usd: 0.5, oracle_quality: expect.closeTo(0.65, 12), n: 2, missing: 1 });
    expect(t.headline).toMatchObject({ metric: "accepted_accuracy", value: 0.5 });
    expect(t.questions.route).toMatchObject({ n: 2, accuracy: 0 });
  });

  it("ordinal MAE in levels", () => {
    // f1 gold 1 pred 3 -> 2; f2 gold 4 pred 4 -> 0. MAE 1, accuracy 1/2
    expect(metrics.tracks.fw!.questions.quality).toMatchObject({ accuracy: 0.5, mae: 1, missing: 0 });
  });

  it("aggregates: routerbench counts in its pillar but not in the v1 mean", () => {
    const ndcg = metrics.tracks.rr!.headline.value!;
    const v1 = [0.25, 1 / 3, ndcg, 0.5];
    const mean = v1.reduce((a, b) => a + b) / 4;
    expect(metrics.summary).toEqual({ v1_mean: null, v1_mean_partial: expect.closeTo(mean, 12), v1_tracks: 4, family_macro_mean: expect.closeTo(mean, 12) });
    expect(metrics.pillars.agentic_routing).toMatchObject({ mean: 0.5, by_lang: { multi: 0.5 }, tracks: 1 });
    expect(metrics.pillars.guardrail_moderation).toMatchObject({ mean: expect.closeTo(1 / 3, 12), by_lang: { en: expect.closeTo(1 / 3, 12) } });
    expect(metrics.families.sentiment).toEqual({ mean: 0.25, by_lang: { vi: 0.25 }, tracks: 1 });
    expect(metrics.format).toBe(1);
    expect(metrics.suite.tracks).toBe(5);
    expect(metrics.suite.identity).toMatch(/^[0-9a-f]{64}$/);
  });

  it("confidence intervals bracket the headline and are reproducible", async () => {
    for (const t of Object.values(metrics.tracks)) {
      expect(t.headline.ci_low).not.toBeNull();
      expect(t.headline.ci_low!).toBeLessThanOrEqual(t.headline.value!);
      expect(t.headline.value!).toBeLessThanOrEqual(t.headline.ci_high!);
    }
    for (const p of Object.values(metrics.pillars)) {
      if (p.mean === null) continue;
      expect(p.ci_low!).toBeLessThanOrEqual(p.mean);
      expect(p.mean).toBeLessThanOrEqual(p.ci_high!);
    }
    const again = await scoreResults({ suiteDir, resultsDir, log: silent });
    expect(again).toEqual(metrics);
  });

  it("--tracks scores only the chosen tracks and ignores result lines of the others", async () => {
    const m = await scoreResults({ suiteDir, resultsDir, tracks: ["sa"], log: silent });
    expect(Object.keys(m.tracks)).toEqual(["sa"]);
    expect(m.suite.identity).toBe(metrics.suite.identity);
  });

  it("a run_id that matches no record is an error naming file, line and run_id", async () => {
    writeResults(join(resultsDir, "c.jsonl"), [{ run_id: "sa:r1", probs: {} }, { run_id: "sa:nope", probs: {} }]);
    await expect(scoreResults({ suiteDir, resultsDir, log: silent })).rejects.toThrow(FormatError);
    await expect(scoreResults({ suiteDir, resultsDir, log: silent })).rejects.toThrow(/c\.jsonl:2 field run_id: run_id "sa:nope" matches no record/);
    writeResults(join(resultsDir, "c.jsonl"), [{ run_id: "elsewhere:x", probs: {} }]);
    await expect(scoreResults({ suiteDir, resultsDir, log: silent })).rejects.toThrow(/c\.jsonl:1 field run_id: run_id "elsewhere:x"/);
  });

  it("a line without run_id is a format error naming the field", async () => {
    writeResults(join(resultsDir, "c.jsonl"), [{ probs: {} }]);
    await expect(scoreResults({ suiteDir, resultsDir, log: silent })).rejects.toThrow(/c\.jsonl:1 field run_id/);
  });

  it("refuses a suite whose files do not match the manifest", async () => {
    const manifestPath = join(suiteDir, "manifest.json");
    const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
    manifest.files["test/sentiment/sa.jsonl.gz"].sha256 = "0".repeat(64);
    writeFileSync(manifestPath, JSON.stringify(manifest));
    await expect(scoreResults({ suiteDir, resultsDir, log: silent })).rejects.toThrow(/sa\.jsonl\.gz.*sha256 mismatch/);
  });
});

describe("TrackAccumulator streaming", () => {
  const recs = [
    record("t", { id: "a", questions: { label: { type: "choice", criteria: ABC } }, expected: { label: "A" }, group: "g1" }),
    record("t", { id: "b", questions: { label: { type: "choice", criteria: ABC } }, expected: { label: "B" }, group: "g1" }),
  ].map((r) => RecordSchema.parse(r));

  it("results before records, replacement, completeness", () => {
    const acc = new TrackAccumulator("t", "sentiment");
    acc.addResult({ run_id: "t:b", probs: { label: peaked(["A", "B", "C"], "B") } });
    for (const r of recs) acc.addRecord(r);
    expect(acc.isComplete()).toBe(false); // not sealed, and t:a has no result
    acc.sealRecords();
    acc.addResult({ run_id: "t:a", probs: { label: peaked(["A", "B", "C"], "C") } });
    expect(acc.isComplete()).toBe(true);
    expect(acc.finish().headline.value).toBe(0.5);
    acc.addResult({ run_id: "t:a", probs: { label: peaked(["A", "B", "C"], "A") } });
    expect(acc.finish().headline.value).toBe(1);
    // one group: every resample is the whole track
    expect(acc.finish().headline).toMatchObject({ ci_low: 1, ci_high: 1 });
  });

  it("invalid distributions are missing, and counted", () => {
    const acc = new TrackAccumulator("t", "sentiment");
    for (const r of recs) acc.addRecord(r);
    acc.sealRecords();
    acc.addResult({ run_id: "t:a", probs: { label: { A: 0.9, B: 0.9, C: 0 } } }); // sums to 1.8
    acc.addResult({ run_id: "t:b", probs: { label: { A: 0.5, B: 0.5 } } }); // C absent
    const m = acc.finish();
    expect(m.questions.label).toMatchObject({ missing: 2, accuracy: 0, nll: null });
    expect(acc.invalidDistributions).toBe(2);
  });

  it("after sealing, an unknown run_id is a usage error", () => {
    const acc = new TrackAccumulator("t", "sentiment");
    acc.sealRecords();
    expect(() => acc.addResult({ run_id: "t:zz", probs: {} })).toThrow(UsageError);
  });

  it("gold that is not an option is a format error naming the field", () => {
    const acc = new TrackAccumulator("t", "sentiment");
    const bad = RecordSchema.parse(record("t", { id: "x", questions: { label: { type: "choice", criteria: ABC } }, expected: { label: "Z" } }));
    expect(() => acc.addRecord(bad, { file: "t.jsonl.gz", line: 7 })).toThrow(/t\.jsonl\.gz:7 field expected\.label/);
  });
});

describe("TrackAccumulator headline outcomes and group sums (what `compare` pairs)", () => {
  const parse = (r: Record<string, unknown>) => RecordSchema.parse(r);
  const m12 = { m1: "model one", m2: "model two" };

  it("choice: right, wrong or missing per record in file order; null without gold; sums [correct, n] per group in first-record order", () => {
    const acc = new TrackAccumulator("t", "sentiment");
    const q = { label: { type: "choice" as const, criteria: ABC } };
    acc.addRecord(parse(record("t", { id: "a", group: "g2", questions: q, expected: { label: "A" } })));
    acc.addRecord(parse(record("t", { id: "b", group: "g1", questions: q, expected: { label: "B" } })));
    acc.addRecord(parse(record("t", { id: "c", group: "g2", questions: q, expected: {} })));
    acc.addRecord(parse(record("t", { id: "d", group: "g1", questions: q, expected: { label: "A" } })));
    acc.sealRecords();
    acc.addResult({ run_id: "t:a", probs: { label: peaked(["A", "B", "C"], "A") } });
    acc.addResult({ run_id: "t:b", probs: { label: peaked(["A", "B", "C"], "C") } });
    acc.addResult({ run_id: "t:c", probs: { label: peaked(["A", "B", "C"], "A") } });
    expect(acc.headlineOutcomes()).toEqual([
      { runId: "t:a", right: true },
      { runId: "t:b", right: false },
      { runId: "t:c", right: null },
      { runId: "t:d", right: false },
    ]);
    const g = acc.headlineGroupSums();
    // g2 first (record a): a right, c without gold; g1: b wrong, d missing.
    expect(g.width).toBe(2);
    expect([...g.sums]).toEqual([1, 1, 0, 2]);
    expect(g.headline(Float64Array.from([1, 3]))).toBe(1 / 3);
    expect(g.headline(Float64Array.from([0, 0]))).toBeNaN();
  });

  it("noul: sums [tp, fp, fn] of true then of false per group; the headline is their macro-F1", () => {
    const acc = new TrackAccumulator("t", "toxicity");
    const q = { toxic: { type: "noul" as const } };
    const recs: [string, string, boolean, number | null][] = [
      ["a", "g1", true, 0.9], // tp of true
      ["b", "g1", false, 0.9], // fp of true, fn of false
      ["c", "g2", true, null], // fn of true
      ["d", "g2", false, 0.1], // tp of false
    ];
    for (const [id, group, gold] of recs) acc.addRecord(parse(record("t", { id, group, questions: q, expected: { toxic: gold } })));
    acc.sealRecords();
    for (const [id, , , p] of recs) if (p !== null) acc.addResult({ run_id: `t:${id}`, probs: { toxic: noul(p) } });
    const g = acc.headlineGroupSums();
    expect(g.width).toBe(6);
    expect([...g.sums]).toEqual([1, 1, 0, 0, 0, 1, 0, 0, 1, 1, 0, 0]);
    // true: tp1 fp1 fn1 -> 1/2; false: tp1 fp0 fn1 -> 2/3
    expect(g.headline(Float64Array.from([1, 1, 1, 1, 0, 1]))).toBeCloseTo(7 / 12, 12);
    expect(acc.finish().headline.value).toBeCloseTo(7 / 12, 12);
    expect(g.headline(Float64Array.from([0, 4, 0, 0, 4, 0]))).toBeNaN();
    expect(acc.headlineOutcomes()).toEqual([
      { runId: "t:a", right: true },
      { runId: "t:b", right: false },
      { runId: "t:c", right: false },
      { runId: "t:d", right: true },
    ]);
  });

  it("routing: right when the predicted route is accepted; a record without routing has none; sums [accepted, records]", () => {
    const acc = new TrackAccumulator("routerbench", "model_routing");
    const q = { route: { type: "choice" as const, criteria: m12 } };
    const scoring = { type: "routing_outcome", outcomes: { m1: { quality: 0.8 }, m2: { quality: 0.9 } }, accepted: ["m1"] };
    acc.addRecord(parse(record("routerbench", { id: "a", group: "g1", questions: q, expected: { route: "m1" }, scoring })));
    acc.addRecord(parse(record("routerbench", { id: "b", group: "g1", questions: q, expected: { route: "m1" }, scoring })));
    acc.addRecord(parse(record("routerbench", { id: "c", group: "g2", questions: q, expected: { route: "m1" }, scoring })));
    acc.addRecord(parse(record("routerbench", { id: "d", group: "g2", questions: q, expected: { route: "m1" } })));
    acc.sealRecords();
    acc.addResult({ run_id: "routerbench:a", probs: { route: peaked(["m1", "m2"], "m1") } });
    acc.addResult({ run_id: "routerbench:b", probs: { route: peaked(["m1", "m2"], "m2") } });
    acc.addResult({ run_id: "routerbench:d", probs: { route: peaked(["m1", "m2"], "m1") } });
    expect(acc.headlineOutcomes()).toEqual([
      { runId: "routerbench:a", right: true },
      { runId: "routerbench:b", right: false },
      { runId: "routerbench:c", right: false },
      { runId: "routerbench:d", right: null },
    ]);
    const g = acc.headlineGroupSums();
    expect([...g.sums]).toEqual([1, 2, 0, 1]);
    expect(g.headline(Float64Array.from([1, 2]))).toBe(0.5);
    expect(g.headline(Float64Array.from([0, 0]))).toBeNaN();
    expect(acc.finish().headline.value).toBe(1 / 3);
  });

  it("retrieval ranks whole queries: no outcome per record; sums [nDCG@10 sum, eligible queries] per group", () => {
    const acc = new TrackAccumulator("rk", "passage_reranking");
    const q = { "doc:a": { type: "noul" as const }, "doc:b": { type: "noul" as const } };
    acc.addRecord(parse(record("rk", { id: "q1", group: "g1", questions: q, expected: { "doc:a": true }, scoring: { type: "retrieval_ranking", qrels: { a: 1, b: 0 }, relevance_threshold: 1, fully_judged: true } })));
    acc.addRecord(parse(record("rk", { id: "q2", group: "g2", questions: q, expected: {}, scoring: { type: "retrieval_ranking", qrels: { a: 0, b: 0 }, relevance_threshold: 1, fully_judged: true } })));
    acc.sealRecords();
    // q1: a ranked first: nDCG 1; q2 has no relevant document: not eligible.
    acc.addResult({ run_id: "rk:q1", probs: { "doc:a": noul(0.9), "doc:b": noul(0.2) } });
    acc.addResult({ run_id: "rk:q2", probs: { "doc:a": noul(0.9), "doc:b": noul(0.2) } });
    expect(acc.headlineOutcomes()).toEqual([]);
    const g = acc.headlineGroupSums();
    expect([...g.sums]).toEqual([1, 1, 0, 0]);
    expect(g.headline(Float64Array.from([0, 0]))).toBeNaN();
    expect(g.headline(Float64Array.from([1.5, 2]))).toBe(0.75);
  });

  it("a track without any gold: no headline kind, no outcome", () => {
    const acc = new TrackAccumulator("t", "sentiment");
    acc.addRecord(parse(record("t", { id: "a", questions: { label: { type: "choice", criteria: ABC } }, expected: {} })));
    acc.sealRecords();
    acc.addResult({ run_id: "t:a", probs: { label: peaked(["A", "B", "C"], "A") } });
    expect(acc.headlineOutcomes()).toEqual([]);
    expect(acc.finish().headline.value).toBeNull();
  });
});

describe("TrackAccumulator: gold it cannot score, and the order of records and results", () => {
  const parse = (r: Record<string, unknown>) => RecordSchema.parse(r);
  const choice = { label: { type: "choice" as const, criteria: ABC } };
  const at = { file: "t.jsonl.gz", line: 3 };

  it("each problem is an error naming file, line and field", () => {
    const acc = new TrackAccumulator("t", "sentiment");
    acc.addRecord(parse(record("t", { id: "a", questions: choice, expected: { label: "A" } })), at);
    expect(() => acc.addRecord(parse(record("t", { id: "a", questions: choice, expected: { label: "A" } })), at)).toThrow(
      new FormatError("t.jsonl.gz", 3, "_evaluation.run_id", 'duplicate run_id "t:a"'),
    );
    expect(() => acc.addRecord(parse(record("t", { id: "n", questions: { toxic: { type: "noul" } }, expected: { toxic: "yes" } })), at)).toThrow(
      new FormatError("t.jsonl.gz", 3, "expected.toxic", 'gold of a noul question must be true or false, got "yes"'),
    );
    const rerank = (scoring: Record<string, unknown>, questions: Record<string, { type: "choice" | "noul"; criteria?: Record<string, string> }> = { "doc:a": { type: "noul" } }) =>
      parse(record("t", { id: `q${Math.random()}`, family: "passage_reranking", questions, scoring: { type: "retrieval_ranking", qrels: { a: 1 }, ...scoring } }));
    expect(() => acc.addRecord(rerank({ combine_chunks_by: "metadata.nowhere" }), at)).toThrow(
      new FormatError("t.jsonl.gz", 3, "metadata.nowhere", 'combine_chunks_by names "metadata.nowhere", which is not a string in this record'),
    );
    expect(() => acc.addRecord(rerank({ combine_chunks_by: "state.text.length.x" }), at)).toThrow(/combine_chunks_by names "state\.text\.length\.x"/);
    expect(() => acc.addRecord(rerank({}, { "doc:a": { type: "choice", criteria: ABC } }), at)).toThrow(
      new FormatError("t.jsonl.gz", 3, "questions.doc:a.type", "reranking document questions must be noul"),
    );
    const routing = { type: "routing_outcome", outcomes: { m1: { quality: 1 } }, accepted: ["m1"] };
    expect(() => acc.addRecord(parse(record("t", { id: "r", questions: { ok: { type: "noul" } }, expected: { ok: true }, scoring: routing })), at)).toThrow(
      new FormatError("t.jsonl.gz", 3, "questions", "routing_outcome record has no choice question to route with"),
    );
  });

  it("a record after sealing, or a result left for no record at sealing: usage errors naming the track", () => {
    const acc = new TrackAccumulator("t", "sentiment");
    acc.addResult({ run_id: "t:zz", probs: {} });
    expect(() => acc.sealRecords()).toThrow(new UsageError('track t: result for run_id "t:zz" matches no record of the suite'));
    expect(() => acc.addRecord(parse(record("t", { id: "a", questions: choice, expected: { label: "A" } })))).toThrow(
      new UsageError("track t: record added after the suite was sealed"),
    );
  });

  it("hasRecord and hasResult; a record added after a finish changes the figures and their interval", () => {
    const acc = new TrackAccumulator("t", "sentiment");
    acc.addRecord(parse(record("t", { id: "a", group: "g", questions: choice, expected: { label: "A" } })));
    expect([acc.hasRecord("t:a"), acc.hasResult("t:a"), acc.hasRecord("t:b"), acc.hasResult("t:b")]).toEqual([true, false, false, false]);
    acc.addResult({ run_id: "t:a", probs: { label: peaked(["A", "B", "C"], "A") } });
    expect(acc.hasResult("t:a")).toBe(true);
    expect(acc.finish().headline).toMatchObject({ value: 1, ci_low: 1, ci_high: 1 });
    // Same group, no result yet: missing counts as wrong; one group, so every resample is the track.
    acc.addRecord(parse(record("t", { id: "b", group: "g", questions: choice, expected: { label: "A" } })));
    expect(acc.finish().headline).toMatchObject({ value: 0.5, ci_low: 0.5, ci_high: 0.5 });
    expect([acc.recordCount, acc.resultCount]).toEqual([2, 1]);
  });
});

describe("TrackAccumulator: queries merged from chunks, the route question, ordinal keys", () => {
  const parse = (r: Record<string, unknown>) => RecordSchema.parse(r);

  it("a query's qrels keep each document's highest grade over its chunks; it is fully judged only when every chunk is; the threshold defaults to 1", () => {
    const acc = new TrackAccumulator("rk", "passage_reranking");
    const rk = (id: string, group: string, docs: string[], scoring: Record<string, unknown>) =>
      parse(record("rk", { id, group, family: "passage_reranking", questions: Object.fromEntries(docs.map((d) => [`doc:${d}`, { type: "noul" as const }])), scoring: { type: "retrieval_ranking", ...scoring } }));
    acc.addRecord(rk("c1", "q1", ["a", "b"], { qrels: { a: 0, b: 0 }, relevance_threshold: 2, fully_judged: true }));
    acc.addRecord(rk("c2", "q1", ["c"], { qrels: { a: 2, c: 1 }, fully_judged: false }));
    acc.addRecord(rk("c3", "q2", ["x"], { qrels: { x: 1 } }));
    acc.sealRecords();
    acc.addResult({ run_id: "rk:c1", probs: { "doc:a": noul(0.9), "doc:b": noul(0.2) } });
    acc.addResult({ run_id: "rk:c2", probs: { "doc:c": noul(0.95) } });
    acc.addResult({ run_id: "rk:c3", probs: { "doc:x": noul(0.8) } });
    const r = acc.finish().retrieval!;
    // q1: grades a 2 (from c2), b 0, c 1; ranked c, a, b. DCG 1 + 2/log2(3); ideal 2 + 1/log2(3).
    // MRR with threshold 2 (its first chunk's): a at rank 2. q2: threshold 1, x first: 1 and 1.
    const ndcg1 = (1 + 2 / Math.log2(3)) / (2 + 1 / Math.log2(3));
    expect(r["ndcg@10"]).toBeCloseTo((ndcg1 + 1) / 2, 12);
    expect(r["mrr@10"]).toBeCloseTo((0.5 + 1) / 2, 12);
    expect(r).toMatchObject({ queries: 2, queries_total: 2, keep_precision: null, keep_recall: null, keep_f1: null });
  });

  it("routing uses the question named route, else the first choice question; a key ordinal in any record is ordinal", () => {
    const m12 = { m1: "model one", m2: "model two" };
    const acc = new TrackAccumulator("routerbench", "model_routing");
    const scoring = { type: "routing_outcome", outcomes: { m1: { quality: 0.2 }, m2: { quality: 0.9 } }, accepted: ["m2"] };
    acc.addRecord(parse(record("routerbench", { id: "a", questions: { first: { type: "choice", criteria: m12 }, route: { type: "choice", criteria: m12 } }, expected: { route: "m2" }, scoring })));
    acc.addRecord(parse(record("routerbench", { id: "b", questions: { ok: { type: "noul" }, pick: { type: "choice", criteria: m12 } }, expected: { pick: "m2" }, scoring })));
    acc.sealRecords();
    acc.addResult({ run_id: "routerbench:a", probs: { first: peaked(["m1", "m2"], "m2"), route: peaked(["m1", "m2"], "m1") } });
    acc.addResult({ run_id: "routerbench:b", probs: { ok: noul(0.9), pick: peaked(["m1", "m2"], "m2") } });
    // a routes by route (m1: not accepted, quality 0.2); b by pick (m2: accepted, quality 0.9).
    expect(acc.finish().routing).toMatchObject({ accepted_accuracy: 0.5, mean_quality: (0.2 + 0.9) / 2, n: 2, missing: 0 });

    const ord = new TrackAccumulator("o", "sentiment");
    ord.addRecord(parse(record("o", { id: "1", questions: { level: { type: "choice", criteria: ABC } }, expected: { level: "A" } })));
    ord.addRecord(parse(record("o", { id: "2", questions: { level: { type: "choice", criteria: ABC } }, expected: { level: "B" }, scoring: { ordinal: true } })));
    ord.sealRecords();
    ord.addResult({ run_id: "o:1", probs: { level: peaked(["A", "B", "C"], "C") } });
    ord.addResult({ run_id: "o:2", probs: { level: peaked(["A", "B", "C"], "B") } });
    // |C - A| = 2 levels, |B - B| = 0: mae 1 over both records.
    expect(ord.finish().questions.level).toMatchObject({ mae: 1, accuracy: 0.5 });
  });
});

describe("TrackAccumulator: replacements, mixed records, documents and counts", () => {
  const parse = (r: Record<string, unknown>) => RecordSchema.parse(r);
  const choice = { label: { type: "choice" as const, criteria: ABC } };

  it("a later result without a question takes back its earlier answer; counts stay per record", () => {
    const acc = new TrackAccumulator("t", "sentiment");
    acc.addRecord(parse(record("t", { id: "a", questions: choice, expected: { label: "A" } })));
    acc.addRecord(parse(record("t", { id: "b", questions: choice, expected: { label: "A" } })));
    acc.sealRecords();
    acc.addResult({ run_id: "t:a", probs: { label: peaked(["A", "B", "C"], "A") } });
    expect(acc.isComplete()).toBe(false); // sealed, one of two answered
    acc.addResult({ run_id: "t:a", probs: { label: peaked(["A", "B", "C"], "A") }, skipped: ["label"] });
    acc.addResult({ run_id: "t:b", probs: {}, errors: { label: "engine: HTTP 500" } });
    expect(acc.resultCount).toBe(2);
    expect(acc.isComplete()).toBe(true);
    const m = acc.finish();
    expect(m.questions.label).toMatchObject({ n: 2, accuracy: 0, missing: 2 });
    expect(m.missing).toBe(2);
    // An absent answer is missing, not an invalid distribution.
    expect(acc.invalidDistributions).toBe(0);
    expect(() => acc.addResult({ run_id: "t:zz", probs: {} })).toThrow(new UsageError('track t: result for run_id "t:zz" matches no record of the suite'));
  });

  it("records with different questions and criteria under one key: each scored by its own options", () => {
    const acc = new TrackAccumulator("t", "sentiment");
    acc.addRecord(parse(record("t", { id: "a", questions: { label: { type: "choice", criteria: { AB: "x", C: "y" } }, tone: { type: "choice", criteria: ABC } }, expected: { label: "AB", tone: "B" } })));
    acc.addRecord(parse(record("t", { id: "b", questions: { label: { type: "choice", criteria: { A: "x", BC: "y" } }, extra: { type: "choice", criteria: ABC } }, expected: { label: "A" } })));
    acc.addRecord(parse(record("t", { id: "c", questions: { ok: { type: "noul" }, label: { type: "choice", criteria: { X: "x", Y: "y" } } }, expected: { label: "X" } })));
    acc.addRecord(parse(record("t", { id: "d", questions: { tone: { type: "choice", criteria: ABC } }, expected: { tone: "A" } })));
    acc.sealRecords();
    acc.addResult({ run_id: "t:a", probs: { label: peaked(["AB", "C"], "AB"), tone: peaked(["A", "B", "C"], "C") } });
    acc.addResult({ run_id: "t:b", probs: { label: peaked(["A", "BC"], "A"), extra: peaked(["A", "B", "C"], "B") } });
    acc.addResult({ run_id: "t:c", probs: { label: peaked(["X", "Y"], "X"), ok: noul(0.9) } });
    acc.addResult({ run_id: "t:d", probs: { tone: peaked(["A", "B", "C"], "A") } });
    const m = acc.finish();
    // label right in all three (each against its own options); tone wrong in a, right in d; ok and extra have no gold.
    expect(m.questions.label).toMatchObject({ n: 3, accuracy: 1, missing: 0 });
    expect(m.questions.tone).toMatchObject({ n: 2, accuracy: 0.5 });
    expect(m.headline.value).toBe(1);
    // The headline (label) per group, in record order; d has no label: its group sums nothing.
    expect([...acc.headlineGroupSums().sums]).toEqual([1, 1, 1, 1, 1, 1, 0, 0]);
    expect(acc.invalidDistributions).toBe(0);
    // A question answered without gold is not missing.
    expect(m.missing).toBe(0);
  });

  it("a reranking track: documents named by field_to_document or by a key without doc:, unanswered chunks missing, keep-set of a fully judged query", () => {
    const acc = new TrackAccumulator("rk", "passage_reranking");
    const q = (keys: string[]) => Object.fromEntries(keys.map((k) => [k, { type: "noul" as const }]));
    // Query q1: "doc:1" is document d7 (field_to_document), "doc:b" is b; a second chunk has "p" (no doc: prefix).
    acc.addRecord(parse(record("rk", { id: "c1", group: "q1", family: "passage_reranking", questions: q(["doc:1", "doc:b"]), scoring: { type: "retrieval_ranking", qrels: { d7: 2, b: 0, p: 1 }, field_to_document: { "doc:1": "d7" }, fully_judged: true } })));
    acc.addRecord(parse(record("rk", { id: "c2", group: "q1", family: "passage_reranking", questions: q(["p", "doc:b"]), scoring: { type: "retrieval_ranking", qrels: { d7: 2 }, fully_judged: true } })));
    // Query q2 is never answered.
    acc.addRecord(parse(record("rk", { id: "c3", group: "q2", family: "passage_reranking", questions: q(["doc:z"]), scoring: { type: "retrieval_ranking", qrels: { z: 1 }, fully_judged: true } })));
    // A plain record in the same track: the headline stays nDCG, its question is not reported.
    acc.addRecord(parse(record("rk", { id: "x", group: "q9", family: "passage_reranking", questions: { ok: { type: "noul" } }, expected: { ok: true } })));
    acc.sealRecords();
    acc.addResult({ run_id: "rk:c1", probs: { "doc:1": noul(0.3), "doc:b": noul(0.2) } });
    expect(acc.resultCount).toBe(1);
    acc.addResult({ run_id: "rk:c2", probs: { p: noul(0.6), "doc:b": noul(0.7) } });
    acc.addResult({ run_id: "rk:x", probs: { ok: noul(0.9) } });
    expect(acc.resultCount).toBe(3);
    const m = acc.finish();
    // q1 pool: d7 0.3, b max(0.2, 0.7) = 0.7, p 0.6. Ranked b, p, d7: DCG 0 + 1/log2(3) + 2/log2(4); ideal 2 + 1/log2(3).
    // Kept (p >= 0.5): b, p; relevant (grade >= 1): d7, p. Precision 1/2, recall 1/2.
    // q2: z unanswered: ranked nothing, nDCG 0, MRR 0, keep: nothing kept (P 0), recall 0.
    const ndcg1 = (1 / Math.log2(3) + 1) / (2 + 1 / Math.log2(3));
    expect(m.retrieval!["ndcg@10"]).toBeCloseTo(ndcg1 / 2, 12);
    expect(m.retrieval!["mrr@10"]).toBeCloseTo(0.5 / 2, 12);
    expect(m.retrieval).toMatchObject({ queries: 2, queries_total: 2, keep_precision: 0.25, keep_recall: 0.25 });
    expect(m.headline.metric).toBe("ndcg@10");
    expect(m.questions).toEqual({});
    expect(m.missing).toBe(1); // z
    expect([...acc.headlineGroupSums().sums]).toEqual([ndcg1, 1, 0, 1, 0, 0]);
  });

  it("a duplicate run_id without a source is named by the track", () => {
    const acc = new TrackAccumulator("t", "sentiment");
    acc.addRecord(parse(record("t", { id: "a", questions: choice, expected: { label: "A" } })));
    expect(() => acc.addRecord(parse(record("t", { id: "a", questions: choice, expected: { label: "A" } })))).toThrow(new FormatError("t", undefined, "_evaluation.run_id", 'duplicate run_id "t:a"'));
    expect(() => acc.addRecord(parse(record("t", { id: "z", questions: choice, expected: { label: "Z" } })))).toThrow(
      new FormatError("t", undefined, "expected.label", 'gold "Z" is not an option of questions.label.criteria'),
    );
  });

  it("a figure cached at a finish is recomputed after every change (records and results in any mix)", () => {
    const acc = new TrackAccumulator("t", "sentiment");
    acc.addRecord(parse(record("t", { id: "a", group: "g", questions: choice, expected: { label: "A" } })));
    acc.addResult({ run_id: "t:a", probs: { label: peaked(["A", "B", "C"], "A") } });
    expect(acc.finish().headline).toMatchObject({ value: 1, ci_low: 1, ci_high: 1 });
    acc.addRecord(parse(record("t", { id: "b", group: "g", questions: choice, expected: { label: "A" } })));
    expect(acc.finish().headline).toMatchObject({ value: 0.5, ci_low: 0.5, ci_high: 0.5 });
    acc.addRecord(parse(record("t", { id: "c", group: "g", questions: choice, expected: { label: "A" } })));
    acc.addResult({ run_id: "t:c", probs: { label: peaked(["A", "B", "C"], "B") } });
    expect(acc.finish().headline).toMatchObject({ value: 1 / 3, ci_low: 1 / 3, ci_high: 1 / 3 });
  });
});


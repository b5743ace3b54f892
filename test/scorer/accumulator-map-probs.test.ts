// TrackAccumulator (scorer/track-accumulator.ts) takes a result's probs as JSON.parse gives them or as
// the Map the scorer thread's reader gives (common/results/scored-part-reader.ts): the same records
// and answers score the same either way, answered, missing and invalid alike.
import { describe, expect, it } from "vitest";
import { RecordSchema } from "../../common/suite/schema.js";
import { TrackAccumulator } from "../../scorer/track-accumulator.js";
import { ABC, noul, peaked, record } from "./suite-fixture.js";

const parse = (r: Record<string, unknown>) => RecordSchema.parse(r);
const KEYS = Object.keys(ABC);

describe("TrackAccumulator, probs as a Map", () => {
  it("a choice track: answered, missing (key absent) and invalid distributions score as with objects (known answer)", () => {
    const answers: Array<Record<string, unknown>> = [
      { q: peaked(KEYS, "A") },
      { q: peaked(KEYS, "B") },
      {},
      { q: { A: 0.9, B: 0.9, C: 0 } },
    ];
    const metrics = (asMap: boolean) => {
      const acc = new TrackAccumulator("ch", "nli");
      answers.forEach((_, i) => acc.addRecord(parse(record("ch", { id: `r${i}`, group: `g${i}`, questions: { q: { type: "choice", criteria: ABC } }, expected: { q: "A" } }))));
      answers.forEach((probs, i) => acc.addResult({ run_id: `ch:r${i}`, probs: asMap ? new Map(Object.entries(probs)) : probs }));
      return { metrics: acc.finish(), invalid: acc.invalidDistributions };
    };
    const asMap = metrics(true);
    expect(asMap).toEqual(metrics(false));
    expect(asMap.invalid).toBe(1);
    expect(asMap.metrics.headline.value).toBe(0.25);
    expect(asMap.metrics.missing).toBe(2);
  });

  it("a reranking query from two chunks: the same ranking metrics from Maps as from objects", () => {
    const metrics = (asMap: boolean) => {
      const acc = new TrackAccumulator("rk", "passage_reranking");
      for (const [id, docs] of [["c1", ["a", "b"]], ["c2", ["c"]]] as const) {
        acc.addRecord(parse(record("rk", { id, group: "q", family: "passage_reranking", questions: Object.fromEntries(docs.map((d) => [`doc:${d}`, { type: "noul" as const }])), scoring: { type: "retrieval_ranking", qrels: { a: 1, c: 2 } } })));
      }
      const c1 = { "doc:a": noul(0.2), "doc:b": noul(0.7) };
      const c2 = { "doc:c": noul(0.9) };
      acc.addResult({ run_id: "rk:c1", probs: asMap ? new Map(Object.entries(c1)) : c1 });
      acc.addResult({ run_id: "rk:c2", probs: asMap ? new Map(Object.entries(c2)) : c2 });
      return acc.finish();
    };
    const asMap = metrics(true);
    expect(asMap).toEqual(metrics(false));
    expect(asMap.retrieval!["mrr@10"]).toBe(1);
  });
});

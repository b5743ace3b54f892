// Known answers of the scorer, worked out independently of its code (docs/scoring.md): the group
// bootstrap recomputed in a few lines, macro-F1 over gold labels, the best score of a document in
// two chunks, and nDCG@10 fixtures computed by hand with trec_eval's rules.
import { describe, expect, it } from "vitest";
import { RecordSchema } from "../../common/suite/schema.js";
import { choiceMetrics } from "../../scorer/metrics/choice.js";
import { Xoshiro128 } from "../../scorer/prng.js";
import { TrackAccumulator } from "../../scorer/track-accumulator.js";
import { ABC, noul, peaked, record } from "./suite-fixture.js";

const KEYS = ["A", "B", "C"];

describe("group bootstrap with several records per group", () => {
  // 4 groups of 5 records; correct answers per group: 5, 3, 1, 0.
  const correctPerGroup = [5, 3, 1, 0];
  function scored(): TrackAccumulator {
    const acc = new TrackAccumulator("kb", "sentiment");
    correctPerGroup.forEach((correct, g) => {
      for (let i = 0; i < 5; i++) {
        const id = `g${g}r${i}`;
        acc.addRecord(RecordSchema.parse(record("kb", { id, group: `g${g}`, questions: { label: { type: "choice", criteria: ABC } }, expected: { label: "A" } })));
        acc.addResult({ run_id: `kb:${id}`, probs: { label: peaked(KEYS, i < correct ? "A" : "B") } });
      }
    });
    acc.sealRecords();
    return acc;
  }

  /** docs/scoring.md "Confidence intervals", written out again: seed, xoshiro128** draws of G groups, numpy percentile. */
  function expectedInterval(track: string, groupAccuracy: (sumCorrect: number, sumN: number) => number): [number, number] {
    let h = 0x811c9dc5;
    for (const b of Buffer.from(track, "utf8")) h = Math.imul(h ^ b, 0x01000193) >>> 0;
    const rng = new Xoshiro128((20261020 ^ h) >>> 0);
    const G = correctPerGroup.length;
    const values: number[] = [];
    for (let r = 0; r < 1000; r++) {
      let c = 0;
      let n = 0;
      for (let i = 0; i < G; i++) {
        const g = Math.floor((rng.nextUint32() * G) / 2 ** 32);
        c += correctPerGroup[g]!;
        n += 5;
      }
      values.push(groupAccuracy(c, n));
    }
    values.sort((a, b) => a - b);
    const q = (alpha: number): number => {
      const pos = alpha * (values.length - 1);
      const lo = Math.floor(pos);
      return values[lo]! + (pos - lo) * (values[Math.min(lo + 1, values.length - 1)]! - values[lo]!);
    };
    return [q(0.025), q(0.975)];
  }

  it("the interval comes from resampling whole groups, not records", () => {
    const m = scored().finish();
    expect(m.groups).toBe(4);
    expect(m.headline.value).toBe(9 / 20);
    const [low, high] = expectedInterval("kb", (c, n) => c / n);
    expect(m.headline.ci_low).toBeCloseTo(low, 12);
    expect(m.headline.ci_high).toBeCloseTo(high, 12);
    // Groups of 5 give accuracies in steps of 1/20 and a wide interval; 20 resampled records would not.
    expect(high - low).toBeGreaterThan(0.4);
  });
});

describe("choice macro-F1 over the labels present in gold", () => {
  it("gold [A, A], pred [D, A] is 2/3, not 1/3 (D, absent from gold, is not averaged)", () => {
    const m = choiceMetrics([
      { gold: "A", pred: "D", pGold: 0.1 },
      { gold: "A", pred: "A", pGold: 0.9 },
    ]);
    // label A: tp 1, fp 0, fn 1 -> F1 = 2/(2+1) = 2/3; the only label in gold.
    expect(m.macro_f1).toBeCloseTo(2 / 3, 12);
  });

  it("the same through a track", () => {
    const ABCD = { ...ABC, D: "other" };
    const acc = new TrackAccumulator("mf", "sentiment");
    for (const [id, pred] of [["x", "D"], ["y", "A"]] as const) {
      acc.addRecord(RecordSchema.parse(record("mf", { id, questions: { label: { type: "choice", criteria: ABCD } }, expected: { label: "A" } })));
      acc.addResult({ run_id: `mf:${id}`, probs: { label: peaked(["A", "B", "C", "D"], pred) } });
    }
    acc.sealRecords();
    expect(acc.finish().questions.label).toMatchObject({ macro_f1: expect.closeTo(2 / 3, 12) });
  });
});

/** A track of one reranking query per fixture: chunks of documents with p(true), one shared qrels. */
function rerankNdcg(qrels: Record<string, number>, chunks: Array<Record<string, number>>): number | null {
  const acc = new TrackAccumulator("rk", "passage_reranking");
  chunks.forEach((scores, i) => {
    const id = `q1c${i}`;
    const questions = Object.fromEntries(Object.keys(scores).map((d) => [`doc:${d}`, { type: "noul" as const }]));
    acc.addRecord(RecordSchema.parse(record("rk", { id, family: "passage_reranking", lang: "en", group: "q1", questions, scoring: { type: "retrieval_ranking", qrels, relevance_threshold: 1, fully_judged: true } })));
    acc.addResult({ run_id: `rk:${id}`, probs: Object.fromEntries(Object.entries(scores).map(([d, p]) => [`doc:${d}`, noul(p)])) });
  });
  acc.sealRecords();
  return acc.finish().retrieval!["ndcg@10"];
}

describe("a document in two reranking chunks", () => {
  it("keeps its best score, not the last one", () => {
    // best: a (0.9) before b (0.5): DCG = 2/log2(2) = IDCG, nDCG 1.
    // last: b (0.5) before a (0.1): 2/log2(3) / 2 = 0.6309...
    expect(rerankNdcg({ a: 2, b: 0 }, [{ a: 0.9 }, { b: 0.5, a: 0.1 }])).toBe(1);
  });
});

describe("nDCG@10 against trec_eval 10.0's rules (gain = grade, discount log2(rank+1), ties by docid descending)", () => {
  it("graded relevance with a tie", () => {
    // d1 and d2 tie at 0.9: trec_eval puts the greater docid first -> d2, d1, d3, d4.
    // DCG  = 0/log2(2) + 3/log2(3) + 1/log2(4) + 2/log2(5) = 1.892789 + 0.5 + 0.861353 = 3.254142
    // IDCG = 3/log2(2) + 2/log2(3) + 1/log2(4)             = 3 + 1.261860 + 0.5        = 4.761860
    expect(rerankNdcg({ d1: 3, d2: 0, d3: 1, d4: 2 }, [{ d1: 0.9, d2: 0.9, d3: 0.5, d4: 0.2 }])).toBeCloseTo(0.6833763936083916, 12);
  });

  it("ties compare docids as byte strings, not numbers", () => {
    // "d9" > "d10" in strcmp, so d9 comes first: DCG = 1/log2(3), IDCG = 1.
    expect(rerankNdcg({ d10: 1, d9: 0 }, [{ d10: 0.5, d9: 0.5 }])).toBeCloseTo(0.6309297535714575, 12);
  });

  it("cut at 10; unretrieved relevant documents count in the ideal; negative grades gain nothing", () => {
    // 12 documents all tied: order x12, x11, ..., x01. Relevant: x12 (1) at rank 1, x03 (1) at rank 10,
    // x01 (2) at rank 12 (cut), zz (3) never retrieved, x05 (-1) gains 0.
    // DCG  = 1/log2(2) + 1/log2(11)                         = 1 + 0.289065                       = 1.289065
    // IDCG = 3/log2(2) + 2/log2(3) + 1/log2(4) + 1/log2(5)  = 3 + 1.261860 + 0.5 + 0.430677      = 5.192537
    const scores = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`x${String(i + 1).padStart(2, "0")}`, 0.5]));
    expect(rerankNdcg({ x01: 2, x03: 1, x12: 1, zz: 3, x05: -1 }, [scores])).toBeCloseTo(0.2482534180076395, 12);
  });

  it("a query with no relevant document is not averaged (trec_eval has no such query)", () => {
    expect(rerankNdcg({ a: 0 }, [{ a: 0.9 }])).toBeNull();
  });
});

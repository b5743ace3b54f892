// Pure metric functions against values worked out by hand (the arithmetic is in each case's comment).
import { describe, expect, it } from "vitest";
import { argmaxIndex } from "../../scorer/metrics/argmax.js";
import { choiceMetrics, type ChoiceItem } from "../../scorer/metrics/choice.js";
import { goldLabelsPresent, macroF1 } from "../../scorer/metrics/macro-f1.js";
import { noulMetrics, type NoulItem } from "../../scorer/metrics/noul.js";
import { keepSet, ndcgAt, rankDocuments, reciprocalRankAt } from "../../scorer/metrics/ranking.js";
import { routingMetrics, type RoutingItem } from "../../scorer/metrics/routing.js";

const LN2 = Math.log(2);
const NLL_ZERO = -Math.log(1e-12); // 27.631021115928547

describe("argmaxIndex", () => {
  it.each<{ dist: Record<string, number>; keys: string[]; want: number; why: string }>([
    { dist: { A: 0.2, B: 0.5, C: 0.3 }, keys: ["A", "B", "C"], want: 1, why: "plain max" },
    { dist: { A: 0.4, B: 0.4, C: 0.2 }, keys: ["A", "B", "C"], want: 0, why: "tie A/B -> A, first in criteria" },
    { dist: { A: 0.4, B: 0.4, C: 0.2 }, keys: ["C", "B", "A"], want: 1, why: "criteria order C,B,A: tie B/A -> B (index 1)" },
    { dist: { "0": 0.25, "1": 0.25, "2": 0.25, "3": 0.25 }, keys: ["0", "1", "2", "3"], want: 0, why: "all tied -> first" },
    { dist: {}, keys: [], want: -1, why: "no option at all -> -1 (no prediction)" },
    { dist: { A: 0.5 }, keys: ["B", "C"], want: -1, why: "none of the options in the distribution -> -1" },
    { dist: { undefined: 0.9, A: 0.1 }, keys: ["A"], want: 0, why: "only the criteria's options count, whatever another key is named" },
  ])("$why", ({ dist, keys, want }) => {
    expect(argmaxIndex(dist, keys)).toBe(want);
  });
});

describe("macroF1 (scikit-learn average=macro, labels=gold present, zero_division=0)", () => {
  it.each([
    {
      why: "label C never predicted",
      // A: tp1 fp0 fn1 -> 2/3; B: tp1 fp2 fn0 -> 2/4; C: tp0 fp0 fn1 -> 0; mean (2/3+1/2+0)/3 = 7/18
      gold: ["A", "A", "B", "C"], pred: ["A", "B", "B", "B"], want: 7 / 18,
    },
    {
      why: "missing prediction is a false negative only",
      // A: tp1 -> 1; B: tp1 fn1 fp0 -> 2/3; mean 5/6
      gold: ["A", "B", "B"], pred: ["A", null, "B"], want: 5 / 6,
    },
    {
      why: "predicted label absent from gold is not a label",
      // labels {A}: tp1 fn1 (pred D) fp0 -> 2/3
      gold: ["A", "A"], pred: ["D", "A"], want: 2 / 3,
    },
    {
      why: "all missing",
      // A: tp0 fn1 -> 0; B: tp0 fn1 -> 0
      gold: ["A", "B"], pred: [null, null], want: 0,
    },
  ])("$why", ({ gold, pred, want }) => {
    expect(macroF1(gold, pred, goldLabelsPresent(gold))).toBeCloseTo(want, 12);
  });

  it("over the labels given only (scikit-learn labels=[A, B]): a gold or predicted C counts for no label", () => {
    // A: tp1 -> 1; B: fn1 (pred C) -> 0; the third item (gold C, pred C) is in neither label. (1 + 0) / 2
    expect(macroF1(["A", "B", "C"], ["A", "C", "C"], ["A", "B"])).toBe(0.5);
    // A: tp1 fp1 (gold C predicted A) -> 2/3; B: fn1 -> 0; the gold C missed is no label's fn. (2/3 + 0) / 2
    expect(macroF1(["A", "B", "C"], ["A", "C", "A"], ["A", "B"])).toBeCloseTo(1 / 3, 12);
    expect(macroF1(["A"], ["A"], [])).toBeNull();
  });
});

describe("choiceMetrics", () => {
  it("accuracy counts missing as wrong, NLL is over answered only", () => {
    const items: ChoiceItem[] = [
      { gold: "A", pred: "A", pGold: 0.5 },
      { gold: "B", pred: null, pGold: NaN },
      { gold: "B", pred: "A", pGold: 0 },
      { gold: "C", pred: "C", pGold: 1 },
    ];
    // accuracy 2/4; nll = (ln2 + -ln(1e-12) + 0) / 3
    // A: tp1 fp1 fn0 -> 2/3; B: tp0 fn2 -> 0; C: tp1 -> 1; macro = (2/3+0+1)/3 = 5/9
    expect(choiceMetrics(items)).toEqual({
      kind: "choice", n: 4, accuracy: 0.5, macro_f1: expect.closeTo(5 / 9, 12), nll: expect.closeTo((LN2 + NLL_ZERO) / 3, 12), missing: 1,
    });
  });

  it("ordinal MAE in levels over answered questions", () => {
    const items: ChoiceItem[] = [
      { gold: "0", pred: "2", pGold: 0.1, goldLevel: 0, predLevel: 2 }, // |2-0| = 2
      { gold: "4", pred: "3", pGold: 0.3, goldLevel: 4, predLevel: 3 }, // |3-4| = 1
      { gold: "1", pred: null, pGold: NaN, goldLevel: 1, predLevel: -1 }, // missing: not in MAE
    ];
    const m = choiceMetrics(items, true);
    expect(m.mae).toBe(1.5); // (2+1)/2
    expect(m.accuracy).toBe(0);
    expect(m.missing).toBe(1);
  });

  it("no gold: n 0 and nulls", () => {
    expect(choiceMetrics([])).toEqual({ kind: "choice", n: 0, accuracy: null, macro_f1: null, nll: null, missing: 0 });
  });
});

describe("noulMetrics", () => {
  it.each<{ why: string; items: NoulItem[]; accuracy: number; macro_f1: number; nll: number | null; missing: number }>([
    {
      why: "mixed, with p = 0.5 predicted true and a missing question",
      // preds: T (0.5>=0.5), F, T, missing. accuracy 1/4.
      // true: tp1 fp1 (3rd) fn1 (2nd) -> 2/4; false: tp0 fp1 (2nd) fn2 (3rd, 4th missing) -> 0; macro 0.25
      // nll over answered: (-ln .5 - ln .2 - ln .3)/3
      items: [{ gold: true, pTrue: 0.5 }, { gold: true, pTrue: 0.2 }, { gold: false, pTrue: 0.7 }, { gold: false, pTrue: null }],
      accuracy: 0.25, macro_f1: 0.25, nll: (LN2 - Math.log(0.2) - Math.log(0.3)) / 3, missing: 1,
    },
    {
      why: "only true in gold, all right: label false scores 0 (zero_division=0)",
      // true: tp2 -> 1; false: tp0 fp0 fn0 -> 0; macro 0.5. nll = (-ln .9 - ln .6)/2
      items: [{ gold: true, pTrue: 0.9 }, { gold: true, pTrue: 0.6 }],
      accuracy: 1, macro_f1: 0.5, nll: (-Math.log(0.9) - Math.log(0.6)) / 2, missing: 0,
    },
    {
      why: "all missing",
      // true: fn1 -> 0; false: fn1 -> 0
      items: [{ gold: true, pTrue: null }, { gold: false, pTrue: null }],
      accuracy: 0, macro_f1: 0, nll: null, missing: 2,
    },
    {
      why: "both labels right: each F1 is 1, so the mean is 1 (both labels enter it)",
      // true: tp1 -> 1; false: tp1 -> 1; macro 1. nll = (-ln .9 - ln .8)/2
      items: [{ gold: true, pTrue: 0.9 }, { gold: false, pTrue: 0.2 }],
      accuracy: 1, macro_f1: 1, nll: (-Math.log(0.9) - Math.log(0.8)) / 2, missing: 0,
    },
  ])("$why", ({ items, accuracy, macro_f1, nll, missing }) => {
    const m = noulMetrics(items);
    expect(m.accuracy).toBeCloseTo(accuracy, 12);
    expect(m.macro_f1).toBeCloseTo(macro_f1, 12);
    if (nll === null) expect(m.nll).toBeNull();
    else expect(m.nll).toBeCloseTo(nll, 12);
    expect(m.missing).toBe(missing);
  });
});

describe("noulMetrics of no item", () => {
  it("n 0: accuracy, macro_f1 and nll are null, not NaN", () => {
    expect(noulMetrics([])).toEqual({ kind: "noul", n: 0, accuracy: null, macro_f1: null, nll: null, missing: 0 });
  });
});

describe("rankDocuments (trec_eval order)", () => {
  it.each([
    { why: "score descending", docs: [["a", 0.1], ["b", 0.9], ["c", 0.5]], want: ["b", "c", "a"] },
    { why: "ties: greater byte string first ('b' 0x62 > 'a' 0x61 > 'B' 0x42)", docs: [["a", 0.5], ["b", 0.5], ["c", 0.9], ["B", 0.5]], want: ["c", "b", "a", "B"] },
    { why: "numeric ids compare as bytes: '9' > '10' > '1'", docs: [["10", 0.3], ["9", 0.3], ["1", 0.3]], want: ["9", "10", "1"] },
    { why: "UTF-8 bytes, not UTF-16 units: U+FF5E (ef bd 9e) < U+1F600 (f0 9f 98 80)", docs: [["\u{1F600}", 0.2], ["\uff5e", 0.2]], want: ["\u{1F600}", "\uff5e"] },
  ])("$why", ({ docs, want }) => {
    expect(rankDocuments(docs.map(([doc, score]) => ({ doc: doc as string, score: score as number }))).map((d) => d.doc)).toEqual(want);
  });
});

describe("ndcgAt / reciprocalRankAt", () => {
  const qrels = new Map<string, number>([["d1", 3], ["d2", 2], ["d3", 1], ["d9", 3], ["dn", -1]]);
  it.each([
    {
      why: "judged doc outside the pool lowers the ideal; unjudged and negative grades gain 0",
      ranked: ["d2", "d1", "dx", "dn", "d3"],
      // DCG = 2/log2(2) + 3/log2(3) + 0 + 0 + 1/log2(6)
      // IDCG over all judged grades [3,3,2,1] = 3/log2(2) + 3/log2(3) + 2/log2(4) + 1/log2(5)
      want: (2 + 3 / Math.log2(3) + 1 / Math.log2(6)) / (3 + 3 / Math.log2(3) + 2 / 2 + 1 / Math.log2(5)),
    },
    { why: "nothing ranked", ranked: [], want: 0 },
    {
      why: "only the first 10 count",
      // 10 unjudged docs then d1: DCG 0
      ranked: ["u0", "u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8", "u9", "d1"], want: 0,
    },
  ])("nDCG@10: $why", ({ ranked, want }) => {
    expect(ndcgAt(ranked, qrels)).toBeCloseTo(want, 12);
  });

  it("nDCG@10 is 0 when no judged document has a positive grade", () => {
    expect(ndcgAt(["a"], new Map([["a", 0]]))).toBe(0);
  });

  it.each([
    { why: "first doc with grade >= 2 at rank 3", ranked: ["d3", "dx", "d2"], threshold: 2, want: 1 / 3 },
    { why: "threshold 1 makes d3 relevant at rank 1", ranked: ["d3", "dx", "d2"], threshold: 1, want: 1 },
    { why: "relevant only at rank 11", ranked: ["u0", "u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8", "u9", "d1"], threshold: 1, want: 0 },
  ])("MRR@10: $why", ({ ranked, threshold, want }) => {
    expect(reciprocalRankAt(ranked, qrels, threshold)).toBe(want);
  });
});

describe("keepSet", () => {
  const qrels = new Map<string, number>([["a", 2], ["b", 0], ["c", 2], ["z", 3]]);
  it.each([
    // relevant in pool {a, c} (z is outside the pool); kept {a, b}: hit a. P 1/2, R 1/2, F1 1/2
    { why: "half right", kept: ["a", "b"], want: { precision: 0.5, recall: 0.5, f1: 0.5 } },
    // nothing kept: P 0 (empty denominator), R 0/2, F1 0
    { why: "nothing kept", kept: [], want: { precision: 0, recall: 0, f1: 0 } },
    // kept {a}: P 1, R 1/2, F1 2*1*.5/1.5 = 2/3
    { why: "precise, half recall", kept: ["a"], want: { precision: 1, recall: 0.5, f1: 2 / 3 } },
  ])("$why", ({ kept, want }) => {
    const got = keepSet(["a", "b", "c", "d"], new Set(kept), qrels, 2);
    expect(got.precision).toBeCloseTo(want.precision, 12);
    expect(got.recall).toBeCloseTo(want.recall, 12);
    expect(got.f1).toBeCloseTo(want.f1, 12);
  });
});

describe("keepSet of a pool without a relevant document", () => {
  it("recall and F1 are 0 (empty denominators), not NaN", () => {
    // threshold 3: nothing in the pool {a, b} is relevant; kept {a}: P 0/1, R 0 (0 relevant), F1 0
    expect(keepSet(["a", "b"], new Set(["a"]), new Map([["a", 2], ["b", 0]]), 3)).toEqual({ precision: 0, recall: 0, f1: 0 });
  });
});

describe("routingMetrics", () => {
  it("accepted accuracy counts missing as wrong; quality and cost over answered; oracle over all", () => {
    const items: RoutingItem[] = [
      { pred: "m1", accepted: ["m1"], outcomes: { m1: { quality: 0.8, cost_usd: 0.1 }, m2: { quality: 0.9, cost_usd: 0.5 } } },
      { pred: "m2", accepted: ["m1"], outcomes: { m1: { quality: 0.3, cost_usd: 0.1 }, m2: { quality: 0.2, cost_usd: 0.4 } } },
      { pred: null, accepted: ["m1"], outcomes: { m1: { quality: 1, cost_usd: 0.2 } } },
    ];
    // accepted 1/3; quality (0.8+0.2)/2; cost (0.1+0.4)/2; oracle (0.9+0.3+1)/3
    const m = routingMetrics(items);
    expect(m.accepted_accuracy).toBeCloseTo(1 / 3, 12);
    expect(m.mean_quality).toBeCloseTo(0.5, 12);
    expect(m.mean_cost_usd).toBeCloseTo(0.25, 12);
    expect(m.oracle_quality).toBeCloseTo(2.2 / 3, 12);
    expect(m.missing).toBe(1);
    expect(m.n).toBe(3);
  });

  it("a record without any quality stays out of the oracle; a predicted route without an outcome out of quality and cost", () => {
    const items: RoutingItem[] = [
      { pred: "m1", accepted: new Set(["m1"]), outcomes: { m1: { quality: 0.6, cost_usd: 0.2 }, m2: { quality: 0.4 } } },
      // m3 has no outcome recorded; no route of this record has a quality (m1 only a cost).
      { pred: "m3", accepted: new Set(["m3"]), outcomes: { m1: { cost_usd: 0.3 } } },
    ];
    // accepted 2/2; quality 0.6/1 and cost 0.2/1 (m3 has neither); oracle 0.6/1 (the second has no quality)
    expect(routingMetrics(items)).toEqual({ accepted_accuracy: 1, mean_quality: 0.6, mean_cost_usd: 0.2, oracle_quality: 0.6, n: 2, missing: 0 });
  });

  it("no record, or every route question missing: null means, not NaN", () => {
    expect(routingMetrics([])).toEqual({ accepted_accuracy: null, mean_quality: null, mean_cost_usd: null, oracle_quality: null, n: 0, missing: 0 });
    // Missing: accepted 0/1; no quality or cost over answered records; oracle of the one with a quality
    expect(routingMetrics([{ pred: null, accepted: ["m1"], outcomes: { m1: { quality: 0.5 } } }])).toEqual({ accepted_accuracy: 0, mean_quality: null, mean_cost_usd: null, oracle_quality: 0.5, n: 1, missing: 1 });
  });
});

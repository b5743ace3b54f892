// Turning an engine's probabilities into the suite's distribution (agent/methods/engine-distribution.ts):
// float error within ENGINE_TOLERANCE is renormalised away, anything beyond is a problem string.
import { describe, expect, it } from "vitest";
import { choiceDistribution, ENGINE_TOLERANCE, noulDistribution } from "../../agent/methods/engine-distribution.js";

describe("engine distributions", () => {
  it("noul: p(yes) in [0,1] within the tolerance, clamped; otherwise a problem", () => {
    expect(ENGINE_TOLERANCE).toBe(1e-3);
    expect(noulDistribution(0.25, "p")).toEqual({ true: 0.25, false: 0.75 });
    expect(noulDistribution(1.0005, "p")).toEqual({ true: 1, false: 0 });
    expect(noulDistribution(-0.0005, "p")).toEqual({ true: 0, false: 1 });
    expect(noulDistribution(1 + ENGINE_TOLERANCE, "p")).toEqual({ true: 1, false: 0 });
    expect(noulDistribution(-ENGINE_TOLERANCE, "p")).toEqual({ true: 0, false: 1 });
    expect(noulDistribution(1.002, "p(yes)")).toBe("p(yes) in [0,1] (got 1.002)");
    expect(noulDistribution(-0.002, "p")).toBe("p in [0,1] (got -0.002)");
    expect(noulDistribution(undefined, "p")).toBe("p in [0,1] (got undefined)");
    expect(noulDistribution(NaN, "p")).toBe("p in [0,1] (got NaN)");
    expect(noulDistribution(Infinity, "p")).toBe("p in [0,1] (got Infinity)");
  });

  it("choice: exactly the keys, in their order, renormalised within the tolerance", () => {
    const probs: Record<string, number> = { B: 0.3, A: 0.7004 };
    const d = choiceDistribution(["A", "B"], (k) => probs[k], "option") as Record<string, number>;
    expect(Object.keys(d)).toEqual(["A", "B"]);
    expect(d.A).toBeCloseTo(0.7004 / 1.0004, 15);
    expect(d.B).toBeCloseTo(0.3 / 1.0004, 15);
    expect(choiceDistribution(["A", "B"], (k) => ({ A: 0.5, B: 0.5 })[k], "option")).toEqual({ A: 0.5, B: 0.5 });
    // A zero is a probability.
    expect(choiceDistribution(["A", "B"], (k) => ({ A: 1, B: 0 })[k], "option")).toEqual({ A: 1, B: 0 });
    expect(choiceDistribution([], () => 1, "option")).toBe("answer probabilities sum to 0, not 1");
  });

  it("choice: a missing, negative or non-finite probability, or a sum off by more than the tolerance, is a problem", () => {
    expect(choiceDistribution(["A", "B"], (k) => ({ A: 1 })[k as "A"], "label")).toBe('answer has no probability for label "B"');
    expect(choiceDistribution(["A", "B"], (k) => ({ A: 1.1, B: -0.1 })[k], "option")).toBe('answer has no probability for option "B"');
    expect(choiceDistribution(["A", "B"], (k) => ({ A: NaN, B: 1 })[k], "option")).toBe('answer has no probability for option "A"');
    expect(choiceDistribution(["A", "B"], (k) => ({ A: 0.6, B: 0.6 })[k], "option")).toBe("answer probabilities sum to 1.2, not 1");
    expect(choiceDistribution(["A", "B"], (k) => ({ A: 0.5, B: 0.498 })[k], "option")).toBe("answer probabilities sum to 0.998, not 1");
    expect(typeof choiceDistribution(["A", "B"], (k) => ({ A: 0.5, B: 0.5 + ENGINE_TOLERANCE })[k], "option")).toBe("object");
  });
});

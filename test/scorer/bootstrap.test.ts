// The group bootstrap's parts (scorer/bootstrap.ts) held to known answers: the percentile rule is
// numpy's (linear between order statistics), a pillar's resample is the mean of its defined tracks,
// the general width path draws the same groups as the two-number fast path, and each track's seed
// is fixed (a changed seed changes every published interval).
import { describe, expect, it } from "vitest";
import { BOOTSTRAP_SEED, bootstrapResamples, groupCount, meanOfResamples, percentileInterval, trackSeed } from "../../scorer/bootstrap.js";
import { hashString } from "../../scorer/prng.js";

const f64 = (...v: number[]) => Float64Array.from(v);

describe("bootstrap parts", () => {
  it("percentileInterval matches numpy.percentile (linear) and leaves NaNs out", () => {
    // numpy.percentile([1, 2, 3, 4, 10], [2.5, 97.5]) == [1.1, 9.4]
    const ci = percentileInterval(f64(10, NaN, 1, 4, 2, 3))!;
    expect(ci.ci_low).toBeCloseTo(1.1, 12);
    expect(ci.ci_high).toBeCloseTo(9.4, 12);
    // numpy.percentile([1, 2, 3, 4, 5], [25, 75]) == [2, 4]
    expect(percentileInterval(f64(5, 4, 3, 2, 1), 0.5)).toEqual({ ci_low: 2, ci_high: 4 });
    expect(percentileInterval(f64(7), 0.95)).toEqual({ ci_low: 7, ci_high: 7 });
    expect(percentileInterval(f64(NaN, NaN))).toBeNull();
  });

  it("meanOfResamples averages the tracks defined in each resample", () => {
    expect([...meanOfResamples([f64(0.2, NaN, NaN), f64(0.4, 0.6, NaN)])]).toEqual([0.30000000000000004, 0.6, NaN]);
    expect(meanOfResamples([]).length).toBe(0);
  });

  it("no groups: every resample is undefined, and the headline is never asked", () => {
    let calls = 0;
    const headline = () => (calls++, 0.5);
    expect(groupCount({ width: 0, sums: f64(), headline })).toBe(0);
    expect([...bootstrapResamples({ width: 0, sums: f64(), headline }, 1, 4)]).toEqual([NaN, NaN, NaN, NaN]);
    expect([...bootstrapResamples({ width: 2, sums: f64(), headline }, 1, 4)]).toEqual([NaN, NaN, NaN, NaN]);
    expect(calls).toBe(0);
  });

  it("one headline call per resample, and a wider vector draws the same groups as two numbers", () => {
    const groups = [
      [1, 5],
      [4, 5],
      [0, 5],
      [5, 5],
      [2, 5],
    ];
    let calls = 0;
    const two = bootstrapResamples({ width: 2, sums: f64(...groups.flat()), headline: (t) => (calls++, t[0]! / t[1]!) }, 99, 200);
    expect(calls).toBe(200);
    // The same sums with a third number, 1 per group: each resample draws 5 groups.
    const three = bootstrapResamples({ width: 3, sums: f64(...groups.flatMap(([c, n]) => [c!, n!, 1])), headline: (t) => (t[2] === 5 ? t[0]! / t[1]! : NaN) }, 99, 200);
    expect([...three]).toEqual([...two]);
    expect(new Set(two).size).toBeGreaterThan(5);
  });

  it("each track's seed is the fixed base seed mixed with the track name", () => {
    expect(trackSeed("ArcTrack")).toBe((BOOTSTRAP_SEED ^ hashString("ArcTrack")) >>> 0);
    expect(trackSeed("ArcTrack")).not.toBe(trackSeed("BoolQ"));
    expect(Number.isInteger(trackSeed("BoolQ")) && trackSeed("BoolQ") >= 0).toBe(true);
  });
});

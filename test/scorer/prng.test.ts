// The bootstrap's PRNG: fill() must draw the same stream as nextUint32(), and the stream must not depend on the platform.
import { describe, expect, it } from "vitest";
import { Xoshiro128 } from "../../scorer/prng.js";
import { bootstrapResamples, percentileInterval } from "../../scorer/bootstrap.js";

describe("Xoshiro128", () => {
  it("fill() continues the nextUint32() stream", () => {
    const a = new Xoshiro128(42);
    const b = new Xoshiro128(42);
    const one = Array.from({ length: 10 }, () => a.nextUint32());
    const buf = new Uint32Array(7);
    b.fill(buf);
    const rest = new Uint32Array(3);
    b.fill(rest);
    expect([...buf, ...rest]).toEqual(one);
    expect(a.nextUint32()).toBe(b.nextUint32());
  });

  it("nextInt stays in range and covers it", () => {
    const r = new Xoshiro128(1);
    const seen = new Set<number>();
    for (let i = 0; i < 1000; i++) {
      const v = r.nextInt(7);
      expect(v).toBeGreaterThanOrEqual(0);
      expect(v).toBeLessThan(7);
      seen.add(v);
    }
    expect(seen.size).toBe(7);
  });
});

describe("bootstrap", () => {
  it("identical groups give a degenerate interval; the same seed gives the same resamples", () => {
    // 4 groups of [correct 1, n 2]: every resample has accuracy 1/2
    const g = { width: 2, sums: Float64Array.from([1, 2, 1, 2, 1, 2, 1, 2]), headline: (t: Float64Array) => t[0]! / t[1]! };
    expect(percentileInterval(bootstrapResamples(g, 5))).toEqual({ ci_low: 0.5, ci_high: 0.5 });
    const h = { width: 2, sums: Float64Array.from([1, 1, 0, 1, 1, 1, 0, 1, 1, 1]), headline: (t: Float64Array) => t[0]! / t[1]! };
    expect(bootstrapResamples(h, 9)).toEqual(bootstrapResamples(h, 9));
    const ci = percentileInterval(bootstrapResamples(h, 9))!;
    expect(ci.ci_low).toBeLessThan(0.6);
    expect(ci.ci_high).toBeGreaterThan(0.6);
  });

  it("percentile interval interpolates like numpy (linear)", () => {
    // 0..100: q=0.025 at position 2.5 -> 2.5; q=0.975 at 97.5
    expect(percentileInterval(Float64Array.from({ length: 101 }, (_, i) => i))).toEqual({ ci_low: 2.5, ci_high: 97.5 });
    expect(percentileInterval(Float64Array.from([NaN, NaN]))).toBeNull();
  });
});

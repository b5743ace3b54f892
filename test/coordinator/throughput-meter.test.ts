import { describe, expect, it } from "vitest";
import { ThroughputMeter } from "../../coordinator/throughput-meter.js";

describe("ThroughputMeter", () => {
  it("averages over the time since the first record while shorter than the window", () => {
    const m = new ThroughputMeter(30);
    expect(m.rate(0)).toBe(0);
    for (let t = 0; t < 10_000; t += 100) m.add(1, 1_000_000 + t);
    expect(m.rate(1_010_000)).toBeCloseTo(10, 5);
  });

  it("forgets what is older than the window", () => {
    const m = new ThroughputMeter(10);
    m.add(500, 0);
    for (let s = 20; s < 30; s++) m.add(3, s * 1000);
    expect(m.rate(29_999)).toBeCloseTo(3, 5);
    expect(m.rate(100_000)).toBe(0);
  });
});

// The spread bench/coordinator-ab.ts reports per build: min, median (the middle value, or the mean
// of the two middle values), max, whatever order the runs came in.
import { describe, expect, it } from "vitest";
import { spread } from "../../bench/coordinator-ab.js";

describe("coordinator-ab spread", () => {
  it("an odd number of runs: the middle one", () => {
    expect(spread([3.1, 2.2, 2.9])).toEqual({ min: 2.2, median: 2.9, max: 3.1 });
  });

  it("an even number: the mean of the two middle ones, in numeric (not string) order", () => {
    expect(spread([10, 2.5, 9, 3])).toEqual({ min: 2.5, median: 6, max: 10 });
  });

  it("one run: all three the same", () => {
    expect(spread([0.45])).toEqual({ min: 0.45, median: 0.45, max: 0.45 });
  });
});

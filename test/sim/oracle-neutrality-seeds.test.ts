// The oracle is method-neutral with --seeds too: each seed lists the options under another label
// permutation, and the oracle's answer does not depend on labels or order, so averaging over seeds
// gives every method the same distribution (oracle-neutrality.test.ts has the case without seeds).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SimEngine } from "../../sim/engine/server.js";
import { data, golds, neutralEngine, Q, restrict, score, worstDifference } from "./neutral-records.js";

let engine: SimEngine;
beforeAll(async () => {
  engine = await neutralEngine();
});
afterAll(async () => {
  await engine.close();
});

describe(`oracle at accuracy ${Q}, --seeds 0,1,2: the same answers under every method`, () => {
  it("systemone and decisions on 1,200 questions, label-read over completions and over chat on 200", async () => {
    const seeds = [0, 1, 2];
    const base = await score(engine, "systemone", seeds, data);
    expect(Math.abs(base.accuracy - Q)).toBeLessThan(0.03);
    const decisions = await score(engine, "decisions", seeds, data);
    expect(Math.abs(decisions.accuracy - base.accuracy)).toBeLessThan(0.03);
    expect(worstDifference(base, decisions)).toBeLessThan(1e-6);
    const some = data.slice(0, 50);
    for (const name of ["label-read (completions)", "label-read (chat)"]) {
      const s = await score(engine, name, seeds, some);
      const baseSome = restrict(base, s, golds);
      expect(Math.abs(s.accuracy - baseSome.accuracy), name).toBeLessThan(0.03);
      expect(Math.abs(s.goldMass - baseSome.goldMass), name).toBeLessThan(0.03);
      expect(worstDifference(baseSome, s), name).toBeLessThan(1e-6);
    }
  }, 120_000);
});

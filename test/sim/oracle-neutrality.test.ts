// The oracle is method-neutral: at accuracy q it gives every engine method the same answer to
// every question (one distribution over the options, a property of the question), so
// /v1/systemone, /v1/decisions and label-read over /v1/completions and /v1/chat/completions score
// the same, with and without --seeds. Before, label-read saw a sharpened oracle (its label tokens
// followed the top option at a fixed margin): the same argmax, other probabilities, so probability
// metrics (a score's expectation, calibration) compared the simulator, not the methods.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SimEngine } from "../../sim/engine/server.js";
import { data, neutralEngine, Q, score, worstDifference } from "./neutral-records.js";

let engine: SimEngine;
beforeAll(async () => {
  engine = await neutralEngine();
});
afterAll(async () => {
  await engine.close();
});

describe(`oracle at accuracy ${Q}, without seeds: the same answers under every method`, () => {
  it("systemone, decisions, label-read over completions and over chat, on 1,200 questions", async () => {
    const base = await score(engine, "systemone", [], data);
    expect(Math.abs(base.accuracy - Q)).toBeLessThan(0.03);
    for (const name of ["decisions", "label-read (completions)", "label-read (chat)"]) {
      const s = await score(engine, name, [], data);
      expect(Math.abs(s.accuracy - base.accuracy), name).toBeLessThan(0.03);
      expect(Math.abs(s.goldMass - base.goldMass), name).toBeLessThan(0.03);
      // Not only on average: each question's distribution is the same one.
      expect(worstDifference(base, s), name).toBeLessThan(1e-6);
    }
  }, 120_000);
});

// The scheduler's edges (coordinator/scheduler.ts) with fake links and a fake clock: the order in
// which agents are served, what stop() and draining end, the lease clock folding paces.
import { describe, expect, it, vi } from "vitest";
import { FakeLink, info, valid, setup } from "./helpers/scheduler-setup.js";
import { TOKENS, warm } from "./helpers/scheduler-warm.js";

describe("Scheduler edges", () => {
  it("serves agents in turn, starting one further each round", () => {
    const { s, later } = setup(0, 1, 1, { laterGroups: 4 });
    const a = new FakeLink();
    const b = new FakeLink();
    s.attach("a", info("a"), a, true);
    s.attach("b", info("b"), b, true);
    s.grantCredit("a", 2);
    s.grantCredit("b", 2);
    s.addUnits(later);
    expect(a.units.map((u) => u.unit.unitId)).toEqual(["u/0", "u/3"]);
    expect(b.units.map((u) => u.unit.unitId)).toEqual(["u/1", "u/2"]);
  });

  it("after stop() nothing more is handed out", () => {
    const { s } = setup(3);
    const a = new FakeLink();
    s.attach("a", info("a"), a, true);
    s.stop();
    s.grantCredit("a", 2);
    s.pump();
    expect(a.units).toHaveLength(0);
    s.stop();
  });

  it("a held-back agent's answers hand it nothing once draining", () => {
    const t = setup(4, 32, 32, { groupSize: 1 });
    const { s } = t;
    const { links, next } = warm(t, [2, 8]);
    s.grantCredit("a0", 1);
    expect(s.agent("a0")!.heldBack).toBe(true);
    s.stopDispatch();
    const u = links[0]!.units[0]!;
    for (const r of u.records.slice(next[0], next[0]! + 20)) s.result("a0", { ...valid(u.unit.unitId, r), completionTokens: TOKENS });
    expect(links[0]!.units).toHaveLength(1);
  });

  it("the lease clock folds the agents' paces", () => {
    vi.useFakeTimers();
    try {
      const { s, tick } = setup(1, 32, 32, { groupSize: 1, leaseMs: 2_000 });
      const a = new FakeLink();
      s.attach("a", info("a"), a, true);
      s.grantCredit("a", 1);
      s.startLeaseClock();
      const u = a.units[0]!;
      for (let k = 0; k < 4; k++) {
        tick(500);
        s.result("a", { ...valid(u.unit.unitId, u.records[k]!), completionTokens: TOKENS });
        vi.advanceTimersByTime(500);
      }
      expect(s.agent("a")!.pace.tokensPerS).toBeCloseTo(500, 6);
      s.stop();
    } finally {
      vi.useRealTimers();
    }
  });

  it("duplicates count towards the engine's pace (it did the work)", () => {
    const t = setup(2, 32, 32, { groupSize: 1 });
    const { s, tick } = t;
    const { links, next } = warm(t, [2, 8]);
    const u = links[0]!.units[0]!;
    tick(500);
    // Two new answers and two repeated ones: 1,000 tokens in 0.5 s, folded in at weight 1 - e^-0.1.
    for (const r of u.records.slice(next[0], next[0]! + 2)) s.result("a0", { ...valid(u.unit.unitId, r), completionTokens: TOKENS });
    for (const r of u.records.slice(0, 2)) expect(s.result("a0", { ...valid(u.unit.unitId, r), completionTokens: TOKENS }).kind).toBe("duplicate");
    s.tickPaces();
    expect(s.agent("a0")!.pace.tokensPerS).toBeCloseTo(1000 + (1 - Math.exp(-0.1)) * 1000, 6);
  });
});

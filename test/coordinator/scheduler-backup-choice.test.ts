// Which unit an agent that ran dry backs up (coordinator/scheduler.ts backupFor), with fake links and
// a fake clock: the time it would take counts only the records nobody answered yet and the work it
// holds itself (before the tail too), the holder's time is the soonest of the unit's holders, and of
// two units with as much to gain the one leased first is copied.
import { describe, expect, it } from "vitest";
import { setup } from "./helpers/scheduler-setup.js";
import { TOKENS, answer, warm } from "./helpers/scheduler-warm.js";
import { FakeLink, info, valid } from "./helpers/scheduler-setup.js";

describe("Scheduler backup choice", () => {
  it("counts only the unit's records still pending in the backup's time", () => {
    // a1 (1,000 tokens/s) has 6 records of t/1 left: 1.5 s. a0 (4,000) would take 0.375 s for them,
    // under 80% of 1.5 s; for all 32 of the unit it would take 2 s.
    const t = setup(2, 32, 32, { groupSize: 1 });
    const { s } = t;
    const { links, next } = warm(t, [8, 2]);
    answer(s, "a0", links[0]!.units[0]!, next[0]);
    const u = links[1]!.units[0]!;
    for (const r of u.records.slice(next[1], next[1]! + 20)) s.result("a1", { ...valid(u.unit.unitId, r), completionTokens: TOKENS });
    s.grantCredit("a0", 1);
    expect(links[0]!.units[1]).toMatchObject({ backup: true, unit: { unitId: "t/1" } });
    expect(links[0]!.units[1]!.records).toHaveLength(6);
  });

  it("of two units with as much to gain, copies the one leased first", () => {
    // a0 and a1 (1,000 tokens/s each) have 26 records left each; a2 (4,000) ran dry.
    const t = setup(3, 32, 32, { groupSize: 1 });
    const { s } = t;
    const { links, next } = warm(t, [2, 2, 8]);
    expect(links.map((l) => l.units[0]!.unit.unitId)).toEqual(["t/0", "t/1", "t/2"]);
    answer(s, "a2", links[2]!.units[0]!, next[2]);
    s.grantCredit("a2", 1);
    expect(links[2]!.units[1]).toMatchObject({ backup: true, unit: { unitId: "t/0" } });
  });

  it("with three holders allowed, the holder's time is the soonest holder's", () => {
    // a0 (1,000 tokens/s) holds t/0 (26 left, 6.5 s); a1 (4,000) ran dry first and copied it
    // (1.625 s). a2 (2,000) would take 3.25 s: sooner than a0, not sooner than a1: no third copy.
    const t = setup(3, 32, 32, { groupSize: 1, maxHolders: 3 });
    const { s } = t;
    const { links, next } = warm(t, [2, 8, 4]);
    answer(s, "a1", links[1]!.units[0]!, next[1]);
    s.grantCredit("a1", 1);
    expect(links[1]!.units[1]).toMatchObject({ backup: true, unit: { unitId: "t/0" } });
    answer(s, "a2", links[2]!.units[0]!, next[2]);
    s.grantCredit("a2", 1);
    expect(links[2]!.units).toHaveLength(1);
    // Once a1's copy is gone, a0's 6.5 s is the holder's time: a2 copies t/0.
    s.detach("a1");
    expect(links[2]!.units[1]).toMatchObject({ backup: true, unit: { unitId: "t/0" } });
  });

  it("before the tail (more units to come) the work an agent holds counts in a backup's time too", () => {
    // a0 (1,000 tokens/s) holds t/0 (26 left, 6.5 s). a1 (4,000) holds 72 records (4.5 s); t/0 would
    // take it 1.625 s more: 6.125 s, not under 80% of 6.5 s.
    const t = setup(4, 32, 32, { groupSize: 1 });
    const { s } = t;
    s.expectMoreUnits();
    const { links } = warm(t, [2, 8], [1, 3]);
    expect(links[1]!.units.map((u) => u.unit.unitId)).toEqual(["t/1", "t/2", "t/3"]);
    s.grantCredit("a1", 1);
    expect(links[1]!.units).toHaveLength(3);
    expect(s.counters.backupUnits).toBe(0);
  });

  it("a backup an agent's own answers make worth it waits for the next pump (lease clock), not its next result", () => {
    // Results come by the thousand a second: only an agent held back is looked at again on each.
    // a1 (4,000 tokens/s) holds t/1 (4 left) and t/2 (32): 2.25 s. a0 (1,000) holds 4 records of t/0
    // (1 s, under the horizon) and t/1 would take it 1 s more: 2 s, not under 80% of 2.25 s.
    const t = setup(3, 32, 32, { groupSize: 1, leaseMs: 60_000 });
    const { s } = t;
    const { links, next } = warm(t, [2, 8], [1, 2]);
    const [u0, u1] = [links[0]!.units[0]!, links[1]!.units[0]!];
    for (const r of u1.records.slice(next[1], next[1]! + 4)) s.result("a1", { ...valid(u1.unit.unitId, r), completionTokens: TOKENS });
    for (const r of u0.records.slice(next[0], next[0]! + 22)) s.result("a0", { ...valid(u0.unit.unitId, r), completionTokens: TOKENS });
    s.grantCredit("a0", 1);
    expect(links[0]!.units).toHaveLength(1);
    expect(s.agent("a0")!.heldBack).toBe(false);
    // One more answer: 0.75 s + 1 s is under 1.8 s, but nothing is handed out until a pump.
    s.result("a0", { ...valid(u0.unit.unitId, u0.records[next[0]! + 22]!), completionTokens: TOKENS });
    expect(links[0]!.units).toHaveLength(1);
    expect(s.expireLeases()).toBe(0);
    expect(links[0]!.units).toHaveLength(1);
    s.tickPaces();
    expect(links[0]!.units[1]).toMatchObject({ backup: true, unit: { unitId: "t/1" } });
    expect(links[0]!.units[1]!.records).toHaveLength(4);
  });

  it("a holder of unknown pace turns the choice to the oldest unit in flight, not to that holder's unit", () => {
    // a0 (1,000 tokens/s) took t/0 first; c took t/2 later and never answered (no pace). a1 ran dry.
    const t = setup(3, 32, 32, { groupSize: 1 });
    const { s } = t;
    const { links, next } = warm(t, [2, 8]);
    const c = new FakeLink();
    s.attach("c", info("c"), c, true);
    s.grantCredit("c", 1);
    expect(c.units.map((u) => u.unit.unitId)).toEqual(["t/2"]);
    answer(s, "a1", links[1]!.units[0]!, next[1]);
    s.grantCredit("a1", 1);
    expect(links[1]!.units[1]).toMatchObject({ backup: true, unit: { unitId: "t/0" } });
  });

  it("with three holders allowed, the primary's time counts when it is the sooner of two", () => {
    // a1 (4,000 tokens/s) holds t/1 (4 left) and t/2 (32): 2.25 s; a0 (1,000) ran dry and copied
    // t/1 (1 s). Then a1 answered t/2: it needs 0.25 s for t/1, a0 1 s. a2 (2,000) would take 0.5 s:
    // sooner than a0, not sooner than a1: no third copy.
    const t = setup(4, 32, 32, { groupSize: 1, maxHolders: 3 });
    const { s } = t;
    const { links, next } = warm(t, [2, 8, 4], [1, 2, 1]);
    expect(links.map((l) => l.units.map((u) => u.unit.unitId))).toEqual([["t/0"], ["t/1", "t/2"], ["t/3"]]);
    const u1 = links[1]!.units[0]!;
    const u2 = links[1]!.units[1]!;
    for (const r of u1.records.slice(next[1], next[1]! + 4)) s.result("a1", { ...valid(u1.unit.unitId, r), completionTokens: TOKENS });
    answer(s, "a0", links[0]!.units[0]!, next[0]);
    s.grantCredit("a0", 1);
    expect(links[0]!.units[1]).toMatchObject({ backup: true, unit: { unitId: "t/1" } });
    answer(s, "a1", u2);
    answer(s, "a2", links[2]!.units[0]!, next[2]);
    s.grantCredit("a2", 1);
    expect(links[2]!.units).toHaveLength(1);
  });
});

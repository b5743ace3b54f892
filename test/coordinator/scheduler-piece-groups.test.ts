// Near the end the scheduler cuts units into pieces, but only between groups: a group is never split
// (its records share one agent's prefix cache, docs/design.md), so a unit of one group goes whole
// and a piece is whole groups. Fake links and a fake clock (helpers/scheduler-setup.ts).
import { describe, expect, it } from "vitest";
import { FakeLink, info, setup, valid } from "./helpers/scheduler-setup.js";
import { warm } from "./helpers/scheduler-warm.js";

describe("Scheduler pieces and groups", () => {
  it("a unit of one group goes whole near the end, where a unit of single-record groups is cut", () => {
    // The records left and paces of the first piece test in scheduler-tail.test.ts,
    // where single-record groups give a piece of 2 records.
    const one = setup(4, 32, 32);
    const { links } = warm(one, [2, 8]);
    one.s.grantCredit("a1", 1);
    const u = links[1]!.units[1]!;
    expect(u.unit.unitId).toBe("t/2");
    expect(u.records).toHaveLength(32);
    expect(u.unit.groupIds).toEqual(["g2"]);
    expect(one.s.counters.piecesCut).toBe(0);
  });

  it("a piece is whole groups, and each group's records go out together", () => {
    const t = setup(4, 32, 32, { groupSize: 4 });
    const { s } = t;
    const { links } = warm(t, [2, 8]);
    s.grantCredit("a1", 3);
    s.grantCredit("a0", 3);
    const pieces = [...links[0]!.units, ...links[1]!.units].filter((u) => u.unit.unitId.includes("~"));
    expect(pieces.length).toBeGreaterThan(0);
    expect(s.counters.piecesCut).toBe(pieces.length);
    const unitsOfGroup = new Map<string, Set<string>>();
    for (const l of links) {
      for (const u of l.units.slice(1)) {
        expect(u.records.length % 4, u.unit.unitId).toBe(0);
        for (const r of u.records) (unitsOfGroup.get(r.groupId) ?? unitsOfGroup.set(r.groupId, new Set()).get(r.groupId)!).add(u.unit.unitId);
      }
    }
    for (const [g, us] of unitsOfGroup) expect(us.size, g).toBe(1);
    for (const p of pieces) expect(new Set(p.records.map((r) => r.groupId))).toEqual(new Set(p.unit.groupIds));
  });

  it("the agent that completes a unit is not told to cancel it", () => {
    const t = setup(1, 4, 4, { groupSize: 1 });
    const { s } = t;
    const a = new FakeLink();
    s.attach("a", info("a"), a, true);
    s.grantCredit("a", 1);
    const u = a.units[0]!;
    for (const r of u.records) s.result("a", valid(u.unit.unitId, r));
    expect(a.cancels).toEqual([]);
  });
});

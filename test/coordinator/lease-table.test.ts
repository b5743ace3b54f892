// The lease table (coordinator/lease-table.ts) on its own: who holds what, renewals of one lease or
// all of an agent's, release keeping the agent's other units, expiry at the lease's end.
import { describe, expect, it } from "vitest";
import { LeaseTable } from "../../coordinator/lease-table.js";

describe("LeaseTable", () => {
  it("grants primaries and backups, and answers who holds what", () => {
    const t = new LeaseTable(100);
    const a1 = t.grant("u1", "a", ["r1", "r2"], false, 0, 7);
    t.grant("u2", "a", ["r3"], false, 10);
    t.grant("u1", "b", ["r2"], true, 20);
    expect(a1).toEqual({ unitId: "u1", agentKey: "a", backup: false, expiresAt: 100, outstanding: new Set(["r1", "r2"]), cost: 7, settledElsewhere: 0 });
    expect(t.unitsOf("a")).toEqual(["u1", "u2"]);
    expect(t.countOf("a")).toBe(2);
    expect(t.holders("u1").map((l) => [l.agentKey, l.backup])).toEqual([["a", false], ["b", true]]);
    expect(t.holderCount("u1")).toBe(2);
    expect(t.size).toBe(3);
    expect(t.get("u2", "b")).toBeUndefined();
    // Nobody and nothing: empty answers, no throw.
    expect(t.holders("nope")).toEqual([]);
    expect(t.holderCount("nope")).toBe(0);
    expect(t.unitsOf("nobody")).toEqual([]);
    expect(t.countOf("nobody")).toBe(0);
  });

  it("renews one lease (a result) or every lease of the agent (a heartbeat), no other", () => {
    const t = new LeaseTable(100);
    t.grant("u1", "a", [], false, 0);
    t.grant("u2", "a", [], false, 0);
    t.grant("u1", "b", [], true, 0);
    t.renew("a", 50, "u2");
    expect([t.get("u1", "a")!.expiresAt, t.get("u2", "a")!.expiresAt, t.get("u1", "b")!.expiresAt]).toEqual([100, 150, 100]);
    t.renew("a", 70);
    expect([t.get("u1", "a")!.expiresAt, t.get("u2", "a")!.expiresAt, t.get("u1", "b")!.expiresAt]).toEqual([170, 170, 100]);
    t.renew("b", 90, "u2"); // b does not hold u2: nothing changes
    expect(t.get("u2", "b")).toBeUndefined();
    expect(t.get("u2", "a")!.expiresAt).toBe(170);
  });

  it("release takes one lease and keeps the agent's other units and the unit's other holders", () => {
    const t = new LeaseTable(100);
    t.grant("u1", "a", [], false, 0);
    t.grant("u2", "a", [], false, 0);
    t.grant("u1", "b", [], true, 0);
    expect(t.release("u1", "a")?.agentKey).toBe("a");
    expect(t.release("u1", "a")).toBeUndefined();
    expect(t.unitsOf("a")).toEqual(["u2"]);
    expect(t.holders("u1").map((l) => l.agentKey)).toEqual(["b"]);
    expect(t.size).toBe(2);
    // Granted again after a release: one lease, not two.
    t.grant("u1", "a", [], false, 5);
    expect(t.unitsOf("a").sort()).toEqual(["u1", "u2"]);
    expect(t.holderCount("u1")).toBe(2);
  });

  it("releaseAgent and releaseUnit return what they took", () => {
    const t = new LeaseTable(100);
    t.grant("u1", "a", [], false, 0);
    t.grant("u2", "a", [], false, 0);
    t.grant("u1", "b", [], true, 0);
    expect(t.releaseAgent("a").map((l) => l.unitId)).toEqual(["u1", "u2"]);
    expect(t.countOf("a")).toBe(0);
    expect(t.releaseUnit("u1").map((l) => l.agentKey)).toEqual(["b"]);
    expect(t.size).toBe(0);
    expect(t.releaseAgent("a")).toEqual([]);
  });

  it("a lease has expired at its expiry time, not before", () => {
    const t = new LeaseTable(100);
    t.grant("u1", "a", [], false, 0);
    t.grant("u2", "b", [], false, 50);
    expect(t.expired(99)).toEqual([]);
    expect(t.expired(100).map((l) => l.unitId)).toEqual(["u1"]);
    expect(t.expired(150).map((l) => l.unitId)).toEqual(["u1", "u2"]);
  });
});

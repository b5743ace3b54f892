// The scheduler's bookkeeping with its agents (coordinator/scheduler.ts), with fake agent links
// and an injected clock: a not-ready heartbeat hands units back at once, a heartbeat renews leases,
// a detached agent's units go back, draining hands out nothing more, the run's figures as it goes.
import { describe, expect, it } from "vitest";
import { FakeLink, info, valid, setup } from "./helpers/scheduler-setup.js";

const READY = { ready: true, inflightRequests: 0, engineWaiting: 0, engineRunning: 0 };
const NOT_READY = { ...READY, ready: false };

describe("Scheduler and its agents", () => {
  it("a not-ready heartbeat hands the agent's units back at once, counted; a ready one gets work again", () => {
    const { s } = setup(3, 2, 2);
    const a = new FakeLink();
    s.attach("a", info("a"), a, true);
    s.grantCredit("a", 2);
    expect(a.units).toHaveLength(2);
    expect([s.leaseCount, s.heldBy("a"), s.inflightUnits, s.queuedUnits, s.pendingRecords]).toEqual([2, 2, 2, 1, 6]);
    s.heartbeat("a", NOT_READY);
    expect(s.counters.handedBack).toBe(4);
    expect([s.leaseCount, s.heldBy("a"), s.queuedUnits]).toEqual([0, 0, 3]);
    const b = new FakeLink();
    s.attach("b", info("b"), b, true);
    s.grantCredit("b", 1);
    // A handed-back unit first, not the one never leased.
    expect(a.units.map((u) => u.unit.unitId)).toContain(b.units[0]!.unit.unitId);
    s.heartbeat("a", READY);
    expect(s.agent("a")!.ready).toBe(true);
    expect(s.counters.handedBack).toBe(4);
  });

  it("a heartbeat records the engine's load and renews every lease of the agent", () => {
    const { s, tick } = setup(2);
    const a = new FakeLink();
    s.attach("a", info("a"), a, true);
    s.grantCredit("a", 2);
    tick(90);
    s.heartbeat("a", { ready: true, inflightRequests: 3, engineWaiting: 2, engineRunning: 1 });
    expect(s.agent("a")).toMatchObject({ inflightRequests: 3, engineWaiting: 2, engineRunning: 1 });
    tick(90);
    expect(s.expireLeases()).toBe(0);
    tick(20);
    expect(s.expireLeases()).toBe(2);
    expect(s.counters.leasesExpired).toBe(2);
    // Unknown agents are ignored.
    s.heartbeat("nobody", READY);
    s.grantCredit("nobody", 5);
    expect(s.agent("nobody")).toBeUndefined();
  });

  it("a detached agent's units go back to the queue and to the next agent; detaching twice changes nothing", () => {
    const { s } = setup(2);
    const a = new FakeLink();
    s.attach("a", info("a"), a, true);
    s.grantCredit("a", 1);
    const b = new FakeLink();
    s.attach("b", info("b"), b, true);
    s.grantCredit("b", 1);
    s.detach("a");
    s.detach("a");
    expect(s.agentList().map((x) => x.key)).toEqual(["b"]);
    s.grantCredit("b", 1);
    expect(b.units.map((u) => u.unit.unitId).sort()).toEqual([a.units[0]!.unit.unitId, b.units[0]!.unit.unitId].sort());
  });

  it("draining hands out nothing more and still accepts results; the figures follow the run to its end", () => {
    const { s, accepted } = setup(3);
    const a = new FakeLink();
    s.attach("a", info("a"), a, true);
    s.grantCredit("a", 1);
    s.stopDispatch();
    s.grantCredit("a", 5);
    expect(a.units).toHaveLength(1);
    const u = a.units[0]!;
    expect(s.result("a", valid(u.unit.unitId, u.records[0]!))).toEqual({ kind: "accepted" });
    expect(accepted).toEqual([u.records[0]!.recordKey]);
    expect([s.pendingRecords, s.inflightUnits, s.leaseCount, s.queuedUnits]).toEqual([2, 0, 0, 2]);
    expect(s.agent("a")!.results).toBe(1);
    // The same result again: a duplicate, counted.
    expect(s.result("a", valid(u.unit.unitId, u.records[0]!))).toEqual({ kind: "duplicate" });
    expect([s.counters.duplicates, s.agent("a")!.duplicates, s.counters.accepted]).toEqual([1, 1, 1]);
    s.stop();
  });

  it("unitDone with records unanswered puts them back first", () => {
    const { s } = setup(2, 3, 3);
    const a = new FakeLink();
    s.attach("a", info("a"), a, true);
    s.grantCredit("a", 1);
    const u = a.units[0]!;
    s.result("a", valid(u.unit.unitId, u.records[0]!));
    s.unitDone("a", u.unit.unitId);
    expect([s.leaseCount, s.pendingRecords]).toEqual([0, 5]);
    const b = new FakeLink();
    s.attach("b", info("b"), b, true);
    s.grantCredit("b", 1);
    expect(b.units[0]!.records.map((r) => r.recordKey)).toEqual(u.records.slice(1).map((r) => r.recordKey));
  });
});

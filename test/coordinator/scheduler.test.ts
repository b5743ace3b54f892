// The scheduler alone, with fake agent links and an injected clock: credits, backpressure,
// readiness, leases, backup copies, first result wins, rejection and give-up.
import { describe, expect, it } from "vitest";
import { FakeLink, info, valid, setup } from "./helpers/scheduler-setup.js";
import type { RecordEntry } from "../../coordinator/suite-index.js";

describe("Scheduler", () => {
  it("never sends more units than credited, and none while the stream is blocked", () => {
    const { s } = setup(10);
    const link = new FakeLink();
    s.attach("a", info("a"), link, true);
    expect(link.units).toHaveLength(0);
    s.grantCredit("a", 3);
    expect(link.units).toHaveLength(3);
    s.pump();
    expect(link.units).toHaveLength(3);
    link.open = false;
    s.grantCredit("a", 2);
    expect(link.units).toHaveLength(3);
    link.open = true;
    s.pump();
    expect(link.units).toHaveLength(5);
    expect(s.agent("a")!.credit).toBe(0);
  });

  it("gives nothing to an agent that is not ready until a heartbeat says ready", () => {
    const { s } = setup(2);
    const link = new FakeLink();
    s.attach("a", info("a"), link, false);
    s.grantCredit("a", 2);
    expect(link.units).toHaveLength(0);
    s.heartbeat("a", { ready: true, inflightRequests: 0, engineWaiting: 0, engineRunning: 0 });
    expect(link.units).toHaveLength(2);
  });

  it("on lease expiry requeues only the unanswered records, first in the queue, and cancels the holder", () => {
    const { s, tick, accepted } = setup(3, 4, 4);
    const a = new FakeLink();
    s.attach("a", info("a"), a, true);
    s.grantCredit("a", 1);
    const first = a.units[0]!;
    expect(first.records).toHaveLength(4);
    s.result("a", valid(first.unit.unitId, first.records[0]!));
    s.result("a", valid(first.unit.unitId, first.records[1]!));
    tick(60);
    s.heartbeat("a", { ready: true, inflightRequests: 1, engineWaiting: 0, engineRunning: 0 });
    tick(60);
    expect(s.expireLeases()).toBe(0); // renewed by the heartbeat
    tick(200);
    expect(s.expireLeases()).toBe(1);
    expect(a.cancels).toEqual([first.unit.unitId]);
    const b = new FakeLink();
    s.attach("b", info("b"), b, true);
    s.grantCredit("b", 1);
    expect(b.units[0]!.unit.unitId).toBe(first.unit.unitId);
    expect(b.units[0]!.records.map((r) => r.recordKey)).toEqual(first.records.slice(2).map((r) => r.recordKey));
    // The old holder's late answer has no lease any more.
    expect(s.result("a", valid(first.unit.unitId, first.records[2]!))).toMatchObject({ kind: "rejected", rejection: { reason: "no_lease" } });
    expect(accepted).toHaveLength(2);
    expect(s.counters.leasesExpired).toBe(1);
  });

  it("an expired backup lease does not requeue a unit its primary still holds", () => {
    // Requeued, the unit would go back to its own primary: the same records twice and a credit lost.
    const { s, tick } = setup(1, 2, 2);
    const a = new FakeLink();
    const b = new FakeLink();
    s.attach("a", info("a"), a, true);
    s.grantCredit("a", 1);
    const u = a.units[0]!;
    s.attach("b", info("b"), b, true);
    s.grantCredit("b", 1);
    expect(b.units.map((x) => [x.unit.unitId, x.backup])).toEqual([[u.unit.unitId, true]]);
    const hb = { ready: true, inflightRequests: 1, engineWaiting: 0, engineRunning: 0 };
    tick(60);
    s.heartbeat("a", hb);
    tick(60);
    s.heartbeat("a", hb);
    expect(s.expireLeases()).toBe(1); // b's backup only
    expect(b.cancels).toEqual([u.unit.unitId]);
    expect(a.cancels).toEqual([]);
    expect(s.counters.requeued).toBe(0);
    s.grantCredit("a", 1);
    expect(a.units).toHaveLength(1);
    expect(s.agent("a")!.credit).toBe(1);
    expect(s.leaseCount).toBe(1);
  });

  it("on disconnect requeues the unanswered rest at once", () => {
    const { s } = setup(2, 3, 3);
    const a = new FakeLink();
    s.attach("a", info("a"), a, true);
    s.grantCredit("a", 1);
    const u = a.units[0]!;
    s.result("a", valid(u.unit.unitId, u.records[0]!));
    s.detach("a");
    const b = new FakeLink();
    s.attach("b", info("b"), b, true);
    s.grantCredit("b", 1);
    expect(b.units[0]!.unit.unitId).toBe(u.unit.unitId);
    expect(b.units[0]!.records).toHaveLength(2);
  });

  it("hands a backup copy of the oldest in-flight unit at the tail; first result wins; the other holder is cancelled", () => {
    const { s, accepted } = setup(2, 2, 2);
    const a = new FakeLink();
    const b = new FakeLink();
    s.attach("a", info("a"), a, true);
    s.grantCredit("a", 2);
    expect(a.units.map((u) => u.backup)).toEqual([false, false]);
    const [u1, u2] = a.units;
    s.attach("b", info("b"), b, true);
    s.grantCredit("b", 3);
    // Queue empty: b gets one backup per in-flight unit, never more than one copy per unit.
    expect(b.units.map((u) => [u.unit.unitId, u.backup])).toEqual([
      [u1!.unit.unitId, true],
      [u2!.unit.unitId, true],
    ]);
    expect(s.agent("b")!.credit).toBe(1);
    for (const r of u1!.records) expect(s.result("b", valid(u1!.unit.unitId, r)).kind).toBe("accepted");
    expect(a.cancels).toEqual([u1!.unit.unitId]);
    expect(b.cancels).toEqual([]);
    for (const r of u1!.records) expect(s.result("a", valid(u1!.unit.unitId, r)).kind).toBe("duplicate");
    expect(s.counters.duplicates).toBe(2);
    expect(accepted.filter((r) => u1!.records.some((x) => x.recordKey === r))).toHaveLength(2);
    expect(s.counters.backupUnits).toBe(2);
  });

  it("rejects bad results, counts them by reason, redoes the record, and gives up after five", () => {
    const { s, givenUp, accepted } = setup(1, 2, 2);
    const a = new FakeLink();
    s.attach("a", info("a"), a, true);
    s.grantCredit("a", 1);
    const u = a.units[0]!;
    const [r0, r1] = u.records as [RecordEntry, RecordEntry];
    const bad = { ...valid(u.unit.unitId, r0), probs: { label: { A: 0.5, B: 0.6, C: -0.1 } } };
    expect(s.result("a", bad)).toMatchObject({ kind: "rejected", rejection: { reason: "bad_distribution" } });
    expect(s.result("a", valid(u.unit.unitId, r1)).kind).toBe("accepted");
    // The copy is answered (one rejected): the lease ends and the rejected record is queued again.
    expect(s.heldBy("a")).toBe(0);
    s.grantCredit("a", 1);
    expect(a.units[1]!.records.map((r) => r.recordKey)).toEqual([r0.recordKey]);
    for (let i = 0; i < 4; i++) {
      if (i > 0) s.grantCredit("a", 1);
      s.result("a", { ...bad, probs: { label: { A: Number.NaN, B: 0.5, C: 0.5 } } });
    }
    expect(givenUp).toEqual([r0.recordKey]);
    expect(accepted).toEqual([r1.recordKey]);
    expect(s.counters.rejectedByReason).toEqual({ bad_distribution: 5 });
    expect(s.pendingRecords).toBe(0);
  });

  it("rejects a run_id of another unit and an unknown run_id", () => {
    const { s, recs } = setup(2, 1, 1);
    const a = new FakeLink();
    s.attach("a", info("a"), a, true);
    s.grantCredit("a", 1);
    const u = a.units[0]!;
    const other = recs.find((r) => r.recordKey !== u.records[0]!.recordKey)!;
    expect(s.result("a", valid(u.unit.unitId, other))).toMatchObject({ rejection: { reason: "not_in_unit" } });
    expect(s.result("a", { ...valid(u.unit.unitId, other), recordKey: "t:nope" })).toMatchObject({ rejection: { reason: "unknown_run_id" } });
    expect(s.agent("a")!.rejected).toBe(2);
  });
});

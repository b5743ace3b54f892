// The scheduler's bookkeeping of results and copies (coordinator/scheduler.ts), with fake links and
// a fake clock: results of an agent no longer attached, the counters, what a copy still waits for
// once another holder answered part of it, and when an expiry hands work out again.
import { describe, expect, it } from "vitest";
import { FakeLink, info, valid, setup } from "./helpers/scheduler-setup.js";
import { Scheduler } from "../../coordinator/scheduler.js";
import { planUnits } from "../../coordinator/planner.js";
import type { RecordEntry } from "../../coordinator/suite-index.js";
import { entry } from "./helpers/entries.js";

const READY = { ready: true, inflightRequests: 0, engineWaiting: 0, engineRunning: 0 };
const NOT_READY = { ...READY, ready: false };

/** A unit held by "a" (primary) and "b" (backup copy). */
function twoHolders(records: number) {
  const t = setup(1, records, records);
  const a = new FakeLink();
  const b = new FakeLink();
  t.s.attach("a", info("a"), a, true);
  t.s.grantCredit("a", 1);
  t.s.attach("b", info("b"), b, true);
  t.s.grantCredit("b", 1);
  const u = a.units[0]!;
  expect(b.units.map((x) => [x.unit.unitId, x.backup])).toEqual([[u.unit.unitId, true]]);
  return { ...t, a, b, u, r: u.records as RecordEntry[] };
}

describe("Scheduler bookkeeping", () => {
  it("a result from an agent no longer attached is refused (no lease) or a duplicate, counted, and throws nothing", () => {
    const { s } = setup(2);
    const a = new FakeLink();
    s.attach("a", info("a"), a, true);
    expect(s.agent("a")!.heldBack).toBe(false);
    s.grantCredit("a", 1);
    const u = a.units[0]!;
    expect(s.result("gone", valid(u.unit.unitId, u.records[0]!))).toMatchObject({ kind: "rejected", rejection: { reason: "no_lease" } });
    expect(s.counters.rejected).toBe(1);
    expect(s.agent("a")!.rejected).toBe(0);
    expect(s.result("a", valid(u.unit.unitId, u.records[0]!))).toEqual({ kind: "accepted" });
    expect(s.result("gone", valid(u.unit.unitId, u.records[0]!))).toEqual({ kind: "duplicate" });
    expect([s.counters.duplicates, s.agent("a")!.duplicates]).toEqual([1, 0]);
  });

  it("a newly attached agent is not held back", () => {
    const { s } = setup(2);
    s.attach("a", info("a"), new FakeLink(), false);
    expect(s.agent("a")!.heldBack).toBe(false);
  });

  it("the fifth rejection gives the record up: counted once, and the result is still answered as rejected", () => {
    const { s, givenUp } = setup(1, 1, 1);
    const a = new FakeLink();
    s.attach("a", info("a"), a, true);
    const bad = (unitId: string, r: RecordEntry) => ({ ...valid(unitId, r), probs: { label: { A: 0.5, B: 0.6, C: -0.1 } } });
    const outcomes = [];
    for (let i = 0; i < 5; i++) {
      s.grantCredit("a", 1);
      const u = a.units[i]!;
      outcomes.push(s.result("a", bad(u.unit.unitId, u.records[0]!)));
    }
    expect(givenUp).toHaveLength(1);
    expect(s.counters.givenUp).toBe(1);
    expect(s.counters.rejected).toBe(5);
    expect(outcomes.at(-1)).toMatchObject({ kind: "rejected", rejection: { reason: "bad_distribution" } });
    expect(outcomes.every((o) => o.kind === "rejected")).toBe(true);
  });

  it("a lease that ran out and left its unit without a holder is counted as requeued, and the unit goes out at once", () => {
    // One holder a unit: the idle agent gets no backup copy, only the expired unit.
    const { s, tick } = setup(1, 2, 2, { groupSize: 1, maxHolders: 1 });
    const a = new FakeLink();
    const b = new FakeLink();
    s.attach("a", info("a"), a, true);
    s.grantCredit("a", 1);
    s.attach("b", info("b"), b, true);
    s.grantCredit("b", 1);
    expect(b.units).toHaveLength(0);
    tick(100);
    expect(s.expireLeases()).toBe(1);
    expect(s.counters.requeued).toBe(1);
    expect(b.units.map((u) => u.unit.unitId)).toEqual([a.units[0]!.unit.unitId]);
  });

  it("no third copy of a unit by default: a primary and one backup", () => {
    const { s } = setup(1, 2, 2, { groupSize: 1 });
    const links = ["a", "b", "c"].map((k) => {
      const l = new FakeLink();
      s.attach(k, info(k), l, true);
      s.grantCredit(k, 1);
      return l;
    });
    expect(links.map((l) => l.units.length)).toEqual([1, 1, 0]);
  });

  it("a copy whose records the other holder answered is finished by the holder's own last answer", () => {
    // a's answer for r2 is rejected (still pending, a owes nothing more for it); b answers r0; a answers r1:
    // a owes nothing (r0 is settled) and its lease ends, while b still holds the unit.
    const { s, r } = twoHolders(3);
    const bad = { ...valid("t/0", r[2]!), probs: { label: { A: 2, B: 0, C: 0 } } };
    expect(s.result("a", bad).kind).toBe("rejected");
    expect(s.result("b", valid("t/0", r[0]!)).kind).toBe("accepted");
    expect(s.heldBy("a")).toBe(1);
    expect(s.result("a", valid("t/0", r[1]!)).kind).toBe("accepted");
    expect([s.heldBy("a"), s.heldBy("b"), s.counters.requeued]).toEqual([0, 1, 0]);
  });

  it("a holder's duplicate of its last outstanding record ends its lease", () => {
    const { s, r } = twoHolders(2);
    expect(s.result("a", { ...valid("t/0", r[0]!), probs: { label: { A: 2, B: 0, C: 0 } } }).kind).toBe("rejected");
    expect(s.result("b", valid("t/0", r[1]!)).kind).toBe("accepted");
    expect(s.heldBy("a")).toBe(1);
    expect(s.result("a", valid("t/0", r[1]!)).kind).toBe("duplicate");
    expect([s.heldBy("a"), s.heldBy("b")]).toEqual([0, 1]);
  });

  it("records handed back count only those nobody answered yet", () => {
    const { s, r } = twoHolders(2);
    expect(s.result("b", valid("t/0", r[0]!)).kind).toBe("accepted");
    s.heartbeat("a", NOT_READY);
    expect(s.counters.handedBack).toBe(1);
    expect(s.heldBy("a")).toBe(0);
  });

  it("a callback that ends the unit's lease and gets the unit again keeps the new copy", () => {
    // onAccept re-enters: unitDone ends a's lease, the unit goes out again to a (credit). The old
    // copy, empty now, must not end the new one.
    const recs = [entry("t", "0", "g"), entry("t", "1", "g")];
    const units = planUnits([{ track: "t", family: "f", records: recs }], { maxRecords: 2, maxQuestions: 99, maxPayloadBytes: 1e9 });
    const byKey = new Map(recs.map((x) => [x.recordKey, x]));
    let reenter = true;
    const s: Scheduler = new Scheduler(units, {
      leaseMs: 1000,
      lookup: (k) => byKey.get(k),
      onAccept: (res) => {
        if (!reenter) return;
        reenter = false;
        s.unitDone("a", res.unitId);
      },
      onGiveUp: () => {},
      now: () => 0,
    });
    const a = new FakeLink();
    s.attach("a", info("a"), a, true);
    s.grantCredit("a", 2);
    expect(a.units).toHaveLength(1);
    const u = a.units[0]!;
    expect(s.result("a", { ...valid(u.unit.unitId, recs[1]!), probs: { label: { A: 2, B: 0, C: 0 } } }).kind).toBe("rejected");
    expect(s.result("a", valid(u.unit.unitId, recs[0]!)).kind).toBe("accepted");
    expect(a.units.map((x) => x.records.map((y) => y.recordKey))).toEqual([["t:0", "t:1"], ["t:1"]]);
    expect([s.heldBy("a"), s.queuedUnits]).toEqual([1, 0]);
    expect(s.result("a", valid(u.unit.unitId, recs[1]!)).kind).toBe("accepted");
  });

  it("an agent's unitDone for a unit it no longer holds changes nothing", () => {
    // Its lease ran out and the unit went to b; a's late UnitDone must not end b's copy or requeue.
    const { s, tick } = setup(1, 2, 2, { groupSize: 1, maxHolders: 1 });
    const a = new FakeLink();
    const b = new FakeLink();
    s.attach("a", info("a"), a, true);
    s.grantCredit("a", 1);
    s.attach("b", info("b"), b, true);
    s.grantCredit("b", 1);
    tick(100);
    expect(s.expireLeases()).toBe(1);
    expect(b.units).toHaveLength(1);
    s.unitDone("a", "t/0");
    s.unitDone("a", "t/nope");
    expect([s.heldBy("b"), s.leaseCount, s.queuedUnits, s.counters.requeued]).toEqual([1, 1, 0, 1]);
  });
});

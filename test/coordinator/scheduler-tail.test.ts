// The scheduler's tail rule (coordinator/tail-policy.ts) with fake agent links and a fake clock:
// agents' paces measured from their results, work held back from an agent that holds enough,
// units cut into pieces sized by each agent's pace (and no bigger than the slowest agent's), and
// backup copies of the unit whose holder would finish last.
import { describe, expect, it, vi } from "vitest";
import { FakeLink, info, valid, setup } from "./helpers/scheduler-setup.js";
import { TOKENS, answer, warm } from "./helpers/scheduler-warm.js";

describe("Scheduler tail rule", () => {
  it("measures each agent's pace from its results while it holds work", () => {
    const t = setup(4, 32, 32, { groupSize: 1 });
    warm(t, [2, 8]);
    expect(t.s.agent("a0")!.pace.tokensPerS).toBeCloseTo(1000, 6);
    expect(t.s.agent("a1")!.pace.tokensPerS).toBeCloseTo(4000, 6);
  });

  it("near the end cuts units into pieces sized by the agent's pace, and no bigger than the slowest agent's", () => {
    const t = setup(4, 32, 32, { groupSize: 1 });
    const { s } = t;
    const { links, next } = warm(t, [2, 8]);
    // 98 records of 250 tokens left at 5,000 tokens/s: 4.9 s, a piece 12% of it (0.588 s): at
    // 1,000 tokens/s 2 records; the fast agent's own 0.588 s (9 records) is capped at the slow one's.
    s.grantCredit("a1", 1);
    const p1 = links[1]!.units[1]!;
    expect(p1.records).toHaveLength(2);
    expect(p1.unit.unitId).toMatch(/~1$/);
    // The slow agent holds 26 records (6.5 s at its pace, over the 2 s horizon): it waits.
    s.grantCredit("a0", 1);
    expect(links[0]!.units).toHaveLength(1);
    expect(s.agent("a0")!.heldBack).toBe(true);
    // Once it answered them it gets a piece: 72 records left (3.6 s), the piece's floor 0.5 s: 2 records.
    answer(s, "a0", links[0]!.units[0]!, next[0]);
    const p0 = links[0]!.units[1]!;
    expect(p0.records).toHaveLength(2);
    expect(p0.unit.unitId).toMatch(/~2$/);
    // The rest of the unit stays first in the queue.
    expect(p0.unit.unitId.split("~")[0]).toBe(p1.unit.unitId.split("~")[0]);
    expect(p0.records[0]!.recordKey).not.toBe(p1.records[0]!.recordKey);
    expect(s.counters.piecesCut).toBe(2);
  });

  it("at the end an agent that ran dry backs up a piece of the agent that would finish last", () => {
    const t = setup(3, 32, 32, { groupSize: 1 });
    const { s, accepted } = t;
    const { links, next } = warm(t, [2, 8]);
    // The fast agent takes pieces until it holds 2 s of work (the horizon), the slow one the rest.
    s.grantCredit("a1", 40);
    expect(links[1]!.units.length).toBe(13);
    answer(s, "a0", links[0]!.units[0]!, next[0]);
    s.grantCredit("a0", 10);
    expect(s.queuedUnits).toBe(0);
    const before = links[0]!.units.length;
    for (const u of links[0]!.units.slice(1)) answer(s, "a0", u);
    const backups = links[0]!.units.slice(before).filter((u) => u.backup);
    expect(backups.length).toBeGreaterThan(0);
    expect(s.counters.backupUnits).toBe(backups.length);
    // The backup's results win; the fast agent's copy is cancelled and its late answers are dropped.
    const b = backups[0]!;
    answer(s, "a0", b);
    expect(links[1]!.cancels).toContain(b.unit.unitId);
    for (const r of b.records) expect(s.result("a1", valid(b.unit.unitId, r)).kind).toBe("duplicate");
    expect(b.records.every((r) => accepted.filter((k) => k === r.recordKey).length === 1)).toBe(true);
    expect(new Set(accepted).size).toBe(accepted.length);
  });
});

describe("Scheduler tail rule: the time left and the horizon", () => {
  it("counts an agent of unknown pace at the mean known pace, and an agent not ready not at all", () => {
    // 482 records of 250 tokens left. Two paced agents (5,000 tokens/s): 24.1 s left, a piece
    // 2.892 s (the slow agent's: 11 records). A third, ready, of unknown pace (counted at 2,500):
    // 16.07 s left, a piece 1.928 s (7 records).
    const t = setup(8, 64, 64, { groupSize: 1 });
    const { s } = t;
    const { links } = warm(t, [2, 8]);
    const c = new FakeLink();
    s.attach("c", info("c"), c, false);
    s.grantCredit("a1", 1);
    expect(links[1]!.units[1]!.records).toHaveLength(11);
    s.heartbeat("c", { ready: true, inflightRequests: 0, engineWaiting: 0, engineRunning: 0 });
    // The unknown agent's own unit: no pace, no piece (the rest of the cut unit, first in the queue).
    expect(c.units).toHaveLength(0);
    s.grantCredit("a1", 1);
    expect(links[1]!.units[2]!.records).toHaveLength(7);
  });

  it("holds back an agent whose work in hand lasts the horizon (at least 2 s) and gives it more as it answers", () => {
    const t = setup(4, 32, 32, { groupSize: 1 });
    const { s } = t;
    const { links, next } = warm(t, [2, 8]);
    // a0 holds 26 records, 6.5 s at 1,000 tokens/s; the horizon is 2 s (30% of ~4.9 s is less).
    s.grantCredit("a0", 1);
    expect(links[0]!.units).toHaveLength(1);
    expect(s.agent("a0")!.heldBack).toBe(true);
    const u = links[0]!.units[0]!;
    // Held back while what it holds lasts 2 s or more: 18 answered leaves 8 (2.0 s).
    for (let k = 0; k < 18; k++) s.result("a0", { ...valid(u.unit.unitId, u.records[next[0]! + k]!), completionTokens: TOKENS });
    expect(links[0]!.units).toHaveLength(1);
    s.result("a0", { ...valid(u.unit.unitId, u.records[next[0]! + 18]!), completionTokens: TOKENS });
    expect(links[0]!.units).toHaveLength(2);
    expect(s.agent("a0")!.heldBack).toBe(false);
  });

  it("the horizon is 30% of the time left when that is over 2 s", () => {
    // a0 holds 58 records (14.5 s); 482 left (24.1 s): held back while 0.25 (58 - k) >= 0.015 (482 - k).
    const t = setup(8, 64, 64, { groupSize: 1 });
    const { s } = t;
    const { links, next } = warm(t, [2, 8]);
    s.grantCredit("a0", 1);
    expect(links[0]!.units).toHaveLength(1);
    const u = links[0]!.units[0]!;
    for (let k = 0; k < 30; k++) s.result("a0", { ...valid(u.unit.unitId, u.records[next[0]! + k]!), completionTokens: TOKENS });
    expect(links[0]!.units).toHaveLength(1);
    s.result("a0", { ...valid(u.unit.unitId, u.records[next[0]! + 30]!), completionTokens: TOKENS });
    expect(links[0]!.units).toHaveLength(2);
  });

  it("while more units are to come there is no tail: whole units, nobody held back; pieces once all are in", () => {
    const t = setup(4, 32, 32, { groupSize: 1, laterGroups: 2 });
    const { s, later } = t;
    s.expectMoreUnits();
    const { links, next } = warm(t, [2, 8]);
    s.grantCredit("a0", 1);
    s.grantCredit("a1", 1);
    expect(links[0]!.units.map((u) => u.records.length)).toEqual([32, 32]);
    expect(links[1]!.units.map((u) => u.records.length)).toEqual([32, 32]);
    expect(s.counters.piecesCut).toBe(0);
    // Units added later queue behind the rest.
    s.addUnits(later);
    expect(s.queuedUnits).toBe(2);
    s.allUnitsAdded();
    // a1 answers the rest of its first unit: it holds 32 records (2 s), under the horizon (2.31 s).
    answer(s, "a1", links[1]!.units[0]!, next[1]);
    s.grantCredit("a1", 1);
    expect(links[1]!.units[2]!.unit.unitId).toMatch(/^u\/.*~1$/);
    expect(links[1]!.units[2]!.records.length).toBeLessThan(32);
    expect(s.counters.piecesCut).toBe(1);
  });
});

describe("Scheduler tail rule: pieces and backup copies", () => {
  it("a piece carries its own records, groups, cost and questions; the rest keeps the unit's id", () => {
    // Groups of two records: a piece of two records is one group.
    const t = setup(4, 32, 32, { groupSize: 2, events: true });
    const { s } = t;
    const { links } = warm(t, [2, 8]);
    s.grantCredit("a1", 2);
    const [p1, p2] = [links[1]!.units[1]!, links[1]!.units[2]!];
    expect(p1.unit).toMatchObject({ track: "t", groupIds: ["g2.0"], cost: 2 * 166, questions: 2 });
    expect(p1.unit.records.map((r) => r.recordKey)).toEqual(["t:2.0", "t:2.1"]);
    expect(p1.records.map((r) => r.recordKey)).toEqual(["t:2.0", "t:2.1"]);
    expect(p2.records.map((r) => r.recordKey)).toEqual(["t:2.2", "t:2.3"]);
    // A piece's records are answered under the piece's id, not the unit's.
    expect(s.result("a1", { ...valid("t/2", p1.records[0]!), completionTokens: TOKENS })).toMatchObject({ kind: "rejected" });
    expect(s.result("a1", { ...valid(p1.unit.unitId, p1.records[0]!), completionTokens: TOKENS })).toEqual({ kind: "accepted" });
    expect(t.completed).toEqual([]);
    expect(s.result("a1", { ...valid(p1.unit.unitId, p1.records[1]!), completionTokens: TOKENS })).toEqual({ kind: "accepted" });
    expect(t.completed).toEqual([`${p1.unit.unitId}@a1`]);
    // The rest of the unit, with the unit's id, lost the pieces' records, cost and questions.
    s.detach("a1");
    const b = new FakeLink();
    s.attach("b", info("b"), b, true);
    s.grantCredit("b", 3);
    const rest = b.units.find((u) => u.unit.unitId === "t/2")!;
    expect(rest.records).toHaveLength(28);
    expect(rest.unit).toMatchObject({ groupIds: Array.from({ length: 14 }, (_, i) => `g2.${i + 2}`), cost: 28 * 166, questions: 28 });
    expect(rest.unit.records).toHaveLength(28);
  });

  it("a paced backup copies the unit with the most to gain: the holder's time for all it holds against the backup's", () => {
    // a0 (1,000 tokens/s) holds t/g0 (26 left) and t/g1 (32): 14.5 s. a1 (4,000) runs dry: t/g0
    // takes it 1.625 s, t/g1 2 s; it copies t/g0 (the most gained), then t/g1 (never one it holds).
    const t = setup(3, 32, 32, { groupSize: 1 });
    const { s } = t;
    const { links, next } = warm(t, [2, 8], [2, 1]);
    expect(links[0]!.units.map((u) => u.unit.unitId)).toEqual(["t/0", "t/1"]);
    answer(s, "a1", links[1]!.units[0]!, next[1]);
    s.grantCredit("a1", 1);
    expect(links[1]!.units[1]).toMatchObject({ backup: true, unit: { unitId: "t/0" } });
    expect(links[1]!.units[1]!.records).toHaveLength(26);
    s.grantCredit("a1", 1);
    expect(links[1]!.units[2]).toMatchObject({ backup: true, unit: { unitId: "t/1" } });
    s.grantCredit("a1", 1);
    expect(links[1]!.units).toHaveLength(3);
    expect(s.counters.backupUnits).toBe(2);
  });

  it("no backup unless its agent would finish it sooner than 80% of the holder's time", () => {
    // a0 (4,000 tokens/s) holds 8 + 32 records (2.5 s); a1 (1,000) would take 2 s for the 8: not under 2 s.
    const t = setup(3, 32, 32, { groupSize: 1 });
    const { s } = t;
    const { links, next } = warm(t, [8, 2], [2, 1]);
    answer(s, "a1", links[1]!.units[0]!, next[1]);
    s.grantCredit("a1", 1);
    expect(links[1]!.units).toHaveLength(1);
    // Once a0 answered one more, 39 records (2.4375 s): 80% is 1.95 s, still no.
    const u = links[0]!.units[0]!;
    s.result("a0", { ...valid(u.unit.unitId, u.records[next[0]!]!), completionTokens: TOKENS });
    expect(links[1]!.units).toHaveLength(1);
  });

  it("checks leases and paces on its own clock, every quarter lease, until stopped", () => {
    vi.useFakeTimers();
    try {
      const { s, tick, expired } = setup(2, 1, 1, { leaseMs: 400, events: true });
      const a = new FakeLink();
      s.attach("a", info("a"), a, true);
      s.grantCredit("a", 1);
      s.startLeaseClock();
      s.startLeaseClock();
      tick(400);
      vi.advanceTimersByTime(99);
      expect(expired).toEqual([]);
      vi.advanceTimersByTime(1);
      expect(expired).toEqual(["t/0@a"]);
      expect(a.cancels).toEqual(["t/0"]);
      // The expired unit goes out again, first.
      s.grantCredit("a", 1);
      expect(a.units.map((u) => u.unit.unitId)).toEqual(["t/0", "t/0"]);
      s.stop();
      tick(400);
      vi.advanceTimersByTime(1000);
      expect(expired).toHaveLength(1);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("while a holder's pace is unknown the backup copies the oldest unit in flight", () => {
    // c took t/0 first and never answers (no pace); a0 (1,000 tokens/s) holds t/1. By gain a1
    // would copy t/1; with c's time unknown it copies the oldest, t/0.
    const t = setup(3, 32, 32, { groupSize: 1 });
    const { s } = t;
    const c = new FakeLink();
    s.attach("c", info("c"), c, true);
    s.grantCredit("c", 1);
    const { links, next } = warm(t, [2, 8]);
    expect(s.agent("c")!.pace.tokensPerS).toBeUndefined();
    answer(s, "a1", links[1]!.units[0]!, next[1]);
    s.grantCredit("a1", 1);
    expect(links[1]!.units[1]).toMatchObject({ backup: true, unit: { unitId: "t/0" } });
  });

  it("an agent's pace counts only the time it held work", () => {
    const { s, tick } = setup(2, 32, 32, { groupSize: 1 });
    const a = new FakeLink();
    const b = new FakeLink();
    s.attach("a", info("a"), a, true);
    s.attach("b", info("b"), b, true);
    s.grantCredit("b", 1);
    const u = b.units[0]!;
    for (let k = 0; k < 4; k++) {
      tick(500);
      // a holds nothing: its (rejected) results say nothing of its engine's pace.
      s.result("a", { ...valid(u.unit.unitId, u.records[k]!), completionTokens: TOKENS });
      s.tickPaces();
    }
    expect(s.agent("a")!.pace.tokensPerS).toBeUndefined();
    expect(s.agent("a")!.rejected).toBe(4);
  });
});

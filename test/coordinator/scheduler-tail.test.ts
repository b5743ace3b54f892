// The scheduler's tail rule (coordinator/tail-policy.ts) with fake agent links and a fake clock:
// agents' paces measured from their results, work held back from an agent that holds enough,
// units cut into pieces sized by each agent's pace (and no bigger than the slowest agent's), and
// backup copies of the unit whose holder would finish last.
import { describe, expect, it } from "vitest";
import { FakeLink, info, valid, setup } from "./helpers/scheduler-setup.js";
import type { Scheduler } from "../../coordinator/scheduler.js";

/** Engine tokens every result reports (a record's planner cost is 166). */
const TOKENS = 250;

type Setup = ReturnType<typeof setup>;

/**
 * Attaches the agents, gives each one unit and answers `perTick[i]` records of it every half
 * second for 1.5 s (three ticks of the lease clock): each agent's pace is then known,
 * perTick[i] x TOKENS x 2 tokens/s. Returns the links and what each still holds unanswered.
 */
function warm(t: Setup, perTick: number[]) {
  const { s, tick } = t;
  const links = perTick.map(() => new FakeLink());
  links.forEach((l, i) => {
    s.attach(`a${i}`, info(`a${i}`), l, true);
    s.grantCredit(`a${i}`, 1);
  });
  const next = perTick.map(() => 0);
  for (let k = 0; k < 3; k++) {
    tick(500);
    perTick.forEach((n, i) => {
      const u = links[i]!.units[0]!;
      for (let j = 0; j < n; j++) s.result(`a${i}`, { ...valid(u.unit.unitId, u.records[next[i]++]!), completionTokens: TOKENS });
    });
    s.tickPaces();
  }
  return { links, next };
}

/** The agent answers the unit's records from `from` on. */
function answer(s: Scheduler, key: string, u: FakeLink["units"][number], from = 0): void {
  for (const r of u.records.slice(from)) s.result(key, { ...valid(u.unit.unitId, r), completionTokens: TOKENS });
}

describe("Scheduler tail rule", () => {
  it("measures each agent's pace from its results while it holds work", () => {
    const t = setup(4, 32, 32);
    warm(t, [2, 8]);
    expect(t.s.agent("a0")!.pace.tokensPerS).toBeCloseTo(1000, 6);
    expect(t.s.agent("a1")!.pace.tokensPerS).toBeCloseTo(4000, 6);
  });

  it("near the end cuts units into pieces sized by the agent's pace, and no bigger than the slowest agent's", () => {
    const t = setup(4, 32, 32);
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
    const t = setup(3, 32, 32);
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

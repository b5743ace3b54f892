// How big a piece the scheduler cuts off a unit near the end (coordinator/scheduler.ts pieceFor,
// tail-policy.ts), with fake links and a fake clock: a unit of one record is never cut, a unit only a
// little over a piece (up to CUT_OVER pieces) goes whole, a piece holds only records still pending,
// and an agent that is not ready does not shrink the pieces of the others.
import { describe, expect, it } from "vitest";
import { FakeLink, info, valid, setup } from "./helpers/scheduler-setup.js";
import { TOKENS, warm } from "./helpers/scheduler-warm.js";

const NOT_READY = { ready: false, inflightRequests: 0, engineWaiting: 0, engineRunning: 0 };

/**
 * One agent "a" given `held` units, answering `perTick` records every `tickMs` for three ticks while
 * it still holds work, each result reporting `tokens`: its pace is perTick x tokens / tickMs. Then,
 * unless `keep`, it answers the rest of what it holds (an agent holding a horizon's work is held back).
 */
function paced(t: ReturnType<typeof setup>, held: number, perTick: number, tickMs: number, tokens = TOKENS, keep = false) {
  const { s, tick } = t;
  const a = new FakeLink();
  s.attach("a", info("a"), a, true);
  s.grantCredit("a", held);
  const records = a.units.flatMap((u) => u.records.map((r) => ({ unitId: u.unit.unitId, r })));
  let next = 0;
  for (let k = 0; k < 3; k++) {
    tick(tickMs);
    for (let j = 0; j < perTick; j++, next++) s.result("a", { ...valid(records[next]!.unitId, records[next]!.r), completionTokens: tokens });
    s.tickPaces();
  }
  if (!keep) for (const { unitId, r } of records.slice(next)) s.result("a", { ...valid(unitId, r), completionTokens: tokens });
  return { a, records, next };
}

describe("Scheduler piece size", () => {
  it("a unit of one record goes whole however slow the agent", () => {
    // 125 tokens/s: a piece (0.5 s) is a quarter of a record.
    const t = setup(5, 1, 1);
    const { s } = t;
    const { a } = paced(t, 4, 1, 2000);
    expect(s.agent("a")!.pace.tokensPerS).toBeCloseTo(125, 6);
    s.grantCredit("a", 1);
    expect(a.units[4]!.unit.unitId).toBe("t/4");
    expect(a.units[4]!.records.map((r) => r.recordKey)).toEqual(["t:4.0"]);
  });

  it("a unit of two records is cut when one is a piece", () => {
    // 250 tokens/s: a piece (0.5 s, 2 records left) is half a record; 1.5 pieces are less than two records.
    const t = setup(5, 2, 2, { groupSize: 1 });
    const { s } = t;
    const { a } = paced(t, 4, 1, 1000);
    expect(s.agent("a")!.pace.tokensPerS).toBeCloseTo(250, 6);
    s.grantCredit("a", 1);
    expect(a.units[4]!.unit.unitId).toBe("t/4~1");
    expect(a.units[4]!.records.map((r) => r.recordKey)).toEqual(["t:4.0"]);
  });

  it("a unit of exactly 1.5 pieces goes whole", () => {
    // One token per unit of cost (166 a record) at 664 tokens/s: a piece (0.5 s) is two records,
    // a unit of three is 1.5 pieces. 6 records left: 1.5 s, so the piece is its 0.5 s floor.
    const t = setup(5, 3, 3, { groupSize: 1 });
    const { s } = t;
    const { a, next } = paced(t, 3, 2, 500, 166);
    expect(next).toBe(6);
    expect(s.agent("a")!.pace.tokensPerS).toBe(664);
    s.grantCredit("a", 1);
    expect(a.units[3]!.unit.unitId).toBe("t/3");
    expect(a.units[3]!.records).toHaveLength(3);
  });

  it("a piece of a unit given back holds only the records nobody answered", () => {
    // 250 tokens/s; t/0 given back with 3 of its 6 records answered: 9 records left (9 s), a piece
    // (1.08 s) is one record: the first one still pending.
    const t = setup(3, 6, 6, { groupSize: 1 });
    const { s } = t;
    const { a } = paced(t, 2, 1, 1000, TOKENS, true);
    // Answered: t:0.0, t:0.1, t:0.2; t/1 answered too, then t/0 given back with t:0.3 to t:0.5 pending.
    for (const r of a.units[1]!.records) s.result("a", { ...valid("t/1", r), completionTokens: TOKENS });
    s.unitDone("a", "t/0");
    s.grantCredit("a", 1);
    expect(a.units[2]!.unit.unitId).toBe("t/0~1");
    expect(a.units[2]!.records.map((r) => r.recordKey)).toEqual(["t:0.3"]);
  });

  it("an agent that is not ready does not cap the pieces of the others", () => {
    // a1 (4,000 tokens/s) alone is ready: 98 records left, 6.125 s, a piece 0.735 s: 11 records
    // (a0's 1,000 tokens/s, were it counted, would make it 2).
    const t = setup(4, 32, 32, { groupSize: 1 });
    const { s } = t;
    const { links } = warm(t, [2, 8]);
    s.heartbeat("a0", NOT_READY);
    s.grantCredit("a1", 1);
    const p = links[1]!.units[1]!;
    expect(p.unit.unitId).toBe("t/0~1");
    expect(p.records).toHaveLength(11);
  });

  it("the slowest ready agent caps a piece whichever agent comes first", () => {
    // a0 (4,000 tokens/s) first, a1 (1,000) second: 98 records left (4.9 s), a piece 0.588 s is 9
    // records for a0 but 2 for a1: a0 gets 2.
    const t = setup(4, 32, 32, { groupSize: 1 });
    const { s } = t;
    const { links } = warm(t, [8, 2]);
    s.grantCredit("a0", 1);
    const p = links[0]!.units[1]!;
    expect(p.unit.unitId).toBe("t/2~1");
    expect(p.records).toHaveLength(2);
  });
});

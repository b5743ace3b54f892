// Agents whose paces the scheduler has measured (fake clock): each holds a unit and answers a
// number of its records every half second for 1.5 s. For the tail-rule tests.
import type { Scheduler } from "../../../coordinator/scheduler.js";
import { FakeLink, info, valid, type setup } from "./scheduler-setup.js";

/** Engine tokens every result reports (a record's planner cost is 166). */
export const TOKENS = 250;

/** Agents a0, a1, ... answering perTick[i] records per half second: perTick[i] x 500 tokens/s. */
export function warm(t: ReturnType<typeof setup>, perTick: number[], credits: number[] = perTick.map(() => 1)) {
  const { s, tick } = t;
  const links = perTick.map(() => new FakeLink());
  links.forEach((l, i) => {
    s.attach(`a${i}`, info(`a${i}`), l, true);
    s.grantCredit(`a${i}`, credits[i]!);
  });
  const next = perTick.map(() => 0);
  for (let k = 0; k < 3; k++) {
    tick(500);
    perTick.forEach((n, i) => {
      const u = links[i]!.units[0]!;
      for (let j = 0; j < n; j++) {
        s.result(`a${i}`, { ...valid(u.unit.unitId, u.records[next[i]!]!), completionTokens: TOKENS });
        next[i] = next[i]! + 1;
      }
    });
    s.tickPaces();
  }
  return { links, next };
}

/** The agent answers the unit's records from `from` on. */
export function answer(s: Scheduler, key: string, u: FakeLink["units"][number], from = 0): void {
  for (const r of u.records.slice(from)) s.result(key, { ...valid(u.unit.unitId, r), completionTokens: TOKENS });
}

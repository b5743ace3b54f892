// A scheduler over planned units of one track, with fake agent links, an injected clock and a
// valid result for any record: what scheduler.test.ts and scheduler-agents.test.ts drive it with.
import { planUnits, type PlannedUnit } from "../../../coordinator/planner.js";
import { Scheduler, type AgentLink, type AgentInfo } from "../../../coordinator/scheduler.js";
import type { IncomingResult } from "../../../coordinator/incoming-result.js";
import { questionSpecs, type RecordEntry } from "../../../coordinator/suite-index.js";
import { entry } from "./entries.js";

export class FakeLink implements AgentLink {
  units: Array<{ unit: PlannedUnit; records: readonly RecordEntry[]; backup: boolean }> = [];
  cancels: string[] = [];
  open = true;
  writable(): boolean {
    return this.open;
  }
  sendUnit(unit: PlannedUnit, records: readonly RecordEntry[], backup: boolean): void {
    this.units.push({ unit, records, backup });
  }
  sendCancel(unitId: string): void {
    this.cancels.push(unitId);
  }
}

export const info = (id: string): AgentInfo => ({ agentId: id, model: "m", engineUrl: "", instance: id, methods: [], capacity: 1, maxModelLen: 0 });

export function valid(unitId: string, r: RecordEntry): IncomingResult {
  return {
    unitId,
    recordKey: r.recordKey,
    probs: Object.fromEntries(questionSpecs(r).map((q) => [q.key, Object.fromEntries(q.options.map((o) => [o, 1 / q.options.length]))])),
    skipped: [],
    errors: {},
    promptTokens: 0,
    cachedTokens: 0,
    completionTokens: 0,
    requests: 1,
    latencyMs: 1,
    payloadSha256: r.payloadSha256,
    answeredBy: {},
    retries: 0,
    approximate: false,
  };
}

export interface SetupOptions {
  leaseMs?: number;
  maxHolders?: number;
  /** Groups of a second track "u", known to lookup but planned into `later` (for addUnits). */
  laterGroups?: number;
  /** Records per group_id within each of the `groups` (default: all `perGroup` of them, one group): the tail cuts units only between groups. */
  groupSize?: number;
  /** Pass onUnitComplete and onLeaseExpired (collected in `completed`, `expired`); by default the scheduler has neither, as they are optional. */
  events?: boolean;
}

export function setup(groups: number, perGroup = 1, maxRecords = 1, options: SetupOptions = {}) {
  const recs: RecordEntry[] = [];
  const size = options.groupSize ?? perGroup;
  for (let g = 0; g < groups; g++) for (let i = 0; i < perGroup; i++) recs.push(entry("t", `${g}.${i}`, size >= perGroup ? `g${g}` : `g${g}.${Math.floor(i / size)}`));
  const limits = { maxRecords, maxQuestions: 999, maxPayloadBytes: 1e9 };
  const units = planUnits([{ track: "t", family: "f", records: recs }], limits);
  const laterRecs: RecordEntry[] = [];
  for (let g = 0; g < (options.laterGroups ?? 0); g++) for (let i = 0; i < perGroup; i++) laterRecs.push(entry("u", `${g}.${i}`, size >= perGroup ? `h${g}` : `h${g}.${Math.floor(i / size)}`));
  const later = laterRecs.length > 0 ? planUnits([{ track: "u", family: "f", records: laterRecs }], limits) : [];
  const byRun = new Map([...recs, ...laterRecs].map((r) => [r.recordKey, r]));
  let now = 1000;
  const accepted: string[] = [];
  const givenUp: string[] = [];
  const completed: string[] = [];
  const expired: string[] = [];
  const s = new Scheduler(units, {
    leaseMs: options.leaseMs ?? 100,
    lookup: (r) => byRun.get(r),
    onAccept: (res) => accepted.push(res.recordKey),
    onGiveUp: (rec) => givenUp.push(rec.recordKey),
    ...(options.events
      ? { onUnitComplete: (u: PlannedUnit, key: string) => completed.push(`${u.unitId}@${key}`), onLeaseExpired: (u: string, key: string) => expired.push(`${u}@${key}`) }
      : {}),
    ...(options.maxHolders !== undefined ? { maxHolders: options.maxHolders } : {}),
    now: () => now,
  });
  return { s, units, later, recs, accepted, givenUp, completed, expired, tick: (ms: number) => (now += ms), now: () => now };
}

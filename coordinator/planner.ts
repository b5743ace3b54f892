// Cuts the records in scope into work units: one whole group (metadata.group_id), or several small
// groups of one track; a group is split only when its payload is over maxGroupBytes (otherwise the
// chunks of a reranking query share an agent and its prefix cache). Units come out longest first,
// a track's units together. Records over maxRecordBytes are never sent (see oversizeRecords).
import type { RecordEntry } from "./suite-index.js";

export interface PlannedUnit {
  unitId: string;
  track: string;
  family: string;
  groupIds: string[];
  /** In file order. */
  records: RecordEntry[];
  /** Estimated work (see recordCost). */
  cost: number;
  questions: number;
}

export interface PlanLimits {
  /** Most records in a unit made of several groups (a bigger group still makes one unit). Default 64. */
  maxRecords: number;
  /** Most questions in such a unit. Default 512. */
  maxQuestions: number;
  /**
   * Most payload bytes in such a unit. Default 1 MiB: keeps a WorkUnit well under gRPC's default
   * 4 MiB receive limit unless one group alone is bigger.
   */
  maxPayloadBytes: number;
  /**
   * A group with more payload than this is cut into units by bytes (default 16 MiB): sent whole, a
   * huge group made a message no agent would take (issue 14).
   */
  maxGroupBytes?: number;
  /** A record with more payload than this is never sent; it is committed with an error per question (default 128 MiB, under the agent's 256 MiB receive limit). */
  maxRecordBytes?: number;
}

// Stryker disable next-line ObjectLiteral: not equivalent but a static (module-load) mutant, which the vitest runner does not reload, so it shows as surviving; "the default limits are the documented ones" (planner-limits.test.ts) fails with {} (checked by hand)
export const DEFAULT_PLAN_LIMITS: Required<PlanLimits> = { maxRecords: 64, maxQuestions: 512, maxPayloadBytes: 1 << 20, maxGroupBytes: 16 << 20, maxRecordBytes: 128 << 20 };

export function payloadBytes(r: RecordEntry): number {
  return r.stateBytes + r.questionsBytes;
}

/** Records too large to send: the coordinator commits them with an error naming their size instead. */
export function oversizeRecords(records: readonly RecordEntry[], limits: Pick<PlanLimits, "maxRecordBytes">): Set<RecordEntry> {
  return new Set(records.filter((r) => payloadBytes(r) > (limits.maxRecordBytes ?? DEFAULT_PLAN_LIMITS.maxRecordBytes)));
}

/** Tokens (roughly bytes) an engine reads per question beyond its text: the label read itself. */
const PER_QUESTION_COST = 16;

/**
 * Estimated work of one record: the state is read once (prefix caching makes every further
 * question reuse it), then each question adds its instructions and options plus one label read.
 */
export function recordCost(r: RecordEntry): number {
  return r.stateBytes + r.questionsBytes + PER_QUESTION_COST * r.questionCount;
}

export interface TrackToPlan {
  track: string;
  family: string;
  /** Records still to do, in file order. */
  records: readonly RecordEntry[];
}

interface Group {
  id: string;
  records: RecordEntry[];
  cost: number;
  questions: number;
  bytes: number;
}

export function planUnits(tracks: readonly TrackToPlan[], limits: PlanLimits = DEFAULT_PLAN_LIMITS): PlannedUnit[] {
  const perTrack: Array<{ cost: number; track: string; units: PlannedUnit[] }> = [];
  for (const t of tracks) {
    const units = unitsOfTrack(t, limits);
    // Stryker disable next-line ConditionalExpression: a track without units adds nothing to the flat list below either (this only skips its entry)
    if (units.length === 0) continue;
    units.sort((a, b) => b.cost - a.cost || compareIds(a.unitId, b.unitId));
    perTrack.push({ cost: units.reduce((s, u) => s + u.cost, 0), track: t.track, units });
  }
  perTrack.sort(
    (a, b) =>
      b.cost - a.cost ||
      // Stryker disable next-line EqualityOperator: track names are distinct, so `<=` is `<`
      (a.track < b.track
        ? -1
        : // Stryker disable next-line ConditionalExpression,EqualityOperator: names are distinct (so `>=` is `>`), and V8's sort only asks whether the comparator is below 0, so 0 for "after" orders as 1 does
          a.track > b.track
          ? 1
          : 0),
  );
  return perTrack.flatMap((t) => t.units);
}

function unitsOfTrack(t: TrackToPlan, limits: PlanLimits): PlannedUnit[] {
  const groups = new Map<string, Group>();
  for (const r of t.records) {
    let g = groups.get(r.groupId);
    if (!g) groups.set(r.groupId, (g = { id: r.groupId, records: [], cost: 0, questions: 0, bytes: 0 }));
    g.records.push(r);
    g.cost += recordCost(r);
    g.questions += r.questionCount;
    g.bytes += r.stateBytes + r.questionsBytes;
  }
  const units: PlannedUnit[] = [];
  const pieces = [...groups.values()].flatMap((g) =>
    // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator: cutGroup gives a group of at most maxGroupBytes, or of one record, back whole (one piece, same records, cost and bytes), so cutting it anyway changes nothing
    g.bytes > (limits.maxGroupBytes ?? DEFAULT_PLAN_LIMITS.maxGroupBytes) && g.records.length > 1
      ? cutGroup(g, limits.maxGroupBytes ?? DEFAULT_PLAN_LIMITS.maxGroupBytes)
      : [g],
  );
  let open: Group[] = [];
  const close = () => {
    if (open.length === 0) return;
    const records = open.flatMap((g) => g.records);
    units.push({
      unitId: `${t.track}/${units.length}`,
      track: t.track,
      family: t.family,
      groupIds: open.map((g) => g.id),
      records,
      cost: open.reduce((s, g) => s + g.cost, 0),
      questions: open.reduce((s, g) => s + g.questions, 0),
    });
    open = [];
  };
  let recs = 0;
  let qs = 0;
  let bytes = 0;
  for (const g of pieces) {
    const fits =
      recs + g.records.length <= limits.maxRecords &&
      qs + g.questions <= limits.maxQuestions &&
      bytes + g.bytes <= limits.maxPayloadBytes;
    if (!fits) {
      close();
      recs = qs = bytes = 0;
    }
    open.push(g);
    recs += g.records.length;
    qs += g.questions;
    bytes += g.bytes;
  }
  close();
  return units;
}

/** Pieces of one group of at most `maxBytes` payload each (a single record beyond it alone), in file order. */
function cutGroup(g: Group, maxBytes: number): Group[] {
  const out: Group[] = [];
  let cur: Group | undefined;
  for (const r of g.records) {
    const b = payloadBytes(r);
    if (!cur || cur.bytes + b > maxBytes) out.push((cur = { id: g.id, records: [], cost: 0, questions: 0, bytes: 0 }));
    cur.records.push(r);
    cur.cost += recordCost(r);
    cur.questions += r.questionCount;
    cur.bytes += b;
  }
  return out;
}

function compareIds(a: string, b: string): number {
  // Stryker disable next-line EqualityOperator: unit ids are distinct, so `<=` is `<`
  return a < b
    ? -1
    : // Stryker disable next-line ConditionalExpression,EqualityOperator: ids are distinct (so `>=` is `>`), and V8's sort only asks whether the comparator is below 0, so 0 for "after" orders as 1 does
      a > b
      ? 1
      : 0;
}

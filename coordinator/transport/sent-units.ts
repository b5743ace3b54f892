// The records of the work units sent lately, by unit id, for the result decoder: a result names its
// unit before its run_id and payload digest (field order), so those two are matched byte for byte
// against the unit's own records and come back as the strings the suite index already holds. Made
// anew per result, they were two strings of ~55 and 64 characters per record, each hashed again by
// the first map it was looked up in (the run's index of 58k run_ids: the coordinator thread's
// `lookup`, 85 ms of a full-suite run in its profile). The question keys that follow are matched
// against the record's own (result-decoder.ts) the same way.
import type { RecordEntry } from "../suite-index.js";

/** The record a result answers: the index's entry (its run_id, payload digest and question keys). */
export type SentRecord = RecordEntry;

interface SentUnit {
  readonly records: readonly SentRecord[];
  /** Where the next answer is looked for first: results come back mostly in the unit's order. */
  next: number;
}

/** Units remembered at most (the oldest sent is forgotten first): more than any run holds in flight. */
const MAX_UNITS = 4096;
const units = new Map<string, SentUnit>();

/** Notes a unit as sent (again: a backup copy, a unit sent after a lease expired). */
export function rememberSentUnit(unitId: string, records: readonly SentRecord[]): void {
  units.delete(unitId);
  units.set(unitId, { records, next: 0 });
  if (units.size > MAX_UNITS) units.delete(units.keys().next().value!);
}

export function sentUnit(unitId: string): SentUnit | undefined {
  return units.get(unitId);
}

/** The unit's record whose run_id is the UTF-8 text buf[start, end); undefined when none is. */
export function sentRecordOf(unit: SentUnit, buf: Buffer, start: number, end: number): SentRecord | undefined {
  const { records } = unit;
  const n = records.length;
  for (let k = 0; k < n; k++) {
    const i = (unit.next + k) % n;
    const record = records[i]!;
    if (asciiEquals(record.recordKey, buf, start, end)) {
      unit.next = i + 1;
      return record;
    }
  }
  return undefined;
}

/**
 * Whether buf[start, end) is the UTF-8 text of `s`, for an `s` of ASCII characters only (any other
 * `s` never matches: its UTF-8 bytes are more than its length, or differ from its char codes).
 */
export function asciiEquals(s: string, buf: Buffer, start: number, end: number): boolean {
  if (s.length !== end - start) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80 || c !== buf[start + i]) return false;
  }
  return true;
}

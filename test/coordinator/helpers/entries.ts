// RecordEntry values for pure tests of the planner and scheduler (no spill file needed).
import { compactQuestions, OptionInterner, type RecordEntry } from "../../../coordinator/suite-index.js";

const interner = new OptionInterner();

export function entry(track: string, id: string, group: string, opts: { bytes?: number; questions?: number } = {}): RecordEntry {
  const n = opts.questions ?? 1;
  return {
    recordKey: `${track}:${id}`,
    id,
    groupId: group,
    payloadSha256: `sha-${id}`,
    offset: 0,
    stateBytes: opts.bytes ?? 100,
    questionsBytes: 50 * n,
    ...compactQuestions(
      Array.from({ length: n }, (_, i) => ({ key: n === 1 ? "label" : `q${i}`, options: ["A", "B", "C"] })),
      interner,
    ),
  };
}

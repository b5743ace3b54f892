// Assembles one suite record in the card's field order, with its `_evaluation` block.
import type { TrackShape } from "./track-shapes.js";
import { canonicalJson } from "../../common/canonical-json.js";
import { sha256Hex } from "../../common/sha256.js";

export interface SyntheticQuestion {
  type: "choice" | "noul";
  instructions: string;
  criteria: Record<string, string>;
}

export interface SyntheticRecord {
  id: string;
  family: string;
  split: "test";
  state: Record<string, string>;
  questions: Record<string, SyntheticQuestion>;
  expected: Record<string, string | boolean>;
  metadata: Record<string, unknown> & { source: string; origin: string; lang: string; group_id: string; stratum: string };
  scoring?: Record<string, unknown>;
  _evaluation: { run_id: string; dataset: string; track: string; group_id: string; payload_sha256: string };
}

export interface RecordParts {
  id: string;
  groupId: string;
  source: string;
  origin: string;
  stratum: string;
  state: Record<string, string>;
  questions: Record<string, SyntheticQuestion>;
  expected: Record<string, string | boolean>;
  /** Source-specific metadata fields, after the standard ones. */
  extra?: Record<string, unknown>;
  scoring?: Record<string, unknown>;
}

export function assembleRecord(shape: TrackShape, parts: RecordParts): SyntheticRecord {
  const record: SyntheticRecord = {
    id: parts.id,
    family: shape.family,
    split: "test",
    state: parts.state,
    questions: parts.questions,
    expected: parts.expected,
    metadata: {
      source: parts.source,
      origin: parts.origin,
      lang: shape.lang,
      group_id: parts.groupId,
      stratum: parts.stratum,
      ...parts.extra,
    },
    _evaluation: {
      run_id: `${shape.track}:${parts.id}`,
      dataset: parts.source,
      track: shape.track,
      group_id: parts.groupId,
      payload_sha256: sha256Hex(canonicalJson({ state: parts.state, questions: parts.questions })),
    },
  };
  if (parts.scoring) {
    // scoring sits before _evaluation, like the other gold fields.
    const { _evaluation, ...rest } = record;
    return { ...rest, scoring: parts.scoring, _evaluation };
  }
  return record;
}

/** Option codes A..Z, then AA, AB, ... (spreadsheet columns). */
export function letterCode(index: number): string {
  let n = index;
  let code = "";
  do {
    code = String.fromCharCode(65 + (n % 26)) + code;
    n = Math.floor(n / 26) - 1;
  } while (n >= 0);
  return code;
}

/** "5 to 12" -> [5, 12]; a number n -> [n, n]. */
export function optionRange(options: unknown): [number, number] | undefined {
  if (typeof options === "number") return [options, options];
  if (typeof options !== "string") return undefined;
  const m = /(\d+)\s*to\s*(\d+)/.exec(options);
  if (m) return [Number(m[1]), Number(m[2])];
  const single = /^(\d+)\b/.exec(options);
  return single ? [Number(single[1]), Number(single[1])] : undefined;
}

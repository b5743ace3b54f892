// The gold of the suite as one pass over it hands it on: the coordinator reads each track file once
// (read, hash, check, index, spill) and gives the scorer of the same process each track's records
// without their payload, so the scorer does not read and parse the suite a second time. The records
// travel as JSON text (cheap to pass between threads) and keep every field scoring may read.
import type { SuiteRecord } from "./schema.js";

export type GoldMessage =
  | {
      kind: "track";
      track: string;
      family: string;
      relPath: string;
      /** Absolute path of the track file, for error messages. */
      path: string;
      /** JSON array of goldOf(record), in file order. */
      recordsJson: string;
      /** sha256 of the decompressed track file. */
      sha256: string;
    }
  | {
      /** Every selected track was sent and the suite matched its manifest. */
      kind: "end";
      identity: string;
    };

/** A record's gold with its line: the record without its state and without question and option texts (unless scoring names them). */
export type GoldRecord = SuiteRecord & { line: number };

/** What goes into GoldMessage.recordsJson for one record. */
export function goldOf(rec: SuiteRecord & { line: number; raw?: Buffer }): GoldRecord {
  const { state, questions, raw: _raw, ...rest } = rec;
  const by = (rec.scoring as { combine_chunks_by?: unknown } | undefined)?.combine_chunks_by;
  // A reranking record may name any field to combine its chunks by; keep what it names whole.
  const keepWhole = typeof by === "string" && (by.startsWith("state") || by.startsWith("questions"));
  if (keepWhole || Object.hasOwn(questions, "__proto__")) return { ...rest, state, questions };
  const slim: SuiteRecord["questions"] = {};
  for (const key in questions) {
    const q = questions[key]!;
    const criteria: Record<string, string> = {};
    for (const option in q.criteria) {
      if (option === "__proto__") return { ...rest, state: {}, questions };
      criteria[option] = "";
    }
    slim[key] = { type: q.type, instructions: "", criteria };
  }
  return { ...rest, state: {}, questions: slim };
}

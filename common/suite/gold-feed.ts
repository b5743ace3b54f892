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
      /**
       * JSON Lines of goldOf(record), in file order: parsed a record at a time, each record's
       * objects die young (one JSON array of a whole track left hundreds of MB of old-generation
       * garbage in the scorer's thread).
       */
      recordsJsonl: string;
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

/** The records of GoldMessage.recordsJsonl, parsed one at a time as they are iterated. */
export function* goldRecordsOf(recordsJsonl: string): Generator<GoldRecord> {
  for (let start = 0; start < recordsJsonl.length; ) {
    let end = recordsJsonl.indexOf("\n", start);
    if (end < 0) end = recordsJsonl.length;
    if (end > start) yield JSON.parse(recordsJsonl.slice(start, end)) as GoldRecord;
    start = end + 1;
  }
}

/** What goes into GoldMessage.recordsJsonl for one record (one line). */
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

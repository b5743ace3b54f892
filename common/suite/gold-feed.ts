// The gold of the suite as one pass over it hands it on: the coordinator reads each track file once
// (read, hash, check, index, spill) and gives the scorer of the same process what scoring reads of
// each track's records, so the scorer does not read and parse the suite a second time; and, for a
// resumed run, when each track's committed results may be read. The records travel as UTF-8 JSON
// Lines in chunks of whole lines, moved between threads (transferred), not copied.
import { SMALL_BUFFER_BYTES } from "../small-buffer.js";
import type { RetrievalScoring, ScoredChunk, ScoredRecord, SuiteRecord } from "./schema.js";
import { derivedDocument } from "./question-document.js";
import { withExactTexts, type TextsAsBytes } from "./record-texts.js";

export type GoldMessage =
  | {
      kind: "track";
      track: string;
      family: string;
      relPath: string;
      /** Absolute path of the track file, for error messages. */
      path: string;
      /**
       * JSON Lines of goldLine(record), in file order, as UTF-8 in chunks of whole lines (GoldLines).
       * Bytes, not a string: a string is copied each time it crosses a thread (reader, coordinator,
       * scorer), and a track of Vietnamese text is a two-byte string of 25 MB; chunks move without a
       * copy (goldTransferList). Parsed a record at a time: each record's objects die young.
       */
      records: Uint8Array[];
      /** sha256 of the decompressed track file. */
      sha256: string;
    }
  | {
      /**
       * The coordinator has scanned the track's results file (its torn last line, if any, cut off)
       * and is about to hand out its units: its committed results may be read now. Sent after the
       * track's gold; a scorer of a resumed run replays that file then, while the rest is read.
       */
      kind: "resultsScanned";
      track: string;
      family: string;
    }
  | {
      /** Every selected track was sent and the suite matched its manifest. */
      kind: "end";
      identity: string;
    };

/** A record's gold with its line: what scoring reads of it (goldLine). */
export type GoldRecord = (ScoredRecord | ScoredChunk) & { line: number; [field: string]: unknown };

/** Bytes of a chunk of GoldLines (a longer line gets a chunk of its own). */
export const GOLD_CHUNK_BYTES = SMALL_BUFFER_BYTES;

/** Builds GoldMessage.records: one JSON text per line, into chunks of whole lines. */
export class GoldLines {
  private readonly chunks: Uint8Array[] = [];
  private chunk: Buffer | undefined;
  private used = 0;

  push(json: string): void {
    // At most 3 UTF-8 bytes per UTF-16 unit: the exact length is counted only when that bound does not fit.
    let need = json.length * 3 + 1;
    if (!this.chunk || this.used + need > this.chunk.length) {
      need = Buffer.byteLength(json, "utf8") + 1;
      if (!this.chunk || this.used + need > this.chunk.length) {
        this.close();
        // allocUnsafe of this size is never a slice of Node's shared pool: its buffer can be transferred.
        this.chunk = Buffer.allocUnsafe(Math.max(GOLD_CHUNK_BYTES, need));
      }
    }
    this.used += this.chunk.write(json, this.used, "utf8");
    this.chunk[this.used++] = 0x0a;
  }

  /** The chunks, the last one cut to what it holds. */
  finish(): Uint8Array[] {
    this.close();
    return this.chunks;
  }

  private close(): void {
    if (!this.chunk || this.used === 0) return;
    // A mostly empty last chunk is copied to its size: it may be held until the scorer takes it.
    // Plain Uint8Arrays: what a chunk is on the other side of a thread.
    const { buffer, byteOffset } = this.chunk;
    this.chunks.push(this.used * 2 < this.chunk.length ? new Uint8Array(buffer.slice(byteOffset, byteOffset + this.used)) : new Uint8Array(buffer, byteOffset, this.used));
    this.chunk = undefined;
    this.used = 0;
  }
}

/** The buffers of a track's gold chunks (GoldMessage.records), to transfer with the message that holds them. */
export function goldTransferList(records: readonly Uint8Array[] | undefined): ArrayBuffer[] {
  return records ? [...new Set(records.map((c) => c.buffer as ArrayBuffer))] : [];
}

/** The records of GoldMessage.records, parsed one at a time as they are iterated. */
export function* goldRecordsOf(records: readonly Uint8Array[]): Generator<GoldRecord> {
  for (const chunk of records) {
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    for (let start = 0; start < bytes.length; ) {
      let end = bytes.indexOf(0x0a, start);
      if (end < 0) end = bytes.length;
      if (end > start) yield JSON.parse(bytes.toString("utf8", start, end)) as GoldRecord;
      start = end + 1;
    }
  }
}

/**
 * What goes into GoldMessage.records for one record (one JSON line): the fields scoring reads
 * (ScoredRecord), no more. The scorer's thread parses the whole suite's gold while the suite is read:
 * the full synthetic suite's records less state and texts were 87 MB of JSON, these are 37 MB. Written
 * as text, not built as an object and stringified: a reranking record's questions are dozens of keys
 * no other record has, and an object of them cost the reader thread 2-3x the text.
 */
export function goldLine(rec: SuiteRecord & TextsAsBytes & { line: number; raw?: Buffer }): string {
  const by = (rec.scoring as { combine_chunks_by?: unknown } | undefined)?.combine_chunks_by;
  // A reranking record may combine its chunks by any field: then every field but the texts goes.
  if (by !== undefined && by !== "metadata.group_id") return JSON.stringify(wholeGold(rec, by));
  const { scoring } = rec;
  if (scoring?.type === "retrieval_ranking") {
    const chunk = chunkGoldLine(rec, scoring);
    if (chunk !== undefined) return chunk;
  }
  // Keys are written as JSON strings, "__proto__" too: the scorer's parse makes each an own key.
  let questions = "";
  for (const key in rec.questions) {
    const q = rec.questions[key]!;
    let body = '{"type":"noul"}';
    if (q.type !== "noul") {
      let criteria = "";
      for (const option in q.criteria) criteria += (criteria === "" ? "" : ",") + JSON.stringify(option) + ':""';
      body = `{"type":"choice","criteria":{${criteria}}}`;
    }
    questions += (questions === "" ? "" : ",") + JSON.stringify(key) + ":" + body;
  }
  const reranking = scoring?.type === "retrieval_ranking";
  // A reranking record's grades are its qrels: its expected is not read.
  const expected = reranking ? "{}" : JSON.stringify(rec.expected);
  const scored = scoring === undefined ? "" : `,"scoring":${JSON.stringify(reranking ? withoutDerivedDocuments(scoring, rec.questions) : scoring)}`;
  return `{"_evaluation":${evaluationJson(rec)},"metadata":${metadataJson(rec)},"questions":{${questions}},"expected":${expected}${scored},"line":${rec.line}}`;
}

const evaluationJson = (rec: SuiteRecord) => `{"run_id":${JSON.stringify(rec._evaluation.run_id)}}`;
const metadataJson = (rec: SuiteRecord) => `{"group_id":${JSON.stringify(rec.metadata.group_id)},"lang":${JSON.stringify(rec.metadata.lang)}}`;

/**
 * A reranking record's gold as a ScoredChunk: lists where the record has objects of keys no other
 * record has. Undefined when a question is not noul (the object form then carries it to the
 * scorer, which refuses it naming the question).
 */
function chunkGoldLine(rec: SuiteRecord & { line: number }, scoring: RetrievalScoring): string | undefined {
  let keys = "";
  for (const key in rec.questions) {
    if (rec.questions[key]!.type !== "noul") return undefined;
    keys += (keys === "" ? "" : ",") + JSON.stringify(key);
  }
  const { qrels, ...rest } = withoutDerivedDocuments(scoring, rec.questions);
  let documents = "";
  let grades = "";
  for (const doc in qrels) {
    documents += (documents === "" ? "" : ",") + JSON.stringify(doc);
    grades += (grades === "" ? "" : ",") + JSON.stringify(qrels[doc]);
  }
  return `{"_evaluation":${evaluationJson(rec)},"metadata":${metadataJson(rec)},"questionKeys":[${keys}],"qrelDocuments":[${documents}],"qrelGrades":[${grades}],"scoring":${JSON.stringify(rest)},"line":${rec.line}}`;
}

/** The record less its state and texts, for a record whose chunks are combined by a field other than its group. */
function wholeGold(rec: SuiteRecord & TextsAsBytes & { line: number; raw?: Buffer }, by: unknown): GoldRecord {
  const { state, questions, raw: _raw, textsAsBytes: _bytes, ...rest } = rec;
  // Kept whole where it names a text (state or questions).
  const keepWhole = typeof by === "string" && (by.startsWith("state") || by.startsWith("questions"));
  if (keepWhole || Object.hasOwn(questions, "__proto__")) {
    withExactTexts(rec);
    return { ...rest, state, questions };
  }
  const slim: SuiteRecord["questions"] = {};
  for (const key in questions) {
    const q = questions[key]!;
    const criteria: Record<string, string> = {};
    for (const option in q.criteria) {
      if (option === "__proto__") return { ...rest, state: {}, questions: withExactTexts(rec).questions };
      criteria[option] = "";
    }
    slim[key] = { type: q.type, instructions: "", criteria };
  }
  return { ...rest, state: {}, questions: slim };
}

/**
 * A reranking block without field_to_document when it maps each of the record's questions to the
 * document the scorer derives anyway (derivedDocument):
 * most of the suite's reranking records, 9 MB of the gold.
 */
function withoutDerivedDocuments(scoring: RetrievalScoring, questions: Readonly<Record<string, unknown>>): RetrievalScoring {
  const f2d = scoring.field_to_document;
  if (!f2d) return scoring;
  for (const key in questions) {
    // An unmapped key (undefined) or one inherited from Object.prototype (never a string) keeps the block.
    if (f2d[key] !== derivedDocument(key)) return scoring;
  }
  const { field_to_document: _derived, ...rest } = scoring;
  return rest;
}

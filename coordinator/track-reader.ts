// The one pass over one selected track file at coordinator start: read, decompress, hash, parse and
// check each record (readCheckedTrack, the shared suite check), take its payload bytes (state and
// questions as the line has them) into blocks for the spill, note what the index keeps of it, and
// collect its gold for the scorer. Runs in the coordinator's thread or in a reader thread
// (suite-reader-main.ts); what it gives back is plain data that can cross between threads.
import { FormatError } from "../common/errors.js";
import { NOUL_KEYS } from "../common/results/index.js";
import { GoldLines, goldLine, readCheckedTrack, withExactTexts, type Suite, type TrackFile } from "../common/suite/index.js";
import { SMALL_BUFFER_BYTES } from "../common/small-buffer.js";
import { payloadSpans } from "./payload-spans.js";

/** A record as read, before the index places it: offsets are within its block. */
export interface ReadEntry {
  line: number;
  runId: string;
  id: string;
  groupId: string;
  payloadSha256: string;
  /** Question keys in file order, joined by QUESTION_KEY_SEPARATOR (RecordEntry's form). */
  questionKeys: string;
  questionCount: number;
  /**
   * Option keys per question, in criteria order (NOUL_KEYS for noul); one list when every question
   * has the same. A reranking record's 25 questions cross to the index's thread as one string and
   * one list, not 25 keys and 25 lists (structured clone copies each).
   */
  options: Array<readonly string[]>;
  offset: number;
  stateBytes: number;
  questionsBytes: number;
}

/** Payload bytes of consecutive records and the records whose payloads they hold. */
export interface ReadBlock {
  bytes: Uint8Array;
  entries: ReadEntry[];
}

/** Bytes per block handed on (the spill writes blocks behind as they come). */
export const BLOCK_BYTES = SMALL_BUFFER_BYTES;

/** A question key may not hold the separator the index joins keys with. */
export const QUESTION_KEY_SEPARATOR = "\u0000";

/**
 * Reads one track file, calling onBlock with each full block of payload bytes (and the last one).
 * Throws the suite check's FormatError (file, line, field) or UsageError (manifest counts and hash).
 */
export async function readTrackFile(suite: Suite, file: TrackFile, options: { gold: boolean; onBlock: (block: ReadBlock) => void }): Promise<{ sha256: string; gold: Uint8Array[] | undefined }> {
  const gold = options.gold ? new GoldLines() : undefined;
  let block = Buffer.allocUnsafe(BLOCK_BYTES);
  let used = 0;
  let entries: ReadEntry[] = [];
  const handOn = () => {
    if (entries.length === 0) return;
    options.onBlock({ bytes: block.subarray(0, used), entries });
    block = Buffer.allocUnsafe(BLOCK_BYTES);
    used = 0;
    entries = [];
  };
  let sha256 = "";
  for await (const rec of readCheckedTrack(suite, file, (h) => (sha256 = h), { raw: true, textsAsBytes: true })) {
    let questionKeys = "";
    let questionCount = 0;
    const questionOptions: Array<readonly string[]> = [];
    let shared = true;
    for (const key in rec.questions) {
      if (key.includes(QUESTION_KEY_SEPARATOR)) throw new FormatError(file.path, rec.line, `questions.${key}`, "a question key may not contain a NUL character");
      const q = rec.questions[key]!;
      questionKeys = questionCount++ === 0 ? key : questionKeys + QUESTION_KEY_SEPARATOR + key;
      const options = q.type === "noul" ? NOUL_KEYS : Object.keys(q.criteria);
      if (shared && questionOptions.length > 0 && !sameKeys(questionOptions[0]!, options)) shared = false;
      questionOptions.push(options);
    }
    const raw = rec.raw;
    const spans = raw ? payloadSpans(raw) : undefined;
    let state: Buffer;
    let questions: Buffer;
    if (raw && spans) {
      state = raw.subarray(spans.stateStart, spans.stateEnd);
      questions = raw.subarray(spans.questionsStart, spans.questionsEnd);
    } else {
      const exact = withExactTexts(rec);
      state = Buffer.from(JSON.stringify(exact.state), "utf8");
      questions = Buffer.from(JSON.stringify(exact.questions), "utf8");
    }
    const size = state.length + questions.length;
    if (used + size > block.length) {
      handOn();
      if (size > block.length) block = Buffer.allocUnsafe(size);
    }
    entries.push({
      line: rec.line,
      runId: rec._evaluation.run_id,
      id: rec.id,
      groupId: rec.metadata.group_id,
      payloadSha256: rec._evaluation.payload_sha256 ?? "",
      questionKeys,
      questionCount,
      options: shared && questionOptions.length > 1 ? [questionOptions[0]!] : questionOptions,
      offset: used,
      stateBytes: state.length,
      questionsBytes: questions.length,
    });
    used += state.copy(block, used);
    used += questions.copy(block, used);
    gold?.push(goldLine(rec));
  }
  handOn();
  return { sha256, gold: gold?.finish() };
}

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

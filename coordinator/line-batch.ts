// Accepted results on their way to the results writer's thread (line-writer-main.ts), in a form that
// costs the coordinator's thread little to make: numbers in typed arrays that are moved, not copied,
// and the few strings a line needs. The line's text is written in the writer's thread, byte for
// byte what writeResultLine gives in this one (the text, String(double) and the garbage of both were
// over a third of the coordinator thread's CPU while it served results: coordinator-bench, --cpu-prof).
//
// Strings that recur (track, family, agent, method, option keys) are sent once and then named by
// number: the batch carries the table entries its writer has not seen yet.
import { AnsweredByList, lineHasErrors, type CommittedLine, type LineQuestions, type LineRecordHead, type ResultAnswer } from "../common/results/index.js";
import { RecordQuestions, type QuestionFields } from "./record-questions.js";

/** One batch of lines to write, in order; the typed arrays' buffers are transferred. */
export interface LineBatch {
  /** Lines in the batch. */
  count: number;
  ints: Int32Array;
  intCount: number;
  numbers: Float64Array;
  numberCount: number;
  strings: string[];
  /** Table entries first used in this batch, in order of their numbers. */
  newStrings: string[];
  newLists: string[][];
}

/** A record as a line names it: its head and its questions (keys in criteria order, option lists). */
export interface BatchRecord extends LineRecordHead, QuestionFields {}

const ACCEPTED = 1;
const WRITTEN = 2;
const CACHED_TOKENS_NULL = 1;
const APPROXIMATE = 2;
const HAS_ERRORS = 4;
const NO_COMPACT = -1;

/** Builds batches in the coordinator's thread; one encoder per writer (its tables follow the writer's). */
export class LineBatchEncoder {
  private readonly stringIds = new Map<string, number>();
  private readonly listIds = new WeakMap<readonly string[], number>();
  private listCount = 0;
  private ints = new Int32Array(4096);
  private numbers = new Float64Array(8192);
  private intCount = 0;
  private numberCount = 0;
  private count = 0;
  private strings: string[] = [];
  private newStrings: string[] = [];
  private newLists: string[][] = [];

  get size(): number {
    return this.count;
  }

  /** Probabilities in the batch so far: what its lines' texts mostly are (~20 bytes each). */
  get values(): number {
    return this.numberCount;
  }

  /** An accepted answer: its line is written in the writer's thread. */
  accepted(record: BatchRecord, qs: LineQuestions, answer: ResultAnswer, track: string, family: string, agentId: string): void {
    this.count++;
    const lists = record.optionLists;
    this.roomInts(17 + lists.length);
    this.int(ACCEPTED);
    this.int(this.stringId(track));
    this.int(this.stringId(family));
    this.int(this.stringId(agentId));
    this.int(lists.length);
    for (let i = 0; i < lists.length; i++) this.int(this.listId(lists[i]!));
    // The writer writes `errors` by the same test (writeResultLine).
    const errored = lineHasErrors(answer);
    this.int((answer.cachedTokens === null ? CACHED_TOKENS_NULL : 0) | (answer.approximate ? APPROXIMATE : 0) | (errored ? HAS_ERRORS : 0));
    this.int(answer.retries);
    this.int(record.questionCount);
    this.strings.push(record.recordKey, record.id, record.payloadSha256, record.questionKeys);
    this.roomNumbers(4);
    this.number(answer.latencyMs);
    this.number(answer.promptTokens);
    this.number(answer.cachedTokens ?? 0);
    this.number(answer.completionTokens);

    const compact = answer.compactProbs;
    if (!compact) this.int(NO_COMPACT);
    else {
      const { questions, values } = compact;
      this.roomInts(2 + questions.length);
      this.int(questions.length);
      let hint = 0;
      for (let k = 0; k < questions.length; k++) hint = this.questionKey(qs, questions[k]!, hint);
      this.int(values.length);
      this.roomNumbers(values.length);
      for (let v = 0; v < values.length; v++) this.number(values[v]!);
    }

    const by = answer.answeredBy instanceof AnsweredByList ? answer.answeredBy : AnsweredByList.fromRecord(answer.answeredBy);
    const { keys, methods } = by;
    this.roomInts(2 + 2 * keys.length);
    this.int(keys.length);
    let hint = 0;
    for (let k = 0; k < keys.length; k++) {
      hint = this.questionKey(qs, keys[k]!, hint);
      this.int(this.stringId(methods[k]!));
    }

    const { skipped } = answer;
    this.roomInts(1);
    this.int(skipped.length);
    for (let s = 0; s < skipped.length; s++) this.strings.push(skipped[s]!);
    if (errored) this.strings.push(JSON.stringify(answer.errors));
  }

  /**
   * A question key: its number among the record's questions, or -1 and the key itself (a key the
   * record has not). Returns where the next key is expected (`hint`: indexOf finds a key anywhere).
   */
  private questionKey(qs: LineQuestions, key: string, hint: number): number {
    const i = qs.indexOf(key, hint);
    this.int(i);
    if (i >= 0) return i + 1;
    this.strings.push(key);
    return hint;
  }

  /** A line already written in this thread (a record given up): its text as is. */
  written(line: CommittedLine): void {
    this.count++;
    this.roomInts(5);
    this.int(WRITTEN);
    this.int(this.stringId(line.track));
    this.int(this.stringId(line.family));
    this.int(line.scoredLength ?? -1);
    this.int(line.errored ? 1 : 0);
    this.strings.push(line.recordKey, line.text);
  }

  /** The batch so far, its buffers to transfer; the encoder starts the next one empty. */
  take(): { batch: LineBatch; transfer: ArrayBuffer[] } {
    const batch: LineBatch = {
      count: this.count,
      ints: this.ints,
      intCount: this.intCount,
      numbers: this.numbers,
      numberCount: this.numberCount,
      strings: this.strings,
      newStrings: this.newStrings,
      newLists: this.newLists,
    };
    // The next batch's arrays are as large as this one's were: a steady run allocates one pair per batch.
    this.ints = new Int32Array(this.ints.length);
    this.numbers = new Float64Array(this.numbers.length);
    this.intCount = this.numberCount = this.count = 0;
    this.strings = [];
    this.newStrings = [];
    this.newLists = [];
    return { batch, transfer: [batch.ints.buffer as ArrayBuffer, batch.numbers.buffer as ArrayBuffer] };
  }

  private int(n: number): void {
    this.ints[this.intCount++] = n;
  }

  private number(n: number): void {
    this.numbers[this.numberCount++] = n;
  }

  private roomInts(n: number): void {
    if (this.intCount + n <= this.ints.length) return;
    const bigger = new Int32Array(Math.max(this.ints.length * 2, this.intCount + n));
    bigger.set(this.ints.subarray(0, this.intCount));
    this.ints = bigger;
  }

  private roomNumbers(n: number): void {
    if (this.numberCount + n <= this.numbers.length) return;
    const bigger = new Float64Array(Math.max(this.numbers.length * 2, this.numberCount + n));
    bigger.set(this.numbers.subarray(0, this.numberCount));
    this.numbers = bigger;
  }

  private stringId(s: string): number {
    let id = this.stringIds.get(s);
    if (id === undefined) {
      this.stringIds.set(s, (id = this.stringIds.size));
      this.newStrings.push(s);
    }
    return id;
  }

  private listId(list: readonly string[]): number {
    let id = this.listIds.get(list);
    if (id === undefined) {
      this.listIds.set(list, (id = this.listCount++));
      this.newLists.push([...list]);
    }
    return id;
  }
}

/** A line to write, as the writer's thread reads it from a batch. */
export type BatchLine =
  | { kind: "accepted"; record: LineRecordHead; qs: LineQuestions; answer: ResultAnswer; track: string; family: string; agentId: string }
  | { kind: "written"; line: CommittedLine };

/** Reads batches in the writer's thread; one decoder per encoder (its tables follow the encoder's). */
export class LineBatchDecoder {
  private readonly stringTable: string[] = [];
  private readonly listTable: string[][] = [];

  /** Calls `each` with the batch's lines, in order. */
  read(batch: LineBatch, each: (line: BatchLine) => void): void {
    for (const s of batch.newStrings) this.stringTable.push(s);
    for (const l of batch.newLists) this.listTable.push(l);
    const { ints, numbers, strings } = batch;
    const table = this.stringTable;
    let ip = 0;
    let np = 0;
    let sp = 0;
    for (let n = 0; n < batch.count; n++) {
      const kind = ints[ip++];
      const track = table[ints[ip++]!]!;
      const family = table[ints[ip++]!]!;
      if (kind === WRITTEN) {
        const scoredLength = ints[ip++]!;
        const errored = ints[ip++] === 1;
        const recordKey = strings[sp++]!;
        const text = strings[sp++]!;
        each({ kind: "written", line: { recordKey, track, family, text, errored, ...(scoredLength >= 0 ? { scoredLength } : {}) } });
        continue;
      }
      if (kind !== ACCEPTED) throw new Error(`line batch: unknown entry kind ${kind} at line ${n}`);
      const agentId = table[ints[ip++]!]!;
      const listCount = ints[ip++]!;
      const optionLists: string[][] = [];
      for (let i = 0; i < listCount; i++) optionLists.push(this.listTable[ints[ip++]!]!);
      const flags = ints[ip++]!;
      const retries = ints[ip++]!;
      const questionCount = ints[ip++]!;
      const record = { recordKey: strings[sp++]!, id: strings[sp++]!, payloadSha256: strings[sp++]! };
      const qs = new RecordQuestions({ questionKeys: strings[sp++]!, questionCount, optionLists });
      const latencyMs = numbers[np++]!;
      const promptTokens = numbers[np++]!;
      const cachedTokens = numbers[np++]!;
      const completionTokens = numbers[np++]!;

      const compactCount = ints[ip++]!;
      let compactProbs: ResultAnswer["compactProbs"];
      if (compactCount !== NO_COMPACT) {
        const listed = keysAt(ints, ip, compactCount, 1, qs.keys, strings, sp);
        ip += compactCount;
        sp += listed.strings;
        const valueCount = ints[ip++]!;
        // A view of the batch's numbers: the writer reads values by index.
        compactProbs = { questions: listed.keys, values: numbers.subarray(np, np + valueCount) };
        np += valueCount;
      }

      const pairCount = ints[ip++]!;
      const methods: string[] = [];
      for (let k = 0; k < pairCount; k++) methods.push(table[ints[ip + 2 * k + 1]!]!);
      // The pairs' keys are every other int (a method's number after each).
      const by = keysAt(ints, ip, pairCount, 2, qs.keys, strings, sp);
      ip += 2 * pairCount;
      sp += by.strings;
      const skippedCount = ints[ip++]!;
      const skipped: string[] = [];
      for (let s = 0; s < skippedCount; s++) skipped.push(strings[sp++]!);
      const errors = flags & HAS_ERRORS ? (JSON.parse(strings[sp++]!) as Record<string, string>) : {};
      // One shape for every answer (a spread of an optional field made each a slow clone).
      const answer: ResultAnswer = {
        compactProbs,
        skipped,
        errors,
        latencyMs,
        promptTokens,
        cachedTokens: flags & CACHED_TOKENS_NULL ? null : cachedTokens,
        completionTokens,
        // The pairs were a list already (keys distinct, in JSON order): of() keeps them as they are.
        answeredBy: AnsweredByList.of(by.keys, methods, true),
        retries,
        approximate: (flags & APPROXIMATE) !== 0,
      };
      each({ kind: "accepted", record, qs, answer, track, family, agentId });
    }
  }
}

/**
 * Keys named by `count` indices, `stride` apart from `at` (a record question's number, or -1: the next
 * of `strings` from `sp`). Every question of the record in its order, the common case, is the
 * record's own array.
 */
function keysAt(ints: Int32Array, at: number, count: number, stride: number, questionKeys: readonly string[], strings: readonly string[], sp: number): { keys: string[]; strings: number } {
  let inOrder = count === questionKeys.length;
  for (let k = 0; inOrder && k < count; k++) inOrder = ints[at + k * stride] === k;
  if (inOrder) return { keys: questionKeys as string[], strings: 0 };
  const keys: string[] = [];
  let used = 0;
  for (let k = 0; k < count; k++) {
    const i = ints[at + k * stride]!;
    keys.push(i < 0 ? strings[sp + used++]! : questionKeys[i]!);
  }
  return { keys, strings: used };
}

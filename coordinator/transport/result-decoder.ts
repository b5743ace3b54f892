// Decodes an agent's result messages (AgentMessage.result, AgentMessage.results) straight from their
// protobuf bytes into IncomingResults: results are nearly every message a coordinator receives, and
// the generic decode (a protobufjs message, then toObject, then the domain copy) cost more than all
// else done per record. Other messages go through the generic decoder. The protobuf rules followed:
// unknown fields are skipped, the last of a repeated singular field wins (protobufjs does the same),
// a map's later entry for a key wins, packed and unpacked repeated doubles are both read.
import { AnsweredByList } from "../../common/results/index.js";
import type { IncomingResult } from "../incoming-result.js";
import { asciiEquals, sentRecordOf, sentUnit, type SentRecord } from "./sent-units.js";
import { RecordQuestions } from "../record-questions.js";

/** The oneof field numbers of AgentMessage (proto/udm/v1/orchestrator.proto). */
const AGENT_RESULT = 3;
const AGENT_RESULTS = 6;
const AGENT_KINDS = new Set([1, 2, 3, 4, 5, 6]);

const VARINT = 0;
const FIXED64 = 1;
const LENGTH = 2;
const FIXED32 = 5;

/** Truncated or malformed bytes; the gRPC call fails with it, as for any undecodable message. */
export class WireDecodeError extends Error {}

class Reader {
  pos: number;
  constructor(
    readonly buf: Buffer,
    start: number,
    readonly end: number,
  ) {
    this.pos = start;
  }

  varint(): number {
    const { buf, end } = this;
    let result = 0;
    let shift = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= end) throw new WireDecodeError("truncated varint");
      const b = buf[this.pos++]!;
      result += (b & 0x7f) * shift;
      if (b < 0x80) return result;
      shift *= 128;
    }
    throw new WireDecodeError("varint longer than 10 bytes");
  }

  /** A length prefix and the end of what it covers. */
  lengthEnd(): number {
    const len = this.varint();
    const end = this.pos + len;
    if (end > this.end) throw new WireDecodeError("length past the end of the message");
    return end;
  }

  /** `keysOf`: a record whose question keys the string is likely one of (the index's string is returned then). */
  string(keysOf?: SentRecord): string {
    const end = this.lengthEnd();
    matchedIndex = -1;
    const s = (keysOf && questionKey(keysOf, this.buf, this.pos, end)) ?? utf8(this.buf, this.pos, end);
    this.pos = end;
    return s;
  }

  double(): number {
    if (this.pos + 8 > this.end) throw new WireDecodeError("truncated double");
    const v = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return v;
  }

  skip(wireType: number): void {
    switch (wireType) {
      case VARINT:
        this.varint();
        return;
      case FIXED64:
        this.pos += 8;
        break;
      case LENGTH:
        this.pos = this.lengthEnd();
        return;
      case FIXED32:
        this.pos += 4;
        break;
      default:
        throw new WireDecodeError(`unsupported wire type ${wireType}`);
    }
    if (this.pos > this.end) throw new WireDecodeError("truncated field");
  }
}

/**
 * The record's question key whose UTF-8 text is buf[start, end), looked for after the key found
 * last (results list their questions in criteria order, answered_by too); undefined when it is not
 * there. A reranking record's ~25 document keys are its own: as decoded strings, each was new.
 */
function questionKey(record: SentRecord, buf: Buffer, start: number, end: number): string | undefined {
  const qs = RecordQuestions.of(record);
  const { keys } = qs;
  const n = keys.length;
  const from = keyCursor.record === record ? keyCursor.next : 0;
  for (let k = 0; k < n; k++) {
    const i = (from + k) % n;
    if (asciiEquals(keys[i]!, buf, start, end)) {
      keyCursor.record = record;
      keyCursor.next = i + 1;
      matchedIndex = i;
      return keys[i];
    }
    // Stryker disable next-line ConditionalExpression,EqualityOperator: how far the look goes: the whole record would find the same key, slower
    if (k >= 1) break;
  }
  return undefined;
}

/** Where questionKey looks first: after the key of the same record it found last. */
const keyCursor: { record: SentRecord | undefined; next: number } = { record: undefined, next: 0 };

/** The question index of the key Reader.string(keysOf) read last; -1 when it was none of the record's. */
let matchedIndex = -1;

/** Strings decoded lately, by a hash of their bytes (INTERN_SLOTS of them, the last one per slot). */
const INTERN_SLOTS = 4096;
const interned: Array<string | undefined> = new Array<string | undefined>(INTERN_SLOTS).fill(undefined);
/** Longest string looked up in `interned`: question keys, method names, unit ids. */
const INTERN_MAX_BYTES = 48;

/**
 * The UTF-8 text of buf[start, end). Every result repeats its record's question keys (in probs,
 * prob_questions, skipped, errors, answered_by), its engine methods and its unit id: a short ASCII
 * string seen lately is returned as the string already made, so decoding a result makes no new
 * string for them (built a character at a time, they were 125 MB of the 978 MB the coordinator's
 * thread allocated over a full-suite coordinator-bench run).
 */
function utf8(buf: Buffer, start: number, end: number): string {
  const n = end - start;
  if (n === 0) return "";
  if (n > INTERN_MAX_BYTES) return buf.toString("utf8", start, end);
  // The slot is picked by the length and the first 4 and last 8 bytes (where question keys, unit
  // ids and method names differ); a hit is then compared byte for byte, which also proves the
  // bytes ASCII (only ASCII strings are kept). Hashing every byte cost as much as the comparison.
  let h = Math.imul(0x811c9dc5 ^ n, 0x01000193);
  const head = Math.min(end, start + 4);
  for (let i = start; i < head; i++) h = Math.imul(h ^ buf[i]!, 0x01000193);
  for (let i = Math.max(head, end - 8); i < end; i++) h = Math.imul(h ^ buf[i]!, 0x01000193);
  const slot = (h ^ (h >>> 16)) & (INTERN_SLOTS - 1);
  const seen = interned[slot];
  if (seen !== undefined && asciiEquals(seen, buf, start, end)) return seen;
  for (let i = start; i < end; i++) if (buf[i]! >= 0x80) return buf.toString("utf8", start, end);
  const s = buf.toString("latin1", start, end);
  interned[slot] = s;
  return s;
}

function setKey<T>(obj: Record<string, T>, key: string, value: T): void {
  // "__proto__" as a plain assignment would replace the prototype instead of adding a key.
  if (key === "__proto__") Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

/**
 * The results an AgentMessage carries when it is a `result` or `results` message; undefined for
 * every other kind (decode those with the generic decoder). Throws WireDecodeError on bad bytes.
 */
export function decodeResults(buf: Buffer): IncomingResult[] | undefined {
  const r = new Reader(buf, 0, buf.length);
  let kind = 0;
  let start = 0;
  let end = 0;
  while (r.pos < r.end) {
    const tag = r.varint();
    const field = Math.floor(tag / 8);
    const wireType = tag & 7;
    if (AGENT_KINDS.has(field) && wireType === LENGTH) {
      kind = field;
      end = r.lengthEnd();
      start = r.pos;
      r.pos = end;
    } else r.skip(wireType);
  }
  if (kind === AGENT_RESULT) return [decodeRecordResult(buf, start, end)];
  if (kind !== AGENT_RESULTS) return undefined;
  const out: IncomingResult[] = [];
  const b = new Reader(buf, start, end);
  while (b.pos < b.end) {
    const tag = b.varint();
    if (tag === ((1 << 3) | LENGTH)) {
      const e = b.lengthEnd();
      out.push(decodeRecordResult(buf, b.pos, e));
      b.pos = e;
    } else b.skip(tag & 7);
  }
  return out;
}

// Reused by every decodeRecordResult (it runs to its end before the next); their entries past a
// result's count are left from earlier results and never read.
const scratchQuestions: string[] = [];
const scratchValues: number[] = [];
const scratchKeys: string[] = [];
const scratchMethods: string[] = [];
/** Per answered_by key, the record's question it is (-1: none of them). */
let scratchAnswered: Int32Array = new Int32Array(64);
/** Per question of the record, the serial of the result whose answered_by named it last. */
let namedBy: Int32Array = new Int32Array(64);
let serial = 0;

/**
 * Whether the first `n` answered_by keys are distinct questions of the record: known from the
 * indices they matched, so AnsweredByList need not look for a repeat with a Set of its own
 * (17 MB of what the coordinator's thread allocated over a full-suite run).
 */
function distinctQuestions(n: number): boolean {
  serial = (serial + 1) | 0;
  for (let k = 0; k < n; k++) {
    const i = scratchAnswered[k]!;
    if (i < 0) return false;
    if (i >= namedBy.length) namedBy = growInt32(namedBy, i + 1);
    if (namedBy[i] === serial) return false;
    namedBy[i] = serial;
  }
  return true;
}

function growInt32(a: Int32Array, atLeast: number): Int32Array {
  const bigger = new Int32Array(Math.max(atLeast, a.length * 2));
  bigger.set(a);
  return bigger;
}

/** Whether the first `n` of `b` are the strings of `a`, in order (answered_by's keys are usually prob_questions). */
function sameStrings(a: readonly string[], b: readonly string[], n: number): boolean {
  if (a.length !== n) return false;
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}

function decodeRecordResult(buf: Buffer, start: number, end: number): IncomingResult {
  const r = new Reader(buf, start, end);
  const res: IncomingResult = {
    unitId: "",
    recordKey: "",
    probs: {},
    skipped: [],
    errors: {},
    promptTokens: 0,
    cachedTokens: null,
    completionTokens: 0,
    requests: 0,
    latencyMs: 0,
    payloadSha256: "",
    answeredBy: AnsweredByList.EMPTY,
    retries: 0,
    approximate: false,
  };
  // Gathered in the reused arrays below, then copied at their exact length: pushed one by one into
  // new arrays, a reranking result's three lists of ~25 and its ~50 doubles were reallocated as they
  // grew (about 2 KB a result, the decoder's largest allocation).
  let questionCount = -1;
  let valueCount = -1;
  let answeredCount = 0;
  let unit: ReturnType<typeof sentUnit>;
  let sent: SentRecord | undefined;

  while (r.pos < r.end) {
    const tag = r.varint();
    const field = Math.floor(tag / 8);
    const wt = tag & 7;
    switch (field) {
      case 1:
        if (wt !== LENGTH) break;
        res.unitId = r.string();
        unit = sentUnit(res.unitId);
        continue;
      case 2: {
        if (wt !== LENGTH) break;
        const end = r.lengthEnd();
        // The run_id of a record of the unit named before it: the index's own string.
        sent = unit && sentRecordOf(unit, buf, r.pos, end);
        res.recordKey = sent ? sent.recordKey : utf8(buf, r.pos, end);
        r.pos = end;
        continue;
      }
      case 3:
        if (wt !== LENGTH) break;
        decodeProbsEntry(r, res.probs);
        continue;
      case 4:
        if (wt !== LENGTH) break;
        res.skipped.push(r.string());
        continue;
      case 5:
        if (wt !== LENGTH) break;
        decodeStringEntry(r, res.errors);
        continue;
      case 6:
        if (wt !== LENGTH) break;
        decodeUsage(r, res);
        continue;
      case 7:
        if (wt !== FIXED64) break;
        res.latencyMs = r.double();
        continue;
      case 8: {
        if (wt !== LENGTH) break;
        const end = r.lengthEnd();
        res.payloadSha256 = sent && asciiEquals(sent.payloadSha256, buf, r.pos, end) ? sent.payloadSha256 : utf8(buf, r.pos, end);
        r.pos = end;
        continue;
      }
      case 9:
        if (wt !== LENGTH) break;
        if (answeredCount === 0) keyCursor.next = 0;
        readStringEntry(r, sent);
        if (answeredCount >= scratchAnswered.length) scratchAnswered = growInt32(scratchAnswered, answeredCount + 1);
        scratchAnswered[answeredCount] = entryMatched;
        scratchKeys[answeredCount] = entryKey;
        scratchMethods[answeredCount++] = entryValue;
        continue;
      case 10:
        if (wt !== VARINT) break;
        res.retries = r.varint() % 4294967296;
        continue;
      case 11:
        if (wt !== VARINT) break;
        res.approximate = r.varint() !== 0;
        continue;
      case 12:
        if (wt !== LENGTH) break;
        if (questionCount < 0) {
          questionCount = 0;
          keyCursor.next = 0;
        }
        scratchQuestions[questionCount++] = r.string(sent);
        continue;
      case 13:
        if (valueCount < 0) valueCount = 0;
        if (wt === FIXED64) {
          scratchValues[valueCount++] = r.double();
          continue;
        }
        if (wt === LENGTH) {
          const e = r.lengthEnd();
          if ((e - r.pos) % 8 !== 0) throw new WireDecodeError("packed prob_values not a whole number of doubles");
          for (let p = r.pos; p < e; p += 8) scratchValues[valueCount++] = buf.readDoubleLE(p);
          r.pos = e;
          continue;
        }
        break;
    }
    r.skip(wt);
  }
  const questions = questionCount < 0 ? undefined : scratchQuestions.slice(0, questionCount);
  if (questions || valueCount >= 0) res.compactProbs = { questions: questions ?? [], values: valueCount < 0 ? [] : scratchValues.slice(0, valueCount) };
  if (answeredCount > 0) res.answeredBy = AnsweredByList.of(questions && sameStrings(questions, scratchKeys, answeredCount) ? questions : scratchKeys.slice(0, answeredCount), scratchMethods.slice(0, answeredCount), distinctQuestions(answeredCount));
  return res;
}

/** One map<string, Distribution> entry: key = 1, value = 2 (Distribution { map<string, double> p = 1 }). */
function decodeProbsEntry(r: Reader, into: Record<string, Record<string, number>>): void {
  const end = r.lengthEnd();
  let key = "";
  let dist: Record<string, number> = {};
  while (r.pos < end) {
    const tag = r.varint();
    if (tag === ((1 << 3) | LENGTH)) key = stringIn(r, end);
    else if (tag === ((2 << 3) | LENGTH)) {
      const dEnd = r.lengthEnd();
      if (dEnd > end) throw new WireDecodeError("length past the end of the message");
      dist = {};
      while (r.pos < dEnd) {
        const t = r.varint();
        if (t === ((1 << 3) | LENGTH)) decodeDoubleEntry(r, dist, dEnd);
        else skipIn(r, t & 7, dEnd);
      }
    } else skipIn(r, tag & 7, end);
  }
  setKey(into, key, dist);
}

/** One map<string, double> entry. */
function decodeDoubleEntry(r: Reader, into: Record<string, number>, outer: number): void {
  const end = r.lengthEnd();
  if (end > outer) throw new WireDecodeError("length past the end of the message");
  let key = "";
  let value = 0;
  while (r.pos < end) {
    const tag = r.varint();
    if (tag === ((1 << 3) | LENGTH)) key = stringIn(r, end);
    else if (tag === ((2 << 3) | FIXED64)) {
      if (r.pos + 8 > end) throw new WireDecodeError("truncated double");
      value = r.double();
    } else skipIn(r, tag & 7, end);
  }
  setKey(into, key, value);
}

/** One map<string, string> entry. */
function decodeStringEntry(r: Reader, into: Record<string, string>): void {
  readStringEntry(r);
  setKey(into, entryKey, entryValue);
}

// The entry readStringEntry read last (no pair allocated per entry), and the question index of its
// key when it was read against a record (-1: none of the record's).
let entryKey = "";
let entryValue = "";
let entryMatched = -1;

/** `keysOf`: the record whose question keys the entry's key is expected among. */
function readStringEntry(r: Reader, keysOf?: SentRecord): void {
  const end = r.lengthEnd();
  entryKey = "";
  entryValue = "";
  entryMatched = -1;
  while (r.pos < end) {
    const tag = r.varint();
    if (tag === ((1 << 3) | LENGTH)) {
      entryKey = stringIn(r, end, keysOf);
      entryMatched = matchedIndex;
    } else if (tag === ((2 << 3) | LENGTH)) entryValue = stringIn(r, end);
    else skipIn(r, tag & 7, end);
  }
}

function decodeUsage(r: Reader, res: IncomingResult): void {
  const end = r.lengthEnd();
  while (r.pos < end) {
    const tag = r.varint();
    const wt = tag & 7;
    if (wt !== VARINT) {
      skipIn(r, wt, end);
      continue;
    }
    const v = r.varint();
    switch (tag >>> 3) {
      case 1:
        res.promptTokens = v;
        break;
      case 2:
        res.cachedTokens = v;
        break;
      case 3:
        res.completionTokens = v;
        break;
      case 4:
        res.requests = v % 4294967296;
        break;
    }
  }
  if (r.pos > end) throw new WireDecodeError("field past the end of its message");
}

function stringIn(r: Reader, end: number, keysOf?: SentRecord): string {
  const s = r.string(keysOf);
  if (r.pos > end) throw new WireDecodeError("length past the end of the message");
  return s;
}

function skipIn(r: Reader, wireType: number, end: number): void {
  r.skip(wireType);
  if (r.pos > end) throw new WireDecodeError("field past the end of its message");
}

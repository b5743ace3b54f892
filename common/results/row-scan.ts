// What the results sealer (seal.ts) takes from one results line, read from the line's bytes without
// building the line: its run_id, whether its errors name a question, its answered_by's methods. The
// whole line is still checked to be JSON (a line corrupted mid-file must be found), but no string or
// object of it is made except the run_id and the method names. Parsing every line with JSON.parse
// made the sealer the main thread's largest cost in a run and grew its heap by 60-100 MB of line
// strings and probability objects over a full suite (bench/coordinator-bench).
//
// The scan decides only what it can decide exactly; anything else (not JSON, an escape in a key or
// in a value it reads, a key twice in answered_by, nesting deeper than MAX_DEPTH, whitespace other
// than JSON's) gives undefined, and the sealer parses that line as text (test/common/results/row-scan.test.ts
// holds the two to the same answers).

/** What a results line says of its record, as JSON.parse of the line would give it. */
export interface RowFacts {
  runId: string;
  /** `errors` is an object or array with at least one member. */
  errored: boolean;
  /** The values of `answered_by` when it is an object of strings only; else undefined. */
  methods: string[] | undefined;
  /**
   * The line is one that parseResultLine takes by its hand check (parse.ts plainResultLine): id,
   * track and family strings, probs an object, skipped an array of strings and errors an object of
   * strings, each where present. False leaves the line to the parse (which may still take it).
   */
  plain: boolean;
}

/** Nesting the scan follows; deeper lines are parsed as text. */
export const MAX_DEPTH = 64;

/** Most members of answered_by the scan checks for repeated keys; more are parsed as text. */
const MAX_ANSWERED_KEYS = 256;
/** answered_by's keys' bounds in the line being scanned (reused: a scan runs to its end before the next). */
const KEY_BOUNDS = new Int32Array(2 * MAX_ANSWERED_KEYS);
/** Method names read so far, as bytes and text: a run has a few, written once per question. */
const METHOD_NAMES: Array<{ bytes: Buffer; text: string }> = [];
const MAX_METHOD_NAMES = 16;

/** The text of bytes [from, to) (no escape in them), the same string each time for a name seen before. */
function methodName(b: Buffer, from: number, to: number): string {
  const length = to - from;
  for (const name of METHOD_NAMES) {
    if (name.bytes.length !== length) continue;
    let j = 0;
    while (j < length && name.bytes[j] === b[from + j]) j++;
    if (j === length) return name.text;
  }
  const text = b.toString("utf8", from, to);
  if (METHOD_NAMES.length < MAX_METHOD_NAMES) METHOD_NAMES.push({ bytes: Buffer.from(b.subarray(from, to)), text });
  return text;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
/** The escapes JSON allows besides \u: " \\ / b f n r t. */
const SIMPLE_ESCAPES = [QUOTE, BACKSLASH, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74];
const TRUE = Buffer.from("true");
const FALSE = Buffer.from("false");
const NULL = Buffer.from("null");
const RUN_ID = Buffer.from("run_id");
const ERRORS = Buffer.from("errors");
const ANSWERED_BY = Buffer.from("answered_by");
const STRING_FIELDS = [Buffer.from("id"), Buffer.from("track"), Buffer.from("family")];
const PROBS = Buffer.from("probs");
const SKIPPED = Buffer.from("skipped");

/** Thrown inside the scan when it cannot decide; never leaves this module. */
const UNDECIDED = Symbol("undecided");

/**
 * The facts of the line in bytes[start, end): RowFacts for a JSON object with a string run_id; null
 * for a line that is JSON but no record (blank, not an object, no string run_id); undefined when the
 * scan leaves the line to JSON.parse (including every line that is not JSON).
 */
export function scanResultRow(bytes: Buffer, start: number, end: number): RowFacts | null | undefined {
  try {
    return new RowScan(bytes, end).row(start);
  } catch (err) {
    if (err === UNDECIDED) return undefined;
    throw err;
  }
}

class RowScan {
  /** Where the last plainString's text starts (after its opening quote). */
  private textStart = 0;
  /** Set by another(): where the next member starts, or just past the closing bracket. */
  private next = 0;

  constructor(
    private readonly b: Buffer,
    private readonly end: number,
  ) {}

  /** The byte at i, or -1 past the line's end (the buffer goes on with the next lines). */
  private at(i: number): number {
    return i < this.end ? this.b[i]! : -1;
  }

  row(start: number): RowFacts | null {
    let i = this.ws(start);
    if (i === this.end) return null;
    if (this.at(i) !== OPEN_OBJECT) {
      this.atEnd(this.value(i, 0));
      return null;
    }
    // Each key may repeat: the last one counts, as in JSON.parse.
    let runId: [number, number] | undefined;
    let errored = false;
    let methods: string[] | undefined;
    // Per key of the plain shape, whether its last value has that shape (STRING_FIELDS, probs, skipped, errors).
    const shaped = [true, true, true, true, true, true];
    i = this.ws(i + 1);
    if (this.at(i) === CLOSE_OBJECT) {
      this.atEnd(i + 1);
      return null;
    }
    for (;;) {
      const keyEnd = this.plainString(i);
      const key = this.textStart;
      i = this.colon(keyEnd);
      if (this.bytesAre(key, keyEnd - 1, RUN_ID)) {
        if (this.at(i) === QUOTE) {
          const valueEnd = this.plainString(i);
          runId = [i + 1, valueEnd - 1];
          i = valueEnd;
        } else {
          runId = undefined;
          i = this.value(i, 1);
        }
      } else if (this.bytesAre(key, keyEnd - 1, ERRORS)) {
        const c = this.at(i);
        errored = (c === OPEN_OBJECT && this.at(this.ws(i + 1)) !== CLOSE_OBJECT) || (c === OPEN_ARRAY && this.at(this.ws(i + 1)) !== CLOSE_ARRAY);
        if (c === OPEN_OBJECT) [shaped[5], i] = this.onlyStrings(i, CLOSE_OBJECT);
        else {
          shaped[5] = false;
          i = this.value(i, 1);
        }
      } else if (this.bytesAre(key, keyEnd - 1, SKIPPED)) {
        if (this.at(i) === OPEN_ARRAY) [shaped[4], i] = this.onlyStrings(i, CLOSE_ARRAY);
        else {
          shaped[4] = false;
          i = this.value(i, 1);
        }
      } else if (this.bytesAre(key, keyEnd - 1, PROBS)) {
        shaped[3] = this.at(i) === OPEN_OBJECT;
        i = this.value(i, 1);
      } else if (this.bytesAre(key, keyEnd - 1, ANSWERED_BY)) {
        if (this.at(i) === OPEN_OBJECT) [methods, i] = this.answeredBy(i);
        else {
          methods = undefined;
          i = this.value(i, 1);
        }
      } else {
        const field = STRING_FIELDS.findIndex((name) => this.bytesAre(key, keyEnd - 1, name));
        if (field >= 0) shaped[field] = this.at(i) === QUOTE;
        i = this.value(i, 1);
      }
      if (this.another(i, CLOSE_OBJECT)) {
        i = this.next;
        continue;
      }
      this.atEnd(this.next);
      break;
    }
    if (!runId) return null;
    return { runId: this.b.toString("utf8", runId[0], runId[1]), errored, methods, plain: shaped.every(Boolean) };
  }

  /** The array or object at `start` (closed by `close`): whether its values are all strings, and where it ends. */
  private onlyStrings(start: number, close: number): [boolean, number] {
    let strings = true;
    let i = this.ws(start + 1);
    if (this.at(i) === close) return [true, i + 1];
    for (;;) {
      if (close === CLOSE_OBJECT) i = this.colon(this.string(i));
      if (this.at(i) !== QUOTE) strings = false;
      if (!this.another(this.value(i, 2), close)) return [strings, this.next];
      i = this.next;
    }
  }

  /** answered_by's object at i: its values when all are strings (no key twice), and where it ends. */
  private answeredBy(start: number): [string[] | undefined, number] {
    // Each key's bytes [from, to) in the reused KEY_BOUNDS: a reranking line has a key per document,
    // and an array per key, then Buffer.compare for each pair, were the main thread's largest cost
    // while it sealed a full suite's results (bench/coordinator-bench, --cpu-prof).
    let count = 0;
    const values: string[] = [];
    let allStrings = true;
    let i = this.ws(start + 1);
    if (this.at(i) === CLOSE_OBJECT) return [values, i + 1];
    for (;;) {
      const keyEnd = this.plainString(i);
      const from = this.textStart;
      const to = keyEnd - 1;
      if (count === MAX_ANSWERED_KEYS || this.seenKey(count, from, to)) throw UNDECIDED;
      KEY_BOUNDS[2 * count] = from;
      KEY_BOUNDS[2 * count + 1] = to;
      count++;
      i = this.colon(keyEnd);
      if (this.at(i) === QUOTE) {
        const valueEnd = this.plainString(i);
        values.push(methodName(this.b, i + 1, valueEnd - 1));
        i = valueEnd;
      } else {
        allStrings = false;
        i = this.value(i, 2);
      }
      if (this.another(i, CLOSE_OBJECT)) {
        i = this.next;
        continue;
      }
      return [allStrings ? values : undefined, this.next];
    }
  }

  /** Whether bytes [from, to) are one of the first `count` keys in KEY_BOUNDS. */
  private seenKey(count: number, from: number, to: number): boolean {
    const b = this.b;
    const length = to - from;
    for (let k = 0; k < count; k++) {
      const at = KEY_BOUNDS[2 * k]!;
      if (KEY_BOUNDS[2 * k + 1]! - at !== length) continue;
      // From the end: documents' keys ("doc:12", "doc:13") differ there.
      let j = length - 1;
      while (j >= 0 && b[at + j] === b[from + j]) j--;
      if (j < 0) return true;
    }
    return false;
  }

  /** Whether bytes [from, to) are `word`. */
  private bytesAre(from: number, to: number, word: Uint8Array): boolean {
    return to - from === word.length && this.b.compare(word, 0, word.length, from, to) === 0;
  }

  /** A string at i with no escape in it (one the scan reads); returns the index after its closing quote. */
  private plainString(i: number): number {
    if (this.at(i) !== QUOTE) throw UNDECIDED;
    this.textStart = i + 1;
    for (let j = i + 1; j < this.end; j++) {
      const c = this.b[j]!;
      if (c === QUOTE) return j + 1;
      if (c === BACKSLASH || c < 0x20) throw UNDECIDED;
    }
    throw UNDECIDED;
  }

  /** The ':' after a key and the whitespace around it; returns where the value starts. */
  private colon(i: number): number {
    i = this.ws(i);
    if (this.at(i) !== COLON) throw UNDECIDED;
    return this.ws(i + 1);
  }

  /** Any JSON value at i, checked and skipped; returns the index after it. */
  private value(i: number, depth: number): number {
    const c = this.at(i);
    if (c === QUOTE) return this.string(i);
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) return this.container(i, depth + 1);
    if (c === 0x74) return this.literal(i, TRUE);
    if (c === 0x66) return this.literal(i, FALSE);
    if (c === 0x6e) return this.literal(i, NULL);
    return this.number(i);
  }

  private container(i: number, depth: number): number {
    if (depth > MAX_DEPTH) throw UNDECIDED;
    const object = this.at(i) === OPEN_OBJECT;
    const close = object ? CLOSE_OBJECT : CLOSE_ARRAY;
    i = this.ws(i + 1);
    if (this.at(i) === close) return i + 1;
    for (;;) {
      if (object) i = this.colon(this.string(i));
      if (!this.another(this.value(i, depth), close)) return this.next;
      i = this.next;
    }
  }

  /**
   * After a member or element that ends at i: true when a comma follows (`next` is where the next one
   * starts), false when `close` does (`next` is just past it); anything else is undecided.
   */
  private another(i: number, close: number): boolean {
    i = this.ws(i);
    if (this.at(i) === COMMA) {
      this.next = this.ws(i + 1);
      return true;
    }
    if (this.at(i) !== close) throw UNDECIDED;
    this.next = i + 1;
    return false;
  }

  /** A string at i, its escapes checked (those JSON allows); returns the index after its closing quote. */
  private string(i: number): number {
    if (this.at(i) !== QUOTE) throw UNDECIDED;
    for (let j = i + 1; j < this.end; j++) {
      const c = this.b[j]!;
      if (c === QUOTE) return j + 1;
      if (c < 0x20) throw UNDECIDED;
      if (c === BACKSLASH) {
        const e = this.at(++j);
        if (e === 0x75) {
          for (let k = 0; k < 4; k++) if (!isHex(this.at(++j))) throw UNDECIDED;
        } else if (!SIMPLE_ESCAPES.includes(e)) throw UNDECIDED;
      }
    }
    throw UNDECIDED;
  }

  private literal(i: number, word: Uint8Array): number {
    if (!this.bytesAre(i, Math.min(i + word.length, this.end), word)) throw UNDECIDED;
    return i + word.length;
  }

  /** -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
  private number(i: number): number {
    if (this.at(i) === 0x2d) i++;
    if (this.at(i) === 0x30) i++;
    else if (isDigit(this.at(i))) i = this.digits(i);
    else throw UNDECIDED;
    if (this.at(i) === 0x2e) {
      if (!isDigit(this.at(i + 1))) throw UNDECIDED;
      i = this.digits(i + 1);
    }
    if (this.at(i) === 0x65 || this.at(i) === 0x45) {
      i++;
      if (this.at(i) === 0x2b || this.at(i) === 0x2d) i++;
      if (!isDigit(this.at(i))) throw UNDECIDED;
      i = this.digits(i);
    }
    return i;
  }

  private digits(i: number): number {
    while (isDigit(this.at(i))) i++;
    return i;
  }

  /** JSON's whitespace (space, tab, CR, LF) from i; returns the first index that is not. */
  private ws(i: number): number {
    for (let c = this.at(i); c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a; c = this.at(i)) i++;
    return i;
  }

  /** Only whitespace may follow the top-level value. */
  private atEnd(i: number): void {
    if (this.ws(i) !== this.end) throw UNDECIDED;
  }
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

// The scorer's reader of a committed line's scored part (committed-line.ts scoredPart: run_id, id,
// track, family, probs, skipped, then "}"), as the line writer writes it. JSON.parse gives each
// line's probs an object of keys no other line has: for a reranking line, ~25 new hidden classes
// and their descriptor arrays, 23 µs a line (a micro-benchmark of 24-document lines) and most of
// the scorer thread's allocation (256 of 706 MB over a full-suite coordinator-bench run, V8's
// sampling heap profiler). Here probs is a Map of small distribution objects. Anything else than
// that exact shape (an escape in a string, errors, a null, whitespace, a "__proto__" option) is
// left to JSON.parse: the result is always JSON.parse's, with probs as a Map.
import type { ResultInput } from "./format.js";

const QUOTE = 0x22;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN = 0x7b;
const CLOSE = 0x7d;
const OPEN_LIST = 0x5b;
const CLOSE_LIST = 0x5d;

/** The scored part of a results line, parsed: JSON.parse's answer, with probs as a Map. */
export function readScoredPart(text: string): ResultInput {
  return scanScoredPart(text) ?? (JSON.parse(text) as ResultInput);
}

/**
 * Thrown inside the scan when the text is not of the writer's plain shape (caught: JSON.parse
 * decides). A check that gives up where it need not is never seen in what is read: JSON.parse
 * reads the same; the mutants marked below are of that kind.
 */
// Stryker disable next-line StringLiteral: never shown (caught below)
const NOT_PLAIN = new Error("not the plain scored shape");

class Scan {
  pos = 0;
  constructor(readonly text: string) {}

  expect(c: number): void {
    if (this.text.charCodeAt(this.pos) !== c) throw NOT_PLAIN;
    this.pos++;
  }

  /** `"name":` at pos. */
  field(name: string): void {
    this.expect(QUOTE);
    if (!this.text.startsWith(name, this.pos)) throw NOT_PLAIN;
    this.pos += name.length;
    this.expect(QUOTE);
    this.expect(COLON);
  }

  /** A JSON string without escapes or control characters. */
  string(): string {
    const end = this.stringEnd();
    const s = this.text.slice(this.pos, end);
    this.pos = end + 1;
    return s;
  }

  /**
   * An option key: one of the few every distribution repeats (true, false, A, B, ...), handed back
   * as the string made the first time: a new string as a property key is looked up in V8's string
   * table each time, which cost more than the rest of the scan.
   */
  optionKey(): string {
    const { text } = this;
    const end = this.stringEnd();
    const start = this.pos;
    // Stryker disable next-line ArithmeticOperator: a wrong length only misses the cache (the key is made again)
    const n = end - start;
    this.pos = end + 1;
    // Stryker disable next-line ConditionalExpression,MethodExpression: a miss makes the same key again; the text before a key ({" or ,") is no option key
    for (const k of optionKeys) if (k.length === n && text.startsWith(k, start)) return k;
    const k = text.slice(start, end);
    // Stryker disable next-line EqualityOperator,ConditionalExpression: how many are kept: any number gives the same keys
    if (optionKeys.length < MAX_OPTION_KEYS) optionKeys.push(k);
    return k;
  }

  /** Past the opening quote, to the closing one: where it is; throws NOT_PLAIN on an escape or a control character. */
  private stringEnd(): number {
    const { text } = this;
    this.expect(QUOTE);
    const end = text.indexOf('"', this.pos);
    // Stryker disable next-line ConditionalExpression,EqualityOperator: without a closing quote the scan goes back to the start, where it gives up
    if (end < 0) throw NOT_PLAIN;
    // Stryker disable next-line EqualityOperator: the closing quote is neither a control character nor a backslash
    for (let i = this.pos; i < end; i++) {
      const c = text.charCodeAt(i);
      if (c < 0x20 || c === 0x5c) throw NOT_PLAIN;
    }
    return end;
  }

  /** A JSON number (its grammar checked here), as Number reads it: the same double as JSON.parse. */
  number(): number {
    const { text } = this;
    const start = this.pos;
    let i = start;
    if (text.charCodeAt(i) === 0x2d) i++;
    const intStart = i;
    while (isDigit(text.charCodeAt(i))) i++;
    const intDigits = i - intStart;
    // Stryker disable next-line ConditionalExpression: "true" gives up on every number
    if (intDigits === 0 || (intDigits > 1 && text.charCodeAt(intStart) === 0x30)) throw NOT_PLAIN;
    if (text.charCodeAt(i) === 0x2e) {
      i++;
      const fracStart = i;
      while (isDigit(text.charCodeAt(i))) i++;
      if (i === fracStart) throw NOT_PLAIN;
    }
    const e = text.charCodeAt(i);
    // Stryker disable next-line ConditionalExpression: an exponent not read is met by the comma or brace expected next, and the scan gives up
    if (e === 0x65 || e === 0x45) {
      i++;
      const sign = text.charCodeAt(i);
      // Stryker disable next-line ConditionalExpression,EqualityOperator: a sign read wrongly leaves no digit where one must be, and the scan gives up
      if (sign === 0x2b || sign === 0x2d) i++;
      const expStart = i;
      while (isDigit(text.charCodeAt(i))) i++;
      if (i === expStart) throw NOT_PLAIN;
    }
    this.pos = i;
    return Number(text.slice(start, i));
  }

  /** `{"option":number,...}` */
  distribution(): Record<string, number> {
    const dist: Record<string, number> = {};
    this.expect(OPEN);
    // Stryker disable next-line ConditionalExpression,BlockStatement,UpdateOperator: an empty distribution not taken here meets a brace where a quote or comma must be, and the scan gives up
    if (this.text.charCodeAt(this.pos) === CLOSE) {
      // Stryker disable next-line UpdateOperator: as above
      this.pos++;
      return dist;
    }
    for (;;) {
      const key = this.optionKey();
      // An assignment to "__proto__" would set the prototype, where JSON.parse makes a key.
      if (key === "__proto__") throw NOT_PLAIN;
      this.expect(COLON);
      dist[key] = this.number();
      if (this.text.charCodeAt(this.pos) === CLOSE) {
        this.pos++;
        return dist;
      }
      this.expect(COMMA);
    }
  }
}

/** Option keys seen, in the order first seen (a suite has a few dozen: labels, digits, true/false). */
// Stryker disable next-line ArrayDeclaration: a key no distribution has is never matched
const optionKeys: string[] = [];
const MAX_OPTION_KEYS = 64;

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** The scored part read by hand; undefined when it is not of the writer's plain shape. */
export function scanScoredPart(text: string): ResultInput | undefined {
  const s = new Scan(text);
  try {
    s.expect(OPEN);
    s.field("run_id");
    const runId = s.string();
    for (const name of ["id", "track", "family"]) {
      s.expect(COMMA);
      s.field(name);
      s.string();
    }
    s.expect(COMMA);
    s.field("probs");
    const probs = new Map<string, Record<string, number>>();
    s.expect(OPEN);
    // Stryker disable next-line ConditionalExpression,UpdateOperator: empty probs not taken here meet a brace where a quote must be, and the scan gives up
    if (text.charCodeAt(s.pos) === CLOSE) s.pos++;
    else {
      for (;;) {
        const key = s.string();
        s.expect(COLON);
        // A key twice: the later value, as JSON.parse keeps it.
        probs.set(key, s.distribution());
        if (text.charCodeAt(s.pos) === CLOSE) {
          s.pos++;
          break;
        }
        s.expect(COMMA);
      }
    }
    s.expect(COMMA);
    s.field("skipped");
    const skipped: string[] = [];
    s.expect(OPEN_LIST);
    if (text.charCodeAt(s.pos) === CLOSE_LIST) s.pos++;
    else {
      for (;;) {
        skipped.push(s.string());
        if (text.charCodeAt(s.pos) === CLOSE_LIST) {
          s.pos++;
          break;
        }
        s.expect(COMMA);
      }
    }
    s.expect(CLOSE);
    if (s.pos !== text.length) return undefined;
    return { run_id: runId, probs, skipped };
  }
  // Stryker disable next-line BlockStatement: nothing but NOT_PLAIN is thrown in the scan, so a catch that kept every error would answer the same
  catch (err) {
    // Stryker disable next-line ConditionalExpression: as above
    if (err === NOT_PLAIN) return undefined;
    throw err;
  }
}

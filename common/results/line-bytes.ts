// The byte buffer a results line is written into (line-writer.ts): pieces of text appended, then
// one flat string of them, byte for byte the text appended.

/**
 * A line's text put together in one reused byte buffer, then made into one flat string. Built by
 * `+=`, a line was a rope of ~150 pieces (and a copy when the results file flattened it): 5.6 KB
 * allocated per line of ~0.8 KB, about half of what the coordinator's thread allocated while it
 * served (V8's sampling heap profiler, garbage included). Characters are stored one per byte while
 * every one is ASCII; text with others is written as UTF-8 from then on and decoded as UTF-8.
 */
export class LineBytes {
  private buf: Buffer;
  private pos = 0;
  /** UTF-16 units written: where the text so far ends in the string finish() returns. */
  private units = 0;
  // Stryker disable next-line BooleanLiteral: start() sets it before every line
  private ascii = true;

  constructor(capacity: number) {
    this.buf = Buffer.allocUnsafeSlow(capacity);
  }

  start(): void {
    this.pos = 0;
    this.units = 0;
    // Stryker disable next-line BooleanLiteral: ASCII decoded as UTF-8 is the same text; "false" only takes the slower decoder
    this.ascii = true;
  }

  private room(n: number): void {
    // Stryker disable next-line EqualityOperator: "<" grows the buffer one byte early
    if (this.pos + n <= this.buf.length) return;
    // Stryker disable next-line ArithmeticOperator: how much it grows by: any size from pos + n up holds what comes
    const bigger = Buffer.allocUnsafeSlow(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(bigger, 0, 0, this.pos);
    this.buf = bigger;
  }

  /** Text known to be ASCII (the line's punctuation and field names, numbers). */
  raw(s: string): void {
    const n = s.length;
    this.room(n);
    const { buf } = this;
    let pos = this.pos;
    for (let i = 0; i < n; i++) buf[pos++] = s.charCodeAt(i);
    this.pos = pos;
    this.units += n;
  }

  /** Any text, as is (already JSON). */
  text(s: string): void {
    // Stryker disable next-line ConditionalExpression: a fast path: ASCII written as UTF-8 is the same bytes
    if (asciiOnly(s)) return this.raw(s);
    // Stryker disable next-line StringLiteral: Buffer takes "" for UTF-8
    this.room(Buffer.byteLength(s, "utf8"));
    // Stryker disable next-line StringLiteral: Buffer takes "" for UTF-8
    this.pos += this.buf.write(s, this.pos, "utf8");
    this.units += s.length;
    this.ascii = false;
  }

  /** A string as JSON.stringify writes it. */
  json(s: string): void {
    // Stryker disable next-line ConditionalExpression: a fast path: JSON.stringify of a plain string is that string between quotes
    if (!plainJsonString(s)) return this.text(JSON.stringify(s));
    const n = s.length;
    this.room(n + 2);
    const { buf } = this;
    let pos = this.pos;
    buf[pos++] = 0x22;
    for (let i = 0; i < n; i++) buf[pos++] = s.charCodeAt(i);
    buf[pos++] = 0x22;
    this.pos = pos;
    this.units += n + 2;
  }

  /** The length so far of the string finish() will return. */
  get length(): number {
    return this.units;
  }

  finish(): string {
    return this.buf.toString(this.ascii ? "latin1" : "utf8", 0, this.pos);
  }
}

// Stryker disable next-line BlockStatement: a fast path's test: "not ASCII" (undefined) takes the UTF-8 way, which writes the same
function asciiOnly(s: string): boolean {
  // Stryker disable next-line EqualityOperator: "<=" reads one past the end (NaN), which passes
  for (let i = 0; i < s.length; i++) {
    // Stryker disable next-line ConditionalExpression: a fast path: "true" (always UTF-8) writes the same bytes
    if (s.charCodeAt(i) >= 0x80) return false;
  }
  // Stryker disable next-line BooleanLiteral: as above
  return true;
}

/** Whether JSON.stringify(s) is s between quotes: printable ASCII without a quote or backslash. */
// Stryker disable next-line BlockStatement: a fast path's test: "not plain" (undefined) leaves the string to JSON.stringify, which writes the same
function plainJsonString(s: string): boolean {
  // Stryker disable next-line EqualityOperator: "<=" reads one past the end (NaN), which passes
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // Stryker disable next-line ConditionalExpression,EqualityOperator: a fast path: "true", "<= 0x20", ">= 0x7f" and the like send more strings to JSON.stringify, which writes them the same (those that let through a character it escapes fail line-bytes.test.ts)
    if (c < 0x20 || c > 0x7f || c === 0x22 || c === 0x5c) return false;
  }
  // Stryker disable next-line BooleanLiteral: as above
  return true;
}

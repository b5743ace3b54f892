// Where the `state` and `questions` values lie in the bytes of a record's line, so the payload spill
// can copy them as they are instead of re-serialising the parsed record (JSON.stringify and UTF-8
// encoding cost about as much as parsing the line; profile in bench/startup-bench.ts). The line has
// been parsed whole before (JSON.parse), so this only walks valid JSON; strings are skipped with
// indexOf. Anything it does not expect returns undefined and the caller serialises.
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

const STATE = Buffer.from('"state"');
const QUESTIONS = Buffer.from('"questions"');

export interface PayloadSpans {
  stateStart: number;
  stateEnd: number;
  questionsStart: number;
  questionsEnd: number;
}

const isSpace = (c: number | undefined): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

function skipSpace(buf: Uint8Array, i: number, end: number): number {
  while (i < end && isSpace(buf[i])) i++;
  return i;
}

/** Index just past the closing quote of the string whose opening quote is at `i`; -1 when unterminated. */
function skipString(buf: Buffer, i: number, end: number): number {
  let from = i + 1;
  for (;;) {
    const q = buf.indexOf(QUOTE, from);
    if (q < 0 || q >= end) return -1;
    let b = q - 1;
    while (buf[b] === BACKSLASH) b--;
    if ((q - 1 - b) % 2 === 0) return q + 1;
    from = q + 1;
  }
}

/** Index just past the JSON value that starts at `i`; -1 when it does not end before `end`. */
function skipValue(buf: Buffer, i: number, end: number): number {
  const c = buf[i];
  if (c === QUOTE) return skipString(buf, i, end);
  if (c === LBRACE || c === LBRACKET) {
    let depth = 0;
    while (i < end) {
      const ch = buf[i]!;
      if (ch === QUOTE) {
        i = skipString(buf, i, end);
        if (i < 0) return -1;
        continue;
      }
      if (ch === LBRACE || ch === LBRACKET) depth++;
      else if (ch === RBRACE || ch === RBRACKET) {
        depth--;
        if (depth === 0) return i + 1;
      }
      i++;
    }
    return -1;
  }
  while (i < end && buf[i] !== COMMA && buf[i] !== RBRACE && buf[i] !== RBRACKET && !isSpace(buf[i])) i++;
  return i;
}

function sameBytes(buf: Buffer, start: number, end: number, want: Buffer): boolean {
  return end - start === want.length && buf.compare(want, 0, want.length, start, end) === 0;
}

/**
 * The byte ranges of the top-level `state` and `questions` values of the JSON object in
 * `buf[start, end)` (the last of each, as JSON.parse keeps), or undefined when either is missing or
 * the text is not such an object.
 */
export function payloadSpans(buf: Buffer, start = 0, end = buf.length): PayloadSpans | undefined {
  let i = skipSpace(buf, start, end);
  if (buf[i] !== LBRACE) return undefined;
  i = skipSpace(buf, i + 1, end);
  let stateStart = -1;
  let stateEnd = -1;
  let questionsStart = -1;
  let questionsEnd = -1;
  if (buf[i] === RBRACE) return undefined;
  for (;;) {
    if (buf[i] !== QUOTE) return undefined;
    const keyEnd = skipString(buf, i, end);
    if (keyEnd < 0) return undefined;
    const keyStart = i;
    let escaped = false;
    for (let k = keyStart + 1; k < keyEnd - 1; k++) if (buf[k] === BACKSLASH) escaped = true;
    i = skipSpace(buf, keyEnd, end);
    if (buf[i] !== COLON) return undefined;
    const valueStart = skipSpace(buf, i + 1, end);
    const valueEnd = skipValue(buf, valueStart, end);
    if (valueEnd < 0) return undefined;
    // A key written with escapes is rare: decoded, it may still be "state" or "questions".
    const key = escaped ? (JSON.parse(buf.toString("utf8", keyStart, keyEnd)) as string) : undefined;
    if (key === "state" || (key === undefined && sameBytes(buf, keyStart, keyEnd, STATE))) {
      stateStart = valueStart;
      stateEnd = valueEnd;
    } else if (key === "questions" || (key === undefined && sameBytes(buf, keyStart, keyEnd, QUESTIONS))) {
      questionsStart = valueStart;
      questionsEnd = valueEnd;
    }
    i = skipSpace(buf, valueEnd, end);
    if (buf[i] === COMMA) {
      i = skipSpace(buf, i + 1, end);
      continue;
    }
    if (buf[i] === RBRACE) break;
    return undefined;
  }
  if (stateStart < 0 || questionsStart < 0) return undefined;
  return { stateStart, stateEnd, questionsStart, questionsEnd };
}

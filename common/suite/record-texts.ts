// A record's texts left as bytes: the coordinator reads every record to check it and to cut its
// payload out of the line as bytes (it never looks at a text), so the suite reader may parse a line
// from its bytes (ReadOptions.byteStrings, common/jsonl-reader.ts) and decode to exact strings only
// what is not a text. The texts are the values of `state`, each question's `instructions` and its
// options' descriptions: 90% of the suite's bytes, mostly Vietnamese, where decoding UTF-8 cost as
// much as parsing. Keys, ids, gold, metadata and scoring are always exact.

/** A record whose texts may still be byte strings (one character per UTF-8 byte). */
export interface TextsAsBytes {
  /** Set when the texts (state values, instructions, criteria values) are byte strings. */
  textsAsBytes?: true;
}

const HIGH = /[\x80-\xff]/;

/** The exact string of a byte string: its bytes decoded as UTF-8. */
export function decodeByteString(s: string): string {
  return HIGH.test(s) ? Buffer.from(s, "latin1").toString("utf8") : s;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The object with its keys decoded and each value given by `value`. Kept in place unless a key
 * changes; a rebuilt object defines its keys as JSON.parse does (own data properties, `__proto__`
 * included, in the same order).
 */
function mapObject(o: Obj, value: (key: string, v: unknown) => unknown): Obj {
  let rekey = false;
  for (const k in o) if (HIGH.test(k)) rekey = true;
  if (!rekey) {
    for (const k in o) {
      const v = o[k];
      const d = value(k, v);
      if (d !== v) Object.defineProperty(o, k, { value: d, writable: true, enumerable: true, configurable: true });
    }
    return o;
  }
  const out: Obj = {};
  for (const k in o) Object.defineProperty(out, decodeByteString(k), { value: value(k, o[k]), writable: true, enumerable: true, configurable: true });
  return out;
}

/** Every string in a parsed JSON value decoded (the value of a line parsed as bytes). */
export function decodeByteStrings(v: unknown): unknown {
  if (typeof v === "string") return decodeByteString(v);
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = decodeByteStrings(v[i]);
    return v;
  }
  if (isObj(v)) return mapObject(v, (_, x) => decodeByteStrings(x));
  return v;
}

/** A map of texts: keys decoded, string values left as they are, anything else decoded. */
const keysOnly = (o: unknown): unknown => (isObj(o) ? mapObject(o, (_, x) => (typeof x === "string" ? x : decodeByteStrings(x))) : decodeByteStrings(o));

/**
 * A line's value parsed as bytes with every string decoded but the record's texts (the values of
 * `state`, of each question's `instructions` and of its `criteria`), which stay byte strings. Any
 * other shape is decoded whole: the schema check decides about it.
 */
export function decodeAllButTexts(value: unknown): unknown {
  if (!isObj(value)) return decodeByteStrings(value);
  return mapObject(value, (key, v) => {
    if (key === "state") return keysOnly(v);
    if (key !== "questions" || !isObj(v)) return decodeByteStrings(v);
    return mapObject(v, (_, q) => {
      if (!isObj(q)) return decodeByteStrings(q);
      return mapObject(q, (field, x) => (field === "instructions" && typeof x === "string" ? x : field === "criteria" ? keysOnly(x) : decodeByteStrings(x)));
    });
  });
}

/**
 * The texts of a checked record decoded in place when they were left as bytes (everything else is
 * exact already, and decoding is not idempotent: only the texts are decoded).
 */
export function withExactTexts<R extends TextsAsBytes & { state: Record<string, string>; questions: Record<string, { instructions: string; criteria: Record<string, string> }> }>(rec: R): R {
  if (!rec.textsAsBytes) return rec;
  const decodeValues = (m: Record<string, string>) => {
    for (const k in m) Object.defineProperty(m, k, { value: decodeByteString(m[k]!), writable: true, enumerable: true, configurable: true });
  };
  decodeValues(rec.state);
  for (const k in rec.questions) {
    const q = rec.questions[k]!;
    q.instructions = decodeByteString(q.instructions);
    decodeValues(q.criteria);
  }
  delete rec.textsAsBytes;
  return rec;
}

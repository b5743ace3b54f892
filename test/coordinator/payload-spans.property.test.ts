// payloadSpans finds the bytes of `state` and `questions` in a record's line: the bytes it finds
// parse to what JSON.parse of the whole line gives, whatever the spacing, escapes and key order.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { payloadSpans } from "../../coordinator/payload-spans.js";

const text = fc.string({ unit: "binary", maxLength: 20 });
const json = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: "small" }, text, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null), tie("array"), tie("object")),
  array: fc.array(tie("value"), { maxLength: 4 }),
  object: fc.dictionary(text, tie("value"), { maxKeys: 4 }),
})).value;

/** JSON text of `v` with random whitespace between tokens (what another writer might produce). */
function spaced(v: unknown, ws: () => string): string {
  if (Array.isArray(v)) return `[${ws()}${v.map((x) => spaced(x, ws)).join(`${ws()},${ws()}`)}${ws()}]`;
  if (v !== null && typeof v === "object") {
    return `{${ws()}${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}${ws()}:${ws()}${spaced(x, ws)}`).join(`${ws()},${ws()}`)}${ws()}}`;
  }
  return JSON.stringify(v);
}

describe("payloadSpans", () => {
  it("finds bytes that parse to the line's state and questions", () => {
    fc.assert(
      fc.property(fc.dictionary(text, json, { maxKeys: 4 }), json, json, fc.array(fc.constantFrom("", " ", "\t", "  \r\n"), { minLength: 1 }), fc.nat(), (extra, state, questions, spaces, seed) => {
        let i = seed;
        const ws = () => spaces[i++ % spaces.length]!;
        const record = { ...extra, state, questions };
        const line = Buffer.from(spaced(record, ws), "utf8");
        const parsed = JSON.parse(line.toString("utf8")) as { state: unknown; questions: unknown };
        const spans = payloadSpans(line);
        expect(spans).toBeDefined();
        expect(JSON.parse(line.toString("utf8", spans!.stateStart, spans!.stateEnd))).toEqual(parsed.state);
        expect(JSON.parse(line.toString("utf8", spans!.questionsStart, spans!.questionsEnd))).toEqual(parsed.questions);
      }),
      { numRuns: 500 },
    );
  });

  it("takes the last of a repeated key, as JSON.parse does, and works inside a larger buffer", () => {
    const body = '{"state":{"a":"1"},"x":"\\"state\\":","questions":{"q":{"type":"noul"}},"state":{"b":"é\\\\"}}';
    const buf = Buffer.from(`junk\n${body}\nmore`, "utf8");
    const start = 5;
    const end = start + Buffer.byteLength(body);
    const spans = payloadSpans(buf, start, end)!;
    expect(buf.toString("utf8", spans.stateStart, spans.stateEnd)).toBe('{"b":"é\\\\"}');
    expect(JSON.parse(buf.toString("utf8", spans.questionsStart, spans.questionsEnd))).toEqual({ q: { type: "noul" } });
  });

  it("reads keys written with escapes", () => {
    const buf = Buffer.from('{"st\\u0061te":{"s":"1"},"questions":{}}');
    const spans = payloadSpans(buf)!;
    expect(buf.toString("utf8", spans.stateStart, spans.stateEnd)).toBe('{"s":"1"}');
  });

  it("gives up (undefined) on a missing field or a non-object line", () => {
    expect(payloadSpans(Buffer.from('{"state":{}}'))).toBeUndefined();
    expect(payloadSpans(Buffer.from("[1,2]"))).toBeUndefined();
    expect(payloadSpans(Buffer.from("{}"))).toBeUndefined();
  });
});

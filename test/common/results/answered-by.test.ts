// answered_by as pairs (common/results/answered-by.ts) against its definition: the object a protobuf
// map's entries make when set one after another (a later entry for a key wins, in the first one's
// place; array-index keys first, ascending; "__proto__" an own key), and the line writer's text of
// the pairs against JSON.stringify of that object.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AnsweredByList, answeredByRecord } from "../../../common/results/answered-by.js";
import { writeResultLine, type LineQuestions, type ResultAnswer } from "../../../common/results/line-writer.js";

/** The object the decoder built before the pairs: each entry set in turn. */
function objectOf(entries: ReadonlyArray<readonly [string, string]>): Record<string, string> {
  const o: Record<string, string> = {};
  for (const [k, v] of entries) Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  return o;
}

const listOf = (entries: ReadonlyArray<readonly [string, string]>) =>
  AnsweredByList.of(
    entries.map(([k]) => k),
    entries.map(([, v]) => v),
  );

const NO_QUESTIONS: LineQuestions = { keys: [], count: 0, options: () => [], indexOf: () => -1 };
const FIELDS = { skipped: [], errors: {}, latencyMs: 1, promptTokens: 1, cachedTokens: null, completionTokens: 1, retries: 0, approximate: false };

/** The answered_by part of a written line (the line is JSON; its last fields are answered_by and format). */
function writtenAnsweredBy(answeredBy: ResultAnswer["answeredBy"]): string {
  const text = writeResultLine({ recordKey: "t:1", id: "1", payloadSha256: "ab" }, NO_QUESTIONS, { ...FIELDS, answeredBy }, "t", "f", "a").text;
  return text.slice(text.indexOf(`,"answered_by":`) + `,"answered_by":`.length, text.lastIndexOf(`,"format":`));
}

describe("AnsweredByList", () => {
  it("keeps arrival order when no key repeats and none is an array index", () => {
    const list = listOf([
      ["doc:9", "systemone"],
      ["doc:1", "label-read"],
      ["label", "decisions"],
    ]);
    expect(list.keys).toEqual(["doc:9", "doc:1", "label"]);
    expect(list.methods).toEqual(["systemone", "label-read", "decisions"]);
    expect(writtenAnsweredBy(list)).toBe(`{"doc:9":"systemone","doc:1":"label-read","label":"decisions"}`);
  });

  it("a repeated key keeps its first place and its last method; array indexes come first, ascending (known answer)", () => {
    const entries = [
      ["b", "m1"],
      ["10", "m2"],
      ["a", "m3"],
      ["b", "m4"],
      ["9", "m5"],
    ] as const;
    const list = listOf(entries);
    expect(list.keys).toEqual(["9", "10", "b", "a"]);
    expect(list.methods).toEqual(["m5", "m2", "m4", "m3"]);
    expect(writtenAnsweredBy(list)).toBe(`{"9":"m5","10":"m2","b":"m4","a":"m3"}`);
  });

  it("a repeat among more than 16 keys is found too", () => {
    const keys = Array.from({ length: 30 }, (_, i) => `doc:${i}`);
    const list = AnsweredByList.of([...keys, "doc:3"], [...keys.map(() => "systemone"), "label-read"]);
    expect(list.keys.length).toBe(30);
    expect(list.toRecord()["doc:3"]).toBe("label-read");
  });

  it("__proto__ is an own key, written as JSON.stringify writes it", () => {
    const list = listOf([
      ["__proto__", "systemone"],
      ["x", "decisions"],
    ]);
    expect(Object.keys(list.toRecord())).toEqual(["__proto__", "x"]);
    expect(writtenAnsweredBy(list)).toBe(JSON.stringify(objectOf([["__proto__", "systemone"], ["x", "decisions"]])));
  });

  it("empty: one shared list, written {}", () => {
    expect(AnsweredByList.of([], [])).toBe(AnsweredByList.EMPTY);
    expect(AnsweredByList.fromRecord({})).toBe(AnsweredByList.EMPTY);
    expect(writtenAnsweredBy(AnsweredByList.EMPTY)).toBe("{}");
  });

  it("as pairs or as the object, the same record and the same text (property)", () => {
    const key = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom("0", "7", "10", "4294967294", "4294967295", "01", "__proto__", "doc:1", 'q"1', "é"));
    const method = fc.oneof(fc.constantFrom("systemone", "label-read", "decisions"), fc.string({ maxLength: 6 }));
    fc.assert(
      fc.property(fc.array(fc.tuple(key, method), { maxLength: 40 }), (entries) => {
        const object = objectOf(entries);
        const list = listOf(entries);
        expect(answeredByRecord(list)).toEqual(object);
        expect(Object.keys(answeredByRecord(list))).toEqual(Object.keys(object));
        expect(writtenAnsweredBy(list)).toBe(JSON.stringify(object));
        expect(writtenAnsweredBy(object)).toBe(JSON.stringify(object));
        expect(AnsweredByList.fromRecord(object)).toEqual(list);
      }),
      { numRuns: 500 },
    );
  });
});

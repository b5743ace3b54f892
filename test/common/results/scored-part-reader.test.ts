// The scorer's reader of a committed line's scored part (common/results/scored-part-reader.ts)
// against JSON.parse: the writer's plain shape is read by hand (probs a Map), anything else by
// JSON.parse, and what a scorer reads is the same either way. The writer's own lines are held to it
// in test/coordinator/result-line.property.test.ts.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ResultInput } from "../../../common/results/format.js";
import { readScoredPart, scanScoredPart } from "../../../common/results/scored-part-reader.js";

function asParsed(r: ResultInput) {
  const entries = r.probs instanceof Map ? [...r.probs.entries()] : Object.entries(r.probs);
  return { run_id: r.run_id, probs: entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)), skipped: r.skipped ?? [], errors: r.errors };
}

const part = (probs: string, skipped = "[]", rest = "") => `{"run_id":"t:r1","id":"r1","track":"t","family":"f","probs":${probs},"skipped":${skipped}${rest}}`;

describe("readScoredPart", () => {
  it("reads the plain shape by hand: run_id, probs as a Map of distributions, skipped (known answer)", () => {
    const r = scanScoredPart(part(`{"doc:1":{"true":0.25,"false":0.75},"label":{"A":1e-7,"B":0.9999999,"C":0}}`, `["doc:2","q 3"]`))!;
    expect(r.run_id).toBe("t:r1");
    expect(r.probs).toBeInstanceOf(Map);
    expect([...(r.probs as Map<string, unknown>).entries()]).toEqual([
      ["doc:1", { true: 0.25, false: 0.75 }],
      ["label", { A: 1e-7, B: 0.9999999, C: 0 }],
    ]);
    expect(r.skipped).toEqual(["doc:2", "q 3"]);
    expect(r.errors).toBeUndefined();
  });

  it("leaves to JSON.parse what is not the plain shape, and reads it as JSON.parse does", () => {
    const others = [
      part(`{"doc:1":{"true":0.25,"false":0.75}}`, "[]", `,"errors":{"doc:2":"HTTP 500"}`),
      part(`{"d\\"q":{"true":0.5,"false":0.5}}`),
      part(`{"doc:1":{"true":null,"false":1}}`),
      part(`{"doc:1":{"__proto__":0.5,"x":0.5}}`),
      part(`{"doc:1": {"true":0.5,"false":0.5}}`),
      part(`{"doc:1":{"true":0.5,"false":0.5}}`).replace(`"id":"r1",`, ""),
      part(`{"doc:1":{"true":0.5,"false":0.5}}`).replace(`"track":"t"`, `"track":7`),
      part(`{"doc:1":{"true":-0,"false":1}}`),
    ];
    for (const text of others.slice(0, 7)) {
      expect(scanScoredPart(text), text).toBeUndefined();
      expect(asParsed(readScoredPart(text))).toEqual(asParsed(JSON.parse(text) as ResultInput));
    }
    // -0 is a JSON number: read by hand, the same -0 as JSON.parse.
    const minusZero = scanScoredPart(others[7]!)!;
    expect(Object.is((minusZero.probs as Map<string, { true: number }>).get("doc:1")!.true, -0)).toBe(true);
  });

  it("every escape, field name and number form is read as JSON.parse reads it (known answers)", () => {
    const texts = [
      part(`{"a\\u0041":{"true":0.5,"false":0.5}}`),
      part(`{"doc:1":{"tr\\u0075e":0.5,"false":0.5}}`),
      part(`{"doc:1":{"true":0.5,"false":0.5}}`, `["x\\ty"]`),
      part(`{"doc:1":{"true":0.5,"false":0.5}}`).replace(`"run_id":"t:r1"`, `"run_id":"t:\\u0072"`),
      part(`{"doc:1":{"true":0.5,"false":0.5}}`).replace(`"run_id"`, `"rid"`),
      part(`{"doc:1":{"true":0.5,"false":0.5}}`).replace(`"family"`, `"famly"`),
      part(`{"doc:1":{"true":0.5,"false":0.5}}`).replace(`"skipped"`, `"skipped2"`),
      // Names of the same length as the expected ones.
      part(`{"doc:1":{"true":0.5,"false":0.5}}`).replace(`"run_id"`, `"run_ie"`),
      part(`{"doc:1":{"true":0.5,"false":0.5}}`).replace(`"track"`, `"trace"`),
      part(`{"doc:1":{"true":0.5,"false":0.5}}`).replace(`"skipped"`, `"skippes"`),
      part(`{"q":{"A":1E5,"B":1e+5,"C":1e-5,"D":-0.5,"E":0,"F":10,"G":2.5E-3}}`),
      part(`{"q":{},"r":{"x":1}}`),
      part(`{}`),
    ];
    for (const text of texts) expect(asParsed(readScoredPart(text)), text).toEqual(asParsed(JSON.parse(text) as ResultInput));
    for (const text of texts.slice(0, 10)) expect(scanScoredPart(text), text).toBeUndefined();
    for (const text of texts.slice(10)) expect(scanScoredPart(text), text).toBeDefined();
  });

  it("refuses what JSON.parse refuses, with JSON.parse's error", () => {
    const good = part(`{"doc:1":{"true":0.5,"false":0.5}}`, `["a","b"]`);
    const broken = [
      good.replace(`"run_id":`, `"run_id";`),
      good.replace(`{"run_id"`, `["run_id"`),
      good.replace(`,"id"`, ` "id"`),
      good.replace(`"true":`, `"true" `),
      good.replace(`0.5,"false"`, `0.5;"false"`),
      good.replace(`}},"skipped"`, `}],"skipped"`),
      good.replace(`"a","b"`, `"a";"b"`),
      good.replace(`"run_id":"t:r1"`, `"run_id":"t:\u0001"`),
      good.replace(`"run_id":"t:r1"`, `"run_id":"t:r1`),
      good.slice(0, -1),
      `${good}}`,
    ];
    for (const bad of [...broken, part(`{"doc:1":{"true":01,"false":1}}`), part(`{"doc:1":{"true":.5,"false":1}}`), part(`{"doc:1":{"true":1.,"false":1}}`), part(`{"doc:1":{"true":1e,"false":1}}`), part("{}") + "x", part(`{"a":{"true":0.5}`)]) {
      expect(scanScoredPart(bad), bad).toBeUndefined();
      expect(() => readScoredPart(bad)).toThrow(SyntaxError);
    }
  });

  it("reads every line of the plain shape as JSON.parse does (property)", () => {
    const key = fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom("doc:1", "0", "7", "label", "ü", "a\u0001", "q\\"));
    const value = fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(0, -0, 1, 0.5, 1e-300, 5e-324, 1.7976931348623157e308));
    const dist = fc.dictionary(key.filter((k) => k !== "__proto__"), value, { maxKeys: 5 });
    fc.assert(
      fc.property(fc.string({ maxLength: 20 }), fc.dictionary(key, dist, { maxKeys: 6 }), fc.array(key, { maxLength: 3 }), (runId, probs, skipped) => {
        const text = JSON.stringify({ run_id: runId, id: "i", track: "t", family: "f", probs, skipped });
        const parsed = JSON.parse(text) as ResultInput;
        expect(asParsed(readScoredPart(text))).toEqual(asParsed(parsed));
        // Each number the same double (toEqual tells -0 from 0 too).
        const scanned = scanScoredPart(text);
        if (scanned) for (const [k, d] of (scanned.probs as Map<string, Record<string, number>>).entries()) for (const [o, v] of Object.entries(d)) expect(Object.is(v, (parsed.probs as Record<string, Record<string, number>>)[k]![o])).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});

// The sealer's scan of a results line (common/results/row-scan.ts) against JSON.parse of the line's
// text: whatever the scan decides (a record's facts, or no record) is what parsing gives, it never
// takes a line that is not JSON for one that is, and it decides the lines the coordinator writes.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { acceptedResultLine, NOUL_KEYS } from "../../../common/results/index.js";
import { scanResultRow } from "../../../common/results/row-scan.js";

type Reference = "not JSON" | null | { runId: string; errored: boolean; methods: string[] | undefined; plain: boolean };

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
const strings = (v: unknown[]) => v.every((s) => typeof s === "string");

/** What parsing the line's text gives (seal.ts before the scan, written out again here). */
function byParsing(bytes: Buffer): Reference {
  const text = bytes.toString("utf8");
  if (!text.trim()) return null;
  let row: unknown;
  try {
    row = JSON.parse(text);
  } catch {
    return "not JSON";
  }
  if (row === null || typeof row !== "object") return null;
  const { run_id, errors, answered_by, probs, skipped } = row as Record<string, unknown>;
  if (typeof run_id !== "string") return null;
  const by = answered_by as Record<string, unknown> | null | undefined;
  const allStrings = isObject(by) && strings(Object.values(by));
  return {
    runId: run_id,
    errored: errors !== null && typeof errors === "object" && Object.keys(errors as object).length > 0,
    methods: allStrings ? (Object.values(by!) as string[]) : undefined,
    // What parseResultLine's hand check takes (common/results/parse.ts), written out again.
    plain:
      ["id", "track", "family"].every((k) => (row as Record<string, unknown>)[k] === undefined || typeof (row as Record<string, unknown>)[k] === "string") &&
      (probs === undefined || isObject(probs)) &&
      (skipped === undefined || (Array.isArray(skipped) && strings(skipped))) &&
      (errors === undefined || (isObject(errors) && strings(Object.values(errors)))),
  };
}

/** The scan of `line` placed inside other bytes (the lines around it in a file), as the sealer calls it. */
function scan(line: Buffer, before: Buffer, after: Buffer) {
  const facts = scanResultRow(Buffer.concat([before, line, after]), before.length, before.length + line.length);
  return facts && { ...facts, methods: facts.methods && [...facts.methods] };
}

/**
 * `plain` is exact, except that the scan may leave to the parse a line it cannot check cheaply (a
 * key repeated inside errors, whose last value JSON.parse keeps): it never says plain of a line that
 * is not. `exactPlain` holds it to the parse's answer.
 */
function expectAgrees(line: Buffer, before = Buffer.from("{}\n"), after = Buffer.from('\n{"run_id":"t:9"}'), exactPlain = false): "decided" | "left to the parse" {
  const facts = scan(line, before, after);
  if (facts === undefined) return "left to the parse";
  const reference = byParsing(line);
  expect(reference, `scan decided a line that is not JSON: ${JSON.stringify(line.toString("latin1"))}`).not.toBe("not JSON");
  if (reference === null || reference === "not JSON" || facts === null) expect(facts).toEqual(reference);
  else {
    const plain = exactPlain || facts.plain ? reference.plain : false;
    expect({ ...facts, methods: facts.methods?.slice().sort() }, line.toString("utf8")).toEqual({ ...reference, methods: reference.methods?.slice().sort(), plain });
  }
  return "decided";
}

// Keys the scan reads, the same keys escaped, and other keys; values of every kind.
const key = fc.constantFrom("run_id", "errors", "answered_by", "probs", "id", "track", "family", "skipped", "r\\u0075n_id", "__proto__", "1", "q");
const method = fc.constantFrom("systemone", "decisions", "label-read", "méthode", "__proto__", "a\\\"b", "");
const leaf = fc.oneof(
  fc.constantFrom("null", "true", "false", "0", "-0", "1e5", "-12.5E-3", "0.25", '""', '"t:1"', '"t:é\\"2"', '"\\ud800"', "{}", "[]", '{"q":"x"}', '{"q":"x","r":1}', '{"q":"x","r":"\\"y"}', "[1]", '["a","b"]', '["a",null]'),
  fc.string().map((s) => JSON.stringify(s)),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
);
const answeredBy = fc.oneof(
  fc.array(fc.tuple(fc.constantFrom("q", "a", "b", "1", "__proto__"), method), { maxLength: 4 }).map((kv) => `{${kv.map(([k, m]) => `"${k}":"${m}"`).join(",")}}`),
  leaf,
);
const value = fc.oneof({ weight: 3, arbitrary: leaf }, { weight: 1, arbitrary: answeredBy });
const space = fc.constantFrom("", "", " ", "\t", "\r", "  \n");
const objectLine = fc.array(fc.tuple(key, value, space, space), { maxLength: 6 }).map((members) => `{${members.map(([k, v, s1, s2]) => `${s1}"${k}"${s2}:${s1}${v}${s2}`).join(",")}}`);
const jsonLine = fc.oneof({ weight: 4, arbitrary: objectLine }, { weight: 1, arbitrary: fc.json() }, { weight: 1, arbitrary: fc.constantFrom("", "   ", "\t", "\u000b", "\u00a0", "\ufeff{}", "null", "[]", '"x"') });

// A line damaged the way a torn or corrupted write damages it: cut short, a byte dropped, put in or changed.
const tricky = [..."{}[]\":,\\ \t0123456789.eE+-tfnrulsaq\u0000\u001f"].map((c) => c.charCodeAt(0)).concat([0x80, 0xc3, 0xe2, 0xff]);
const damaged = fc.tuple(jsonLine, fc.nat(), fc.nat(), fc.constantFrom("cut", "drop", "insert", "change", "change last")).map(([line, at, pick, how]) => {
  const b = Buffer.from(line, "utf8");
  const i = how === "change last" ? Math.max(0, b.length - 1) : b.length === 0 ? 0 : at % b.length;
  const byte = Buffer.from([tricky[pick % tricky.length]!]);
  if (how === "cut") return b.subarray(0, i);
  if (how === "drop") return Buffer.concat([b.subarray(0, i), b.subarray(i + 1)]);
  if (how === "insert") return Buffer.concat([b.subarray(0, i), byte, b.subarray(i)]);
  return Buffer.concat([b.subarray(0, i), byte, b.subarray(i + 1)]);
});

describe("scanResultRow", () => {
  it("decides as JSON.parse does, or leaves the line to it: whole lines", () => {
    // Generated objects repeat keys only at the top level, where the scan keeps the last as JSON.parse does.
    fc.assert(fc.property(jsonLine, (line) => void expectAgrees(Buffer.from(line, "utf8"), undefined, undefined, true)), { numRuns: 3000 });
  });

  it("never takes a damaged line for JSON, nor reads the bytes of the lines around it", () => {
    fc.assert(
      fc.property(damaged, fc.constantFrom("", "{}", '"', "]", "0"), fc.constantFrom("", "}", '"}', "1", "e5", 'ue,"run_id":"t:x"}'), (line, before, after) => {
        expectAgrees(line, Buffer.from(before), Buffer.from(after));
      }),
      { numRuns: 5000 },
    );
  });

  it("examples at the edges", () => {
    const cases: Array<[string, Reference | "left to the parse"]> = [
      ['{"run_id":"t:1","run_id":"t:2"}', { runId: "t:2", errored: false, methods: undefined, plain: true }],
      ['{"run_id":"t:1","run_id":3}', null],
      ['{"run_id":"t:1","errors":{"q":"x"},"errors":{}}', { runId: "t:1", errored: false, methods: undefined, plain: true }],
      ['{"run_id":"t:1","errors":[0]}', { runId: "t:1", errored: true, methods: undefined, plain: false }],
      ['{"run_id":"t:1","errors":"x"}', { runId: "t:1", errored: false, methods: undefined, plain: false }],
      ['{"run_id":"t:1","errors":{"q":1}}', { runId: "t:1", errored: true, methods: undefined, plain: false }],
      ['{"run_id":"t:1","errors":{"q":1},"errors":{"q":"x"}}', { runId: "t:1", errored: true, methods: undefined, plain: true }],
      // JSON.parse keeps the last "q" (a string): plain, but the scan leaves it to the parse.
      ['{"run_id":"t:1","errors":{"q":1,"q":"x"}}', { runId: "t:1", errored: true, methods: undefined, plain: false }],
      ['{"run_id":"t:1","skipped":["a","b"],"probs":{"a":{"x":1}},"id":"i","track":"t","family":"f"}', { runId: "t:1", errored: false, methods: undefined, plain: true }],
      ['{"run_id":"t:1","skipped":["a",1]}', { runId: "t:1", errored: false, methods: undefined, plain: false }],
      ['{"run_id":"t:1","skipped":{}}', { runId: "t:1", errored: false, methods: undefined, plain: false }],
      ['{"run_id":"t:1","probs":[]}', { runId: "t:1", errored: false, methods: undefined, plain: false }],
      ['{"run_id":"t:1","probs":[],"probs":{}}', { runId: "t:1", errored: false, methods: undefined, plain: true }],
      ['{"run_id":"t:1","id":1}', { runId: "t:1", errored: false, methods: undefined, plain: false }],
      ['{"run_id":"t:1","track":null}', { runId: "t:1", errored: false, methods: undefined, plain: false }],
      ['{"run_id":"t:1","family":{}}', { runId: "t:1", errored: false, methods: undefined, plain: false }],
      ['{"run_id":"t:1","family":{},"family":"f"}', { runId: "t:1", errored: false, methods: undefined, plain: true }],
      ['{"run_id":"t:1","answered_by":{"a":"m","b":1}}', { runId: "t:1", errored: false, methods: undefined, plain: true }],
      ['{"run_id":"t:1","answered_by":{"a":"m"},"answered_by":[]}', { runId: "t:1", errored: false, methods: undefined, plain: true }],
      ['{"run_id":"t:1","answered_by":{"a":"m","a":"n"}}', "left to the parse"],
      ['{"r\\u0075n_id":"t:1"}', "left to the parse"],
      ['{"run_id":"t:\\"1"}', "left to the parse"],
      ['{"run_id":"t:1"} x', "left to the parse"],
      ['{"run_id":"t:1",}', "left to the parse"],
      ['{"run_id":"t:1"x', "left to the parse"],
      ['{"run_id":"t:1","p":[1,2x}', "left to the parse"],
      ['{"run_id":"t:1","p":01}', "left to the parse"],
      ['{"run_id":"t:1","p":1.}', "left to the parse"],
      ['{"run_id":"t:1","p":"\t"}', "left to the parse"],
      ['{"run_id":"t:1","p":"\\x"}', "left to the parse"],
      ['{"run_id":"t:1","p":tru}', "left to the parse"],
      ["\u000b", "left to the parse"],
      [`{"run_id":"t:1","p":${"[".repeat(70)}${"]".repeat(70)}}`, "left to the parse"],
      [`{"run_id":"t:1","p":${"[".repeat(60)}${"]".repeat(60)}}`, { runId: "t:1", errored: false, methods: undefined, plain: true }],
      ["  ", null],
      ["[1,2]", null],
      ['{"id":"x"}', null],
    ];
    for (const [line, expected] of cases) {
      const facts = scan(Buffer.from(line, "utf8"), Buffer.alloc(0), Buffer.from("}"));
      expect(facts === undefined ? "left to the parse" : facts, line).toEqual(expected);
      expectAgrees(Buffer.from(line, "utf8"));
    }
  });

  it("decides every line the coordinator writes, error and non-ASCII ones too", () => {
    const questions = [
      { key: "intent", options: ["A", "B", "C"] },
      { key: "harmful", options: NOUL_KEYS },
      { key: "1", options: ["0", "1", "2"] },
    ];
    const head = { recordKey: "tvpl-retrieval-vn:câu-7", id: "câu-7", track: "tvpl-retrieval-vn", family: "retrieval", payloadSha256: "ab".repeat(32), questions };
    const answer = {
      probs: { intent: { A: 0.5, B: 0.25, C: 0.25 }, harmful: { true: 1e-9, false: 1 - 1e-9 } },
      skipped: ["1"],
      errors: { "1": 'engine: HTTP 400 {"message":"too many \\"options\\""}' },
      agent: "gpu-3",
      latencyMs: 12.5,
      promptTokens: 812,
      cachedTokens: null,
      completionTokens: 3,
      answeredBy: { intent: "systemone", harmful: "label-read" },
      retries: 1,
      approximate: true,
    };
    const line = Buffer.from(JSON.stringify(acceptedResultLine(head, answer)), "utf8");
    expect(expectAgrees(line)).toBe("decided");
    expect(scan(line, Buffer.alloc(0), Buffer.alloc(0))).toEqual({ runId: "tvpl-retrieval-vn:câu-7", errored: true, methods: ["systemone", "label-read"], plain: true });
  });
});

// sealResults over lines that are JSON but no record, and over answered_by fields it cannot count:
// they are skipped, never an exception; the methods come out in name order.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sealResults } from "../../../common/results/index.js";

const root = mkdtempSync(join(tmpdir(), "udm-seal-lines-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

function runDir(lines: readonly string[]): string {
  const dir = join(root, `run${++n}`);
  mkdirSync(join(dir, "fam"), { recursive: true });
  writeFileSync(join(dir, "fam", "t.jsonl"), lines.join("\n") + "\n");
  return dir;
}

const rec = (runId: string, fields: Record<string, unknown>) => JSON.stringify({ run_id: runId, id: runId.split(":")[1], probs: {}, skipped: [], ...fields });

describe("sealResults", () => {
  it("a line `null` mid-file is no record: skipped, the records around it counted", () => {
    const dir = runDir([rec("t:1", { answered_by: { q: "systemone" } }), "null", rec("t:2", { errors: { q: "engine: HTTP 500" }, answered_by: {} })]);
    const seal = sealResults(dir);
    expect(seal.errorRecords).toBe(1);
    expect(seal.answeredBy).toEqual({ systemone: 1 });
  });

  it("an answered_by with a value that is no method name is not counted, not even its string values", () => {
    const dir = runDir([rec("t:1", { answered_by: { a: "systemone", b: 3 } }), rec("t:2", { answered_by: { a: "label-read" } })]);
    expect(sealResults(dir).answeredBy).toEqual({ "label-read": 1 });
  });

  it("lines the scan leaves to JSON.parse (a key written with an escape) are counted by the same rules", () => {
    // `n\u006fte` is "note": JSON, but the scan reads no escaped key, so the sealer parses these lines as text.
    const escaped = (runId: string, fields: Record<string, unknown>) => rec(runId, fields).replace(/}$/, ',"n\\u006fte":1}');
    const dir = runDir([
      escaped("t:1", { answered_by: { a: "systemone", b: 3 } }),
      escaped("t:2", { answered_by: null }),
      escaped("t:3", { answered_by: { a: "label-read", b: "label-read" }, errors: { a: "engine: HTTP 500" } }),
      escaped("t:4", { answered_by: ["systemone"] }),
    ]);
    const seal = sealResults(dir);
    expect(seal.errorRecords).toBe(1);
    expect(seal.answeredBy).toEqual({ "label-read": 2 });
  });

  it("a line of whitespace JSON does not take (a no-break space) is blank: skipped, not a corrupted file", () => {
    const dir = runDir([rec("t:1", { answered_by: { q: "systemone" } }), "\u00a0", " \u00a0\t", rec("t:2", { answered_by: { q: "systemone" } })]);
    expect(sealResults(dir)).toMatchObject({ errorRecords: 0, answeredBy: { systemone: 2 } });
  });

  it("an object the scan leaves to JSON.parse (an escaped key) with no run_id is no record", () => {
    const dir = runDir([rec("t:1", { errors: { q: "x" } }), '{"\\u0069d":"1","errors":{"q":"x"}}', rec("t:2", {})]);
    expect(sealResults(dir).errorRecords).toBe(1);
  });

  it("records with the same methods, with errors and without, are each counted by their own line (states are shared, not merged)", () => {
    const dir = runDir([
      rec("t:1", { answered_by: { a: "systemone", b: "systemone" }, errors: { a: "engine: HTTP 500" } }),
      rec("t:2", { answered_by: { a: "systemone", b: "systemone" } }),
      rec("t:3", { answered_by: { a: "systemone", b: "systemone" } }),
      // t:2 redone with errors: its later line counts.
      rec("t:2", { answered_by: { a: "systemone" }, errors: { b: "engine: HTTP 500" } }),
    ]);
    expect(sealResults(dir)).toMatchObject({ errorRecords: 2, answeredBy: { systemone: 5 } });
  });

  it("the methods are in name order, not in the order first met", () => {
    const dir = runDir([rec("t:1", { answered_by: { a: "label-read" } }), rec("t:2", { answered_by: { a: "systemone" } }), rec("t:3", { answered_by: { a: "decisions", b: "systemone" } })]);
    const { answeredBy } = sealResults(dir);
    expect(Object.keys(answeredBy)).toEqual(["decisions", "label-read", "systemone"]);
    expect(answeredBy).toEqual({ decisions: 1, "label-read": 1, systemone: 2 });
  });
});

// sealResults counts records whose last line has errors, whatever form the line takes; a line that
// is not JSON before the end of a file is an error naming file and line, never skipped or counted.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { FormatError } from "../../common/errors.js";
import { sealResults } from "../../common/results/index.js";

const dir = mkdtempSync(join(tmpdir(), "udm-seal-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const line = (runId: string, extra: Record<string, unknown> = {}) => JSON.stringify({ run_id: runId, id: runId.split(":")[1], probs: {}, skipped: [], ...extra });

describe("sealResults", () => {
  it("counts a record by its last line, whatever form the line takes", () => {
    const run = join(dir, "run");
    mkdirSync(join(run, "fam"), { recursive: true });
    const lines = [
      line("t:1", { errors: { q: "engine: HTTP 500" } }),
      line("t:1"), // redone: no longer errored
      line("t:2"),
      line("t:2", { errors: { q: "engine: HTTP 500" } }), // errored last
      line("t:3", { probs: { "errors": { true: 1, false: 0 } } }), // a question named errors: no errors field
      '{"run_id":"t:4","probs":{},"skipped":[],"\\u0065rrors":{"q":"x"}}', // an escaped key that spells errors
      '{"id":"5","run_id":"t:5","probs":{},"errors":{"q":"x"}}', // run_id not first
      line("t:6", { errors: { q: "x" } }),
    ];
    // The last line is torn (no newline, cut short): it holds no committed result, so t:6 stays errored.
    writeFileSync(join(run, "fam", "a.jsonl"), lines.join("\n") + "\n" + line("t:6").slice(0, -1));
    writeFileSync(join(run, "fam", "b.jsonl.gz"), gzipSync(line("u:1", { errors: { q: "x" } }) + "\n" + line("u:2") + "\n"));
    const seal = sealResults(run);
    expect(Object.keys(seal.files).sort()).toEqual(["fam/a.jsonl", "fam/b.jsonl.gz"]);
    // Errored: t:2, t:4, t:5, t:6, u:1.
    expect(seal.errorRecords).toBe(5);
  });
});

describe("sealResults and a line corrupted in the middle of a file", () => {
  // What a torn write followed by more lines leaves (never the coordinator's own output): the record
  // must not be counted clean from it, nor the line skipped in silence: the error names file and line.
  it.each([
    ["a cut line ending in } that starts with its run_id", '{"run_id":"t:1","id":"1","probs":{"a":0.{"run_id":"t:9","id":"9","probs":{}}'],
    ["a line that is not JSON", '{"run_id":"t:1","id":"1","probs":{"a":0.'],
  ])("%s is a FormatError naming file and line", (_what, corrupt) => {
    const run = join(dir, `corrupt-${corrupt.length}`);
    mkdirSync(join(run, "fam"), { recursive: true });
    writeFileSync(join(run, "fam", "a.jsonl"), [line("t:1", { errors: { q: "engine: HTTP 500" } }), corrupt, line("t:2"), ""].join("\n"));
    expect(() => sealResults(run)).toThrow(FormatError);
    expect(() => sealResults(run)).toThrow(`${join(run, "fam", "a.jsonl")}:2: `);
  });

  it("a torn last line (no newline) is still no error: it holds no committed result", () => {
    const run = join(dir, "torn-last");
    mkdirSync(join(run, "fam"), { recursive: true });
    writeFileSync(join(run, "fam", "a.jsonl"), line("t:1", { errors: { q: "x" } }) + "\n" + line("t:1").slice(0, -1));
    expect(sealResults(run).errorRecords).toBe(1);
  });
});

describe("sealResults: lines that are JSON but no record, and answered_by that is not a method map", () => {
  it("are left out of the counts, with no error", () => {
    const run = join(dir, "odd-lines");
    mkdirSync(join(run, "fam"), { recursive: true });
    const lines = [
      "null",
      "[]",
      "1",
      '"text"',
      '{"id":"x","errors":{"q":"x"}}', // no run_id
      line("t:1", { answered_by: null }),
      line("t:2", { answered_by: ["systemone"] }),
      line("t:3", { answered_by: { a: 1 } }),
      line("t:4", { answered_by: { a: "systemone", b: "label-read" } }),
      line("t:5", { answered_by: { a: "decisions" }, errors: { b: "x" } }),
    ];
    writeFileSync(join(run, "fam", "a.jsonl"), lines.join("\n") + "\n");
    const seal = sealResults(run);
    expect(seal.errorRecords).toBe(1);
    // In name order; only string maps count.
    expect(Object.entries(seal.answeredBy)).toEqual([["decisions", 1], ["label-read", 1], ["systemone", 1]]);
  });
});

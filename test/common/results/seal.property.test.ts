// sealResults counts the errored records: each record's last whole line decides. Differential:
// random files of well-formed, reordered and escaped lines, the last one possibly torn, against a
// plain parse. (A line corrupted in the middle of a file is an error: test/card/results-files.test.ts.)
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { sealResults } from "../../../common/results/index.js";

const root = mkdtempSync(join(tmpdir(), "udm-seal-prop-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** What parsing every line gives: each run_id's last parsed line decides whether it is errored. */
function erroredByParsing(text: string): number {
  const errored = new Map<string, boolean>();
  for (const line of text.split("\n")) {
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch {
      continue;
    }
    if (row === null || typeof row !== "object") continue;
    const { run_id, errors } = row as { run_id?: unknown; errors?: unknown };
    if (typeof run_id !== "string") continue;
    errored.set(run_id, errors !== null && typeof errors === "object" && Object.keys(errors as object).length > 0);
  }
  return [...errored.values()].filter(Boolean).length;
}

// Run ids a fast path could misread: quotes and backslashes (escaped in JSON), non-ASCII text.
const runId = fc.constantFrom("t:1", "t:2", 't:"3', "t:\\4", "t:é5", "t:6}");
const errors = fc.constantFrom(undefined, null, {}, { q: "engine: HTTP 500" }, { errors: "x" });
const wholeLine = fc.record({ runId, errors, first: fc.boolean(), escapeKey: fc.boolean() }).map(({ runId, errors, first, escapeKey }) => {
  const body: Record<string, unknown> = first ? { run_id: runId, id: "x", probs: {} } : { id: "x", run_id: runId, probs: {} };
  if (errors !== undefined) body.errors = errors;
  const text = JSON.stringify(body);
  // The same key written with a \u escape: JSON, but no literal "errors" in the text.
  return escapeKey ? text.replace('"errors"', '"\\u0065rrors"') : text;
});
// Whole lines and blank or non-record lines; the last line may be torn, cut short anywhere (what a
// crash leaves: the coordinator writes whole lines, so only the last can be cut).
const line = fc.oneof({ weight: 6, arbitrary: wholeLine }, { weight: 1, arbitrary: fc.constantFrom("", "   ", "[]", "1", '{"id":"x","errors":{"q":"x"}}') });
const torn = fc.tuple(wholeLine, fc.nat()).map(([l, n]) => l.slice(0, 1 + (n % (l.length - 1))));

describe("sealResults errorRecords", () => {
  it("is the count parsing every line gives", () => {
    let n = 0;
    fc.assert(
      fc.property(fc.array(line, { maxLength: 12 }), fc.option(torn), fc.boolean(), (lines, last, newlineAtEnd) => {
        const dir = join(root, `r${n++}`);
        mkdirSync(dir);
        const text = last !== null ? [...lines, last].join("\n") : lines.join("\n") + (newlineAtEnd ? "\n" : "");
        writeFileSync(join(dir, "a.jsonl"), text);
        expect(sealResults(dir).errorRecords).toBe(erroredByParsing(text));
      }),
      { numRuns: 400 },
    );
  });

  it("lines not to take for whole ones: run_id not first, a torn last line ending in }", () => {
    const dir = join(root, "examples");
    mkdirSync(dir);
    const errored = (id: string) => JSON.stringify({ run_id: id, id: "x", probs: {}, errors: { q: "x" } });
    const text = [
      errored("t:1"),
      errored("t:5"),
      '{"id":"5","run_id":"t:5","probs":{}}', // whole, run_id not first: t:5 redone
      errored("t:2"),
      '{"run_id":"t:2","id":"2","probs":{}', // torn last line (no newline), ends in }: t:2 stays errored
    ].join("\n");
    writeFileSync(join(dir, "a.jsonl"), text);
    expect(erroredByParsing(text)).toBe(2);
    expect(sealResults(dir).errorRecords).toBe(2);
  });

  it("`only` limits the files sealed to those named", () => {
    const dir = join(root, "only");
    mkdirSync(join(dir, "fam"), { recursive: true });
    writeFileSync(join(dir, "fam", "a.jsonl"), '{"run_id":"a:1","errors":{"q":"x"}}\n');
    writeFileSync(join(dir, "fam", "b.jsonl"), '{"run_id":"b:1","errors":{"q":"x"}}\n');
    const seal = sealResults(dir, new Set(["fam/b.jsonl"]));
    expect(Object.keys(seal.files)).toEqual(["fam/b.jsonl"]);
    expect(seal.errorRecords).toBe(1);
    expect(Object.keys(sealResults(dir).files)).toEqual(["fam/a.jsonl", "fam/b.jsonl"]);
  });
});

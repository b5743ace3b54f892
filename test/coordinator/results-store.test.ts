import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ResultsStore } from "../../coordinator/results-store.js";
import type { CommittedLine } from "../../common/results/committed-line.js";
import { createLogger } from "../../common/log.js";
import { FormatError } from "../../common/errors.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), "udm-store-"));
  dirs.push(d);
  return d;
};
const line = (n: number, track = "t"): CommittedLine => ({
  recordKey: `${track}:${n}`,
  track,
  family: "fam",
  text: JSON.stringify({ run_id: `${track}:${n}`, id: `${n}`, track, family: "fam", probs: { label: { A: 1 } }, skipped: [] }),
  errored: false,
});
const quiet = createLogger("test", "silent");

describe("ResultsStore", () => {
  it("commits only after flush, once per run_id, in <out>/<family>/<track>.jsonl", async () => {
    const out = tmp();
    const committed: string[] = [];
    const store = await ResultsStore.open({ outDir: out, batchLines: 1000, flushMs: 60_000, onCommitted: (l) => committed.push(l.recordKey) });
    expect(store.append(line(1))).toBe(true);
    expect(store.append(line(1))).toBe(false);
    expect(store.isCommitted("t:1")).toBe(false);
    expect(committed).toEqual([]);
    await store.flush();
    expect(committed).toEqual(["t:1"]);
    expect(store.append(line(1))).toBe(false);
    store.append(line(2));
    store.append(line(3, "u"));
    await store.close();
    expect(readFileSync(join(out, "fam", "t.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l).run_id)).toEqual(["t:1", "t:2"]);
    expect(readFileSync(join(out, "fam", "u.jsonl"), "utf8")).toContain('"u:3"');
  });

  it("writes each track and family to its own file, lines in order, and reports them file by file in the order each file was first written to", async () => {
    const out = tmp();
    const committed: string[] = [];
    const store = await ResultsStore.open({ outDir: out, batchLines: 1000, flushMs: 60_000, onCommitted: (l) => committed.push(l.recordKey) });
    const other = (n: number, track: string, family: string): CommittedLine => ({ ...line(n, track), family, text: JSON.stringify({ run_id: `${track}:${n}`, family }) });
    store.append(line(1));
    store.append(other(5, "t", "fam2"));
    store.append(other(1, "u", "fam"));
    store.append(line(2));
    store.append(other(3, "u", "fam"));
    await store.flush();
    // File by file in the order each was first written to (not family by family), each file's lines in order.
    expect(committed).toEqual(["t:1", "t:2", "t:5", "u:1", "u:3"]);
    expect(readFileSync(join(out, "fam", "t.jsonl"), "utf8")).toBe(`${line(1).text}\n${line(2).text}\n`);
    expect(readFileSync(join(out, "fam", "u.jsonl"), "utf8")).toBe(`${other(1, "u", "fam").text}\n${other(3, "u", "fam").text}\n`);
    expect(readFileSync(join(out, "fam2", "t.jsonl"), "utf8")).toBe(`${other(5, "t", "fam2").text}\n`);
    await store.close();
  });

  it("flushes by batch size without waiting for the timer", async () => {
    const out = tmp();
    const committed: string[] = [];
    const store = await ResultsStore.open({ outDir: out, batchLines: 3, flushMs: 60_000, onCommitted: (l) => committed.push(l.recordKey) });
    for (let i = 0; i < 3; i++) store.append(line(i));
    // The timer is a minute away: only the batch trigger can commit these.
    for (let i = 0; i < 500 && committed.length < 3; i++) await new Promise((r) => setTimeout(r, 10));
    expect(committed).toHaveLength(3);
    await store.close();
  });

  it("on open collects committed run_ids and cuts a torn last line back to the last complete one", async () => {
    const out = tmp();
    mkdirSync(join(out, "fam"), { recursive: true });
    const file = join(out, "fam", "t.jsonl");
    const complete = [line(1), line(2)].map((l) => l.text + "\n").join("");
    writeFileSync(file, complete + line(3).text.slice(0, 25));
    const store = await ResultsStore.open({ outDir: out, logger: quiet });
    expect(store.repaired).toEqual([{ file, line: 3, bytesDropped: 25 }]);
    expect(readFileSync(file, "utf8")).toBe(complete);
    expect(store.isCommitted("t:1") && store.isCommitted("t:2")).toBe(true);
    expect(store.isCommitted("t:3")).toBe(false);
    store.append(line(3));
    await store.close();
    expect(readFileSync(file, "utf8").trim().split("\n")).toHaveLength(3);
  });

  it("ends a complete last line that lacks its newline before appending", async () => {
    const out = tmp();
    mkdirSync(join(out, "fam"), { recursive: true });
    const file = join(out, "fam", "t.jsonl");
    writeFileSync(file, line(1).text);
    const store = await ResultsStore.open({ outDir: out });
    store.append(line(2));
    await store.close();
    expect(readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l).run_id)).toEqual(["t:1", "t:2"]);
  });

  it("refuses a results file with a bad line in the middle, naming file and line", async () => {
    const out = tmp();
    mkdirSync(join(out, "fam"), { recursive: true });
    const file = join(out, "fam", "t.jsonl");
    writeFileSync(file, line(1).text + "\n{oops\n");
    appendFileSync(file, line(2).text + "\n");
    await expect(ResultsStore.open({ outDir: out })).rejects.toThrow(FormatError);
    await expect(ResultsStore.open({ outDir: out })).rejects.toThrow(`${file}:2`);
    writeFileSync(file, JSON.stringify({ id: "x" }) + "\n");
    await expect(ResultsStore.open({ outDir: out })).rejects.toThrow(/field run_id/);
  });

  it("reads each committed line as the parse does, whether read from its bytes or parsed: the latest line of a run_id decides", async () => {
    const out = tmp();
    mkdirSync(join(out, "fam"), { recursive: true });
    const file = join(out, "fam", "t.jsonl");
    const lineOf = (fields: Record<string, unknown>) => JSON.stringify({ id: "x", track: "t", family: "fam", probs: { q: { A: 1 } }, skipped: [], ...fields });
    writeFileSync(
      file,
      [
        lineOf({ run_id: "t:1", errors: { q: "engine: HTTP 500" } }),
        lineOf({ run_id: "t:1", errors: {} }),
        // An escaped key: left to the parse, which reads run_id t:2.
        lineOf({ run_id: "t:x" }).replace('"run_id":"t:x"', '"r\\u0075n_id":"t:2"'),
        lineOf({ run_id: "t:3", errors: { q: "given up" } }),
        lineOf({ run_id: "t:4", errors: { q: "timed out" } }),
        `${lineOf({ run_id: "t:4" })}\r`,
        // A repeated run_id key: the last counts.
        lineOf({ run_id: "t:5" }).replace('"run_id":"t:5"', '"run_id":"t:0","run_id":"t:5"'),
      ].join("\n") + "\n",
    );
    const store = await ResultsStore.open({ outDir: out, logger: quiet });
    expect(["t:0", "t:1", "t:2", "t:3", "t:4", "t:5"].filter((k) => store.isCommitted(k))).toEqual(["t:1", "t:2", "t:4", "t:5"]);
    expect(store.retrying).toBe(1);
    await store.close();
  });

  it("refuses a line whose run_id reads well but whose shape is not a results line's, naming file and line", async () => {
    const out = tmp();
    mkdirSync(join(out, "fam"), { recursive: true });
    const file = join(out, "fam", "t.jsonl");
    for (const bad of [{ probs: 5 }, { skipped: [1] }, { errors: { q: 1 } }, { track: 7 }]) {
      writeFileSync(file, [line(1).text, JSON.stringify({ run_id: "t:2", ...bad }), line(3).text].join("\n") + "\n");
      await expect(ResultsStore.open({ outDir: out }), JSON.stringify(bad)).rejects.toThrow(`${file}:2`);
    }
  });
});

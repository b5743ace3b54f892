// A ResultsSealer that reads results files as they grow seals what reading them whole would: the
// same hashes, errored records and answered_by, whatever the catch-ups cut (mid-line, mid-file,
// between files). Differential, against a plain read of the final files; and the files a run's
// sealer has to read again (shrunk, replaced, a gzip file rewritten) or refuse (a corrupted line).
import { createHash } from "node:crypto";
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, truncateSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import fc from "fast-check";
import { afterAll, describe, expect, it, vi } from "vitest";
import { FormatError } from "../../../common/errors.js";
import { ResultsSealer } from "../../../common/results/seal.js";

const root = mkdtempSync(join(tmpdir(), "udm-sealer-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The seal by reading each final file whole: sha256 of its bytes, each run_id's last parsed line decides. */
function plainSeal(dir: string, keys: string[]): { files: Record<string, string>; errorRecords: number; answeredBy: Record<string, number> } {
  const files: Record<string, string> = {};
  const last = new Map<string, { errored: boolean; by: string[] }>();
  for (const key of [...keys].sort()) {
    const bytes = readFileSync(join(dir, key));
    files[key] = createHash("sha256").update(bytes).digest("hex");
    for (const line of (key.endsWith(".gz") ? gunzipSync(bytes) : bytes).toString("utf8").split("\n")) {
      let row: { run_id?: unknown; errors?: unknown; answered_by?: unknown };
      try {
        row = JSON.parse(line);
      } catch {
        continue;
      }
      if (row === null || typeof row !== "object" || typeof row.run_id !== "string") continue;
      const by = row.answered_by;
      const methods = by !== null && typeof by === "object" && !Array.isArray(by) && Object.values(by).every((m) => typeof m === "string") ? (Object.values(by) as string[]) : [];
      last.set(row.run_id, { errored: row.errors !== null && typeof row.errors === "object" && Object.keys(row.errors).length > 0, by: methods });
    }
  }
  const answeredBy: Record<string, number> = {};
  for (const { by } of last.values()) for (const m of by) answeredBy[m] = (answeredBy[m] ?? 0) + 1;
  return { files, errorRecords: [...last.values()].filter((r) => r.errored).length, answeredBy: Object.fromEntries(Object.entries(answeredBy).sort()) };
}

const runId = fc.constantFrom("t:1", "t:2", 't:"3', "t:é4", "u:5");
const errors = fc.constantFrom(undefined, {}, { q1: "engine: HTTP 500" });
const answeredBy = fc.constantFrom(undefined, { q1: "systemone" }, { q1: "label-read", q2: "systemone" }, { q1: 3 });
const line = fc.oneof(
  { weight: 8, arbitrary: fc.record({ runId, errors, answeredBy }).map(({ runId, errors, answeredBy }) => JSON.stringify({ run_id: runId, id: "x", ...(errors ? { errors } : {}), ...(answeredBy ? { answered_by: answeredBy } : {}) })) },
  { weight: 1, arbitrary: fc.constantFrom("", "  ", "[]", '{"id":"x"}') },
);
/** A write: which file, its lines, where the write is cut (a writer's bytes arrive in pieces), then a catch-up with this budget. */
const step = fc.record({ file: fc.constantFrom("fam/a.jsonl", "fam/b.jsonl", "other/c.jsonl"), lines: fc.array(line, { minLength: 1, maxLength: 4 }), cut: fc.nat(), budget: fc.constantFrom(1, 7, 64, 100_000, Infinity) });

describe("ResultsSealer", () => {
  it("seals what reading the final files whole gives, however the catch-ups cut them", () => {
    let n = 0;
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 10 }), fc.boolean(), (steps, tornEnd) => {
        const dir = join(root, `p${n++}`);
        const sealer = new ResultsSealer(dir);
        const keys = new Set<string>();
        mkdirSync(dir);
        let pending = "";
        let pendingKey = "";
        for (const s of steps) {
          // What was cut off the last write lands first: each file is written whole lines at a time.
          if (pending) appendFileSync(join(dir, pendingKey), pending);
          mkdirSync(join(dir, s.file, ".."), { recursive: true });
          const text = s.lines.join("\n") + "\n";
          const at = s.cut % (text.length + 1);
          appendFileSync(join(dir, s.file), text.slice(0, at));
          keys.add(s.file);
          pending = text.slice(at);
          pendingKey = s.file;
          sealer.catchUp(s.budget);
        }
        // The last write either lands whole, or is torn (a crash): its rest never comes.
        if (pending && !tornEnd) appendFileSync(join(dir, pendingKey), pending);
        expect(sealer.seal()).toEqual(plainSeal(dir, [...keys]));
        expect(new ResultsSealer(dir).seal()).toEqual(plainSeal(dir, [...keys]));
      }),
      { numRuns: 150 },
    );
  });

  it("refuses a file whose line, already read, turns out corrupted once a newline follows it", () => {
    const dir = join(root, "corrupt");
    mkdirSync(join(dir, "fam"), { recursive: true });
    const file = join(dir, "fam", "a.jsonl");
    writeFileSync(file, `${JSON.stringify({ run_id: "t:1" })}\n{"run_id":"t:2","pro`);
    const sealer = new ResultsSealer(dir);
    sealer.catchUp();
    // Torn so far: the last line holds no record, and the file seals.
    expect(sealer.seal().files["fam/a.jsonl"]).toBe(createHash("sha256").update(readFileSync(file)).digest("hex"));
    appendFileSync(file, `\n${JSON.stringify({ run_id: "t:3" })}\n`);
    expect(() => sealer.seal()).toThrow(FormatError);
    expect(() => sealer.seal()).toThrow(`${file}:2: `);
    // Only the files asked for: another file's corruption does not stop their seal.
    writeFileSync(join(dir, "fam", "b.jsonl"), `${JSON.stringify({ run_id: "t:4", errors: { q: "x" } })}\n`);
    expect(sealer.seal(new Set(["fam/b.jsonl"])).errorRecords).toBe(1);
  });

  it("reads again a file that shrank or was replaced, and a gzip file that changed", () => {
    const dir = join(root, "changed");
    mkdirSync(join(dir, "fam"), { recursive: true });
    const file = join(dir, "fam", "a.jsonl");
    const gz = join(dir, "fam", "z.jsonl.gz");
    writeFileSync(file, `${JSON.stringify({ run_id: "t:1", errors: { q: "x" } })}\n${JSON.stringify({ run_id: "t:2", errors: { q: "x" } })}\n`);
    writeFileSync(gz, gzipSync(`${JSON.stringify({ run_id: "z:1", errors: { q: "x" } })}\n`));
    const sealer = new ResultsSealer(dir);
    expect(sealer.seal().errorRecords).toBe(3);
    truncateSync(file, readFileSync(file).indexOf("\n") + 1);
    expect(sealer.seal()).toEqual(plainSeal(dir, ["fam/a.jsonl", "fam/z.jsonl.gz"]));
    expect(sealer.seal().errorRecords).toBe(2);
    const replacement = join(dir, "fam", "a.tmp");
    writeFileSync(replacement, `${JSON.stringify({ run_id: "t:1" })}\n${JSON.stringify({ run_id: "t:9" })}\n`);
    renameSync(replacement, file);
    writeFileSync(gz, gzipSync(`${JSON.stringify({ run_id: "z:1" })}\n`));
    expect(sealer.seal()).toEqual(plainSeal(dir, ["fam/a.jsonl", "fam/z.jsonl.gz"]));
    expect(sealer.seal().errorRecords).toBe(0);
    rmSync(gz);
    expect(Object.keys(sealer.seal().files)).toEqual(["fam/a.jsonl"]);
  });
});

describe("ResultsSealer.catchUp and follow", () => {
  it("catchUp reads at most its budget and says whether every file is read to its end", () => {
    const dir = join(root, "budget");
    mkdirSync(join(dir, "fam"), { recursive: true });
    const line = `${JSON.stringify({ run_id: "t:1" })}\n`;
    writeFileSync(join(dir, "fam", "a.jsonl"), line.repeat(10));
    writeFileSync(join(dir, "fam", "b.jsonl"), line.repeat(10));
    const sealer = new ResultsSealer(dir);
    expect(sealer.catchUp(line.length * 4)).toBe(false);
    expect(sealer.bytesRead).toBe(line.length * 4);
    expect(sealer.catchUp(line.length * 10)).toBe(false);
    expect(sealer.bytesRead).toBe(line.length * 14);
    expect(sealer.catchUp()).toBe(true);
    expect(sealer.bytesRead).toBe(line.length * 20);
    expect(sealer.catchUp(1)).toBe(true);
    expect(sealer.bytesRead).toBe(line.length * 20);
  });

  it("follow reads a chunk at a time on its clock, goes on after an unreadable moment, and stops when told", () => {
    vi.useFakeTimers();
    try {
      const dir = join(root, "follow");
      mkdirSync(join(dir, "fam"), { recursive: true });
      const line = `${JSON.stringify({ run_id: "t:1" })}\n`;
      writeFileSync(join(dir, "fam", "a.jsonl"), line.repeat(10));
      const sealer = new ResultsSealer(dir);
      const stop = sealer.follow(1_000, line.length * 4, 20);
      vi.advanceTimersByTime(999);
      expect(sealer.bytesRead).toBe(0);
      vi.advanceTimersByTime(1);
      expect(sealer.bytesRead).toBe(line.length * 4);
      // Behind: the next chunk after the pause, not after the interval.
      vi.advanceTimersByTime(20);
      expect(sealer.bytesRead).toBe(line.length * 8);
      vi.advanceTimersByTime(20);
      expect(sealer.bytesRead).toBe(line.length * 10);
      // Caught up: the next look is an interval later.
      appendFileSync(join(dir, "fam", "a.jsonl"), line);
      vi.advanceTimersByTime(999);
      expect(sealer.bytesRead).toBe(line.length * 10);
      vi.advanceTimersByTime(1);
      expect(sealer.bytesRead).toBe(line.length * 11);
      // A directory that cannot be read for a moment (gone) is not the end of following it.
      rmSync(dir, { recursive: true });
      vi.advanceTimersByTime(1_000);
      mkdirSync(join(dir, "fam"), { recursive: true });
      writeFileSync(join(dir, "fam", "a.jsonl"), line.repeat(2));
      vi.advanceTimersByTime(1_000);
      expect(sealer.bytesRead).toBe(line.length * 13);
      stop();
      appendFileSync(join(dir, "fam", "a.jsonl"), line);
      vi.advanceTimersByTime(10_000);
      expect(sealer.bytesRead).toBe(line.length * 13);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("ResultsSealer: what it reads again", () => {
  const line = (id: string, errored = false) => `${JSON.stringify({ run_id: id, ...(errored ? { errors: { q: "x" } } : {}) })}\n`;

  it("reads each byte once while files only grow, and again only a file that shrank, was replaced or (gzip) changed", () => {
    const dir = join(root, "again");
    mkdirSync(join(dir, "fam"), { recursive: true });
    const file = join(dir, "fam", "a.jsonl");
    const gz = join(dir, "fam", "z.jsonl.gz");
    writeFileSync(file, line("t:1") + line("t:2"));
    const gzBytes = gzipSync(line("z:1"));
    writeFileSync(gz, gzBytes);
    const sealer = new ResultsSealer(dir);
    sealer.catchUp();
    const first = line("t:1").length * 2 + gzBytes.length;
    expect(sealer.bytesRead).toBe(first);
    // Unchanged: nothing read, not even the gzip file.
    sealer.catchUp();
    sealer.seal();
    expect(sealer.bytesRead).toBe(first);
    // Grown: only the new bytes.
    appendFileSync(file, line("t:3"));
    sealer.catchUp();
    expect(sealer.bytesRead).toBe(first + line("t:3").length);
    // Shrunk: the whole file again.
    truncateSync(file, line("t:1").length);
    sealer.catchUp();
    expect(sealer.bytesRead).toBe(first + line("t:3").length + line("t:1").length);
    // Replaced by another file at least as large: the whole new file.
    const before = sealer.bytesRead;
    const other = join(dir, "fam", "a.tmp");
    const replaced = line("t:7", true) + line("t:8", true);
    writeFileSync(other, replaced);
    renameSync(other, file);
    sealer.catchUp();
    expect(sealer.bytesRead).toBe(before + replaced.length);
    expect(sealer.seal().errorRecords).toBe(2);
    // A gzip file rewritten: read whole again, the new content counted.
    const gz2 = gzipSync(line("z:1", true) + line("z:2", true));
    writeFileSync(gz, gz2);
    const t = new Date(Date.now() + 5_000);
    utimesSync(gz, t, t);
    const mid = sealer.bytesRead;
    expect(sealer.seal().errorRecords).toBe(4);
    expect(sealer.bytesRead).toBe(mid + gz2.length);
  });

  it("names the first corrupted line of a file, not a later one", () => {
    const dir = join(root, "two-corrupt");
    mkdirSync(join(dir, "fam"), { recursive: true });
    const file = join(dir, "fam", "a.jsonl");
    writeFileSync(file, line("t:1") + "{not json\n" + line("t:2") + "{nor this\n" + line("t:3"));
    expect(() => new ResultsSealer(dir).seal()).toThrow(`${file}:2: `);
  });

  it("leaves no file open", () => {
    const dir = join(root, "fds");
    mkdirSync(join(dir, "fam"), { recursive: true });
    writeFileSync(join(dir, "fam", "a.jsonl"), line("t:1"));
    const sealer = new ResultsSealer(dir);
    const open = () => readdirSync("/proc/self/fd").length;
    sealer.catchUp();
    const before = open();
    for (let i = 0; i < 20; i++) {
      appendFileSync(join(dir, "fam", "a.jsonl"), line(`t:${i + 2}`));
      sealer.catchUp();
    }
    expect(open()).toBe(before);
  });
});


describe("ResultsSealer: gzip files and budgets", () => {
  const line = (id: string, errored = false) => `${JSON.stringify({ run_id: id, ...(errored ? { errors: { q: "x" } } : {}) })}\n`;
  const sha = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

  it("a budget spent on one file reads nothing of the next, not even a gzip file", () => {
    const dir = join(root, "gz-budget");
    mkdirSync(join(dir, "fam"), { recursive: true });
    writeFileSync(join(dir, "fam", "a.jsonl"), line("t:1"));
    writeFileSync(join(dir, "fam", "b.jsonl.gz"), gzipSync(line("t:2")));
    const sealer = new ResultsSealer(dir);
    expect(sealer.catchUp(line("t:1").length)).toBe(false);
    expect(sealer.bytesRead).toBe(line("t:1").length);
  });

  it("a gzip file rewritten at the same size, or replaced in place, seals its new bytes; an empty one is refused", () => {
    const dir = join(root, "gz-same");
    mkdirSync(join(dir, "fam"), { recursive: true });
    const gz = join(dir, "fam", "z.jsonl.gz");
    const before = gzipSync(line("z:1"));
    const after = gzipSync(line("z:2"));
    expect(after.length).toBe(before.length);
    writeFileSync(gz, before);
    const sealer = new ResultsSealer(dir);
    expect(sealer.seal().files["fam/z.jsonl.gz"]).toBe(sha(gz));
    // Same size, later mtime: read again (nothing else tells it changed).
    writeFileSync(gz, after);
    const t = new Date(Date.now() + 10_000);
    utimesSync(gz, t, t);
    expect(sealer.seal().files["fam/z.jsonl.gz"]).toBe(sha(gz));
    // Another size, the old mtime kept: read again too.
    const bigger = gzipSync(line("z:3") + line("z:4", true));
    writeFileSync(gz, bigger);
    utimesSync(gz, t, t);
    expect(sealer.seal()).toEqual(plainSeal(dir, ["fam/z.jsonl.gz"]));
    expect(sealer.seal().errorRecords).toBe(1);
    // An empty gzip file is no gzip: refused, as reading it whole refuses it.
    writeFileSync(gz, Buffer.alloc(0));
    expect(() => new ResultsSealer(dir).seal()).toThrow();
    expect(() => sealer.seal()).toThrow();
  });

  it("follow looks again an interval after a catch-up that failed, not at once", () => {
    vi.useFakeTimers();
    try {
      const dir = join(root, "gz-follow-missing");
      const sealer = new ResultsSealer(dir);
      const calls = vi.spyOn(sealer, "catchUp");
      const stop = sealer.follow(1_000, 1 << 20, 20);
      vi.advanceTimersByTime(1_000);
      expect(calls).toHaveBeenCalledTimes(1);
      vi.advanceTimersByTime(500);
      expect(calls).toHaveBeenCalledTimes(1);
      vi.advanceTimersByTime(500);
      expect(calls).toHaveBeenCalledTimes(2);
      stop();
    } finally {
      vi.useRealTimers();
    }
  });
});

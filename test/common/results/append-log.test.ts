// The append log shared by the results store and the scorer's journal: open-time repair, queued
// lines durable only after flush, lines in order across flushes.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import fc from "fast-check";
import { AppendLog, encodeLines } from "../../../common/results/append-log.js";
import { trackFilesUnder, trackOfRunId, trackResultsPath } from "../../../common/results/paths.js";
import { underCi } from "../../support/real-tool.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), "udm-append-log-"));
  dirs.push(d);
  return d;
};

describe("encodeLines", () => {
  it("gives the bytes of the lines joined by newlines and ended by one, as UTF-8 (lone surrogates too)", () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.constantFrom("\ud800", "a\udc00b", "\u00e9\u{1f600}")), { minLength: 1, maxLength: 20 }), (lines) => {
        expect(encodeLines(lines).equals(Buffer.from(lines.join("\n") + "\n"))).toBe(true);
      }),
    );
  });
});

describe("AppendLog", () => {
  it("reads every line on open, cuts a torn last line and reports it", async () => {
    const file = join(tmp(), "a.jsonl");
    writeFileSync(file, '{"n":1}\n{"n":2}\n{"n":3');
    const seen: Array<[unknown, number, boolean]> = [];
    const { log, torn } = await AppendLog.open(file, { onLine: (v, l, scanned) => seen.push([v, l, scanned]) });
    expect(seen).toEqual([
      [{ n: 1 }, 1, false],
      [{ n: 2 }, 2, false],
    ]);
    expect(torn).toEqual({ file, line: 3, bytesDropped: 6 });
    expect(readFileSync(file, "utf8")).toBe('{"n":1}\n{"n":2}\n');
    log.append('{"n":3}');
    await log.close();
    expect(readFileSync(file, "utf8")).toBe('{"n":1}\n{"n":2}\n{"n":3}\n');
  });

  it("reads the lines a scan takes from their bytes, and parses the others", async () => {
    const file = join(tmp(), "a.jsonl");
    writeFileSync(file, '{"n":1}\n{"n":2}\n{"n":3}\n');
    const seen: Array<[unknown, number, boolean]> = [];
    const scan = (bytes: Buffer, start: number, end: number) => (bytes.toString("utf8", start, end) === '{"n":2}' ? undefined : `bytes ${bytes.toString("utf8", start, end)}`);
    const { log } = await AppendLog.open(file, { scan, onLine: (v, l, scanned) => seen.push([v, l, scanned]) });
    expect(seen).toEqual([
      ['bytes {"n":1}', 1, true],
      [{ n: 2 }, 2, false],
      ['bytes {"n":3}', 3, true],
    ]);
    await log.close();
  });

  it("ends a complete last line that lacks its newline", async () => {
    const file = join(tmp(), "a.jsonl");
    writeFileSync(file, '{"n":1}');
    const { log, torn } = await AppendLog.open(file);
    expect(torn).toBeUndefined();
    log.append('{"n":2}');
    await log.flush();
    expect(readFileSync(file, "utf8")).toBe('{"n":1}\n{"n":2}\n');
    await log.close();
  });

  it("the repair of a last line without its newline leaves no file descriptor open", async () => {
    const file = join(tmp(), "a.jsonl");
    const open = () => readdirSync("/proc/self/fd").length;
    writeFileSync(file, '{"n":1}');
    const before = open();
    const { log } = await AppendLog.open(file);
    await log.close();
    expect(readFileSync(file, "utf8")).toBe('{"n":1}\n');
    expect(open()).toBe(before);
  });

  it("writes nothing before flush, creates the file (and folder) lazily unless asked to create it", async () => {
    const dir = tmp();
    const lazy = new AppendLog(join(dir, "fam", "t.jsonl"));
    lazy.append("{}");
    expect(lazy.pending).toBe(1);
    expect(existsSync(lazy.path)).toBe(false);
    await lazy.flush();
    expect(lazy.pending).toBe(0);
    expect(readFileSync(lazy.path, "utf8")).toBe("{}\n");
    await lazy.close();
    const { log: eager } = await AppendLog.open(join(dir, "j.jsonl"), { create: true });
    expect(readFileSync(eager.path, "utf8")).toBe("");
    await eager.close();
    await expect((eager.append("{}"), eager.flush())).rejects.toThrow(/closed/);
  });
});

/** A 128 KiB tmpfs (root only): a disk that really fills up; or why there is none. */
function smallDisk(): { dir: string } | { why: string } {
  if (process.getuid?.() !== 0) return { why: "not root" };
  const d = mkdtempSync(join(tmpdir(), "udm-small-disk-"));
  const r = spawnSync("mount", ["-t", "tmpfs", "-o", "size=128k", "tmpfs", d], { encoding: "utf8" });
  if (r.status === 0) return { dir: d };
  rmSync(d, { recursive: true, force: true });
  return { why: `mount -t tmpfs failed: ${(r.stderr || r.error?.message || "").trim()}` };
}
const small = smallDisk();
const disk = "dir" in small ? small.dir : undefined;
afterAll(() => {
  if (disk && spawnSync("umount", [disk]).status === 0) rmSync(disk, { recursive: true, force: true });
});

// .ci/run runs as root, so under CI the test runs, and fails with the reason when it cannot.
describe.skipIf(!disk && !underCi())("AppendLog on a disk that fills up (a 128 KiB tmpfs; needs root)", () => {
  it("counts only batches wholly on disk, leaves no part of a failed batch, and appends again once there is room", async () => {
    if (!disk) throw new Error(`no small disk under CI=${process.env.CI}: ${"why" in small ? small.why : ""}`);
    const filler = join(disk!, "filler");
    writeFileSync(filler, Buffer.alloc(48 * 1024));
    const path = join(disk!, "out", "track.jsonl");
    const log = new AppendLog(path);
    const durable: string[] = [];
    let failure: NodeJS.ErrnoException | undefined;
    for (let batch = 0; !failure && batch < 1000; batch++) {
      // Batches of uneven size, so the disk fills in the middle of one.
      const lines = Array.from({ length: 7 + (batch % 5) }, (_, i) => JSON.stringify({ run_id: `t:${batch}-${i}`, pad: "x".repeat(300 + 37 * i) }));
      for (const l of lines) log.append(l);
      try {
        await log.flush();
        durable.push(...lines);
      } catch (err) {
        failure = err as NodeJS.ErrnoException;
      }
    }
    expect(failure?.code).toBe("ENOSPC");
    expect(durable.length).toBeGreaterThan(0);
    expect(readFileSync(path, "utf8")).toBe(durable.join("\n") + "\n");
    await log.close();
    unlinkSync(filler);
    const seen: unknown[] = [];
    const { log: again, torn } = await AppendLog.open(path, { onLine: (v) => seen.push(v) });
    expect(torn).toBeUndefined();
    expect(seen).toHaveLength(durable.length);
    again.append(JSON.stringify({ run_id: "t:after" }));
    await again.flush();
    await again.close();
    expect(readFileSync(path, "utf8")).toBe([...durable, JSON.stringify({ run_id: "t:after" })].join("\n") + "\n");
  });
});

describe("results paths", () => {
  it("track file, track of a run_id, track files of an out dir", async () => {
    const out = tmp();
    expect(trackResultsPath(out, "fam", "t")).toBe(join(out, "fam", "t.jsonl"));
    expect(trackOfRunId("t:r:1")).toBe("t");
    expect(trackOfRunId(":x")).toBe("");
    expect(trackOfRunId("nocolon")).toBe("");
    for (const p of [trackResultsPath(out, "b", "y"), trackResultsPath(out, "a", "x"), join(out, ".cache", "z.jsonl")]) {
      const log = new AppendLog(p);
      log.append("{}");
      await log.close();
    }
    expect(trackFilesUnder(out)).toEqual([trackResultsPath(out, "a", "x"), trackResultsPath(out, "b", "y")]);
  });

  it("opened to read only: a missing file is not created and close() needs no handle; an empty file stays empty", async () => {
    const dir = tmp();
    const missing = join(dir, "fam", "t.jsonl");
    const { log, torn } = await AppendLog.open(missing);
    expect(torn).toBeUndefined();
    await log.close();
    expect(existsSync(missing)).toBe(false);
    const empty = join(dir, "empty.jsonl");
    writeFileSync(empty, "");
    await (await AppendLog.open(empty)).log.close();
    expect(readFileSync(empty, "utf8")).toBe("");
  });
});

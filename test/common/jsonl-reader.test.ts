// The streaming JSONL reader on real files: plain and gzip, damaged in the ways files get damaged,
// and bounded memory on a file much larger than any line.
import { createHash } from "node:crypto";
import { createWriteStream, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { once } from "node:events";
import { finished } from "node:stream/promises";
import { createGzip, gzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { FormatError } from "../../common/errors.js";
import { readJsonLines, type JsonLine, type ReaderStats } from "../../common/jsonl-reader.js";
import { readTrackRecords } from "../../common/suite/suite.js";

const dir = mkdtempSync(join(tmpdir(), "udm-jsonl-reader-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function file(name: string, content: string | Buffer): string {
  const path = join(dir, `${n++}-${name}`);
  writeFileSync(path, content);
  return path;
}

async function readAll(path: string, options: Parameters<typeof readJsonLines>[1] = {}): Promise<JsonLine[]> {
  const out: JsonLine[] = [];
  for await (const l of readJsonLines(path, options)) out.push(l);
  return out;
}

async function formatError(p: Promise<unknown>): Promise<FormatError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(FormatError);
    return err as FormatError;
  }
  throw new Error("expected a FormatError");
}

const lines = (k: number) => Array.from({ length: k }, (_, i) => JSON.stringify({ i, text: `row ${i} ` + "ư".repeat(i % 7) }));

describe("readJsonLines", () => {
  it("reads plain and gzip files alike, numbering lines and skipping blank ones and CRLF", async () => {
    const text = [lines(2)[0], "", "  ", lines(2)[1] + "\r"].join("\n") + "\n";
    for (const path of [file("a.jsonl", text), file("a.jsonl.gz", gzipSync(text))]) {
      const got = await readAll(path);
      expect(got.map((l) => l.line)).toEqual([1, 4]);
      expect(got.map((l) => (l.value as { i: number }).i)).toEqual([0, 1]);
    }
  });

  it("with scan, yields what the scan read from a line's bytes (CR excluded), and parses the lines it leaves and a last line without newline", async () => {
    const text = ['{"i":0}', "", '{"i":1}\r', '{"i":2}', '{"i":3}'].join("\n");
    const seen: string[] = [];
    const scan = (bytes: Buffer, start: number, end: number) => {
      const t = bytes.toString("utf8", start, end);
      seen.push(t);
      return t === '{"i":2}' ? undefined : `scanned ${t}`;
    };
    for (const path of [file("scan.jsonl", text), file("scan.jsonl.gz", gzipSync(text))]) {
      seen.length = 0;
      const got = await readAll(path, { scan, raw: true });
      expect(got.map((l) => [l.line, l.value, l.scanned === true, l.bytes, l.raw?.toString()])).toEqual([
        [1, 'scanned {"i":0}', true, 7, '{"i":0}'],
        [3, 'scanned {"i":1}', true, 7, '{"i":1}'],
        [4, { i: 2 }, false, 7, '{"i":2}'],
        [5, { i: 3 }, false, 7, '{"i":3}'],
      ]);
      expect(seen).toEqual(['{"i":0}', '{"i":1}', '{"i":2}']);
    }
  });

  it("yields a last line without newline when it is complete JSON", async () => {
    const got = await readAll(file("b.jsonl", lines(3).join("\n")));
    expect(got).toHaveLength(3);
  });

  it("names file and line of a bad JSON line, or reports it and goes on with onBadLine", async () => {
    const body = [...lines(4).slice(0, 2), '{"i": 2,', ...lines(4).slice(3)].join("\n") + "\n";
    const path = file("bad.jsonl.gz", gzipSync(body));
    const err = await formatError(readAll(path));
    expect(err.file).toBe(path);
    expect(err.line).toBe(3);
    expect(err.message).toMatch(new RegExp(`${path}:3: bad JSON`));

    const bad: FormatError[] = [];
    const got = await readAll(path, { onBadLine: (e) => bad.push(e) });
    expect(got.map((l) => l.line)).toEqual([1, 2, 4]);
    expect(bad.map((e) => e.line)).toEqual([3]);
  });

  it("treats a torn last line of a plain file as an error, or reports it with onTornLastLine", async () => {
    const body = lines(3).join("\n") + "\n" + lines(4)[3]!.slice(0, 9);
    const path = file("torn.jsonl", body);
    const err = await formatError(readAll(path));
    expect(err.line).toBe(4);
    expect(err.problem).toMatch(/torn last line/);

    const torn: Array<[number, number]> = [];
    const got = await readAll(path, { onTornLastLine: (line, offset) => torn.push([line, offset]) });
    expect(got).toHaveLength(3);
    expect(torn).toEqual([[4, Buffer.byteLength(lines(3).join("\n") + "\n")]]);
  });

  it("reports a corrupted gzip stream with the line it stopped at", async () => {
    const gz = gzipSync(lines(2000).join("\n") + "\n");
    const at = Math.floor(gz.length / 2);
    for (let k = 0; k < 16; k++) gz.writeUInt8(gz.readUInt8(at + k) ^ 0x5a, at + k);
    const err = await formatError(readAll(file("corrupt.jsonl.gz", gz)));
    expect(err.line).toBeGreaterThanOrEqual(1);
    expect(err.problem).toMatch(/corrupted gzip|bad JSON/);
  });

  it("reports a truncated (torn) gzip file instead of ending quietly", async () => {
    const gz = gzipSync(lines(2000).join("\n") + "\n");
    const err = await formatError(readAll(file("cut.jsonl.gz", gz.subarray(0, Math.floor(gz.length * 0.6)))));
    expect(err.problem).toMatch(/corrupted gzip|torn last line/);
    expect(err.line).toBeGreaterThan(1);
  });

  it("reports a missing file", async () => {
    const err = await formatError(readAll(join(dir, "nope.jsonl")));
    expect(err.problem).toMatch(/ENOENT/);
  });

  it("holds one unfinished line plus one chunk, however large the file", async () => {
    // 40 MiB of ~2 KiB lines: the reader must never buffer more than a chunk and the longest line.
    const line = JSON.stringify({ text: "x".repeat(2000) });
    const longest = Buffer.byteLength(line) + 1;
    for (const gz of [false, true]) {
      const path = join(dir, `big-${gz}.jsonl${gz ? ".gz" : ""}`);
      const out = createWriteStream(path);
      const sink = gz ? createGzip({ level: 1 }) : undefined;
      if (sink) sink.pipe(out);
      const target = sink ?? out;
      const block = Buffer.from((line + "\n").repeat(512));
      let decompressed = 0;
      while (decompressed < 40 * 1024 * 1024) {
        if (!target.write(block)) await once(target, "drain");
        decompressed += block.length;
      }
      target.end();
      await finished(out);
      const stats: ReaderStats = { maxBufferedBytes: 0 };
      let count = 0;
      for await (const l of readJsonLines(path, { stats })) count += l.bytes > 0 ? 1 : 0;
      expect(count).toBe(decompressed / longest);
      const chunk = 1 << 20; // the reader's read size; gunzip chunks are smaller
      expect(stats.maxBufferedBytes).toBeGreaterThan(0);
      expect(stats.maxBufferedBytes).toBeLessThanOrEqual(chunk + longest);
      expect(stats.maxBufferedBytes * 20).toBeLessThan(decompressed);
      if (!gz) expect(statSync(path).size).toBe(decompressed);
    }
  });
});

describe("readTrackRecords", () => {
  const record = (id: string) => ({
    id,
    family: "sentiment",
    split: "test",
    state: { text: "bài giảng hay" },
    questions: { label: { type: "choice", instructions: "Classify.", criteria: { A: "tiêu cực", B: "tích cực" } } },
    expected: { label: "B" },
    metadata: { source: "aiv", origin: "native", lang: "vi", group_id: id, stratum: "tích cực" },
    _evaluation: { run_id: `sa:${id}`, track: "sa", payload_sha256: "0".repeat(64) },
  });
  const trackFile = (path: string) => ({ track: "sa", family: "sentiment", path, relPath: "test/sentiment/sa.jsonl.gz" });

  async function readRecords(path: string, onProblem?: (e: FormatError) => void) {
    const out = [];
    for await (const r of readTrackRecords(trackFile(path), onProblem ? { onProblem } : {})) out.push(r);
    return out;
  }

  it("names the missing field and its line", async () => {
    const broken = record("r2") as Record<string, unknown>;
    delete (broken.metadata as Record<string, unknown>).group_id;
    const path = file("sa.jsonl.gz", gzipSync([record("r1"), broken].map((r) => JSON.stringify(r)).join("\n") + "\n"));
    const err = await formatError(readRecords(path));
    expect(err.line).toBe(2);
    expect(err.field).toBe("metadata.group_id");
    expect(err.message).toContain(`${path}:2 field metadata.group_id`);
  });

  it("rejects a run_id that is not <track>:<id> and a repeated id", async () => {
    const wrong = record("r2");
    wrong._evaluation.run_id = "other:r2";
    const path = file("sa.jsonl", [record("r1"), wrong, record("r1")].map((r) => JSON.stringify(r)).join("\n") + "\n");
    const err = await formatError(readRecords(path));
    expect([err.line, err.field]).toEqual([2, "_evaluation.run_id"]);

    const problems: FormatError[] = [];
    const got = await readRecords(path, (e) => problems.push(e));
    expect(got.map((r) => r.id)).toEqual(["r1"]);
    expect(problems.map((e) => [e.line, e.field])).toEqual([
      [2, "_evaluation.run_id"],
      [3, "id"],
    ]);
  });

  it("reads a valid file whole and hands over the hash of the decompressed bytes", async () => {
    const body = [record("r1"), record("r2")].map((r) => JSON.stringify(r)).join("\n") + "\n";
    const path = file("sa.jsonl.gz", gzipSync(body));
    let sha = "";
    const got = [];
    for await (const r of readTrackRecords(trackFile(path), { onHash: (h) => (sha = h) })) got.push(r);
    expect(got.map((r) => r.line)).toEqual([1, 2]);
    expect(sha).toBe(createHash("sha256").update(body).digest("hex"));
  });
});

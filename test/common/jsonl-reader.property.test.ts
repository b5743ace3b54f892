// Property tests of the JSONL reader: however the bytes are cut into chunks, the reader yields the
// same lines, or fails with the same error at the same line; and a long line costs one copy.
import fc from "fast-check";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { FormatError } from "../../common/errors.js";
import { readJsonLines, readJsonLinesFrom, type ReadOptions, type ReaderStats } from "../../common/jsonl-reader.js";

type Outcome = { lines: Array<[number, unknown, number]>; bad: string[]; torn: Array<[number, number]>; error?: string };

async function* chunked(bytes: Buffer, cuts: number[]): AsyncGenerator<Buffer> {
  let at = 0;
  for (const c of [...new Set(cuts.map((x) => x % (bytes.length + 1)))].sort((a, b) => a - b)) {
    yield bytes.subarray(at, c);
    at = c;
  }
  yield bytes.subarray(at);
}

async function outcome(bytes: Buffer, cuts: number[], mode: "strict" | "lenient"): Promise<Outcome> {
  const out: Outcome = { lines: [], bad: [], torn: [] };
  const options: ReadOptions =
    mode === "lenient" ? { onBadLine: (e) => out.bad.push(e.message), onTornLastLine: (l, o) => out.torn.push([l, o]) } : {};
  try {
    for await (const l of readJsonLinesFrom(chunked(bytes, cuts), "f.jsonl", options)) out.lines.push([l.line, l.value, l.bytes]);
  } catch (err) {
    if (!(err instanceof FormatError)) throw err;
    out.error = err.message;
  }
  return out;
}

/** Lines as the format defines them: split on \n, CR before \n dropped, blank lines skipped. */
function reference(bytes: Buffer): Array<[number, unknown, number]> {
  const parts = bytes.toString("utf8").split("\n");
  if (parts[parts.length - 1] === "") parts.pop();
  const out: Array<[number, unknown, number]> = [];
  parts.forEach((p, i) => {
    const text = p.endsWith("\r") ? p.slice(0, -1) : p;
    if (text.trim() !== "") out.push([i + 1, JSON.parse(text), Buffer.byteLength(text)]);
  });
  return out;
}

const jsonLine = fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v));
const anyLine = fc.oneof(jsonLine, jsonLine, fc.constantFrom("", "  ", "\r", "{", "[1,", "nul", '"x'), fc.string({ unit: "binary", maxLength: 20 }));
const text = fc
  .tuple(fc.array(anyLine, { maxLength: 12 }), fc.constantFrom("\n", "\r\n"), fc.boolean())
  .map(([ls, eol, last]) => ls.join(eol) + (last ? eol : ""));
const cuts = fc.array(fc.nat(), { maxLength: 30 });

describe("readJsonLinesFrom (property)", () => {
  it("any split of any text into chunks gives the same lines or the same error", async () => {
    await fc.assert(
      fc.asyncProperty(text, cuts, fc.constantFrom("strict" as const, "lenient" as const), async (t, cs, mode) => {
        const bytes = Buffer.from(t, "utf8");
        expect(await outcome(bytes, cs, mode)).toEqual(await outcome(bytes, [], mode));
      }),
      { numRuns: 400 },
    );
  });

  it("any split of arbitrary bytes gives the same outcome as reading them whole", async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 200 }), cuts, fc.constantFrom("strict" as const, "lenient" as const), async (b, cs, mode) => {
        const bytes = Buffer.from(b);
        expect(await outcome(bytes, cs, mode)).toEqual(await outcome(bytes, [], mode));
      }),
      { numRuns: 300 },
    );
  });

  it("well-formed lines come out as the format defines them, whatever the chunks", async () => {
    const good = fc.tuple(fc.array(fc.oneof(jsonLine, fc.constant("")), { maxLength: 12 }), fc.constantFrom("\n", "\r\n")).map(([ls, eol]) => ls.map((l) => l + eol).join(""));
    await fc.assert(
      fc.asyncProperty(good, cuts, async (t, cs) => {
        const bytes = Buffer.from(t, "utf8");
        const got = await outcome(bytes, cs, "strict");
        expect(got.error).toBeUndefined();
        expect(got.lines).toEqual(reference(bytes));
      }),
      { numRuns: 300 },
    );
  });
});

describe("readJsonLines on a long line", () => {
  const dir = mkdtempSync(join(tmpdir(), "udm-jsonl-long-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("joins a 32 MiB gzip line once: bytes copied stay within the file's size (issue 14, case 2)", async () => {
    const long = JSON.stringify({ text: "x".repeat(32 * 1024 * 1024) });
    const body = `{"a":1}\n${long}\n{"b":2}\n`;
    const path = join(dir, "long.jsonl.gz");
    writeFileSync(path, gzipSync(body, { level: 1 }));
    const stats: ReaderStats = { maxBufferedBytes: 0 };
    const got: number[] = [];
    for await (const l of readJsonLines(path, { stats })) got.push(l.bytes);
    expect(got).toEqual([7, long.length, 7]);
    // Re-concatenating the unfinished line per 64 KiB chunk would copy ~8 TiB; one join copies the line once.
    expect(stats.copiedBytes).toBeLessThanOrEqual(Buffer.byteLength(body));
    expect(stats.copiedBytes).toBeGreaterThanOrEqual(long.length);
  });
});

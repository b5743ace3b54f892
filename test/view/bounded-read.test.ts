// `view` on a full-size track (10,000 records): the track's index is built in one pass over the
// results file in fixed-size chunks (never the whole file in memory), a page of records is answered
// from the index without reading a result line, and a record's page reads exactly its one line.
// Counted in bytes read (ViewServer.stats), which does not depend on the machine's speed or heap.
import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openRunDir, startViewServer, type ViewServer } from "../../view/index.js";
import { INDEX_CHUNK_BYTES } from "../../view/track-index.js";
import { tempDirs } from "../support/temp-dirs.js";

const RECORDS = 10_000;
const OPTIONS = ["A", "B", "C", "D"];
const tmp = tempDirs("udm-view-bounded-");

let server: ViewServer;
let resultsBytes: number;
/** The results line of each record, as written (the later of two for record 7). */
const lineOf = new Map<string, string>();

describe("view pages through a 10,000-record track reading only what it serves", () => {
  beforeAll(async () => {
    const root = tmp();
    const suite = join(root, "suite");
    mkdirSync(join(suite, "test", "sentiment"), { recursive: true });
    const records: string[] = [];
    for (let i = 0; i < RECORDS; i++) {
      const id = `r${i}`;
      records.push(
        JSON.stringify({
          id,
          family: "sentiment",
          state: { text: `record ${i} ${"lorem ipsum ".repeat(8)}` },
          questions: { label: { type: "choice", instructions: "Which?", criteria: Object.fromEntries(OPTIONS.map((o) => [o, `option ${o}`])) } },
          expected: { label: OPTIONS[i % 4] },
          metadata: { group_id: `g${Math.floor(i / 2)}`, lang: "en" },
          _evaluation: { run_id: `big:${id}` },
        }),
      );
    }
    writeFileSync(join(suite, "test", "sentiment", "big.jsonl.gz"), gzipSync(records.join("\n") + "\n"));
    const out = join(root, "run");
    mkdirSync(join(out, "sentiment"), { recursive: true });
    const lines: string[] = [];
    const line = (i: number, predicted: string) => {
      const probs = Object.fromEntries(OPTIONS.map((o) => [o, o === predicted ? 0.7 : 0.1]));
      return JSON.stringify({ run_id: `big:r${i}`, id: `r${i}`, track: "big", family: "sentiment", probs: { label: probs }, skipped: [], payload_sha256: "0".repeat(64), agent: "a", latency_ms: 1, prompt_tokens: 10, completion_tokens: 1, answered_by: { label: "systemone" }, format: 1 });
    };
    for (let i = 0; i < RECORDS; i++) {
      // Every third record wrong (predicts the next option).
      const l = line(i, OPTIONS[(i % 4) + (i % 3 === 0 ? 1 : 0)] ?? "A");
      lines.push(l);
      lineOf.set(`r${i}`, l);
    }
    // A later line for r7 replaces the first (now right).
    const again = line(7, OPTIONS[7 % 4]!);
    lines.push(again);
    lineOf.set("r7", again);
    const resultsPath = join(out, "sentiment", "big.jsonl");
    writeFileSync(resultsPath, lines.join("\n") + "\n");
    resultsBytes = statSync(resultsPath).size;
    writeFileSync(join(out, "run.json"), JSON.stringify({ run_id: "r", suite_identity: "x", suite_root: suite, tracks: ["big"], method: { method: "systemone", seeds: [], temperature: 0, model: "" } }));
    server = await startViewServer({ run: openRunDir(out), listen: { host: "127.0.0.1", port: 0 } });
  });

  afterAll(async () => {
    await server?.close();
  });

  const get = async <T>(path: string): Promise<T> => {
    const res = await fetch(server.url + path);
    expect(res.status, path).toBe(200);
    return (await res.json()) as T;
  };

  it("a page of records comes from the index: one chunked pass over the file, no line read", async () => {
    expect(resultsBytes).toBeGreaterThan(20 * INDEX_CHUNK_BYTES);
    const page = await get<{ total: number; matched: number; records: Array<{ id: string; status: string[] }> }>("/api/tracks/big/records?offset=5000&limit=50");
    expect(page.total).toBe(RECORDS);
    expect(page.records.map((r) => r.id)).toEqual(Array.from({ length: 50 }, (_, k) => `r${5000 + k}`));
    expect(server.stats.indexBytes).toBe(resultsBytes);
    // Bounded by a chunk and the longest line, not by the file.
    expect(server.stats.maxIndexBuffer).toBeLessThanOrEqual(INDEX_CHUNK_BYTES + 1024);
    expect(server.stats.pageBytes).toBe(0);
    const wrong = await get<{ matched: number; records: Array<{ id: string }> }>("/api/tracks/big/records?status=wrong&limit=500");
    // Every i % 3 === 0 is wrong.
    let expected = 0;
    for (let i = 0; i < RECORDS; i++) if (i % 3 === 0) expected++;
    expect(wrong.matched).toBe(expected);
    expect(server.stats.indexBytes).toBe(resultsBytes);
    expect(server.stats.pageBytes).toBe(0);
  });

  it("a record's page reads exactly its one result line (the latest)", async () => {
    const before = { ...server.stats };
    const r = await get<{ id: string; questions: Array<{ gold: string; predicted: string; options: Array<{ p: number }> }> }>("/api/tracks/big/records/r9000");
    expect(r.id).toBe("r9000");
    expect(r.questions[0]!.gold).toBe(OPTIONS[9000 % 4]);
    expect(server.stats.pageLines - before.pageLines).toBe(1);
    expect(server.stats.pageBytes - before.pageBytes).toBe(Buffer.byteLength(lineOf.get("r9000")!));
    const r7 = await get<{ questions: Array<{ predicted: string; correct: boolean }> }>("/api/tracks/big/records/r7");
    expect(r7.questions[0]).toMatchObject({ predicted: OPTIONS[7 % 4], correct: true });
    expect(server.stats.pageBytes - before.pageBytes).toBe(Buffer.byteLength(lineOf.get("r9000")!) + Buffer.byteLength(lineOf.get("r7")!));
    expect(server.stats.indexBytes).toBe(resultsBytes);
  });
});

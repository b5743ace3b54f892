// The coordinator's one pass over the suite: what it spills is each record's state and questions
// as the file has them, and the gold it hands the scorer of its process (onGold) scores exactly as
// the gold the scorer reads itself.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import { afterAll, describe, expect, it, vi } from "vitest";
import { FormatError } from "../../common/errors.js";
import { NOUL_KEYS } from "../../common/results/index.js";
import { createLogger } from "../../common/log.js";
import { openSuite } from "../../common/suite/suite.js";
import { goldRecordsOf, type GoldMessage } from "../../common/suite/gold-feed.js";
import type { ScoredChunk, ScoredRecord } from "../../common/suite/schema.js";
import { indexSuite, questionSpecs, startSuiteReadEarly } from "../../coordinator/suite-index.js";
import { runReaders, startReadersEarly, takeEarlyReaders } from "../../coordinator/suite-readers.js";
import { CommitScorer } from "../../scorer/commit-scorer.js";
import { tinyTracks, writeTinySuite, type TinyTrack } from "./helpers/tiny-suite.js";

const quiet = createLogger("test", "error");
const root = mkdtempSync(join(tmpdir(), "udm-suite-index-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("indexSuite", () => {
  it("spills each record's state and questions, indexes its questions, and hands on gold that scores as read", async () => {
    const tracks = tinyTracks();
    // A question whose options differ from the other's in keys only, not in number.
    for (const r of tracks.find((t) => t.track === "tiny-sa")!.records) {
      r.questions.tone = { type: "choice", instructions: "Which tone?", criteria: { X: "x", Y: "y", Z: "z" } };
    }
    const suiteDir = writeTinySuite(join(root, "suite"), tracks);
    const gold: GoldMessage[] = [];
    const index = await indexSuite({ suiteDir, spillPath: join(root, "spill", "s.bin"), onGold: (m) => gold.push(m) });
    try {
      for (const t of tracks) {
        const indexed = index.tracks.find((x) => x.track === t.track)!;
        expect(indexed.records.map((r) => r.id)).toEqual(t.records.map((r) => r.id));
        for (const [i, r] of t.records.entries()) {
          const entry = indexed.records[i]!;
          const payload = index.spill.read(entry);
          expect(payload.stateJson).toBe(JSON.stringify(r.state));
          expect(payload.questionsJson).toBe(JSON.stringify(r.questions));
          expect(questionSpecs(entry).map((q) => q.key)).toEqual(Object.keys(r.questions));
          // Option lists per question: shared when all agree (the reranking track), one each when not (noul beside choice).
          expect(questionSpecs(entry).map((q) => q.options)).toEqual(Object.values(r.questions).map((q) => (q.type === "noul" ? NOUL_KEYS : Object.keys(q.criteria))));
        }
      }
    } finally {
      index.spill.dispose();
    }
    expect(gold.map((m) => (m.kind === "track" ? m.track : m.kind))).toEqual([...index.tracks.map((t) => t.track), "end"]);
    // The gold holds what scoring reads: no state, no texts of questions or options.
    const goldRecords = gold.flatMap((m) => (m.kind === "track" ? [...goldRecordsOf(m.records)] : []));
    expect(goldRecords.length).toBe(tracks.reduce((n, t) => n + t.records.length, 0));
    const suiteRecords = new Map(tracks.flatMap((t) => t.records.map((r) => [r._evaluation.run_id, r] as const)));
    for (const r of goldRecords) {
      expect(r.line).toBeGreaterThan(0);
      expect(r.state).toBeUndefined();
      const source = suiteRecords.get(r._evaluation.run_id)!;
      const reranking = (source.scoring as { type?: string } | undefined)?.type === "retrieval_ranking";
      if ("questionKeys" in r) {
        // A reranking chunk's questions and qrels as lists, in the order the objects give them.
        expect(reranking).toBe(true);
        expect(r).not.toHaveProperty("questions");
        expect(r.scoring).not.toHaveProperty("qrels");
        expect(r.questionKeys).toEqual(Object.keys(source.questions));
        const qrels = (source.scoring as { qrels: Record<string, number> }).qrels;
        expect([r.qrelDocuments, r.qrelGrades]).toEqual([Object.keys(qrels), Object.values(qrels)]);
        continue;
      }
      expect(reranking).toBe(false);
      for (const q of Object.values(r.questions)) {
        expect(q).not.toHaveProperty("instructions");
        if (q.type === "choice") expect(Object.values(q.criteria).every((text) => text === "")).toBe(true);
      }
    }

    const read = new CommitScorer({ suiteDir, outDir: join(root, "read"), log: quiet });
    await read.load();
    const fed = new CommitScorer({ suiteDir, outDir: join(root, "fed"), log: quiet });
    const feed = fed.goldFeed();
    for (const m of gold) feed.onGold(m);
    await feed.loaded;
    expect(fed.core!.suiteIdentity).toBe(read.core!.suiteIdentity);
    expect(fed.core!.suiteIdentity).toBe(index.identity);
    expect(JSON.stringify(fed.finish())).toBe(JSON.stringify(read.finish()));
  });

  it("hands on gold that scores every result as the gold the scorer reads: documents mapped or derived, chunks combined by another field, ordinal and routing tracks", async () => {
    const tracks = tinyTracks({ rerankGroups: 5 });
    for (const r of tracks.find((t) => t.track === "tiny-sa")!.records) r.scoring = { ordinal: true };
    // An option named "__proto__" (written as a key, parsed back as an own key), and the gold on it.
    tracks.find((t) => t.track === "tiny-guard")!.records.forEach((r, i) => {
      r.questions.category!.criteria = JSON.parse('{"__proto__":"proto","none":"none","cybercrime":"cybercrime","nói \\"khác\\" \\\\ \\u0001":"other"}') as Record<string, string>;
      if (i % 3 === 0) r.expected.category = "__proto__";
    });
    for (const r of tracks.find((t) => t.track === "tiny-rr")!.records) {
      const g = Number(r.id.split(":")[1]);
      if (g === 4) {
        // Keys an object holds apart from the rest: "__proto__" and an array index (listed first), graded.
        const rename = (k: string, i: number) => (i === 0 ? "__proto__" : i === 1 ? "7" : k);
        r.questions = Object.fromEntries(Object.entries(r.questions).map(([k, q], i) => [rename(k, i), q]));
        r.expected = Object.fromEntries(Object.entries(r.expected).map(([k, v], i) => [rename(k, i), v]));
        const scoring = r.scoring as { qrels: Record<string, number> };
        scoring.qrels = Object.fromEntries([...Object.entries(scoring.qrels), ["__proto__", 2], ["7", 1]]);
      }
      const keys = Object.keys(r.questions);
      const scoring = r.scoring as Record<string, unknown>;
      // Group 0: the documents the scorer would derive (left out of the gold); 1: others; 2: one key unmapped; 3: none.
      if (g === 0) scoring.field_to_document = Object.fromEntries(keys.map((k) => [k, k.slice(4)]));
      if (g === 1) scoring.field_to_document = Object.fromEntries(keys.map((k, i) => [k, keys[(i + 1) % keys.length]!.slice(4)]));
      if (g === 2) scoring.field_to_document = Object.fromEntries(keys.slice(1).map((k) => [k, k.slice(4)]));
      if (g === 3) scoring.scorable_ids = keys.slice(0, 2).map((k) => k.slice(4));
    }
    const byQuery = tinyTracks({ rerankGroups: 2 })[1]!;
    byQuery.track = "tiny-rr-by";
    byQuery.records.forEach((r, i) => {
      r._evaluation = { ...r._evaluation, run_id: `tiny-rr-by:${r.id}`, track: "tiny-rr-by" };
      (r.metadata as Record<string, unknown>).query = `q${i % 2}`;
      (r.scoring as Record<string, unknown>).combine_chunks_by = "metadata.query";
    });
    const routing: TinyTrack = { track: "tiny-route", family: "model_routing", records: [] };
    for (let i = 0; i < 6; i++) {
      routing.records.push({
        ...tracks[0]!.records[0]!,
        id: `route:${i}`,
        family: "model_routing",
        questions: { route: { type: "choice", instructions: "Which model?", criteria: { small: "small", large: "large" } } },
        expected: { route: i % 2 === 0 ? "small" : "large" },
        metadata: { group_id: `route:${i}`, lang: "vi" },
        scoring: { type: "routing_outcome", outcomes: { small: { quality: i % 2, cost_usd: 0.01 }, large: { quality: 1, cost_usd: 0.1 } }, accepted: i % 2 === 0 ? ["small", "large"] : ["large"] },
        _evaluation: { run_id: `tiny-route:route:${i}`, track: "tiny-route", payload_sha256: "" },
      });
    }
    tracks.push(byQuery, routing);
    const suiteDir = writeTinySuite(join(root, "scored"), tracks);
    const gold: GoldMessage[] = [];
    const index = await indexSuite({ suiteDir, spillPath: join(root, "scored-spill", "s.bin"), onGold: (m) => gold.push(m) });
    index.spill.dispose();
    const fedGold = new Map(gold.flatMap((m) => (m.kind === "track" ? [...goldRecordsOf(m.records)].map((r) => [r._evaluation.run_id, r] as const) : [])));
    // Left out where derived, kept where not.
    expect(fedGold.get("tiny-rr:rr:0:0")!.scoring).not.toHaveProperty("field_to_document");
    expect(fedGold.get("tiny-rr:rr:1:0")!.scoring).toHaveProperty("field_to_document");
    expect(fedGold.get("tiny-rr:rr:2:0")!.scoring).toHaveProperty("field_to_document");
    expect((fedGold.get("tiny-rr-by:rr:0:0")!.metadata as Record<string, unknown>).query).toBe("q0");
    const category = (fedGold.get("tiny-guard:g:0") as ScoredRecord).questions.category!;
    expect((fedGold.get("tiny-rr:rr:4:0") as ScoredChunk).questionKeys.slice(0, 2)).toEqual(["7", "__proto__"]);
    expect(fedGold.get("tiny-rr-by:rr:0:0")).toHaveProperty("questions");
    expect(category.type === "choice" && Object.keys(category.criteria)).toEqual(["__proto__", "none", "cybercrime", 'nói "khác" \\ \u0001']);

    for (const out of ["scored-read", "scored-fed"]) mkdirSync(join(root, out));
    const read = new CommitScorer({ suiteDir, outDir: join(root, "scored-read"), log: quiet });
    await read.load();
    await read.replayCommitted();
    const fed = new CommitScorer({ suiteDir, outDir: join(root, "scored-fed"), log: quiet });
    const feed = fed.goldFeed();
    for (const m of gold) feed.onGold(m);
    await feed.loaded;
    await fed.replayCommitted();
    let seed = 7;
    const draw = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) + 1) / 2147483649;
    for (const t of tracks) {
      for (const r of t.records) {
        // Built from entries: an assignment to probs["__proto__"] would set its prototype.
        const probs: Record<string, Record<string, number>> = Object.fromEntries(
          Object.entries(r.questions).map(([key, q]) => {
            const options = q.type === "noul" ? ["true", "false"] : Object.keys(q.criteria);
            const weights = options.map(draw);
            const sum = weights.reduce((a, b) => a + b, 0);
            return [key, Object.fromEntries(options.map((o, i) => [o, weights[i]! / sum]))];
          }),
        );
        const line = { run_id: r._evaluation.run_id, id: r.id, track: t.track, family: t.family, probs, skipped: [] };
        read.committed(line);
        fed.committed(line);
      }
    }
    const scored = fed.finish();
    expect(JSON.stringify(scored)).toBe(JSON.stringify(read.finish()));
    for (const t of tracks) expect(scored.tracks[t.track]?.headline.value, t.track).toEqual(expect.any(Number));
  });

  it("fails the gold feed naming file and line when gold cannot be scored", async () => {
    const tracks = tinyTracks();
    // A reranking document question must be noul: the scorer, not the suite check, refuses this one.
    const bad = tracks[1]!.records[2]!;
    bad.questions[Object.keys(bad.questions)[0]!]!.type = "choice";
    bad.questions[Object.keys(bad.questions)[0]!]!.criteria = { yes: "yes", no: "no" };
    delete bad.expected[Object.keys(bad.questions)[0]!];
    const suiteDir = writeTinySuite(join(root, "bad-gold"), tracks);
    const fed = new CommitScorer({ suiteDir, outDir: join(root, "bad-fed"), log: quiet });
    const feed = fed.goldFeed();
    const failure = feed.loaded.then(
      () => undefined,
      (err: unknown) => err,
    );
    const index = await indexSuite({ suiteDir, spillPath: join(root, "spill2", "s.bin"), onGold: feed.onGold });
    index.spill.dispose();
    expect(String(await failure)).toMatch(/tiny-rr\.jsonl\.gz:3 field questions\.doc:020\.type: reranking document questions must be noul/);
  });
});

// Reader threads run the compiled entry, so these run after `npm run build` and are skipped before.
const entry = pathToFileURL(fileURLToPath(new URL("../../dist/coordinator/suite-reader-main.js", import.meta.url)));
const built = existsSync(fileURLToPath(entry));

/** `n` more tracks with the records of `track`, named `<name>-<i>`: more files than threads. */
function copiesOf(track: TinyTrack, name: string, n: number): TinyTrack[] {
  return Array.from({ length: n }, (_, i) => ({
    ...track,
    track: `${name}-${i}`,
    records: track.records.map((r) => ({ ...r, _evaluation: { ...r._evaluation, run_id: `${name}-${i}:${r.id}`, track: `${name}-${i}` } })),
  }));
}

describe.skipIf(!built)("indexSuite on reader threads", () => {
  /** Everything an index holds, payloads read back, and the gold handed on. */
  async function indexed(suiteDir: string, readers: number, name: string) {
    const gold: GoldMessage[] = [];
    const index = await indexSuite({ suiteDir, spillPath: join(root, name, "s.bin"), onGold: (m) => gold.push(m), readers, readerEntry: entry });
    try {
      const tracks = index.tracks.map((t) => ({
        ...t,
        records: t.records.map((r) => ({ runId: r.recordKey, id: r.id, groupId: r.groupId, payloadSha256: r.payloadSha256, questions: questionSpecs(r), payload: index.spill.read(r) })),
      }));
      // The gold as records: its chunks may be cut differently.
      const goldRecords = gold.map((m) => (m.kind === "track" ? { ...m, records: [...goldRecordsOf(m.records)] } : m));
      return { identity: index.identity, fileHashes: index.fileHashes, totalRecords: index.totalRecords, spillBytes: index.spill.bytes, tracks, gold: goldRecords };
    } finally {
      index.spill.dispose();
    }
  }

  it("gives the same index, payloads, identity and gold as reading in one thread, with more files than threads", async () => {
    const tracks = tinyTracks({ sentiment: 300 });
    tracks.push(...copiesOf(tracks[0]!, "copy", 5));
    const suiteDir = writeTinySuite(join(root, "many"), tracks);
    const serial = await indexed(suiteDir, 0, "serial");
    expect(serial.totalRecords).toBe(300 * 6 + 9 + 6);
    for (const readers of [1, 2, 3]) expect(await indexed(suiteDir, readers, `threads-${readers}`)).toEqual(serial);
  });

  it("takes reader threads started ahead of the read (the coordinator thread's first step) and gives the same index and gold", async () => {
    const tracks = tinyTracks({ sentiment: 300 });
    tracks.push(...copiesOf(tracks[0]!, "early", 3));
    const suiteDir = writeTinySuite(join(root, "early"), tracks);
    const serial = await indexed(suiteDir, 0, "early-serial");
    const startedEarly = async (early: Parameters<typeof startSuiteReadEarly>[0], read: { readers: number; tracks?: string[] }, name: string) => {
      startSuiteReadEarly(early);
      const logged: Array<Record<string, unknown>> = [];
      const logger = { ...quiet, info: (msg: string, fields?: Record<string, unknown>) => void (msg === "suite indexed" && logged.push(fields ?? {})) };
      const gold: GoldMessage[] = [];
      const index = await indexSuite({ suiteDir, spillPath: join(root, name, "s.bin"), onGold: (m) => gold.push(m), readers: read.readers, readerEntry: entry, logger: logger as typeof quiet, ...(read.tracks ? { tracks: read.tracks } : {}) });
      try {
        // Spilled bytes: a file read twice (a task handed out again) spills its payloads twice.
        return { early: logged[0]?.started_early, spillBytes: index.spill.bytes, records: index.tracks.map((t) => [t.track, t.records.map((r) => [r.recordKey, questionSpecs(r), index.spill.read(r)])]), gold: gold.map((m) => (m.kind === "track" ? [m.track, [...goldRecordsOf(m.records)]] : m)) };
      } finally {
        index.spill.dispose();
      }
    };
    const expected = {
      spillBytes: serial.spillBytes,
      records: serial.tracks.map((t) => [t.track, t.records.map((r) => [r.runId, r.questions, r.payload])]),
      gold: serial.gold.map((m) => (m.kind === "track" ? [m.track, m.records] : m)),
    };
    for (const readers of [1, 2]) {
      expect(await startedEarly({ suiteDir, gold: true, readers, readerEntry: entry }, { readers }, `early-${readers}`)).toEqual({ early: readers, ...expected });
    }
    // Started for another read (other tracks, no gold, another thread count): ended, and the read starts its own.
    const other = await startedEarly({ suiteDir, tracks: ["tiny-rr"], gold: true, readers: 1, readerEntry: entry }, { readers: 1 }, "early-other");
    expect(other).toEqual({ early: 0, ...expected });
    expect((await startedEarly({ suiteDir, gold: false, readers: 1, readerEntry: entry }, { readers: 1 }, "early-nogold")).early).toBe(0);
    expect((await startedEarly({ suiteDir, gold: true, readers: 2, readerEntry: entry }, { readers: 1 }, "early-count")).early).toBe(0);
  });

  it("hands out each task once when threads started early hold only the first tasks", async () => {
    const tracks = tinyTracks();
    tracks.push(...copiesOf(tracks[0]!, "held", 4));
    const suiteDir = writeTinySuite(join(root, "held"), tracks);
    const suite = openSuite(suiteDir);
    const tasks = suite.files.map((f, index) => ({ index, relPath: f.relPath, selected: true, gold: false }));
    for (const [threads, posted] of [[1, 2], [2, 3], [2, 1]] as const) {
      startReadersEarly(entry, threads, { suiteDir: suite.root }, tasks, posted);
      const adopted = takeEarlyReaders(entry, threads, { suiteDir: suite.root }, tasks);
      expect(adopted?.posted).toBe(Math.max(threads, posted));
      // What a thread read before the read took it waits for it, and is handed on first.
      await vi.waitFor(() => expect(adopted!.readers[0]!.buffered()).toBeGreaterThan(0), { timeout: 60_000, interval: 20 });
      const files: number[] = [];
      await runReaders(entry, threads, { suiteDir: suite.root }, tasks, (msg) => void (msg.type !== "block" && files.push(msg.index)), adopted);
      expect(files.sort((a, b) => a - b)).toEqual(tasks.map((t) => t.index));
    }
  });

  it("hashes the files outside --tracks on the threads too", async () => {
    const suiteDir = writeTinySuite(join(root, "subset"), tinyTracks());
    const one = await indexSuite({ suiteDir, tracks: ["tiny-rr"], spillPath: join(root, "subset-spill", "s.bin"), readers: 2, readerEntry: entry });
    one.spill.dispose();
    const all = await indexSuite({ suiteDir, spillPath: join(root, "subset-spill2", "s.bin"), readers: 0 });
    all.spill.dispose();
    expect(one.tracks.map((t) => t.track)).toEqual(["tiny-rr"]);
    expect(one.fileHashes).toEqual(all.fileHashes);
    expect(one.identity).toBe(all.identity);
  });

  it("reports a bad line of any file with file and line, the first in suite order, whatever thread finds it", async () => {
    for (const badTrack of [0, 1, 2]) {
      const tracks = tinyTracks();
      const dir = join(root, `bad-${badTrack}`);
      writeTinySuite(dir, tracks, { manifest: false });
      // Line 2 of one file is not JSON; line 3 of the last file has no id.
      const lines = (t: number) => tracks[t]!.records.map((r) => JSON.stringify(r));
      const write = (t: number, text: string[]) => writeFileSync(join(dir, "test", tracks[t]!.family, `${tracks[t]!.track}.jsonl.gz`), gzipSync(text.join("\n") + "\n"));
      const bad = lines(badTrack);
      bad[1] = "{not json";
      write(badTrack, bad);
      if (badTrack !== 2) {
        const later = lines(2);
        later[2] = JSON.stringify({ ...tracks[2]!.records[2], id: undefined });
        write(2, later);
      }
      const suiteOrder = openSuite(dir).files.map((f) => f.track);
      const expectedFile = suiteOrder.indexOf(tracks[badTrack]!.track) < suiteOrder.indexOf(tracks[2]!.track) || badTrack === 2 ? tracks[badTrack]! : tracks[2]!;
      const expectedLine = expectedFile === tracks[badTrack] ? 2 : 3;
      for (const readers of [0, 2]) {
        const err = await indexSuite({ suiteDir: dir, spillPath: join(root, `bad-spill-${badTrack}-${readers}`, "s.bin"), readers, readerEntry: entry }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(FormatError);
        expect((err as FormatError).file).toBe(join(dir, "test", expectedFile.family, `${expectedFile.track}.jsonl.gz`));
        expect((err as FormatError).line).toBe(expectedLine);
        expect(existsSync(join(root, `bad-spill-${badTrack}-${readers}`, "s.bin"))).toBe(false);
      }
    }
  });

  it("refuses a run_id repeated in another file, naming the later file and line", async () => {
    const tracks = tinyTracks();
    const dup = { ...tracks[2]!.records[1]!, _evaluation: { ...tracks[2]!.records[1]!._evaluation, run_id: tracks[0]!.records[0]!._evaluation.run_id } };
    tracks[2]!.records[1] = dup;
    const dir = writeTinySuite(join(root, "dup"), tracks, { manifest: false });
    for (const readers of [0, 2]) {
      const err = await indexSuite({ suiteDir: dir, spillPath: join(root, `dup-spill-${readers}`, "s.bin"), readers, readerEntry: entry }).catch((e: unknown) => e);
      expect(String(err)).toMatch(/:2 field _evaluation\.run_id: /);
    }
  });
});

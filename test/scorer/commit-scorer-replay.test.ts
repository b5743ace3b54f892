// A resumed run's committed results are replayed track by track, as the coordinator's gold feed
// says each track's results file is scanned, not all after the whole suite is read: each file is
// read once, and the metrics are those of reading every file after the gold.
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { createLogger, type Logger } from "../../common/log.js";
import { acceptedResultLine, AppendLog, NOUL_KEYS, trackResultsPath } from "../../common/results/index.js";
import type { GoldMessage } from "../../common/suite/index.js";
import { indexSuite } from "../../coordinator/suite-index.js";
import { CommitScorer } from "../../scorer/commit-scorer.js";
import type { MetricsJson } from "../../scorer/metrics-json.js";
import { tinyTracks, writeTinySuite, type TinyTrack } from "../coordinator/helpers/tiny-suite.js";

const root = mkdtempSync(join(tmpdir(), "udm-commit-replay-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Commits every `every`-th record of the track (a skewed distribution, so metrics depend on it). */
async function commit(outDir: string, t: TinyTrack, every: number): Promise<void> {
  const log = new AppendLog(trackResultsPath(outDir, t.family, t.track));
  t.records.forEach((r, i) => {
    if (i % every !== 0) return;
    const questions = Object.entries(r.questions).map(([key, q]) => ({ key, options: q.type === "noul" ? NOUL_KEYS : Object.keys(q.criteria) }));
    const probs = Object.fromEntries(questions.map((q) => [q.key, Object.fromEntries(q.options.map((o, k) => [o, k === i % q.options.length ? 0.7 : 0.3 / (q.options.length - 1)]))]));
    const line = acceptedResultLine(
      { recordKey: r._evaluation.run_id, id: r.id, track: t.track, family: t.family, payloadSha256: r._evaluation.payload_sha256, questions },
      { probs, skipped: [], errors: {}, agent: "test", latencyMs: 1, promptTokens: 1, cachedTokens: null, completionTokens: 1, answeredBy: {}, retries: 0, approximate: false },
    );
    log.append(JSON.stringify(line));
  });
  await log.close();
}

/** The gold messages the coordinator's one pass over the suite hands its scorer. */
async function goldOfSuite(suiteDir: string, name: string): Promise<GoldMessage[]> {
  const gold: GoldMessage[] = [];
  const index = await indexSuite({ suiteDir, spillPath: join(root, `${name}-spill`, "s.bin"), onGold: (m) => gold.push(m) });
  index.spill.dispose();
  return gold;
}

/** metrics.json of the results in `out` (a copy of it) read after the whole gold, as before the per-track replay. */
async function scoredAfterGold(suiteDir: string, out: string, name: string): Promise<MetricsJson> {
  const copy = join(root, `${name}-expected`);
  cpSync(out, copy, { recursive: true });
  const read = new CommitScorer({ suiteDir, outDir: copy, log: createLogger("test", "error") });
  await read.load();
  await read.replayCommitted();
  return read.finish();
}

/** A logger that collects the `track` field of each debug line `message`. */
function debugTracks(message: string): { log: Logger; tracks: string[] } {
  const tracks: string[] = [];
  const log: Logger = { ...createLogger("test", "error"), debug: (msg: string, fields?: Record<string, unknown>) => void (msg === message && tracks.push(String(fields?.track))) };
  return { log, tracks };
}

/**
 * A scorer fed tiny-sa's gold and then its results file's scan, once its debug line `message`
 * names tiny-sa; `logged` goes on collecting the tracks that line names.
 */
async function scorerAfterFirstScan(suiteDir: string, out: string, gold: readonly GoldMessage[], message: string) {
  const { log, tracks: logged } = debugTracks(message);
  const fed = new CommitScorer({ suiteDir, outDir: out, log });
  const feed = fed.goldFeed();
  const first = gold.find((m) => m.kind === "track" && m.track === "tiny-sa")!;
  feed.onGold(first);
  feed.onGold({ kind: "resultsScanned", track: "tiny-sa", family: "sentiment" });
  await vi.waitFor(() => expect(logged).toEqual(["tiny-sa"]));
  return { fed, feed, first, logged };
}

describe("CommitScorer replaying a resumed run", () => {
  it("reads a track's committed results once its file is scanned, before the rest of the suite is in, and scores as a replay after the gold", async () => {
    const tracks = tinyTracks();
    const suiteDir = writeTinySuite(join(root, "suite"), tracks);
    const out = join(root, "out");
    mkdirSync(out);
    for (const t of tracks) if (t.track !== "tiny-rr") await commit(out, t, t.track === "tiny-sa" ? 1 : 2);
    const gold = await goldOfSuite(suiteDir, "first");
    const trackGold = gold.filter((m) => m.kind === "track");
    const end = gold.find((m) => m.kind === "end")!;
    const expected = await scoredAfterGold(suiteDir, out, "first");
    expect(expected.tracks["tiny-sa"]!.headline.value).toEqual(expect.any(Number));

    const { fed, feed, first, logged: replayed } = await scorerAfterFirstScan(suiteDir, out, trackGold, "committed results replayed");
    // Read already: a second read of the file would now fail on this line.
    writeFileSync(trackResultsPath(out, "sentiment", "tiny-sa"), "not a results line\n");
    for (const m of trackGold) if (m !== first) feed.onGold(m);
    // A track out of the feed's scope or without results: nothing to read early.
    feed.onGold({ kind: "resultsScanned", track: "tiny-rr", family: "passage_reranking" });
    feed.onGold(end);
    await feed.loaded;
    await fed.replayCommitted();
    expect(replayed).toEqual(["tiny-sa"]);
    expect(JSON.stringify(fed.finish())).toBe(JSON.stringify(expected));
  });

  it("leaves a file it cannot replay early to the replay after the gold: a line of a track whose gold comes later, or a bad line", async () => {
    const tracks = tinyTracks();
    const suiteDir = writeTinySuite(join(root, "late-suite"), tracks);
    const out = join(root, "late-out");
    mkdirSync(out);
    await commit(out, tracks[0]!, 1);
    await commit(out, tracks[2]!, 2);
    // The sentiment file also holds the only line of a guard record, whose gold comes after it.
    const every = join(root, "late-every");
    await commit(every, tracks[2]!, 1);
    const guardLine = readFileSync(trackResultsPath(every, "safety_guardrail", "tiny-guard"), "utf8").split("\n")[1]!;
    expect(JSON.parse(guardLine).run_id).toBe("tiny-guard:g:1");
    appendFileSync(trackResultsPath(out, "sentiment", "tiny-sa"), `${guardLine}\n`);
    const gold = await goldOfSuite(suiteDir, "late");
    const expected = await scoredAfterGold(suiteDir, out, "late");

    const { fed, feed, first: sa } = await scorerAfterFirstScan(suiteDir, out, gold, "committed results left to the replay after the gold");
    for (const m of gold) if (m !== sa) feed.onGold(m);
    await feed.loaded;
    await fed.replayCommitted();
    expect(JSON.stringify(fed.finish())).toBe(JSON.stringify(expected));
  });

  it("fails the replay naming file and line when a track's results file read early has a bad line", async () => {
    const tracks = tinyTracks();
    const suiteDir = writeTinySuite(join(root, "bad-suite"), tracks);
    const out = join(root, "bad-out");
    mkdirSync(join(out, "sentiment"), { recursive: true });
    writeFileSync(trackResultsPath(out, "sentiment", "tiny-sa"), '{"run_id":"tiny-sa:nope","probs":{},"skipped":[]}\n');
    const gold = await goldOfSuite(suiteDir, "bad");
    const fed = new CommitScorer({ suiteDir, outDir: out, log: createLogger("test", "error") });
    const feed = fed.goldFeed();
    for (const m of gold) {
      if (m.kind === "end") feed.onGold({ kind: "resultsScanned", track: "tiny-sa", family: "sentiment" });
      feed.onGold(m);
    }
    await feed.loaded;
    await expect(fed.replayCommitted()).rejects.toThrow(/tiny-sa\.jsonl:1.*matches no record/);
  });
});

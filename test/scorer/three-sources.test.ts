// The scorer core fed from each of its three sources on the same results must write the same
// metrics.json, byte for byte: the coordinator's commits (a real embedded `udm-orch run`, and a
// CommitScorer resuming from half the results on disk), result files (`udm-orch score`, compiled,
// with its worker threads) and the bus (StreamingScorer on the in-process bus, lines out of order).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InProcessBus } from "../../common/bus/in-process.js";
import { createLogger } from "../../common/log.js";
import type { StoredResultLine } from "../../common/results/format.js";
import { trackResultsPath } from "../../common/results/paths.js";
import { CommitScorer } from "../../scorer/commit-scorer.js";
import { StreamingScorer } from "../../scorer/streaming-scorer.js";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { resultLines, spawnCli } from "../support/cli-process.js";

const quiet = createLogger("test", "error");
let root: string;
let suiteDir: string;
let runDir: string;
let lines: StoredResultLine[];
let fromCommits: Buffer;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "udm-three-sources-"));
  suiteDir = join(root, "suite");
  runDir = join(root, "run");
  await makeSuite({ out: suiteDir, scale: "small", seed: 11 });
  const run = spawnCli(["run", "--suite", suiteDir, "--out", runDir, "--sim", "2"]);
  expect((await run.exited).code, run.output()).toBe(0);
  fromCommits = readFileSync(join(runDir, "metrics.json"));
  lines = resultLines(runDir) as StoredResultLine[];
}, 180_000);

afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Tracks in reverse name order, each track's lines reversed. */
function shuffled(): StoredResultLine[] {
  const byTrack = new Map<string, StoredResultLine[]>();
  for (const l of lines) byTrack.set(l.track, [...(byTrack.get(l.track) ?? []), l]);
  return [...byTrack.keys()].sort().reverse().flatMap((t) => [...byTrack.get(t)!].reverse());
}

describe("one scorer core, three sources", () => {
  it("score on the run's files writes the run's metrics.json byte for byte", async () => {
    const out = join(root, "score", "metrics.json");
    const score = spawnCli(["score", "--suite", suiteDir, "--results", runDir, "--out", out]);
    expect((await score.exited).code, score.output()).toBe(0);
    expect(readFileSync(out).equals(fromCommits)).toBe(true);
  }, 120_000);

  it("the streaming scorer on the bus writes it byte for byte", async () => {
    const bus = new InProcessBus({ logger: quiet });
    const runId = "three";
    const records = new Map<string, { family: string; records: number }>();
    for (const l of lines) records.set(l.track, { family: l.family, records: (records.get(l.track)?.records ?? 0) + 1 });
    const tracks = [...records].map(([track, t]) => ({ track, ...t, committed: 0, complete: false }));
    const status = { runId, state: "running" as const, updatedAt: new Date().toISOString(), recordsTotal: lines.length, recordsCommitted: 0, tracks };
    await bus.putStatus(runId, status);
    const out = join(root, "bus");
    const scorer = new StreamingScorer({ bus, runId, suiteDir, outDir: out, log: quiet });
    await scorer.start();
    for (const l of shuffled()) expect((await bus.publishResult(runId, l.track, l)).ok).toBe(true);
    await scorer.done;
    await scorer.stop();
    await bus.close();
    expect(readFileSync(join(out, "metrics.json")).equals(fromCommits)).toBe(true);
    expect(scorer.core!.counts).toMatchObject({ applied: lines.length, duplicates: 0, unknown: 0 });
  }, 120_000);

  it("a commit scorer resuming from half the results on disk, the rest committed out of order, writes it byte for byte", async () => {
    const out = join(root, "commits");
    const order = shuffled();
    const half = Math.floor(order.length / 2);
    const onDisk = new Map<string, string>();
    for (const l of order.slice(0, half)) {
      const path = trackResultsPath(out, l.family, l.track);
      onDisk.set(path, (onDisk.get(path) ?? "") + JSON.stringify(l) + "\n");
    }
    for (const [path, text] of onDisk) {
      mkdirSync(join(path, ".."), { recursive: true });
      writeFileSync(path, text);
    }
    const finals: string[] = [];
    const scorer = new CommitScorer({ suiteDir, outDir: out, log: quiet, onTrackFinal: (t) => finals.push(t) });
    await scorer.load();
    scorer.committed(order[half]!); // committed while the disk is replayed: held until then
    await scorer.replayCommitted();
    for (const l of order.slice(half + 1)) scorer.committed(l);
    scorer.finish();
    expect(readFileSync(join(out, "metrics.json")).equals(fromCommits)).toBe(true);
    expect(new Set(finals).size).toBe(finals.length);
    expect(finals).toHaveLength(Object.keys(JSON.parse(fromCommits.toString()).tracks).length);
    // The line held during the replay is applied with it.
    expect(scorer.core!.counts).toMatchObject({ applied: order.length - half - 1, replayed: half + 1, duplicates: 0 });
    expect(scorer.core!.progress().every((t) => t.complete && t.headline !== null && t.missing !== null)).toBe(true);
  }, 120_000);
});

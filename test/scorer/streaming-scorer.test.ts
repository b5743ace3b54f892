// The streaming scorer on the in-process bus (no nats-server needed): real suite and result files
// from an embedded run, lines published in an order of our choosing, metrics.json compared with
// `udm-orch score`'s computation on the same results.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InProcessBus } from "../../common/bus/in-process.js";
import type { Bus, MetricsMessage } from "../../common/bus/bus.js";
import { UsageError } from "../../common/errors.js";
import { createLogger } from "../../common/log.js";
import type { ResultLine } from "../../common/results/format.js";
import { scoreResults } from "../../scorer/score-results.js";
import { chooseRun, StreamingScorer } from "../../scorer/streaming-scorer.js";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { resultLines, spawnCli } from "../support/cli-process.js";

const quiet = createLogger("test", "error");
let root: string;
let suiteDir: string;
let resultsDir: string;
let lines: ResultLine[];
let reference: unknown;
let trackRecords: Map<string, number>;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "udm-streaming-scorer-"));
  suiteDir = join(root, "suite");
  resultsDir = join(root, "results");
  await makeSuite({ out: suiteDir, scale: "small", seed: 5 });
  const run = spawnCli(["run", "--suite", suiteDir, "--out", resultsDir, "--sim", "1"]);
  expect((await run.exited).code, run.output()).toBe(0);
  lines = resultLines(resultsDir) as ResultLine[];
  reference = await scoreResults({ suiteDir, resultsDir, workers: 1, log: quiet });
  trackRecords = new Map();
  for (const l of lines) trackRecords.set(l.track!, (trackRecords.get(l.track!) ?? 0) + 1);
}, 120_000);

afterAll(() => rmSync(root, { recursive: true, force: true }));

async function putStatus(bus: Bus, runId: string): Promise<void> {
  const tracks = [...trackRecords].map(([track, records]) => ({ track, family: lines.find((l) => l.track === track)!.family!, records, committed: 0, complete: false }));
  const status = { runId, state: "running" as const, updatedAt: new Date().toISOString(), recordsTotal: lines.length, recordsCommitted: 0, tracks };
  await bus.putStatus(runId, status);
}

/** Tracks in reverse name order, each track's lines reversed (so reranking chunks arrive out of file order). */
function shuffled(): ResultLine[] {
  const byTrack = new Map<string, ResultLine[]>();
  for (const l of lines) byTrack.set(l.track!, [...(byTrack.get(l.track!) ?? []), l]);
  return [...byTrack.keys()].sort().reverse().flatMap((t) => byTrack.get(t)!.reverse());
}

function scorer(bus: Bus, runId: string, outDir: string, extra: Partial<ConstructorParameters<typeof StreamingScorer>[0]> = {}): StreamingScorer {
  return new StreamingScorer({ bus, runId, suiteDir, outDir, log: quiet, progressEveryMs: 50, ...extra });
}

const metricsJson = (dir: string): unknown => JSON.parse(readFileSync(join(dir, "metrics.json"), "utf8"));

async function until(what: string, cond: () => boolean): Promise<void> {
  const end = Date.now() + 30_000;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("StreamingScorer", () => {
  it("publishes each track's final metrics as its last line is applied, in that order, then the summary; metrics.json equals score's", async () => {
    const bus = new InProcessBus({ logger: quiet });
    const runId = "order";
    await putStatus(bus, runId);
    const seen: MetricsMessage[] = [];
    await bus.subscribeMetrics(runId, (m) => seen.push(m), { from: "new" });
    const out = join(root, "order");
    const s = scorer(bus, runId, out);
    await s.start();
    const order = shuffled();
    const lastOf = new Map<string, number>();
    order.forEach((l, i) => lastOf.set(l.track!, i));
    const expectedOrder = [...lastOf].sort((a, b) => a[1] - b[1]).map(([t]) => t);
    for (const l of order) expect((await bus.publishResult(runId, l.track!, l)).ok).toBe(true);
    const final = await s.done;
    await s.stop();

    const finals = seen.filter((m) => m.final);
    expect(finals.map((m) => m.track)).toEqual([...expectedOrder, "summary"]);
    expect(final).toEqual(reference);
    expect(metricsJson(out)).toEqual(reference);
    expect(s.result()).toMatchObject({ applied: lines.length, duplicates: 0, replayed: 0 });
    await bus.close();
  }, 60_000);

  it("sends running metrics (final: false) for a track in progress", async () => {
    const bus = new InProcessBus({ logger: quiet });
    const runId = "running";
    await putStatus(bus, runId);
    const seen: MetricsMessage[] = [];
    await bus.subscribeMetrics(runId, (m) => seen.push(m), { from: "new" });
    const s = scorer(bus, runId, join(root, "running"));
    await s.start();
    const big = [...trackRecords].sort((a, b) => b[1] - a[1])[0]![0];
    const some = lines.filter((l) => l.track === big).slice(0, 2);
    for (const l of some) await bus.publishResult(runId, big, l);
    await until("running metrics", () => seen.some((m) => m.track === big && !m.final));
    const running = seen.find((m) => m.track === big && !m.final)!;
    expect(running.records).toBe(2);
    expect((running.metrics as { missing: number }).missing).toBeGreaterThan(0);
    await s.stop();
    await expect(s.done).rejects.toThrow(/stopped before every track/);
    await bus.close();
  }, 60_000);

  it("a stopped scorer resumes from its journal, and lines stored twice are counted once", async () => {
    // No duplicate window: every re-publish is stored again, as after a replay past the window.
    const bus = new InProcessBus({ logger: quiet, duplicateWindowMs: 0 });
    const runId = "resume";
    await putStatus(bus, runId);
    const out = join(root, "resume");
    const order = shuffled();
    const half = Math.floor(order.length / 2);
    const first = scorer(bus, runId, out);
    await first.start();
    for (const l of order.slice(0, half)) await bus.publishResult(runId, l.track!, l);
    await until("half applied", () => first.result().applied === half);
    await first.stop();

    for (const l of order.slice(0, 30)) await bus.publishResult(runId, l.track!, l);
    for (const l of order.slice(half)) await bus.publishResult(runId, l.track!, l);
    const second = scorer(bus, runId, out);
    await second.start();
    await second.done;
    await second.stop();
    expect(second.result()).toMatchObject({ replayed: half, applied: order.length - half, duplicates: 30 });
    expect(metricsJson(out)).toEqual(reference);
    const journal = readFileSync(join(out, "scorer-journal.jsonl"), "utf8").trim().split("\n");
    expect(journal).toHaveLength(lines.length);
    await bus.close();
  }, 60_000);

  it("a later line for a run_id whose line has errors supersedes it (errored records are redone), as in score; the same line again does not", async () => {
    const bus = new InProcessBus({ logger: quiet, duplicateWindowMs: 0 });
    const runId = "redo";
    await putStatus(bus, runId);
    const out = join(root, "redo");
    const redone = new Set(shuffled().filter((_, i) => i % 25 === 0).map((l) => l.run_id));
    const errored = (l: ResultLine): ResultLine => ({ ...l, probs: {}, skipped: [], errors: Object.fromEntries(Object.keys(l.probs).map((q) => [q, "engine: HTTP 500"])) });
    const first = scorer(bus, runId, out);
    await first.start();
    // Every record in, some with errors, one of those published twice: every track is in, but
    // while the run is still going the scorer waits for the redo instead of calling it scored.
    for (const l of shuffled()) await bus.publishResult(runId, l.track!, redone.has(l.run_id) ? errored(l) : l);
    const again = lines.find((l) => redone.has(l.run_id))!;
    await bus.publishResult(runId, again.track!, errored(again));
    await until("every line applied", () => first.result().applied === lines.length && first.result().duplicates === 1);
    let settled = false;
    void first.done.then(() => (settled = true), () => undefined);
    // Once the stream is quiet the scorer asks the run's status every poll, and would score at the
    // first answer that let it (then it asks no more): two asks, the run still going, and it waits.
    let asks = 0;
    const getStatus = bus.getStatus.bind(bus);
    bus.getStatus = (id) => (asks++, getStatus(id));
    await until("the scorer asked the run's status twice, or scored", () => asks >= 2 || settled);
    expect(settled, "scored before the redo of its errored records").toBe(false);
    expect(metricsJson(out)).not.toEqual(reference);
    await first.stop();

    // A restarted scorer (journal replayed) takes the redo: the later line wins, metrics equal score's.
    const second = scorer(bus, runId, out);
    await second.start();
    for (const l of lines.filter((x) => redone.has(x.run_id))) await bus.publishResult(runId, l.track!, l);
    expect(await second.done).toEqual(reference);
    await second.stop();
    expect(metricsJson(out)).toEqual(reference);
    const journal = readFileSync(join(out, "scorer-journal.jsonl"), "utf8").trim().split("\n");
    expect(journal).toHaveLength(lines.length + redone.size);

    // A third start replays both lines of each redone record in order and is done at once.
    const third = scorer(bus, runId, join(root, "redo"));
    await third.start();
    expect(await third.done).toEqual(reference);
    await third.stop();
    await bus.close();
  }, 60_000);

  it("within the bus's duplicate window, a redone line is stored while the same line re-published is dropped", async () => {
    const bus = new InProcessBus({ logger: quiet });
    const l = lines[0]!;
    const bad = { ...l, probs: {}, skipped: [], errors: Object.fromEntries(Object.keys(l.probs).map((q) => [q, "engine: HTTP 500"])) };
    expect(await bus.publishResult("window", l.track!, bad)).toMatchObject({ ok: true, duplicate: false });
    expect(await bus.publishResult("window", l.track!, bad)).toMatchObject({ ok: true, duplicate: true });
    expect(await bus.publishResult("window", l.track!, l)).toMatchObject({ ok: true, duplicate: false });
    expect(await bus.publishResult("window", l.track!, l)).toMatchObject({ ok: true, duplicate: true });
    await bus.close();
  });

  it("a run that ended with errored lines is scored with them once its status says it ended", async () => {
    const bus = new InProcessBus({ logger: quiet });
    const runId = "ended";
    await putStatus(bus, runId);
    const s = scorer(bus, runId, join(root, "ended"));
    await s.start();
    const bad = lines[0]!;
    for (const l of lines) await bus.publishResult(runId, l.track!, l === bad ? { ...l, probs: {}, skipped: [], errors: Object.fromEntries(Object.keys(l.probs).map((q) => [q, "engine: HTTP 500"])) } : l);
    await until("every line applied", () => s.result().applied === lines.length);
    await bus.putStatus(runId, { runId, state: "complete", updatedAt: new Date().toISOString(), recordsTotal: lines.length, recordsCommitted: lines.length });
    const final = await s.done;
    await s.stop();
    expect(final.tracks[bad.track!]!.missing).toBeGreaterThan(0);
    await bus.close();
  }, 60_000);

  it("refuses an out dir that holds another run's scorer", async () => {
    const bus = new InProcessBus({ logger: quiet });
    await putStatus(bus, "other");
    const s = scorer(bus, "other", join(root, "order"));
    await expect(s.start()).rejects.toThrow(UsageError);
    await expect(s.start()).rejects.toThrow(/holds the scorer of run order, not other/);
    await bus.close();
  }, 60_000);

  it("refuses a run whose tracks are not the suite's", async () => {
    const bus = new InProcessBus({ logger: quiet });
    await bus.putStatus("alien", { runId: "alien", state: "running", updatedAt: "2026-01-01T00:00:00Z", tracks: [{ track: "no-such-track", records: 3 }] } as never);
    await expect(scorer(bus, "alien", join(root, "alien")).start()).rejects.toThrow(/no-such-track.*not in the suite/);
    await bus.close();
  }, 60_000);
});

describe("chooseRun", () => {
  const at = (runId: string, updatedAt: string) => ({ runId, state: "running" as const, updatedAt });
  it("picks the only run, or the most recently updated one", () => {
    expect(chooseRun([at("a", "2026-01-01T00:00:00Z")]).runId).toBe("a");
    expect(chooseRun([at("a", "2026-01-01T00:00:00Z"), at("b", "2026-01-02T00:00:00Z"), at("c", "2025-12-31T00:00:00Z")]).runId).toBe("b");
  });
  it("fails clearly when there is none", () => {
    expect(() => chooseRun([])).toThrow(UsageError);
    expect(() => chooseRun([])).toThrow(/no run on the bus.*give --run/);
  });
});

// Work before the suite is read (issue 26): units of a track already read and verified go out, and
// are committed, while a later track is still being read; a later track whose file fails
// verification ends the run without a result of it; a resumed start hands out work before it has
// re-read every committed line; the first unit waits only for the smallest selected track, not for
// the first in suite order; a --limit run is served the same way. Tracks are read smallest file
// first: the late track (tiny-sa, made the largest file here, and last in suite order too) is held
// back by the coordinator's beforeTrackRead test hook, not by a sleep.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CommittedLine } from "../../common/results/index.js";
import { UsageError } from "../../common/errors.js";
import { startCoordinator } from "../../coordinator/server.js";
import { eventually } from "./helpers/test-agent.js";
import { quiet, resultLines, useHarness } from "./helpers/harness.js";
import { tinyTracks, writeTinySuite } from "./helpers/tiny-suite.js";

const { tmp, start, agent } = useHarness();
const LATE = "test/sentiment/tiny-sa.jsonl.gz";
/** First in suite order (passage_reranking), and a larger file than tiny-guard. */
const FIRST_IN_SUITE_ORDER = "test/passage_reranking/tiny-rr.jsonl.gz";
/** tiny-sa's records: 40 make its file the largest (tiny-guard < tiny-rr < tiny-sa), so it is read last. */
const SA = 40;
const suiteOf = (dir: string) => writeTinySuite(dir, tinyTracks({ sentiment: SA }));

/** A gate on one suite file: its read waits until open() (the hook resolves). */
function gate(relPath: string) {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  let reached = false;
  return {
    hook: async (p: string) => {
      if (p !== relPath) return;
      reached = true;
      await opened;
    },
    open,
    get reached() {
      return reached;
    },
  };
}

/** startCoordinator, failing the test instead of hanging when it does not return. */
function startWithin<T>(p: Promise<T>, ms = 15_000): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`the coordinator did not start serving within ${ms} ms`)), ms).unref())]);
}

describe("work before the suite is read", () => {
  it("commits units of early tracks while a late track is still being read", async () => {
    const suiteDir = suiteOf(tmp("suite"));
    const outDir = tmp("out");
    const late = gate(LATE);
    const committed: CommittedLine[] = [];
    const h = await startWithin(start({ suiteDir, outDir, beforeTrackRead: late.hook, onCommitted: (l) => committed.push(l) }));
    const a = agent(h.address, { credit: 2 });
    await eventually(() => committed.some((l) => l.track === "tiny-guard") && committed.some((l) => l.track === "tiny-rr"), 20_000, "early tracks committed");
    expect(late.reached).toBe(true);
    const status = await h.status();
    expect(status.state).toBe("running");
    expect(a.units.every((u) => u.track !== "tiny-sa")).toBe(true);
    late.open();
    const outcome = await h.done;
    expect(outcome).toMatchObject({ state: "complete", recordsTotal: SA + 6 + status.tracks.find((t) => t.track === "tiny-rr")!.records });
    expect(resultLines(outDir, "sentiment", "tiny-sa")).toHaveLength(SA);
  });

  it("a late track whose file fails verification ends the run failed and no result of it counts; earlier tracks' results are kept", async () => {
    const suiteDir = suiteOf(tmp("suite"));
    const manifestPath = join(suiteDir, "manifest.json");
    const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
    manifest.files[LATE].sha256 = "0".repeat(64);
    writeFileSync(manifestPath, JSON.stringify(manifest));
    const outDir = tmp("out");
    const late = gate(LATE);
    const h = await startWithin(start({ suiteDir, outDir, beforeTrackRead: late.hook }));
    agent(h.address, { credit: 2 });
    await eventually(async () => (await h.status()).recordsCommitted >= 6, 20_000, "early results committed");
    late.open();
    const outcome = await h.done;
    expect(outcome.state).toBe("failed");
    expect(outcome.error).toMatch(/tiny-sa\.jsonl\.gz: sha256 mismatch/);
    expect(existsSync(join(outDir, "sentiment", "tiny-sa.jsonl"))).toBe(false);
    expect(resultLines(outDir, "safety_guardrail", "tiny-guard").length + resultLines(outDir, "passage_reranking", "tiny-rr").length).toBe(outcome.recordsCommitted);
    expect(outcome.recordsCommitted).toBeGreaterThanOrEqual(6);
  });

  it("a first track read (the smallest file) whose file fails verification refuses the start and leaves no run.json", async () => {
    const suiteDir = suiteOf(tmp("suite"));
    const manifestPath = join(suiteDir, "manifest.json");
    const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
    manifest.files["test/safety_guardrail/tiny-guard.jsonl.gz"].sha256 = "0".repeat(64);
    writeFileSync(manifestPath, JSON.stringify(manifest));
    const outDir = tmp("out");
    const err = await startCoordinator({ suiteDir, outDir, logger: quiet }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toMatch(/tiny-guard\.jsonl\.gz: sha256 mismatch/);
    expect(existsSync(join(outDir, "run.json"))).toBe(false);
  });

  it("the first unit waits for the smallest selected track, not for the first file in suite order", async () => {
    const suiteDir = suiteOf(tmp("suite"));
    const outDir = tmp("out");
    const first = gate(FIRST_IN_SUITE_ORDER);
    // tiny-rr, first in suite order, is held back: the start and the first units do not wait for it.
    const h = await startWithin(start({ suiteDir, outDir, beforeTrackRead: first.hook }));
    const a = agent(h.address, { credit: 2 });
    await a.waitFor(() => a.units.length > 0, 20_000, "a unit");
    expect(a.units[0]!.track).toBe("tiny-guard");
    expect(a.units.every((u) => u.track !== "tiny-rr")).toBe(true);
    expect(first.reached).toBe(true);
    first.open();
    const outcome = await h.done;
    expect(outcome.state).toBe("complete");
    expect(resultLines(outDir, "passage_reranking", "tiny-rr").length).toBeGreaterThan(0);
  });

  it("a --limit run is served while a late track is still being read; its totals become the kept records", async () => {
    const suiteDir = suiteOf(tmp("suite"));
    const outDir = tmp("out");
    const late = gate(LATE);
    const committed: CommittedLine[] = [];
    const h = await startWithin(start({ suiteDir, outDir, limit: 5, beforeTrackRead: late.hook, onCommitted: (l) => committed.push(l) }));
    agent(h.address, { credit: 2 });
    await eventually(() => committed.some((l) => l.track === "tiny-guard") && committed.some((l) => l.track === "tiny-rr"), 20_000, "early tracks committed");
    const during = await h.status();
    expect(during.state).toBe("running");
    // Before its file is read, a track counts at most --limit records (an estimate).
    expect(during.tracks.find((t) => t.track === "tiny-sa")).toMatchObject({ records: 5, committed: 0, complete: false });
    late.open();
    const outcome = await h.done;
    // tiny-sa: one record per group, so 5 kept; tiny-guard: 5 of 6; tiny-rr: whole groups of 3, the first 3 (6 would pass 5).
    const kept = { "tiny-sa": 5, "tiny-guard": resultLines(outDir, "safety_guardrail", "tiny-guard").length, "tiny-rr": resultLines(outDir, "passage_reranking", "tiny-rr").length };
    expect(kept["tiny-sa"]).toBe(resultLines(outDir, "sentiment", "tiny-sa").length);
    expect(outcome).toMatchObject({ state: "complete", recordsTotal: kept["tiny-sa"] + kept["tiny-guard"] + kept["tiny-rr"] });
    expect(kept["tiny-rr"]).toBe(3);
  });

  it("a resumed start hands out work before it has re-read every committed line", async () => {
    const suiteDir = suiteOf(tmp("suite"));
    const outDir = tmp("out");
    // First session: one unit of the late track committed (4 records), then a drain.
    const h1 = await start({ suiteDir, outDir, planLimits: { maxRecords: 4 } });
    const first = agent(h1.address, { agentId: "first", credit: 100, auto: false });
    await first.waitFor(() => first.units.some((u) => u.track === "tiny-sa"), 20_000, "a tiny-sa unit");
    const saUnit = first.units.find((u) => u.track === "tiny-sa")!;
    first.answerUnit(saUnit);
    await eventually(async () => (await h1.status()).recordsCommitted >= 4, 20_000, "tiny-sa unit committed");
    await h1.drain();
    expect((await h1.done).recordsCommitted).toBe(4);
    first.dispose();

    // Second session: tiny-sa's file (and so its committed lines) is held back; units go out anyway.
    const late = gate(LATE);
    const h2 = await startWithin(start({ suiteDir, outDir, planLimits: { maxRecords: 4 }, beforeTrackRead: late.hook }));
    const b = agent(h2.address, { agentId: "second", credit: 2 });
    await b.waitFor(() => b.units.length > 0, 20_000, "a unit");
    const before = await h2.status();
    expect(before.recordsResumed).toBe(0);
    // tiny-sa is announced (manifest rows) but its committed lines are not read yet.
    expect(before.tracks.find((t) => t.track === "tiny-sa")).toMatchObject({ committed: 0, complete: false });
    expect(before.recordsTotal).toBe(SA + 6 + before.tracks.find((t) => t.track === "tiny-rr")!.records);
    late.open();
    const outcome = await h2.done;
    expect(outcome).toMatchObject({ state: "complete", recordsResumed: 4 });
    const sent = b.units.flatMap((u) => u.records.map((r) => r.run_id));
    for (const r of saUnit.records) expect(sent).not.toContain(r.run_id);
  });
});

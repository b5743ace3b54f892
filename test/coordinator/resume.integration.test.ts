// Resume: a second coordinator on the same results directory skips what is committed, repairs a
// torn last line, and refuses another suite or config unless forced.
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { UsageError } from "../../common/errors.js";
import { startCoordinator } from "../../coordinator/server.js";
import { quiet, resultLines, useHarness } from "./helpers/harness.js";
import { tinyTracks, writeTinySuite } from "./helpers/tiny-suite.js";

const { tmp, start, agent } = useHarness();

/** Runs a first session that commits exactly one unit of tiny-sa (4 records), then drains. */
async function partialRun(suiteDir: string, outDir: string) {
  const h = await start({ suiteDir, outDir, tracks: ["tiny-sa"], planLimits: { maxRecords: 4 } });
  const a = agent(h.address, { agentId: "first", credit: 1, auto: false });
  await a.waitFor(() => a.units.length === 1, 10_000, "unit");
  a.answerUnit(a.units[0]!);
  await a.waitFor(() => true);
  for (let i = 0; i < 500 && (await h.status()).recordsCommitted < 4; i++) await new Promise((r) => setTimeout(r, 10));
  await h.drain();
  const outcome = await h.done;
  expect(outcome).toMatchObject({ state: "cancelled", recordsCommitted: 4 });
  return { runId: h.runId, firstRunIds: a.units[0]!.records.map((r) => r.run_id) };
}

describe("resume", () => {
  it("a second coordinator on the same out dir skips committed records and keeps the run_id", async () => {
    const suiteDir = writeTinySuite(tmp("suite"));
    const outDir = tmp("out");
    const { runId, firstRunIds } = await partialRun(suiteDir, outDir);
    const h = await start({ suiteDir, outDir, tracks: ["tiny-sa"], planLimits: { maxRecords: 4 } });
    expect(h.runId).toBe(runId);
    expect(await h.status()).toMatchObject({ recordsTotal: 12, recordsCommitted: 4, recordsResumed: 4 });
    const b = agent(h.address, { agentId: "second", credit: 2 });
    const outcome = await h.done;
    expect(outcome).toMatchObject({ state: "complete", recordsCommitted: 12, recordsResumed: 4 });
    const sent = b.units.flatMap((u) => u.records.map((r) => r.run_id));
    expect(sent).toHaveLength(8);
    for (const r of firstRunIds) expect(sent).not.toContain(r);
    const lines = resultLines(outDir, "sentiment", "tiny-sa");
    expect(lines.map((l) => l.run_id).sort()).toEqual(tinyTracks()[0]!.records.map((r) => r._evaluation.run_id).sort());
    const run = JSON.parse(readFileSync(join(outDir, "run.json"), "utf8"));
    expect(run).toMatchObject({ run_id: runId, sessions: 2, resumes: 1 });
  });

  it("a run whose every record is committed is complete at once", async () => {
    const suiteDir = writeTinySuite(tmp("suite"));
    const outDir = tmp("out");
    const h1 = await start({ suiteDir, outDir, tracks: ["tiny-guard"] });
    agent(h1.address, { credit: 1 });
    expect((await h1.done).state).toBe("complete");
    await h1.close();
    const completed: string[] = [];
    const h2 = await start({ suiteDir, outDir, tracks: ["tiny-guard"], onTrackComplete: (t) => completed.push(t) });
    expect(await h2.done).toMatchObject({ state: "complete", recordsResumed: 6 });
    expect(completed).toEqual(["tiny-guard"]);
  });

  it("repairs a torn last line and redoes that record", async () => {
    const suiteDir = writeTinySuite(tmp("suite"));
    const outDir = tmp("out");
    await partialRun(suiteDir, outDir);
    const file = join(outDir, "sentiment", "tiny-sa.jsonl");
    const before = readFileSync(file, "utf8");
    const torn = JSON.stringify({ run_id: "tiny-sa:sa:11", id: "sa:11", probs: {} }).slice(0, 30);
    appendFileSync(file, torn);
    const h = await start({ suiteDir, outDir, tracks: ["tiny-sa"] });
    expect(readFileSync(file, "utf8")).toBe(before);
    expect((await h.status()).recordsResumed).toBe(4);
    agent(h.address, { credit: 1 });
    expect((await h.done).state).toBe("complete");
    const lines = resultLines(outDir, "sentiment", "tiny-sa");
    expect(lines).toHaveLength(12);
    expect(new Set(lines.map((l) => l.run_id)).size).toBe(12);
  });

  it("refuses another method, tracks or suite unless forced", async () => {
    const suiteDir = writeTinySuite(tmp("suite"));
    const outDir = tmp("out");
    const { runId } = await partialRun(suiteDir, outDir);
    const base = { suiteDir, outDir, logger: quiet, tracks: ["tiny-sa"] };
    await expect(startCoordinator({ ...base, method: { method: "label-read" } })).rejects.toThrow(UsageError);
    await expect(startCoordinator({ ...base, method: { method: "label-read" } })).rejects.toThrow(/method .*systemone.* -> .*label-read/);
    await expect(startCoordinator({ ...base, tracks: ["tiny-sa", "tiny-rr"] })).rejects.toThrow(/tracks/);
    const otherSuite = writeTinySuite(tmp("suite2"), tinyTracks({ sentiment: 13 }));
    await expect(startCoordinator({ ...base, suiteDir: otherSuite })).rejects.toThrow(/suite identity/);
    const h = await start({ ...base, method: { method: "label-read" }, force: true });
    expect(h.runId).toBe(runId);
    const run = JSON.parse(readFileSync(join(outDir, "run.json"), "utf8"));
    expect(run.method.method).toBe("label-read");
    expect(run.forced).toHaveLength(1);
    expect(run.sessions).toBe(2);
  });

  // A later track that fails: early-work.integration.test.ts.
  it("refuses a suite whose first file read (the smallest selected) does not match manifest.json", async () => {
    const suiteDir = writeTinySuite(tmp("suite"));
    const manifestPath = join(suiteDir, "manifest.json");
    const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
    manifest.files["test/safety_guardrail/tiny-guard.jsonl.gz"].sha256 = "0".repeat(64);
    writeFileSync(manifestPath, JSON.stringify(manifest));
    const err = await startCoordinator({ suiteDir, outDir: tmp("out"), logger: quiet }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toMatch(/tiny-guard\.jsonl\.gz: sha256 mismatch/);
  });
});

describe("results directory lock", () => {
  it("refuses a second coordinator on the same out dir, and takes over the lock of a dead one", async () => {
    const suiteDir = writeTinySuite(tmp("suite"));
    const outDir = tmp("out");
    const h = await start({ suiteDir, outDir });
    await expect(startCoordinator({ suiteDir, outDir, logger: quiet })).rejects.toThrow(/in use by another coordinator/);
    await h.close();
    // A crashed coordinator's lock and payload spill (a pid that no longer runs).
    mkdirSync(join(outDir, ".udm-cache"), { recursive: true });
    writeFileSync(join(outDir, ".udm-cache", "lock"), JSON.stringify({ pid: 2 ** 22 + 7, host: hostname(), since: "earlier" }));
    writeFileSync(join(outDir, ".udm-cache", `payloads-${2 ** 22 + 7}.bin`), "stale");
    const h2 = await start({ suiteDir, outDir });
    expect(existsSync(join(outDir, ".udm-cache", `payloads-${2 ** 22 + 7}.bin`))).toBe(false);
    await h2.close();
    expect(existsSync(join(outDir, ".udm-cache"))).toBe(false);
  });
});

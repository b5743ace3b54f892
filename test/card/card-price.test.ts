// A resumed run (the same run_id, e.g. `coordinator` rerun on a finished directory) keeps the
// GPU-hour price its card states unless a new one is given: the price 0 means "not given".
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { buildRunCard, type CardSetup, type RunManifestView } from "../../card/build-card.js";
import { writeCard } from "../../card/card-file.js";
import { CardRecorder } from "../../card/card-recorder.js";

const RUN: RunManifestView = {
  run_id: "r1",
  suite_identity: "d".repeat(64),
  tracks: ["vihsd"],
  method: { method: "systemone", seeds: [], temperature: 0, model: "sim/pseudo" },
  created_at: "2026-01-01T00:00:00.000Z",
  sessions: 2,
  resumes: 1,
};
const SETUP: CardSetup = { datasetId: "udm-eval-v1", datasetVersion: "r", entryCount: 4, templateVersion: null, systemPrompt: "", batchSize: null, toolsEnabled: [], methodClass: "raw-llm", gpuHourUsd: 0 };

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A finished run's directory whose card states `price`; the final card of its next session given `given`. */
async function resealed(price: number, given: number): Promise<number> {
  dir = mkdtempSync(join(tmpdir(), "udm-card-price-"));
  writeFileSync(join(dir, "run.json"), JSON.stringify(RUN));
  const prev = buildRunCard({
    run: RUN,
    metrics: undefined,
    totals: { promptTokens: 10, completionTokens: 4, cachedTokens: null, gpuSeconds: 36, latency: null },
    results: { files: {}, errorRecords: 0 },
    cluster: { agents: [], leasesExpired: 0, backupUnits: 0, resultsRejected: 0 },
    setup: { ...SETUP, gpuHourUsd: price },
    status: "complete",
    finished: "2026-01-01T00:01:00.000Z",
    elapsedSeconds: 60,
  });
  writeCard(join(dir, "run-card.json"), prev);
  const recorder = new CardRecorder({ outDir: dir, setup: { ...SETUP, gpuHourUsd: given }, status: () => Promise.reject(new Error("stopped")), intervalMs: 0, pollMs: 0 });
  await recorder.start();
  return (await recorder.finish("complete")).totals.gpu_hour_usd;
}

describe("a resumed run's GPU-hour price", () => {
  it("is kept when none is given (0), replaced when a new one is", async () => {
    expect(await resealed(2.5, 0)).toBe(2.5);
    rmSync(dir, { recursive: true, force: true });
    expect(await resealed(2.5, 3)).toBe(3);
  });
});

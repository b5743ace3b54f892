// `card verify --suite` of a limited run's card (dataset.limit, `--limit N`): the results files are
// rescored under the card's own limit, so its scores recompute; without the limit the records the
// run never answered would count as missing.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildRunCard } from "../../card/build-card.js";
import { writeCard } from "../../card/card-file.js";
import { verifyCard } from "../../card/verify-card.js";
import { sealResults } from "../../common/results/index.js";
import { scoreResultsWithInterval } from "../../scorer/index.js";
import { ABC, peaked, record, writeSuite } from "../scorer/suite-fixture.js";

const root = mkdtempSync(join(tmpdir(), "udm-verify-limit-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("card verify --suite: a limited run's card", () => {
  it("is rescored under its limit: its scores recompute", async () => {
    const suiteDir = join(root, "suite");
    const recs = [1, 2, 3, 4].map((i) => record("vihsd", { id: `${i}`, family: "toxicity", questions: { label: { type: "choice", criteria: ABC } }, expected: { label: "A" } }));
    writeSuite(suiteDir, [{ family: "toxicity", track: "vihsd", records: recs }]);
    // The run answered the two records --limit 2 kept (the first two: one group each).
    const dir = join(root, "run");
    mkdirSync(join(dir, "toxicity"), { recursive: true });
    writeFileSync(join(dir, "toxicity", "vihsd.jsonl"), [1, 2].map((i) => JSON.stringify({ run_id: `vihsd:${i}`, id: `${i}`, probs: { label: peaked(["A", "B", "C"], "A") }, skipped: [] }) + "\n").join(""));
    const { metrics, v1Interval } = await scoreResultsWithInterval({ suiteDir, resultsDir: dir, tracks: ["vihsd"], limit: 2 });
    const card = buildRunCard({
      run: { run_id: "r1", suite_identity: metrics.suite.identity, tracks: ["vihsd"], limit: 2, method: { method: "systemone", seeds: [], temperature: 0, model: "sim/pseudo" }, created_at: "2026-01-01T00:00:00.000Z", sessions: 1, resumes: 0 },
      metrics,
      v1Interval,
      totals: undefined,
      results: sealResults(dir),
      cluster: { agents: [], leasesExpired: 0, backupUnits: 0, resultsRejected: 0 },
      setup: { datasetId: "udm-eval-v1", datasetVersion: "r", entryCount: 2, templateVersion: null, systemPrompt: "", batchSize: null, toolsEnabled: [], methodClass: "raw-llm", gpuHourUsd: 0 },
      status: "complete",
      finished: "2026-01-01T00:01:00.000Z",
      elapsedSeconds: 60,
    });
    expect(card.dataset.limit).toBe(2);
    const path = join(dir, "run-card.json");
    writeCard(path, card);
    expect(await verifyCard(path, { suiteDir })).toMatchObject({ problems: [], scoresRecomputed: true });
  });
});

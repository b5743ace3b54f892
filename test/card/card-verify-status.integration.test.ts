// `card verify` on a card whose run ended with errored records: the seal verifies, but the run is
// not complete: a failed check (exit 1, a line that says so), unless --allow-incomplete.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { spawnCli } from "../support/cli-process.js";
import { buildRunCard } from "../../card/build-card.js";
import { writeCard } from "../../card/card-file.js";

const dir = mkdtempSync(join(tmpdir(), "udm-verify-status-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("card verify", () => {
  it("says a complete_with_errors card is not a complete run: exit 1, or 0 with --allow-incomplete", async () => {
    const card = buildRunCard({
      run: { run_id: "r1", suite_identity: "d".repeat(64), tracks: ["vihsd"], method: { method: "systemone", seeds: [], temperature: 0, model: "sim/broken" }, created_at: "2026-01-01T00:00:00.000Z", sessions: 1, resumes: 0 },
      metrics: undefined,
      totals: undefined,
      results: { files: {}, errorRecords: 14 },
      cluster: { agents: [], leasesExpired: 0, backupUnits: 0, resultsRejected: 0 },
      setup: { datasetId: "udm-eval-v1", datasetVersion: "r", entryCount: 14, templateVersion: null, systemPrompt: "", batchSize: null, toolsEnabled: [], methodClass: "raw-llm", gpuHourUsd: 0 },
      status: "complete",
      finished: "2026-01-01T00:01:00.000Z",
      elapsedSeconds: 60,
    });
    const path = join(dir, "run-card.json");
    writeCard(path, card);
    const p = spawnCli(["card", "verify", path]);
    const { code } = await p.exited;
    expect(code, p.output()).toBe(1);
    expect(p.output()).toMatch(/: verifies \(fingerprint [0-9a-f]{12}/);
    expect(p.output()).toMatch(/NOT COMPLETE: status complete_with_errors \(14 of 14 records errored\): not a complete run/);
    const allowed = spawnCli(["card", "verify", "--allow-incomplete", path]);
    expect((await allowed.exited).code, allowed.output()).toBe(0);
    expect(allowed.output()).toMatch(/note: status complete_with_errors \(14 of 14 records errored\): not a complete run \(--allow-incomplete\)/);
  });
});

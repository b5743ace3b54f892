// Which results files `card verify` finds beside a card (card/verify-card.ts): the card's own, when
// any of them is there; another run's file alone does not make them present; a directory that
// cannot be listed hides no listed file and invents no unlisted one.
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildRunCard } from "../../card/build-card.js";
import { writeCard } from "../../card/card-file.js";
import type { RunCard } from "../../card/run-card.js";
import { verifyCard } from "../../card/verify-card.js";
import { UsageError } from "../../common/errors.js";
import { sealResults } from "../../common/results/index.js";

const root = mkdtempSync(join(tmpdir(), "udm-verify-beside-"));
const deep: string[] = [];
afterAll(() => {
  for (const dir of deep) shorten(dir);
  rmSync(root, { recursive: true, force: true });
});
let n = 0;

const LONG = "x".repeat(250);
const LEVELS = 18;

/**
 * Directories nested below `dir` deeper than PATH_MAX (4096 bytes): listing the deepest fails with
 * ENAMETOOLONG. Made short, then renamed from the bottom up (each rename's path stays short).
 */
function tooDeep(dir: string): void {
  const chain: string[] = [];
  let d = dir;
  for (let i = 0; i < LEVELS; i++) chain.push((d = join(d, "a")));
  mkdirSync(d, { recursive: true });
  for (let i = LEVELS - 1; i >= 0; i--) renameSync(chain[i]!, join(chain[i]!, "..", LONG));
  deep.push(dir);
}

/** Undoes tooDeep from the top down, so that the tree can be removed. */
function shorten(dir: string): void {
  let d = dir;
  for (let i = 0; i < LEVELS; i++) {
    renameSync(join(d, LONG), join(d, "a"));
    d = join(d, "a");
  }
}

/** A run directory with two results files and the card sealing them. */
function sealedRun(answeredBy = false): { dir: string; path: string; card: RunCard } {
  const dir = join(root, `run${++n}`);
  mkdirSync(join(dir, "fam"), { recursive: true });
  const by = answeredBy ? ',"answered_by":{"q":"systemone"}' : "";
  writeFileSync(join(dir, "fam", "a.jsonl"), `{"run_id":"a:1","id":"1","probs":{},"skipped":[]${by}}\n`);
  writeFileSync(join(dir, "fam", "b.jsonl"), `{"run_id":"b:1","id":"1","probs":{},"skipped":[]${by}}\n`);
  const card = buildRunCard({
    run: { run_id: `r${n}`, suite_identity: "d".repeat(64), tracks: ["a", "b"], method: { method: "systemone", seeds: [], temperature: 0, model: "sim/pseudo" }, created_at: "2026-01-01T00:00:00.000Z", sessions: 1, resumes: 0 },
    metrics: undefined,
    totals: undefined,
    results: sealResults(dir),
    cluster: { agents: [], leasesExpired: 0, backupUnits: 0, resultsRejected: 0 },
    setup: { datasetId: "udm-eval-v1", datasetVersion: "r", entryCount: 2, templateVersion: null, systemPrompt: "", batchSize: null, toolsEnabled: [], methodClass: "raw-llm", gpuHourUsd: 0 },
    status: "complete",
    finished: "2026-01-01T00:01:00.000Z",
    elapsedSeconds: 60,
  });
  const path = join(dir, "run-card.json");
  writeCard(path, card);
  return { dir, path, card };
}

describe("card verify: the results beside the card", () => {
  it("none of the card's files there, another results file is: the card stands alone (its seals verify)", async () => {
    const { dir, path } = sealedRun();
    rmSync(join(dir, "fam"), { recursive: true });
    mkdirSync(join(dir, "other"));
    writeFileSync(join(dir, "other", "c.jsonl"), '{"run_id":"c:1","id":"1","probs":{},"skipped":[]}\n');
    expect(await verifyCard(path)).toMatchObject({ problems: [], resultsPresent: false, filesChecked: 0 });
  });

  it("a directory below the card that cannot be listed: the listed files are checked, no unlisted file is made up", async () => {
    const { dir, path } = sealedRun();
    tooDeep(join(dir, "deep"));
    expect(await verifyCard(path)).toMatchObject({ problems: [], resultsPresent: true, filesChecked: 2 });
  });

  it("a card with answered_by beside a directory that cannot be listed: its methods cannot be recounted, one error naming the directory", async () => {
    const { dir, path, card } = sealedRun(true);
    expect(card.method.answered_by).toEqual({ systemone: { questions: 2, share: 1 } });
    tooDeep(join(dir, "deep"));
    const verdict = verifyCard(path);
    await expect(verdict).rejects.toThrow(UsageError);
    await expect(verdict).rejects.toThrow(`cannot read results directory ${dir}: ENAMETOOLONG`);
  });
});

// When `card verify` recounts method.answered_by from the results files (card/verify-card.ts): only
// for a final card whose sealed files are all there and unchanged; each method whose recorded
// questions or share differ is named, also one the results files do not have.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildRunCard } from "../../card/build-card.js";
import { sealCard } from "../../card/card-hash.js";
import { writeCard } from "../../card/card-file.js";
import type { RunCard } from "../../card/run-card.js";
import { verifyCard } from "../../card/verify-card.js";
import { sealResults } from "../../common/results/index.js";
import { sha256Hex } from "../../common/sha256.js";

const root = mkdtempSync(join(tmpdir(), "udm-verify-answered-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

const line = (runId: string, answeredBy: Record<string, string>) => JSON.stringify({ run_id: runId, id: runId.split(":")[1], probs: {}, skipped: [], answered_by: answeredBy }) + "\n";
/** Two records, four questions, all answered by systemone: answered_by { systemone: 4 questions, share 1 }. */
const SYSTEMONE = line("a:1", { p: "systemone", q: "systemone" }) + line("a:2", { p: "systemone", q: "systemone" });

/** A run directory with the given results files and a card sealing those in `sealed` (all by default). */
function run(files: Record<string, string>, status: RunCard["status"] = "complete", sealed?: ReadonlySet<string>): { dir: string; path: string; card: RunCard } {
  const dir = join(root, `run${++n}`);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(dir, rel, ".."), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  const card = buildRunCard({
    run: { run_id: `r${n}`, suite_identity: "d".repeat(64), tracks: ["a", "b"], method: { method: "systemone", seeds: [], temperature: 0, model: "sim/pseudo" }, created_at: "2026-01-01T00:00:00.000Z", sessions: 1, resumes: 0 },
    metrics: undefined,
    totals: undefined,
    results: sealResults(dir, sealed),
    cluster: { agents: [], leasesExpired: 0, backupUnits: 0, resultsRejected: 0 },
    setup: { datasetId: "udm-eval-v1", datasetVersion: "r", entryCount: 4, templateVersion: null, systemPrompt: "", batchSize: null, toolsEnabled: [], methodClass: "raw-llm", gpuHourUsd: 0 },
    status,
    finished: status === "running" ? null : "2026-01-01T00:01:00.000Z",
    elapsedSeconds: 60,
  });
  const path = join(dir, "run-card.json");
  writeCard(path, card);
  return { dir, path, card };
}

/** The card resealed with another method.answered_by. */
function recording(path: string, card: RunCard, answeredBy: NonNullable<RunCard["method"]["answered_by"]>): void {
  writeCard(path, sealCard({ ...card, method: { ...card.method, answered_by: answeredBy } }));
}

describe("card verify: when method.answered_by is recounted", () => {
  it("a card alone (no results files beside it): its answered_by is not recounted from nothing", async () => {
    const { dir, path, card } = run({ "fam/a.jsonl": SYSTEMONE });
    expect(card.method.answered_by).toEqual({ systemone: { questions: 4, share: 1 } });
    rmSync(join(dir, "fam"), { recursive: true });
    expect(await verifyCard(path)).toMatchObject({ problems: [], resultsPresent: false });
  });

  it("a running card: its answered_by is the sealed (finished) tracks', not also the track still being written", async () => {
    const files = { "fam/a.jsonl": SYSTEMONE, "fam/b.jsonl": line("b:1", { p: "label-read" }) };
    const { path, card } = run(files, "running", new Set(["fam/a.jsonl"]));
    expect(card.method.answered_by).toEqual({ systemone: { questions: 4, share: 1 } });
    expect(await verifyCard(path)).toMatchObject({ problems: [], resultsPresent: true, filesChecked: 1 });
  });

  it("a sealed file changed after sealing: its sha256 is the one problem, its answers are not recounted", async () => {
    const { dir, path, card } = run({ "fam/a.jsonl": SYSTEMONE });
    const changed = line("a:1", { p: "label-read", q: "label-read" }) + line("a:2", { p: "systemone", q: "systemone" });
    writeFileSync(join(dir, "fam", "a.jsonl"), changed);
    expect((await verifyCard(path)).problems).toEqual([`results file fam/a.jsonl: sha256 ${sha256Hex(changed)}, card records ${card.results_files["fam/a.jsonl"]}`]);
  });
});

describe("card verify: each method.answered_by difference is named", () => {
  it("a method the card records that the results files do not have", async () => {
    const { path, card } = run({ "fam/a.jsonl": SYSTEMONE });
    recording(path, card, { decisions: { questions: 1, share: 0.2 }, systemone: { questions: 4, share: 1 } });
    expect((await verifyCard(path)).problems).toEqual(["method.answered_by.decisions: card records 1 questions (0.2), the results files have none"]);
  });

  it("a method the results files have that the card does not record", async () => {
    const { path, card } = run({ "fam/a.jsonl": SYSTEMONE + line("a:3", { p: "label-read" }) });
    expect(card.method.answered_by).toEqual({ "label-read": { questions: 1, share: 0.2 }, systemone: { questions: 4, share: 0.8 } });
    recording(path, card, { systemone: { questions: 4, share: 0.8 } });
    expect((await verifyCard(path)).problems).toEqual(["method.answered_by.label-read: card records none, the results files have 1 (0.2)"]);
  });

  it("the same questions with another share", async () => {
    const { path, card } = run({ "fam/a.jsonl": SYSTEMONE });
    recording(path, card, { systemone: { questions: 4, share: 0.9 } });
    expect((await verifyCard(path)).problems).toEqual(["method.answered_by.systemone: card records 4 questions (0.9), the results files have 4 (1)"]);
  });

  it("other questions with the same share", async () => {
    const { path, card } = run({ "fam/a.jsonl": SYSTEMONE });
    recording(path, card, { systemone: { questions: 5, share: 1 } });
    expect((await verifyCard(path)).problems).toEqual(["method.answered_by.systemone: card records 5 questions (1), the results files have 4 (1)"]);
  });
});

// method.answered_by: the run card records which engine method answered what share of the
// questions (over each record's last results line), sealed by the card's hash and recomputed from
// the results files by `card verify`; cards from before the field still verify.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildRunCard, type RunCardInputs } from "../../card/build-card.js";
import { sealCard } from "../../card/card-hash.js";
import { writeCard } from "../../card/card-file.js";
import { verifyCard } from "../../card/verify-card.js";
import { sealResults } from "../../common/results/index.js";

const dir = mkdtempSync(join(tmpdir(), "udm-answered-by-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const line = (runId: string, answeredBy: Record<string, string>, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ run_id: runId, id: runId.split(":")[1], probs: {}, skipped: [], ...extra, answered_by: answeredBy, format: 2 });

/** A run directory with one results file; the card built over it. */
function run(name: string, recordAnsweredBy = true): { path: string; inputs: RunCardInputs } {
  const out = join(dir, name);
  mkdirSync(join(out, "fam"), { recursive: true });
  const lines = [
    line("t:1", { a: "label-read", b: "label-read" }), // redone below: the last line counts
    line("t:1", { a: "systemone", b: "systemone" }),
    line("t:2", { a: "systemone", b: "label-read" }),
    line("t:3", { a: "systemone" }, { errors: { b: "engine: HTTP 500" } }), // parsed, not read the fast way
  ];
  writeFileSync(join(out, "fam", "t.jsonl"), lines.join("\n") + "\n");
  const seal = sealResults(out);
  const inputs: RunCardInputs = {
    run: { run_id: name, suite_identity: "d".repeat(64), tracks: ["t"], method: { method: "systemone", seeds: [0, 1, 2], temperature: 0, model: "sim/x" }, created_at: "2026-01-01T00:00:00.000Z", sessions: 1, resumes: 0 },
    metrics: undefined,
    totals: undefined,
    results: { files: seal.files, errorRecords: seal.errorRecords, ...(recordAnsweredBy ? { answeredBy: seal.answeredBy } : {}) },
    cluster: { agents: [], leasesExpired: 0, backupUnits: 0, resultsRejected: 0 },
    setup: { datasetId: "udm-eval-v1", datasetVersion: "r", entryCount: 3, templateVersion: null, systemPrompt: "", batchSize: null, toolsEnabled: [], methodClass: "raw-llm", gpuHourUsd: 0 },
    status: "complete",
    finished: "2026-01-01T00:01:00.000Z",
    elapsedSeconds: 60,
  };
  return { path: join(out, "run-card.json"), inputs };
}

describe("method.answered_by", () => {
  it("sealResults counts each method's questions over the records' last lines", () => {
    const { inputs } = run("count", false);
    expect(sealResults(join(dir, "count")).answeredBy).toEqual({ "label-read": 1, systemone: 4 });
    expect(inputs.results.errorRecords).toBe(1);
  });

  it("the card names the methods that answered with their shares, sealed, and verifies against its results; older cards still verify", async () => {
    const { path, inputs } = run("card");
    const card = buildRunCard(inputs);
    expect(card.method.answered_by).toEqual({ "label-read": { questions: 1, share: 0.2 }, systemone: { questions: 4, share: 0.8 } });
    writeCard(path, card);
    expect((await verifyCard(path)).problems).toEqual([]);
    // Changed and resealed: the hash holds, the results files say otherwise.
    const forged = sealCard({ ...card, method: { ...card.method, answered_by: { systemone: { questions: 5, share: 1 } } } });
    writeCard(path, forged);
    const problems = (await verifyCard(path)).problems;
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^method\.answered_by\.label-read: card records none, the results files have 1 \(0\.2\)/);
    expect(problems[1]).toMatch(/^method\.answered_by\.systemone: card records 5 questions \(1\)/);
    // A card from before the field (none recorded) still verifies beside the same kind of results.
    const old = run("old", false);
    const oldCard = buildRunCard(old.inputs);
    expect(oldCard.method).not.toHaveProperty("answered_by");
    writeCard(old.path, oldCard);
    expect((await verifyCard(old.path)).problems).toEqual([]);
  });
});

// `card verify` in process (card/verify-card.ts): each way a card or its results can be changed
// after sealing is named, and a card whose results files are elsewhere still verifies its seals.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
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

const root = mkdtempSync(join(tmpdir(), "udm-verify-card-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const LINE_1 = '{"run_id":"vihsd:1","id":"1","probs":{"q":{"A":1}},"skipped":[]}\n';
const LINE_2 = '{"run_id":"vihsd:2","id":"2","probs":{"q":{"A":1}},"skipped":[]}\n';
let n = 0;

/** A run directory with two results files and a card sealing them; returns the card's path. */
function sealedRun(status: RunCard["status"] = "complete"): { dir: string; path: string; card: RunCard } {
  const dir = join(root, `run${++n}`);
  mkdirSync(join(dir, "toxicity"), { recursive: true });
  writeFileSync(join(dir, "toxicity", "vihsd.jsonl"), LINE_1);
  writeFileSync(join(dir, "toxicity", "vihsd-2.jsonl"), LINE_2);
  const results = sealResults(dir);
  const card = buildRunCard({
    run: { run_id: "r1", suite_identity: "d".repeat(64), tracks: ["vihsd"], method: { method: "systemone", seeds: [], temperature: 0, model: "sim/pseudo" }, created_at: "2026-01-01T00:00:00.000Z", sessions: 1, resumes: 0 },
    metrics: undefined,
    totals: undefined,
    results,
    cluster: { agents: [], leasesExpired: 0, backupUnits: 0, resultsRejected: 0 },
    setup: { datasetId: "udm-eval-v1", datasetVersion: "r", entryCount: 2, templateVersion: null, systemPrompt: "", batchSize: null, toolsEnabled: [], methodClass: "raw-llm", gpuHourUsd: 0 },
    status,
    finished: "2026-01-01T00:01:00.000Z",
    elapsedSeconds: 60,
  });
  const path = join(dir, "run-card.json");
  writeCard(path, card);
  return { dir, path, card };
}

describe("verifyCard", () => {
  it("a sealed card with its results files beside it verifies", async () => {
    const { path, card } = sealedRun();
    expect(Object.keys(card.results_files)).toEqual(["toxicity/vihsd-2.jsonl", "toxicity/vihsd.jsonl"]);
    const v = await verifyCard(path);
    expect(v.problems).toEqual([]);
    expect(v).toMatchObject({ filesChecked: 2, resultsPresent: true, scoresRecomputed: false });
    expect(v.card?.run_card_hash).toBe(card.run_card_hash);
  });

  it("a results line edited and its sha256 updated in the card: the run_card_hash no longer recomputes", async () => {
    const { dir, path, card } = sealedRun();
    writeFileSync(join(dir, "toxicity", "vihsd.jsonl"), LINE_1.replace('"A":1', '"B":1'));
    const files = sealResults(dir).files;
    writeCard(path, { ...card, results_files: files });
    const v = await verifyCard(path);
    expect(v.problems).toEqual([`run_card_hash: recorded ${card.run_card_hash}, recomputed ${sealCard({ ...card, results_files: files }).run_card_hash} (the card was changed after it was sealed)`]);
  });

  it("a results line edited: its file's sha256 differs from the card's", async () => {
    const { dir, path, card } = sealedRun();
    writeFileSync(join(dir, "toxicity", "vihsd.jsonl"), LINE_1.replace('"A":1', '"B":1'));
    const v = await verifyCard(path);
    const now = sealResults(dir).files["toxicity/vihsd.jsonl"];
    expect(v.problems).toEqual([`results file toxicity/vihsd.jsonl: sha256 ${now}, card records ${card.results_files["toxicity/vihsd.jsonl"]}`]);
    expect(v.filesChecked).toBe(2);
  });

  it("a sealed results file with a corrupted line mid-file: a problem naming file and line, no exception", async () => {
    const { dir, path, card } = sealedRun();
    const file = join(dir, "toxicity", "vihsd.jsonl");
    // A card sealed before sealing refused such files: its sha256 and answered_by match the file.
    writeFileSync(file, LINE_1 + '{"run_id":"vihsd:3","id":"3","probs":{"q":{"A\n' + LINE_1);
    const files = { ...card.results_files, "toxicity/vihsd.jsonl": sha256Hex(readFileSync(file)) };
    const edited = sealCard({ ...card, results_files: files, method: { ...card.method, answered_by: { systemone: { questions: 2, share: 1 } } } });
    writeCard(path, edited);
    const v = await verifyCard(path);
    expect(v.problems).toEqual([`results file toxicity/vihsd.jsonl: ${file}:2: not valid JSON (a corrupted line before the end of the file)`]);
  });

  it("a listed results file missing while the others are there", async () => {
    const { dir, path } = sealedRun();
    rmSync(join(dir, "toxicity", "vihsd-2.jsonl"));
    const v = await verifyCard(path);
    expect(v.problems).toEqual([`results file toxicity/vihsd-2.jsonl: listed in the card, missing from ${dir}`]);
    expect(v).toMatchObject({ filesChecked: 1, resultsPresent: true });
  });

  it("a results file the card does not seal: a problem for a final card, not for a running one", async () => {
    const final = sealedRun();
    writeFileSync(join(final.dir, "toxicity", "extra.jsonl"), LINE_2);
    expect((await verifyCard(final.path)).problems).toEqual([`results file toxicity/extra.jsonl: present in ${final.dir} but not sealed by the card`]);
    const running = sealedRun("running");
    writeFileSync(join(running.dir, "toxicity", "extra.jsonl"), LINE_2);
    expect((await verifyCard(running.path)).problems).toEqual([]);
  });

  it("a changed method field, resealed: the fingerprint no longer recomputes", async () => {
    const { path, card } = sealedRun();
    writeCard(path, sealCard({ ...card, method: { ...card.method, model_slug: "sim/oracle" } }));
    const v = await verifyCard(path);
    expect(v.problems).toHaveLength(1);
    expect(v.problems[0]).toMatch(new RegExp(`^fingerprint: recorded ${card.fingerprint}, recomputed [0-9a-f]{64} \\(a method or dataset field was changed\\)$`));
  });

  it("the card alone (no results beside it): its seals verify and no file is checked", async () => {
    const { dir, path } = sealedRun();
    rmSync(join(dir, "toxicity"), { recursive: true });
    expect(await verifyCard(path)).toMatchObject({ problems: [], filesChecked: 0, resultsPresent: false });
    // With a suite, scores cannot be recomputed without the results.
    expect((await verifyCard(path, { suiteDir: root })).problems).toEqual(["scores: the results files are not beside the card, so its scores cannot be recomputed"]);
  });

  it("a running card's scores are not recomputed", async () => {
    const { path } = sealedRun("running");
    expect((await verifyCard(path, { suiteDir: root })).problems).toEqual(["scores: a running card's scores cannot be recomputed (it seals only finished tracks)"]);
  });

  it("a listed results file that is a symbolic link is refused, never read", async () => {
    const { dir, path, card } = sealedRun();
    symlinkSync("/etc/hostname", join(dir, "link.jsonl"));
    writeCard(path, sealCard({ ...card, results_files: { ...card.results_files, "link.jsonl": "0".repeat(64) } }));
    expect((await verifyCard(path)).problems).toEqual(["results file link.jsonl: refused: a symbolic link, not a results file"]);
    rmSync(join(dir, "toxicity"), { recursive: true });
    const v = await verifyCard(path);
    expect(v.problems).toContain("results file link.jsonl: refused: a symbolic link, not a results file");
    expect(v.resultsPresent).toBe(true);
  });

  it("a card that lists no results file, with one beside it: that file is not sealed", async () => {
    const { dir, path, card } = sealedRun();
    writeCard(path, sealCard({ ...card, results_files: {} }));
    const v = await verifyCard(path);
    expect(v.resultsPresent).toBe(true);
    expect(v.problems).toEqual([
      `results file toxicity/vihsd-2.jsonl: present in ${dir} but not sealed by the card`,
      `results file toxicity/vihsd.jsonl: present in ${dir} but not sealed by the card`,
    ]);
    rmSync(join(dir, "toxicity"), { recursive: true });
    expect(await verifyCard(path)).toMatchObject({ resultsPresent: false, filesChecked: 0 });
    expect((await verifyCard(path)).problems).toEqual([]);
  });

  it("a file that is no card: one problem, no card", async () => {
    const path = join(root, "not-a-card.json");
    writeFileSync(path, "{}");
    const v = await verifyCard(path);
    expect(v.card).toBeUndefined();
    expect(v.problems).toHaveLength(1);
    expect(v.problems[0]).toMatch(/not a run card/);
    expect(v).toMatchObject({ filesChecked: 0, resultsPresent: false, scoresRecomputed: false });
    expect(v.signature).toEqual({ state: "unsigned" });
  });
});

describe("verifyCard with a suite", () => {
  it("rescoring the sealed results reproduces the card's scores; a changed score is named", async () => {
    const { writeSuite, record, peaked, ABC } = await import("../scorer/suite-fixture.js");
    const { scoreResultsWithInterval } = await import("../../scorer/index.js");
    const suiteDir = join(root, "suite");
    const recs = [1, 2, 3].map((i) => record("vihsd", { id: `${i}`, family: "toxicity", questions: { label: { type: "choice", criteria: ABC } }, expected: { label: i === 3 ? "B" : "A" } }));
    writeSuite(suiteDir, [{ family: "toxicity", track: "vihsd", records: recs }]);
    const dir = join(root, "scored");
    mkdirSync(join(dir, "toxicity"), { recursive: true });
    writeFileSync(join(dir, "toxicity", "vihsd.jsonl"), [1, 2, 3].map((i) => JSON.stringify({ run_id: `vihsd:${i}`, id: `${i}`, probs: { label: peaked(["A", "B", "C"], "A") }, skipped: [] }) + "\n").join(""));
    const { metrics, v1Interval } = await scoreResultsWithInterval({ suiteDir, resultsDir: dir, tracks: ["vihsd"] });
    const card = buildRunCard({
      run: { run_id: "r1", suite_identity: metrics.suite.identity, tracks: ["vihsd"], method: { method: "systemone", seeds: [], temperature: 0, model: "sim/pseudo" }, created_at: "2026-01-01T00:00:00.000Z", sessions: 1, resumes: 0 },
      metrics,
      v1Interval,
      totals: undefined,
      results: sealResults(dir),
      cluster: { agents: [], leasesExpired: 0, backupUnits: 0, resultsRejected: 0 },
      setup: { datasetId: "udm-eval-v1", datasetVersion: "r", entryCount: 3, templateVersion: null, systemPrompt: "", batchSize: null, toolsEnabled: [], methodClass: "raw-llm", gpuHourUsd: 0 },
      status: "complete",
      finished: "2026-01-01T00:01:00.000Z",
      elapsedSeconds: 60,
    });
    const path = join(dir, "run-card.json");
    writeCard(path, card);
    const ok = await verifyCard(path, { suiteDir });
    expect(ok.problems).toEqual([]);
    expect(ok.scoresRecomputed).toBe(true);
    // A headline changed and the card resealed: the seals hold, the rescored number does not.
    const tracks = { ...card.scores.tracks, vihsd: { ...card.scores.tracks.vihsd!, headline: { ...card.scores.tracks.vihsd!.headline, value: 1 } } };
    writeCard(path, sealCard({ ...card, scores: { ...card.scores, tracks } }));
    const changed = await verifyCard(path, { suiteDir });
    expect(changed.scoresRecomputed).toBe(false);
    expect(changed.problems.length).toBeGreaterThan(0);
    expect(changed.problems.join("\n")).toMatch(/vihsd/);
    // A results file changed after sealing: its seal is the problem; the changed file is not rescored
    // (its differences would say nothing more).
    writeCard(path, card);
    const results = join(dir, "toxicity", "vihsd.jsonl");
    const sealed = readFileSync(results);
    writeFileSync(results, [1, 2, 3].map((i) => JSON.stringify({ run_id: `vihsd:${i}`, id: `${i}`, probs: { label: peaked(["A", "B", "C"], "C") }, skipped: [] }) + "\n").join(""));
    const edited = await verifyCard(path, { suiteDir });
    expect(edited.problems).toEqual([`results file toxicity/vihsd.jsonl: sha256 ${sha256Hex(readFileSync(results))}, card records ${card.results_files["toxicity/vihsd.jsonl"]}`]);
    expect(edited.scoresRecomputed).toBe(false);
    writeFileSync(results, sealed);
    // A suite that is not there: the rescoring fails with a named problem.
    writeCard(path, card);
    const missing = await verifyCard(path, { suiteDir: join(root, "no-suite") });
    expect(missing.problems).toHaveLength(1);
    expect(missing.problems[0]).toMatch(/^scores: cannot rescore the results files against .*no-suite: /);
    expect(missing.scoresRecomputed).toBe(false);
  });
});

// planSweep against cards already in the sweep's run directories: a complete card covers the
// requested scope or the run is planned again (a widened sweep runs the new tracks); a card whose
// records errored is not complete and is rerun; a card of format 1 keeps skipping by its own rule.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { buildRunCard } from "../../card/build-card.js";
import { writeCard } from "../../card/card-file.js";
import { sealCard } from "../../card/card-hash.js";
import { legacyFingerprint } from "../../card/fingerprint.js";
import { planSweep } from "../../run/sweep.js";
import { cardSetup } from "../../run/run-card-setup.js";
import type { RunCard } from "../../card/run-card.js";

let dir: string;
let suite: string;
const RUN = "sim_pseudo__systemone__t0__seeds-none";

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "udm-sweep-plan-"));
  suite = join(dir, "suite");
  await makeSuite({ out: suite, scale: "small", seed: 9, tracks: ["vihsd", "aiv-nli500", "victsd"] });
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function config(name: string, tracks: string[]): string {
  const path = join(dir, `${name}.yaml`);
  writeFileSync(path, ["suite: suite", `out: ${name}`, "models: [sim/pseudo]", `tracks: [${tracks.join(", ")}]`, ""].join("\n"));
  return path;
}

/** The final card a sweep run over `tracks` leaves (batch size null, as a sweep's), with `errors` errored records. */
function sealedCard(out: string, dataset: string, tracks: string[], errors = 0): RunCard {
  const card = buildRunCard({
    run: { run_id: "r1", suite_identity: dataset, tracks, method: { method: "systemone", seeds: [], temperature: 0, model: "sim/pseudo" }, created_at: "2026-01-01T00:00:00.000Z", sessions: 1, resumes: 0 },
    metrics: undefined,
    totals: undefined,
    results: { files: {}, errorRecords: errors },
    cluster: { agents: [], leasesExpired: 0, backupUnits: 0, resultsRejected: 0 },
    setup: cardSetup({ suiteDir: suite, method: "systemone", entryCount: 14, batchSize: null, methodClass: "raw-llm", gpuHourUsd: 0 }),
    status: "complete",
    finished: "2026-01-01T00:01:00.000Z",
    elapsedSeconds: 60,
  });
  mkdirSync(join(dir, out, RUN), { recursive: true });
  writeCard(join(dir, out, RUN, "run-card.json"), card);
  return card;
}

describe("planSweep", () => {
  it("a sweep widened from one track to three runs again; narrowed back, the wider complete card answers it", async () => {
    const narrow = await planSweep(config("widen", ["vihsd"]));
    expect(narrow.entries[0]!.status).toBe("pending");
    sealedCard("widen", narrow.dataset, ["vihsd"]);
    expect((await planSweep(config("widen", ["vihsd"]))).entries[0]).toMatchObject({ status: "skipped", note: "complete card with the same fingerprint" });

    const wide = await planSweep(config("widen", ["vihsd", "aiv-nli500", "victsd"]));
    expect(wide.entries[0]!.fingerprint).not.toBe(narrow.entries[0]!.fingerprint);
    expect(wide.entries[0]!.status).toBe("pending");

    sealedCard("widen", wide.dataset, ["vihsd", "aiv-nli500", "victsd"]);
    expect((await planSweep(config("widen", ["vihsd"]))).entries[0]).toMatchObject({ status: "skipped", note: "complete card over a scope that covers this one" });
  });

  it("a run whose every record errored is sealed complete_with_errors, and the next plan reruns it", async () => {
    const plan = await planSweep(config("errors", ["vihsd"]));
    const card = sealedCard("errors", plan.dataset, ["vihsd"], 14);
    expect(card.status).toBe("complete_with_errors");
    expect(card.scores.errors).toBe(14);
    const again = await planSweep(config("errors", ["vihsd"]));
    expect(again.entries[0]).toMatchObject({ status: "pending", note: "card complete_with_errors (14 records errored): run (resumes its results)" });
  });

  it("a complete card of format 1 (old fingerprint rule) that covers the scope is still skipped", async () => {
    const plan = await planSweep(config("legacy", ["vihsd"]));
    const card = sealedCard("legacy", plan.dataset, ["vihsd"]);
    const { families: _f, ...dataset } = card.dataset;
    const old = { ...card, card_format: 1, dataset } as RunCard;
    old.fingerprint = legacyFingerprint({
      datasetSha256: old.dataset.sha256,
      modelSlug: old.method.model_slug,
      condition: old.method.condition,
      systemPromptSha256: old.method.system_prompt_sha256,
      temperature: old.method.temperature,
      harnessVersion: old.harness_version,
      batchSize: old.method.batch_size,
      toolsEnabled: old.method.tools_enabled,
    });
    writeCard(join(dir, "legacy", RUN, "run-card.json"), sealCard(old));
    expect((await planSweep(config("legacy", ["vihsd"]))).entries[0]!.status).toBe("skipped");
    expect((await planSweep(config("legacy", ["vihsd", "victsd"]))).entries[0]!.status).toBe("pending");
  });
});

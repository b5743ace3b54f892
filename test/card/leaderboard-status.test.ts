// A card that is not complete (here: every record errored, the mean of nothing is 0) is ranked
// apart, after every complete card of its group, whatever its mean; its status is in the row.
import { describe, expect, it } from "vitest";
import { buildRunCard } from "../../card/build-card.js";
import { buildLeaderboard } from "../../card/leaderboard/leaderboard-rows.js";
import type { RunCard } from "../../card/run-card.js";

function card(model: string, mean: number, errors: number): RunCard {
  const c = buildRunCard({
    run: { run_id: model, suite_identity: "d".repeat(64), tracks: ["vihsd"], method: { method: "systemone", seeds: [], temperature: 0, model }, created_at: "2026-01-01T00:00:00.000Z", sessions: 1, resumes: 0 },
    metrics: undefined,
    totals: undefined,
    results: { files: {}, errorRecords: errors },
    cluster: { agents: [], leasesExpired: 0, backupUnits: 0, resultsRejected: 0 },
    setup: { datasetId: "udm-eval-v1", datasetVersion: "r", entryCount: 14, templateVersion: null, systemPrompt: "", batchSize: null, toolsEnabled: [], methodClass: "raw-llm", gpuHourUsd: 0 },
    status: "complete",
    finished: "2026-01-01T00:01:00.000Z",
    elapsedSeconds: 60,
  });
  return { ...c, scores: { ...c.scores, summary: { v1_mean: mean, v1_tracks: 1, family_macro_mean: mean } } };
}

describe("leaderboard", () => {
  it("ranks a complete_with_errors card after the complete ones", () => {
    const board = buildLeaderboard([
      { kind: "card", source: "errored", card: card("sim/broken", 0.9, 14), problems: [] },
      { kind: "card", source: "ok", card: card("sim/pseudo", 0.4, 0), problems: [] },
      { kind: "card", source: "ok2", card: card("sim/oracle", 0.6, 0), problems: [] },
    ]);
    const rows = board.groups[0]!.rows;
    expect(rows.map((r) => [r.source, r.rank, r.status])).toEqual([
      ["ok2", 1, "complete"],
      ["ok", 2, "complete"],
      ["errored", 3, "complete_with_errors"],
    ]);
  });
});

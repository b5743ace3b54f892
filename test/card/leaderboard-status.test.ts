// A card that is not complete (here: every record errored, the mean of nothing is 0) is listed
// apart, unranked, after every complete card of its group, whatever its mean; its status is in the row.
import { describe, expect, it } from "vitest";
import { buildRunCard } from "../../card/build-card.js";
import { buildLeaderboard, rankText } from "../../card/leaderboard/leaderboard-rows.js";
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
      ["errored", null, "complete_with_errors"],
    ]);
    expect(rankText(rows[2]!)).toBe("- (complete_with_errors: 14 of 14 records errored)");
  });

  it("never ranks an all-errors card first, even alone in its group", () => {
    const rows = buildLeaderboard([{ kind: "card", source: "errored", card: card("sim/broken", 0, 14), problems: [] }]).groups[0]!.rows;
    expect(rows[0]!.rank).toBeNull();
    expect(rankText(rows[0]!)).toBe("- (complete_with_errors: 14 of 14 records errored)");
  });

  it("sums up repeats of one setup: mean, sample spread and n over the ranked cards", () => {
    const a = { ...card("sim/pseudo", 0.4, 0), run_id: "a" };
    const b = { ...card("sim/pseudo", 0.6, 0), run_id: "b" };
    const board = buildLeaderboard([
      { kind: "card", source: "runs/a/run-card.json", card: a, problems: [] },
      { kind: "card", source: "runs/b/run-card.json", card: b, problems: [] },
      { kind: "card", source: "runs/c/run-card.json", card: card("sim/oracle", 0.9, 0), problems: [] },
    ]);
    const g = board.groups[0]!;
    expect(g.rows.map((r) => [r.run_id, r.directory, r.repeats])).toEqual([
      ["sim/oracle", "runs/c", 1],
      ["b", "runs/b", 2],
      ["a", "runs/a", 2],
    ]);
    expect(g.repeats).toHaveLength(1);
    expect(g.repeats[0]).toMatchObject({ n: 2, model: "sim/pseudo", run_ids: ["b", "a"], v1_min: 0.4, v1_max: 0.6 });
    expect(g.repeats[0]!.v1_mean).toBeCloseTo(0.5, 12);
    expect(g.repeats[0]!.v1_sd).toBeCloseTo(Math.SQRT2 * 0.1, 12);
  });
});

// Results sent many to a message (ResultBatch) and in the compact probability form, against a real
// coordinator over gRPC on 127.0.0.1:0: each result of a batch is validated on its own (a malformed
// one is rejected and counted, the rest committed), the first result of a run_id wins across
// batches, and a compact result's line is the line its map form would have written.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { writeTinySuite } from "./helpers/tiny-suite.js";
import { resultLines, useHarness } from "./helpers/harness.js";
import { eventually, uniformAnswer } from "./helpers/test-agent.js";
import type { Payload__Output } from "../../proto/generated/udm/v1/Payload.js";
import type { RecordResult } from "../../proto/generated/udm/v1/RecordResult.js";

const { tmp, start, agent } = useHarness();

/** tiny-guard's questions: harmful (noul: true, false), category (cybercrime, none, skill:x). */
function compact(unitId: string, p: Payload__Output, harmful: [number, number], category: [number, number, number]): RecordResult {
  return {
    unit_id: unitId,
    run_id: p.run_id,
    payload_sha256: p.payload_sha256,
    latency_ms: 3,
    usage: { prompt_tokens: 10, cached_tokens: 4, completion_tokens: 1, requests: 1 },
    prob_questions: ["harmful", "category"],
    prob_values: [...harmful, ...category],
  };
}

describe("result batches", () => {
  it("validates each result of a batch on its own: malformed ones are rejected and counted per record, the rest committed", async () => {
    const outDir = tmp("out");
    const h = await start({ suiteDir: writeTinySuite(tmp("suite")), outDir, tracks: ["tiny-guard"] });
    const a = agent(h.address, { agentId: "a", credit: 1, auto: false });
    await a.waitFor(() => a.units.length === 1, 10_000, "unit");
    const unit = a.units[0]!;
    const [p0, p1, p2, ...rest] = unit.records;
    expect(rest).toHaveLength(3);
    const third = 1 / 3;
    const ok = (p: Payload__Output) => compact(unit.unit_id, p, [0.5, 0.5], [third, third, third]);
    a.results([
      // p0 and p1: three faulty results each, each rejected with its reason.
      { ...ok(p0!), prob_values: [0.5, 0.5, 0.5, 0.5] },
      compact(unit.unit_id, p0!, [Number.NaN, 0.5], [third, third, third]),
      compact(unit.unit_id, p0!, [0.5, 0.6], [third, third, third]),
      { ...ok(p1!), prob_questions: ["harmful", "nope"] },
      { ...ok(p1!), skipped: ["harmful"] },
      { ...ok(p1!), prob_questions: ["harmful", "harmful"], prob_values: [0.5, 0.5, 0.5, 0.5] },
      // Not this run's record, not this unit: rejected before the answer is looked at.
      { ...ok(p2!), run_id: "tiny-guard:nope" },
      { ...ok(p2!), unit_id: "tiny-guard/99" },
      // Valid, in either form.
      compact(unit.unit_id, p2!, [0.25, 0.75], [0.5, 0.25, 0.25]),
      ...rest.map((p) => ({ unit_id: unit.unit_id, run_id: p.run_id, ...uniformAnswer(p) })),
    ]);
    await eventually(async () => (await h.status()).recordsCommitted === 4, 10_000, "the valid four committed");
    const mid = await h.status();
    expect(mid.resultsRejected).toBe(8);
    expect(mid.rejectedByReason).toEqual({ bad_distribution: 3, unknown_question: 1, conflicting_question: 2, unknown_run_id: 1, no_lease: 1 });
    expect(mid.agents.find((x) => x.agentId === "a")?.rejected).toBe(8);
    a.unitDone(unit.unit_id);
    a.grant(1);
    await a.waitFor(() => a.units.length === 2, 10_000, "the rejected records again");
    const again = a.units[1]!;
    expect(again.records.map((r) => r.run_id)).toEqual([p0!.run_id, p1!.run_id]);
    a.results(again.records.map((p) => compact(again.unit_id, p, [1, 0], [0, 1, 0])));
    a.unitDone(again.unit_id);
    expect((await h.done).state).toBe("complete");
    expect((await h.status()).recordsGivenUp).toBe(0);
    const lines = resultLines(outDir, "safety_guardrail", "tiny-guard");
    expect(lines).toHaveLength(6);
    // Compact values land on the options in criteria order; the line holds them as the map form would.
    expect(lines.find((l) => l.run_id === p2!.run_id)!.probs).toEqual({ harmful: { true: 0.25, false: 0.75 }, category: { cybercrime: 0.5, none: 0.25, "skill:x": 0.25 } });
    expect(lines.find((l) => l.run_id === p0!.run_id)!.probs).toEqual({ harmful: { true: 1, false: 0 }, category: { cybercrime: 0, none: 1, "skill:x": 0 } });
  });

  it("keeps the first result of a run_id across batches and counts the later ones as duplicates", async () => {
    const outDir = tmp("out");
    const h = await start({ suiteDir: writeTinySuite(tmp("suite")), outDir, tracks: ["tiny-guard"] });
    const a = agent(h.address, { agentId: "a", credit: 1, auto: false });
    await a.waitFor(() => a.units.length === 1, 10_000, "unit");
    const unit = a.units[0]!;
    const recs = unit.records;
    a.results(recs.slice(0, 3).map((p) => compact(unit.unit_id, p, [0.9, 0.1], [1, 0, 0])));
    a.results(recs.slice(1).map((p) => compact(unit.unit_id, p, [0.1, 0.9], [0, 0, 1])));
    a.unitDone(unit.unit_id);
    expect((await h.done).state).toBe("complete");
    const st = await h.status();
    expect(st.resultsDuplicate).toBe(2);
    expect(st.resultsRejected).toBe(0);
    const lines = resultLines(outDir, "safety_guardrail", "tiny-guard");
    expect(lines).toHaveLength(6);
    expect(new Set(lines.map((l) => l.run_id)).size).toBe(6);
    for (const p of recs.slice(0, 3)) expect(lines.find((l) => l.run_id === p.run_id)!.probs).toMatchObject({ harmful: { true: 0.9, false: 0.1 } });
    for (const p of recs.slice(3)) expect(lines.find((l) => l.run_id === p.run_id)!.probs).toMatchObject({ harmful: { true: 0.1, false: 0.9 } });
    // Every line is one JSON object on its own line.
    const text = readFileSync(join(outDir, "safety_guardrail", "tiny-guard.jsonl"), "utf8");
    expect(text.endsWith("\n")).toBe(true);
    expect(text.trimEnd().split("\n")).toHaveLength(6);
  });
});

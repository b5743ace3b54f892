// run.json's agents block with the real coordinator and agents over gRPC: attached and ready agents
// as they change (an agent turning ready by heartbeat, one dropping off), every agent seen, and a
// resume on the same --out still accepted by run.json's checks, with the block started afresh.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { writeTinySuite } from "./helpers/tiny-suite.js";
import { useHarness } from "./helpers/harness.js";
import { eventually } from "./helpers/test-agent.js";
import type { RunAgentsBlock } from "../../coordinator/run-agents.js";

const { tmp, start, agent } = useHarness();

interface RunJson {
  run_id: string;
  sessions: number;
  resumes: number;
  tracks: string[];
  agents?: RunAgentsBlock;
}

function runJson(outDir: string): RunJson {
  return JSON.parse(readFileSync(join(outDir, "run.json"), "utf8")) as RunJson;
}

function counts(outDir: string): { attached: number; ready: number; seen: number } | undefined {
  const a = runJson(outDir).agents;
  return a && { attached: a.attached, ready: a.ready, seen: a.seen };
}

describe("run.json agents", () => {
  it("shows attached vs ready agents as they change, keeps every agent seen, and a resume still passes run.json's checks", async () => {
    const suiteDir = writeTinySuite(tmp("suite"));
    const outDir = tmp("out");
    const h = await start({ suiteDir, outDir, tracks: ["tiny-sa"], leaseMs: 60_000 });
    const first = runJson(outDir);
    expect(first.agents).toMatchObject({ attached: 0, ready: 0, seen: 0, list: [] });

    // No credit yet: turning ready does not end the run before the block is read.
    const idle = agent(h.address, { agentId: "idle", credit: 0, ready: false });
    // Holds its unit unanswered, so the run stays open.
    const holder = agent(h.address, { agentId: "holder", credit: 1, auto: false });
    await holder.waitFor(() => holder.units.length === 1, 10_000, "unit");
    await eventually(() => JSON.stringify(counts(outDir)) === JSON.stringify({ attached: 2, ready: 1, seen: 2 }), 10_000, "2 attached, 1 ready");
    const list = runJson(outDir).agents!.list;
    expect(list.map((e) => [e.agent_id, e.attached, e.ready, e.engine_url])).toEqual([
      ["holder", true, true, "http://127.0.0.1:1"],
      ["idle", true, false, "http://127.0.0.1:1"],
    ]);

    idle.heartbeat(true);
    await eventually(() => counts(outDir)?.ready === 2, 10_000, "idle ready");
    holder.kill();
    await eventually(() => JSON.stringify(counts(outDir)) === JSON.stringify({ attached: 1, ready: 1, seen: 2 }), 10_000, "holder gone, still seen");
    expect(runJson(outDir).agents!.list.find((e) => e.agent_id === "holder")).toMatchObject({ attached: false, ready: false });

    // The idle agent, now ready, takes the holder's unit back and finishes the run.
    idle.grant(1);
    expect((await h.done).state).toBe("complete");
    await h.close();
    const ended = runJson(outDir);
    expect(ended).toMatchObject({ run_id: first.run_id, sessions: 1, resumes: 0, tracks: first.tracks });
    expect(ended.agents!.seen).toBe(2);

    // A second session on the same --out: accepted (same suite, tracks, method), its own agents block.
    const again = await start({ suiteDir, outDir, tracks: ["tiny-sa"] });
    expect(runJson(outDir)).toMatchObject({ run_id: first.run_id, sessions: 2, resumes: 1, agents: { attached: 0, ready: 0, seen: 0 } });
    expect((await again.done).state).toBe("complete");
  }, 60_000);
});

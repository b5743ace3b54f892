// Why an agent left, as the coordinator tells it (issue 23, item 5), with the real coordinator and
// agents over gRPC: an agent that went quiet until its lease expired and then lost its connection,
// one that ended its stream itself, one whose connection was cut, one told to drain; each listed
// in the status's agents_left (and run.json) with its reason, and gone from it once it attaches
// again. The keeping rule (10 minutes, 64 at most) on LeftAgents with the clock passed in.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { writeTinySuite } from "./helpers/tiny-suite.js";
import { useHarness } from "./helpers/harness.js";
import { eventually } from "./helpers/test-agent.js";
import { LeftAgents, LEFT_KEEP_MAX, LEFT_KEEP_MS } from "../../coordinator/left-agents.js";
import type { RunAgentsBlock } from "../../coordinator/run-agents.js";

const { tmp, start, agent } = useHarness();

describe("agents that leave", () => {
  it("are listed with why they left: lease expired, stream ended, connection lost; until they attach again", async () => {
    const suiteDir = writeTinySuite(tmp("suite"));
    const outDir = tmp("out");
    const h = await start({ suiteDir, outDir, tracks: ["tiny-sa"], leaseMs: 400, heartbeatMs: 100 });
    // Takes a unit, never answers nor beats: its lease runs out, then its connection goes.
    const quiet = agent(h.address, { agentId: "quiet", credit: 1, auto: false });
    await quiet.waitFor(() => quiet.units.length === 1, 10_000, "a unit");
    await eventually(async () => (await h.status()).leasesExpired > 0, 10_000, "its lease expired");
    quiet.kill();
    // Closes its side of the stream itself (an agent stopping on its own).
    const polite = agent(h.address, { agentId: "polite", credit: 0, heartbeatMs: 100 });
    await eventually(async () => (await h.status()).agents.some((a) => a.agentId === "polite"), 10_000, "polite attached");
    polite.close();
    // Cut off: no goodbye.
    const cut = agent(h.address, { agentId: "cut", credit: 0, heartbeatMs: 100 });
    await eventually(async () => (await h.status()).agents.some((a) => a.agentId === "cut"), 10_000, "cut attached");
    cut.kill();

    await eventually(async () => (await h.status()).agentsLeft.length === 3, 10_000, "three agents left");
    const s = await h.status();
    expect(s.agents).toEqual([]);
    const why = Object.fromEntries(s.agentsLeft.map((a) => [a.agentId, a.left!.reason]));
    expect(why.quiet).toMatch(/^lease expired \(no message for \d+ s\), then connection lost$/);
    expect(why.polite).toBe("stream ended by the agent");
    expect(why.cut).toBe("connection lost (agent killed or unreachable)");
    for (const a of s.agentsLeft) expect(a).toMatchObject({ ready: false, inflightUnits: 0 });
    // The same over the Status RPC (what `status` and `status --json` read).
    const wire = await agent(h.address, { agentId: "reader", credit: 0 }).status();
    expect(wire.agents_left.map((a) => [a.agent_id, a.left_reason])).toEqual(s.agentsLeft.map((a) => [a.agentId, a.left!.reason]));
    expect(wire.agents.find((a) => a.agent_id === "reader")?.left_reason).toBe("");
    // run.json keeps the reasons (status --out).
    await eventually(() => {
      const block = (JSON.parse(readFileSync(join(outDir, "run.json"), "utf8")) as { agents?: RunAgentsBlock }).agents;
      return block?.list.filter((e) => e.left_reason).length === 3;
    }, 10_000, "run.json's reasons");

    // Back again: listed as attached, not as left, also in run.json.
    agent(h.address, { agentId: "cut", credit: 0, heartbeatMs: 100 });
    await eventually(async () => (await h.status()).agents.some((a) => a.agentId === "cut"), 10_000, "cut back");
    expect((await h.status()).agentsLeft.map((a) => a.agentId).sort()).toEqual(["polite", "quiet"]);
    await eventually(() => {
      const block = (JSON.parse(readFileSync(join(outDir, "run.json"), "utf8")) as { agents?: RunAgentsBlock }).agents;
      const e = block?.list.find((x) => x.agent_id === "cut");
      return e?.attached === true && e.left_reason === undefined;
    }, 10_000, "run.json: cut attached again");
  }, 60_000);

  it("a drained agent left because it was told to", async () => {
    const suiteDir = writeTinySuite(tmp("suite"));
    const outDir = tmp("out");
    const h = await start({ suiteDir, outDir, tracks: ["tiny-sa"], leaseMs: 60_000 });
    const a = agent(h.address, { agentId: "drained", credit: 0, heartbeatMs: 100 });
    await eventually(async () => (await h.status()).agents.length === 1, 10_000, "attached");
    const stopping = h.drain();
    await a.closed;
    await stopping;
    expect((await h.status()).agentsLeft.map((x) => [x.agentId, x.left!.reason])).toEqual([["drained", "drained"]]);
  }, 60_000);

  it("are kept LEFT_KEEP_MS after they leave, LEFT_KEEP_MAX at most, the latest departure of an id only", () => {
    const left = new LeftAgents();
    const at = (id: string, atMs: number) => ({ agentId: id, model: "m", engineUrl: "", results: 0, rejected: 0, reason: "r", atMs });
    left.left(at("a", 0));
    left.left(at("b", 1_000));
    left.left(at("a", 2_000));
    expect(left.list(2_000).map((x) => [x.agentId, x.atMs])).toEqual([["b", 1_000], ["a", 2_000]]);
    expect(left.list(1_000 + LEFT_KEEP_MS).map((x) => x.agentId)).toEqual(["b", "a"]);
    expect(left.list(1_001 + LEFT_KEEP_MS).map((x) => x.agentId)).toEqual(["a"]);
    for (let i = 0; i < LEFT_KEEP_MAX + 10; i++) left.left(at(`n${i}`, 3_000 + i));
    const kept = left.list(3_000);
    expect(kept).toHaveLength(LEFT_KEEP_MAX);
    expect(kept[0]!.agentId).toBe("n10");
    left.back("n10");
    expect(left.list(3_000)[0]!.agentId).toBe("n11");
  });
});

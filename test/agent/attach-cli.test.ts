// `udm-orch agent` in process (runCli) against a recording coordinator on 127.0.0.1 and a real
// simulated engine: exit 0 after a Drain or SIGTERM, 1 on refused credentials, 2 on bad flags.
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../cli/program.js";
import { startSimEngine, type SimEngine } from "../../sim/engine/server.js";
import { FakeCoordinator, makeUnit, waitFor } from "./attach-fakes.js";
import { distributionProblem } from "../../common/results/format.js";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
beforeAll(() => {
  process.env.UDM_LOG_LEVEL = "silent";
});

async function setup(token?: string, run: { method?: string; seeds?: number[] } = {}): Promise<{ c: FakeCoordinator; engine: SimEngine }> {
  const c = new FakeCoordinator({ token, heartbeatMs: 20, ...run });
  await c.start();
  cleanups.push(() => c.kill());
  const engine = await startSimEngine({ seed: 3 });
  cleanups.push(() => engine.close());
  return { c, engine };
}

describe("udm-orch agent", () => {
  it.each([
    ["systemone", []],
    ["decisions", [1, 2]],
    ["label-read", []],
    ["label-read", [5, 6]],
  ])("--method %s (run seeds %j) answers units through the engine and exits 0 after the coordinator's Drain", async (method, seeds) => {
    const { c, engine } = await setup("tok", { method, seeds });
    const exit = runCli(["agent", "--coordinator", c.address, "--engine", engine.url, "--token", "tok", "--capacity", "3", "--agent-id", "cli-1", "--method", method]);
    await waitFor("attached", () => c.connections.length === 1 && c.last().credit === 3);
    expect(c.last().messages[0]!.hello).toMatchObject({ agent_id: "cli-1", model: engine.model, capacity: 3, ready: true, engine_url: engine.url });
    const units = [makeUnit("c1", 3), makeUnit("c2", 1), makeUnit("c3", 2), makeUnit("c4", 2)];
    c.enqueue(...units);
    await waitFor("units done", () => c.all("unit_done").length === units.length);
    await waitFor("heartbeat", () => c.all("heartbeat").some((h) => h.ready));
    c.send(c.last(), { drain: { reason: "run complete" } });
    expect(await exit).toBe(0);
    const results = c.all("result");
    expect(results.length).toBe(8);
    for (const r of results) {
      expect(r.errors).toEqual({});
      expect(distributionProblem(r.probs.q_choice?.p, ["a", "b", "c"])).toBeUndefined();
      expect(distributionProblem(r.probs.q_noul?.p, ["true", "false"])).toBeUndefined();
    }
    expect(engine.stats().requests).toBeGreaterThanOrEqual(8);
  });

  it("drains on SIGTERM and exits 0", async () => {
    const { c, engine } = await setup();
    const exit = runCli(["agent", "--coordinator", c.address, "--engine", engine.url, "--capacity", "1"]);
    await waitFor("attached", () => c.connections.length === 1 && c.last().credit === 1);
    c.enqueue(makeUnit("s1", 2));
    await waitFor("unit done", () => c.all("unit_done").length === 1);
    process.emit("SIGTERM");
    expect(await exit).toBe(0);
    expect(c.last().ended).toBe(true);
    expect(process.listenerCount("SIGTERM")).toBe(0);
  });

  it("exits 1 when the coordinator refuses the token", async () => {
    const { c, engine } = await setup("right");
    expect(await runCli(["agent", "--coordinator", c.address, "--engine", engine.url, "--token", "wrong"])).toBe(1);
    expect(c.refused.length).toBe(1);
  });

  it.each([
    [["--coordinator", "no-port", "--engine", "http://127.0.0.1:1"]],
    [["--coordinator", "127.0.0.1:1", "--engine", "not a url"]],
    [["--coordinator", "127.0.0.1:1", "--engine", "http://127.0.0.1:1", "--capacity", "0"]],
    [["--coordinator", "127.0.0.1:1", "--engine", "http://127.0.0.1:1", "--method", "nope"]],
    [["--coordinator", "127.0.0.1:1", "--engine", "http://127.0.0.1:1", "--tls-cert", "c.pem"]],
    [["--coordinator", "127.0.0.1:1", "--engine", "http://127.0.0.1:1", "--label-read-api", "grpc"]],
    [["--engine", "http://127.0.0.1:1"]],
  ])("exits 2 on bad flags %j", async (args) => {
    expect(await runCli(["agent", ...args])).toBe(2);
  });
});

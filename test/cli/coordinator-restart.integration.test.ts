// Agents survive a coordinator restart (issue 27, item 4): SIGTERM to a coordinator whose run is
// not complete tells its agents to reattach, not to exit; the coordinator restarted on the same
// --out and port gets the same agent process back, and it finishes the run. With --drain-agents
// (or a second signal) the agents are told to stop, as before. Real coordinator, agent, sim engine.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliFixture, exitWithin } from "../support/cli-fixture.js";
import { waitUntil } from "../support/cli-process.js";

const fx = cliFixture("restart", { seed: 7, tracks: ["aiv-sa24-easy", "aiv-culture100"] });
const cli = fx.cli;

/** Result lines committed under `out` (each line of <family>/<track>.jsonl is fsynced before it counts). */
function committed(out: string): number {
  if (!existsSync(out)) return 0;
  let n = 0;
  for (const family of readdirSync(out, { withFileTypes: true })) {
    if (!family.isDirectory() || family.name.startsWith(".")) continue;
    for (const f of readdirSync(join(out, family.name))) if (f.endsWith(".jsonl")) n += readFileSync(join(out, family.name, f), "utf8").split("\n").filter(Boolean).length;
  }
  return n;
}

describe("a coordinator restart mid-run", () => {
  it("SIGTERM: the agent reattaches to the restarted coordinator and the same agent process finishes the run", async () => {
    const engine = cli(["sim-engine", "--port", "0", "--tokens-per-s", "60"]);
    const url = (await engine.waitFor(/^(http:\/\/127\.0\.0\.1:\d+)$/m))[1]!;
    const out = join(fx.root, "out");
    const first = cli(["coordinator", "--suite", fx.suite, "--out", out, "--listen", "127.0.0.1:0", "--metrics", "off"]);
    const address = (await first.waitFor(/listening on (127\.0\.0\.1:\d+) run/))[1]!;
    const agent = cli(["agent", "--coordinator", address, "--engine", url, "--capacity", "1"]);
    await first.waitFor(/agent attached/, 60_000);
    // Work is under way (the restarted coordinator must have records to resume).
    await waitUntil(() => committed(out) > 0, 60_000, "a committed result");
    first.kill("SIGTERM");
    expect(await exitWithin(first, 60_000), first.output()).toBe(1);
    expect(first.output()).toMatch(/ cancelled: \d+\/\d+ records committed/);
    await agent.waitFor(/the coordinator restarts; reattaching/, 30_000);
    expect(agent.child.exitCode, agent.output()).toBeNull();
    expect(agent.output()).not.toMatch(/drained by the coordinator/);

    const second = cli(["coordinator", "--suite", fx.suite, "--out", out, "--listen", address, "--metrics", "off"]);
    await second.waitFor(/agent attached/, 60_000);
    expect(await exitWithin(second, 120_000), second.output()).toBe(0);
    expect(second.output()).toMatch(/ complete: (\d+)\/\1 records committed \([1-9]\d* resumed/);
    expect(await exitWithin(agent, 30_000), agent.output()).toBe(0);
    expect(agent.output()).toMatch(/drained by the coordinator \(run complete\)/);
  }, 300_000);

  it("--drain-agents: SIGTERM tells the agent to stop", async () => {
    const engine = cli(["sim-engine", "--port", "0", "--tokens-per-s", "60"]);
    const url = (await engine.waitFor(/^(http:\/\/127\.0\.0\.1:\d+)$/m))[1]!;
    const c = cli(["coordinator", "--suite", fx.suite, "--out", join(fx.root, "out-drain"), "--listen", "127.0.0.1:0", "--metrics", "off", "--drain-agents"]);
    const address = (await c.waitFor(/listening on (127\.0\.0\.1:\d+) run/))[1]!;
    const agent = cli(["agent", "--coordinator", address, "--engine", url, "--capacity", "1"]);
    await c.waitFor(/agent attached/, 60_000);
    c.kill("SIGTERM");
    expect(await exitWithin(agent, 60_000), agent.output()).toBe(0);
    expect(agent.output()).toMatch(/drained by the coordinator \(coordinator draining\)/);
    expect(await exitWithin(c, 60_000)).toBe(1);
  }, 180_000);

  it("a second SIGTERM tells the agents told to reattach to stop", async () => {
    const engine = cli(["sim-engine", "--port", "0", "--tokens-per-s", "60"]);
    const url = (await engine.waitFor(/^(http:\/\/127\.0\.0\.1:\d+)$/m))[1]!;
    const c = cli(["coordinator", "--suite", fx.suite, "--out", join(fx.root, "out-twice"), "--listen", "127.0.0.1:0", "--metrics", "off", "--drain-timeout-ms", "60000"]);
    const address = (await c.waitFor(/listening on (127\.0\.0\.1:\d+) run/))[1]!;
    const agent = cli(["agent", "--coordinator", address, "--engine", url, "--capacity", "1"]);
    await c.waitFor(/agent attached/, 60_000);
    // The agent is working when the first signal comes.
    await waitUntil(() => committed(join(fx.root, "out-twice")) > 0, 60_000, "a committed result");
    c.kill("SIGTERM");
    await agent.waitFor(/the coordinator restarts: finishing what is in hand/, 30_000);
    c.kill("SIGTERM");
    expect(await exitWithin(agent, 60_000), agent.output()).toBe(0);
    expect(agent.output()).toMatch(/drained by the coordinator \(coordinator draining\)/);
    expect(agent.output()).not.toMatch(/the coordinator restarts; reattaching/);
    expect(await exitWithin(c, 60_000)).toBe(1);
  }, 180_000);
});

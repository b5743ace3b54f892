// A lease shorter than the heartbeat (issue 27, item 5). Not given, the heartbeat is lowered to a
// third of the lease (with a warning), so `run --lease-ms 3000` on a slow engine finishes; given,
// a lease shorter than two heartbeats is refused with exit 2 before anything starts. Before, every
// lease expired between heartbeats and the run committed nothing, silently. Real processes.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliFixture, exitWithin } from "../support/cli-fixture.js";

const fx = cliFixture("lease", { seed: 7, tracks: ["aiv-sa24-easy"] });
const cli = fx.cli;

describe("lease and heartbeat", () => {
  it("`run --lease-ms 3000` on a slow engine: the heartbeat fits the lease and the run completes", async () => {
    const p = cli(["run", "--suite", fx.suite, "--out", join(fx.root, "run"), "--sim", "1", "--sim-tokens-per-s", "2000", "--lease-ms", "3000", "--metrics", "off"]);
    const code = await exitWithin(p, 90_000);
    expect(code, p.output()).toBe(0);
    expect(p.output()).toMatch(/agents heartbeat every 1000 ms/);
    expect(p.output()).toMatch(/complete: 5 records/);
  }, 120_000);

  it("`run --lease-ms 3000 --heartbeat-ms 2000`: exit 2 naming both flags", async () => {
    const p = cli(["run", "--suite", fx.suite, "--out", join(fx.root, "run-2"), "--sim", "1", "--lease-ms", "3000", "--heartbeat-ms", "2000"]);
    expect(await exitWithin(p, 30_000), p.output()).toBe(2);
    expect(p.output()).toMatch(/^udm-orch: --lease-ms 3000 is shorter than 2 heartbeats \(--heartbeat-ms 2000\)/m);
  }, 60_000);

  it("`coordinator --lease-ms 3000 --heartbeat-ms 2000`: exit 2 before it listens", async () => {
    const p = cli(["coordinator", "--suite", fx.suite, "--out", join(fx.root, "coord"), "--listen", "127.0.0.1:0", "--metrics", "off", "--lease-ms", "3000", "--heartbeat-ms", "2000"]);
    expect(await exitWithin(p, 30_000), p.output()).toBe(2);
    expect(p.output()).toMatch(/--lease-ms 3000 is shorter than 2 heartbeats/);
    expect(p.output()).not.toMatch(/listening/);
  }, 60_000);
});

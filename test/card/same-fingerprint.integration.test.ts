// One setup, four commands, one fingerprint: `run`, `coordinator` (with an agent), a one-run
// `sweep` and `card reproduce` of the coordinator's card, all on the same simulated engine, suite,
// model, method, seeds and temperature, write run cards with the same fingerprint (and the
// reproduction is noted as of the same setup, not as another one).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnCli, type CliProcess } from "../support/cli-process.js";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { startSimEngine, type SimEngine } from "../../sim/engine/server.js";
import { freePort } from "../../bench/bench-args.js";
import type { RunCard } from "../../card/run-card.js";

const MODEL = "sim/pseudo";
let dir: string;
let suite: string;
let engine: SimEngine;
const started: CliProcess[] = [];

function cli(args: string[]): CliProcess {
  const p = spawnCli(args);
  started.push(p);
  return p;
}

const cardOf = (out: string): RunCard => JSON.parse(readFileSync(join(out, "run-card.json"), "utf8")) as RunCard;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "udm-same-fp-"));
  suite = join(dir, "suite");
  await makeSuite({ out: suite, scale: "small", seed: 4, tracks: ["vihsd"] });
  engine = await startSimEngine({ port: 0, model: "pseudo" });
}, 60_000);

afterAll(async () => {
  for (const p of started) p.kill("SIGKILL");
  await engine?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("one setup", () => {
  it("has one fingerprint whether run by run, coordinator, sweep or card reproduce", async () => {
    const method = ["--method", "systemone", "--seeds", "0,1", "--model", MODEL];

    const runOut = join(dir, "run");
    const run = cli(["run", "--suite", suite, "--out", runOut, "--engine", engine.url, ...method]);
    expect((await run.exited).code, run.output()).toBe(0);

    const coordOut = join(dir, "coordinator");
    const c = cli(["coordinator", "--suite", suite, "--out", coordOut, "--listen", "127.0.0.1:0", "--after-complete", "exit", ...method]);
    const address = (await c.waitFor(/listening on (127\.0\.0\.1:\d+)/))[1]!;
    const agent = cli(["agent", "--coordinator", address, "--engine", engine.url, "--method", "systemone", "--seeds", "0,1"]);
    expect((await c.exited).code, c.output()).toBe(0);
    expect((await agent.exited).code, agent.output()).toBe(0);

    const port = await freePort();
    const config = join(dir, "sweep.yaml");
    writeFileSync(config, ["suite: suite", "out: sweep", `listen: 127.0.0.1:${port}`, `models: [${MODEL}]`, "methods: [systemone]", "seed_sets: [[1, 0]]", ""].join("\n"));
    const sweep = cli(["sweep", "--config", config]);
    await sweep.waitFor(/127\.0\.0\.1:\d+/);
    const sweepAgent = cli(["agent", "--coordinator", `127.0.0.1:${port}`, "--engine", engine.url, "--method", "any"]);
    expect((await sweep.exited).code, sweep.output()).toBe(0);
    sweepAgent.kill("SIGTERM");

    const reproOut = join(dir, "reproduce");
    const repro = cli(["card", "reproduce", join(coordOut, "run-card.json"), "--engine", engine.url, "--out", reproOut]);
    expect((await repro.exited).code, repro.output()).toBe(0);
    expect(repro.output()).not.toMatch(/fingerprint .* differs/);

    const sweepCard = cardOf(join(dir, "sweep", "sim_pseudo__systemone__t0__seeds-1-0"));
    const cards = { run: cardOf(runOut), coordinator: cardOf(coordOut), sweep: sweepCard, reproduce: cardOf(reproOut) };
    const fps = Object.fromEntries(Object.entries(cards).map(([k, v]) => [k, v.fingerprint]));
    expect(fps, JSON.stringify(Object.fromEntries(Object.entries(cards).map(([k, v]) => [k, { method: v.method, dataset: v.dataset, harness: v.harness_version }])), null, 1)).toEqual({
      run: cards.coordinator.fingerprint,
      coordinator: cards.coordinator.fingerprint,
      sweep: cards.coordinator.fingerprint,
      reproduce: cards.coordinator.fingerprint,
    });
    // The batch size is still recorded: `run`'s agents hold 8 units, a cluster's choose.
    expect(cards.run.method.batch_size).toBe(8);
    expect(cards.coordinator.method.batch_size).toBeNull();
  }, 240_000);
});

// What a sweep reruns: widened from one track to two, the run is not skipped (the scope is in the
// fingerprint), it resumes its results over the new scope and its card covers both tracks; a run
// whose every record errored (the engine answers 500) is sealed complete_with_errors, the sweep
// exits 1, and the next invocation plans it again.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnCli, type CliProcess } from "../support/cli-process.js";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { startSimEngine, type SimEngine } from "../../sim/engine/server.js";
import type { RunCard } from "../../card/run-card.js";
import { fixedPort } from "../support/fixed-port.js";

let dir: string;
let engine: SimEngine;
let broken: SimEngine;
let port: number;
const agents: CliProcess[] = [];


beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "udm-sweep-widen-"));
  await makeSuite({ out: join(dir, "suite"), scale: "small", seed: 9, tracks: ["vihsd", "aiv-nli500"] });
  engine = await startSimEngine({ port: 0 });
  broken = await startSimEngine({ port: 0, faults: "5xx=1" });
  port = await fixedPort();
}, 60_000);

afterAll(async () => {
  for (const a of agents) a.kill("SIGKILL");
  await engine?.close();
  await broken?.close();
  rmSync(dir, { recursive: true, force: true });
});

function writeConfig(out: string, tracks: string[]): string {
  const config = join(dir, `${out}.yaml`);
  writeFileSync(config, ["suite: suite", `out: ${out}`, `listen: 127.0.0.1:${port}`, "models: [sim/pseudo]", `tracks: [${tracks.join(", ")}]`, ""].join("\n"));
  return config;
}

/** Runs the sweep over `tracks` with one agent on `engineUrl`; its exit code and output. */
async function sweep(tracks: string[], out = "runs", engineUrl = engine.url, agentArgs: string[] = []): Promise<{ code: number | null; output: string }> {
  const p = spawnCli(["sweep", "--config", writeConfig(out, tracks)]);
  await p.waitFor(/sweep coordinator listening/, 60_000);
  // One agent id per out directory: a second sweep there then does not wait for the first one's agent to come back.
  agents.push(spawnCli(["agent", "--coordinator", `127.0.0.1:${port}`, "--engine", engineUrl, "--method", "systemone", "--agent-id", `${out}-agent`, ...agentArgs]));
  const { code } = await p.exited;
  return { code, output: p.output() };
}

describe("sweep", () => {
  it("widened from one track to two, runs the new track instead of skipping the run", async () => {
    const first = await sweep(["vihsd"]);
    expect(first.code, first.output).toBe(0);
    const second = await sweep(["vihsd", "aiv-nli500"]);
    expect(second.code, second.output).toBe(0);
    expect(second.output).not.toMatch(/skip sim_pseudo/);
    const card = JSON.parse(readFileSync(join(dir, "runs", "sim_pseudo__systemone__t0__seeds-none", "run-card.json"), "utf8")) as RunCard;
    expect(card).toMatchObject({ status: "complete", dataset: { tracks: ["aiv-nli500", "vihsd"] } });
    expect(Object.keys(card.scores.tracks).sort()).toEqual(["aiv-nli500", "vihsd"]);
  }, 120_000);

  it("a run whose every record errored: card complete_with_errors, exit 1, planned again", async () => {
    const r = await sweep(["vihsd"], "errors", broken.url, ["--retries", "0"]);
    expect(r.code, r.output).toBe(1);
    expect(r.output).toMatch(/sim_pseudo__systemone__t0__seeds-none complete_with_errors \((\d+) of \1 records errored; a rerun redoes them\)/);
    expect(r.output).toMatch(/sweep incomplete \(1 run\(s\) with errored records\)/);
    const card = JSON.parse(readFileSync(join(dir, "errors", "sim_pseudo__systemone__t0__seeds-none", "run-card.json"), "utf8")) as RunCard;
    expect(card.status).toBe("complete_with_errors");
    expect(card.scores.errors).toBe(card.dataset.entry_count);
    const plan = spawnCli(["sweep", "--config", writeConfig("errors", ["vihsd"]), "--dry-run"]);
    expect((await plan.exited).code, plan.output()).toBe(0);
    expect(plan.output()).toMatch(/\| sim_pseudo__systemone__t0__seeds-none \| to run \|/);
  }, 120_000);
});

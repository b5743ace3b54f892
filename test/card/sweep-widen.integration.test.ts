// A sweep widened from one track to two, rerun: the run is not skipped (the scope is in the
// fingerprint); it resumes its results over the new scope and its card covers both tracks.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnCli, type CliProcess } from "../support/cli-process.js";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { startSimEngine, type SimEngine } from "../../sim/engine/server.js";
import type { RunCard } from "../../card/run-card.js";

let dir: string;
let engine: SimEngine;
let port: number;
const agents: CliProcess[] = [];

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const p = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return p;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "udm-sweep-widen-"));
  await makeSuite({ out: join(dir, "suite"), scale: "small", seed: 9, tracks: ["vihsd", "aiv-nli500"] });
  engine = await startSimEngine({ port: 0 });
  port = await freePort();
}, 60_000);

afterAll(async () => {
  for (const a of agents) a.kill("SIGKILL");
  await engine?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the sweep over `tracks` with one agent; its exit code and output. */
async function sweep(tracks: string[]): Promise<{ code: number | null; output: string }> {
  const config = join(dir, "sweep.yaml");
  writeFileSync(config, ["suite: suite", "out: runs", `listen: 127.0.0.1:${port}`, "models: [sim/pseudo]", `tracks: [${tracks.join(", ")}]`, ""].join("\n"));
  const p = spawnCli(["sweep", "--config", config]);
  await p.waitFor(/sweep coordinator listening/, 60_000);
  // One agent id for both sweeps: the second then does not wait for the first sweep's agent to come back.
  agents.push(spawnCli(["agent", "--coordinator", `127.0.0.1:${port}`, "--engine", engine.url, "--method", "systemone", "--agent-id", "widen-agent"]));
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
});

// A sweep with `limit:` (and `--limit` over it): each run answers the limit's records only, its card
// says so, a rerun with the same limit skips the run (the planned fingerprint is the card's), and a
// rerun with another limit (`--limit` over the config's) runs it again, resuming the records it has.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultLines, spawnCli, type CliProcess } from "../support/cli-process.js";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { startSimEngine, type SimEngine } from "../../sim/engine/server.js";
import type { RunCard } from "../../card/run-card.js";
import { freePort } from "../../bench/bench-args.js";

let dir: string;
let engine: SimEngine;
let port: number;
const agents: CliProcess[] = [];
const RUN = "sim_pseudo__systemone__t0__seeds-none";

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "udm-sweep-limit-"));
  await makeSuite({ out: join(dir, "suite"), scale: "small", seed: 11, tracks: ["vihsd", "trec-dl19"] });
  engine = await startSimEngine({ port: 0 });
  port = await freePort();
  writeFileSync(join(dir, "sweep.yaml"), ["suite: suite", "out: runs", `listen: 127.0.0.1:${port}`, "models: [sim/pseudo]", "limit: 2", ""].join("\n"));
}, 60_000);

afterAll(async () => {
  for (const a of agents) a.kill("SIGKILL");
  await engine?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function sweep(extra: string[], agentId: string, expectAgent = true): Promise<{ code: number | null; output: string }> {
  const p = spawnCli(["sweep", "--config", join(dir, "sweep.yaml"), ...extra]);
  if (expectAgent) {
    await p.waitFor(/sweep coordinator listening/, 60_000);
    agents.push(spawnCli(["agent", "--coordinator", `127.0.0.1:${port}`, "--engine", engine.url, "--method", "systemone", "--agent-id", agentId]));
  }
  const { code } = await p.exited;
  return { code, output: p.output() };
}

const card = () => JSON.parse(readFileSync(join(dir, "runs", RUN, "run-card.json"), "utf8")) as RunCard;

describe("sweep with a limit", () => {
  it("runs the limit's records, skips the run on a rerun with the same limit, runs it again under another", async () => {
    const first = await sweep([], "a1");
    expect(first.code, first.output).toBe(0);
    const limited = resultLines(join(dir, "runs", RUN));
    expect(card()).toMatchObject({ status: "complete", dataset: { limit: 2, entry_count: limited.length } });
    for (const t of ["vihsd", "trec-dl19"]) expect(limited.filter((l) => l.run_id.startsWith(`${t}:`)).length, t).toBeGreaterThan(0);
    expect(limited.filter((l) => l.run_id.startsWith("vihsd:")).length).toBeLessThanOrEqual(2);
    const fingerprint = card().fingerprint;
    // The dry run estimates the records the limit keeps.
    const plan = spawnCli(["sweep", "--config", join(dir, "sweep.yaml"), "--dry-run"]);
    expect((await plan.exited).code, plan.output()).toBe(0);
    expect(plan.output()).toMatch(new RegExp(`1 runs over ${limited.length} records`));

    const again = await sweep([], "a2", false);
    expect(again.code, again.output).toBe(0);
    expect(again.output).toMatch(new RegExp(`skip ${RUN}: complete card with the same fingerprint`));

    const full = await sweep(["--limit", "1000000"], "a3");
    expect(full.code, full.output).toBe(0);
    expect(full.output).not.toMatch(/skip sim_pseudo/);
    expect(card().dataset.limit).toBe(1000000);
    expect(card().fingerprint).not.toBe(fingerprint);
    expect(resultLines(join(dir, "runs", RUN)).length).toBeGreaterThan(limited.length);
  }, 240_000);
});

// Chaos with real processes (issue 14): a run of the small suite with 3 agents, 3 simulated
// engines, the streaming scorer and nats-server, in which a seeded schedule SIGKILLs one process
// 20 times (each kind 4 times: coordinator, an agent, an engine, the scorer, nats-server) and
// starts it again in its place. At the end every record has exactly one line, none with errors,
// and the scorer's metrics.json is byte-equal to what `udm-orch score` writes for the same results.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChaosCluster, killSchedule, runSchedule, VICTIMS } from "../../bench/chaos-cluster.js";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { requireBuild, resultLines, spawnCli } from "../support/cli-process.js";
import { NATS_MISSING_MESSAGE, natsTestMode } from "../support/nats-server.js";

const mode = natsTestMode();
if (mode === "fail") {
  describe("nats-server", () => {
    it("is installed (CI=true runs every NATS test)", () => {
      throw new Error(NATS_MISSING_MESSAGE.replace("NATS tests skipped", "CI=true needs it"));
    });
  });
}

const SEED = 14;
const KILLS = 20;

let root: string;
let suiteDir: string;
let records: number;
let cluster: ChaosCluster | undefined;

describe.skipIf(mode !== "run")("chaos: 20 seeded SIGKILLs of real processes during a run", () => {
  beforeAll(async () => {
    requireBuild();
    root = mkdtempSync(join(tmpdir(), "udm-chaos-"));
    suiteDir = join(root, "suite");
    records = (await makeSuite({ out: suiteDir, scale: "small", seed: 7 })).records;
  }, 60_000);

  afterAll(async () => {
    await cluster?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it("ends with every record exactly once and the scorer's metrics.json byte-equal to score's", async () => {
    const log: string[] = [];
    const resultsDir = join(root, "results");
    const scorerDir = join(root, "scorer");
    // ~25 s undisturbed on 3 engines: long enough that the 20 kills land while the run is going.
    cluster = new ChaosCluster({ suiteDir, resultsDir, scorerDir, natsStoreDir: join(root, "nats"), agents: 3, tokensPerS: 10_000, log: (l) => log.push(l) });
    await cluster.start();
    const schedule = killSchedule(SEED, KILLS, 3, 800, 1600);
    for (const v of VICTIMS) expect(schedule.filter((k) => k.victim === v)).toHaveLength(KILLS / VICTIMS.length);

    const done = await runSchedule(cluster, schedule);
    expect(done, `every kill landed before the run ended:\n${log.join("\n")}`).toHaveLength(KILLS);
    const end = await cluster.finish(120_000);
    expect(end.coordinator, cluster.output("coordinator").slice(-3000)).toBe(0);
    expect(end.scorer, cluster.output("scorer").slice(-3000)).toBe(0);
    expect(cluster.coordinatorStarts).toBeGreaterThanOrEqual(5);

    const lines = resultLines(resultsDir);
    const ids = lines.map((l) => l.run_id);
    expect(new Set(ids).size, "distinct run_ids").toBe(records);
    expect(ids.length, "result lines (a duplicate would make this larger)").toBe(records);
    expect(lines.filter((l) => l.errors && Object.keys(l.errors).length > 0)).toEqual([]);

    const scoreFile = join(root, "score-metrics.json");
    const score = spawnCli(["score", "--suite", suiteDir, "--results", resultsDir, "--out", scoreFile]);
    expect((await score.exited).code, score.output()).toBe(0);
    expect(readFileSync(join(scorerDir, "metrics.json"), "utf8")).toBe(readFileSync(scoreFile, "utf8"));
  }, 240_000);
});

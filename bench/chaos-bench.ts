// Chaos benchmark: the chaos test's cluster (nats-server, a coordinator, N simulated engines, N
// agents, the streaming scorer; bench/chaos-cluster.ts) on a suite of any size, run twice in the
// same bench run: once undisturbed, once under a seeded schedule of SIGKILLs spread over the
// undisturbed run's length (each kind of process equally often, each restarted in place).
//
//   node dist/bench/chaos-bench.js --suite DIR [--agents 3] [--kills 20] [--seed 14]
//        [--tokens-per-s 0] [--out bench/out/chaos.json]
//
// Figures: kills survived (the disturbed run ended with every record exactly once, no errors, and
// the scorer's metrics.json byte-equal to `score`'s), records redone (engine work beyond the
// undisturbed run's, from the engines' vLLM counters read before each engine kill and at the end:
// prompt tokens and requests, each turned into records), and time lost against the undisturbed run.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { arg } from "./bench-args.js";
import { ChaosCluster, killSchedule, runSchedule, type EngineCounters, type Kill } from "./chaos-cluster.js";

const MAIN = join(dirname(fileURLToPath(import.meta.url)), "..", "cli", "main.js");

interface Pass {
  wall_s: number;
  coordinator_starts: number;
  engine_work: EngineCounters;
  records: number;
  duplicate_lines: number;
  errored_lines: number;
  metrics_equal_score: boolean;
  kills: Kill[];
}

/** Lines per run_id and lines with errors under a results directory. */
function tally(resultsDir: string): { records: number; duplicates: number; errored: number } {
  const seen = new Set<string>();
  let lines = 0;
  let errored = 0;
  for (const fam of readdirSync(resultsDir)) {
    const dir = join(resultsDir, fam);
    if (!statSync(dir).isDirectory()) continue;
    for (const f of readdirSync(dir).filter((x) => x.endsWith(".jsonl"))) {
      for (const text of readFileSync(join(dir, f), "utf8").split("\n")) {
        if (!text.trim()) continue;
        const l = JSON.parse(text) as { run_id: string; errors?: Record<string, string> };
        lines++;
        seen.add(l.run_id);
        if (l.errors && Object.keys(l.errors).length > 0) errored++;
      }
    }
  }
  return { records: seen.size, duplicates: lines - seen.size, errored };
}

async function pass(name: string, suite: string, root: string, agents: number, tokensPerS: number, schedule: Kill[]): Promise<Pass> {
  const dir = join(root, name);
  const log = (l: string) => process.stderr.write(`[${name}] ${l}\n`);
  const cluster = new ChaosCluster({ suiteDir: suite, resultsDir: join(dir, "results"), scorerDir: join(dir, "scorer"), natsStoreDir: join(dir, "nats"), agents, tokensPerS, log });
  const t0 = performance.now();
  try {
    await cluster.start();
    const kills = await runSchedule(cluster, schedule);
    const end = await cluster.finish(4 * 3600_000);
    const wall = (performance.now() - t0) / 1000;
    if (end.scorer !== 0) throw new Error(`[${name}] scorer exited with ${end.scorer}:\n${cluster.output("scorer").slice(-3000)}`);
    const t = tally(join(dir, "results"));
    const scoreFile = join(dir, "score-metrics.json");
    const score = spawnSync(process.execPath, [MAIN, "score", "--suite", suite, "--results", join(dir, "results"), "--out", scoreFile], { encoding: "utf8", env: { ...process.env, UDM_NO_PROGRESS: "1" } });
    if (score.status !== 0) throw new Error(`[${name}] score exited with ${score.status}: ${score.stderr.slice(-2000)}`);
    const equal = readFileSync(join(dir, "scorer", "metrics.json"), "utf8") === readFileSync(scoreFile, "utf8");
    log(`${t.records} records, ${t.duplicates} duplicate lines, ${t.errored} with errors, metrics.json ${equal ? "byte-equal to" : "DIFFERENT from"} score's, ${wall.toFixed(1)} s`);
    return { wall_s: wall, coordinator_starts: cluster.coordinatorStarts, engine_work: cluster.engineWork, records: t.records, duplicate_lines: t.duplicates, errored_lines: t.errored, metrics_equal_score: equal, kills };
  } finally {
    await cluster.stop();
  }
}

async function main(): Promise<void> {
  const suite = resolve(arg("suite"));
  const agents = Number(arg("agents", "3"));
  const killCount = Number(arg("kills", "20"));
  const seed = Number(arg("seed", "14"));
  const tokensPerS = Number(arg("tokens-per-s", "0"));
  const outFile = arg("out", "bench/out/chaos.json");
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: npm run build first`);
  const root = mkdtempSync(join(tmpdir(), "udm-chaos-bench-"));
  const load = [loadavg()[0]];
  try {
    const calm = await pass("undisturbed", suite, root, agents, tokensPerS, []);
    load.push(loadavg()[0]);
    // Kills spread over the undisturbed run's length: the mean gap leaves a margin at the end.
    const meanGapMs = (calm.wall_s * 1000) / (killCount + 2);
    const schedule = killSchedule(seed, killCount, agents, 0.5 * meanGapMs, 1.5 * meanGapMs);
    const chaos = await pass("chaos", suite, root, agents, tokensPerS, schedule);
    load.push(loadavg()[0]);

    const perRecord = (w: EngineCounters, k: keyof EngineCounters) => w[k] / calm.records;
    const redone = (k: keyof EngineCounters) => (chaos.engine_work[k] - calm.engine_work[k]) / perRecord(calm.engine_work, k);
    const survived = chaos.kills.length === killCount && chaos.records === calm.records && chaos.duplicate_lines === 0 && chaos.errored_lines === 0 && chaos.metrics_equal_score;
    const figures = {
      bench: "chaos",
      suite,
      records: calm.records,
      agents,
      engines: `sim-engine --tokens-per-s ${tokensPerS}${tokensPerS === 0 ? " (zero latency)" : ""}`,
      seed,
      machine: { cpus: cpus().length, loadavg_1m: load },
      undisturbed: calm,
      chaos,
      kills_planned: killCount,
      kills_done: chaos.kills.length,
      kills_by_victim: Object.fromEntries(["coordinator", "agent", "engine", "scorer", "nats"].map((v) => [v, chaos.kills.filter((k) => k.victim === v).length])),
      kills_survived: survived ? chaos.kills.length : 0,
      survived,
      records_redone: {
        by_prompt_tokens: Math.round(redone("promptTokens")),
        by_requests: Math.round(redone("requests")),
        note: "engine work beyond the undisturbed run's, in records; work an engine did in the moments between its last /metrics read and its SIGKILL is not counted",
      },
      time_lost_s: chaos.wall_s - calm.wall_s,
      time_lost_per_kill_s: chaos.kills.length > 0 ? (chaos.wall_s - calm.wall_s) / chaos.kills.length : 0,
      slowdown: chaos.wall_s / calm.wall_s,
    };
    mkdirSync(dirname(outFile), { recursive: true });
    writeFileSync(outFile, JSON.stringify(figures, null, 2) + "\n");
    process.stdout.write(JSON.stringify(figures, null, 2) + "\n");
    if (!survived) process.exitCode = 1;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();

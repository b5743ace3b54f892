// Two builds' coordinators side by side: coordinator-bench.ts run alternately with another build's
// CLI (`--cli`) and with this build's, pair after pair, each run reading and parsing the suite
// first as its own floor. This machine's speed moves by up to 1.5x within the hour (the same build
// gave 2.3-3.5 CPU-s on its busiest thread), more than most single changes: only runs taken in
// turn, compared by their spread and medians, tell two builds apart.
//
//   node dist/bench/coordinator-ab.js --suite DIR --base OTHER/dist/cli/main.js [--pairs 4]
//     [--tracks LIST] [--out bench/out/coordinator-ab.json]
//
// Writes each run's figures and, per build, the min / median / max of: the busiest thread's
// run-phase CPU-s, that over read-and-parse CPU (the issue's target is 0.3), the next busiest
// thread's CPU-s, run-phase peak RSS, and read-and-parse CPU-s.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { arg, optionalArg } from "./bench-args.js";

const BENCH = join(dirname(fileURLToPath(import.meta.url)), "coordinator-bench.js");

interface RunFigures {
  build: "base" | "head";
  pair: number;
  busiest_thread_cpu_s: number;
  busiest_to_read_and_parse: number;
  next_thread_cpu_s: number;
  peak_rss_run_mb: number;
  peak_rss_mb: number;
  read_and_parse_cpu_s: number;
  /** Run-phase CPU-s of the threads that name themselves (a build from before they did names "main" only). */
  named_threads: Record<string, number>;
}

interface Spread {
  min: number;
  median: number;
  max: number;
}

export function spread(values: readonly number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { min: sorted[0]!, median, max: sorted[sorted.length - 1]! };
}

function runOnce(build: "base" | "head", pair: number, suite: string, base: string, tracks: string | undefined, scratch: string): RunFigures {
  const out = join(scratch, `${build}-${pair}.json`);
  const args = [BENCH, "--suite", suite, "--out", out, ...(build === "base" ? ["--cli", base] : []), ...(tracks ? ["--tracks", tracks] : [])];
  const child = spawnSync(process.execPath, args, { stdio: ["ignore", "ignore", "inherit"] });
  if (child.status !== 0) throw new Error(`coordinator-bench (${build}, pair ${pair}) exited with ${child.status ?? child.signal}`);
  const j = JSON.parse(readFileSync(out, "utf8")) as {
    busiest_thread_to_read_and_parse_cpu: number;
    thread_cpu_seconds_run: number[];
    named_thread_cpu_seconds_run?: Array<{ name: string; cpu_s: number }>;
    peak_rss_run_mb: number;
    peak_rss_mb: number;
    read_and_parse: { cpu_s: number };
  };
  const named: Record<string, number> = {};
  for (const t of j.named_thread_cpu_seconds_run ?? []) named[t.name] = Math.max(named[t.name] ?? 0, t.cpu_s);
  return {
    build,
    pair,
    busiest_thread_cpu_s: j.thread_cpu_seconds_run[0]!,
    busiest_to_read_and_parse: j.busiest_thread_to_read_and_parse_cpu,
    next_thread_cpu_s: j.thread_cpu_seconds_run[1] ?? 0,
    peak_rss_run_mb: j.peak_rss_run_mb,
    peak_rss_mb: j.peak_rss_mb,
    read_and_parse_cpu_s: j.read_and_parse.cpu_s,
    named_threads: named,
  };
}

function summary(runs: readonly RunFigures[]) {
  const of = (k: keyof Omit<RunFigures, "build" | "pair" | "named_threads">) => spread(runs.map((r) => r[k]));
  const names = [...new Set(runs.flatMap((r) => Object.keys(r.named_threads)))];
  return {
    runs: runs.length,
    busiest_thread_cpu_s: of("busiest_thread_cpu_s"),
    busiest_to_read_and_parse: of("busiest_to_read_and_parse"),
    next_thread_cpu_s: of("next_thread_cpu_s"),
    peak_rss_run_mb: of("peak_rss_run_mb"),
    peak_rss_mb: of("peak_rss_mb"),
    read_and_parse_cpu_s: of("read_and_parse_cpu_s"),
    named_thread_cpu_s: Object.fromEntries(names.map((n) => [n, spread(runs.map((r) => r.named_threads[n] ?? 0))])),
  };
}

async function main(): Promise<void> {
  const suite = resolve(arg("suite"));
  const base = resolve(arg("base"));
  const pairs = Number(arg("pairs", "4"));
  const tracks = optionalArg("tracks");
  const outFile = arg("out", "bench/out/coordinator-ab.json");
  const scratch = mkdtempSync(join(tmpdir(), "udm-coord-ab-"));
  const runs: RunFigures[] = [];
  try {
    for (let pair = 1; pair <= pairs; pair++) {
      // Each pair in the other order from the one before: neither build always runs first.
      const order: Array<"base" | "head"> = pair % 2 === 1 ? ["base", "head"] : ["head", "base"];
      for (const build of order) {
        const r = runOnce(build, pair, suite, base, tracks, scratch);
        runs.push(r);
        process.stderr.write(`pair ${pair} ${build}: busiest ${r.busiest_thread_cpu_s.toFixed(2)} CPU-s, ${r.busiest_to_read_and_parse.toFixed(3)}x read-and-parse, RSS ${r.peak_rss_run_mb.toFixed(0)} MB (peak ${r.peak_rss_mb.toFixed(0)}); ${Object.entries(r.named_threads).map(([n, s]) => `${n} ${s}`).join(", ")}\n`);
      }
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  const figures = {
    suite,
    base_cli: base,
    pairs,
    base: summary(runs.filter((r) => r.build === "base")),
    head: summary(runs.filter((r) => r.build === "head")),
    runs,
    measured_at: new Date().toISOString(),
    note: "coordinator-bench.js of this build, alternately with --cli of the base build and without; each run reads and parses the suite first (its own floor); compare spreads and medians, not single runs",
  };
  mkdirSync(dirname(outFile), { recursive: true });
  writeFileSync(outFile, JSON.stringify(figures, null, 2) + "\n");
  process.stdout.write(JSON.stringify({ base: figures.base, head: figures.head }, null, 2) + "\n");
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();

// Benchmark of `udm-orch score` on a FULL-scale synthetic suite with a result line for every record.
//
//   node dist/bench/score-bench.js [SUITE_DIR] [--out bench/out/score.json] [--keep]
//
// Without SUITE_DIR a full suite is generated in a temp dir (and removed unless --keep). Scoring and
// the reader probes run in fresh child processes, so their peak RSS is their own, not the generator's.
import { spawnSync } from "node:child_process";
import { createWriteStream, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { once } from "node:events";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { readJsonLines } from "../common/jsonl-reader.js";
import { openSuite, readTrackRecords, type SuiteRecord } from "../common/suite/index.js";
import { Xoshiro128, scoreResults } from "../scorer/index.js";
import { makeSuite } from "../sim/index.js";

const SELF = fileURLToPath(import.meta.url);

interface ChildFigures {
  wall_s: number;
  cpu_s?: number;
  max_rss_mib: number;
  [k: string]: unknown;
}

/** Runs this script in a child in the given mode and returns the JSON it prints. */
function child(mode: string, ...args: string[]): ChildFigures {
  const r = spawnSync(process.execPath, [SELF, `--child=${mode}`, ...args], { encoding: "utf8", maxBuffer: 1 << 26, env: { ...process.env, UDM_LOG_LEVEL: "error" } });
  if (r.status !== 0) throw new Error(`child ${mode} failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").pop()!) as ChildFigures;
}

/** CPU seconds of this process (user + system): the figure that does not depend on how busy the machine is. */
function cpuSeconds(): number {
  const u = process.resourceUsage();
  return (u.userCPUTime + u.systemCPUTime) / 1e6;
}

function rssMiB(): number {
  // maxRSS is in KiB on Linux.
  return process.resourceUsage().maxRSS / 1024;
}

async function childMain(mode: string, args: string[]): Promise<void> {
  const t0 = performance.now();
  if (mode === "score") {
    const [suiteDir, resultsDir] = args as [string, string];
    const m = await scoreResults({ suiteDir, resultsDir });
    const wall = (performance.now() - t0) / 1000;
    const records = Object.values(m.tracks).reduce((s, t) => s + t.records, 0);
    process.stdout.write(JSON.stringify({ wall_s: wall, cpu_s: cpuSeconds(), max_rss_mib: rssMiB(), records, tracks: Object.keys(m.tracks).length, v1_mean: m.summary.v1_mean }) + "\n");
  } else if (mode === "read") {
    let lines = 0;
    const stats = { maxBufferedBytes: 0 };
    for await (const _ of readJsonLines(args[0]!, { stats })) lines++;
    process.stdout.write(JSON.stringify({ wall_s: (performance.now() - t0) / 1000, max_rss_mib: rssMiB(), lines, max_buffered_kib: stats.maxBufferedBytes / 1024 }) + "\n");
  } else if (mode === "baseline") {
    process.stdout.write(JSON.stringify({ wall_s: 0, max_rss_mib: rssMiB() }) + "\n");
  }
}

/** A result for every record: the gold option gets a random boost, so metrics are neither 0 nor 1. */
function resultFor(r: SuiteRecord, rng: Xoshiro128): Record<string, unknown> {
  const probs: Record<string, unknown> = {};
  const u = (): number => rng.nextUint32() / 4294967296;
  for (const [key, q] of Object.entries(r.questions)) {
    const gold = r.expected[key];
    if (q.type === "noul") {
      const p = gold === undefined ? u() : gold ? 0.3 + 0.7 * u() : 0.7 * u();
      probs[key] = { true: p, false: 1 - p };
    } else {
      const keys = Object.keys(q.criteria);
      const w = keys.map((k) => u() + (k === gold ? 1.5 * u() : 0));
      const sum = w.reduce((a, b) => a + b, 0);
      probs[key] = Object.fromEntries(keys.map((k, i) => [k, w[i]! / sum]));
    }
  }
  return { run_id: r._evaluation.run_id, id: r.id, probs, skipped: [] };
}

async function writeResultsFor(suiteDir: string, resultsDir: string): Promise<{ records: number; bytes: number }> {
  const rng = new Xoshiro128(1);
  let records = 0;
  let bytes = 0;
  for (const file of openSuite(suiteDir).files) {
    const path = join(resultsDir, file.family, `${file.track}.jsonl`);
    mkdirSync(dirname(path), { recursive: true });
    const out = createWriteStream(path);
    for await (const r of readTrackRecords(file)) {
      const line = JSON.stringify({ ...resultFor(r, rng), track: file.track, family: file.family }) + "\n";
      bytes += line.length;
      records++;
      if (!out.write(line)) await once(out, "drain");
    }
    out.end();
    await once(out, "finish");
  }
  return { records, bytes };
}

/** A plain results file of about `mib` MiB made of copies of one realistic line. */
async function writeProbeFile(path: string, mib: number): Promise<number> {
  const probs = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`doc:${1000000 + i}`, { true: 0.3, false: 0.7 }]));
  const line = JSON.stringify({ run_id: "trec-dl19:q:c0", probs, skipped: [] }) + "\n";
  const out = createWriteStream(path);
  const n = Math.ceil((mib * 1024 * 1024) / line.length);
  for (let i = 0; i < n; i++) if (!out.write(line)) await once(out, "drain");
  out.end();
  await once(out, "finish");
  return statSync(path).size;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const childFlag = argv.find((a) => a.startsWith("--child="));
  if (childFlag) return childMain(childFlag.slice("--child=".length), argv.filter((a) => a !== childFlag));
  const outIdx = argv.indexOf("--out");
  const outFile = outIdx >= 0 ? argv[outIdx + 1]! : join("bench", "out", "score.json");
  const keep = argv.includes("--keep");
  const positional = argv.filter((a, i) => !a.startsWith("--") && argv[i - 1] !== "--out");
  const work = mkdtempSync(join(tmpdir(), "udm-score-bench-"));
  try {
    let suiteDir = positional[0];
    let generate_s: number | null = null;
    if (!suiteDir) {
      suiteDir = join(work, "suite");
      const t = performance.now();
      const made = await makeSuite({ out: suiteDir, scale: "full", seed: 0 });
      generate_s = (performance.now() - t) / 1000;
      process.stderr.write(`generated full suite: ${made.files} files, ${made.records} records in ${generate_s.toFixed(1)} s\n`);
    }
    const resultsDir = join(work, "results");
    const written = await writeResultsFor(suiteDir, resultsDir);
    process.stderr.write(`wrote ${written.records} result lines (${(written.bytes / 2 ** 20).toFixed(1)} MiB)\n`);

    const loadBefore = loadavg()[0];
    const runs = [child("score", suiteDir, resultsDir), child("score", suiteDir, resultsDir)];
    const best = runs.reduce((a, b) => (a.wall_s <= b.wall_s ? a : b));
    const records = best.records as number;

    const baseline = child("baseline");
    const reader: Array<{ file_mib: number; lines: number; wall_s: number; max_rss_mib: number; max_buffered_kib: number }> = [];
    for (const mib of [8, 64, 256]) {
      const path = join(work, `probe-${mib}.jsonl`);
      const size = await writeProbeFile(path, mib);
      const r = child("read", path);
      reader.push({ file_mib: size / 2 ** 20, lines: r.lines as number, wall_s: r.wall_s, max_rss_mib: r.max_rss_mib, max_buffered_kib: r.max_buffered_kib as number });
      rmSync(path);
    }

    const figures = {
      bench: "score",
      command: `node dist/bench/score-bench.js${positional[0] ? ` ${positional[0]}` : ""}`,
      machine: { cpus: cpus().length, cpu_model: cpus()[0]?.model ?? "unknown", total_mem_gib: totalmem() / 2 ** 30, node: process.version },
      suite: { dir: positional[0] ?? "generated (full, seed 0)", generate_s, records, tracks: best.tracks },
      results: { lines: written.records, mib: written.bytes / 2 ** 20 },
      score: {
        wall_s: best.wall_s,
        wall_s_runs: runs.map((r) => r.wall_s),
        cpu_s_runs: runs.map((r) => r.cpu_s),
        load_average_1m_before: loadBefore,
        peak_rss_mib: Math.max(...runs.map((r) => r.max_rss_mib)),
        records_per_s: records / best.wall_s,
        v1_mean: best.v1_mean,
      },
      targets: { wall_s: 15, peak_rss_mib: 1024 },
      reader: { baseline_rss_mib: baseline.max_rss_mib, files: reader },
    };
    mkdirSync(dirname(outFile), { recursive: true });
    writeFileSync(outFile, JSON.stringify(figures, null, 2) + "\n");
    process.stdout.write(JSON.stringify(figures, null, 2) + "\n");
  } finally {
    if (!keep) rmSync(work, { recursive: true, force: true });
    else process.stderr.write(`kept ${work}\n`);
  }
}

await main();

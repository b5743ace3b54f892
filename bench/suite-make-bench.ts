// Benchmark of the synthetic suite maker and of `suite verify` at full scale (the card's 44 files,
// 58,366 records): wall and CPU seconds, decompressed and gzip sizes, peak RSS.
//
//   node dist/bench/suite-make-bench.js [--out bench/out/suite-make.json] [--seed N] [--levels 6,1]
//
// Figures are measured on whatever machine runs this; on a shared machine wall time includes waiting
// for cores, so CPU seconds are reported beside it. gzip runs on the libuv thread pool, so CPU can
// exceed wall time.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { verifySuite } from "../common/suite/index.js";
import { makeSuite } from "../sim/index.js";
import { arg } from "./bench-args.js";

function sizeOnDisk(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const s = statSync(p);
    total += s.isDirectory() ? sizeOnDisk(p) : s.size;
  }
  return total;
}

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; wall_s: number; cpu_s: number }> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const value = await fn();
  const cpu = process.cpuUsage(cpu0);
  return { value, wall_s: round((performance.now() - t0) / 1000), cpu_s: round((cpu.user + cpu.system) / 1e6) };
}

const round = (x: number) => Math.round(x * 100) / 100;

const out = arg("out", "bench/out/suite-make.json");
const seed = Number(arg("seed", "1"));
const levels = arg("levels", "6,1").split(",").map(Number);
const runs = [];
for (const level of levels) {
  const dir = mkdtempSync(join(tmpdir(), "udm-suite-bench-"));
  try {
    const make = await timed(() => makeSuite({ out: dir, scale: "full", seed, gzipLevel: level }));
    const verify = await timed(() => verifySuite(dir));
    runs.push({
      gzip_level: level,
      files: make.value.files,
      records: make.value.records,
      decompressed_mb: round(make.value.bytes / 1e6),
      gzip_mb: round(sizeOnDisk(join(dir, "test")) / 1e6),
      make_wall_s: make.wall_s,
      make_cpu_s: make.cpu_s,
      verify_wall_s: verify.wall_s,
      verify_cpu_s: verify.cpu_s,
      verify_problems: verify.value.problems.length,
      identity: make.value.identity,
    });
    process.stderr.write(`${JSON.stringify(runs[runs.length - 1])}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const report = {
  bench: "suite-make",
  seed,
  scale: "full",
  machine: { cpus: cpus().length, model: cpus()[0]?.model ?? "unknown", loadavg_1m: round(loadavg()[0] ?? 0), node: process.version },
  peak_rss_mb: round(process.resourceUsage().maxRSS / 1024),
  runs,
};
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, JSON.stringify(report, null, 2) + "\n");
process.stdout.write(`${JSON.stringify(report)}\n`);

// Benchmark of a distributed run: the coordinator, N agents and N zero-latency simulated engines,
// each its own `udm-orch` process, over real gRPC and HTTP on 127.0.0.1; next to the time to merely
// read and parse the same suite, measured in the same run.
//
//   node dist/bench/run-bench.js --suite DIR [--agents 4] [--out bench/out/run.json]
//
// Figures: wall time, records/s, coordinator CPU-seconds per 1,000 records, coordinator peak RSS,
// and the ratio of the run's wall time to the read-and-parse time (target: at most 3x). Every
// process shares this machine's cores, so on a 2-core machine the agents and engines compete with
// the coordinator: the CPU figures are the steadier ones.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ProcessWatch } from "./proc-sample.js";
import { arg } from "./bench-args.js";
import { startCli } from "./cli-process.js";
import { measureReadAndParse, runReadAndParseChild } from "./read-and-parse.js";

const SELF = fileURLToPath(import.meta.url);

async function main(): Promise<void> {
  if (await runReadAndParseChild()) return;

  const suite = resolve(arg("suite"));
  const agents = Number(arg("agents", "4"));
  const outFile = arg("out", "bench/out/run.json");
  const outDir = mkdtempSync(join(tmpdir(), "udm-run-bench-"));

  const readParse = measureReadAndParse(SELF, suite);
  process.stderr.write(`read and parse: ${readParse.records} records in ${readParse.wall_s.toFixed(1)} s\n`);

  const sims = Array.from({ length: agents }, () => startCli(["sim-engine", "--port", "0", "--tokens-per-s", "0"]));
  const urls = await Promise.all(sims.map((s) => s.line(/^(http:\/\/127\.0\.0\.1:\d+)$/m).then((m) => m[1]!)));

  const t0 = performance.now();
  const coord = startCli(["coordinator", "--suite", suite, "--out", outDir, "--listen", "127.0.0.1:0", "--metrics", "off"]);
  const watch = new ProcessWatch(coord.child.pid!);
  const address = (await coord.line(/listening on (127\.0\.0\.1:\d+)/))[1]!;
  const tListening = performance.now();
  const agentProcs = urls.map((url) => startCli(["agent", "--coordinator", address, "--engine", url]));
  const agentWatches = agentProcs.map((a) => new ProcessWatch(a.child.pid!));
  const simWatches = sims.map((s) => new ProcessWatch(s.child.pid!));
  const summary = await coord.line(/complete: (\d+)\/(\d+) records committed/);
  const code = await coord.exited;
  const wall = (performance.now() - t0) / 1000;
  const coordinator = watch.stop();
  const agentCpu = agentWatches.map((w) => w.stop()?.cpuS ?? 0).reduce((a, b) => a + b, 0);
  const simCpu = simWatches.map((w) => w.stop()?.cpuS ?? 0).reduce((a, b) => a + b, 0);
  await Promise.all(agentProcs.map((a) => a.exited));
  for (const s of sims) s.child.kill("SIGTERM");
  await Promise.all(sims.map((s) => s.exited));
  rmSync(outDir, { recursive: true, force: true });
  if (code !== 0) throw new Error(`coordinator exited with ${code}`);

  const records = Number(summary[1]);
  const figures = {
    bench: "run",
    suite,
    records,
    agents,
    engines: "sim-engine --tokens-per-s 0 (zero latency)",
    machine: { cpus: cpus().length, loadavg_at_end: loadavg() },
    read_and_parse: readParse,
    run: {
      wall_s: wall,
      startup_s: (tListening - t0) / 1000,
      records_per_s: records / wall,
      coordinator_cpu_s: coordinator?.cpuS ?? null,
      coordinator_cpu_s_per_1000_records: coordinator ? (coordinator.cpuS / records) * 1000 : null,
      coordinator_peak_rss_mib: coordinator ? coordinator.hwmKb / 1024 : null,
      agents_cpu_s: agentCpu,
      engines_cpu_s: simCpu,
    },
    ratio_run_to_read_parse: wall / readParse.wall_s,
    targets: { ratio_max: 3, coordinator_rss_mib_max: 400 },
  };
  mkdirSync(dirname(outFile), { recursive: true });
  writeFileSync(outFile, JSON.stringify(figures, null, 2) + "\n");
  process.stdout.write(JSON.stringify(figures, null, 2) + "\n");
}

await main();

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
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { openSuite, readTrackRecords } from "../common/suite/suite.js";
import { ProcessWatch } from "./proc-sample.js";
import { arg } from "./bench-args.js";

const SELF = fileURLToPath(import.meta.url);
const MAIN = join(dirname(SELF), "..", "cli", "main.js");

/** Child mode: read and parse (schema-validate) every record of the suite, print figures. */
async function readAndParse(suiteDir: string): Promise<void> {
  const t0 = performance.now();
  let records = 0;
  for (const file of openSuite(suiteDir).files) {
    for await (const _ of readTrackRecords(file, { onHash: () => undefined })) records++;
  }
  const u = process.resourceUsage();
  process.stdout.write(JSON.stringify({ wall_s: (performance.now() - t0) / 1000, cpu_s: (u.userCPUTime + u.systemCPUTime) / 1e6, max_rss_mib: u.maxRSS / 1024, records }) + "\n");
}

function startCli(args: string[]): { child: ChildProcess; line: (re: RegExp) => Promise<RegExpMatchArray>; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [MAIN, ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, UDM_LOG_LEVEL: "warn", UDM_NO_PROGRESS: "1" } });
  let out = "";
  const waiters: Array<() => void> = [];
  const onData = (b: Buffer) => {
    out += b.toString();
    for (const w of waiters) w();
  };
  child.stdout!.on("data", onData);
  child.stderr!.on("data", onData);
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  return {
    child,
    exited,
    line: (re) =>
      new Promise((res, rej) => {
        const check = () => {
          const m = out.match(re);
          if (m) res(m);
        };
        waiters.push(check);
        check();
        void exited.then((code) => rej(new Error(`${args[0]} exited (${code}) before ${re}:\n${out.slice(-2000)}`)));
      }),
  };
}

async function main(): Promise<void> {
  const childMode = process.argv.find((a) => a.startsWith("--child="));
  if (childMode) return readAndParse(process.argv[process.argv.indexOf(childMode) + 1]!);

  const suite = resolve(arg("suite"));
  const agents = Number(arg("agents", "4"));
  const outFile = arg("out", "bench/out/run.json");
  const outDir = mkdtempSync(join(tmpdir(), "udm-run-bench-"));

  const parse = spawnSync(process.execPath, [SELF, "--child=read", suite], { encoding: "utf8", maxBuffer: 1 << 24 });
  if (parse.status !== 0) throw new Error(`read-and-parse child failed: ${parse.stderr}`);
  const readParse = JSON.parse(parse.stdout.trim().split("\n").pop()!) as { wall_s: number; cpu_s: number; max_rss_mib: number; records: number };
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

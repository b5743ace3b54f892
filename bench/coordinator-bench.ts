// Benchmark of the coordinator alone: memory and CPU of `udm-orch coordinator` serving a suite to
// load agents in this process (load-agent.ts) that answer every record at once with what an agent
// sends (a seeded distribution per question, answered_by, usage, latency), built before the run (no
// engine), so the figures are the coordinator's own costs:
// indexing, planning, payload reads, validation, fsynced results, the run card's scoring.
//
//   node dist/bench/coordinator-bench.js --suite DIR [--agents N] [--credit N] [--tracks LIST]
//     [--cpu-prof DIR] [--coordinator-flags "FLAGS"] [--cli OTHER/dist/cli/main.js] [--out FILE]
//
// Before the coordinator it reads and parses the same records in a child process
// (read-and-parse.ts), so the busiest thread's CPU is compared with that floor within one run.
//
// --cli: the coordinator of another build (e.g. main before a change), served by the same load agents.
//
// --coordinator-flags: more flags for `udm-orch coordinator`, space-separated (e.g.
// "--scorer-max-heap-mb 128").
// UDM_BENCH_NODE_FLAGS (environment): node flags for the coordinator, e.g. "--trace-gc".
// --cpu-prof runs the coordinator under `node --cpu-prof` (a .cpuprofile per thread; the
// coordinator's own work is in its worker thread's).
//
// The coordinator runs as a child process; its peak RSS (VmHWM) and CPU time come from /proc, per
// thread too (the busiest is the coordinator's own thread, which bounds its records/s on a machine
// with a core for each of its threads). The agents share this machine's cores with it, so records/s
// is a floor, not a ceiling.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { sampleProcess, sampleThreads, type ProcSample } from "./proc-sample.js";
import { prebuildAnswers, runLoadAgent, type LoadAgentStats } from "./load-agent.js";
import { arg, optionalArg } from "./bench-args.js";
import { measureReadAndParse, runReadAndParseChild } from "./read-and-parse.js";
import { THREAD_LOG_ENV } from "../common/threads/index.js";

const SELF = fileURLToPath(import.meta.url);

if (!(await runReadAndParseChild())) await bench();

async function bench(): Promise<void> {
  const suite = resolve(arg("suite"));
  const agents = Number(arg("agents", "4"));
  const credit = Number(arg("credit", "4"));
  const outFile = arg("out", "bench/out/coordinator.json");
  const tracks = optionalArg("tracks");
  const cpuProf = optionalArg("cpu-prof");
  const main = resolve(arg("cli", join(dirname(SELF), "..", "cli", "main.js")));
  const outDir = mkdtempSync(join(tmpdir(), "udm-coord-bench-"));
  const threadLog = join(mkdtempSync(join(tmpdir(), "udm-coord-bench-threads-")), "threads.log");

  const loadAtStart = loadavg();
  // The floor the coordinator thread's CPU is compared with, in the same run (a child of its own).
  const readParse = measureReadAndParse(SELF, suite, tracks);
  process.stderr.write(`read and parse: ${readParse.records} records in ${readParse.wall_s.toFixed(2)} s (${readParse.cpu_s.toFixed(2)} CPU-s)\n`);
  const tPrebuild = Date.now();
  const answers = await prebuildAnswers(suite, tracks?.split(","));
  const prebuildSeconds = (Date.now() - tPrebuild) / 1000;

  const t0 = Date.now();
  const child = spawn(process.execPath, [...(process.env.UDM_BENCH_NODE_FLAGS?.split(" ").filter(Boolean) ?? []), ...(cpuProf ? ["--cpu-prof", "--cpu-prof-dir", resolve(cpuProf)] : []), main, "coordinator", "--suite", suite, "--out", outDir, "--listen", "127.0.0.1:0", "--metrics", "off", ...(optionalArg("coordinator-flags")?.split(" ").filter(Boolean) ?? []), ...(tracks ? ["--tracks", tracks] : [])], {
    stdio: ["ignore", "pipe", "inherit"],
    // Each of the coordinator's worker threads writes its thread id and name here (common/threads announceThread).
    env: { ...process.env, UDM_LOG_LEVEL: process.env.UDM_LOG_LEVEL ?? "warn", [THREAD_LOG_ENV]: threadLog },
  });
  const samples: Array<ProcSample & { t: number }> = [];
  const sampler = setInterval(() => {
    const s = sampleProcess(child.pid!);
    if (s) samples.push({ ...s, t: (Date.now() - t0) / 1000 });
  }, 200);

  let stdout = "";
  const address = await new Promise<string>((res, rej) => {
    child.stdout!.on("data", (b: Buffer) => {
      stdout += b.toString();
      const m = /listening on (\S+)/.exec(stdout);
      if (m) res(m[1]!);
    });
    child.on("exit", (code) => rej(new Error(`coordinator exited with ${code} before listening`)));
  });
  const tListen = Date.now();
  const atListen = sampleProcess(child.pid!);
  const threadsAtListen = sampleThreads(child.pid!);
  const stats: LoadAgentStats = { units: 0, records: 0, maxUnitPayloadBytes: 0, unitBytes: 0, resultBytes: 0 };
  const exited = new Promise<number | null>((res) => child.on("close", (code) => res(code)));
  // Each thread's CPU as last seen: a thread that ends before the run does (the results writer
  // closes with the store) keeps its last sample.
  const threadsAtEnd = new Map(threadsAtListen);
  const threadSampler = setInterval(() => {
    for (const [tid, cpu] of sampleThreads(child.pid!)) threadsAtEnd.set(tid, cpu);
  }, 200);
  const benchCpu0 = process.cpuUsage();
  await Promise.all(Array.from({ length: agents }, (_, i) => runLoadAgent(address, `bench-${i}`, credit, answers, stats)));
  const benchCpu = process.cpuUsage(benchCpu0);
  clearInterval(threadSampler);
  const last = samples.at(-1);
  const code = await exited;
  clearInterval(sampler);
  const tEnd = Date.now();

  // Answers to backup copies are answered twice and committed once: the rate counts commits.
  const committed = Number(/complete: (\d+)\/\d+ records committed/.exec(stdout)?.[1] ?? Number.NaN);
  const resultsBytes = readdirSync(outDir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".jsonl"))
    .reduce((sum, f) => sum + statSync(join(outDir, f)).size, 0);
  const threadSeconds = threadCpu(threadsAtListen, threadsAtEnd);
  const named = namedThreadCpu(threadsAtListen, threadsAtEnd, child.pid!, threadLog);
  const peakKb = Math.max(...samples.map((s) => s.hwmKb));
  const figures = {
    bench: "coordinator",
    suite,
    records_answered: stats.records,
    units: stats.units,
    max_unit_payload_bytes: stats.maxUnitPayloadBytes,
    // Per committed record: WorkUnit bytes to the agents, ResultBatch bytes back (compact form), and
    // results-file bytes on disk.
    unit_bytes_per_record: stats.unitBytes / committed,
    result_bytes_per_record: stats.resultBytes / committed,
    results_file_bytes_per_record: resultsBytes / committed,
    agents,
    credit_per_agent: credit,
    coordinator_exit_code: code,
    startup_seconds: (tListen - t0) / 1000,
    run_seconds: (tEnd - tListen) / 1000,
    records_committed: committed,
    records_per_second: committed / ((tEnd - tListen) / 1000),
    peak_rss_mb: peakKb / 1024,
    rss_at_listen_mb: (atListen?.rssKb ?? 0) / 1024,
    // Where the peak is: the startup's (VmHWM at listen) and the run's own (its largest RSS sample),
    // and the RSS every 5 s (MB) to see which phase holds it.
    peak_rss_startup_mb: (atListen?.hwmKb ?? 0) / 1024,
    peak_rss_run_mb: Math.max(0, ...samples.filter((s) => s.t >= (tListen - t0) / 1000).map((s) => s.rssKb)) / 1024,
    rss_mb_every_5s: samples.filter((_, i) => i % 25 === 0).map((s) => Math.round(s.rssKb / 1024)),
    cpu_seconds_startup: atListen?.cpuS ?? null,
    cpu_seconds_total_last_sample: last?.cpuS ?? null,
    cpu_ms_per_record_run: last && atListen ? ((last.cpuS - atListen.cpuS) * 1000) / stats.records : null,
    // CPU seconds of each of the coordinator's threads from listen to the end (busiest first; the
    // first is its coordinator thread), and the records/s that thread alone would allow.
    thread_cpu_seconds_run: threadSeconds,
    // The same for the threads that name themselves (the host's is "main"; several suite readers share a name).
    named_thread_cpu_seconds_run: named,
    records_per_second_busiest_thread_bound: committed / (threadSeconds[0] ?? Number.NaN),
    busiest_thread_cpu_ms_per_record: ((threadSeconds[0] ?? Number.NaN) * 1000) / committed,
    // Reading and parsing the same records once (bench/read-and-parse.ts), measured in this run,
    // and the busiest thread's run-phase CPU over its CPU (target: at most 0.3).
    read_and_parse: readParse,
    busiest_thread_to_read_and_parse_cpu: (threadSeconds[0] ?? Number.NaN) / readParse.cpu_s,
    load_agents_cpu_seconds: (benchCpu.user + benchCpu.system) / 1e6,
    prebuild_seconds: prebuildSeconds,
    coordinator_stdout: stdout.trim().split("\n"),
    machine: { cpus: cpus().length, model: cpus()[0]?.model ?? "", node: process.version, loadavg_at_start: loadAtStart, loadavg_at_end: loadavg() },
    measured_at: new Date().toISOString(),
    note: "load agents run in the bench process on the same cores and answer with prebuilt answers (a seeded distribution per question, answered_by, usage, latency), no engine; results are fsynced; thread CPU comes from /proc/<pid>/task at 200 ms samples",
  };
  rmSync(outDir, { recursive: true, force: true });
  rmSync(dirname(threadLog), { recursive: true, force: true });
  mkdirSync(dirname(outFile), { recursive: true });
  writeFileSync(outFile, JSON.stringify(figures, null, 2) + "\n");
  process.stdout.write(JSON.stringify(figures, null, 2) + "\n");
}

/** Run-phase CPU seconds of each named thread (busiest first): the host's thread, and those in the thread log. */
function namedThreadCpu(before: ReadonlyMap<number, number>, after: ReadonlyMap<number, number>, pid: number, threadLog: string): Array<{ name: string; tid: number; cpu_s: number }> {
  const names = new Map<number, string>([[pid, "main"]]);
  if (existsSync(threadLog)) {
    for (const line of readFileSync(threadLog, "utf8").split("\n")) {
      const [tid, name] = line.split(" ");
      if (tid && name) names.set(Number(tid), name);
    }
  }
  return [...names]
    .map(([tid, name]) => ({ name, tid, cpu_s: Math.round(((after.get(tid) ?? 0) - (before.get(tid) ?? 0)) * 100) / 100 }))
    .sort((a, b) => b.cpu_s - a.cpu_s);
}

function threadCpu(before: ReadonlyMap<number, number>, after: ReadonlyMap<number, number>): number[] {
  return [...after.entries()]
    .map(([tid, cpu]) => cpu - (before.get(tid) ?? 0))
    .filter((s) => s >= 0.05)
    .sort((a, b) => b - a)
    .map((s) => Math.round(s * 100) / 100);
}

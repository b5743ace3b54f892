// Benchmark of observability during a distributed run (issue 10): the coordinator, N agents and N
// zero-latency simulated engines as `udm-orch` processes, run once with --metrics on (while a
// poller reads /metrics and /api/status, as Prometheus and the live page do) and once with
// --metrics off.
//
//   node dist/bench/observability-bench.js --suite DIR [--agents 4] [--poll-ms 1000] [--repeat 1]
//        [--window-s 0] [--warmup-s 20] [--out bench/out/observability.json]
//
// Figures: /metrics and /api/status response times during the run (p50, p95, max; target p95 <=
// 50 ms) and the coordinator's CPU-seconds per 1,000 records with metrics on vs off (target:
// overhead <= 5%). The CPU of serving the polls is the coordinator's and is counted.
// --window-s N: instead of the whole run, measure a window of N seconds of the run phase (from
// --warmup-s after the first result line is on disk): CPU and records committed (result lines on
// disk) are read at both ends, polls are timed inside it, then the coordinator is drained. On a
// small shared machine a full-scale run on both sides takes too long; the window keeps the run
// full-scale (every track, the whole suite's status) and leaves suite reading out of the CPU.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { ProcessWatch, sampleProcess } from "./proc-sample.js";
import { arg } from "./bench-args.js";
import { startCli } from "./cli-process.js";



function percentiles(ms: number[]): { n: number; p50_ms: number | null; p95_ms: number | null; max_ms: number | null } {
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number) => (s.length ? s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]! : null);
  return { n: s.length, p50_ms: at(0.5), p95_ms: at(0.95), max_ms: s.length ? s[s.length - 1]! : null };
}

interface RunFigures {
  metrics: "on" | "off";
  records: number;
  wall_s: number;
  coordinator_cpu_s: number | null;
  coordinator_cpu_s_per_1000_records: number | null;
  coordinator_peak_rss_mib: number | null;
  polls?: { metrics: ReturnType<typeof percentiles>; status: ReturnType<typeof percentiles>; metrics_bytes: number; failures: number };
}

/** Result lines on disk under a run's out dir (every *.jsonl below it). */
function resultLineCount(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile() || !e.name.endsWith(".jsonl")) continue;
    try {
      const b = readFileSync(join(e.parentPath, e.name));
      for (let i = 0; i < b.length; i++) if (b[i] === 10) n++;
    } catch {
      // renamed away while listed
    }
  }
  return n;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Window {
  seconds: number;
  warmupS: number;
}

async function oneRun(suite: string, agents: number, metricsOn: boolean, pollMs: number, window?: Window): Promise<RunFigures> {
  const outDir = mkdtempSync(join(tmpdir(), "udm-obs-bench-"));
  const sims = Array.from({ length: agents }, () => startCli(["sim-engine", "--port", "0", "--tokens-per-s", "0"]));
  const urls = await Promise.all(sims.map((s) => s.line(/^(http:\/\/127\.0\.0\.1:\d+)$/m).then((m) => m[1]!)));
  const t0 = performance.now();
  const coord = startCli(["coordinator", "--suite", suite, "--out", outDir, "--listen", "127.0.0.1:0", "--metrics", metricsOn ? "127.0.0.1:0" : "off"]);
  const watch = new ProcessWatch(coord.child.pid!);
  const page = metricsOn ? (await coord.line(/live page: (http:\/\/127\.0\.0\.1:\d+)\//))[1]! : undefined;
  const address = (await coord.line(/listening on (127\.0\.0\.1:\d+)/))[1]!;
  const agentProcs = urls.map((url) => startCli(["agent", "--coordinator", address, "--engine", url]));

  const metricsMs: number[] = [];
  const statusMs: number[] = [];
  let bytes = 0;
  let failures = 0;
  let polling = page !== undefined;
  // Without a window every poll of the run counts; with one, those inside it.
  let timing = window === undefined;
  const poll = async (path: string, into: number[]) => {
    while (polling) {
      const t = performance.now();
      try {
        const res = await fetch(page + path);
        const body = await res.text();
        if (res.ok) {
          if (timing) into.push(performance.now() - t);
          if (path === "/metrics") bytes = body.length;
        } else failures++;
      } catch {
        failures++;
      }
      await new Promise((r) => setTimeout(r, pollMs));
    }
  };
  const pollers = page ? [poll("/metrics", metricsMs), poll("/api/status", statusMs)] : [];
  if (window) return windowed(window);
  const summary = await coord.line(/complete: (\d+)\/(\d+) records committed/);
  polling = false;
  const code = await coord.exited;
  const wall = (performance.now() - t0) / 1000;
  const c = watch.stop();
  await Promise.allSettled(pollers);
  await Promise.all(agentProcs.map((a) => a.exited));
  for (const s of sims) s.child.kill("SIGTERM");
  await Promise.all(sims.map((s) => s.exited));
  rmSync(outDir, { recursive: true, force: true });
  if (code !== 0) throw new Error(`coordinator exited with ${code}`);
  const records = Number(summary[1]);
  return whole();

  async function windowed(w: Window): Promise<RunFigures> {
    while (resultLineCount(outDir) === 0) await sleep(500);
    await sleep(w.warmupS * 1000);
    const pid = coord.child.pid!;
    const cpu0 = sampleProcess(pid)!.cpuS;
    const lines0 = resultLineCount(outDir);
    const t = performance.now();
    timing = true;
    const ended = await Promise.race([sleep(w.seconds * 1000).then(() => false), coord.exited.then(() => true)]);
    timing = false;
    if (ended) throw new Error(`the run ended ${((performance.now() - t) / 1000).toFixed(0)} s into the ${w.seconds} s window: pass a shorter --window-s (or none: the whole run)`);
    const cpu1 = sampleProcess(pid)!.cpuS;
    const lines1 = resultLineCount(outDir);
    const seconds = (performance.now() - t) / 1000;
    polling = false;
    await Promise.allSettled(pollers);
    coord.child.kill("SIGTERM"); // drains the agents
    await coord.exited;
    const peak = watch.stop();
    await Promise.all(agentProcs.map((a) => a.exited));
    for (const s of sims) s.child.kill("SIGTERM");
    await Promise.all(sims.map((s) => s.exited));
    rmSync(outDir, { recursive: true, force: true });
    const records = lines1 - lines0;
    if (records <= 0) throw new Error(`no record committed in the ${w.seconds} s window`);
    return {
      metrics: metricsOn ? "on" : "off",
      records,
      wall_s: seconds,
      coordinator_cpu_s: cpu1 - cpu0,
      coordinator_cpu_s_per_1000_records: ((cpu1 - cpu0) / records) * 1000,
      coordinator_peak_rss_mib: peak ? peak.hwmKb / 1024 : null,
      ...(metricsOn ? { polls: { metrics: percentiles(metricsMs), status: percentiles(statusMs), metrics_bytes: bytes, failures } } : {}),
    };
  }

  function whole(): RunFigures {
    return {
    metrics: metricsOn ? "on" : "off",
    records,
    wall_s: wall,
    coordinator_cpu_s: c?.cpuS ?? null,
    coordinator_cpu_s_per_1000_records: c ? (c.cpuS / records) * 1000 : null,
    coordinator_peak_rss_mib: c ? c.hwmKb / 1024 : null,
    ...(metricsOn ? { polls: { metrics: percentiles(metricsMs), status: percentiles(statusMs), metrics_bytes: bytes, failures } } : {}),
    };
  }
}

async function main(): Promise<void> {
  const suite = resolve(arg("suite"));
  const agents = Number(arg("agents", "4"));
  const pollMs = Number(arg("poll-ms", "1000"));
  const repeat = Number(arg("repeat", "1"));
  const outFile = arg("out", "bench/out/observability.json");
  const windowS = Number(arg("window-s", "0"));
  const window = windowS > 0 ? { seconds: windowS, warmupS: Number(arg("warmup-s", "20")) } : undefined;
  const loadAtStart = loadavg();
  const runs: RunFigures[] = [];
  // Alternating order, so a machine getting busier does not favour one side.
  for (let i = 0; i < repeat; i++) {
    for (const on of i % 2 === 0 ? [true, false] : [false, true]) {
      const r = await oneRun(suite, agents, on, pollMs, window);
      process.stderr.write(`metrics ${r.metrics}: ${r.records} records in ${r.wall_s.toFixed(1)} s, coordinator ${r.coordinator_cpu_s?.toFixed(1)} CPU-s\n`);
      runs.push(r);
    }
  }
  const cpuPer1000 = (side: "on" | "off") => {
    const xs = runs.filter((r) => r.metrics === side).map((r) => r.coordinator_cpu_s_per_1000_records!);
    return xs.reduce((a, b) => a + b, 0) / xs.length;
  };
  const on = cpuPer1000("on");
  const off = cpuPer1000("off");
  const allMetrics = runs.flatMap((r) => (r.polls ? [r.polls.metrics] : []));
  const allStatus = runs.flatMap((r) => (r.polls ? [r.polls.status] : []));
  const figures = {
    bench: "observability",
    suite,
    agents,
    poll_ms: pollMs,
    engines: "sim-engine --tokens-per-s 0 (zero latency)",
    window: window ? { seconds: window.seconds, warmup_s: window.warmupS } : "whole run",
    machine: { cpus: cpus().length, loadavg_at_start: loadAtStart, loadavg_at_end: loadavg() },
    runs,
    summary: {
      metrics_p95_ms: Math.max(...allMetrics.map((p) => p.p95_ms ?? 0)),
      status_p95_ms: Math.max(...allStatus.map((p) => p.p95_ms ?? 0)),
      coordinator_cpu_s_per_1000_records_on: on,
      coordinator_cpu_s_per_1000_records_off: off,
      cpu_overhead_ratio: off > 0 ? on / off - 1 : null,
    },
    targets: { p95_ms_max: 50, cpu_overhead_ratio_max: 0.05 },
  };
  mkdirSync(dirname(outFile), { recursive: true });
  writeFileSync(outFile, JSON.stringify(figures, null, 2) + "\n");
  process.stdout.write(JSON.stringify(figures, null, 2) + "\n");
}

await main();

// Benchmark of the streaming scorer over NATS JetStream on a full-scale synthetic run.
//
//   node dist/bench/scorer-bench.js --suite DIR [--agents 2] [--out bench/out/scorer.json]
//
// 1. Latency: a live run as processes (nats-server -js, `coordinator --nats`, N agents with
//    zero-latency simulated engines, `udm-orch scorer`); this process subscribes to the run's
//    events and metrics like a dashboard. Per track: from the coordinator's track_complete event
//    (stamped when the track's last result is committed, i.e. fsynced) to the arrival here of the
//    track's final metrics message. Every process runs on this machine, so one clock.
// 2. Throughput: a second scorer (in this process, new durable) reads the finished run's whole
//    results stream: results applied (journal fsync + ack included) per second, gold loading excluded.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type BusEvent, type MetricsMessage, NatsBus } from "../common/bus/index.js";
import { createLogger } from "../common/log.js";
import { StreamingScorer } from "../scorer/index.js";
import { arg, freePort } from "./bench-args.js";

const MAIN = join(dirname(fileURLToPath(import.meta.url)), "..", "cli", "main.js");

const children: ChildProcess[] = [];
process.on("exit", () => {
  for (const c of children) c.kill("SIGKILL");
});

/** Spawns a process; resolves with the first match of `re` in its output. */
function start(cmd: string, args: string[], re: RegExp, logTo?: string[]): Promise<{ proc: ChildProcess; match: RegExpMatchArray }> {
  const proc = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, UDM_NO_PROGRESS: "1" } });
  children.push(proc);
  let out = "";
  return new Promise((resolve, reject) => {
    const on = (b: Buffer) => {
      const s = b.toString("utf8");
      out += s;
      logTo?.push(s);
      const m = out.match(re);
      if (m) resolve({ proc, match: m });
    };
    proc.stdout!.on("data", on);
    proc.stderr!.on("data", on);
    proc.once("exit", (code) => reject(new Error(`${cmd} ${args.slice(0, 2).join(" ")} exited (${code}) before ${re}:\n${out.slice(-2000)}`)));
  });
}

const exited = (p: ChildProcess) => new Promise<number | null>((r) => (p.exitCode !== null ? r(p.exitCode) : p.once("exit", (c) => r(c))));

function percentile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i]!;
}

async function main(): Promise<void> {
  const suiteDir = arg("suite");
  const agents = Number(arg("agents", "2"));
  const outFile = arg("out", "bench/out/scorer.json");
  const work = mkdtempSync(join(tmpdir(), "udm-scorer-bench-"));
  const quiet = createLogger("bench", "error");
  try {
    const port = await freePort();
    const nats = await start("nats-server", ["-js", "-a", "127.0.0.1", "-p", String(port), "-sd", join(work, "js")], /Server is ready/);
    const url = `nats://127.0.0.1:${port}`;
    const natsVersion = /Version:\s+(\S+)/.exec(nats.match.input ?? "")?.[1] ?? "unknown";

    const coordLog: string[] = [];
    const coord = await start(process.execPath, [MAIN, "coordinator", "--suite", suiteDir, "--out", join(work, "results"), "--listen", "127.0.0.1:0", "--metrics", "off", "--nats", url], /listening on (127\.0\.0\.1:\d+) run ([0-9a-f-]+): (\d+) records/, coordLog);
    const [address, runId, total] = [coord.match[1]!, coord.match[2]!, Number(coord.match[3])];
    process.stderr.write(`run ${runId}: ${total} records\n`);

    const watcher = await NatsBus.connect({ servers: [url], logger: quiet });
    const completedAt = new Map<string, number>();
    const finalAt = new Map<string, number>();
    let runCompleteAt = 0;
    let running = 0;
    const events = await watcher.subscribeEvents(runId, (e: BusEvent) => {
      if (e.type === "track_complete") completedAt.set(e.track, Date.parse(e.at));
      if (e.type === "run_complete") runCompleteAt = Date.parse(e.at);
    }, { from: "start" });
    const metrics = await watcher.subscribeMetrics(runId, (m: MetricsMessage) => {
      if (m.final) finalAt.set(m.track, Date.now());
      else running++;
    }, { from: "new" });

    const scorerOut = join(work, "scorer");
    const scorer = await start(process.execPath, [MAIN, "scorer", "--suite", suiteDir, "--nats", url, "--run", runId, "--out", scorerOut, "--metrics", "off"], /consuming results/);
    const runStart = Date.now();
    for (let i = 0; i < agents; i++) {
      const engine = await start(process.execPath, [MAIN, "sim-engine", "--port", "0", "--tokens-per-s", "0"], /^(http:\/\/127\.0\.0\.1:\d+)$/m);
      void start(process.execPath, [MAIN, "agent", "--coordinator", address, "--engine", engine.match[1]!], /$^/).catch(() => undefined);
    }
    const coordCode = await exited(coord.proc);
    const scorerCode = await exited(scorer.proc);
    const runWall = (Date.now() - runStart) / 1000;
    if (coordCode !== 0 || scorerCode !== 0) throw new Error(`coordinator exited ${coordCode}, scorer ${scorerCode}\n${coordLog.join("").slice(-2000)}`);
    const deadline = Date.now() + 10_000;
    while (!finalAt.has("summary") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await events.stop();
    await metrics.stop();

    const latencies: Array<{ track: string; ms: number }> = [];
    for (const [track, at] of completedAt) {
      const got = finalAt.get(track);
      if (got !== undefined) latencies.push({ track, ms: got - at });
    }
    const sorted = latencies.map((l) => l.ms).sort((a, b) => a - b);
    const summaryAfterRunMs = finalAt.has("summary") && runCompleteAt ? finalAt.get("summary")! - runCompleteAt : null;
    process.stderr.write(`latency p50 ${percentile(sorted, 0.5)} ms, p95 ${percentile(sorted, 0.95)} ms over ${sorted.length} tracks\n`);

    // Throughput: a fresh scorer over the finished run's stream.
    const bus = await NatsBus.connect({ servers: [url], logger: quiet });
    const again = new StreamingScorer({ bus, runId, suiteDir, outDir: join(work, "scorer-again"), log: quiet });
    const loadStart = performance.now();
    await again.start();
    const consumeStart = performance.now();
    await again.done;
    const consumeS = (performance.now() - consumeStart) / 1000;
    const applied = again.result().applied;
    await again.stop();
    await bus.close();
    await watcher.close();
    nats.proc.kill("SIGTERM");
    await exited(nats.proc);

    const report = {
      bench: "scorer",
      measured_at: new Date().toISOString(),
      suite: suiteDir,
      records: total,
      agents,
      engines: "sim-engine --tokens-per-s 0 (zero latency)",
      nats_server: natsVersion,
      machine: { cpus: cpus().length, cpu: cpus()[0]?.model ?? "unknown", node: process.version, loadavg_at_end: loadavg().map((x) => Number(x.toFixed(2))) },
      note: "every process (nats-server, coordinator, agents, engines, scorer, this watcher) on this machine; latency = arrival of the final metrics message here - the coordinator's track_complete stamp (commit of the track's last result)",
      live_run: {
        wall_s: Number(runWall.toFixed(1)),
        tracks: sorted.length,
        latency_ms: {
          p50: percentile(sorted, 0.5),
          p95: percentile(sorted, 0.95),
          max: sorted.at(-1) ?? null,
          min: sorted[0] ?? null,
        },
        per_track_ms: Object.fromEntries(latencies.sort((a, b) => completedAt.get(a.track)! - completedAt.get(b.track)!).map((l) => [l.track, l.ms])),
        running_metrics_messages: running,
        summary_after_run_complete_ms: summaryAfterRunMs,
      },
      throughput: {
        results: applied,
        gold_load_s: Number(((consumeStart - loadStart) / 1000).toFixed(2)),
        consume_s: Number(consumeS.toFixed(2)),
        results_per_s: Math.round(applied / consumeS),
      },
      targets: { latency_p95_ms_max: 250 },
    };
    mkdirSync(dirname(outFile), { recursive: true });
    writeFileSync(outFile, JSON.stringify(report, null, 2) + "\n");
    process.stdout.write(JSON.stringify({ latency_ms: report.live_run.latency_ms, throughput: report.throughput, run_wall_s: report.live_run.wall_s }) + "\n");
  } finally {
    for (const c of children) c.kill("SIGKILL");
    rmSync(work, { recursive: true, force: true });
  }
}

await main();

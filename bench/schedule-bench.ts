// Benchmark of scheduling on uneven and failing GPUs: N simulated engines of uneven speed
// (`sim-engine --tokens-per-s`), one agent each, one coordinator, all as processes on 127.0.0.1.
// Each scenario's makespan (agents started -> last record committed) is set next to the ideal one: the
// engines' total work (sum over engines of prompt - cached + generated tokens, read from their
// /metrics) over their total capacity (sum of tokens/s). Scenarios:
//   uneven  every engine up to the end;
//   kill    the fastest engine SIGKILLed once half the records are committed (the ideal then
//           counts its capacity only until the kill);
//   static  the same work split into N equal static shards by records (N coordinators, one
//           engine each), as `--shard i/n` style splitting would: the baseline.
//
//   node dist/bench/schedule-bench.js --suite DIR [--tokens-per-s 6000,6000,12000,24000]
//     [--records 5000] [--scenarios uneven,kill,static] [--out bench/out/schedule.json]
//
// Targets (issue 9): efficiency >= 0.95 uneven, >= 0.90 with the kill.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join, resolve, basename } from "node:path";
import * as grpc from "@grpc/grpc-js";
import { fetchStatus } from "../cli/status.js";
import { arg } from "./bench-args.js";
import { startCli, type CliProcess } from "./cli-process.js";

/** The output tail kept per process: a schedule run's agents and engines print for minutes. */
const KEEP_CHARS = 20_000;

/**
 * Engine work so far in tokens (prompt - cached + generated, from vLLM's counters on /metrics) and
 * whether it has requests running or waiting now.
 */
async function engineWork(url: string): Promise<{ work: number; busy: boolean } | undefined> {
  try {
    const text = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
    const sum = (name: string) =>
      text
        .split("\n")
        .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
        .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
    return {
      work: sum("vllm:prompt_tokens_total") - sum("vllm:prefix_cache_hits_total") + sum("vllm:generation_tokens_total"),
      busy: sum("vllm:num_requests_running") + sum("vllm:num_requests_waiting") > 0,
    };
  } catch {
    return undefined;
  }
}

/** Tracks in manifest order until at least `want` records. */
function pickTracks(suite: string, want: number): Array<{ track: string; rows: number }> {
  const manifest = JSON.parse(readFileSync(join(suite, "manifest.json"), "utf8")) as { files: Record<string, { rows: number }> };
  const picked: Array<{ track: string; rows: number }> = [];
  let n = 0;
  for (const [rel, f] of Object.entries(manifest.files).sort((a, b) => a[1].rows - b[1].rows)) {
    if (n >= want) break;
    picked.push({ track: basename(rel).replace(/\.jsonl\.gz$/, ""), rows: f.rows });
    n += f.rows;
  }
  return picked;
}

/** Tracks split into n shards of about equal records (largest first onto the smallest shard). */
function equalShards(tracks: Array<{ track: string; rows: number }>, n: number): string[][] {
  const shards = Array.from({ length: n }, () => ({ rows: 0, tracks: [] as string[] }));
  for (const t of [...tracks].sort((a, b) => b.rows - a.rows)) {
    const s = shards.reduce((a, b) => (b.rows < a.rows ? b : a));
    s.rows += t.rows;
    s.tracks.push(t.track);
  }
  return shards.map((s) => s.tracks);
}

interface ScenarioResult {
  scenario: string;
  records: number;
  makespan_s: number;
  ideal_s: number;
  efficiency: number;
  work_tokens: number[];
  killed_at_s?: number;
  shard_makespans_s?: number[];
  /** Per engine: share of /metrics scrapes (every ~0.5 s) that found it with requests running or waiting, until the makespan. */
  busy_share: number[];
  /** Per engine: seconds from start to the last scrape that found it busy (engines finishing together have these close). */
  last_busy_s: number[];
}

async function runOne(suite: string, speeds: number[], tracks: string[][], killFastestAtHalf: boolean): Promise<ScenarioResult> {
  const outs: string[] = [];
  const procs: CliProcess[] = [];
  try {
    const engines = speeds.map((tps) => startCli(["sim-engine", "--port", "0", "--tokens-per-s", String(tps)], { keepChars: KEEP_CHARS }));
    procs.push(...engines);
    const urls = await Promise.all(engines.map((e) => e.line(/^(http:\/\/127\.0\.0\.1:\d+)$/m).then((m) => m[1]!)));
    // One coordinator per shard; a shard's agents are the engines given to it.
    const shardOf = (i: number) => (tracks.length === 1 ? 0 : i);
    const coords = tracks.map((ts) => {
      const out = mkdtempSync(join(tmpdir(), "udm-schedule-bench-"));
      outs.push(out);
      return startCli(["coordinator", "--suite", suite, "--out", out, "--listen", "127.0.0.1:0", "--metrics", "off", "--tracks", ts.join(",")], { keepChars: KEEP_CHARS });
    });
    procs.push(...coords);
    const addresses = await Promise.all(coords.map((c) => c.line(/listening on (127\.0\.0\.1:\d+) run \S+: (\d+) records/)));
    const total = addresses.reduce((n, m) => n + Number(m[2]), 0);
    const t0 = performance.now();
    const agents = urls.map((url, i) => startCli(["agent", "--coordinator", addresses[shardOf(i)]![1]!, "--engine", url, "--agent-id", `e${i}-${speeds[i]}`], { keepChars: KEEP_CHARS }));
    procs.push(...agents);
    const work: Array<number | undefined> = urls.map(() => undefined);
    const busySamples = urls.map(() => 0);
    const samples = urls.map(() => 0);
    const lastBusy = urls.map(() => 0);
    let finished = false;
    const dead = new Set<number>();
    const scrape = async () => {
      await Promise.all(urls.map(async (u, i) => {
        if (dead.has(i)) return;
        const w = await engineWork(u);
        if (w === undefined || dead.has(i)) return;
        work[i] = w.work;
        if (finished) return;
        samples[i]!++;
        if (w.busy) {
          busySamples[i]!++;
          lastBusy[i] = (performance.now() - t0) / 1000;
        }
      }));
    };
    let killedAt: number | undefined;
    const fastest = speeds.indexOf(Math.max(...speeds));
    let polling = true;
    const poller = (async () => {
      while (polling) {
        await scrape();
        if (killFastestAtHalf && killedAt === undefined) {
          const st = await fetchStatus(addresses[0]![1]!, grpc.credentials.createInsecure(), undefined, 5_000).catch(() => undefined);
          if (st && st.records_committed >= total / 2) {
            await scrape();
            dead.add(fastest);
            engines[fastest]!.child.kill("SIGKILL");
            killedAt = (performance.now() - t0) / 1000;
            process.stderr.write(`  killed engine ${fastest} (${speeds[fastest]} tokens/s) at ${killedAt.toFixed(1)} s, ${st.records_committed}/${total} committed\n`);
          }
        }
        await new Promise((r) => setTimeout(r, 500));
      }
    })();
    // A shard ends when its last record is committed, not when its processes have exited: the
    // coordinator prints its summary line the moment the run completes (handle.done settles on the
    // last commit, before the drain); a Status poll seeing every record committed counts too.
    const ends = await Promise.all(
      coords.map(async (c, i) => {
        const want = Number(addresses[i]![2]);
        let end: number | undefined;
        const summary = c.line(/^run \S+ complete: /m).then(
          () => (end ??= (performance.now() - t0) / 1000),
          () => undefined,
        );
        while (end === undefined) {
          const st = await fetchStatus(addresses[i]![1]!, grpc.credentials.createInsecure(), undefined, 5_000).catch(() => undefined);
          if (st && st.records_committed >= want) end ??= (performance.now() - t0) / 1000;
          else if (c.child.exitCode !== null) {
            await summary;
            if (end === undefined) throw new Error(`coordinator ${i} exited (${c.child.exitCode}) before its last record was committed`);
          } else await new Promise((r) => setTimeout(r, 200));
        }
        return end;
      }),
    );
    finished = true;
    await Promise.all(coords.map((c) => c.exited));
    polling = false;
    await poller;
    await scrape();
    const makespan = Math.max(...ends);
    const workTokens = work.map((w) => w ?? 0);
    const W = workTokens.reduce((a, b) => a + b, 0);
    const C = speeds.reduce((a, b) => a + b, 0);
    let ideal = W / C;
    if (killedAt !== undefined && W > C * killedAt) ideal = killedAt + (W - C * killedAt) / (C - speeds[fastest]!);
    return {
      scenario: killFastestAtHalf ? "kill" : tracks.length > 1 ? "static" : "uneven",
      records: total,
      makespan_s: makespan,
      ideal_s: ideal,
      efficiency: ideal / makespan,
      work_tokens: workTokens,
      ...(killedAt !== undefined ? { killed_at_s: killedAt } : {}),
      ...(tracks.length > 1 ? { shard_makespans_s: ends } : {}),
      busy_share: samples.map((n, i) => (n > 0 ? busySamples[i]! / n : 0)),
      last_busy_s: lastBusy,
    };
  } finally {
    for (const p of procs) if (p.child.exitCode === null) p.child.kill("SIGTERM");
    await Promise.all(procs.map((p) => Promise.race([p.exited, new Promise((r) => setTimeout(r, 5_000))])));
    for (const p of procs) if (p.child.exitCode === null) p.child.kill("SIGKILL");
    for (const o of outs) rmSync(o, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const suite = resolve(arg("suite"));
  const speeds = arg("tokens-per-s", "6000,6000,12000,24000").split(",").map(Number);
  const want = Number(arg("records", "5000"));
  const scenarios = arg("scenarios", "uneven,kill,static").split(",");
  const outFile = arg("out", "bench/out/schedule.json");
  const tracks = pickTracks(suite, want);
  const all = tracks.map((t) => t.track);
  process.stderr.write(`${tracks.reduce((n, t) => n + t.rows, 0)} records in ${tracks.length} tracks; engines ${speeds.join(", ")} tokens/s\n`);
  const loadAtStart = loadavg();
  const results: ScenarioResult[] = [];
  for (const s of scenarios) {
    const r = await runOne(suite, speeds, s === "static" ? equalShards(tracks, speeds.length) : [all], s === "kill");
    process.stderr.write(
      `${s}: makespan ${r.makespan_s.toFixed(1)} s, ideal ${r.ideal_s.toFixed(1)} s, efficiency ${r.efficiency.toFixed(3)}; ` +
        `engines busy ${r.busy_share.map((b) => b.toFixed(2)).join("/")}, last busy at ${r.last_busy_s.map((t) => t.toFixed(1)).join("/")} s; load ${loadavg()[0]!.toFixed(1)}\n`,
    );
    results.push(r);
  }
  const figures = {
    bench: "schedule",
    suite,
    tracks: all,
    tokens_per_s: speeds,
    machine: { cpus: cpus().length, loadavg_at_start: loadAtStart, loadavg_at_end: loadavg() },
    scenarios: results,
    targets: { efficiency_uneven_min: 0.95, efficiency_kill_min: 0.9 },
    note: "makespan: agents started -> last record committed (Status polled every 200 ms); ideal: engine work (prompt - cached + generated tokens from /metrics) over total tokens/s",
  };
  mkdirSync(dirname(outFile), { recursive: true });
  writeFileSync(outFile, JSON.stringify(figures, null, 2) + "\n");
  process.stdout.write(JSON.stringify(figures, null, 2) + "\n");
}

await main();

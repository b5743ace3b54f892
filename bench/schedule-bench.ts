// Benchmark of scheduling on uneven and failing GPUs: N simulated engines of uneven speed
// (`sim-engine --tokens-per-s`), one agent each, one coordinator, all as processes on 127.0.0.1.
// Two makespans per scenario:
//   issue 26's (the targets): first committed record (the first results line on disk, watched every
//                 20 ms) -> the coordinator process's exit, against the strict ideal below with a
//                 killed engine's capacity counted until the kill (timed from the first commit):
//                 issue_makespan_s / issue_ideal_s / issue_efficiency; exit_after_last_commit_s;
//   issue 9's:    agents started -> last record committed (makespan_s), against two ideals:
//   engine ideal  the engines' total work (sum over engines of prompt - cached + generated tokens,
//                 read from their /metrics) over their total capacity (sum of tokens/s): issue 9's
//                 definition, which counts wasted work too (backup copies answered twice, records
//                 redone after the kill), so it flatters the efficiency;
//   strict ideal  the work of the committed results only, each record once (prompt - cached +
//                 completion tokens of the committed lines, checked against the coordinator's run
//                 totals) over the same capacity. The headline and the targets use this one.
// Also per scenario: the wasted share of engine work (1 - committed / engine work) and the startup
// overhead inside the makespan (agents started -> first record committed). Scenarios:
//   uneven  every engine up to the end;
//   kill    the fastest engine SIGKILLed once half the records are committed (the ideal then
//           counts its capacity only until the kill);
//   static  the same work split into N equal static shards by records (N coordinators, one
//           engine each), as `--shard i/n` style splitting would: the baseline.
//
//   node dist/bench/schedule-bench.js --suite DIR [--tokens-per-s 6000,6000,12000,24000]
//     [--records 5000 | --tracks A,B,...] [--scenarios uneven,kill,static] [--out bench/out/schedule.json]
//
// Targets (issues 9 and 26): issue_efficiency >= 0.95 uneven, >= 0.90 with the kill; the exit
// within 0.5 s of the last commit. --tracks names the tracks instead of the smallest ones up to
// --records (issue 26's check: 7 tracks, 4,907 records).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join, resolve, basename } from "node:path";
import * as grpc from "@grpc/grpc-js";
import { fetchStatus } from "../cli/status.js";
import type { RunStatusWire } from "../coordinator/index.js";
import { arg } from "./bench-args.js";
import { startCli, type CliProcess } from "./cli-process.js";

/** The output tail kept per process: a schedule run's agents and engines print for minutes. */
const KEEP_CHARS = 20_000;

/**
 * Engine work so far in tokens (prompt - cached + generated, from vLLM's counters on /metrics) and
 * whether it has requests running or waiting now.
 */
async function engineWork(url: string): Promise<{ work: number; prompt: number; cached: number; generation: number; busy: boolean } | undefined> {
  try {
    const text = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
    const sum = (name: string) =>
      text
        .split("\n")
        .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
        .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
    return {
      work: sum("vllm:prompt_tokens_total") - sum("vllm:prefix_cache_hits_total") + sum("vllm:generation_tokens_total"),
      prompt: sum("vllm:prompt_tokens_total"),
      cached: sum("vllm:prefix_cache_hits_total"),
      generation: sum("vllm:generation_tokens_total"),
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

/** The named tracks with their rows (manifest.json). */
function namedTracks(suite: string, names: string[]): Array<{ track: string; rows: number }> {
  const manifest = JSON.parse(readFileSync(join(suite, "manifest.json"), "utf8")) as { files: Record<string, { rows: number }> };
  const rows = new Map(Object.entries(manifest.files).map(([rel, f]) => [basename(rel).replace(/\.jsonl\.gz$/, ""), f.rows]));
  return names.map((track) => {
    const n = rows.get(track);
    if (n === undefined) throw new Error(`no track ${track} in ${suite}/manifest.json`);
    return { track, rows: n };
  });
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

/** Tokens of the committed results, each record once, as the results files hold them. */
interface CommittedTokens {
  prompt: number;
  completion: number;
  /** Cached tokens of the lines that report them. */
  cached: number;
  /** Prompt tokens of the lines without a cached count (vLLM's systemone usage carries none). */
  promptCachedUnknown: number;
}

/** Sums the committed results' tokens over `<out>/<family>/<track>.jsonl`. */
function committedTokens(out: string): CommittedTokens {
  const t: CommittedTokens = { prompt: 0, completion: 0, cached: 0, promptCachedUnknown: 0 };
  for (const family of readdirSync(out, { withFileTypes: true })) {
    if (!family.isDirectory()) continue;
    for (const f of readdirSync(join(out, family.name))) {
      if (!f.endsWith(".jsonl")) continue;
      for (const line of readFileSync(join(out, family.name, f), "utf8").split("\n")) {
        if (!line) continue;
        const r = JSON.parse(line) as { prompt_tokens?: number; cached_tokens?: number; completion_tokens?: number };
        t.prompt += r.prompt_tokens ?? 0;
        t.completion += r.completion_tokens ?? 0;
        if (r.cached_tokens === undefined) t.promptCachedUnknown += r.prompt_tokens ?? 0;
        else t.cached += r.cached_tokens;
      }
    }
  }
  return t;
}

/** Bytes in the results files so far (`<out>/<family>/<track>.jsonl`). */
function resultsBytes(out: string): number {
  let n = 0;
  for (const family of readdirSync(out, { withFileTypes: true })) {
    if (!family.isDirectory()) continue;
    for (const f of readdirSync(join(out, family.name))) if (f.endsWith(".jsonl")) n += statSync(join(out, family.name, f)).size;
  }
  return n;
}

/** When a results file (`<out>/<family>/<track>.jsonl`) was last written (epoch ms); undefined if none. */
function lastResultsWriteMs(out: string): number | undefined {
  let last: number | undefined;
  for (const family of readdirSync(out, { withFileTypes: true })) {
    if (!family.isDirectory()) continue;
    for (const f of readdirSync(join(out, family.name))) {
      if (f.endsWith(".jsonl")) last = Math.max(last ?? 0, statSync(join(out, family.name, f)).mtimeMs);
    }
  }
  return last;
}

/**
 * Work of committed results (prompt - cached + completion tokens). A line without a cached count
 * has its prompt tokens taken as cached in `unknownCachedShare` (see cachedShareOfUnknown): an
 * estimate, said in the figures.
 */
function committedWork(t: CommittedTokens, unknownCachedShare: number): number {
  return t.prompt - t.cached - t.promptCachedUnknown * unknownCachedShare + t.completion;
}

/**
 * The cached share of the prompt tokens whose lines carry no cached count: the engines' prefix cache
 * hits not reported by lines that do, over the engines' prompt tokens not in such lines. (The
 * lines that report one, label reads through /v1/completions, hit the cache far more than systemone
 * reads: the engines' overall share would count the systemone lines as more cached than they are
 * and their work as less, a waste that is not there.)
 */
function cachedShareOfUnknown(parts: readonly CommittedTokens[], enginePrompt: number, engineCached: number): number {
  const knownPrompt = parts.reduce((n, p) => n + p.prompt - p.promptCachedUnknown, 0);
  const knownCached = parts.reduce((n, p) => n + p.cached, 0);
  const rest = enginePrompt - knownPrompt;
  return rest > 0 ? Math.min(1, Math.max(0, engineCached - knownCached) / rest) : 0;
}

/** Seconds the work takes at full capacity, with the killed engine's capacity counted only until the kill. */
function idealS(work: number, speeds: number[], killed: { at: number; engine: number } | undefined): number {
  const C = speeds.reduce((a, b) => a + b, 0);
  if (killed === undefined || work <= C * killed.at) return work / C;
  return killed.at + (work - C * killed.at) / (C - speeds[killed.engine]!);
}

interface ScenarioResult {
  scenario: string;
  records: number;
  /** Issue 26's makespan: first committed record (first results line on disk) -> the coordinator process's exit. */
  issue_makespan_s: number;
  /** The strict ideal (committed work, each record once, over capacity; a killed engine's counted until the kill, from the first commit). */
  issue_ideal_s: number;
  /** issue_ideal_s / issue_makespan_s: the targets (issue 26). */
  issue_efficiency: number;
  /** Seconds from the agents' start: first results line, last results write, coordinator exit. */
  first_commit_s: number;
  last_commit_s: number;
  exit_s: number;
  /** Last commit -> process exit (issue 26: within 0.5 s). */
  exit_after_last_commit_s: number;
  /** Agents started -> the results files' last write (the last commit). */
  makespan_s: number;
  /** Agents started -> the bench saw the run complete (Status poll or summary line): an upper bound. */
  end_detected_s: number;
  /** Strict: committed results' work, each record once, over capacity (the headline). */
  ideal_s: number;
  efficiency: number;
  /** Issue 9's: every engine's work from /metrics (wasted work included) over capacity. */
  engine_ideal_s: number;
  engine_efficiency: number;
  /** 1 - committed work / engine work. */
  wasted_share: number;
  committed_work_tokens: number;
  /** Share of committed prompt tokens whose cached count was unknown (estimated at unknown_cached_share). */
  committed_cached_estimated_share: number;
  /**
   * The coordinator's run totals (final Status) agree with the results files on prompt and
   * completion tokens; undefined when the coordinator exited before a poll saw its last commit.
   */
  run_totals_match_results?: boolean;
  /** Prefix cache hits over prompt tokens, all engines together (/metrics). */
  engine_cached_share: number;
  /** The cached share taken for committed prompt tokens without a cached count (cachedShareOfUnknown). */
  unknown_cached_share: number;
  tokens: { engine_prompt: number; engine_cached: number; engine_generation: number; committed_prompt: number; committed_completion: number };
  /** Per engine: seconds from start to the first scrape that found it busy (startup as the engines see it). */
  first_busy_s: number[];
  /** Agents started -> first record committed (Status polled every 200 ms). */
  startup_s: number;
  /** From each coordinator's summary line: results dropped as duplicates (answered twice), leases expired, backup copies sent. */
  coordinator_counters: Array<{ duplicates: number; leases_expired: number; backup_units: number } | null>;
  work_tokens: number[];
  killed_at_s?: number;
  /** Kill -> the dead engine's agent saying it returned its units. */
  handed_back_after_kill_s?: number;
  after_kill_s?: number;
  /** The strict ideal's part after the kill: losses before the kill (startup, waste) count here at the survivors' capacity. */
  after_kill_ideal_s?: number;
  /** The survivors' engine work after the kill over their capacity: seconds they had work for. */
  after_kill_survivor_work_s?: number;
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
    const t0Wall = Date.now();
    const agents = urls.map((url, i) => startCli(["agent", "--coordinator", addresses[shardOf(i)]![1]!, "--engine", url, "--agent-id", `e${i}-${speeds[i]}`], { keepChars: KEEP_CHARS }));
    procs.push(...agents);
    const work: Array<number | undefined> = urls.map(() => undefined);
    const prompt = urls.map(() => 0);
    const cached = urls.map(() => 0);
    const generation = urls.map(() => 0);
    const firstBusy: Array<number | undefined> = urls.map(() => undefined);
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
        prompt[i] = w.prompt;
        cached[i] = w.cached;
        generation[i] = w.generation;
        if (finished) return;
        samples[i]!++;
        if (w.busy) {
          busySamples[i]!++;
          lastBusy[i] = (performance.now() - t0) / 1000;
          firstBusy[i] ??= lastBusy[i];
        }
      }));
    };
    let killedAt: number | undefined;
    let handedBackAt: number | undefined;
    let workAtKill: number[] | undefined;
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
            workAtKill = work.map((w) => w ?? 0);
            engines[fastest]!.child.kill("SIGKILL");
            killedAt = (performance.now() - t0) / 1000;
            // The agent says (warn) when it returns its units to the coordinator.
            void agents[fastest]!.line(/engine not answering; returning the units/).then(
              () => (handedBackAt = (performance.now() - t0) / 1000),
              () => undefined,
            );
            process.stderr.write(`  killed engine ${fastest} (${speeds[fastest]} tokens/s) at ${killedAt.toFixed(1)} s, ${st.records_committed}/${total} committed\n`);
          }
        }
        await new Promise((r) => setTimeout(r, 500));
      }
    })();
    // A shard ends when its last record is committed, not when its processes have exited: the
    // coordinator prints its summary line the moment the run completes (handle.done settles on the
    // last commit, before the drain); a Status poll seeing every record committed counts too.
    // The final Status (every record committed) carries the run totals of committed results; the
    // coordinator drains its agents before it exits, so a poll usually catches it.
    const finals: Array<RunStatusWire | undefined> = coords.map(() => undefined);
    let firstCommit: number | undefined;
    // The issue's makespan ends at the coordinator process's exit.
    const exitAt: Array<number | undefined> = coords.map(() => undefined);
    coords.forEach((c, i) => void c.exited.then(() => (exitAt[i] = (performance.now() - t0) / 1000)));
    // It starts at the first committed record: the first results line on disk,
    // watched every 20 ms (the Status poll's 200 ms would blur it).
    let firstLine: number | undefined;
    const firstLineWatch = (async () => {
      while (firstLine === undefined && exitAt.some((e) => e === undefined)) {
        if (outs.some((o) => resultsBytes(o) > 0)) firstLine = (performance.now() - t0) / 1000;
        else await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const counters: Array<{ duplicates: number; leases_expired: number; backup_units: number } | undefined> = coords.map(() => undefined);
    const ends = await Promise.all(
      coords.map(async (c, i) => {
        const want = Number(addresses[i]![2]);
        let end: number | undefined;
        const summary = c.line(/^run \S+ complete: .*?(\d+) duplicates dropped, (\d+) leases expired, (\d+) backup units/m).then(
          (m) => {
            counters[i] = { duplicates: Number(m[1]), leases_expired: Number(m[2]), backup_units: Number(m[3]) };
            return (end ??= (performance.now() - t0) / 1000);
          },
          () => undefined,
        );
        while (finals[i] === undefined) {
          const st = await fetchStatus(addresses[i]![1]!, grpc.credentials.createInsecure(), undefined, 5_000).catch(() => undefined);
          if (st && st.records_committed > 0) firstCommit ??= (performance.now() - t0) / 1000;
          if (st && st.records_committed >= want) {
            end ??= (performance.now() - t0) / 1000;
            finals[i] = st;
          } else if (c.child.exitCode !== null) {
            await summary;
            if (end === undefined) throw new Error(`coordinator ${i} exited (${c.child.exitCode}) before its last record was committed`);
            break;
          } else await new Promise((r) => setTimeout(r, 200));
        }
        await summary;
        return end!;
      }),
    );
    finished = true;
    await Promise.all(coords.map((c) => c.exited));
    await firstLineWatch;
    polling = false;
    await poller;
    await scrape();
    // The last record committed is the results files' last write; the Status poll (every 200 ms) or
    // the summary line (printed after the drain) see it later.
    const lastWrite = outs.map((o) => lastResultsWriteMs(o));
    const detected = Math.max(...ends);
    const makespan = lastWrite.every((w) => w !== undefined) ? Math.min(detected, (Math.max(...(lastWrite as number[])) - t0Wall) / 1000) : detected;
    const workTokens = work.map((w) => w ?? 0);
    const W = workTokens.reduce((a, b) => a + b, 0);
    const P = prompt.reduce((a, b) => a + b, 0);
    const H = cached.reduce((a, b) => a + b, 0);
    // The results files, not the run totals, give the committed work: their cached count is per line
    // (known or not), where the totals mark it known as soon as one result reported it.
    const parts = outs.map((o) => committedTokens(o));
    const unknownCachedShare = cachedShareOfUnknown(parts, P, H);
    const committed = parts.reduce((n, p) => n + committedWork(p, unknownCachedShare), 0);
    const unknownShare = parts.reduce((n, p) => n + p.promptCachedUnknown, 0) / Math.max(1, parts.reduce((n, p) => n + p.prompt, 0));
    const totalsMatch = finals.every((f) => f?.totals)
      ? finals.every((f, i) => Number(f!.totals!.prompt_tokens) === parts[i]!.prompt && Number(f!.totals!.completion_tokens) === parts[i]!.completion)
      : undefined;
    const killed = killedAt !== undefined ? { at: killedAt, engine: fastest } : undefined;
    const engineIdeal = idealS(W, speeds, killed);
    const ideal = idealS(committed, speeds, killed);
    // Issue 26's: first committed record -> the coordinator process's exit, against the strict
    // ideal with the kill's time counted from the first commit.
    const first = firstLine ?? firstCommit ?? 0;
    const exited = Math.max(...exitAt.map((e) => e ?? 0));
    const issueMakespan = exited - first;
    const issueIdeal = idealS(committed, speeds, killedAt !== undefined ? { at: killedAt - first, engine: fastest } : undefined);
    const lastCommitS = lastWrite.every((w) => w !== undefined) ? (Math.max(...(lastWrite as number[])) - t0Wall) / 1000 : detected;
    return {
      scenario: killFastestAtHalf ? "kill" : tracks.length > 1 ? "static" : "uneven",
      records: total,
      issue_makespan_s: issueMakespan,
      issue_ideal_s: issueIdeal,
      issue_efficiency: issueIdeal / issueMakespan,
      first_commit_s: first,
      last_commit_s: lastCommitS,
      exit_s: exited,
      exit_after_last_commit_s: exited - lastCommitS,
      makespan_s: makespan,
      end_detected_s: detected,
      ideal_s: ideal,
      efficiency: ideal / makespan,
      engine_ideal_s: engineIdeal,
      engine_efficiency: engineIdeal / makespan,
      wasted_share: W > 0 ? 1 - committed / W : 0,
      committed_work_tokens: committed,
      committed_cached_estimated_share: unknownShare,
      ...(totalsMatch !== undefined ? { run_totals_match_results: totalsMatch } : {}),
      engine_cached_share: P > 0 ? H / P : 0,
      unknown_cached_share: unknownCachedShare,
      // Where the waste is: engine counters next to the committed lines' (prompt counts cached in both).
      tokens: {
        engine_prompt: P,
        engine_cached: cached.reduce((a, b) => a + b, 0),
        engine_generation: generation.reduce((a, b) => a + b, 0),
        committed_prompt: parts.reduce((n, p) => n + p.prompt, 0),
        committed_completion: parts.reduce((n, p) => n + p.completion, 0),
      },
      first_busy_s: firstBusy.map((t) => t ?? makespan),
      startup_s: firstCommit ?? makespan,
      coordinator_counters: counters.map((c) => c ?? null),
      work_tokens: workTokens,
      ...(killedAt !== undefined
        ? {
            killed_at_s: killedAt,
            ...(handedBackAt !== undefined ? { handed_back_after_kill_s: handedBackAt - killedAt } : {}),
            // After the kill: the makespan's rest next to the strict ideal's rest.
            after_kill_s: makespan - killedAt,
            after_kill_ideal_s: ideal - killedAt,
            ...(workAtKill ? { after_kill_survivor_work_s: workTokens.reduce((n, w, i) => n + (i === fastest ? 0 : w - workAtKill![i]!), 0) / (speeds.reduce((a, b) => a + b, 0) - speeds[fastest]!) } : {}),
          }
        : {}),
      ...(tracks.length > 1 ? { shard_makespans_s: ends.map((e, i) => (lastWrite[i] !== undefined ? Math.min(e, (lastWrite[i]! - t0Wall) / 1000) : e)) } : {}),
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
  const named = arg("tracks", "");
  const tracks = named ? namedTracks(suite, named.split(",")) : pickTracks(suite, want);
  const all = tracks.map((t) => t.track);
  process.stderr.write(`${tracks.reduce((n, t) => n + t.rows, 0)} records in ${tracks.length} tracks; engines ${speeds.join(", ")} tokens/s\n`);
  const loadAtStart = loadavg();
  const results: ScenarioResult[] = [];
  for (const s of scenarios) {
    const r = await runOne(suite, speeds, s === "static" ? equalShards(tracks, speeds.length) : [all], s === "kill");
    process.stderr.write(
      `${s}: issue 26: first commit -> exit ${r.issue_makespan_s.toFixed(1)} s, ideal ${r.issue_ideal_s.toFixed(1)} s, efficiency ${r.issue_efficiency.toFixed(3)}, exit ${r.exit_after_last_commit_s.toFixed(2)} s after the last commit; ` +
        `issue 9: makespan ${r.makespan_s.toFixed(1)} s, ideal ${r.ideal_s.toFixed(1)} s, efficiency ${r.efficiency.toFixed(3)} ` +
        `(engine-work ideal ${r.engine_ideal_s.toFixed(1)} s, efficiency ${r.engine_efficiency.toFixed(3)}; wasted ${(100 * r.wasted_share).toFixed(1)}%); ` +
        `${r.coordinator_counters.map((c) => (c ? `${c.backup_units} backup units, ${c.duplicates} duplicates, ${c.leases_expired} leases expired` : "no summary")).join("; ")}; ` +
        `first commit at ${r.startup_s.toFixed(1)} s, engines first busy at ${r.first_busy_s.map((t) => t.toFixed(1)).join("/")} s${r.killed_at_s !== undefined ? `, killed at ${r.killed_at_s.toFixed(1)} s, units handed back ${r.handed_back_after_kill_s?.toFixed(2) ?? "?"} s later, ${r.after_kill_s!.toFixed(1)} s after the kill (survivors' work after it ${r.after_kill_survivor_work_s?.toFixed(1) ?? "?"} s at their capacity)` : ""}; ` +
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
    targets: { efficiency_uneven_min: 0.95, efficiency_kill_min: 0.9, exit_after_last_commit_max_s: 0.5 },
    note:
      "issue_makespan_s (issue 26, the targets): first committed record (first results line on disk) -> the coordinator process's exit; issue_ideal_s: the strict ideal below, a killed engine's capacity counted until the kill timed from the first commit; issue_efficiency = issue_ideal_s / issue_makespan_s. " +
      "makespan_s (issue 9): agents started -> last record committed (the results files' last write; end_detected_s: when the Status poll or summary line saw it); ideal_s/efficiency (strict): work of committed results (committed lines' prompt - cached + completion tokens, each record once, checked against the run totals; where a line's cached count is unknown, as with systemone, its prompt tokens count as cached in the share of the engines' prefix-cache hits not reported by lines that have one) over total tokens/s; engine_ideal_s/engine_efficiency (issue 9's): engine work from /metrics (wasted work included) over total tokens/s; with the kill, the killed engine's tokens/s count only until the kill",
  };
  mkdirSync(dirname(outFile), { recursive: true });
  writeFileSync(outFile, JSON.stringify(figures, null, 2) + "\n");
  process.stdout.write(JSON.stringify(figures, null, 2) + "\n");
}

await main();

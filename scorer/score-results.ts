// `udm-orch score`: result files scored against a suite by the scorer core (run-scorer.ts), in this
// thread or, for a large suite, in worker threads that each score a shard of the tracks (their JSON
// parse dominates and splits by track file); the shards' final track metrics are then assembled
// into one metrics.json. Suite files are verified against the manifest while they are read.
import { statSync } from "node:fs";
import { availableParallelism } from "node:os";
import { createLogger, type Logger } from "../common/log.js";
import { resultFiles } from "../common/results/index.js";
import { selectFiles, type TrackFile, openCheckedSuite } from "../common/suite/index.js";
import type { Interval } from "./bootstrap.js";
import type { MetricsJson } from "./metrics-json.js";
import { applyResultFiles } from "./result-files.js";
import { RunScorer, type FinalTrack } from "./run-scorer.js";
import { scoreShardsInWorkers } from "./score-worker-client.js";

export interface ScoreOptions {
  suiteDir: string;
  resultsDir: string;
  tracks?: readonly string[];
  families?: readonly string[];
  /** Records per track at most, whole groups (the run's `--limit`); all when absent. */
  limit?: number;
  /** Worker threads that read and score shards of the tracks (default: cores, at most 4; 1 = in this thread). */
  workers?: number;
  log?: Logger;
}

export async function scoreResults(options: ScoreOptions): Promise<MetricsJson> {
  return (await scoreResultsWithInterval(options)).metrics;
}

/** scoreResults, plus the interval of the v1 mean (not in metrics.json; aggregate.ts v1Interval). */
export async function scoreResultsWithInterval(options: ScoreOptions): Promise<{ metrics: MetricsJson; v1Interval: Interval | null }> {
  const log = options.log ?? createLogger("score");
  const suite = openCheckedSuite(options.suiteDir);
  const filter = { ...(options.tracks ? { tracks: options.tracks } : {}), ...(options.families ? { families: options.families } : {}) };
  const scope = selectFiles(suite, filter);
  const shards = planShards(scope, options.workers ?? defaultWorkers(scope));
  const files = resultFiles(options.resultsDir);
  if (shards.length <= 1) {
    const scorer = await RunScorer.load({ suite, scope, duplicates: "replace", log, ...(options.limit !== undefined ? { limit: options.limit } : {}) });
    await applyResultFiles(scorer, files, { warnTornLines: true, log });
    const metrics = scorer.final();
    return { metrics, v1Interval: scorer.v1Interval() };
  }
  const common = { suiteDir: options.suiteDir, resultsDir: options.resultsDir, resultFiles: files, ...(options.limit !== undefined ? { limit: options.limit } : {}) };
  const outputs = await scoreShardsInWorkers(shards.map((tracks, i) => ({ ...common, tracks, warnTornLines: i === 0 })));
  const finals = new Map<string, FinalTrack>();
  const hashes: Record<string, string> = {};
  for (const out of outputs) {
    Object.assign(hashes, out.hashes);
    for (const { track, ...final } of out.tracks) finals.set(track, final);
  }
  const scorer = await RunScorer.assemble({ suite, scope, log }, finals, hashes);
  const metrics = scorer.final();
  return { metrics, v1Interval: scorer.v1Interval() };
}

/**
 * Worker threads to use: the suite's JSON parse dominates, and it splits by track file. Only from the
 * compiled build (a worker cannot load TypeScript sources), and never more than there are files.
 */
function defaultWorkers(files: readonly TrackFile[]): number {
  if (!import.meta.url.endsWith(".js")) return 1;
  return Math.max(1, Math.min(availableParallelism(), MAX_WORKERS, files.length));
}

const MAX_WORKERS = 4;

/** Splits track files into `n` shards of about equal compressed size (largest first, each to the lightest shard). */
export function planShards(files: readonly TrackFile[], n: number): string[][] {
  const shards = Array.from({ length: Math.max(1, n) }, () => ({ bytes: 0, tracks: [] as string[] }));
  const sized = files.map((f) => ({ track: f.track, bytes: statSync(f.path).size })).sort((a, b) => b.bytes - a.bytes || (a.track < b.track ? -1 : 1));
  for (const f of sized) {
    const lightest = shards.reduce((a, b) => (b.bytes < a.bytes ? b : a));
    lightest.bytes += f.bytes;
    lightest.tracks.push(f.track);
  }
  return shards.filter((s) => s.tracks.length > 0).map((s) => s.tracks);
}

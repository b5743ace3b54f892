// Scores result files against a suite (what `udm-orch score` runs): the same TrackAccumulators as the live
// scorer, fed from disk. Suite files are verified against the manifest while they are read.
import { statSync } from "node:fs";
import { availableParallelism } from "node:os";
import { createLogger, type Logger } from "../common/log.js";
import { decompressedSha256, selectFiles, suiteIdentity, type TrackFile } from "../common/suite/suite.js";
import { openCheckedSuite } from "../common/suite/suite-check.js";
import { aggregate, type GroupMean, type PillarMean, type Summary } from "./aggregate.js";
import { scoreShard } from "./score-shard.js";
import { scoreShardsInWorkers } from "./score-worker-client.js";
import { resultFiles } from "./result-files.js";
import type { TrackMetrics } from "./track-metrics.js";

/** Bump when the meaning of a field of metrics.json changes. */
export const METRICS_FORMAT = 1;

export interface MetricsJson {
  format: number;
  suite: { identity: string; tracks: number };
  tracks: Record<string, TrackMetrics>;
  families: Record<string, GroupMean>;
  pillars: Record<string, PillarMean>;
  summary: Summary;
}

export interface ScoreOptions {
  suiteDir: string;
  resultsDir: string;
  tracks?: readonly string[];
  families?: readonly string[];
  /** Worker threads that read and score shards of the tracks (default: cores, at most 4; 1 = in this thread). */
  workers?: number;
  log?: Logger;
}

export async function scoreResults(options: ScoreOptions): Promise<MetricsJson> {
  const log = options.log ?? createLogger("score");
  const suite = openCheckedSuite(options.suiteDir);
  const filter = { ...(options.tracks ? { tracks: options.tracks } : {}), ...(options.families ? { families: options.families } : {}) };
  const selected = selectFiles(suite, filter);
  const shards = planShards(selected, options.workers ?? defaultWorkers(selected));
  const common = { suiteDir: options.suiteDir, resultsDir: options.resultsDir, resultFiles: resultFiles(options.resultsDir) };
  const outputs =
    shards.length <= 1
      ? [await scoreShard({ ...common, tracks: selected.map((f) => f.track), warnTornLines: true }, log)]
      : await scoreShardsInWorkers(shards.map((tracks, i) => ({ ...common, tracks, warnTornLines: i === 0 })));

  const hashes: Record<string, string> = {};
  const resamples = new Map<string, Float64Array>();
  const byName = new Map<string, TrackMetrics>();
  for (const out of outputs) {
    Object.assign(hashes, out.hashes);
    for (const t of out.tracks) {
      byName.set(t.track, t.metrics);
      resamples.set(t.track, t.resamples);
    }
  }
  for (const file of suite.files) {
    hashes[file.relPath] ??= suite.manifest?.files[file.relPath]?.sha256.toLowerCase() ?? (await decompressedSha256(file.path));
  }
  // Suite order (family folder, then track), whatever shard scored a track.
  const tracks: Record<string, TrackMetrics> = {};
  for (const f of selected) tracks[f.track] = byName.get(f.track)!;
  const { families, pillars, summary } = aggregate(tracks, (t) => resamples.get(t)!);
  return { format: METRICS_FORMAT, suite: { identity: suiteIdentity(hashes), tracks: suite.files.length }, tracks, families, pillars, summary };
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

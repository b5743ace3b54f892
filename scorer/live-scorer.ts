// The in-process scorer of an embedded run: scores each track the moment its last record is
// committed (in a worker thread from the build, so the coordinator's event loop keeps serving
// agents) and rewrites metrics.json with the tracks done so far; `finish()` scores the whole run
// from disk exactly as `udm-orch score` does, so both always agree.
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { writeJsonAtomic } from "../common/atomic-file.js";
import { createLogger, type Logger } from "../common/log.js";
import { aggregate } from "./aggregate.js";
import { scoreShard, type ShardInput, type ShardOutput } from "./score-shard.js";
import { scoreShardsInWorkers } from "./score-worker-client.js";
import { METRICS_FORMAT, scoreResults, type MetricsJson } from "./score-results.js";
import type { TrackMetrics } from "./track-metrics.js";

/** Compressed track files above this size are scored in a worker thread. */
const WORKER_MIN_BYTES = 4 << 20;

function suiteFileBytes(suiteDir: string, family: string, track: string): number {
  for (const root of [suiteDir, join(suiteDir, "..")]) {
    const p = join(root, "test", family, `${track}.jsonl.gz`);
    if (existsSync(p)) return statSync(p).size;
  }
  return 0;
}

export interface LiveScorerOptions {
  suiteDir: string;
  /** Where the results store writes `<family>/<track>.jsonl`. */
  resultsDir: string;
  tracks?: readonly string[];
  families?: readonly string[];
  /** metrics.json to rewrite as tracks complete. */
  metricsPath: string;
  /** Called with each track's final metrics as soon as they are computed. */
  onTrackMetrics?: (track: string, metrics: TrackMetrics) => void;
  /** Called when a track's metrics are out, `seconds` after trackComplete() was called for it. */
  onEmitted?: (track: string, seconds: number) => void;
  log?: Logger;
}

export class LiveScorer {
  private readonly done = new Map<string, { metrics: TrackMetrics; resamples: Float64Array }>();
  private readonly queued = new Set<string>();
  private chain: Promise<void> = Promise.resolve();
  private identity = "";
  private suiteTracks = 0;
  private readonly log: Logger;
  private latest: MetricsJson | undefined;

  constructor(private readonly options: LiveScorerOptions) {
    this.log = options.log ?? createLogger("live-scorer");
  }

  /** Schedules the scoring of a track whose every record is committed. Tracks are scored one at a time, in call order. */
  trackComplete(track: string, family: string): void {
    if (this.queued.has(track)) return;
    this.queued.add(track);
    const since = performance.now();
    this.chain = this.chain.then(() => this.scoreTrack(track, family, since)).catch((err: unknown) => {
      this.log.warn(`live scoring of ${track} failed; the final score will still run`, { error: String(err) });
    });
  }

  /** Waits for queued tracks, then scores the whole run from disk, writes metrics.json and returns it. */
  async finish(): Promise<MetricsJson> {
    await this.chain;
    const { suiteDir, resultsDir, tracks, families } = this.options;
    const metrics = await scoreResults({ suiteDir, resultsDir, ...(tracks ? { tracks } : {}), ...(families ? { families } : {}), log: this.log });
    writeJsonAtomic(this.options.metricsPath, metrics);
    return metrics;
  }

  /** Metrics of the tracks finished so far. */
  partial(): MetricsJson {
    const tracks: Record<string, TrackMetrics> = {};
    for (const name of [...this.done.keys()].sort()) tracks[name] = this.done.get(name)!.metrics;
    const { families, pillars, summary } = aggregate(tracks, (t) => this.done.get(t)!.resamples);
    return { format: METRICS_FORMAT, suite: { identity: this.identity, tracks: this.suiteTracks }, tracks, families, pillars, summary };
  }

  private async scoreTrack(track: string, family: string, since: number): Promise<void> {
    const file = join(this.options.resultsDir, family, `${track}.jsonl`);
    const input: ShardInput = {
      suiteDir: this.options.suiteDir,
      resultsDir: this.options.resultsDir,
      resultFiles: existsSync(file) ? [file] : [],
      tracks: [track],
      warnTornLines: false,
    };
    // A large track is parsed in a worker thread so the coordinator keeps serving agents; starting a
    // worker costs more than parsing a small track. Workers load the compiled build only.
    const inWorker = import.meta.url.endsWith(".js") && suiteFileBytes(this.options.suiteDir, family, track) > WORKER_MIN_BYTES;
    const out: ShardOutput = inWorker ? (await scoreShardsInWorkers([input]))[0]! : await scoreShard(input, this.log);
    for (const t of out.tracks) {
      this.done.set(t.track, { metrics: t.metrics, resamples: t.resamples });
      this.options.onTrackMetrics?.(t.track, t.metrics);
    }
    this.latest = this.partial();
    writeJsonAtomic(this.options.metricsPath, this.latest);
    this.options.onEmitted?.(track, (performance.now() - since) / 1000);
  }

  /** metrics.json as last written (the tracks scored so far), without recomputing it. */
  current(): MetricsJson | undefined {
    return this.latest;
  }

  /** Tracks in scope (setSuite). */
  get tracksInScope(): number {
    return this.suiteTracks;
  }

  /** Records the suite identity shown in partial metrics.json files. */
  setSuite(identity: string, tracks: number): void {
    this.identity = identity;
    this.suiteTracks = tracks;
  }
}

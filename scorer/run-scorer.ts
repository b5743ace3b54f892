// The one scorer core: the tracks in scope, each a TrackAccumulator sealed with its gold, results
// applied one at a time, the tracks whose last record is in, their final metrics, and metrics.json
// (partial while tracks are still running, final at the end). Three sources feed it: result files
// (`udm-orch score`, result-files.ts), the bus plus the scorer's journal (`udm-orch scorer`,
// streaming-scorer.ts) and the coordinator's committed results (the embedded `run`,
// commit-scorer.ts). Given the same results, every source ends in the same metrics.json.
import { decompressedSha256, limitRecords, suiteIdentity, type Suite, type TrackFile, type ScoredRecord, type ScoredChunk } from "../common/suite/index.js";
import { type ResultInput, trackOfRunId } from "../common/results/index.js";
import { UsageError } from "../common/errors.js";
import type { Logger } from "../common/log.js";
import { aggregate, v1Interval } from "./aggregate.js";
import type { Interval } from "./bootstrap.js";
import { METRICS_FORMAT, writeMetricsJson, type MetricsJson } from "./metrics-json.js";
import { TrackAccumulator } from "./track-accumulator.js";
import { loadTrackGold } from "./track-gold.js";
import type { Headline, TrackMetrics } from "./track-metrics.js";

/** What a second result for a run_id does: replace the first (files: a later line wins) or nothing (bus, journal). */
export type DuplicatePolicy = "replace" | "skip";

/**
 * applied: the record's first result. replaced / duplicate: a result for it was applied before (and
 * this one replaced it / was skipped). out-of-scope: a record of a suite track not scored here.
 * unknown: matches no record of the suite.
 */
export type ApplyOutcome = "applied" | "replaced" | "duplicate" | "out-of-scope" | "unknown";

export interface FinalTrack {
  metrics: TrackMetrics;
  /** Bootstrap headlines, for the pillar intervals. */
  resamples: Float64Array;
}

export interface ScorerCounts {
  /** Results of records that had none (journal replay excluded). */
  applied: number;
  /** Results applied from a replay (the scorer's journal, result files already on disk). */
  replayed: number;
  /** Second results for a run_id (replaced or skipped, by the duplicate policy). */
  duplicates: number;
  /** Results for records of suite tracks outside the scope. */
  outOfScope: number;
  /** Results that match no record of the suite. */
  unknown: number;
}

/** Where one track stands: for run cards and live pages. */
export interface TrackProgress {
  track: string;
  family: string;
  records: number;
  /** Records with a result. */
  results: number;
  complete: boolean;
  /** Final headline (with its interval) once the track is scored, else null. */
  headline: Headline | null;
  /** Questions with no valid answer, once the track is scored, else null. */
  missing: number | null;
  /** Distributions rejected as invalid (scored as missing). */
  invalidDistributions: number;
}

export interface RunScorerOptions {
  suite: Suite;
  /** The tracks scored, in the order metrics.json lists them (suite order). */
  scope: readonly TrackFile[];
  duplicates: DuplicatePolicy;
  log: Logger;
  /** Records per track at most, whole groups (`--limit`, common/suite/record-limit.ts); all when absent. */
  limit?: number;
}

interface TrackState {
  file: TrackFile;
  /** Absent in a scorer assembled from finished tracks (the worker shards of `score`). */
  acc: TrackAccumulator | undefined;
  final: FinalTrack | undefined;
  /** Results applied since the last running metrics. */
  changed: boolean;
  queued: boolean;
  /** When the result that completed it was applied (performance.now()), for emit latency. */
  completedAt: number | undefined;
}

export class RunScorer {
  private readonly tracks = new Map<string, TrackState>();
  private readonly suiteTracks: ReadonlySet<string>;
  private completed: string[] = [];
  /** sha256 of the decompressed bytes of each track file whose gold was read, by relative path. */
  readonly goldHashes: Record<string, string> = {};
  readonly counts: ScorerCounts = { applied: 0, replayed: 0, duplicates: 0, outOfScope: 0, unknown: 0 };
  private identity = "";
  /** metrics.json as last written by writeMetrics(). */
  lastWritten: MetricsJson | undefined;

  private constructor(private readonly options: RunScorerOptions) {
    this.suiteTracks = new Set(options.suite.files.map((f) => f.track));
    for (const file of options.scope) this.tracks.set(file.track, { file, acc: undefined, final: undefined, changed: false, queued: false, completedAt: undefined });
  }

  /**
   * Reads the gold of every track in scope (each file checked against the manifest) and, unless
   * `identity` is false (a shard of `score`: the merge computes it), the suite identity.
   */
  static async load(options: RunScorerOptions & { identity?: boolean }): Promise<RunScorer> {
    const scorer = new RunScorer(options);
    for (const t of scorer.tracks.values()) {
      const { accumulator, sha256 } = await loadTrackGold(options.suite, t.file, options.limit);
      t.acc = accumulator;
      scorer.goldHashes[t.file.relPath] = sha256;
    }
    if (options.identity !== false) await scorer.computeIdentity();
    return scorer;
  }

  /**
   * A scorer whose gold is read elsewhere (the coordinator's one pass over the suite, in
   * commit-scorer.ts): addGold() for every track in scope, then goldComplete().
   */
  static awaitingGold(options: RunScorerOptions): RunScorer {
    return new RunScorer(options);
  }

  /** The gold of one track in scope, its records checked by the reader (as loadTrackGold reads them), in file order. */
  addGold(track: string, records: Iterable<(ScoredRecord | ScoredChunk) & { line?: number }>, sha256: string): void {
    const t = this.tracks.get(track);
    if (!t) throw new UsageError(`gold for track ${JSON.stringify(track)}, which is not in scope`);
    if (t.acc) throw new UsageError(`gold for track ${JSON.stringify(track)} given twice`);
    const accumulator = new TrackAccumulator(t.file.track, t.file.family);
    const limit = this.options.limit;
    const kept = limit === undefined ? records : limitRecords([...records], (r) => r.metadata.group_id, limit);
    for (const record of kept) accumulator.addRecord(record, { file: t.file.path, ...(record.line !== undefined ? { line: record.line } : {}) });
    accumulator.sealRecords();
    t.acc = accumulator;
    this.goldHashes[t.file.relPath] = sha256;
  }

  /** The track is in scope and its gold is in. */
  hasGold(track: string): boolean {
    return this.tracks.get(track)?.acc !== undefined;
  }

  /** Every track's gold is in; `identity` is the suite identity its reader computed. */
  goldComplete(identity: string): void {
    const missing = [...this.tracks.values()].filter((t) => !t.acc).map((t) => t.file.track);
    if (missing.length > 0) throw new UsageError(`no gold was read for track(s) ${missing.join(", ")}`);
    this.identity = identity;
  }

  /** A scorer whose tracks were all scored elsewhere (worker threads); only metrics.json is left to build. */
  static async assemble(options: Omit<RunScorerOptions, "duplicates">, finals: ReadonlyMap<string, FinalTrack>, goldHashes: Readonly<Record<string, string>>): Promise<RunScorer> {
    const scorer = new RunScorer({ ...options, duplicates: "replace" });
    for (const [name, t] of scorer.tracks) t.final = finals.get(name);
    Object.assign(scorer.goldHashes, goldHashes);
    await scorer.computeIdentity();
    return scorer;
  }

  private async computeIdentity(): Promise<void> {
    const { suite } = this.options;
    const hashes = { ...this.goldHashes };
    for (const file of suite.files) hashes[file.relPath] ??= suite.manifest?.files[file.relPath]?.sha256.toLowerCase() ?? (await decompressedSha256(file.path));
    this.identity = suiteIdentity(hashes);
  }

  get suiteIdentity(): string {
    return this.identity;
  }

  get suiteRoot(): string {
    return this.options.suite.root;
  }

  /** Track names in scope, in metrics.json order. */
  get trackNames(): string[] {
    return [...this.tracks.keys()];
  }

  recordCount(track: string): number {
    return this.accOf(this.tracks.get(track)!).recordCount;
  }

  /** Every track in scope has its final metrics. */
  get allFinal(): boolean {
    for (const t of this.tracks.values()) if (!t.final) return false;
    return true;
  }

  /**
   * Applies one result. A track whose last record this completes is queued for finishCompleted();
   * a `replay` (journal, files already on disk) queues nothing: call queueComplete() after it.
   * `duplicates` overrides the scorer's policy for this line (the bus: a line superseding one with errors).
   */
  apply(line: ResultInput, replay = false, duplicates: DuplicatePolicy = this.options.duplicates): ApplyOutcome {
    const name = trackOfRunId(line.run_id);
    const t = this.tracks.get(name);
    if (!t) {
      if (this.suiteTracks.has(name)) {
        this.counts.outOfScope++;
        return "out-of-scope";
      }
      this.counts.unknown++;
      return "unknown";
    }
    const acc = this.accOf(t);
    if (!acc.hasRecord(line.run_id)) {
      this.counts.unknown++;
      return "unknown";
    }
    const again = acc.hasResult(line.run_id);
    if (again) {
      this.counts.duplicates++;
      if (duplicates === "skip") return "duplicate";
    } else if (replay) this.counts.replayed++;
    else this.counts.applied++;
    const wasComplete = acc.isComplete();
    acc.addResult(line);
    t.changed = true;
    // A replaced result of a scored track: score it again.
    if (again && t.final) t.final = undefined;
    if (!replay && acc.isComplete() && (!wasComplete || (again && !t.final))) {
      t.completedAt = performance.now();
      this.queue(name, t);
    }
    return again ? "replaced" : "applied";
  }

  /** Queues, in scope order, every complete track not yet scored (after a replay). */
  queueComplete(): void {
    for (const [name, t] of this.tracks) if (!t.final && this.accOf(t).isComplete()) this.queue(name, t);
  }

  private queue(name: string, t: TrackState): void {
    if (t.queued) return;
    t.queued = true;
    this.completed.push(name);
  }

  /**
   * Scores the queued tracks, in the order they completed; returns their final metrics and, for a
   * track completed by a live result, the seconds since that result was applied.
   */
  finishCompleted(): Array<{ track: string; metrics: TrackMetrics; secondsSinceComplete: number | undefined }> {
    const names = this.completed;
    this.completed = [];
    return names.map((track) => {
      const t = this.tracks.get(track)!;
      t.queued = false;
      const metrics = this.finishTrack(track, t).metrics;
      const since = t.completedAt;
      t.completedAt = undefined;
      return { track, metrics, secondsSinceComplete: since === undefined ? undefined : (performance.now() - since) / 1000 };
    });
  }

  private finishTrack(name: string, t: TrackState): FinalTrack {
    const acc = this.accOf(t);
    const log = this.options.log;
    if (!acc.isComplete()) log.warn(`track ${name}: ${acc.recordCount - acc.resultCount} of ${acc.recordCount} records have no result line (scored as missing)`);
    if (acc.invalidDistributions > 0) log.warn(`track ${name}: ${acc.invalidDistributions} invalid distribution(s) scored as missing`);
    t.final = { metrics: acc.finish(), resamples: acc.headlineResamples() };
    t.changed = false;
    return t.final;
  }

  /** Scores every track not scored yet (complete or not: missing records count as missing). */
  finishAll(): void {
    for (const [name, t] of this.tracks) if (!t.final) this.finishTrack(name, t);
    this.completed = [];
    for (const t of this.tracks.values()) t.queued = false;
  }

  /** Final metrics of every track, in scope order (what a shard of `score` hands back). */
  finals(): Array<{ track: string } & FinalTrack> {
    this.finishAll();
    return [...this.tracks].map(([track, t]) => ({ track, ...t.final! }));
  }

  /** Running metrics of the unscored tracks with results since the last call. */
  takeRunning(): Array<{ track: string; results: number; metrics: TrackMetrics }> {
    const out: Array<{ track: string; results: number; metrics: TrackMetrics }> = [];
    for (const [track, t] of this.tracks) {
      if (t.final || !t.changed) continue;
      t.changed = false;
      const acc = this.accOf(t);
      out.push({ track, results: acc.resultCount, metrics: acc.finish() });
    }
    return out;
  }

  /** metrics.json of the tracks scored so far, in scope order (every track, after finishAll()). */
  partial(): MetricsJson {
    const tracks: Record<string, TrackMetrics> = {};
    for (const [name, t] of this.tracks) if (t.final) tracks[name] = t.final.metrics;
    const { families, pillars, summary } = aggregate(tracks, (n) => this.tracks.get(n)!.final!.resamples);
    return { format: METRICS_FORMAT, suite: { identity: this.identity, tracks: this.options.suite.files.length }, tracks, families, pillars, summary };
  }

  /** The interval of the v1 mean over the tracks scored so far (aggregate.ts v1Interval). */
  v1Interval(): Interval | null {
    const tracks: Record<string, TrackMetrics> = {};
    for (const [name, t] of this.tracks) if (t.final) tracks[name] = t.final.metrics;
    return v1Interval(tracks, (n) => this.tracks.get(n)!.final!.resamples);
  }

  /** Scores whatever is left and returns the whole metrics.json. */
  final(): MetricsJson {
    // Every track was scored when metrics.json was last written (a complete run's last result
    // scored its last track): that is the final metrics, not computed again (issue 26: the exit).
    if (this.lastWritten && this.writtenWhole) return this.lastWritten;
    this.finishAll();
    return this.partial();
  }

  /** metrics.json was last written with every track in scope scored. */
  private writtenWhole = false;

  writeMetrics(path: string, metrics: MetricsJson = this.partial()): MetricsJson {
    writeMetricsJson(path, metrics);
    this.lastWritten = metrics;
    this.writtenWhole = [...this.tracks.values()].every((t) => t.final !== undefined);
    return metrics;
  }

  /** Where each track stands, in scope order. */
  progress(): TrackProgress[] {
    return [...this.tracks].map(([track, t]) => {
      const acc = t.acc;
      return {
        track,
        family: t.file.family,
        records: acc?.recordCount ?? t.final?.metrics.records ?? 0,
        results: acc?.resultCount ?? t.final?.metrics.records ?? 0,
        complete: acc?.isComplete() ?? t.final !== undefined,
        headline: t.final?.metrics.headline ?? null,
        missing: t.final?.metrics.missing ?? null,
        invalidDistributions: acc?.invalidDistributions ?? 0,
      };
    });
  }

  private accOf(t: TrackState): TrackAccumulator {
    if (!t.acc) throw new UsageError(`track ${t.file.track}: scored elsewhere; this scorer holds only its final metrics`);
    return t.acc;
  }
}

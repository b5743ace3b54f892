// The coordinator's committed results as a source of the scorer core (the embedded `run`): the suite's
// gold comes from the coordinator's one pass over the suite (goldFeed) or is read here (load), the
// results already in the out dir (a resumed run) are replayed from disk (track by track as the
// coordinator scans each file, with the gold feed), then every line the coordinator commits is
// applied as it comes. Each track is scored the moment its last
// record is in and metrics.json is rewritten with the tracks done so far; finish() writes the whole
// metrics.json, what `udm-orch score` computes from the same files.
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../common/log.js";
import { isCommittedLine, readScoredPart, resultFiles, scoredText, trackResultsPath, type CommittedLine, type ResultInput } from "../common/results/index.js";
import { selectFiles, openCheckedSuite, goldRecordsOf, type GoldMessage } from "../common/suite/index.js";
import { METRICS_FILE, type MetricsJson } from "./metrics-json.js";
import { applyResultFiles } from "./result-files.js";
import type { Interval } from "./bootstrap.js";
import { RunScorer } from "./run-scorer.js";
import type { TrackMetrics } from "./track-metrics.js";

export interface CommitScorerOptions {
  suiteDir: string;
  /** The coordinator's out dir: its `<family>/<track>.jsonl` files, and metrics.json. */
  outDir: string;
  tracks?: readonly string[];
  families?: readonly string[];
  /** Records per track at most, whole groups (`--limit`); all when absent. */
  limit?: number;
  log: Logger;
  /** Called with each track's final metrics as soon as they are computed. */
  onTrackFinal?: (track: string, metrics: TrackMetrics) => void;
  /** Called when a track's metrics are out, `seconds` after the commit that completed it. */
  onEmitted?: (track: string, seconds: number) => void;
}

export class CommitScorer {
  private scorer: RunScorer | undefined;
  /** Lines committed before the scorer was loaded and had replayed the disk. */
  private early: ResultInput[] | undefined = [];
  /** Results files replayed as their track's gold and scan came (a resumed run), and the chain of those replays. */
  private readonly replayedFiles = new Set<string>();
  private replaying: Promise<void> = Promise.resolve();

  constructor(private readonly options: CommitScorerOptions) {}

  get metricsPath(): string {
    return join(this.options.outDir, METRICS_FILE);
  }

  /** The scorer core (once loaded): per-track progress, counts, partial metrics. */
  get core(): RunScorer | undefined {
    return this.scorer;
  }

  /** Reads the suite's gold of the tracks in scope. Can run while the coordinator starts. */
  async load(): Promise<void> {
    const suite = openCheckedSuite(this.options.suiteDir);
    const { tracks, families } = this.options;
    const scope = selectFiles(suite, { ...(tracks ? { tracks } : {}), ...(families ? { families } : {}) });
    this.scorer = await RunScorer.load({ suite, scope, duplicates: "replace", log: this.options.log, ...(this.options.limit !== undefined ? { limit: this.options.limit } : {}) });
  }

  /**
   * Instead of load(): the gold as the coordinator of this process reads the suite (its onGold), so
   * the suite is read once. `loaded` settles once the coordinator has sent every track and the
   * identity, or fails on gold that cannot be scored (naming file and line).
   */
  goldFeed(): { onGold: (message: GoldMessage) => void; loaded: Promise<void> } {
    let scorer: RunScorer;
    try {
      const suite = openCheckedSuite(this.options.suiteDir);
      const { tracks, families } = this.options;
      const scope = selectFiles(suite, { ...(tracks ? { tracks } : {}), ...(families ? { families } : {}) });
      scorer = RunScorer.awaitingGold({ suite, scope, duplicates: "replace", log: this.options.log, ...(this.options.limit !== undefined ? { limit: this.options.limit } : {}) });
    } catch (err) {
      // The coordinator opens the same suite and reports the same problem.
      return { onGold: () => undefined, loaded: Promise.reject(err) };
    }
    let resolve!: () => void;
    let reject!: (err: unknown) => void;
    const loaded = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    let failed = false;
    const onGold = (message: GoldMessage): void => {
      if (failed) return;
      try {
        if (message.kind === "track") scorer.addGold(message.track, goldRecordsOf(message.records), message.sha256);
        else if (message.kind === "resultsScanned") this.replayTrack(scorer, message.family, message.track);
        else {
          scorer.goldComplete(message.identity);
          this.scorer = scorer;
          resolve();
        }
      } catch (err) {
        failed = true;
        reject(err);
      }
    };
    return { onGold, loaded };
  }

  /**
   * Applies the results already on disk that were not replayed track by track (call once the
   * coordinator has opened its store, which repairs torn lines), then the lines committed
   * meanwhile; scores the tracks that are complete.
   */
  async replayCommitted(): Promise<void> {
    const scorer = this.scorer!;
    await this.replaying;
    const rest = resultFiles(this.options.outDir).filter((f) => !this.replayedFiles.has(f));
    await applyResultFiles(scorer, rest, { warnTornLines: false, replay: true, log: this.options.log });
    // A line both read from disk and committed meanwhile is the same line: applying it again changes nothing.
    for (const line of this.early ?? []) this.applyCommitted(line, true);
    this.early = undefined;
    scorer.queueComplete();
    this.finishCompleted();
  }

  /**
   * A resumed run's committed results of one track, read as soon as the coordinator has scanned its
   * file (and after its gold), so that they are not all read after the whole suite: lines the
   * coordinator commits meanwhile wait in `early` as before. A run_id's lines are in its track's
   * file only (the coordinator's store), so file by file gives what path order gives.
   */
  private replayTrack(scorer: RunScorer, family: string, track: string): void {
    if (!this.early || !scorer.hasGold(track)) return;
    const file = trackResultsPath(this.options.outDir, family, track);
    this.replayedFiles.add(file);
    const log = this.options.log;
    this.replaying = this.replaying.then(async () => {
      if (!existsSync(file)) return;
      try {
        await applyResultFiles(scorer, [file], { warnTornLines: false, replay: true, log });
        log.debug("committed results replayed", { track, file });
      } catch (err) {
        // Read again, whole, with the files left once all the gold is in: a line of a track whose gold
        // is not in yet is applied then, and a bad line is reported as it always was. Its lines read
        // now are read again in order, so the later line of a run_id still wins.
        this.replayedFiles.delete(file);
        log.debug("committed results left to the replay after the gold", { track, file, error: (err as Error).message });
      }
    });
  }

  /** One line the coordinator committed (fsynced): as written (text), or parsed. */
  committed(committed: CommittedLine | ResultInput): void {
    const line = isCommittedLine(committed) ? readScoredPart(scoredText(committed)) : committed;
    if (this.early) this.early.push(line);
    else {
      this.applyCommitted(line, false);
      this.finishCompleted();
    }
  }

  private applyCommitted(line: ResultInput, replay: boolean): void {
    const outcome = this.scorer!.apply(line, replay);
    if (outcome === "unknown" || outcome === "out-of-scope") this.options.log.warn("committed result outside the scored tracks ignored", { run_id: line.run_id });
  }

  private finishCompleted(): void {
    const done = this.scorer!.finishCompleted();
    if (done.length === 0) return;
    this.scorer!.writeMetrics(this.metricsPath);
    for (const { track, metrics, secondsSinceComplete } of done) {
      this.options.onTrackFinal?.(track, metrics);
      if (secondsSinceComplete !== undefined) this.options.onEmitted?.(track, secondsSinceComplete);
    }
  }

  /** metrics.json as last written (the tracks scored so far), without recomputing it. */
  current(): MetricsJson | undefined {
    return this.scorer?.lastWritten;
  }

  /** The interval of the v1 mean over the tracks scored so far; null before any. */
  v1Interval(): Interval | null {
    return this.scorer?.v1Interval() ?? null;
  }

  /** Tracks in scope (0 until loaded). */
  get tracksInScope(): number {
    return this.scorer?.trackNames.length ?? 0;
  }

  /** Scores what is left, writes metrics.json and returns it. */
  finish(): MetricsJson {
    const metrics = this.scorer!.final();
    return metrics === this.scorer!.lastWritten ? metrics : this.scorer!.writeMetrics(this.metricsPath, metrics);
  }
}

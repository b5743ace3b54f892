// The run card of one run, wired to its coordinator and the scorer core: what `run`, `coordinator`
// and each run of a `sweep` share. With `ownScorer` (coordinator, sweep) it also runs the scorer of
// the coordinator's committed results (metrics.json); `run` brings its own. The card follows each
// scored track (run-card.json) and is final when the coordinator is done.
import type { Logger } from "../common/log.js";
import type { GoldMessage } from "../common/suite/gold-feed.js";
import type { StoredResultLine } from "../common/results/format.js";
import type { RunStatus } from "../coordinator/run-status.js";
import type { RunOutcome } from "../coordinator/server.js";
import { CommitScorer } from "../scorer/commit-scorer.js";
import type { MetricsJson } from "../scorer/metrics-json.js";
import type { TrackMetrics } from "../scorer/track-metrics.js";
import type { Interval } from "../scorer/bootstrap.js";
import { CardRecorder } from "../card/card-recorder.js";
import type { MethodClass, RunCard } from "../card/run-card.js";
import { cardSetup, countersAtEnd, snapshotOf } from "./run-card-setup.js";

export interface RunCardSessionOptions {
  suiteDir: string;
  outDir: string;
  tracks?: readonly string[];
  families?: readonly string[];
  log: Logger;
  onTrackMetrics?: (track: string, metrics: TrackMetrics) => void;
  /** The run's scorer's interval of the v1 mean, when the scorer is not this session's own. */
  v1Interval?: () => Interval | null;
}

export interface CardFlags {
  method: string;
  /** Units per agent; null when each agent chooses (a cluster). */
  batchSize: number | null;
  methodClass: MethodClass;
  gpuHourUsd: number;
}

export class RunCardSession {
  private recorder: CardRecorder | undefined;
  private coordinator: { status(): Promise<RunStatus> } | undefined;
  /** The scorer of the coordinator's committed results, when this session runs one. */
  readonly scorer: CommitScorer | undefined;
  private scorerLoaded: Promise<void> | undefined;
  /** With goldFromCoordinator: the coordinator's onGold, which feeds this session's scorer. */
  readonly onGold: ((message: GoldMessage) => void) | undefined;

  /**
   * goldFromCoordinator: the scorer takes the suite's gold from the coordinator's one pass over the
   * suite (pass `onGold` to the coordinator's options) instead of reading the suite itself.
   */
  constructor(private readonly options: RunCardSessionOptions & { ownScorer?: boolean; goldFromCoordinator?: boolean }) {
    if (options.ownScorer) {
      const scorer = new CommitScorer({
        suiteDir: options.suiteDir,
        outDir: options.outDir,
        ...(options.tracks ? { tracks: options.tracks } : {}),
        ...(options.families ? { families: options.families } : {}),
        log: options.log,
        onTrackFinal: (track, m) => {
          this.trackScored(track, m, scorer.current());
          options.onTrackMetrics?.(track, m);
        },
      });
      this.scorer = scorer;
      if (options.goldFromCoordinator) {
        const feed = scorer.goldFeed();
        this.onGold = feed.onGold;
        this.scorerLoaded = feed.loaded;
      } else {
        // The gold is read while the coordinator indexes the suite.
        this.scorerLoaded = scorer.load();
      }
      this.scorerLoaded.catch(() => undefined);
    }
  }

  /** For the coordinator's onCommitted, when this session runs the scorer. */
  readonly onCommitted = (line: StoredResultLine): void => this.scorer?.committed(line);

  /** A track's final metrics are out (and metrics.json so far): its results file is final too. */
  trackScored(track: string, m: TrackMetrics, partial: MetricsJson | undefined): void {
    this.recorder?.trackComplete(m.family, track, partial);
  }

  /** The coordinator is listening (run.json is written): write the `running` card. */
  async started(coordinator: { status(): Promise<RunStatus> }, flags: CardFlags): Promise<void> {
    this.coordinator = coordinator;
    const status = await coordinator.status();
    if (this.scorer) {
      await this.scorerLoaded;
      await this.scorer.replayCommitted();
    }
    this.recorder = new CardRecorder({
      outDir: this.options.outDir,
      setup: cardSetup({ suiteDir: this.options.suiteDir, entryCount: status.recordsTotal, ...flags }),
      snapshot: async () => snapshotOf(await coordinator.status()),
      v1Interval: () => (this.scorer ? this.scorer.v1Interval() : (this.options.v1Interval?.() ?? null)),
    });
    await this.recorder.start();
  }

  /** The coordinator is done: final metrics (when complete) and the final card. */
  async finished(outcome: RunOutcome, runMetrics?: MetricsJson): Promise<{ metrics: MetricsJson | undefined; card: RunCard; cardPath: string }> {
    const recorder = this.recorder;
    if (!recorder) throw new Error("RunCardSession.finished before started");
    // The stopped coordinator's final status: totals and the models that answered up to the last
    // result, which the card's periodic reads can miss in a run shorter than their period.
    const final = await this.coordinator?.status().then(snapshotOf, () => undefined);
    recorder.coordinatorStopped(countersAtEnd(outcome), final);
    const metrics = runMetrics ?? (outcome.state === "complete" && this.scorer ? this.scorer.finish() : undefined);
    const card = await recorder.finish(outcome.state, metrics);
    return { metrics, card, cardPath: recorder.path };
  }

  /** The run broke off (an exception): the card says failed; a rerun resumes it. */
  async failed(): Promise<void> {
    if (this.recorder && !this.recorder.isFinished) await this.recorder.finish("failed").catch(() => undefined);
  }
}

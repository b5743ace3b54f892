// The live scorer and the run card of one run, wired to its coordinator: what `run`, `coordinator`
// and each run of a `sweep` share. The scorer scores each track as it completes (metrics.json);
// the card follows (run-card.json), and both are final when the coordinator is done.
import type { Logger } from "../common/log.js";
import type { RunStatus } from "../coordinator/run-status.js";
import type { RunOutcome } from "../coordinator/server.js";
import { LiveScorer } from "../scorer/live-scorer.js";
import type { MetricsJson } from "../scorer/score-results.js";
import type { TrackMetrics } from "../scorer/track-metrics.js";
import { CardRecorder } from "../card/card-recorder.js";
import type { MethodClass, RunCard } from "../card/run-card.js";
import { cardSetup, countersAtEnd, snapshotOf } from "./run-card-setup.js";

export interface RunCardSessionOptions {
  suiteDir: string;
  outDir: string;
  metricsPath: string;
  tracks?: readonly string[];
  families?: readonly string[];
  log: Logger;
  onTrackMetrics?: (track: string, metrics: TrackMetrics) => void;
}

export interface CardFlags {
  method: string;
  /** Units per agent; null when each agent chooses (a cluster). */
  batchSize: number | null;
  methodClass: MethodClass;
  gpuHourUsd: number;
}

export class RunCardSession {
  readonly scorer: LiveScorer;
  private recorder: CardRecorder | undefined;

  constructor(private readonly options: RunCardSessionOptions) {
    this.scorer = new LiveScorer({
      suiteDir: options.suiteDir,
      resultsDir: options.outDir,
      metricsPath: options.metricsPath,
      ...(options.tracks ? { tracks: options.tracks } : {}),
      ...(options.families ? { families: options.families } : {}),
      log: options.log,
      onTrackMetrics: (track, m) => {
        this.recorder?.trackComplete(m.family, track, this.scorer.partial());
        options.onTrackMetrics?.(track, m);
      },
    });
  }

  /** For the coordinator's onTrackComplete. */
  readonly onTrackComplete = (track: string, family: string): void => this.scorer.trackComplete(track, family);

  /** The coordinator is listening (run.json is written): write the `running` card. */
  async started(coordinator: { initialStatus: RunStatus; status(): Promise<RunStatus> }, flags: CardFlags): Promise<void> {
    const status = coordinator.initialStatus;
    this.scorer.setSuite(status.suite_identity, status.tracks.length);
    this.recorder = new CardRecorder({
      outDir: this.options.outDir,
      setup: cardSetup({ suiteDir: this.options.suiteDir, entryCount: Number(status.records_total), ...flags }),
      snapshot: async () => snapshotOf(await coordinator.status()),
    });
    await this.recorder.start();
  }

  /** The coordinator is done: final metrics (when complete) and the final card. */
  async finished(outcome: RunOutcome): Promise<{ metrics: MetricsJson | undefined; card: RunCard; cardPath: string }> {
    const recorder = this.recorder;
    if (!recorder) throw new Error("RunCardSession.finished before started");
    recorder.coordinatorStopped(countersAtEnd(outcome));
    const metrics = outcome.state === "complete" ? await this.scorer.finish() : undefined;
    const card = await recorder.finish(outcome.state, metrics);
    return { metrics, card, cardPath: recorder.path };
  }

  /** The run broke off (an exception): the card says failed; a rerun resumes it. */
  async failed(): Promise<void> {
    if (this.recorder && !this.recorder.isFinished) await this.recorder.finish("failed").catch(() => undefined);
  }
}

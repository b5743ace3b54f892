// The run card of one run, wired to its coordinator and the scorer core: what `run`, `coordinator`
// and each run of a `sweep` share. With `ownScorer` (coordinator, sweep) it also runs the scorer of
// the coordinator's committed results (metrics.json), in a thread of its own when built; `run`
// brings its own. The card follows each
// scored track (run-card.json) and is final when the coordinator is done.
import type { KeyObject } from "node:crypto";
import type { Logger } from "../common/log.js";
import type { GoldMessage } from "../common/suite/index.js";
import type { CommittedLine, ResultsSeal } from "../common/results/index.js";
import { type RunStatus, type RunOutcome, workerEntry } from "../coordinator/index.js";
import { CommitScorer, CommitScorerThread, scorerThreadEntry, type ScorerFeed, type MetricsJson, type TrackMetrics, type Interval } from "../scorer/index.js";
import { CardRecorder, type MethodClass, type RunCard } from "../card/index.js";
import { cardSetup, countersAtEnd } from "./run-card-setup.js";

export interface RunCardSessionOptions {
  suiteDir: string;
  outDir: string;
  tracks?: readonly string[];
  families?: readonly string[];
  /** Records per track at most (`--limit`); all when absent. */
  limit?: number;
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
  /** Sign each card written with this ed25519 private key (--sign-key). */
  signKey?: KeyObject;
}

/** The coordinator options that feed a session's scorer: a scorer thread's feed, or callbacks in this thread. */
export type ScorerFeedOptions = { scorerFeed: ScorerFeed } | { onCommitted: (line: CommittedLine) => void; onGold: (message: GoldMessage) => void } | Record<never, never>;

/** The scorer of the coordinator's committed results, in its own thread (the build) or in this one (from sources). */
interface SessionScorer {
  readonly feed: ScorerFeedOptions;
  readonly loaded: Promise<void>;
  replayCommitted(): Promise<void>;
  current(): MetricsJson | undefined;
  v1Interval(): Interval | null;
  finish(): Promise<MetricsJson>;
  close(): Promise<void>;
}

export class RunCardSession {
  private recorder: CardRecorder | undefined;
  private coordinator: { status(): Promise<RunStatus> } | undefined;
  /** The scorer of the coordinator's committed results, when this session runs one. */
  private readonly scorer: SessionScorer | undefined;

  /**
   * With ownScorer, the session scores the coordinator's committed results (metrics.json): pass
   * `scorerFeed` to the coordinator's options. Built, and with the coordinator in its worker thread,
   * the scorer has a thread of its own that the coordinator's thread feeds directly; from sources
   * the scorer runs in this thread, fed by onCommitted and onGold. Either way it takes the suite's
   * gold from the coordinator's one pass over the suite.
   */
  constructor(private readonly options: RunCardSessionOptions & { ownScorer?: boolean; scorerMaxHeapMb?: number }) {
    if (!options.ownScorer) return;
    const scope = { ...(options.tracks ? { tracks: options.tracks } : {}), ...(options.families ? { families: options.families } : {}), ...(options.limit !== undefined ? { limit: options.limit } : {}) };
    const onTrackFinal = (track: string, m: TrackMetrics, current: MetricsJson | undefined) => {
      this.trackScored(track, m, current);
      options.onTrackMetrics?.(track, m);
    };
    const entry = scorerThreadEntry();
    if (entry && workerEntry()) {
      const thread = new CommitScorerThread(
        { suiteDir: options.suiteDir, outDir: options.outDir, ...scope, onTrackFinal, ...(options.scorerMaxHeapMb ? { maxHeapMb: options.scorerMaxHeapMb } : {}) },
        entry,
      );
      this.scorer = {
        feed: { scorerFeed: thread.feed },
        loaded: thread.loaded,
        replayCommitted: () => thread.replayCommitted(),
        current: () => thread.current(),
        v1Interval: () => thread.v1Interval(),
        finish: () => thread.finish(),
        close: () => thread.close(),
      };
      return;
    }
    const scorer: CommitScorer = new CommitScorer({
      suiteDir: options.suiteDir,
      outDir: options.outDir,
      ...scope,
      log: options.log,
      onTrackFinal: (track, m) => onTrackFinal(track, m, scorer.current()),
    });
    const gold = scorer.goldFeed();
    gold.loaded.catch(() => undefined);
    this.scorer = {
      feed: { onCommitted: (line) => scorer.committed(line), onGold: gold.onGold },
      loaded: gold.loaded,
      replayCommitted: () => scorer.replayCommitted(),
      current: () => scorer.current(),
      v1Interval: () => scorer.v1Interval(),
      finish: async () => scorer.finish(),
      close: async () => undefined,
    };
  }

  /** Spread into the coordinator's options: what feeds this session's scorer (nothing without one). */
  get scorerFeed(): ScorerFeedOptions {
    return this.scorer?.feed ?? {};
  }

  /** A track's final metrics are out (and metrics.json so far): its results file is final too. */
  trackScored(track: string, m: TrackMetrics, partial: MetricsJson | undefined): void {
    this.recorder?.trackComplete(m.family, track, partial);
  }

  /** The coordinator is listening (run.json is written): write the `running` card. */
  async started(coordinator: { status(): Promise<RunStatus>; done?: Promise<unknown> }, flags: CardFlags): Promise<void> {
    this.coordinator = coordinator;
    if (this.scorer) {
      // A suite file that fails verification while the run serves ends it before the gold feed
      // ends (issue 26): the card is then written, and finished, without the scorer.
      // A complete run's gold has ended: then the scorer always replays.
      const never = new Promise<never>(() => undefined);
      const ended = coordinator.done ? coordinator.done.then((o) => ((o as { state?: string }).state === "complete" ? never : ("ended" as const))) : never;
      if ((await Promise.race([this.scorer.loaded.then(() => "loaded" as const), ended])) === "loaded") await this.scorer.replayCommitted();
    }
    // After the gold: the coordinator serves while the suite is read (issue 26), and its totals are
    // whole once the gold feed has ended.
    const status = await coordinator.status();
    this.recorder = new CardRecorder({
      outDir: this.options.outDir,
      setup: cardSetup({ suiteDir: this.options.suiteDir, entryCount: status.recordsTotal, method: flags.method, batchSize: flags.batchSize, methodClass: flags.methodClass, gpuHourUsd: flags.gpuHourUsd }),
      ...(flags.signKey ? { signKey: flags.signKey } : {}),
      status: () => coordinator.status(),
      v1Interval: () => (this.scorer ? this.scorer.v1Interval() : (this.options.v1Interval?.() ?? null)),
    });
    await this.recorder.start();
  }

  /** The coordinator is done: final metrics (when complete) and the final card. */
  /** `seal`: the results files sealed once the run completed (sealed here when absent). */
  async finished(outcome: RunOutcome, runMetrics?: MetricsJson, seal?: ResultsSeal): Promise<{ metrics: MetricsJson | undefined; card: RunCard; cardPath: string }> {
    const recorder = this.recorder;
    if (!recorder) throw new Error("RunCardSession.finished before started");
    // The stopped coordinator's final status: totals and the models that answered up to the last
    // result, which the card's periodic reads can miss in a run shorter than their period.
    // The scorer's last metrics are taken while the coordinator stops (its final status waits for that).
    const [final, metrics] = await Promise.all([
      this.coordinator?.status().catch(() => undefined),
      runMetrics ?? (outcome.state === "complete" && this.scorer ? this.scorer.finish() : undefined),
    ]);
    recorder.coordinatorStopped(countersAtEnd(outcome), final);
    await this.scorer?.close();
    const card = await recorder.finish(outcome.state, metrics, seal);
    return { metrics, card, cardPath: recorder.path };
  }

  /** The run broke off (an exception): the card says failed; a rerun resumes it. */
  async failed(): Promise<void> {
    await this.scorer?.close();
    if (this.recorder && !this.recorder.isFinished) await this.recorder.finish("failed").catch(() => undefined);
  }
}

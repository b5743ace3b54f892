// The messages of the scorer thread (commit-scorer-main.ts): the feed it takes straight from the
// coordinator's thread (gold, committed lines), and each direction between it and its host
// (commit-scorer-thread.ts), each a discriminated union.
import type { MessagePort } from "node:worker_threads";
import type { LogLevel } from "../common/log.js";
import type { GoldMessage } from "../common/suite/index.js";
import type { ThreadError } from "../common/thread-error.js";
import type { Interval } from "./bootstrap.js";
import type { CommitScorerOptions } from "./commit-scorer.js";
import type { MetricsJson } from "./metrics-json.js";
import type { TrackMetrics } from "./track-metrics.js";

/** Coordinator thread -> scorer thread, on the port the host hands to both. */
export type ScorerFeedMessage =
  | { type: "gold"; message: GoldMessage }
  /**
   * Lines committed together (one results-store flush), in commit order: their texts as written and,
   * for each, where the part a scorer reads ends (CommittedLine.scoredLength, -1 for the whole text;
   * common/results scoredPart), cut here: cut in the coordinator's thread, each part was a new
   * string of its own there, flattened to be sent. Not joined into one text: a flush's lines joined
   * are a large object in the sending thread's old generation, and the coordinator's thread sends
   * thousands of lines a second.
   */
  | { type: "committed"; lines: string[]; scoredLengths: number[] }
  /** The run ended: every line it committed was sent before this. */
  | { type: "end" };

/** workerData of the scorer thread: the CommitScorer's cloneable options, its log level and the feed. */
export type ScorerThreadStartData = Pick<CommitScorerOptions, "suiteDir" | "outDir" | "tracks" | "families" | "limit"> & {
  logLevel?: LogLevel;
  /** The feed's receiving end (transferred). */
  feed: MessagePort;
};

export type HostToScorer = { type: "replay" } | { type: "finish" };

export type ScorerToHost =
  /** Every track's gold is in. */
  | { type: "loaded" }
  | { type: "replayed"; current: MetricsJson | undefined; v1Interval: Interval | null }
  /** A track's final metrics, metrics.json as now written and the v1 interval so far. */
  | { type: "trackFinal"; track: string; metrics: TrackMetrics; current: MetricsJson | undefined; v1Interval: Interval | null }
  | { type: "finished"; metrics: MetricsJson }
  | { type: "error"; error: ThreadError };

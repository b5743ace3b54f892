// The scorer's front door: pure metrics under streaming accumulators, the commit scorer thread, the
// streaming scorer over the bus, the scorer process (Scorer), and the files they write. What the
// coordinator, card/ and cli/ may use.
export type { Interval } from "./bootstrap.js";
export type { ScorerFeedMessage } from "./commit-scorer-messages.js";
export { CommitScorerThread, DEFAULT_SCORER_HEAP_MB, scorerThreadEntry, type ScorerFeed } from "./commit-scorer-thread.js";
export { CommitScorer } from "./commit-scorer.js";
export { METRICS_FILE, writeMetricsJson, type MetricsJson } from "./metrics-json.js";
export { Xoshiro128 } from "./prng.js";
export { RunScorer } from "./run-scorer.js";
export { scoreResults, scoreResultsWithInterval } from "./score-results.js";
export { registerScorerMetrics, scorerCountsOf } from "./scorer-metrics.js";
export { StreamingScorer, chooseRun } from "./streaming-scorer.js";
export type { TrackMetrics } from "./track-metrics.js";
export { Scorer, type ScorerOptions, type ScorerReport } from "./scorer.js";
export { PERMUTATIONS, compareRuns, type CompareRunsOptions, type PairedDifference, type RunComparison, type TrackComparison } from "./paired-compare.js";

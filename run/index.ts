// The run's front door: what cli/ and bench/ may use of run/ (a run served to a cluster, the
// one-process run with its agents, a sweep of runs, the dataset id of run cards).
export { Run, type RunOptions } from "./run.js";
export { EmbeddedRun, EMBEDDED_RUN_DEFAULTS, withEmbeddedRunDefaults, type EmbeddedRunOptions, type EmbeddedRunResult } from "./embedded-run.js";
export { Sweep, planSweep, type SweepOptions, type SweepPlan } from "./sweep.js";
export { DATASET_ID } from "./run-card-setup.js";
export { readOutDirStatus, type OutDirStatus, type OutDirTrack } from "./out-dir-status.js";

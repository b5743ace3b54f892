// The run's front door: what cli/ and bench/ may use of run/ (a run served to a cluster, the
// one-process run with its agents, the run card of a run, the engine methods an agent drives).
export { Run, type RunOptions } from "./run.js";
export { EmbeddedRun, type EmbeddedRunOptions, type EmbeddedRunResult } from "./embedded-run.js";
export { RunCardSession, type RunCardSessionOptions, type CardFlags } from "./run-card-session.js";
export { DATASET_ID, DEFAULT_AGENT_CAPACITY, methodTemplate } from "./run-card-setup.js";
export { METHODS, methodFactory, type MethodSetup, type SeededMethod } from "./engine-methods.js";

// The run status's front door: the one domain type of what a coordinator reports of its run.
export { REJECT_REASONS, RUN_END_STATES, RUN_STATES, startingStatus, type AgentStatus, type LatencySummary, type RejectReason, type RunStatus, type RunStatusState, type RunTotals, type TrackProgress } from "./run-status.js";

// What an agent has done so far, for logs, the CLI and tests.
import type { AgentState } from "./agent-state.js";
import type { EngineLoad } from "./engine-load.js";

/** Counters kept across every Attach stream of one agent. */
export interface AgentStatsCounters {
  /** Attach streams opened. */
  attaches: number;
  /** Streams that ended without a Drain (coordinator gone or restarting). */
  disconnects: number;
  creditGranted: number;
  unitsReceived: number;
  unitsDone: number;
  unitsCancelled: number;
  /** Units in hand when a stream broke or the engine stopped answering; the coordinator requeues them at once. */
  unitsDropped: number;
  recordsAnswered: number;
  /** Records answered with an error for every question (method threw, unreadable payload). */
  recordFailures: number;
  resultsSent: number;
  heartbeatsSent: number;
  /** Labels engines answered that were not options of the question (dropped). */
  unknownLabels: number;
  engineLoad: EngineLoad | undefined;
}

export interface AgentStats extends AgentStatsCounters {
  state: AgentState;
  agentId: string;
  ready: boolean;
  model: string | undefined;
  runId: string | undefined;
  inflightUnits: number;
  inflightRecords: number;
  lastError: string | undefined;
}

export function newCounters(): AgentStatsCounters {
  return {
    attaches: 0,
    disconnects: 0,
    creditGranted: 0,
    unitsReceived: 0,
    unitsDone: 0,
    unitsCancelled: 0,
    unitsDropped: 0,
    recordsAnswered: 0,
    recordFailures: 0,
    resultsSent: 0,
    heartbeatsSent: 0,
    unknownLabels: 0,
    engineLoad: undefined,
  };
}

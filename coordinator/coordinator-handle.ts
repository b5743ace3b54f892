// What a started coordinator gives its caller, the same whether it runs in this thread
// (server.ts) or in a heap-capped worker thread (worker-host.ts).
import type { CoordinatorState, RunEnd } from "./lifecycle.js";
import type { RunStatus } from "../common/run-status/index.js";
import type { SchedulerCounters } from "./scheduler.js";

export interface RunOutcome {
  state: RunEnd;
  runId: string;
  recordsTotal: number;
  recordsCommitted: number;
  recordsResumed: number;
  /** Committed records whose line has errors (a question the engine failed); a rerun redoes them. */
  recordsErrored: number;
  counters: SchedulerCounters;
  elapsedSeconds: number;
  /** Why the run failed, when it did. */
  error?: string;
  /** The failure was bad input (a suite file that failed verification while the run served): exit 2, not 1. */
  badInput?: boolean;
}

export interface CoordinatorHandle {
  /** host:port as agents should dial it, e.g. "127.0.0.1:43123". */
  address: string;
  port: number;
  /** The run's stable id (run.json), the same across resumes. */
  runId: string;
  outDir: string;
  /**
   * Resolves once every record in scope is committed (complete), or when the coordinator stops. A
   * complete run's coordinator goes on serving until drain() or close(): an agent that attaches
   * meanwhile is told to drain.
   */
  done: Promise<RunOutcome>;
  state(): CoordinatorState;
  /** The run's status; once stopped, its final status (a thread that died answers with an error). */
  status(): Promise<RunStatus>;
  /** Prometheus text of the coordinator's metrics ("" without options.metrics; the final page once stopped). */
  metricsText(): Promise<string>;
  /**
   * Stops handing out units, sends Drain, waits for agents (drainTimeoutMs), flushes, shuts down.
   * With `restart` (and the run not complete) the Drain tells agents to reattach to the next
   * coordinator instead of stopping; a later drain() without it tells them to stop after all.
   */
  drain(restart?: boolean): Promise<void>;
  /** Like drain() but waits at most 2 s for agents. */
  close(): Promise<void>;
}

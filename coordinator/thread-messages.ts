// The messages between a coordinator's worker thread (worker-main.ts) and its host
// (worker-host.ts), each direction one discriminated union.
import type { MessagePort } from "node:worker_threads";
import type { LogLevel } from "../common/log.js";
import type { GoldMessage } from "../common/suite/index.js";
import type { NatsBusOptions } from "../common/bus/index.js";
import type { RunOutcome } from "./coordinator-handle.js";
import type { CommittedLine } from "../common/results/index.js";
import type { RunStatus } from "../common/run-status/index.js";
import type { CoordinatorOptions } from "./coordinator-options.js";
import type { ThreadError } from "../common/thread-error.js";
import type { LiveEvent } from "./observability/live-event.js";

/** workerData: the coordinator's options that can be cloned, and which callbacks to forward. */
export type WorkerStartData = Omit<CoordinatorOptions, "logger" | "bus" | "onCommitted" | "onTrackComplete" | "onLiveEvent" | "onGold" | "beforeTrackRead" | "lineWriter"> & {
  forwardCommitted: boolean;
  forwardGold: boolean;
  forwardTrackComplete: boolean;
  forwardLiveEvents: boolean;
  /** The sending end of a scorer thread's feed (transferred): gold and committed lines go there instead of to the host. */
  scorerFeed?: MessagePort;
  nats?: Omit<NatsBusOptions, "logger">;
  logLevel?: LogLevel;
};

export type HostToWorker = { type: "drain"; restart?: boolean } | { type: "close" } | { type: "status"; requestId: number } | { type: "metrics"; requestId: number };

export type WorkerToHost =
  | { type: "listening"; address: string; port: number; runId: string; outDir: string }
  /** Lines committed together (one results-store flush), in commit order: one message, not one per line. */
  | { type: "committed"; lines: CommittedLine[] }
  | { type: "trackComplete"; track: string; family: string }
  | { type: "gold"; message: GoldMessage }
  | { type: "liveEvent"; event: LiveEvent }
  | { type: "status"; requestId: number; status: RunStatus }
  | { type: "metrics"; requestId: number; text: string }
  /** The run ended (done); a complete run's coordinator still serves until the host says drain or close. */
  | { type: "outcome"; outcome: RunOutcome }
  /** The coordinator stopped. metrics, status: its last metrics page and status (the thread answers nothing after). */
  | { type: "done"; outcome: RunOutcome; metrics: string; status: RunStatus }
  | { type: "error"; error: ThreadError };

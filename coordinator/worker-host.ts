// Runs a coordinator in a worker thread whose V8 heap is capped, so `udm-orch coordinator` stays
// within a memory budget: V8 otherwise lets a heap with ~125 MB live grow to several hundred MB
// between major collections (measured on the full suite, bench/coordinator-bench.ts). Results are
// fsynced as they come, so a worker that runs out of heap loses nothing; a restart resumes.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { UdmError, UsageError } from "../common/errors.js";
import type { NatsBusOptions } from "../common/bus/nats.js";
import type { LogLevel } from "../common/log.js";
import type { RunStatus } from "./run-status.js";
import type { CoordinatorOptions, RunOutcome } from "./server.js";
import type { StoredResultLine } from "./results-store.js";
import type { LiveEvent } from "./observability/live-event.js";

/**
 * The coordinator's options without a logger (the worker logs to stderr). onCommitted and
 * onTrackComplete run in the calling thread, fed by messages from the worker.
 */
export type WorkerCoordinatorOptions = Omit<CoordinatorOptions, "logger" | "bus"> & {
  /** Publish to NATS JetStream: the worker connects (in the background, so NATS may be down) and owns the bus. */
  nats?: Omit<NatsBusOptions, "logger">;
  /** Level of the worker's own logger (a Logger cannot cross into the thread). Default: UDM_LOG_LEVEL or info. */
  logLevel?: LogLevel;
};

export interface WorkerCoordinator {
  address: string;
  port: number;
  runId: string;
  /** RunStatus when it started listening. */
  initialStatus: RunStatus;
  done: Promise<RunOutcome>;
  drain(): void;
  close(): void;
  status(): Promise<RunStatus>;
  metricsText(): Promise<string>;
}

/** The worker entry, present only in the build (dist/); undefined when running from sources. */
export function workerEntry(): URL | undefined {
  const url = new URL("./worker-main.js", import.meta.url);
  return existsSync(fileURLToPath(url)) ? url : undefined;
}

export function startCoordinatorInWorker(options: WorkerCoordinatorOptions, entry: URL, maxHeapMb: number): Promise<WorkerCoordinator> {
  const { onCommitted, onTrackComplete, onLiveEvent, ...cloneable } = options;
  const worker = new Worker(entry, {
    workerData: {
      ...cloneable,
      forwardCommitted: onCommitted !== undefined,
      forwardTrackComplete: onTrackComplete !== undefined,
      forwardLiveEvents: onLiveEvent !== undefined,
    },
    resourceLimits: { maxOldGenerationSizeMb: maxHeapMb, maxYoungGenerationSizeMb: 32 },
    stdout: false,
    stderr: false,
  });
  const statusWaiters: Array<(s: RunStatus) => void> = [];
  const metricsWaiters: Array<(text: string) => void> = [];
  /** The coordinator's last metrics, sent with "done" (the thread answers nothing after). */
  let finalMetrics = "";
  let resolveDone!: (o: RunOutcome) => void;
  let rejectDone!: (e: Error) => void;
  const done = new Promise<RunOutcome>((res, rej) => {
    resolveDone = res;
    rejectDone = rej;
  });
  return new Promise((resolve, reject) => {
    let listening = false;
    let finished = false;
    worker.on("message", (msg: Record<string, unknown>) => {
      switch (msg.type) {
        case "listening":
          listening = true;
          resolve({
            address: msg.address as string,
            port: msg.port as number,
            runId: msg.runId as string,
            initialStatus: msg.status as RunStatus,
            done,
            drain: () => worker.postMessage({ type: "drain" }),
            close: () => worker.postMessage({ type: "close" }),
            status: () => new Promise<RunStatus>((r) => {
              statusWaiters.push(r);
              worker.postMessage({ type: "status" });
            }),
            metricsText: () =>
              finished
                ? Promise.resolve(finalMetrics)
                : new Promise<string>((r) => {
                    metricsWaiters.push(r);
                    worker.postMessage({ type: "metrics" });
                  }),
          });
          break;
        case "committed":
          onCommitted?.(msg.line as StoredResultLine, msg.track as string);
          break;
        case "trackComplete":
          onTrackComplete?.(msg.track as string, msg.family as string);
          break;
        case "status":
          statusWaiters.shift()?.(msg.status as RunStatus);
          break;
        case "metrics":
          metricsWaiters.shift()?.(msg.text as string);
          break;
        case "liveEvent":
          onLiveEvent?.(msg.event as LiveEvent);
          break;
        case "done":
          finished = true;
          finalMetrics = (msg.metrics as string | undefined) ?? "";
          for (const w of metricsWaiters.splice(0)) w(finalMetrics);
          resolveDone(msg.outcome as RunOutcome);
          break;
        case "error": {
          finished = true;
          const err = msg.exitCode === 2 ? new UsageError(msg.message as string) : new UdmError(msg.message as string);
          if (listening) rejectDone(err);
          else reject(err);
          break;
        }
      }
    });
    const died = (err: Error) => {
      if (finished) return;
      finished = true;
      const oom = (err as NodeJS.ErrnoException).code === "ERR_WORKER_OUT_OF_MEMORY";
      const wrapped = new UdmError(
        oom
          ? `the coordinator ran out of its ${maxHeapMb} MB heap (raise --max-heap-mb); committed results are safe, start again to resume`
          : `the coordinator thread failed: ${err.message}`,
        { cause: err },
      );
      if (listening) rejectDone(wrapped);
      else reject(wrapped);
    };
    worker.on("error", died);
    worker.on("exit", (code) => {
      // Nothing will answer now: metrics readers get an empty page, not a hang.
      for (const w of metricsWaiters.splice(0)) w("");
      died(new Error(`exited with code ${code}`));
    });
  });
}

/** A coordinator in a heap-capped worker thread (from the build) or in this thread (from sources, tests). */
export interface BoundedCoordinator {
  address: string;
  runId: string;
  /** RunStatus when it started listening. */
  initialStatus: RunStatus;
  done: Promise<RunOutcome>;
  status(): Promise<RunStatus>;
  /** Prometheus text of the coordinator's metrics ("" without options.metrics or once stopped). */
  metricsText(): Promise<string>;
  drain(): void;
  close(): Promise<void> | void;
}

/** Default V8 old-generation cap of the coordinator thread (bench/coordinator-bench.ts: ~250 MB peak RSS on the full suite). */
export const DEFAULT_COORDINATOR_HEAP_MB = 256;

/** Coordinator options plus `nats`: a NATS bus the coordinator's thread opens (and may find down) and closes itself. */
export type BoundedCoordinatorOptions = CoordinatorOptions & Pick<WorkerCoordinatorOptions, "nats" | "logLevel">;

export async function startBoundedCoordinator(options: BoundedCoordinatorOptions, maxHeapMb = DEFAULT_COORDINATOR_HEAP_MB): Promise<BoundedCoordinator> {
  const entry = workerEntry();
  if (entry) {
    const { logger: _logger, bus, ...workerOptions } = options;
    if (bus) throw new UsageError("a coordinator in a worker thread opens its own bus: pass `nats`, not `bus`");
    const w = await startCoordinatorInWorker(workerOptions, entry, maxHeapMb);
    return { address: w.address, runId: w.runId, initialStatus: w.initialStatus, done: w.done, status: w.status, metricsText: w.metricsText, drain: w.drain, close: w.close };
  }
  const { startCoordinator } = await import("./server.js");
  const { nats, logLevel: _logLevel, ...inThread } = options;
  const { DeferredNatsBus } = await import("../common/bus/nats-deferred.js");
  const { createLogger } = await import("../common/log.js");
  const ownBus = nats ? new DeferredNatsBus({ ...nats, logger: createLogger("bus") }) : undefined;
  let h: Awaited<ReturnType<typeof startCoordinator>>;
  try {
    h = await startCoordinator({ ...inThread, ...(ownBus ? { bus: ownBus } : {}) });
  } catch (err) {
    await ownBus?.close();
    throw err;
  }
  return {
    address: h.address,
    runId: h.runId,
    initialStatus: h.status(),
    done: h.done,
    status: async () => h.status(),
    metricsText: () => h.metricsText(),
    drain: () => void h.drain(),
    close: async () => {
      await h.close();
      await ownBus?.close();
    },
  };
}

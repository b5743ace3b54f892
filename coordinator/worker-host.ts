// Runs a coordinator in a worker thread whose V8 heap is capped, so `udm-orch coordinator` stays
// within a memory budget: V8 otherwise lets a heap with ~125 MB live grow to several hundred MB
// between major collections (measured on the full suite, bench/coordinator-bench.ts). Results are
// fsynced as they come, so a worker that runs out of heap loses nothing; a restart resumes.
import { UdmError, UsageError } from "../common/errors.js";
import type { NatsBusOptions } from "../common/bus/index.js";
import type { LogLevel } from "../common/log.js";
import type { CoordinatorHandle, RunOutcome } from "./coordinator-handle.js";
import type { CoordinatorState } from "./lifecycle.js";
import type { RunStatus } from "../common/run-status/index.js";
import { DEFAULT_COORDINATOR_HEAP_MB, type CoordinatorOptions } from "./coordinator-options.js";
import { ThreadHost, threadEntry, type ThreadFailure } from "../common/threads/index.js";
import type { ScorerFeed } from "../scorer/index.js";
import type { HostToWorker, WorkerStartData, WorkerToHost } from "./thread-messages.js";

export { DEFAULT_COORDINATOR_HEAP_MB };

/**
 * The coordinator's options without a logger (the worker logs to stderr). onCommitted,
 * onTrackComplete, onGold (and onLiveEvent) run in the calling thread, fed by messages from the worker.
 */
export type WorkerCoordinatorOptions = Omit<CoordinatorOptions, "logger" | "bus"> & {
  /** Publish to NATS JetStream: the worker connects (in the background, so NATS may be down) and owns the bus. */
  nats?: Omit<NatsBusOptions, "logger">;
  /** Level of the worker's own logger (a Logger cannot cross into the thread). Default: UDM_LOG_LEVEL or info. */
  logLevel?: LogLevel;
  /**
   * A scorer thread's feed: the worker sends it the gold and the committed lines itself (instead of
   * onGold and onCommitted here), and a scoring failure ends the run with its error.
   */
  scorerFeed?: ScorerFeed;
};

/** The worker entry when running from the build (dist/); undefined from sources (common/threads: threadEntry). */
export function workerEntry(): URL | undefined {
  return threadEntry("./worker-main.js", import.meta.url);
}

export function startCoordinatorInWorker(options: WorkerCoordinatorOptions, entry: URL, maxHeapMb: number): Promise<CoordinatorHandle> {
  const { onCommitted, onTrackComplete, onLiveEvent, onGold, scorerFeed, ...cloneable } = options;
  if (scorerFeed && (onCommitted || onGold)) throw new UsageError("a coordinator feeds either a scorer thread or onCommitted/onGold, not both");
  const workerData: WorkerStartData = {
    ...cloneable,
    ...(scorerFeed ? { scorerFeed: scorerFeed.port } : {}),
    forwardCommitted: onCommitted !== undefined,
    forwardGold: onGold !== undefined,
    forwardTrackComplete: onTrackComplete !== undefined,
    forwardLiveEvents: onLiveEvent !== undefined,
  };
  let thread!: ThreadHost<HostToWorker, WorkerToHost>;
  const post = (msg: HostToWorker) => thread.post(msg);
  const statusWaiters = new Map<number, { resolve: (s: RunStatus) => void; reject: (e: Error) => void }>();
  const metricsWaiters = new Map<number, (text: string) => void>();
  /** The coordinator's last metrics and status, sent with "done" (the thread answers nothing after). */
  let finalMetrics = "";
  let finalStatus: RunStatus | undefined;
  let nextRequest = 0;
  let state: CoordinatorState = "starting";
  let resolveDone!: (o: RunOutcome) => void;
  let rejectDone!: (e: Error) => void;
  const done = new Promise<RunOutcome>((res, rej) => {
    resolveDone = res;
    rejectDone = rej;
  });
  // A scorer failure while the suite is still read settles done before the caller holds it.
  done.catch(() => undefined);
  // drain() and close() resolve once the worker has stopped, whether the run ended well or not.
  let markStopped!: () => void;
  const stopped = new Promise<void>((resolve) => (markStopped = resolve));
  const stop = (msg: HostToWorker): Promise<void> => {
    if (state === "running") {
      state = "draining";
      post(msg);
    } else if (state === "draining" && msg.type === "drain" && !msg.restart) {
      // A drain after a restart's: the agents told to reattach are told to stop.
      post(msg);
    }
    return stopped;
  };
  return new Promise((resolve, reject) => {
    let finished = false;
    const finish = (err?: Error, outcome?: RunOutcome) => {
      if (finished) return;
      finished = true;
      const listening = state !== "starting";
      state = "stopped";
      // A status asked for while the thread stopped gets its final status, as later asks do.
      for (const w of statusWaiters.values()) {
        if (finalStatus) w.resolve(finalStatus);
        else w.reject(err ?? new UdmError("the coordinator stopped"));
      }
      statusWaiters.clear();
      // Nothing will answer now: metrics readers get the final page (empty when the thread died), not a hang.
      for (const w of metricsWaiters.values()) w(finalMetrics);
      metricsWaiters.clear();
      if (outcome) resolveDone(outcome);
      else if (listening) rejectDone(err!);
      else reject(err!);
      markStopped();
    };
    // A callback of the caller that throws (the scorer cannot write metrics.json on a full disk)
    // ends the run with its error, not the process with a stack trace: the coordinator drains,
    // and what it committed stays committed.
    let callbackError: Error | undefined;
    const calling = (fn: () => void) => {
      if (callbackError) return;
      try {
        fn();
      } catch (err) {
        callbackError = err instanceof Error ? err : new Error(String(err));
        rejectDone(callbackError);
        void stop({ type: "drain" });
      }
    };
    void scorerFeed?.failure.then((err) => calling(() => {
      throw err;
    }));
    const onMessage = (msg: WorkerToHost) => {
      switch (msg.type) {
        case "listening":
          state = "running";
          resolve({
            address: msg.address,
            port: msg.port,
            runId: msg.runId,
            outDir: msg.outDir,
            done,
            state: () => state,
            status: () =>
              finished
                ? finalStatus
                  ? Promise.resolve(finalStatus)
                  : Promise.reject(new UdmError("the coordinator stopped"))
                : new Promise<RunStatus>((res, rej) => {
                    const requestId = ++nextRequest;
                    statusWaiters.set(requestId, { resolve: res, reject: rej });
                    post({ type: "status", requestId });
                  }),
            metricsText: () =>
              finished
                ? Promise.resolve(finalMetrics)
                : new Promise<string>((res) => {
                    const requestId = ++nextRequest;
                    metricsWaiters.set(requestId, res);
                    post({ type: "metrics", requestId });
                  }),
            drain: (restart) => stop({ type: "drain", ...(restart ? { restart } : {}) }),
            close: () => stop({ type: "close" }),
          });
          break;
        case "committed":
          if (onCommitted) calling(() => {
            for (const line of msg.lines) onCommitted(line);
          });
          break;
        case "trackComplete":
          if (onTrackComplete) calling(() => onTrackComplete(msg.track, msg.family));
          break;
        case "gold":
          if (onGold) calling(() => onGold(msg.message));
          break;
        case "status":
          statusWaiters.get(msg.requestId)?.resolve(msg.status);
          statusWaiters.delete(msg.requestId);
          break;
        case "metrics":
          metricsWaiters.get(msg.requestId)?.(msg.text);
          metricsWaiters.delete(msg.requestId);
          break;
        case "liveEvent":
          try {
            onLiveEvent?.(msg.event);
          } catch {
            // A live page that fails to publish an event does not stop the run (as in the host's thread).
          }
          break;
        case "outcome":
          resolveDone(msg.outcome);
          break;
        case "done":
          finalMetrics = msg.metrics;
          finalStatus = msg.status;
          finish(undefined, msg.outcome);
          break;
      }
    };
    const failed = (f: ThreadFailure) => {
      if (f.kind === "threw") return finish(f.error);
      const err = f.kind === "crashed" ? f.error : new Error(`exited with code ${f.code}`);
      const oom = f.kind === "crashed" && f.outOfMemory;
      finish(
        new UdmError(
          oom
            ? `the coordinator ran out of its ${maxHeapMb} MB heap (raise --max-heap-mb); committed results are safe, start again to resume`
            : `the coordinator thread failed: ${err.message}`,
          { cause: err },
        ),
      );
    };
    thread = new ThreadHost<HostToWorker, WorkerToHost>(entry, {
      workerData,
      ...(scorerFeed ? { transferList: [scorerFeed.port] } : {}),
      maxHeapMb,
      fatalError: (msg) => (msg.type === "error" ? msg.error : undefined),
      onMessage,
      onFailure: failed,
    });
  });
}

/** Coordinator options plus `nats`: a NATS bus the coordinator's thread opens (and may find down) and closes itself. */
export type BoundedCoordinatorOptions = CoordinatorOptions & Pick<WorkerCoordinatorOptions, "nats" | "logLevel" | "scorerFeed">;

/**
 * A coordinator in a heap-capped worker thread (from the build) or in this thread (from sources,
 * tests). The cap: `maxHeapMb`, else options.maxHeapMb, else DEFAULT_COORDINATOR_HEAP_MB.
 */
export async function startBoundedCoordinator(options: BoundedCoordinatorOptions, maxHeapMb = options.maxHeapMb ?? DEFAULT_COORDINATOR_HEAP_MB): Promise<CoordinatorHandle> {
  const entry = workerEntry();
  if (entry) {
    const { logger: _logger, bus, ...workerOptions } = options;
    if (bus) throw new UsageError("a coordinator in a worker thread opens its own bus: pass `nats`, not `bus`");
    return startCoordinatorInWorker(workerOptions, entry, maxHeapMb);
  }
  const { startCoordinator } = await import("./server.js");
  const { nats, logLevel: _logLevel, scorerFeed, ...inThread } = options;
  if (scorerFeed) throw new UsageError("a scorer thread is fed only by a coordinator in a worker thread (the build): pass onCommitted and onGold");
  const { DeferredNatsBus } = await import("../common/bus/index.js");
  const { createLogger } = await import("../common/log.js");
  const ownBus = nats ? new DeferredNatsBus({ ...nats, logger: createLogger("bus") }) : undefined;
  let h: CoordinatorHandle;
  try {
    h = await startCoordinator({ ...inThread, ...(ownBus ? { bus: ownBus } : {}) });
  } catch (err) {
    await ownBus?.close();
    throw err;
  }
  if (!ownBus) return h;
  const withBus = async (stop: () => Promise<void>) => {
    await stop();
    await ownBus.close();
  };
  return { ...h, drain: (restart) => withBus(() => h.drain(restart)), close: () => withBus(h.close) };
}

// The coordinator of the worker thread that worker-main.ts starts for worker-host.ts: the V8 heap
// of a worker can be capped (resourceLimits), which bounds the coordinator's memory where the main
// thread's heap cannot be capped after start.
import { parentPort, workerData } from "node:worker_threads";
import { DeferredNatsBus } from "../common/bus/index.js";
import { createLogger } from "../common/log.js";
import { startCoordinator } from "./server.js";
import { encodeThreadError } from "../common/thread-error.js";
import type { HostToWorker, WorkerStartData, WorkerToHost } from "./thread-messages.js";
import type { CommittedLine } from "../common/results/index.js";
import { goldTransferList, type GoldMessage } from "../common/suite/index.js";
import type { ScorerFeedMessage } from "../scorer/index.js";
import { LineWriterThread, lineWriterEntry } from "./line-writer-thread.js";

const port = parentPort;
if (!port) throw new Error("worker-run.ts must run in a worker thread");
const { forwardCommitted, forwardTrackComplete, forwardLiveEvents, forwardGold, scorerFeed, nats, logLevel, ...options } = workerData as WorkerStartData;

// Committed lines come a flush at a time, synchronously: they are gathered and posted in one
// message at the end of the flush, and any other message first sends those gathered before it, so
// the host (and the scorer thread) see everything in the order it happened.
// The scorer thread takes a flush's line texts and where the part it reads ends in each (it cuts
// them itself: common/results scoredPart): strings to copy, instead of cloning a graph of objects per
// line (nor one text of them all: a large object in this thread's old generation).
let committed: CommittedLine[] = [];
const postCommitted = () => {
  if (committed.length === 0) return;
  const lines = committed;
  committed = [];
  if (scorerFeed) scorerFeed.postMessage({ type: "committed", lines: lines.map((l) => l.text), scoredLengths: lines.map((l) => l.scoredLength ?? -1) } satisfies ScorerFeedMessage);
  else port.postMessage({ type: "committed", lines } satisfies WorkerToHost);
};
const post = (msg: WorkerToHost, transfer: ArrayBuffer[] = []) => {
  postCommitted();
  port.postMessage(msg, transfer);
};
const feed = (msg: ScorerFeedMessage, transfer: ArrayBuffer[] = []) => {
  postCommitted();
  scorerFeed!.postMessage(msg, transfer);
};
const goldChunksOf = (message: GoldMessage) => (message.kind === "track" ? message.records : undefined);
const gather = (line: CommittedLine) => {
  if (committed.push(line) === 1) queueMicrotask(postCommitted);
};

// Results lines are written and fsynced in a thread of their own, which also feeds the scorer thread
// the committed lines and passes on this thread's other feed messages in order: writing the lines was
// the largest share of this thread's CPU (coordinator-bench, --cpu-prof). Its texts come back here
// only where this thread reads them (the bus, a host's onCommitted).
const writerEntry = lineWriterEntry();
const lineWriter = writerEntry
  ? new LineWriterThread(writerEntry, { outDir: options.outDir, textsWanted: forwardCommitted || nats !== undefined, ...(scorerFeed ? { scorerFeed } : {}) })
  : undefined;
const toScorer = lineWriter && scorerFeed ? (msg: ScorerFeedMessage, transfer: ArrayBuffer[] = []) => lineWriter.feed(msg, transfer) : feed;

const bus = nats ? new DeferredNatsBus({ ...nats, logger: createLogger("bus") }) : undefined;
let releaseServer!: () => void;
const serverReleased = new Promise<void>((resolve) => (releaseServer = resolve));
try {
  const handle = await startCoordinator({
    ...options,
    ...(logLevel ? { logger: createLogger("coordinator", logLevel) } : {}),
    ...(bus ? { bus } : {}),
    ...(lineWriter ? { lineWriter } : {}),
    ...(forwardCommitted || (scorerFeed && !lineWriter) ? { onCommitted: gather } : {}),
    ...(forwardTrackComplete ? { onTrackComplete: (track, family) => post({ type: "trackComplete", track, family }) } : {}),
    // A track's gold moves on (its chunks transferred): this thread keeps none of it.
    ...(scorerFeed ? { onGold: (message) => toScorer({ type: "gold", message }, goldTransferList(goldChunksOf(message))) } : forwardGold ? { onGold: (message) => post({ type: "gold", message }, goldTransferList(goldChunksOf(message))) } : {}),
    ...(forwardLiveEvents ? { onLiveEvent: (event) => post({ type: "liveEvent", event }) } : {}),
  });
  port.on("message", (msg: HostToWorker) => {
    switch (msg.type) {
      case "drain":
        releaseServer();
        void handle.drain(msg.restart);
        break;
      case "close":
        releaseServer();
        void handle.close();
        break;
      case "status":
        void handle.status().then((status) => post({ type: "status", requestId: msg.requestId, status }));
        break;
      case "metrics":
        void handle.metricsText().then((text) => post({ type: "metrics", requestId: msg.requestId, text }));
        break;
    }
  });
  post({ type: "listening", address: handle.address, port: handle.port, runId: handle.runId, outDir: handle.outDir });
  const outcome = await handle.done;
  if (scorerFeed) toScorer({ type: "end" });
  post({ type: "outcome", outcome });
  // As in the host's thread, a complete run's coordinator serves until it is closed: agents that
  // attach meanwhile are told to drain (a sweep waits for those that were redialling).
  if (outcome.state === "complete") await serverReleased;
  await handle.close();
  await lineWriter?.close();
  await bus?.close().catch(() => undefined);
  post({ type: "done", outcome, metrics: await handle.metricsText(), status: await handle.status() });
  if (!lineWriter) scorerFeed?.close();
  port.close();
} catch (err) {
  await lineWriter?.close();
  if (!lineWriter) scorerFeed?.close();
  await bus?.close().catch(() => undefined);
  post({ type: "error", error: encodeThreadError(err) });
  port.close();
}

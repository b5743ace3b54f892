// Entry of the worker thread that runs a coordinator for worker-host.ts: the V8 heap of a worker
// can be capped (resourceLimits), which bounds the coordinator's memory where the main thread's
// heap cannot be capped after start.
import { parentPort, workerData } from "node:worker_threads";
import { DeferredNatsBus } from "../common/bus/nats-deferred.js";
import { createLogger } from "../common/log.js";
import { startCoordinator } from "./server.js";
import { encodeThreadError } from "./thread-error.js";
import type { HostToWorker, WorkerStartData, WorkerToHost } from "./thread-messages.js";

const port = parentPort;
if (!port) throw new Error("worker-main.ts must run in a worker thread");
const post = (msg: WorkerToHost) => port.postMessage(msg);

const { forwardCommitted, forwardTrackComplete, forwardLiveEvents, nats, logLevel, ...options } = workerData as WorkerStartData;

const bus = nats ? new DeferredNatsBus({ ...nats, logger: createLogger("bus") }) : undefined;
try {
  const handle = await startCoordinator({
    ...options,
    ...(logLevel ? { logger: createLogger("coordinator", logLevel) } : {}),
    ...(bus ? { bus } : {}),
    ...(forwardCommitted ? { onCommitted: (line, track) => post({ type: "committed", line, track }) } : {}),
    ...(forwardTrackComplete ? { onTrackComplete: (track, family) => post({ type: "trackComplete", track, family }) } : {}),
    ...(forwardLiveEvents ? { onLiveEvent: (event) => post({ type: "liveEvent", event }) } : {}),
  });
  port.on("message", (msg: HostToWorker) => {
    switch (msg.type) {
      case "drain":
        void handle.drain();
        break;
      case "close":
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
  await handle.close();
  await bus?.close().catch(() => undefined);
  post({ type: "done", outcome, metrics: await handle.metricsText(), status: await handle.status() });
  port.close();
} catch (err) {
  await bus?.close().catch(() => undefined);
  post({ type: "error", error: encodeThreadError(err) });
  port.close();
}

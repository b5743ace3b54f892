// Entry of the worker thread that runs a coordinator for worker-host.ts: the V8 heap of a worker
// can be capped (resourceLimits), which bounds the coordinator's memory where the main thread's
// heap cannot be capped after start.
import { parentPort, workerData } from "node:worker_threads";
import type { NatsBusOptions } from "../common/bus/nats.js";
import { DeferredNatsBus } from "../common/bus/nats-deferred.js";
import { UdmError } from "../common/errors.js";
import { createLogger, type LogLevel } from "../common/log.js";
import { startCoordinator, type CoordinatorOptions } from "./server.js";

const port = parentPort;
if (!port) throw new Error("worker-main.ts must run in a worker thread");

const { forwardCommitted, forwardTrackComplete, forwardLiveEvents, nats, logLevel, ...options } = workerData as CoordinatorOptions & {
  forwardCommitted?: boolean;
  forwardTrackComplete?: boolean;
  forwardLiveEvents?: boolean;
  nats?: NatsBusOptions;
  logLevel?: LogLevel;
};

const bus = nats ? new DeferredNatsBus({ ...nats, logger: createLogger("bus") }) : undefined;
try {
  const handle = await startCoordinator({
    ...options,
    ...(logLevel ? { logger: createLogger("coordinator", logLevel) } : {}),
    ...(bus ? { bus } : {}),
    ...(forwardCommitted ? { onCommitted: (line, track) => port.postMessage({ type: "committed", line, track }) } : {}),
    ...(forwardTrackComplete ? { onTrackComplete: (track, family) => port.postMessage({ type: "trackComplete", track, family }) } : {}),
    ...(forwardLiveEvents ? { onLiveEvent: (event) => port.postMessage({ type: "liveEvent", event }) } : {}),
  });
  port.on("message", (msg: { type: string }) => {
    if (msg.type === "drain") void handle.drain();
    else if (msg.type === "close") void handle.close();
    else if (msg.type === "status") port.postMessage({ type: "status", status: handle.status() });
    else if (msg.type === "metrics") void handle.metricsText().then((text) => port.postMessage({ type: "metrics", text }));
  });
  port.postMessage({ type: "listening", address: handle.address, port: handle.port, runId: handle.runId, status: handle.status() });
  const outcome = await handle.done;
  await handle.close();
  await bus?.close().catch(() => undefined);
  port.postMessage({ type: "done", outcome, metrics: await handle.metricsText() });
  port.close();
} catch (err) {
  await bus?.close().catch(() => undefined);
  port.postMessage({
    type: "error",
    name: (err as Error).name,
    message: (err as Error).message,
    exitCode: err instanceof UdmError ? err.exitCode : 1,
  });
  port.close();
}

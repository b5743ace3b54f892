// Entry of the worker thread that runs a coordinator for worker-host.ts. It starts the suite's
// reader threads first, then loads the coordinator (worker-run.ts): loading grpc-js, protobufjs and
// the rest took this thread 0.3 s before it reached the read, and the readers load and read meanwhile.
import { workerData } from "node:worker_threads";
import { announceThread } from "../common/threads/index.js";
import { startSuiteReadEarly } from "./suite-index.js";
import type { WorkerStartData } from "./thread-messages.js";

announceThread("coordinator");
const start = workerData as WorkerStartData;
startSuiteReadEarly({
  suiteDir: start.suiteDir,
  ...(start.tracks ? { tracks: start.tracks } : {}),
  ...(start.families ? { families: start.families } : {}),
  gold: Boolean(start.scorerFeed || start.forwardGold),
});
await import("./worker-run.js");

// The coordinator's front door: what cli/ and bench/ may use of coordinator/ (the bounded coordinator,
// its live page and what they report). Transport (gRPC, wire, TLS) lives in coordinator/transport/.
export type { CoordinatorHandle, RunOutcome } from "./coordinator-handle.js";
export { trackScoredEvent, type LiveEvent } from "./observability/live-event.js";
export { livePageLine, startObservabilityServer, type ObservabilityServer } from "./observability/observability-server.js";
export type { MethodConfig } from "./run-manifest.js";
export type { RunStatus } from "../common/run-status/index.js";
export { pem, type TlsOptions } from "./transport/tls.js";
export { DEFAULT_COORDINATOR_HEAP_MB, startBoundedCoordinator, workerEntry, type WorkerCoordinatorOptions } from "./worker-host.js";

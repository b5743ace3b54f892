// The coordinator's front door: what cli/ and bench/ may use of coordinator/ (the Coordinator, its
// options and defaults, the bounded coordinator it wraps, its live page and what they report).
// Transport (gRPC, wire, TLS) lives in coordinator/transport/.
export { Coordinator } from "./coordinator.js";
export type { CoordinatorHandle, RunOutcome } from "./coordinator-handle.js";
export { COORDINATOR_DEFAULTS, heartbeatFor, withCoordinatorDefaults, type CoordinatorOptions, type ResolvedCoordinatorOptions } from "./coordinator-options.js";
export { trackScoredEvent, type LiveEvent } from "./observability/live-event.js";
export { livePageLine, startObservabilityServer, type ObservabilityServer } from "./observability/observability-server.js";
export type { MethodConfig } from "./run-manifest.js";
export type { RunStatus } from "../common/run-status/index.js";
export { pem, type TlsOptions } from "./transport/tls.js";
export { runStatusFromWire, type RunStatusWire } from "./transport/wire.js";
export { DEFAULT_COORDINATOR_HEAP_MB, startBoundedCoordinator, workerEntry, type BoundedCoordinatorOptions, type WorkerCoordinatorOptions } from "./worker-host.js";
export { outDirHolder } from "./out-dir-lock.js";
// A unit's encoding and its send without grpc-js's copy, for bench/unit-send-bench.ts.
export { EncodedUnit, encodeWorkUnit } from "./transport/work-unit-encoder.js";
export { framedSendInstalled } from "./transport/framed-send.js";
export { PayloadSpill } from "./payload-spill.js";
export { OptionInterner, compactQuestions, type RecordEntry } from "./suite-index.js";
export type { PlannedUnit } from "./planner.js";

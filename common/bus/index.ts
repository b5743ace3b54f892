// The bus's front door: the Bus interface and its two implementations (in-process, NATS JetStream).
export { SUMMARY_METRICS, busStatusOf, checkRunName, checkToken, type Bus, type BusEvent, type MetricsMessage, type ResultConsumer, type RunStatusInput, type RunStatusRecord, type Subscription } from "./bus.js";
export { InProcessBus } from "./in-process.js";
export { DeferredNatsBus } from "./nats-deferred.js";
export { NatsBus, type NatsBusOptions } from "./nats.js";
export { ResultRejectedError } from "./results-mac.js";

// Prometheus plumbing shared by every process: the /metrics listener and the process registry.
export { AGENT_METRICS_EXAMPLE, DEFAULT_COORDINATOR_METRICS, DEFAULT_SCORER_METRICS, parseMetricsListen, type ListenAddress } from "./metrics-listen.js";
export { startMetricsServer, type MetricsServer, type Route } from "./metrics-server.js";
export { createProcessRegistry, joinedMetricsText } from "./process-registry.js";

// Every metric name our processes export (from their real registries) and the vLLM names the
// simulated engine mirrors, for checking that dashboards and rules name nothing else.
import { Registry } from "prom-client";
import { registerAgentMetrics } from "../../agent/agent-metrics.js";
import { createProcessRegistry } from "../../common/metrics/process-registry.js";
import { registerCoordinatorMetrics } from "../../coordinator/observability/coordinator-metrics.js";
import { startingStatus } from "../../common/run-status/index.js";
import { registerScorerMetrics } from "../../scorer/scorer-metrics.js";
import { CapacityModel } from "../../sim/engine/model/capacity-model.js";
import { SimMetrics } from "../../sim/engine/metrics.js";
import { newCounters } from "../../agent/agent-stats.js";

/** Series Prometheus adds itself for every target. */
export const PROMETHEUS_SYNTHETIC = ["up", "scrape_duration_seconds", "scrape_samples_scraped"];

export async function knownMetricNames(): Promise<Set<string>> {
  const registry = createProcessRegistry("test");
  registerCoordinatorMetrics(registry, {
    status: () => ({ ...startingStatus(), runId: "r", state: "running", suiteIdentity: "s", recordsTotal: 1 }),
    run: () => ({ runId: "r", suiteIdentity: "s", method: "systemone", model: "" }),
    startedAtSeconds: () => 0,
    lastCommitAtSeconds: () => undefined,
    leases: () => 0,
    agents: () => [],
    bus: () => ({ connected: true, publishFailures: 0, behind: 0 }),
  }, { perAgent: true, gpuHourUsd: 1 });
  registerAgentMetrics(registry, {
    agent: "a",
    method: "systemone",
    engineUrl: "http://127.0.0.1:1",
    stats: () => ({ ...newCounters(), state: "running", agentId: "a", ready: true, model: "m", runId: "r", inflightUnits: 0, inflightRecords: 0, lastError: undefined }),
    limiter: { limit: 1, active: 0 },
    engineStarts: () => 1,
  })();
  registerScorerMetrics(registry, { metrics: () => undefined, tracksInScope: () => 0, counts: () => ({ applied: 0, duplicates: 0, invalid: 0, rejected: 0 }), pending: () => 0 });
  const capacity = new CapacityModel({ tokensPerS: 0, maxNumSeqs: 1, kvCacheTokens: 1000, jitter: 0, seed: 0 });
  const sim = new SimMetrics("m", capacity);
  const names = new Set<string>(PROMETHEUS_SYNTHETIC);
  for (const r of [registry, sim.registry] as Registry[]) {
    for (const m of await r.getMetricsAsJSON()) {
      names.add(m.name);
      if (String(m.type) === "histogram") for (const suffix of ["_bucket", "_sum", "_count"]) names.add(m.name + suffix);
    }
  }
  capacity.stop();
  return names;
}

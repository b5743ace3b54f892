// Coordinator metrics read the run totals from the run's status (its run progress computes them):
// tokens, cached tokens only when known, GPU-seconds, ETA.
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { registerCoordinatorMetrics, type CoordinatorMetricsSource } from "../../coordinator/observability/coordinator-metrics.js";
import { startingStatus, type RunStatus } from "../../common/run-status/index.js";
import { runStatusToWire } from "../../coordinator/transport/wire.js";

const base: RunStatus = {
  ...startingStatus(),
  runId: "r1", state: "running", suiteIdentity: "abc", recordsTotal: 10, recordsCommitted: 4, recordsResumed: 1, unitsQueued: 2,
  unitsInflight: 1, resultsRejected: 3, leasesExpired: 1, backupUnits: 0, recordsPerSecond: 2.5, elapsedSeconds: 9,
  agents: [{ agentId: "a", model: "m", ready: true, inflightUnits: 1, credit: 2, results: 3, rejected: 3, engineUrl: "http://x", inflightRequests: 4, engineWaiting: 3, engineRunning: 5 }],
  tracks: [{ track: "t1", family: "f", records: 10, committed: 4, complete: false }],
  rejectedByReason: { no_lease: 3 }, resultsDuplicate: 1, recordsGivenUp: 0,
};

function source(status: RunStatus): CoordinatorMetricsSource {
  return {
    status: () => status,
    run: () => ({ runId: "r1", suiteIdentity: "abc", method: "systemone", model: "m" }),
    startedAtSeconds: () => 100,
    lastCommitAtSeconds: () => 105,
    leases: () => 1,
    agents: () => [{ agentId: "a", ready: true, inflightUnits: 1, inflightRequests: 4, credit: 2, engineWaiting: 3, engineRunning: 5 }],
  };
}

describe("coordinator metrics", () => {
  it("export the run totals of the status, cached tokens and ETA only when known", async () => {
    const registry = new Registry();
    const totals = { ...base.totals, promptTokens: 1200, completionTokens: 30, cachedTokens: undefined, gpuSeconds: 42.5, etaSeconds: undefined };
    registerCoordinatorMetrics(registry, source({ ...base, totals }), { gpuHourUsd: 2 });
    const text = await registry.metrics();
    expect(text).toMatch(/^udm_prompt_tokens_total 1200$/m);
    expect(text).toMatch(/^udm_completion_tokens_total 30$/m);
    expect(text).toMatch(/^udm_cached_tokens_known 0$/m);
    expect(text).toMatch(/^udm_gpu_seconds_total 42\.5$/m);
    expect(text).toMatch(/^udm_run_eta_seconds nan$/im);
    expect(text).toMatch(/^udm_records_committed_total 4$/m);
    expect(text).toMatch(/^udm_results_rejected_total\{reason="no_lease"\} 3$/m);
    expect(text).toMatch(/^udm_run_state\{state="running"\} 1$/m);
    expect(text).toMatch(/^udm_coordinator_agent_engine_waiting\{agent="a"\} 3$/m);
    expect(text).toMatch(/^udm_gpu_hour_price_usd 2$/m);
  });

  it("export cached tokens once known, and no per-agent series when switched off", async () => {
    const registry = new Registry();
    registerCoordinatorMetrics(registry, source({ ...base, totals: { ...base.totals, cachedTokens: 700, etaSeconds: 12 } }), { perAgent: false });
    const text = await registry.metrics();
    expect(text).toMatch(/^udm_cached_tokens_known 1$/m);
    expect(text).toMatch(/^udm_cached_tokens_total 700$/m);
    expect(text).toMatch(/^udm_run_eta_seconds 12$/m);
    expect(text).not.toMatch(/udm_coordinator_agent_/);
    expect(text).toMatch(/^udm_gpu_hour_price_usd nan$/im);
    expect(text).toMatch(/^udm_agents_ready 1$/m);
  });

  it("the status JSON (/api/status, status --json) carries each agent's engine queue from its heartbeats", () => {
    const wire = runStatusToWire(base);
    expect(wire.agents).toEqual([
      expect.objectContaining({ agent_id: "a", inflight_units: 1, inflight_requests: 4, engine_waiting: 3, engine_running: 5 }),
    ]);
  });
});

// Coordinator metrics read the run totals from the run's status (its run progress computes them):
// tokens, cached tokens only when known, GPU-seconds, ETA; nothing when the status has none.
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { registerCoordinatorMetrics, type CoordinatorMetricsSource } from "../../coordinator/observability/coordinator-metrics.js";
import type { RunStatus } from "../../coordinator/run-status.js";

const base: RunStatus = {
  run_id: "r1", state: "running", suite_identity: "abc", records_total: 10, records_committed: 4, records_resumed: 1, units_queued: 2,
  units_inflight: 1, results_rejected: 3, leases_expired: 1, backup_units: 0, records_per_second: 2.5, elapsed_seconds: 9,
  agents: [{ agent_id: "a", model: "m", ready: true, inflight_units: 1, credit: 2, results: 3, rejected: 3, engine_url: "http://x" }],
  tracks: [{ track: "t1", family: "f", records: 10, committed: 4, complete: false }],
  rejected_by_reason: { no_lease: 3 }, results_duplicate: 1, records_given_up: 0,
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
    const totals = { prompt_tokens: 1200, completion_tokens: 30, cached_tokens: 0, cached_tokens_known: false, gpu_seconds: 42.5, eta_seconds: 0, eta_known: false };
    registerCoordinatorMetrics(registry, source({ ...base, totals } as RunStatus), { gpuHourUsd: 2 });
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

  it("have no token or GPU series for a status without totals, and no per-agent series when switched off", async () => {
    const registry = new Registry();
    registerCoordinatorMetrics(registry, source(base), { perAgent: false });
    const text = await registry.metrics();
    expect(text).not.toMatch(/udm_prompt_tokens_total|udm_gpu_seconds_total|udm_coordinator_agent_/);
    expect(text).toMatch(/^udm_gpu_hour_price_usd nan$/im);
    expect(text).toMatch(/^udm_agents_ready 1$/m);
  });
});

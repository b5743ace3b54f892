// The run status crosses the Status RPC as proto RunStatus: runStatusToWire on the coordinator,
// runStatusFromWire on the client (`udm-orch status`). One round trip gives the status back.
import { describe, expect, it } from "vitest";
import type { RunStatus } from "../../common/run-status/index.js";
import { runStatusFromWire, runStatusToWire } from "../../coordinator/transport/wire.js";

const status: RunStatus = {
  runId: "r-1",
  state: "running",
  suiteIdentity: "ab".repeat(32),
  recordsTotal: 100,
  recordsCommitted: 40,
  recordsResumed: 10,
  unitsQueued: 3,
  unitsInflight: 2,
  resultsRejected: 1,
  leasesExpired: 4,
  backupUnits: 5,
  recordsPerSecond: 12.5,
  elapsedSeconds: 33,
  elapsedBeforeSeconds: 20,
  agents: [{ agentId: "a1", model: "sim/pseudo", ready: true, inflightUnits: 2, credit: 1, results: 40, rejected: 1, engineUrl: "http://127.0.0.1:8000", inflightRequests: 7, engineWaiting: 2, engineRunning: 5 }],
  // An agent that left stays listed for a while with its reason (coordinator/left-agents.ts).
  agentsLeft: [
    {
      agentId: "a2",
      model: "sim/pseudo",
      ready: false,
      inflightUnits: 0,
      credit: 0,
      results: 9,
      rejected: 0,
      engineUrl: "http://127.0.0.1:8001",
      inflightRequests: 0,
      engineWaiting: 0,
      engineRunning: 0,
      left: { reason: "connection lost (agent killed or unreachable)", at: "2026-12-01T20:00:00.000Z" },
    },
  ],
  tracks: [{ track: "vihsd", family: "classification", records: 100, committed: 40, complete: false }],
  rejectedByReason: { bad_distribution: 1 },
  resultsDuplicate: 2,
  recordsGivenUp: 0,
  totals: { promptTokens: 1000, completionTokens: 40, cachedTokens: 600, gpuSeconds: 3.5, latency: { count: 40, meanMs: 20, p50Ms: 18, p95Ms: 40 }, recordsPerSecond: 12.5, etaSeconds: 4.8 },
  answeredByModel: {},
};

describe("run status over the Status RPC", () => {
  it("comes back as it went", () => {
    expect(runStatusFromWire(runStatusToWire(status))).toEqual(status);
  });

  it("keeps unknown cached tokens and ETA unknown", () => {
    const unknown: RunStatus = { ...status, totals: { ...status.totals, cachedTokens: undefined, etaSeconds: undefined } };
    expect(runStatusFromWire(runStatusToWire(unknown)).totals).toEqual(unknown.totals);
  });
});

// The edge between generated proto types and the coordinator's domain types (STYLE.md 2): agent
// messages in, coordinator messages and the run status out.
import type { AgentMessage__Output } from "../../proto/generated/udm/v1/AgentMessage.js";
import type { CoordinatorMessage } from "../../proto/generated/udm/v1/CoordinatorMessage.js";
import type { RecordResult__Output } from "../../proto/generated/udm/v1/RecordResult.js";
import type { Hello__Output } from "../../proto/generated/udm/v1/Hello.js";
import type { RunStatus__Output } from "../../proto/generated/udm/v1/RunStatus.js";
import type { IncomingResult } from "../incoming-result.js";
import { decodeResults } from "./result-decoder.js";
import type { PlannedUnit } from "../planner.js";
import type { PayloadSpill } from "../payload-spill.js";
import type { RecordEntry } from "../suite-index.js";
import type { AgentInfo } from "../scheduler.js";
import type { MethodConfig } from "../run-manifest.js";
import type { RunStatus } from "../../common/run-status/index.js";

export interface AgentHeartbeat {
  ready: boolean;
  inflightRequests: number;
  engineWaiting: number;
  engineRunning: number;
}

/** One message of an agent's Attach stream, as the coordinator's domain sees it. */
export type AgentEvent =
  | { kind: "hello"; info: AgentInfo; ready: boolean }
  | { kind: "credit"; units: number }
  | { kind: "result"; result: IncomingResult }
  /** A ResultBatch: each result is handled as if it came alone, in order. */
  | { kind: "results"; results: IncomingResult[] }
  | { kind: "unitDone"; unitId: string }
  | { kind: "heartbeat"; heartbeat: AgentHeartbeat }
  /** A message of no kind this coordinator knows, or without its body: ignored once attached. */
  | { kind: "other" };

const OTHER: AgentEvent = { kind: "other" };

/** The domain event of an AgentMessage. */
export function agentEventFromWire(msg: AgentMessage__Output): AgentEvent {
  switch (msg.kind) {
    case "hello":
      return msg.hello ? { kind: "hello", info: agentInfoFromWire(msg.hello), ready: msg.hello.ready } : OTHER;
    case "credit":
      return { kind: "credit", units: msg.credit?.units ?? 0 };
    case "result":
      return msg.result ? { kind: "result", result: resultFromWire(msg.result) } : OTHER;
    case "results":
      return msg.results ? { kind: "results", results: msg.results.results.map(resultFromWire) } : OTHER;
    case "unit_done":
      return msg.unit_done ? { kind: "unitDone", unitId: msg.unit_done.unit_id } : OTHER;
    case "heartbeat":
      return msg.heartbeat
        ? {
            kind: "heartbeat",
            heartbeat: {
              ready: msg.heartbeat.ready,
              inflightRequests: msg.heartbeat.inflight_requests,
              engineWaiting: msg.heartbeat.engine_waiting,
              engineRunning: msg.heartbeat.engine_running,
            },
          }
        : OTHER;
    default:
      return OTHER;
  }
}

/**
 * The domain event of an Attach message's bytes: results decoded straight from the bytes
 * (result-decoder.ts), every other kind by the generic decoder (`decode`, the proto-loader one).
 */
export function agentEventFromBytes(buf: Buffer, decode: (buf: Buffer) => AgentMessage__Output): AgentEvent {
  const results = decodeResults(buf);
  if (results === undefined) return agentEventFromWire(decode(buf));
  return results.length === 1 ? { kind: "result", result: results[0]! } : { kind: "results", results };
}

export function resultFromWire(r: RecordResult__Output): IncomingResult {
  const probs: Record<string, Record<string, number>> = {};
  for (const [q, dist] of Object.entries(r.probs ?? {})) probs[q] = { ...(dist?.p ?? {}) };
  const questions = r.prob_questions ?? [];
  const values = r.prob_values ?? [];
  return {
    ...(questions.length > 0 || values.length > 0 ? { compactProbs: { questions: [...questions], values: [...values] } } : {}),
    unitId: r.unit_id,
    runId: r.run_id,
    probs,
    skipped: [...(r.skipped ?? [])],
    errors: { ...(r.errors ?? {}) },
    promptTokens: Number(r.usage?.prompt_tokens ?? 0),
    cachedTokens: r.usage?.cached_tokens === undefined || r.usage.cached_tokens === null ? null : Number(r.usage.cached_tokens),
    completionTokens: Number(r.usage?.completion_tokens ?? 0),
    requests: r.usage?.requests ?? 0,
    latencyMs: r.latency_ms,
    payloadSha256: r.payload_sha256,
    answeredBy: { ...(r.answered_by ?? {}) },
    retries: r.retries,
    approximate: r.approximate,
  };
}

export function agentInfoFromWire(h: Hello__Output): AgentInfo {
  return {
    agentId: h.agent_id,
    model: h.model,
    engineUrl: h.engine_url,
    instance: h.instance,
    methods: [...h.methods],
    capacity: h.capacity,
    maxModelLen: h.max_model_len,
  };
}

/** A WorkUnit carrying the payloads (state and questions only) of the given records. */
export function unitToWire(unit: PlannedUnit, records: readonly RecordEntry[], backup: boolean, leaseMs: number, spill: PayloadSpill): CoordinatorMessage {
  return {
    unit: {
      unit_id: unit.unitId,
      track: unit.track,
      group_id: unit.groupIds[0] ?? "",
      group_ids: unit.groupIds,
      lease_ms: leaseMs,
      backup,
      records: records.map((r) => {
        const { stateJson, questionsJson } = spill.read(r);
        return { run_id: r.runId, id: r.id, state_json: stateJson, questions_json: questionsJson, payload_sha256: r.payloadSha256 };
      }),
    },
  };
}

export function welcomeToWire(runId: string, method: MethodConfig, leaseMs: number, heartbeatMs: number): CoordinatorMessage {
  return {
    welcome: {
      run_id: runId,
      params: { method: method.method, seeds: method.seeds, temperature: method.temperature, model: method.model },
      lease_ms: leaseMs,
      heartbeat_ms: heartbeatMs,
    },
  };
}

export function cancelToWire(unitId: string): CoordinatorMessage {
  return { cancel: { unit_id: unitId } };
}

export function drainToWire(reason: string): CoordinatorMessage {
  return { drain: { reason } };
}

/** The proto RunStatus (Status RPC) of a run status. */
export function runStatusToWire(s: RunStatus): RunStatus__Output {
  const t = s.totals;
  return {
    run_id: s.runId,
    state: s.state,
    suite_identity: s.suiteIdentity,
    records_total: s.recordsTotal,
    records_committed: s.recordsCommitted,
    records_resumed: s.recordsResumed,
    units_queued: s.unitsQueued,
    units_inflight: s.unitsInflight,
    results_rejected: s.resultsRejected,
    leases_expired: s.leasesExpired,
    backup_units: s.backupUnits,
    records_per_second: s.recordsPerSecond,
    elapsed_seconds: s.elapsedSeconds,
    agents: s.agents.map((a) => ({
      agent_id: a.agentId,
      model: a.model,
      ready: a.ready,
      inflight_units: a.inflightUnits,
      credit: a.credit,
      results: a.results,
      rejected: a.rejected,
      engine_url: a.engineUrl,
      inflight_requests: a.inflightRequests,
      engine_waiting: a.engineWaiting,
      engine_running: a.engineRunning,
    })),
    tracks: s.tracks.map((p) => ({ track: p.track, family: p.family, records: p.records, committed: p.committed, complete: p.complete })),
    rejected_by_reason: { ...s.rejectedByReason } as Record<string, number>,
    results_duplicate: s.resultsDuplicate,
    records_given_up: s.recordsGivenUp,
    totals: {
      prompt_tokens: t.promptTokens,
      completion_tokens: t.completionTokens,
      cached_tokens: t.cachedTokens ?? 0,
      cached_tokens_known: t.cachedTokens !== undefined,
      gpu_seconds: t.gpuSeconds,
      latency_count: t.latency.count,
      latency_mean_ms: t.latency.meanMs,
      latency_p50_ms: t.latency.p50Ms,
      latency_p95_ms: t.latency.p95Ms,
      records_per_second: t.recordsPerSecond,
      eta_seconds: t.etaSeconds ?? 0,
      eta_known: t.etaSeconds !== undefined,
    },
  };
}

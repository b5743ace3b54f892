// The edge between generated proto types and the coordinator's domain types: one
// from-wire function per agent message (hello, credit, result, result batch, unit done, heartbeat)
// and one to-wire function per coordinator message (welcome, work unit, cancel, drain) and the
// Status RPC's run status. The only file of coordinator/ that names proto/generated types; the hot
// messages take the fast paths (result-decoder.ts, work-unit-encoder.ts) through here.
import type { AgentMessage__Output } from "../../proto/generated/udm/v1/AgentMessage.js";
import type { CoordinatorMessage } from "../../proto/generated/udm/v1/CoordinatorMessage.js";
import type { Credit__Output } from "../../proto/generated/udm/v1/Credit.js";
import type { Heartbeat__Output } from "../../proto/generated/udm/v1/Heartbeat.js";
import type { RecordResult__Output } from "../../proto/generated/udm/v1/RecordResult.js";
import type { ResultBatch__Output } from "../../proto/generated/udm/v1/ResultBatch.js";
import type { Hello__Output } from "../../proto/generated/udm/v1/Hello.js";
import type { RunStatus__Output } from "../../proto/generated/udm/v1/RunStatus.js";
import type { StatusRequest__Output } from "../../proto/generated/udm/v1/StatusRequest.js";
import type { UnitDone__Output } from "../../proto/generated/udm/v1/UnitDone.js";
import { AnsweredByList } from "../../common/results/index.js";
import type { IncomingResult } from "../incoming-result.js";
import { decodeResults } from "./result-decoder.js";
import { encodeWorkUnit, type EncodedUnit } from "./work-unit-encoder.js";
import type { PlannedUnit } from "../planner.js";
import type { PayloadSpill } from "../payload-spill.js";
import type { RecordEntry } from "../suite-index.js";
import type { AgentInfo } from "../scheduler.js";
import type { MethodConfig } from "../run-manifest.js";
import type { AgentStatus, RunStatus } from "../../common/run-status/index.js";
import type { AgentStatus__Output } from "../../proto/generated/udm/v1/AgentStatus.js";
import { redactUrl } from "../../common/redact-url.js";

/** An Attach message from an agent as the generic decoder gives it. */
export type AgentMessageWire = AgentMessage__Output;
/** A message to an agent: a proto object, or bytes already encoded (work units). */
export type OutboundMessage = CoordinatorMessage | EncodedUnit;
/** The Status RPC's request and answer. */
export type StatusRequestWire = StatusRequest__Output;
export type RunStatusWire = RunStatus__Output;

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
      return msg.hello ? helloFromWire(msg.hello) : OTHER;
    case "credit":
      return creditFromWire(msg.credit);
    case "result":
      return msg.result ? { kind: "result", result: resultFromWire(msg.result) } : OTHER;
    case "results":
      return msg.results ? resultBatchFromWire(msg.results) : OTHER;
    case "unit_done":
      return msg.unit_done ? unitDoneFromWire(msg.unit_done) : OTHER;
    case "heartbeat":
      return msg.heartbeat ? heartbeatFromWire(msg.heartbeat) : OTHER;
    default:
      return OTHER;
  }
}

export function helloFromWire(h: Hello__Output): Extract<AgentEvent, { kind: "hello" }> {
  return { kind: "hello", info: agentInfoFromWire(h), ready: h.ready };
}

/** A Credit without its body grants nothing. */
export function creditFromWire(c: Credit__Output | null | undefined): Extract<AgentEvent, { kind: "credit" }> {
  return { kind: "credit", units: c?.units ?? 0 };
}

export function resultBatchFromWire(b: ResultBatch__Output): Extract<AgentEvent, { kind: "results" }> {
  return { kind: "results", results: b.results.map(resultFromWire) };
}

export function unitDoneFromWire(d: UnitDone__Output): Extract<AgentEvent, { kind: "unitDone" }> {
  return { kind: "unitDone", unitId: d.unit_id };
}

export function heartbeatFromWire(h: Heartbeat__Output): Extract<AgentEvent, { kind: "heartbeat" }> {
  return {
    kind: "heartbeat",
    heartbeat: { ready: h.ready, inflightRequests: h.inflight_requests, engineWaiting: h.engine_waiting, engineRunning: h.engine_running },
  };
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
    recordKey: r.run_id,
    probs,
    skipped: [...(r.skipped ?? [])],
    errors: { ...(r.errors ?? {}) },
    promptTokens: Number(r.usage?.prompt_tokens ?? 0),
    cachedTokens: r.usage?.cached_tokens === undefined || r.usage.cached_tokens === null ? null : Number(r.usage.cached_tokens),
    completionTokens: Number(r.usage?.completion_tokens ?? 0),
    requests: r.usage?.requests ?? 0,
    latencyMs: r.latency_ms,
    payloadSha256: r.payload_sha256,
    answeredBy: AnsweredByList.fromRecord(r.answered_by ?? {}),
    retries: r.retries,
    approximate: r.approximate,
  };
}

export function agentInfoFromWire(h: Hello__Output): AgentInfo {
  return {
    agentId: h.agent_id,
    model: h.model,
    // Written to run.json, the run card, /api and the bus: an agent of another version may send credentials.
    engineUrl: redactUrl(h.engine_url),
    instance: h.instance,
    methods: [...h.methods],
    capacity: h.capacity,
    maxModelLen: h.max_model_len,
  };
}

/**
 * A WorkUnit as sent: encoded straight from the payload spill (work-unit-encoder.ts), the same bytes
 * the generic encoder makes of unitToWire's message without building it.
 */
export function workUnitToWire(unit: PlannedUnit, records: readonly RecordEntry[], backup: boolean, leaseMs: number, spill: PayloadSpill): OutboundMessage {
  return encodeWorkUnit(unit, records, backup, leaseMs, spill);
}

/** A WorkUnit carrying the payloads (state and questions only) of the given records, as a proto object (the reference of the fast path). */
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
        return { run_id: r.recordKey, id: r.id, state_json: stateJson, questions_json: questionsJson, payload_sha256: r.payloadSha256 };
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

export function drainToWire(reason: string, reconnect = false): CoordinatorMessage {
  return { drain: { reason, ...(reconnect ? { reconnect } : {}) } };
}

/** The run status a Status client (`udm-orch status`, the benches) reads from the proto RunStatus. */
export function runStatusFromWire(w: RunStatus__Output): RunStatus {
  const t = w.totals;
  return {
    runId: w.run_id,
    state: w.state as RunStatus["state"],
    suiteIdentity: w.suite_identity,
    recordsTotal: w.records_total,
    recordsCommitted: w.records_committed,
    recordsResumed: w.records_resumed,
    unitsQueued: w.units_queued,
    unitsInflight: w.units_inflight,
    resultsRejected: w.results_rejected,
    leasesExpired: w.leases_expired,
    backupUnits: w.backup_units,
    recordsPerSecond: w.records_per_second,
    elapsedSeconds: w.elapsed_seconds,
    elapsedBeforeSeconds: w.elapsed_before_seconds ?? 0,
    agents: w.agents.map(agentFromWire),
    agentsLeft: (w.agents_left ?? []).map(agentFromWire),
    tracks: w.tracks.map((p) => ({ track: p.track, family: p.family, records: p.records, committed: p.committed, complete: p.complete })),
    rejectedByReason: { ...(w.rejected_by_reason ?? {}) } as RunStatus["rejectedByReason"],
    resultsDuplicate: w.results_duplicate,
    recordsGivenUp: w.records_given_up,
    totals: {
      promptTokens: t?.prompt_tokens ?? 0,
      completionTokens: t?.completion_tokens ?? 0,
      cachedTokens: t?.cached_tokens_known ? t.cached_tokens : undefined,
      gpuSeconds: t?.gpu_seconds ?? 0,
      latency: { count: t?.latency_count ?? 0, meanMs: t?.latency_mean_ms ?? 0, p50Ms: t?.latency_p50_ms ?? 0, p95Ms: t?.latency_p95_ms ?? 0 },
      recordsPerSecond: t?.records_per_second ?? 0,
      etaSeconds: t?.eta_known ? t.eta_seconds : undefined,
    },
    // Not on the wire: which model answered is the run card's (counted by the coordinator).
    answeredByModel: {},
  };
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
    elapsed_before_seconds: s.elapsedBeforeSeconds,
    agents: s.agents.map(agentToWire),
    agents_left: s.agentsLeft.map(agentToWire),
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

function agentFromWire(a: AgentStatus__Output): AgentStatus {
  return {
    agentId: a.agent_id,
    model: a.model,
    ready: a.ready,
    inflightUnits: a.inflight_units,
    credit: a.credit,
    results: a.results,
    rejected: a.rejected,
    engineUrl: a.engine_url,
    inflightRequests: a.inflight_requests,
    engineWaiting: a.engine_waiting,
    engineRunning: a.engine_running,
    ...(a.left_reason ? { left: { reason: a.left_reason, at: a.left_at } } : {}),
  };
}

function agentToWire(a: AgentStatus): AgentStatus__Output {
  return {
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
    left_reason: a.left?.reason ?? "",
    left_at: a.left?.at ?? "",
  };
}

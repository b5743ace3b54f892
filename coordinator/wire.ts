// The edge between generated proto types and the coordinator's domain types (STYLE.md 2).
import type { CoordinatorMessage } from "../proto/generated/udm/v1/CoordinatorMessage.js";
import type { RecordResult__Output } from "../proto/generated/udm/v1/RecordResult.js";
import type { Hello__Output } from "../proto/generated/udm/v1/Hello.js";
import type { IncomingResult } from "./incoming-result.js";
import type { PlannedUnit } from "./planner.js";
import type { PayloadSpill } from "./payload-spill.js";
import type { RecordEntry } from "./suite-index.js";
import type { AgentInfo } from "./scheduler.js";
import type { MethodConfig } from "./run-manifest.js";

export function resultFromWire(r: RecordResult__Output): IncomingResult {
  const probs: Record<string, Record<string, number>> = {};
  for (const [q, dist] of Object.entries(r.probs ?? {})) probs[q] = { ...(dist?.p ?? {}) };
  return {
    unitId: r.unit_id,
    runId: r.run_id,
    probs,
    skipped: [...(r.skipped ?? [])],
    errors: { ...(r.errors ?? {}) },
    promptTokens: Number(r.usage?.prompt_tokens ?? 0),
    cachedTokens: Number(r.usage?.cached_tokens ?? 0),
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

// Conversion between the gRPC messages of the Attach stream and the agent's domain types, in one
// place: a to-wire function for every message the agent sends, a
// from-wire function for what it receives. Nothing else in agent/ uses generated proto types.
import { z } from "zod";
import { QuestionSchema } from "../../common/suite/index.js";
import { UdmError } from "../../common/errors.js";
import type { RecordAnswer, RecordPayload } from "../engine-method.js";
import type { WorkUnit__Output } from "../../proto/generated/udm/v1/WorkUnit.js";
import type { Payload__Output } from "../../proto/generated/udm/v1/Payload.js";
import type { RecordResult } from "../../proto/generated/udm/v1/RecordResult.js";
import type { Distribution as WireDistribution } from "../../proto/generated/udm/v1/Distribution.js";
import type { Welcome__Output } from "../../proto/generated/udm/v1/Welcome.js";
import type { AgentMessage } from "../../proto/generated/udm/v1/AgentMessage.js";
import type { CoordinatorMessage__Output } from "../../proto/generated/udm/v1/CoordinatorMessage.js";

/** A message the agent sends on the Attach stream, as built by the to-wire functions below. */
export type AgentWireMessage = AgentMessage;
/** A message the coordinator sends on the Attach stream; read it with coordinatorMessageFromWire. */
export type CoordinatorWireMessage = CoordinatorMessage__Output;
/**
 * A record's result in wire form, built once per record (toWire, toCompactWire) and sent in a
 * ResultBatch as is: the probabilities are not copied again on the way out.
 */
export type WireResult = RecordResult;

/** A payload the agent cannot read (bad JSON or shape); names the unit, record and field. */
export class PayloadError extends UdmError {
  constructor(
    readonly unitId: string,
    readonly runId: string,
    readonly field: "state_json" | "questions_json",
    readonly problem: string,
    options?: { cause?: unknown },
  ) {
    super(`unit ${unitId} record ${runId} field ${field}: ${problem}`, options);
  }
}

/** A record the agent could not read: answered with an error per question instead of probabilities. */
export interface UnreadablePayload {
  recordKey: string;
  payloadSha256: string;
  /** Question keys when questions_json could be read, else empty. */
  questionKeys: string[];
  error: PayloadError;
}

export type UnitRecord = { payload: RecordPayload } | { unreadable: UnreadablePayload };

/** How the coordinator's run reads the engine (Welcome.params). */
export interface RunWelcome {
  runId: string;
  /** systemone | decisions | label-read; empty: the agent's own. */
  method: string;
  /** Label-permutation seeds averaged per question; empty: one read in natural order. */
  seeds: number[];
  temperature: number;
  /** Model to ask the engine for; empty: the engine's own. */
  model: string;
  leaseMs: number;
  heartbeatMs: number;
}

export function welcomeFromWire(w: Welcome__Output): RunWelcome {
  return {
    runId: w.run_id,
    method: w.params?.method ?? "",
    seeds: [...(w.params?.seeds ?? [])],
    temperature: w.params?.temperature ?? 0,
    model: w.params?.model ?? "",
    leaseMs: w.lease_ms,
    heartbeatMs: w.heartbeat_ms,
  };
}

/** What a coordinator's message says, for the agent. */
export type CoordinatorEvent =
  | { kind: "welcome"; welcome: RunWelcome }
  | { kind: "unit"; unit: AssignedUnit }
  | { kind: "cancel"; unitId: string }
  /** reconnect: the coordinator restarts; reattach once the stream is closed instead of stopping. */
  | { kind: "drain"; reason: string; reconnect?: true }
  /** A message kind this build does not know (a newer coordinator). */
  | { kind: "unknown"; wireKind: string | undefined };

export function coordinatorMessageFromWire(m: CoordinatorWireMessage): CoordinatorEvent {
  switch (m.kind) {
    case "welcome":
      return { kind: "welcome", welcome: welcomeFromWire(m.welcome!) };
    case "unit":
      return { kind: "unit", unit: fromWire(m.unit!) };
    case "cancel":
      return { kind: "cancel", unitId: m.cancel!.unit_id };
    case "drain":
      return { kind: "drain", reason: m.drain!.reason, ...(m.drain!.reconnect ? { reconnect: true as const } : {}) };
    default:
      return { kind: "unknown", wireKind: m.kind };
  }
}

/** What the agent says of itself when it attaches. */
export interface AgentHello {
  agentId: string;
  /** The engine's model; empty while the engine is not known. */
  model: string;
  methods: string[];
  maxModelLen: number;
  capacity: number;
  version: string;
  ready: boolean;
  engineUrl: string;
  /** Random per agent process: lets this process take over its own agent_id after a network blip. */
  instance: string;
}

export function helloToWire(h: AgentHello): AgentWireMessage {
  return {
    hello: {
      agent_id: h.agentId,
      model: h.model,
      methods: h.methods,
      max_model_len: h.maxModelLen,
      capacity: h.capacity,
      version: h.version,
      ready: h.ready,
      engine_url: h.engineUrl,
      instance: h.instance,
    },
  };
}

/** Credit for `units` more work units. */
export function creditToWire(units: number): AgentWireMessage {
  return { credit: { units } };
}

/** The unit is answered (its results went before): the coordinator releases its lease. */
export function unitDoneToWire(unitId: string): AgentWireMessage {
  return { unit_done: { unit_id: unitId } };
}

export interface AgentHeartbeat {
  inflightUnits: number;
  inflightRequests: number;
  /** The engine's vllm:num_requests_waiting / _running (0 when unknown). */
  engineWaiting: number;
  engineRunning: number;
  ready: boolean;
}

export function heartbeatToWire(h: AgentHeartbeat): AgentWireMessage {
  return {
    heartbeat: {
      inflight_units: h.inflightUnits,
      inflight_requests: h.inflightRequests,
      engine_waiting: h.engineWaiting,
      engine_running: h.engineRunning,
      ready: h.ready,
    },
  };
}

/** Results sent together as one ResultBatch (the array is sent as is). */
export function resultBatchToWire(results: WireResult[]): AgentWireMessage {
  return { results: { results } };
}

/** The unit a result belongs to. */
export function resultUnitId(result: WireResult): string {
  return result.unit_id ?? "";
}

/** Whether a result carries an error for any question. */
export function resultHasErrors(result: WireResult): boolean {
  return Object.keys(result.errors ?? {}).length > 0;
}

/** A work unit as the agent holds it. */
export interface AssignedUnit {
  unitId: string;
  track: string;
  groupIds: string[];
  leaseMs: number;
  backup: boolean;
  /** In the coordinator's order; records of a group share their state prefix. */
  records: UnitRecord[];
}

const StateSchema = z.record(z.string(), z.string());
const QuestionsSchema = z.record(z.string(), QuestionSchema);

function parseJsonField<T>(unitId: string, p: Payload__Output, field: "state_json" | "questions_json", schema: z.ZodType<T>): T {
  let value: unknown;
  try {
    value = JSON.parse(p[field]);
  } catch (err) {
    throw new PayloadError(unitId, p.run_id, field, `not JSON: ${(err as Error).message}`, { cause: err });
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length ? ` at ${issue.path.join(".")}` : "";
    throw new PayloadError(unitId, p.run_id, field, `${issue?.message ?? "invalid"}${where}`, { cause: parsed.error });
  }
  return parsed.data;
}

function recordFromWire(unitId: string, p: Payload__Output): UnitRecord {
  let questions: RecordPayload["questions"] | undefined;
  try {
    questions = parseJsonField(unitId, p, "questions_json", QuestionsSchema);
    const state = parseJsonField(unitId, p, "state_json", StateSchema);
    return { payload: { recordKey: p.run_id, id: p.id, state, questions, payloadSha256: p.payload_sha256 } };
  } catch (err) {
    if (!(err instanceof PayloadError)) throw err;
    return {
      unreadable: { recordKey: p.run_id, payloadSha256: p.payload_sha256, questionKeys: questions ? Object.keys(questions) : [], error: err },
    };
  }
}

/** WorkUnit (wire) -> AssignedUnit; state_json and questions_json are parsed here, once. */
export function fromWire(unit: WorkUnit__Output): AssignedUnit {
  const groupIds = unit.group_ids.length ? [...unit.group_ids] : unit.group_id ? [unit.group_id] : [];
  return {
    unitId: unit.unit_id,
    track: unit.track,
    groupIds,
    leaseMs: unit.lease_ms,
    backup: unit.backup,
    records: unit.records.map((p) => recordFromWire(unit.unit_id, p)),
  };
}

/** RecordAnswer (domain) -> RecordResult (wire). */
export function toWire(unitId: string, record: Pick<RecordPayload, "recordKey" | "payloadSha256">, answer: RecordAnswer): RecordResult {
  const probs: Record<string, WireDistribution> = {};
  for (const [question, dist] of Object.entries(answer.probs)) probs[question] = { p: { ...dist } };
  return {
    unit_id: unitId,
    run_id: record.recordKey,
    probs,
    skipped: [...answer.skipped],
    errors: { ...answer.errors },
    usage: {
      prompt_tokens: answer.usage.promptTokens,
      // Unknown (null) is sent as absent: proto3 optional gives the field presence.
      ...(answer.usage.cachedTokens === null ? {} : { cached_tokens: answer.usage.cachedTokens }),
      completion_tokens: answer.usage.completionTokens,
      requests: answer.usage.requests,
    },
    latency_ms: answer.latencyMs,
    payload_sha256: record.payloadSha256,
    answered_by: { ...answer.answeredBy },
    retries: answer.retries,
    approximate: answer.approximate,
  };
}

/** A question's option keys in criteria order, as the coordinator reads them: noul is true, false. */
function optionKeys(q: RecordPayload["questions"][string]): readonly string[] {
  return q.type === "noul" ? NOUL_OPTIONS : Object.keys(q.criteria);
}
const NOUL_OPTIONS = ["true", "false"] as const;

/**
 * RecordAnswer -> RecordResult with its probabilities in the compact form (prob_questions and
 * prob_values, over each question's option keys in the criteria order of questions_json): no map
 * entries for either side to build and decode. A distribution whose keys are not exactly the
 * question's options cannot be written so; the result then goes in the map form, for the
 * coordinator to reject with its reason.
 */
export function toCompactWire(unitId: string, record: Pick<RecordPayload, "recordKey" | "payloadSha256" | "questions">, answer: RecordAnswer): RecordResult {
  const questions: string[] = [];
  const values: number[] = [];
  for (const key in answer.probs) {
    const dist = answer.probs[key];
    const q = Object.hasOwn(record.questions, key) ? record.questions[key] : undefined;
    if (!q || dist === null || typeof dist !== "object") return toWire(unitId, record, answer);
    const options = optionKeys(q);
    let n = 0;
    for (const o in dist) {
      if (!Object.hasOwn(dist, o)) continue;
      n++;
    }
    if (n !== options.length) return toWire(unitId, record, answer);
    for (const o of options) {
      const p = Object.hasOwn(dist, o) ? dist[o] : undefined;
      if (typeof p !== "number") return toWire(unitId, record, answer);
      values.push(p);
    }
    questions.push(key);
  }
  const wire = toWire(unitId, record, { ...answer, probs: {} });
  wire.prob_questions = questions;
  wire.prob_values = values;
  return wire;
}

/**
 * The answer for a record that got no answer from the method: every question carries the error,
 * so the failure is recorded as data and the record is not silently lost.
 */
export function failedAnswer(questionKeys: readonly string[], message: string, latencyMs: number): RecordAnswer {
  const keys = questionKeys.length ? questionKeys : ["payload"];
  return {
    probs: {},
    skipped: [],
    errors: Object.fromEntries(keys.map((k) => [k, message])),
    usage: { promptTokens: 0, cachedTokens: 0, completionTokens: 0, requests: 0 },
    latencyMs,
    answeredBy: {},
    retries: 0,
    approximate: false,
  };
}

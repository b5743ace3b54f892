// A minimal agent for coordinator tests, speaking the Attach protocol with @grpc/grpc-js. It keeps
// every CoordinatorMessage it receives (the capture the no-gold test inspects). In `auto` mode it
// answers each unit's records with `answer`, sends UnitDone and gives the credit back.
import * as grpc from "@grpc/grpc-js";
import { loadPackageDefinition, type ProtoGrpcType } from "../../../proto/loader.js";
import type { AgentMessage } from "../../../proto/generated/udm/v1/AgentMessage.js";
import type { CoordinatorMessage__Output } from "../../../proto/generated/udm/v1/CoordinatorMessage.js";
import type { Payload__Output } from "../../../proto/generated/udm/v1/Payload.js";
import type { RecordResult } from "../../../proto/generated/udm/v1/RecordResult.js";
import type { WorkUnit__Output } from "../../../proto/generated/udm/v1/WorkUnit.js";
import type { RunStatus__Output } from "../../../proto/generated/udm/v1/RunStatus.js";

const proto = grpc.loadPackageDefinition(loadPackageDefinition()) as unknown as ProtoGrpcType;

export type Answer = Omit<RecordResult, "unit_id" | "run_id"> & { run_id?: string; unit_id?: string };

/** A valid answer: uniform over each question's criteria keys (noul: true/false). */
export function uniformAnswer(p: Payload__Output): Answer {
  const questions = JSON.parse(p.questions_json) as Record<string, { type: string; criteria: Record<string, string> }>;
  const probs: Record<string, { p: Record<string, number> }> = {};
  for (const [k, q] of Object.entries(questions)) {
    const keys = q.type === "noul" ? ["true", "false"] : Object.keys(q.criteria);
    probs[k] = { p: Object.fromEntries(keys.map((o) => [o, 1 / keys.length])) };
  }
  return { probs, skipped: [], errors: {}, payload_sha256: p.payload_sha256, latency_ms: 3, usage: { prompt_tokens: 10, cached_tokens: 4, completion_tokens: 1, requests: 1 } };
}

export interface TestAgentOptions {
  agentId?: string;
  /** Hello.instance: the agent process. Default "" (as from an agent that does not send it). */
  instance?: string;
  token?: string;
  /** How the bearer scheme is spelled in Attach's authorization. Default "Bearer". */
  scheme?: string;
  ready?: boolean;
  /** Credit granted right after Hello. Default 1. */
  credit?: number;
  /** Answer units as they come, then UnitDone + Credit{1}. Default true. */
  auto?: boolean;
  /** Per record: an answer, or "ignore" to leave it unanswered. Default uniformAnswer. */
  answer?: (p: Payload__Output, unit: WorkUnit__Output) => Answer | "ignore";
  heartbeatMs?: number;
  /** Keep the stream open after a Drain (an agent stuck behind a dead engine). Default false. */
  ignoreDrain?: boolean;
  credentials?: grpc.ChannelCredentials;
  channelOptions?: grpc.ChannelOptions;
}

export class TestAgent {
  readonly received: CoordinatorMessage__Output[] = [];
  readonly units: WorkUnit__Output[] = [];
  readonly cancels: string[] = [];
  /** Largest number of units held (received, not done or cancelled) at once. */
  maxHeld = 0;
  granted = 0;
  held = new Set<string>();
  ended = false;
  error: grpc.ServiceError | undefined;
  readonly client: InstanceType<ProtoGrpcType["udm"]["v1"]["Coordinator"]>;
  private readonly call: grpc.ClientDuplexStream<AgentMessage, CoordinatorMessage__Output>;
  private hb: NodeJS.Timeout | undefined;
  private waiters: Array<() => void> = [];
  readonly closed: Promise<void>;

  constructor(address: string, readonly options: TestAgentOptions = {}) {
    this.client = new proto.udm.v1.Coordinator(address, options.credentials ?? grpc.credentials.createInsecure(), options.channelOptions ?? {});
    const md = new grpc.Metadata();
    if (options.token !== undefined) md.set("authorization", `${options.scheme ?? "Bearer"} ${options.token}`);
    this.call = this.client.Attach(md);
    this.closed = new Promise((resolve) => {
      this.call.on("status", () => {
        this.ended = true;
        this.stopHeartbeat();
        this.notify();
        resolve();
      });
    });
    this.call.on("error", (err: grpc.ServiceError) => {
      this.error = err;
      this.notify();
    });
    this.call.on("data", (msg: CoordinatorMessage__Output) => this.onMessage(msg));
    this.send({
      hello: {
        agent_id: options.agentId ?? "test-agent",
        model: "sim/test",
        methods: ["systemone"],
        capacity: options.credit ?? 1,
        ready: options.ready ?? true,
        engine_url: "http://127.0.0.1:1",
        instance: options.instance ?? "",
      },
    });
    if ((options.credit ?? 1) > 0) this.grant(options.credit ?? 1);
    if (options.heartbeatMs) this.hb = setInterval(() => this.heartbeat(), options.heartbeatMs);
  }

  send(msg: AgentMessage): void {
    if (!this.ended) this.call.write(msg);
  }

  grant(units: number): void {
    this.granted += units;
    this.send({ credit: { units } });
  }

  heartbeat(ready = this.options.ready ?? true): void {
    this.send({ heartbeat: { inflight_units: this.held.size, ready } });
  }

  result(unitId: string, runId: string, answer: Answer): void {
    this.send({ result: { unit_id: unitId, run_id: runId, ...answer } });
  }

  /** Several results in one ResultBatch message. */
  results(results: RecordResult[]): void {
    this.send({ results: { results } });
  }

  unitDone(unitId: string): void {
    this.held.delete(unitId);
    this.send({ unit_done: { unit_id: unitId } });
  }

  /** Answers every record of the unit with `answer` (or the option's), then UnitDone. */
  answerUnit(unit: WorkUnit__Output, answer = this.options.answer ?? uniformAnswer): void {
    for (const p of unit.records) {
      const a = answer(p, unit);
      if (a === "ignore") continue;
      this.result(a.unit_id ?? unit.unit_id, a.run_id ?? p.run_id, a);
    }
    this.unitDone(unit.unit_id);
  }

  private onMessage(msg: CoordinatorMessage__Output): void {
    this.received.push(msg);
    if (msg.kind === "unit" && msg.unit) {
      this.units.push(msg.unit);
      this.held.add(msg.unit.unit_id);
      this.maxHeld = Math.max(this.maxHeld, this.held.size);
      if (this.options.auto ?? true) {
        const unit = msg.unit;
        setImmediate(() => {
          if (!this.held.has(unit.unit_id)) return;
          this.answerUnit(unit);
          this.grant(1);
        });
      }
    } else if (msg.kind === "cancel" && msg.cancel) {
      this.cancels.push(msg.cancel.unit_id);
      if (this.held.delete(msg.cancel.unit_id) && (this.options.auto ?? true)) this.grant(1);
    } else if (msg.kind === "drain") {
      if (!this.options.ignoreDrain) this.close();
    }
    this.notify();
  }

  private notify(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** Resolves when `cond` holds (checked after every message), rejects after `ms`. */
  waitFor(cond: () => boolean, ms = 20_000, what = "condition"): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
      const check = () => {
        if (cond()) {
          clearTimeout(timer);
          resolve();
        } else this.waiters.push(check);
      };
      check();
    });
  }

  status(token = this.options.token): Promise<RunStatus__Output> {
    const md = new grpc.Metadata();
    if (token !== undefined) md.set("authorization", `Bearer ${token}`);
    return new Promise((resolve, reject) => this.client.Status({}, md, (err, s) => (err ? reject(err) : resolve(s!))));
  }

  private stopHeartbeat(): void {
    if (this.hb) clearInterval(this.hb);
    this.hb = undefined;
  }

  /** Half-closes the stream (what a drained agent does). */
  close(): void {
    this.stopHeartbeat();
    if (!this.ended) this.call.end();
  }

  /** Drops the connection abruptly (a crashed agent). */
  kill(): void {
    this.stopHeartbeat();
    this.call.cancel();
    this.client.close();
  }

  dispose(): void {
    this.kill();
  }
}

/** Polls `cond` every 10 ms (for conditions on the coordinator side). */
export async function eventually(cond: () => boolean | Promise<boolean>, ms = 20_000, what = "condition"): Promise<void> {
  const until = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

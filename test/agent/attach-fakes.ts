// Real parts for the attach tests: a gRPC coordinator on 127.0.0.1 that records every message
// and hands out queued units only against credit, and an engine method that computes a
// deterministic distribution and can be held, slowed, broken or taken down.
import { createHash } from "node:crypto";
import * as grpc from "@grpc/grpc-js";
import { loadPackageDefinition } from "../../proto/loader.js";
import type { ProtoGrpcType } from "../../proto/generated/orchestrator.js";
import type { AgentMessage__Output } from "../../proto/generated/udm/v1/AgentMessage.js";
import type { CoordinatorMessage } from "../../proto/generated/udm/v1/CoordinatorMessage.js";
import type { WorkUnit } from "../../proto/generated/udm/v1/WorkUnit.js";
import type { RecordResult__Output } from "../../proto/generated/udm/v1/RecordResult.js";
import type { EngineInfo, EngineMethod, RecordAnswer, RecordPayload } from "../../agent/engine-method.js";
import type { Question } from "../../common/suite/schema.js";

/** Polls until `check` returns a value other than undefined/false; fails with `what` after 30 s. */
export async function waitFor<T>(what: string, check: () => T | undefined | false, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export interface Connection {
  metadata: grpc.Metadata;
  messages: AgentMessage__Output[];
  call: grpc.ServerDuplexStream<AgentMessage__Output, CoordinatorMessage>;
  credit: number;
  /** Units sent on this connection and not yet done or cancelled. */
  held: Set<string>;
  ended: boolean;
  /** ResultBatch messages received (their results are in `messages`, one `result` each). */
  batches: number;
}

export interface FakeCoordinatorOptions {
  /** Expected bearer token; others are refused with UNAUTHENTICATED. */
  token?: string;
  heartbeatMs?: number;
  runId?: string;
  /** Engine method of the run sent in Welcome (default systemone). */
  method?: string;
  /** Label-permutation seeds of the run sent in Welcome (default none). */
  seeds?: number[];
  /** End our side when the agent half-closes (a well-behaved coordinator does). */
  endOnAgentEnd?: boolean;
}

export class FakeCoordinator {
  readonly connections: Connection[] = [];
  readonly refused: grpc.Metadata[] = [];
  /** Units waiting for credit, handed out in order to whichever connection has credit. */
  readonly queue: WorkUnit[] = [];
  /** run_id -> questions_json of every record handed out, to read results sent in the compact form. */
  private readonly questionsOf = new Map<string, string>();
  private server: grpc.Server | undefined;
  port = 0;

  constructor(private readonly options: FakeCoordinatorOptions = {}) {}

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  async start(port = 0): Promise<number> {
    const proto = grpc.loadPackageDefinition(loadPackageDefinition()) as unknown as ProtoGrpcType;
    const server = new grpc.Server();
    server.addService(proto.udm.v1.Coordinator.service, {
      Attach: (call: grpc.ServerDuplexStream<AgentMessage__Output, CoordinatorMessage>) => this.onAttach(call),
      Status: (_call: unknown, cb: grpc.sendUnaryData<unknown>) => cb({ code: grpc.status.UNIMPLEMENTED }),
    });
    this.port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
    );
    this.server = server;
    return this.port;
  }

  /** Kills the server and every stream, as a crashed coordinator would. */
  kill(): void {
    this.server?.forceShutdown();
    this.server = undefined;
  }

  async close(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    await new Promise<void>((resolve) => s.tryShutdown(() => resolve()));
  }

  last(): Connection {
    const c = this.connections.at(-1);
    if (!c) throw new Error("no connection yet");
    return c;
  }

  enqueue(...units: WorkUnit[]): void {
    this.queue.push(...units);
    for (const c of this.connections) this.dispatch(c);
  }

  send(conn: Connection, message: CoordinatorMessage): void {
    conn.call.write(message);
  }

  /** Every message of the given kind across connections (or on one). */
  all<K extends NonNullable<AgentMessage__Output["kind"]>>(kind: K, conn?: Connection): Array<NonNullable<AgentMessage__Output[K]>> {
    const conns = conn ? [conn] : this.connections;
    return conns.flatMap((c) => c.messages.filter((m) => m.kind === kind).map((m) => m[kind] as NonNullable<AgentMessage__Output[K]>));
  }

  private onAttach(call: grpc.ServerDuplexStream<AgentMessage__Output, CoordinatorMessage>): void {
    const metadata = call.metadata;
    if (this.options.token !== undefined && metadata.get("authorization")[0] !== `Bearer ${this.options.token}`) {
      this.refused.push(metadata);
      call.emit("error", { code: grpc.status.UNAUTHENTICATED, details: "bad bearer token" });
      return;
    }
    const conn: Connection = { metadata, messages: [], call, credit: 0, held: new Set(), ended: false, batches: 0 };
    this.connections.push(conn);
    call.on("data", (m: AgentMessage__Output) => {
      if (m.kind === "results") {
        // A batch is recorded as its results, in order, each in the map form (as a coordinator reads it).
        conn.batches++;
        for (const r of m.results!.results) conn.messages.push({ kind: "result", result: this.mapForm(r) } as AgentMessage__Output);
        return;
      }
      conn.messages.push(m);
      if (m.kind === "hello") {
        call.write({ welcome: { run_id: this.options.runId ?? "run-1", lease_ms: 60_000, heartbeat_ms: this.options.heartbeatMs ?? 0, params: { method: this.options.method ?? "systemone", seeds: this.options.seeds ?? [], model: "" } } });
      } else if (m.kind === "credit") {
        conn.credit += m.credit!.units;
        this.dispatch(conn);
      } else if (m.kind === "unit_done") {
        conn.held.delete(m.unit_done!.unit_id);
      }
    });
    call.on("end", () => {
      conn.ended = true;
      if (this.options.endOnAgentEnd !== false) call.end();
    });
    call.on("error", () => (conn.ended = true));
  }

  /** The result with prob_questions / prob_values read into probs over the record's option keys. */
  private mapForm(r: RecordResult__Output): RecordResult__Output {
    if (r.prob_questions.length === 0) return r;
    const questions = JSON.parse(this.questionsOf.get(r.run_id) ?? "{}") as Record<string, Question>;
    const probs = { ...r.probs };
    let at = 0;
    for (const key of r.prob_questions) {
      const q = questions[key]!;
      const options = q.type === "noul" ? ["true", "false"] : Object.keys(q.criteria);
      probs[key] = { p: Object.fromEntries(options.map((o) => [o, r.prob_values[at++]!])) };
    }
    return { ...r, probs, prob_questions: [], prob_values: [] };
  }

  private dispatch(conn: Connection): void {
    while (conn.credit > 0 && this.queue.length > 0 && !conn.ended) {
      const unit = this.queue.shift()!;
      for (const r of unit.records ?? []) this.questionsOf.set(r.run_id!, r.questions_json!);
      conn.credit--;
      conn.held.add(unit.unit_id!);
      conn.call.write({ unit });
    }
  }
}

/** A unit of `n` records with two questions each (one choice, one noul). */
export function makeUnit(unitId: string, n: number, extra: Partial<WorkUnit> = {}): WorkUnit {
  const questions: Record<string, Question> = {
    q_choice: { type: "choice", instructions: "Pick one.", criteria: { a: "first", b: "second", c: "third" } },
    q_noul: { type: "noul", instructions: "Is it?", criteria: {} },
  };
  return {
    unit_id: unitId,
    track: "track-x",
    group_id: `${unitId}-g`,
    lease_ms: 60_000,
    records: Array.from({ length: n }, (_, i) => ({
      run_id: `${unitId}-r${i}`,
      id: `${unitId}-id${i}`,
      state_json: JSON.stringify({ query: `shared prefix of ${unitId}`, doc: `chunk ${i}` }),
      questions_json: JSON.stringify(questions),
      payload_sha256: createHash("sha256").update(`${unitId}-${i}`).digest("hex"),
    })),
    ...extra,
  };
}

/** The distribution FakeEngineMethod gives: a hash of state, question and option, normalised. */
export function expectedProbs(record: Pick<RecordPayload, "state" | "questions">): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const [key, q] of Object.entries(record.questions)) {
    const options = q.type === "noul" ? ["true", "false"] : Object.keys(q.criteria);
    const weights = options.map((o) => createHash("sha256").update(JSON.stringify(record.state) + key + o).digest().readUInt16BE(0) + 1);
    const total = weights.reduce((a, b) => a + b, 0);
    out[key] = Object.fromEntries(options.map((o, i) => [o, weights[i]! / total]));
  }
  return out;
}

export interface FakeEngineOptions {
  capacity?: number;
  model?: string;
  maxModelLen?: number;
}

/** An EngineMethod whose answers are deterministic; tests can hold, break or take it down. */
export class FakeEngineMethod implements EngineMethod {
  readonly name = "systemone" as const;
  /** info() throws while true (engine down). */
  down = false;
  /** answer() waits for release() while true. */
  holding = false;
  /** run_ids for which answer() throws. */
  readonly failOn = new Set<string>();
  /** run_ids for which answer() resolves with something that is not a RecordAnswer (a method bug). */
  readonly malformedOn = new Set<string>();
  readonly started: string[] = [];
  readonly finished: string[] = [];
  readonly aborted: string[] = [];
  inFlight = 0;
  maxInFlight = 0;
  private waiters: Array<() => void> = [];

  constructor(private readonly o: FakeEngineOptions = {}) {}

  async info(): Promise<EngineInfo> {
    if (this.down) throw new Error("connect ECONNREFUSED 127.0.0.1:8000");
    return { model: this.o.model ?? "sim/fake-1", maxModelLen: this.o.maxModelLen ?? 4096, capacity: this.o.capacity ?? 2 };
  }

  release(): void {
    this.holding = false;
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  async answer(record: RecordPayload, signal: AbortSignal): Promise<RecordAnswer> {
    this.started.push(record.recordKey);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      if (this.holding) {
        await new Promise<void>((resolve, reject) => {
          this.waiters.push(resolve);
          signal.addEventListener("abort", () => {
            this.aborted.push(record.recordKey);
            reject(signal.reason);
          }, { once: true });
        });
      }
      await new Promise((r) => setImmediate(r));
      if (this.down) {
        // What a method reports when every retry found the engine unreachable.
        this.finished.push(record.recordKey);
        return {
          probs: {},
          skipped: [],
          errors: Object.fromEntries(Object.keys(record.questions).map((k) => [k, "engine unreachable after 5 attempts"])),
          usage: { promptTokens: 0, cachedTokens: 0, completionTokens: 0, requests: 5 },
          latencyMs: 1,
          answeredBy: {},
          retries: 4,
          approximate: false,
        };
      }
      if (this.failOn.has(record.recordKey)) throw new Error(`engine answered 500 for ${record.recordKey}`);
      if (this.malformedOn.has(record.recordKey)) return { probs: null } as unknown as RecordAnswer;
      const probs = expectedProbs(record);
      this.finished.push(record.recordKey);
      return {
        probs,
        skipped: [],
        errors: {},
        usage: { promptTokens: 100, cachedTokens: 40, completionTokens: Object.keys(probs).length, requests: 1 },
        latencyMs: 1.5,
        answeredBy: Object.fromEntries(Object.keys(probs).map((k) => [k, "systemone"])),
        retries: 0,
        approximate: false,
      };
    } finally {
      this.inFlight--;
    }
  }
}

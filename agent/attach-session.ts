// One Attach stream: Hello, Credit, units answered and sent back, heartbeats, Cancel and Drain.
// A session lives until the stream ends; the attach loop (attach-loop.ts) opens the next one.
import { setMaxListeners } from "node:events";
import type { Duplex } from "node:stream";
import * as grpc from "@grpc/grpc-js";
import type { Logger } from "../common/log.js";
import { VERSION } from "../common/version.js";
import type { EngineInfo, EngineMethod, RecordAnswer, RecordPayload } from "./engine-method.js";
import type { EngineLoad } from "./engine-load.js";
import type { EngineProbe } from "./engine-probe.js";
import type { RecordSlots } from "./record-slots.js";
import { StreamWriter } from "./transport/stream-writer.js";
import {
  coordinatorMessageFromWire,
  creditToWire,
  failedAnswer,
  heartbeatToWire,
  helloToWire,
  resultBatchToWire,
  resultHasErrors,
  resultUnitId,
  toCompactWire,
  toWire,
  unitDoneToWire,
  type AgentHeartbeat,
  type AgentWireMessage,
  type AssignedUnit,
  type CoordinatorWireMessage,
  type RunWelcome,
  type UnreadablePayload,
  type WireResult,
} from "./transport/wire.js";
import { openAttach, type AttachCall, type CoordinatorClient } from "./transport/coordinator-channel.js";
import { AgentAuthError, AgentProtocolError } from "./agent-errors.js";
import type { AgentStatsCounters } from "./agent-stats.js";
import { redactUrl } from "../common/redact-url.js";

/** Engine load as reported in heartbeats (vllm:num_requests_waiting / _running). */
export interface SessionOptions {
  coordinator: string;
  agentId: string;
  /** Random per agent process: lets this process take over its own agent_id after a network blip. */
  instance: string;
  token: string | undefined;
  engineUrl: string | undefined;
  method: EngineMethod;
  probe: EngineProbe;
  slots: RecordSlots;
  /** Units to hold at once; undefined: the engine's capacity from info(). */
  capacity: number | undefined;
  /** Explicit heartbeat interval; undefined: the Welcome's, else DEFAULT_HEARTBEAT_MS. */
  heartbeatMs: number | undefined;
  engineLoad: ((signal: AbortSignal) => Promise<EngineLoad>) | undefined;
  /** Applies the run's parameters (seeds) to the method; undefined: method.applyRunParams, if it has one. */
  onRunParams: ((params: RunWelcome) => void) | undefined;
  stats: AgentStatsCounters;
  logger: Logger;
  /** The coordinator answered on this stream (the attach succeeded). */
  onAttached: () => void;
  /** A Drain arrived from the coordinator; `reconnect`: it restarts, reattach after this session. */
  onCoordinatorDrain: (reason: string, reconnect: boolean) => void;
}

/** How a session ended. */
export type SessionEnd =
  | { kind: "drained"; reason: string }
  | { kind: "disconnected"; error: Error | undefined }
  | { kind: "unauthenticated"; error: AgentAuthError }
  /** The coordinator's run needs what this agent cannot do (another engine method). */
  | { kind: "incompatible"; error: AgentProtocolError }
  /** The engine's info changed since Hello (it came up, or serves another model): attach again. */
  | { kind: "stale-hello" }
  /** The engine stopped answering with units in hand: they went back to the coordinator, the agent attaches again not ready. */
  | { kind: "engine-lost" }
  | { kind: "stopped" };

export const DEFAULT_HEARTBEAT_MS = 5_000;
/** Results go out together (one ResultBatch): at this many, ... */
const BATCH_RESULTS = 64;
/** ... or this long after the first of them waited, or when their unit is done. */
const BATCH_MS = 50;
/** How long a drained session waits for the coordinator to close its side before cancelling. */
const CLOSE_GRACE_MS = 5_000;
/** How long a session closing for a lost engine waits for the coordinator to close its side. */
const ENGINE_LOST_GRACE_MS = 2_000;

interface HeldUnit {
  unit: AssignedUnit;
  abort: AbortController;
  cancelled: boolean;
  /** Dropped unanswered when the engine stopped answering (counted in unitsDropped then). */
  dropped: boolean;
  task: Promise<void>;
}

export class AttachSession {
  readonly ended: Promise<SessionEnd>;
  private finish!: (end: SessionEnd) => void;
  private finished = false;
  private readonly call: AttachCall;
  private readonly writer: StreamWriter<AgentWireMessage>;
  private readonly held = new Map<string, HeldUnit>();
  private readonly sessionAbort = unboundedAbortController();
  private helloInfo: EngineInfo | undefined;
  private helloReady = false;
  private capacity = 0;
  private attached = false;
  /** Credit granted and units received on this stream (credit does not carry over streams). */
  private granted = 0;
  private received = 0;
  private draining = false;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private heartbeatBusy = false;
  private unsubscribeProbe: () => void = () => {};
  /** Set once the units in hand are sent and our side is closed. */
  private pendingDrainReason: string | undefined;
  /** Results waiting to go out in the next ResultBatch, with who waits for them to be written. */
  private batch: WireResult[] = [];
  private batchSent: Array<(sent: boolean) => void> = [];
  private batchTimer: NodeJS.Timeout | undefined;
  /** The engine stopped answering: the stream is closing in order and ends with this. */
  private losing = false;
  private pendingEnd: SessionEnd | undefined;
  welcome: RunWelcome | undefined;

  constructor(client: CoordinatorClient, private readonly o: SessionOptions) {
    this.ended = new Promise((resolve) => (this.finish = resolve));
    this.call = openAttach(client, o.agentId, o.token);
    // grpc-js call objects are Node Duplex streams; the generated typings do not say so.
    this.writer = new StreamWriter<AgentWireMessage>(this.call as unknown as Duplex);
    this.call.on("data", (m: CoordinatorWireMessage) => this.onMessage(m));
    let failure: grpc.ServiceError | undefined;
    this.call.on("error", (err: grpc.ServiceError) => (failure = err));
    this.call.on("status", (status: grpc.StatusObject) => {
      // 'status' follows push(null) synchronously; messages still buffered are delivered before
      // 'end', so a Drain sent just before the coordinator closes is not missed.
      const conclude = () => this.onStreamEnd(status, failure);
      if (this.call.readableEnded) conclude();
      else this.call.once("end", conclude);
    });
    this.unsubscribeProbe = o.probe.onChange((ready, info) => this.onEngineChange(ready, info));
    void this.open();
  }

  get inflightUnits(): number {
    return this.held.size;
  }

  /** Finish the units in hand, send them, close the stream. */
  drain(reason: string): void {
    if (this.draining || this.finished) return;
    this.draining = true;
    void this.drainNow(reason);
  }

  /** Ends the session now: units in hand are dropped (the coordinator requeues them). */
  stop(end: SessionEnd = { kind: "stopped" }): void {
    this.end(end);
    this.call.cancel();
  }

  private async open(): Promise<void> {
    const info = this.o.probe.info;
    this.helloInfo = info;
    this.helloReady = this.o.probe.ready && info !== undefined;
    this.capacity = this.o.capacity ?? info?.capacity ?? 0;
    // Before the first await: a Welcome answering quickly may set the coordinator's interval.
    this.scheduleHeartbeats(this.o.heartbeatMs ?? DEFAULT_HEARTBEAT_MS);
    await this.send(
      helloToWire({
        agentId: this.o.agentId,
        model: info?.model ?? "",
        methods: [this.o.method.name],
        maxModelLen: info?.maxModelLen ?? 0,
        capacity: this.capacity,
        version: VERSION,
        ready: this.helloReady,
        // The coordinator writes it into run.json and the run card: never its credentials.
        engineUrl: redactUrl(this.o.engineUrl ?? ""),
        instance: this.o.instance,
      }),
    );
    // Credit only once the engine is known: a not-ready agent is sent nothing, and the attach that
    // follows its engine coming up grants the credit with a Hello that names the model.
    if (this.helloReady && this.capacity > 0) await this.grant(this.capacity);
  }

  private async send(message: AgentWireMessage): Promise<boolean> {
    if (this.finished) return false;
    return this.writer.send(message);
  }

  private async grant(units: number): Promise<void> {
    if (await this.send(creditToWire(units))) {
      this.granted += units;
      this.o.stats.creditGranted += units;
    }
  }

  private onMessage(m: CoordinatorWireMessage): void {
    if (this.finished) return;
    if (!this.attached) {
      this.attached = true;
      this.o.onAttached();
    }
    const event = coordinatorMessageFromWire(m);
    switch (event.kind) {
      case "welcome": {
        const run = event.welcome;
        this.welcome = run;
        this.o.logger.info("attached", { runId: run.runId, method: run.method, seeds: run.seeds, leaseMs: run.leaseMs, heartbeatMs: run.heartbeatMs });
        const incompatible = this.applyRunParams(run);
        if (incompatible) {
          this.o.logger.error(incompatible.message);
          this.stop({ kind: "incompatible", error: incompatible });
          return;
        }
        if (this.o.heartbeatMs === undefined && run.heartbeatMs > 0) this.scheduleHeartbeats(run.heartbeatMs);
        return;
      }
      case "unit":
        return this.onUnit(event.unit);
      case "cancel":
        return this.onCancel(event.unitId);
      case "drain":
        this.o.logger.info(event.reconnect ? "the coordinator restarts: finishing what is in hand, then reattaching" : "drain requested by the coordinator", { reason: event.reason });
        this.o.onCoordinatorDrain(event.reason, event.reconnect === true);
        return this.drain(event.reason || "coordinator drain");
      case "unknown":
        this.o.logger.warn("unknown message from the coordinator", { kind: event.wireKind });
    }
  }

  /** Configures the method for the run; an error when this agent cannot answer the way the run asks. */
  private applyRunParams(run: RunWelcome): AgentProtocolError | undefined {
    const where = `run ${run.runId} at ${this.o.coordinator}`;
    // onRunParams first: an agent that runs any method (--method any) switches to the run's here.
    if (this.o.onRunParams) this.o.onRunParams(run);
    // Answering with another method, or without the run's seeds, would put results the run did
    // not ask for into it.
    if (run.method && run.method !== this.o.method.name) {
      return new AgentProtocolError(`${where} uses engine method ${run.method}; this agent runs ${this.o.method.name} (--method)`);
    }
    if (!this.o.onRunParams) {
      if (this.o.method.applyRunParams) this.o.method.applyRunParams({ seeds: run.seeds });
      else if (run.seeds.length > 0) {
        return new AgentProtocolError(`${where} averages label-permutation seeds ${run.seeds.join(",")}; this agent's method cannot apply seeds`);
      }
    }
    if (run.model && this.helloInfo && run.model !== this.helloInfo.model) {
      this.o.logger.warn("the run names another model than the engine serves", { run: run.model, engine: this.helloInfo.model });
    }
    return undefined;
  }

  private onUnit(unit: AssignedUnit): void {
    const stats = this.o.stats;
    if (this.held.has(unit.unitId)) {
      this.o.logger.warn("unit already held; duplicate ignored", { unit: unit.unitId });
      return;
    }
    stats.unitsReceived++;
    this.received++;
    if (this.received > this.granted) {
      this.o.logger.warn("coordinator sent more units than credited", { received: this.received, granted: this.granted });
    }
    const abort = unboundedAbortController();
    const sessionGone = () => abort.abort(this.sessionAbort.signal.reason);
    this.sessionAbort.signal.addEventListener("abort", sessionGone, { once: true });
    const held: HeldUnit = { unit, abort, cancelled: false, dropped: false, task: Promise.resolve() };
    this.held.set(unit.unitId, held);
    // Sent before the coordinator saw our not-ready heartbeat: straight back, unanswered.
    if (!this.o.probe.ready) queueMicrotask(() => this.engineLost("engine not ready when the unit came"));
    held.task = this.runUnit(held)
      .catch((err: unknown) => {
        // Not expected (answers and sends do not throw); the unit is dropped and its lease lapses.
        this.o.logger.error("unit failed in the agent", { unit: unit.unitId, error: (err as Error).message });
        abort.abort(err);
      })
      .finally(() => {
        this.sessionAbort.signal.removeEventListener("abort", sessionGone);
        this.held.delete(unit.unitId);
        // One credit back per unit that left our hands, done or cancelled; none while draining.
        if (!this.draining && !this.finished && !this.losing) void this.grant(1);
      });
  }

  private onCancel(unitId: string): void {
    const held = this.held.get(unitId);
    if (!held) {
      this.o.logger.debug("cancel for a unit not held", { unit: unitId });
      return;
    }
    held.cancelled = true;
    this.o.stats.unitsCancelled++;
    this.dropResults(unitId);
    held.abort.abort(new Error(`unit ${unitId} cancelled by the coordinator`));
  }

  private async runUnit(held: HeldUnit): Promise<void> {
    const { unit, abort } = held;
    const signal = abort.signal;
    const pending: Array<Promise<void>> = [];
    let warmed = false;
    // A backup copy (the coordinator's tail handling) runs its records last first: it meets the
    // primary holder, which runs them first to last, in the middle instead of racing it over the
    // same records, so little is answered twice. The wire order stays the unit's.
    const records = unit.backup ? [...unit.records].reverse() : unit.records;
    for (const record of records) {
      if (signal.aborted) break;
      if ("unreadable" in record) {
        pending.push(this.sendUnreadable(unit.unitId, record.unreadable, signal));
        continue;
      }
      let release: () => void;
      try {
        release = await this.o.slots.acquire(signal);
      } catch {
        break;
      }
      const answered = this.answerRecord(unit.unitId, record.payload, signal).finally(release);
      // Records of a unit share the state prefix: the first goes alone so the engine caches the
      // prefix, the rest (started in order) then hit it.
      if (!warmed) {
        warmed = true;
        await answered;
      } else pending.push(answered);
    }
    await Promise.all(pending);
    if (signal.aborted) return;
    // The unit's results go before its UnitDone, which releases its lease.
    void this.flushResults();
    if (await this.send(unitDoneToWire(unit.unitId))) this.o.stats.unitsDone++;
  }

  private async answerRecord(unitId: string, record: RecordPayload, signal: AbortSignal): Promise<void> {
    const started = performance.now();
    let answer: RecordAnswer;
    try {
      answer = await this.o.method.answer(record, signal);
    } catch (err) {
      if (signal.aborted) return;
      // The method retries per question itself; a throw is a fault of the method, recorded as data.
      this.o.stats.recordFailures++;
      const message = err instanceof Error ? err.message : String(err);
      this.o.logger.warn("engine method failed on a record", { unit: unitId, record: record.recordKey, error: message });
      answer = failedAnswer(Object.keys(record.questions), `agent: ${this.o.method.name} failed: ${message}`, performance.now() - started);
    }
    if (signal.aborted) return;
    let result: WireResult;
    try {
      result = toCompactWire(unitId, record, answer);
    } catch (err) {
      // An answer not of the RecordAnswer shape (a method bug) is recorded, not allowed to crash the agent.
      this.o.stats.recordFailures++;
      const message = `agent: ${this.o.method.name} returned a malformed answer: ${(err as Error).message}`;
      this.o.logger.warn(message, { unit: unitId, record: record.recordKey });
      result = toWire(unitId, record, failedAnswer(Object.keys(record.questions), message, performance.now() - started));
    }
    if (resultHasErrors(result) && !(await this.o.probe.probe())) {
      // Errors while the engine is down are its absence, not answers: committing them would turn a
      // vLLM restart into failed records. The units go back to the coordinator instead.
      this.engineLost(`engine down (record ${record.recordKey} failed)`);
      return;
    }
    if (signal.aborted) return;
    this.o.stats.recordsAnswered++;
    this.o.stats.unknownLabels += answer.unknownLabels ?? 0;
    // Not awaited: the record's slot is free once it is answered; the batch goes out by itself.
    void this.sendResult(result).then((sent) => {
      if (sent) this.o.stats.resultsSent++;
    });
  }

  /** Queues a result for the next ResultBatch; resolves once that batch is written (false: the stream closed). */
  private sendResult(result: WireResult): Promise<boolean> {
    if (this.finished) return Promise.resolve(false);
    this.batch.push(result);
    const sent = new Promise<boolean>((resolve) => this.batchSent.push(resolve));
    if (this.batch.length >= BATCH_RESULTS) void this.flushResults();
    else this.batchTimer ??= setTimeout(() => void this.flushResults(), BATCH_MS);
    return sent;
  }

  /** Sends the waiting results as one ResultBatch (in stream order, before whatever is sent next). */
  private flushResults(): Promise<boolean> {
    if (this.batchTimer) clearTimeout(this.batchTimer);
    this.batchTimer = undefined;
    if (this.batch.length === 0) return Promise.resolve(true);
    const results = this.batch;
    const waiting = this.batchSent;
    this.batch = [];
    this.batchSent = [];
    const written = this.send(resultBatchToWire(results));
    void written.then((ok) => {
      for (const w of waiting) w(ok);
    });
    return written;
  }

  /** A cancelled unit's results still waiting are not sent: the coordinator took its records back. */
  private dropResults(unitId: string): void {
    const keep: number[] = [];
    for (let i = 0; i < this.batch.length; i++) if (resultUnitId(this.batch[i]!) !== unitId) keep.push(i);
    if (keep.length === this.batch.length) return;
    const dropped = this.batchSent.filter((_, i) => !keep.includes(i));
    this.batch = keep.map((i) => this.batch[i]!);
    this.batchSent = keep.map((i) => this.batchSent[i]!);
    for (const w of dropped) w(false);
  }

  private async sendUnreadable(unitId: string, record: UnreadablePayload, signal: AbortSignal): Promise<void> {
    this.o.stats.recordFailures++;
    this.o.logger.warn("unreadable payload", { error: record.error.message });
    if (signal.aborted) return;
    const answer = failedAnswer(record.questionKeys, `agent: ${record.error.message}`, 0);
    void this.sendResult(toWire(unitId, record, answer)).then((sent) => {
      if (sent) this.o.stats.resultsSent++;
    });
  }

  /**
   * The engine stopped answering with units in hand: they go back to the coordinator now, not at
   * lease expiry. The units are dropped unanswered (no error results: an engine's absence is not an
   * answer), a not-ready heartbeat tells the coordinator to requeue what it leased to us and send
   * nothing more, and the stream is closed in order; the agent attaches again not ready and, once
   * the engine answers, ready with fresh credit.
   */
  private engineLost(reason: string): void {
    if (this.finished || this.losing) return;
    const units = [...this.held.values()].filter((h) => !h.cancelled && !h.dropped);
    if (units.length === 0 && this.o.probe.ready) return;
    this.losing = true;
    this.o.logger.warn("engine not answering; returning the units in hand to the coordinator", { reason, units: units.length });
    for (const h of units) {
      h.dropped = true;
      h.abort.abort(new Error(`unit ${h.unit.unitId} returned: ${reason}`));
    }
    this.o.stats.unitsDropped += units.length;
    const end: SessionEnd = this.draining ? { kind: "drained", reason: "engine down while draining; units in hand returned" } : { kind: "engine-lost" };
    void (async () => {
      await this.flushResults(); // results of records already answered still count
      await this.heartbeat(true);
      await this.writer.end();
      // The coordinator closes its side once it has read everything; a cancel would drop the heartbeat.
      const grace = setTimeout(() => this.stop(end), ENGINE_LOST_GRACE_MS);
      this.pendingEnd = end;
      await this.ended;
      clearTimeout(grace);
    })();
  }

  private onEngineChange(ready: boolean, info: EngineInfo | undefined): void {
    if (this.finished) return;
    const stale =
      ready && info !== undefined && (!this.helloReady || info.model !== this.helloInfo?.model || info.maxModelLen !== this.helloInfo?.maxModelLen);
    if (stale && !this.draining) {
      this.o.logger.info("engine info changed since Hello; attaching again", { model: info.model, maxModelLen: info.maxModelLen });
      this.stop({ kind: "stale-hello" });
      return;
    }
    if (!ready && [...this.held.values()].some((h) => !h.cancelled && !h.dropped)) {
      this.engineLost(this.o.probe.lastError?.message ?? "engine not ready");
      return;
    }
    // Readiness goes out now, not at the next interval: the coordinator stops (or resumes) sending work.
    void this.heartbeat(true);
  }

  private scheduleHeartbeats(intervalMs: number): void {
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    if (this.finished) return;
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), intervalMs);
  }

  /** `now`: a readiness change, sent at once with the last engine load known (no /metrics read first). */
  private async heartbeat(now = false): Promise<void> {
    if (this.finished) return;
    if (now) {
      if (await this.send(heartbeatToWire(this.heartbeatNow(this.o.stats.engineLoad)))) this.o.stats.heartbeatsSent++;
      return;
    }
    if (this.heartbeatBusy) return;
    this.heartbeatBusy = true;
    try {
      let load: EngineLoad | undefined;
      if (this.o.engineLoad && this.o.probe.ready) {
        try {
          load = await this.o.engineLoad(AbortSignal.any([this.sessionAbort.signal, AbortSignal.timeout(2_000)]));
          this.o.stats.engineLoad = load;
        } catch (err) {
          this.o.logger.debug("engine load not read", { error: (err as Error).message });
        }
      }
      const sent = await this.send(heartbeatToWire(this.heartbeatNow(load)));
      if (sent) this.o.stats.heartbeatsSent++;
    } finally {
      this.heartbeatBusy = false;
    }
  }

  private heartbeatNow(load: EngineLoad | undefined): AgentHeartbeat {
    return {
      inflightUnits: [...this.held.values()].filter((h) => !h.dropped && !h.cancelled).length,
      inflightRequests: this.o.slots.inUse,
      engineWaiting: load?.waiting ?? 0,
      engineRunning: load?.running ?? 0,
      ready: this.o.probe.ready,
    };
  }

  private async drainNow(reason: string): Promise<void> {
    while (this.held.size > 0 && !this.finished) {
      await Promise.all([...this.held.values()].map((h) => h.task));
    }
    if (this.finished) return;
    void this.flushResults();
    await this.writer.end();
    // Wait for the coordinator to close its side, so nothing we wrote is cut off by a cancel.
    const grace = setTimeout(() => this.stop({ kind: "drained", reason }), CLOSE_GRACE_MS);
    this.pendingDrainReason = reason;
    await this.ended;
    clearTimeout(grace);
  }

  private onStreamEnd(status: grpc.StatusObject, failure: grpc.ServiceError | undefined): void {
    if (status.code === grpc.status.UNAUTHENTICATED || status.code === grpc.status.PERMISSION_DENIED) {
      this.end({ kind: "unauthenticated", error: new AgentAuthError(this.o.coordinator, status.code, { cause: failure }) });
      return;
    }
    if (this.pendingEnd !== undefined) {
      this.end(this.pendingEnd);
      return;
    }
    if (this.pendingDrainReason !== undefined) {
      this.end({ kind: "drained", reason: this.pendingDrainReason });
      return;
    }
    if (this.draining) {
      // The coordinator closed before we sent everything: what is in hand is dropped (it requeues).
      this.end({ kind: "drained", reason: "coordinator closed the stream while draining" });
      return;
    }
    const error = failure ?? new Error(`coordinator closed the stream (${grpc.status[status.code]}${status.details ? `: ${status.details}` : ""})`);
    this.end({ kind: "disconnected", error });
  }

  private end(end: SessionEnd): void {
    if (this.finished) return;
    this.finished = true;
    this.o.stats.unitsDropped += [...this.held.values()].filter((h) => !h.cancelled && !h.dropped).length;
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    if (this.batchTimer) clearTimeout(this.batchTimer);
    for (const w of this.batchSent) w(false);
    this.batch = [];
    this.batchSent = [];
    this.unsubscribeProbe();
    this.writer.close();
    this.sessionAbort.abort(new Error(`session ended: ${end.kind}`));
    this.finish(end);
  }
}

/**
 * The session's and each unit's abort signals are listened to by every record and request in
 * flight under them (dozens at once by design), and each listener is removed when its work ends:
 * Node's 10-listener leak warning does not apply.
 */
function unboundedAbortController(): AbortController {
  const c = new AbortController();
  setMaxListeners(0, c.signal);
  return c;
}

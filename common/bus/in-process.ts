// The bus on one machine: the same semantics as NatsBus (message-id dedup within a window, durable
// consumers with explicit ack and redelivery, latest metrics per track, event replay) kept in
// memory for the life of the process. Messages travel as JSON text, as they would over NATS, so a
// consumer never shares an object with the publisher.
import {
  checkToken,
  DEFAULT_DUPLICATE_WINDOW_MS,
  BusEventSchema,
  MetricsMessageSchema,
  resultMessage,
  resultMessageId,
  RunStatusRecordSchema,
  SUMMARY_METRICS,
  type Bus,
  type BusEvent,
  type BusState,
  type ConsumeResultsOptions,
  type MetricsInput,
  type MetricsMessage,
  type PublishOutcome,
  type ResultConsumer,
  type ResultDelivery,
  type RunStatusInput,
  type RunStatusRecord,
  type SubscribeEventsOptions,
  type SubscribeMetricsOptions,
  type Subscription,
  BusError,
} from "./bus.js";
import { createLogger, type Logger } from "../log.js";
import { type CommittedLine, ResultLineSchema, type ResultLine } from "../results/index.js";

export interface InProcessBusOptions {
  /** Default DEFAULT_DUPLICATE_WINDOW_MS. */
  duplicateWindowMs?: number;
  /** Clock for the duplicate window (tests). */
  now?: () => number;
  logger?: Logger;
}

interface StoredResult {
  seq: number;
  track: string;
  json: string;
}

const DEFAULT_ACK_WAIT_MS = 30_000;
/** Deliveries in a row before the pump yields to I/O, so a long backlog does not starve the process. */
const YIELD_EVERY = 256;

class Durable {
  /** Index of the next never-delivered message in the run's log. */
  next = 0;
  /** Un-acked deliveries by seq: their redelivery timer and count. */
  readonly pending = new Map<number, { timer: NodeJS.Timeout; count: number }>();
  /** Messages whose ack wait ran out, in seq order. */
  readonly redeliver: Array<{ item: StoredResult; count: number }> = [];
  active: DurablePump | undefined;
  constructor(readonly ackWaitMs: number) {}
}

class RunState {
  readonly results: StoredResult[] = [];
  readonly events: string[] = [];
  readonly latestMetrics = new Map<string, string>();
  readonly durables = new Map<string, Durable>();
  readonly eventListeners = new Set<(json: string) => void>();
  readonly metricsListeners = new Set<(json: string) => void>();
  status: string | undefined;
}

class DurablePump implements ResultConsumer {
  private stopped = false;
  private wake: (() => void) | undefined;
  private readonly done: Promise<void>;

  constructor(
    private readonly runId: string,
    private readonly run: RunState,
    private readonly durable: Durable,
    private readonly options: ConsumeResultsOptions,
    private readonly log: Logger,
  ) {
    this.done = this.loop();
  }

  notify(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.notify();
    await this.done;
    if (this.durable.active === this) this.durable.active = undefined;
  }

  private take(): { item: StoredResult; count: number } | undefined {
    const again = this.durable.redeliver.shift();
    if (again) return again;
    const item = this.run.results[this.durable.next];
    if (!item) return undefined;
    this.durable.next++;
    return { item, count: 0 };
  }

  private async loop(): Promise<void> {
    let sinceYield = 0;
    while (!this.stopped) {
      const next = this.take();
      if (!next) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        continue;
      }
      if (++sinceYield >= YIELD_EVERY) {
        sinceYield = 0;
        await new Promise((r) => setImmediate(r));
      }
      await this.deliver(next.item, next.count + 1);
    }
  }

  private async deliver(item: StoredResult, count: number): Promise<void> {
    const durable = this.durable;
    const timer = setTimeout(() => {
      if (!durable.pending.delete(item.seq)) return;
      durable.redeliver.push({ item, count });
      durable.redeliver.sort((a, b) => a.item.seq - b.item.seq);
      durable.active?.notify();
    }, durable.ackWaitMs);
    timer.unref();
    durable.pending.set(item.seq, { timer, count });
    const delivery: ResultDelivery = { runId: this.runId, track: item.track, seq: item.seq, deliveryCount: count };
    const ack = () => {
      const p = durable.pending.get(item.seq);
      if (p?.timer !== timer) return; // acked already, or this delivery expired and went out again
      clearTimeout(timer);
      durable.pending.delete(item.seq);
    };
    const parsed = ResultLineSchema.safeParse(JSON.parse(item.json));
    if (!parsed.success) {
      ack(); // an invalid line can never apply: drop it rather than redeliver forever
      this.reportError(new BusError(`result seq ${item.seq} is not a results line: ${parsed.error.message}`), delivery);
      return;
    }
    try {
      await this.options.onResult(parsed.data, ack, delivery);
    } catch (err) {
      this.reportError(err instanceof Error ? err : new Error(String(err)), delivery);
    }
  }

  private reportError(error: Error, delivery: ResultDelivery): void {
    try {
      if (this.options.onError) return this.options.onError(error, delivery);
    } catch (err) {
      this.log.warn("onError threw", { error: err instanceof Error ? err.message : String(err) });
    }
    this.log.warn("result consumer error", { durable: this.options.durable, seq: delivery.seq, error: error.message });
  }
}

export class InProcessBus implements Bus {
  readonly kind = "in-process" as const;
  private closed = false;
  private seq = 0;
  private readonly runs = new Map<string, RunState>();
  /** message id -> [time first seen, seq]; insertion order is time order, so pruning stops early. */
  private readonly seen = new Map<string, [number, number]>();
  private readonly stateListeners = new Set<(s: BusState) => void>();
  private readonly windowMs: number;
  private readonly now: () => number;
  private readonly log: Logger;

  constructor(options: InProcessBusOptions = {}) {
    this.windowMs = options.duplicateWindowMs ?? DEFAULT_DUPLICATE_WINDOW_MS;
    this.now = options.now ?? Date.now;
    this.log = options.logger ?? createLogger("bus");
  }

  get state(): BusState {
    return this.closed ? "closed" : "connected";
  }

  onStateChange(listener: (state: BusState) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  private run(runId: string): RunState {
    checkToken("run id", runId);
    let run = this.runs.get(runId);
    if (!run) {
      run = new RunState();
      this.runs.set(runId, run);
    }
    return run;
  }

  private closedOutcome(): PublishOutcome {
    return { ok: false, error: new BusError("bus is closed") };
  }

  async publishResult(runId: string, track: string, line: ResultLine | CommittedLine): Promise<PublishOutcome> {
    if (this.closed) return this.closedOutcome();
    const run = this.run(runId);
    checkToken("track", track);
    const message = resultMessage(line);
    const id = resultMessageId(runId, message);
    const now = this.now();
    for (const [key, [at]] of this.seen) {
      if (now - at < this.windowMs) break;
      this.seen.delete(key);
    }
    const earlier = this.seen.get(id);
    if (earlier) return { ok: true, duplicate: true, seq: earlier[1] };
    const seq = ++this.seq;
    this.seen.set(id, [now, seq]);
    run.results.push({ seq, track, json: message.text });
    for (const d of run.durables.values()) d.active?.notify();
    return { ok: true, duplicate: false, seq };
  }

  async publishEvent(runId: string, event: BusEvent): Promise<PublishOutcome> {
    if (this.closed) return this.closedOutcome();
    const run = this.run(runId);
    const json = JSON.stringify(event);
    run.events.push(json);
    for (const listener of run.eventListeners) listener(json);
    return { ok: true, duplicate: false, seq: ++this.seq };
  }

  async publishMetrics(runId: string, track: string, metrics: MetricsInput): Promise<PublishOutcome> {
    if (this.closed) return this.closedOutcome();
    const run = this.run(runId);
    if (track !== SUMMARY_METRICS) checkToken("track", track);
    const json = JSON.stringify(metrics);
    run.latestMetrics.set(track, json);
    for (const listener of run.metricsListeners) listener(json);
    return { ok: true, duplicate: false, seq: ++this.seq };
  }

  async putStatus(runId: string, status: RunStatusInput): Promise<void> {
    if (this.closed) throw new BusError("bus is closed");
    this.run(runId).status = JSON.stringify(status);
  }

  async getStatus(runId: string): Promise<RunStatusRecord | undefined> {
    if (this.closed) throw new BusError("bus is closed");
    const json = this.run(runId).status;
    return json === undefined ? undefined : RunStatusRecordSchema.parse(JSON.parse(json));
  }

  async listStatuses(): Promise<RunStatusRecord[]> {
    if (this.closed) throw new BusError("bus is closed");
    const out: RunStatusRecord[] = [];
    for (const run of this.runs.values()) if (run.status !== undefined) out.push(RunStatusRecordSchema.parse(JSON.parse(run.status)));
    return out;
  }

  async consumeResults(runId: string, options: ConsumeResultsOptions): Promise<ResultConsumer> {
    if (this.closed) throw new BusError("bus is closed");
    const run = this.run(runId);
    checkToken("durable", options.durable);
    let durable = run.durables.get(options.durable);
    if (!durable) {
      durable = new Durable(options.ackWaitMs ?? DEFAULT_ACK_WAIT_MS);
      run.durables.set(options.durable, durable);
    }
    if (durable.active) {
      throw new BusError(`durable ${options.durable} of run ${runId} already has a consumer in this process`);
    }
    const pump = new DurablePump(runId, run, durable, options, this.log);
    durable.active = pump;
    return pump;
  }

  async subscribeEvents(runId: string, onEvent: (event: BusEvent) => void, options: SubscribeEventsOptions = {}): Promise<Subscription> {
    if (this.closed) throw new BusError("bus is closed");
    const run = this.run(runId);
    const deliver = this.asyncListener(BusEventSchema, onEvent, "event");
    if (options.from === "start") for (const json of run.events) deliver(json);
    run.eventListeners.add(deliver);
    return { stop: async () => void run.eventListeners.delete(deliver) };
  }

  async subscribeMetrics(runId: string, onMetrics: (message: MetricsMessage) => void, options: SubscribeMetricsOptions = {}): Promise<Subscription> {
    if (this.closed) throw new BusError("bus is closed");
    const run = this.run(runId);
    const deliver = this.asyncListener(MetricsMessageSchema, onMetrics, "metrics");
    if ((options.from ?? "latest") === "latest") for (const json of run.latestMetrics.values()) deliver(json);
    run.metricsListeners.add(deliver);
    return { stop: async () => void run.metricsListeners.delete(deliver) };
  }

  /** Delivers after the publisher returns, in publish order (microtasks are FIFO), as NATS would. */
  private asyncListener<T>(schema: { safeParse(v: unknown): { success: true; data: T } | { success: false; error: Error } }, fn: (value: T) => void, what: string): (json: string) => void {
    return (json) =>
      queueMicrotask(() => {
        const parsed = schema.safeParse(JSON.parse(json));
        if (!parsed.success) {
          this.log.warn(`dropped an invalid ${what} message`, { error: parsed.error.message });
          return;
        }
        try {
          fn(parsed.data);
        } catch (err) {
          this.log.warn(`${what} subscriber threw`, { error: err instanceof Error ? err.message : String(err) });
        }
      });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const pumps: Promise<void>[] = [];
    for (const run of this.runs.values()) {
      run.eventListeners.clear();
      run.metricsListeners.clear();
      for (const d of run.durables.values()) {
        if (d.active) pumps.push(d.active.stop());
        for (const p of d.pending.values()) clearTimeout(p.timer);
      }
    }
    await Promise.all(pumps);
    for (const l of this.stateListeners) l("closed");
  }
}

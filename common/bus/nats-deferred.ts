// A NATS bus for a process that must start while NATS is down (the coordinator): it connects in
// the background, retrying forever, and until then behaves like a NatsBus in an outage (state
// "disconnected", publishes fail at once, status writes throw). Once connected it is the NatsBus,
// which itself reconnects forever.
import { BusError, type Bus } from "./bus.js";
// The Bus interface's own types, by name: this class only passes them through to the NatsBus.
import type * as BusTypes from "./bus.js";
import { NatsBus, reconnectDelayMs, type NatsBusOptions } from "./nats.js";
import { createLogger, type Logger } from "../log.js";
import type { CommittedLine, ResultLine } from "../results/index.js";

/** How often a still-failing first connection is logged at warn level. */
const WARN_EVERY_MS = 30_000;

export class DeferredNatsBus implements Bus {
  readonly kind = "nats" as const;
  private inner: NatsBus | undefined;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners = new Set<(s: BusTypes.BusState) => void>();
  private readonly log: Logger;
  private readonly startedAt = Date.now();
  private lastWarnAt = 0;
  private connecting: Promise<void> | undefined;
  private readonly connectedWaiters: Array<() => void> = [];

  /** Starts connecting at once; never throws for an unreachable server. */
  constructor(
    private readonly options: NatsBusOptions,
    private readonly connect: (o: NatsBusOptions) => Promise<NatsBus> = (o) => NatsBus.connect(o),
  ) {
    this.log = options.logger ?? createLogger("bus");
    this.attempt();
  }

  private attempt(): void {
    if (this.closed || this.inner) return;
    this.connecting = (async () => {
      try {
        const bus = await this.connect({ ...this.options, logger: this.log });
        if (this.closed) {
          await bus.close();
          return;
        }
        this.inner = bus;
        bus.onStateChange((s) => this.emit(s));
        if (Date.now() - this.startedAt > 1000) this.log.info("NATS reachable: connected", { outageMs: Date.now() - this.startedAt });
        this.emit(bus.state);
        for (const w of this.connectedWaiters.splice(0)) w();
      } catch (err) {
        const now = Date.now();
        if (now - this.lastWarnAt >= WARN_EVERY_MS) {
          this.lastWarnAt = now;
          this.log.warn("NATS unreachable; carrying on without it and retrying (results still go to disk)", { error: (err as Error).message });
        }
        if (!this.closed) {
          this.timer = setTimeout(() => this.attempt(), reconnectDelayMs(now - this.startedAt));
          this.timer.unref();
        }
      }
    })();
  }

  private emit(state: BusTypes.BusState): void {
    for (const l of this.listeners) {
      try {
        l(state);
      } catch (err) {
        this.log.warn("bus state listener threw", { error: (err as Error).message });
      }
    }
  }

  get state(): BusTypes.BusState {
    if (this.closed) return "closed";
    return this.inner ? this.inner.state : "disconnected";
  }

  onStateChange(listener: (state: BusTypes.BusState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves once the first connection is made (never, while NATS stays unreachable). */
  connected(): Promise<void> {
    if (this.inner) return Promise.resolve();
    return new Promise((r) => this.connectedWaiters.push(r));
  }

  private down(): BusTypes.PublishOutcome {
    return { ok: false, error: new BusError(this.closed ? "bus is closed" : "NATS not reachable yet") };
  }

  private need(): NatsBus {
    if (!this.inner) throw new BusError(this.closed ? "bus is closed" : "NATS not reachable yet");
    return this.inner;
  }

  publishResult(runId: string, track: string, line: ResultLine | CommittedLine): Promise<BusTypes.PublishOutcome> {
    return this.inner ? this.inner.publishResult(runId, track, line) : Promise.resolve(this.down());
  }

  publishEvent(runId: string, event: BusTypes.BusEvent): Promise<BusTypes.PublishOutcome> {
    return this.inner ? this.inner.publishEvent(runId, event) : Promise.resolve(this.down());
  }

  publishMetrics(runId: string, track: string, metrics: BusTypes.MetricsInput): Promise<BusTypes.PublishOutcome> {
    return this.inner ? this.inner.publishMetrics(runId, track, metrics) : Promise.resolve(this.down());
  }

  async putStatus(runId: string, status: BusTypes.RunStatusInput): Promise<void> {
    return this.need().putStatus(runId, status);
  }

  async getStatus(runId: string): Promise<BusTypes.RunStatusRecord | undefined> {
    return this.need().getStatus(runId);
  }

  async listStatuses(): Promise<BusTypes.RunStatusRecord[]> {
    return this.need().listStatuses();
  }

  async consumeResults(runId: string, options: BusTypes.ConsumeResultsOptions): Promise<BusTypes.ResultConsumer> {
    return this.need().consumeResults(runId, options);
  }

  async subscribeEvents(runId: string, onEvent: (event: BusTypes.BusEvent) => void, options?: BusTypes.SubscribeEventsOptions): Promise<BusTypes.Subscription> {
    return this.need().subscribeEvents(runId, onEvent, options);
  }

  async subscribeMetrics(runId: string, onMetrics: (message: BusTypes.MetricsMessage) => void, options?: BusTypes.SubscribeMetricsOptions): Promise<BusTypes.Subscription> {
    return this.need().subscribeMetrics(runId, onMetrics, options);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.connecting?.catch(() => undefined);
    await this.inner?.close();
    this.emit("closed");
  }
}

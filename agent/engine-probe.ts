// Watches the engine through method.info(): ready while it answers, not ready while it is down
// (vLLM restarting). The attach loop reports readiness in Hello and heartbeats.
import type { EngineInfo, EngineMethod } from "./engine-method.js";
import type { Logger } from "../common/log.js";

export interface EngineProbeOptions {
  /** Probe interval while the engine answers, in ms. */
  readyIntervalMs: number;
  /** Probe interval while it does not, in ms (shorter: coming back quickly matters). */
  downIntervalMs: number;
  /** Time allowed for one info() call, in ms. */
  timeoutMs: number;
  /** An engine not ready this long after start() (or after it went down) is reported once with its last error. */
  notReadyWarnMs?: number;
}

export type EngineChangeListener = (ready: boolean, info: EngineInfo | undefined) => void;

export class EngineProbe {
  private readyNow = false;
  private infoNow: EngineInfo | undefined;
  private errorNow: Error | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private readonly stopper = new AbortController();
  private readonly listeners = new Set<EngineChangeListener>();
  /** Since when the engine has not been ready (start, or the last ready -> down); undefined once reported or while ready. */
  private downSince: number | undefined;

  constructor(
    private readonly method: EngineMethod,
    private readonly options: EngineProbeOptions,
    private readonly logger: Logger,
  ) {}

  get ready(): boolean {
    return this.readyNow;
  }
  /** The last info the engine gave (kept while it is down: it names the model it served). */
  get info(): EngineInfo | undefined {
    return this.infoNow;
  }
  get lastError(): Error | undefined {
    return this.errorNow;
  }

  onChange(listener: EngineChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** One probe now; resolves with readiness. Never throws. */
  async probe(): Promise<boolean> {
    const signal = AbortSignal.any([this.stopper.signal, AbortSignal.timeout(this.options.timeoutMs)]);
    let info: EngineInfo | undefined;
    let error: Error | undefined;
    try {
      info = await this.method.info(signal);
    } catch (err) {
      error = err instanceof Error ? err : new Error(String(err));
    }
    if (this.stopper.signal.aborted) return this.readyNow;
    const wasReady = this.readyNow;
    const previous = this.infoNow;
    if (info) {
      this.readyNow = true;
      this.infoNow = info;
      this.errorNow = undefined;
    } else {
      this.readyNow = false;
      this.errorNow = error;
    }
    if (this.readyNow) this.downSince = undefined;
    else if (wasReady) this.downSince = Date.now();
    else if (this.downSince !== undefined && this.options.notReadyWarnMs !== undefined && Date.now() - this.downSince >= this.options.notReadyWarnMs) {
      this.downSince = undefined;
      this.logger.warn(`engine not ready after ${Math.round(this.options.notReadyWarnMs / 1000)} s (still trying): ${error?.message ?? "no answer"}`, { error: error?.message });
    }
    if (wasReady !== this.readyNow) {
      if (this.readyNow) this.logger.info("engine ready", { model: info?.model, maxModelLen: info?.maxModelLen, capacity: info?.capacity });
      else this.logger.warn("engine not ready", { error: error?.message });
    }
    const infoChanged = info !== undefined && (previous?.model !== info.model || previous.maxModelLen !== info.maxModelLen || previous.capacity !== info.capacity);
    // A change seen by any probe (the timer's or a caller's) moves the timer to the new interval.
    if (wasReady !== this.readyNow) this.schedule();
    if (wasReady !== this.readyNow || infoChanged) for (const l of this.listeners) l(this.readyNow, this.infoNow);
    return this.readyNow;
  }

  /** Probes on a timer until stop(). */
  start(): void {
    if (this.running) return;
    this.running = true;
    if (!this.readyNow) this.downSince = Date.now();
    this.schedule();
  }

  private schedule(): void {
    if (!this.running) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(async () => {
      this.timer = undefined;
      await this.probe();
      if (!this.timer) this.schedule();
    }, this.readyNow ? this.options.readyIntervalMs : this.options.downIntervalMs);
  }

  stop(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.stopper.abort(new Error("engine probe stopped"));
  }
}

// Watches the engine through its /health and method.info(): ready while it answers, not ready
// while it is down (vLLM restarting, process killed) or answers inference requests with 5xx again
// and again. Engine requests seen failing (observe()) trigger a probe at once, so a dead engine is
// noticed in well under a second rather than at the next timed probe. The attach loop reports
// readiness in Hello and heartbeats; the session hands its units back when it turns not ready.
import type { EngineInfo, EngineMethod } from "./engine-method.js";
import type { Logger } from "../common/log.js";
import { EngineHttpError, EngineRetriesExhaustedError, EngineTimeoutError, EngineUnreachableError, requestText, type EngineRequestObservation } from "./engine-http.js";
import { isKeyRefusal, keyRefusalMessage } from "./engine-auth.js";

export interface EngineProbeOptions {
  /** Probe interval while the engine answers, in ms. */
  readyIntervalMs: number;
  /** Probe interval while it does not, in ms (shorter: coming back quickly matters). */
  downIntervalMs: number;
  /** Time allowed for one info() call, in ms. */
  timeoutMs: number;
  /** An engine not ready this long after start() (or after it went down) is reported once with its last error. */
  notReadyWarnMs?: number;
  /** The engine's base URL, named in the early reports below. */
  engineUrl?: string;
  /**
   * An engine not ready this long after start() (or after it went down) is reported at once
   * ("unreachable" when refused or silent, with the error or the endpoint awaited), then every
   * downReportRepeatMs while it stays down. Reporting only: readiness and notReadyWarnMs are
   * unchanged. Default 5000; Infinity: no such reports.
   */
  downReportMs?: number;
  /** Default 30000. */
  downReportRepeatMs?: number;
  /**
   * The engine's health URL (vLLM: GET /health, 200 while its engine core lives and 503 once it is
   * dead, vllm/entrypoints/serve/instrumentator/health.py); checked before info() when set.
   */
  healthUrl?: string;
  /** Consecutive 5xx answers (501 aside) that make a running engine not ready. Default 3. */
  serverErrorStreak?: number;
  /** How long such an engine stays not ready before it is probed again; doubles on each repeat up to 30 s. Default 2000. */
  serverErrorHoldMs?: number;
  now?: () => number;
}

const MAX_SERVER_ERROR_HOLD_MS = 30_000;

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
  /** 5xx answers in a row, and until when a run of them keeps the engine not ready. */
  private serverErrors = 0;
  private failingUntil = 0;
  private holdMs: number;
  private lastTripAt = -Infinity;
  private failingReason: string | undefined;
  private probing: Promise<boolean> | undefined;
  private reportTimer: NodeJS.Timeout | undefined;
  private reporting = false;
  /** The engine refuses our API key (HTTP 401): said once, then quiet until it accepts one again. */
  private keyRefused = false;
  /** The request the probe under way waits on, and since when. */
  private awaiting: { endpoint: string; since: number } | undefined;

  constructor(
    private readonly method: EngineMethod,
    private readonly options: EngineProbeOptions,
    private readonly logger: Logger,
  ) {
    this.holdMs = options.serverErrorHoldMs ?? 2_000;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /**
   * One engine request ended (engine-http's observation). A refused or reset connection probes
   * at once; a run of 5xx answers makes the engine not ready for a while (growing while it
   * repeats); an answer resets the run. A 503 that refused admission (queue full) is an answer: the
   * engine is alive and the method sends smaller batches.
   */
  observe(outcome: EngineRequestObservation["outcome"], admissionRefused = false): void {
    if (this.stopper.signal.aborted) return;
    if (outcome === "unreachable") {
      if (this.readyNow) this.probeSoon();
      return;
    }
    if (typeof outcome !== "number") return;
    if (outcome < 400 || admissionRefused) {
      this.serverErrors = 0;
      return;
    }
    // The key refused mid-run (the engine restarted with another): not ready at once, no errored answers.
    if (isKeyRefusal(outcome)) {
      if (this.readyNow) this.probeSoon();
      return;
    }
    if (outcome < 500 || outcome === 501) return;
    this.serverErrors++;
    const streak = this.options.serverErrorStreak ?? 3;
    if (this.serverErrors < streak || this.failingUntil > this.now()) return;
    this.serverErrors = 0;
    // A run of 5xx long after the last one starts again from the shortest hold.
    if (this.now() - this.lastTripAt > 60_000) this.holdMs = this.options.serverErrorHoldMs ?? 2_000;
    this.lastTripAt = this.now();
    this.failingUntil = this.now() + this.holdMs;
    this.failingReason = `${streak} engine answers in a row were HTTP 5xx (last ${outcome}); not ready for ${Math.round(this.holdMs / 100) / 10} s`;
    this.holdMs = Math.min(MAX_SERVER_ERROR_HOLD_MS, this.holdMs * 2);
    this.probeSoon();
  }

  /** A probe now unless one is under way. */
  private probeSoon(): void {
    if (this.probing) return;
    this.probing = this.probe().finally(() => (this.probing = undefined));
  }

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
      if (this.failingUntil > this.now()) throw new Error(this.failingReason ?? "engine failing");
      this.failingUntil = 0;
      if (this.options.healthUrl) {
        this.awaiting = { endpoint: new URL(this.options.healthUrl).pathname, since: Date.now() };
        await requestText(this.options.healthUrl, { method: "GET", timeoutMs: this.options.timeoutMs, signal });
      }
      this.awaiting = { endpoint: "its model info (/v1/models)", since: Date.now() };
      info = await this.method.info(signal);
    } catch (err) {
      error = err instanceof Error ? err : new Error(String(err));
    } finally {
      this.awaiting = undefined;
    }
    // A run of 5xx seen while this probe was under way outweighs its answer.
    if (info && this.failingUntil > this.now()) {
      info = undefined;
      error = new Error(this.failingReason ?? "engine failing");
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
    // A refused key is no outage to retry into: one clear line, and not the reports below.
    const refusal = !info && error instanceof EngineHttpError && isKeyRefusal(error.status) ? error : undefined;
    if (refusal && !this.keyRefused) this.logger.error(keyRefusalMessage(this.options.engineUrl ?? this.options.healthUrl ?? refusal.url, refusal.status));
    this.keyRefused = refusal !== undefined;
    if (this.readyNow) this.downSince = undefined;
    else if (wasReady) this.downSince = Date.now();
    if (this.readyNow) clearTimeout(this.reportTimer);
    else if (wasReady && this.reporting) this.armDownReport(this.options.downReportMs ?? 5_000);
    else if (this.downSince !== undefined && !this.keyRefused && this.options.notReadyWarnMs !== undefined && Date.now() - this.downSince >= this.options.notReadyWarnMs) {
      this.downSince = undefined;
      this.logger.warn(`engine not ready after ${Math.round(this.options.notReadyWarnMs / 1000)} s (still trying): ${error?.message ?? "no answer"}`, { error: error?.message });
    }
    if (wasReady !== this.readyNow) {
      if (this.readyNow) this.logger.info("engine ready", { model: info?.model, maxModelLen: info?.maxModelLen, capacity: info?.capacity });
      else if (!this.keyRefused) this.logger.warn("engine not ready", { error: error?.message });
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
    this.reportWhileDown();
    this.schedule();
  }

  /**
   * Starts the down reports (start() does too): called before a first probe that may take its whole
   * timeout on a silent engine, so that one is reported within downReportMs as well.
   */
  reportWhileDown(): void {
    if (this.reporting || this.stopper.signal.aborted) return;
    this.reporting = true;
    if (!this.readyNow) this.armDownReport(this.options.downReportMs ?? 5_000);
  }

  private armDownReport(delayMs: number): void {
    clearTimeout(this.reportTimer);
    if (!Number.isFinite(delayMs)) return; // reports off
    this.reportTimer = setTimeout(() => this.reportDown(), delayMs);
  }

  /** The engine is still not ready: say why (a refused connection, an endpoint that does not answer, an error), then again later. */
  private reportDown(): void {
    if (!this.reporting || this.stopper.signal.aborted || this.readyNow) return;
    if (this.keyRefused) return this.armDownReport(this.options.downReportRepeatMs ?? 30_000); // said once already
    const engine = this.options.engineUrl ?? this.options.healthUrl ?? "";
    const awaiting = this.awaiting;
    const silentFor = awaiting ? Date.now() - awaiting.since : 0;
    const error = this.errorNow;
    if (awaiting && (silentFor >= 2_000 || !error)) {
      this.logger.warn(`engine ${engine} unreachable (still trying): no answer to ${awaiting.endpoint} for ${Math.round(silentFor / 1000)} s`, { engine });
    } else {
      const cause = error instanceof EngineRetriesExhaustedError ? error.last : error;
      const unreachable = cause instanceof EngineUnreachableError || cause instanceof EngineTimeoutError;
      this.logger.warn(`engine ${engine} ${unreachable ? "unreachable" : "not ready"} (still trying): ${error?.message ?? "no answer yet"}`, { engine, error: error?.message });
    }
    this.armDownReport(this.options.downReportRepeatMs ?? 30_000);
  }

  private schedule(): void {
    if (!this.running) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(async () => {
      this.timer = undefined;
      await this.probe();
      if (!this.timer) this.schedule();
    }, this.readyNow ? this.options.readyIntervalMs : Math.max(this.options.downIntervalMs, this.failingUntil - this.now()));
  }

  stop(): void {
    this.running = false;
    this.reporting = false;
    if (this.timer) clearTimeout(this.timer);
    clearTimeout(this.reportTimer);
    this.stopper.abort(new Error("engine probe stopped"));
  }
}

// Adaptive concurrency of one agent's engine requests: additive increase, multiplicative decrease
// (AIMD, as TCP congestion control). Each completed request with a healthy latency and an engine
// queue that is empty adds 1/limit (so +1 per round of `limit` requests); an overload signal
// halves the limit: a 429/503/timeout, vllm:num_requests_waiting above the threshold, or a
// latency far above the best seen (the engine queues internally), or a latency past the budget the
// request timeout leaves (below). Bounded by [min, max]; at most one decrease per round, so one
// burst of slow answers does not collapse the limit.
//
// The latency budget: vLLM runs every request it is sent at once (up to --max-num-seqs, 256 by
// default) and shares the GPU among them, so its waiting queue stays empty while each request
// slows with every one added; a latency that creeps up is followed by the smoothed minimum, so
// neither signal above fires, and an agent kept 112 requests on one 800 tokens/s engine until they
// ran past the 120 s request timeout and were retried. Past saturation more requests in flight add
// latency, not throughput (Little's law), so the limit is held where a request finishes well within
// its timeout: a latency above the budget (a quarter of the timeout, room for a request four times
// the usual size) halves the limit, and above half the budget the limit stops growing. The timeout
// itself stays as it is: it is how a hung engine is found, and a longer one would only find it later.

/** The default upper bound of the limit (AGENT_DEFAULTS.maxConcurrency, `agent --max-concurrency`). */
export const DEFAULT_MAX_CONCURRENCY = 256;

export interface AdaptiveConcurrencyOptions {
  /** Default 1. */
  min?: number;
  /** Default DEFAULT_MAX_CONCURRENCY. */
  max?: number;
  /** Default 8. */
  initial?: number;
  /** Engine queue length (vllm:num_requests_waiting) that counts as overload. Default 8. */
  waitingThreshold?: number;
  /** A latency above this multiple of the smoothed minimum counts as overload. Default 3. */
  latencyFactor?: number;
  /**
   * A latency above this counts as overload, and above half of it the limit does not grow: the
   * agent gives a quarter of its request timeout (latencyBudgetOf). Default none.
   */
  latencyBudgetMs?: number;
  /** Reads vllm:num_requests_waiting; polled at most every pollMs while requests run. */
  readWaiting?: (signal: AbortSignal) => Promise<number>;
  /** Default 1000. */
  pollMs?: number;
  /** Clock for tests. */
  now?: () => number;
}

export interface RequestOutcome {
  latencyMs: number;
  /** 429, 503, a timeout: the engine is past its capacity. */
  overloaded: boolean;
  failed?: boolean;
}

export type Release = (outcome: RequestOutcome) => void;

/** The share of the request timeout a request's latency may take before the limit shrinks. */
export const TIMEOUT_SHARE = 0.25;

/** The latency budget of requests with this timeout (AdaptiveConcurrencyOptions.latencyBudgetMs). */
export function latencyBudgetOf(requestTimeoutMs: number): number {
  return requestTimeoutMs * TIMEOUT_SHARE;
}

export class AdaptiveConcurrency {
  private limitValue: number;
  private inFlight = 0;
  private readonly waiters: Array<{ resolve: (r: Release) => void; reject: (e: unknown) => void; signal: AbortSignal | undefined; onAbort: () => void }> = [];
  private baseLatencyMs: number | undefined;
  private lastDecreaseAt = -Infinity;
  private lastPoll = -Infinity;
  private polling = false;
  private waiting = 0;
  readonly min: number;
  readonly max: number;
  private readonly waitingThreshold: number;
  private readonly latencyFactor: number;
  private readonly now: () => number;
  /** Decreases so far (for stats and tests). */
  decreases = 0;

  constructor(private readonly options: AdaptiveConcurrencyOptions = {}) {
    this.min = Math.max(1, options.min ?? 1);
    this.max = Math.max(this.min, options.max ?? DEFAULT_MAX_CONCURRENCY);
    this.limitValue = Math.min(this.max, Math.max(this.min, options.initial ?? 8));
    this.waitingThreshold = options.waitingThreshold ?? 8;
    this.latencyFactor = options.latencyFactor ?? 3;
    this.now = options.now ?? (() => performance.now());
  }

  /** The current limit (whole requests). */
  get limit(): number {
    return Math.floor(this.limitValue);
  }

  get active(): number {
    return this.inFlight;
  }

  /** Waits for a slot; the returned function releases it with the request's outcome. */
  acquire(signal?: AbortSignal): Promise<Release> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.inFlight < this.limit) return Promise.resolve(this.take());
    return new Promise<Release>((resolve, reject) => {
      const waiter = {
        resolve,
        reject,
        signal,
        onAbort: () => {
          const i = this.waiters.indexOf(waiter);
          if (i >= 0) this.waiters.splice(i, 1);
          reject(signal!.reason);
        },
      };
      signal?.addEventListener("abort", waiter.onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** The engine's queue length, from /metrics (also polled by itself when readWaiting is given). */
  observeWaiting(waiting: number): void {
    this.waiting = waiting;
    if (waiting > this.waitingThreshold) this.decrease();
  }

  private take(): Release {
    this.inFlight++;
    this.maybePoll();
    let released = false;
    return (outcome) => {
      if (released) return;
      released = true;
      this.inFlight--;
      this.learn(outcome);
      this.admit();
    };
  }

  private learn(o: RequestOutcome): void {
    if (o.overloaded) return this.decrease();
    if (o.failed) return;
    const base = this.baseLatencyMs;
    // The smoothed minimum: falls at once, rises slowly (the engine's unloaded latency drifts).
    this.baseLatencyMs = base === undefined ? o.latencyMs : Math.min(o.latencyMs, base * 1.01 + 0.01);
    const budget = this.options.latencyBudgetMs;
    // A request sent before the last decrease carries no news of the limit since.
    if (budget !== undefined && o.latencyMs > budget) return this.decrease(this.now() - o.latencyMs);
    if (base !== undefined && o.latencyMs > this.latencyFactor * Math.max(base, 1)) return this.decrease();
    if (budget !== undefined && o.latencyMs > budget / 2) return;
    if (this.waiting <= this.waitingThreshold / 2) this.limitValue = Math.min(this.max, this.limitValue + 1 / this.limitValue);
  }

  private decrease(sentAt?: number): void {
    const now = this.now();
    if (sentAt !== undefined && sentAt < this.lastDecreaseAt) return;
    // One decrease per round trip: the answers of requests sent before it carry no new news.
    if (now - this.lastDecreaseAt < (this.baseLatencyMs ?? 0)) return;
    this.lastDecreaseAt = now;
    this.limitValue = Math.max(this.min, this.limitValue / 2);
    this.decreases++;
  }

  private admit(): void {
    while (this.waiters.length > 0 && this.inFlight < this.limit) {
      const w = this.waiters.shift()!;
      w.signal?.removeEventListener("abort", w.onAbort);
      w.resolve(this.take());
    }
  }

  private maybePoll(): void {
    const read = this.options.readWaiting;
    if (!read || this.polling) return;
    const now = this.now();
    if (now - this.lastPoll < (this.options.pollMs ?? 1000)) return;
    this.lastPoll = now;
    this.polling = true;
    read(AbortSignal.timeout(2000))
      .then((w) => this.observeWaiting(w))
      .catch(() => undefined)
      .finally(() => (this.polling = false));
  }
}

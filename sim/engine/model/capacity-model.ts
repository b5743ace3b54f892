// A GPU in miniature. Every read (one question: prompt prefill plus one generated token) is a
// sequence; up to maxNumSeqs run at once (continuous batching) and the rest wait in arrival order.
// The running sequences share a fixed token throughput (processor sharing), so a batch finishes no
// faster than its tokens allow however it is split. A cached prefix costs nothing to prefill.
// tokensPerS = 0 means an infinitely fast GPU: reads finish at once.
import { PrefixCache } from "./prefix-cache.js";
import { seededRandom } from "./deterministic.js";
import type { ReadPrompt } from "./read-prompt.js";

export interface CapacityOptions {
  /** Prefill + decode tokens per second of the whole GPU; 0 = no latency. */
  tokensPerS: number;
  /** Sequences batched at once (vLLM --max-num-seqs). */
  maxNumSeqs: number;
  /** KV cache size in tokens for the prefix cache. */
  kvCacheTokens: number;
  /** Relative jitter of each read's cost, e.g. 0.1 = ±10%. */
  jitter: number;
  seed: number;
}

export interface ReadOutcome {
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
  /** Seconds from arrival to the read's token (time to first token = end to end here). */
  latencyS: number;
}

interface Sequence {
  work: number;
  arrived: number;
  outcome: Omit<ReadOutcome, "latencyS">;
  resolve: (o: ReadOutcome) => void;
  reject: (e: unknown) => void;
  cancelled: boolean;
}

export class CapacityModel {
  readonly prefixCache: PrefixCache;
  private readonly running = new Set<Sequence>();
  private readonly waiting: Sequence[] = [];
  private readonly random: () => number;
  private timer: NodeJS.Timeout | undefined;
  private lastUpdate = performance.now();
  private stopped = false;

  constructor(private readonly options: CapacityOptions) {
    this.prefixCache = new PrefixCache(options.kvCacheTokens);
    this.random = seededRandom(options.seed ^ 0x5eed);
  }

  get numRunning(): number {
    return this.running.size;
  }
  get numWaiting(): number {
    return this.waiting.length;
  }

  /**
   * Runs the reads of one request. The first read of an uncached prefix prefills it; the cache
   * entry is made at once, so the request's other reads (and concurrent requests with the same
   * state) reuse it, as vLLM's docs describe for /v1/systemone.
   */
  run(reads: readonly ReadPrompt[], signal?: AbortSignal): Promise<ReadOutcome[]> {
    const sequences: Sequence[] = [];
    const promises = reads.map((read) => {
      let cachedTokens: number;
      if (read.blockKeys) {
        cachedTokens = Math.min(this.prefixCache.lookupAndInsertBlocks(read.blockKeys, !read.skipCacheRead), read.promptTokens - 1);
      } else {
        cachedTokens = read.skipCacheRead ? 0 : Math.min(this.prefixCache.lookup(read.prefixKey), read.promptTokens - 1);
        this.prefixCache.insert(read.prefixKey, read.prefixTokens);
      }
      const base = read.promptTokens - cachedTokens + 1;
      const jitter = 1 + this.options.jitter * (2 * this.random() - 1);
      return new Promise<ReadOutcome>((resolve, reject) => {
        const seq: Sequence = {
          work: Math.max(1, base * jitter),
          arrived: performance.now(),
          outcome: { promptTokens: read.promptTokens, cachedTokens, completionTokens: 1 },
          resolve,
          reject,
          cancelled: false,
        };
        sequences.push(seq);
        this.waiting.push(seq);
      });
    });
    signal?.addEventListener("abort", () => this.cancel(sequences, signal.reason), { once: true });
    this.advance();
    return Promise.all(promises);
  }

  /** Stops the clock: pending reads fail, nothing is scheduled any more. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    const err = new Error("engine stopped");
    for (const s of [...this.running, ...this.waiting]) s.reject(err);
    this.running.clear();
    this.waiting.length = 0;
  }

  private cancel(sequences: Sequence[], reason: unknown): void {
    for (const s of sequences) {
      if (s.cancelled) continue;
      s.cancelled = true;
      this.running.delete(s);
      const i = this.waiting.indexOf(s);
      if (i >= 0) this.waiting.splice(i, 1);
      s.reject(reason);
    }
    this.advance();
  }

  /** Accounts for the time since the last update, finishes what is done, admits, reschedules. */
  private advance(): void {
    if (this.stopped) return;
    const now = performance.now();
    const { tokensPerS, maxNumSeqs } = this.options;
    if (tokensPerS > 0 && this.running.size > 0) {
      const perSeq = (tokensPerS * (now - this.lastUpdate)) / 1000 / this.running.size;
      for (const s of this.running) s.work -= perSeq;
    }
    this.lastUpdate = now;
    for (const s of [...this.running]) {
      if (tokensPerS === 0 || s.work <= 1e-9) this.finish(s, now);
    }
    while (this.running.size < maxNumSeqs && this.waiting.length > 0) {
      const s = this.waiting.shift()!;
      if (tokensPerS === 0) this.finish(s, now);
      else this.running.add(s);
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (tokensPerS > 0 && this.running.size > 0) {
      let least = Infinity;
      for (const s of this.running) least = Math.min(least, s.work);
      const ms = (least * this.running.size * 1000) / tokensPerS;
      this.timer = setTimeout(() => this.advance(), Math.max(0, ms));
    }
  }

  private finish(s: Sequence, now: number): void {
    this.running.delete(s);
    s.resolve({ ...s.outcome, latencyS: (now - s.arrived) / 1000 });
  }
}

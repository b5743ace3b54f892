// Per-record latencies of a run, summarised as count, mean, p50 and p95. Values are kept (8 bytes
// each: 0.5 MB for the full suite) so the percentiles are exact; they are sorted only when asked
// and something was added since.
import type { LatencySummary } from "../common/run-status/index.js";

export class LatencyStats {
  private values = new Float64Array(1024);
  private count = 0;
  private sum = 0;
  private sorted: Float64Array | undefined;

  add(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) return;
    if (this.count === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.count++] = ms;
    this.sum += ms;
    this.sorted = undefined;
  }

  summary(): LatencySummary {
    if (this.count === 0) return { count: 0, meanMs: 0, p50Ms: 0, p95Ms: 0 };
    this.sorted ??= this.values.slice(0, this.count).sort();
    return { count: this.count, meanMs: this.sum / this.count, p50Ms: quantile(this.sorted, 0.5), p95Ms: quantile(this.sorted, 0.95) };
  }
}

/** The q-quantile of sorted values, interpolated linearly between the two nearest ranks. */
export function quantile(sorted: Float64Array, q: number): number {
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

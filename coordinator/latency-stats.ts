// Per-record latencies of a run, summarised as count, mean, p50 and p95. Values are kept (8 bytes
// each: 0.5 MB for the full suite) so the percentiles are exact; they are sorted only when asked
// and something was added since, and then only what was added is sorted and merged into the values
// sorted before (the status is asked every second and per track: a full sort each time was a tenth
// of the coordinator thread's CPU on the full suite).
import type { LatencySummary } from "../common/run-status/index.js";

export class LatencyStats {
  private values = new Float64Array(1024);
  private count = 0;
  private sum = 0;
  /** The first sorted.length values, sorted. */
  private sorted: Float64Array = new Float64Array(0);

  add(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) return;
    if (this.count === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.count++] = ms;
    this.sum += ms;
  }

  summary(): LatencySummary {
    if (this.count === 0) return { count: 0, meanMs: 0, p50Ms: 0, p95Ms: 0 };
    if (this.sorted.length < this.count) this.sorted = mergeSorted(this.sorted, this.values.slice(this.sorted.length, this.count).sort());
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

/** The values of two sorted arrays, sorted. */
function mergeSorted(a: Float64Array, b: Float64Array): Float64Array {
  if (a.length === 0) return b;
  const out = new Float64Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) out[k++] = a[i]! <= b[j]! ? a[i++]! : b[j++]!;
  while (i < a.length) out[k++] = a[i++]!;
  while (j < b.length) out[k++] = b[j++]!;
  return out;
}

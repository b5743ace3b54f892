// Percentile group bootstrap (docs/scoring.md "Confidence intervals"): resample whole groups of a track with
// replacement and recompute the headline. Each group is reduced beforehand to a small vector of sums
// (e.g. [correct, n]), so a resample is a sum of vectors and one call of the headline function.
import { hashString, Xoshiro128 } from "./prng.js";

export const BOOTSTRAP_RESAMPLES = 1000;
export const BOOTSTRAP_CONFIDENCE = 0.95;
/** Fixed base seed; each track's stream is this mixed with a hash of its name. */
export const BOOTSTRAP_SEED = 20261020;

export interface GroupSums {
  /** Numbers per group. */
  width: number;
  /** groups * width sums, group-major. */
  sums: Float64Array;
  /** Headline from the summed vector of a resample; NaN when undefined (e.g. no gold in it). */
  headline: (total: Float64Array) => number;
}

export interface Interval {
  ci_low: number;
  ci_high: number;
}

export function groupCount(g: GroupSums): number {
  return g.width === 0 ? 0 : g.sums.length / g.width;
}

/** Headline of each of the resamples (NaN where undefined), in resample order. */
export function bootstrapResamples(g: GroupSums, seed: number, resamples = BOOTSTRAP_RESAMPLES): Float64Array {
  const out = new Float64Array(resamples);
  const n = groupCount(g);
  if (n === 0) return out.fill(NaN);
  const rng = new Xoshiro128(seed);
  const { width, sums } = g;
  const total = new Float64Array(width);
  const scale = n / 4294967296;
  const draws = new Uint32Array(n);
  for (let r = 0; r < resamples; r++) {
    rng.fill(draws);
    // Stryker disable next-line ConditionalExpression: the fast path is an optimisation; the general loop gives the same sums
    if (width === 2) {
      // The common case (accuracy, nDCG mean, accepted accuracy), kept free of the inner loop.
      let a = 0;
      let b = 0;
      for (let i = 0; i < n; i++) {
        const base = Math.floor(draws[i]! * scale) * 2;
        a += sums[base]!;
        b += sums[base + 1]!;
      }
      total[0] = a;
      total[1] = b;
    } else {
      total.fill(0);
      for (let i = 0; i < n; i++) {
        const base = Math.floor(draws[i]! * scale) * width;
        // Stryker disable next-line EqualityOperator: w == width writes past the end of the typed array, which is ignored
        for (let w = 0; w < width; w++) total[w]! += sums[base + w]!;
      }
    }
    out[r] = g.headline(total);
  }
  return out;
}

export function trackSeed(track: string): number {
  return (BOOTSTRAP_SEED ^ hashString(track)) >>> 0;
}

/** Percentile interval with linear interpolation between order statistics (numpy's default); NaNs are left out. */
export function percentileInterval(values: Float64Array, confidence = BOOTSTRAP_CONFIDENCE): Interval | null {
  const finite = Float64Array.from(values.filter((v) => !Number.isNaN(v))).sort();
  if (finite.length === 0) return null;
  // Rounded so that 0.95 gives exactly 0.025 and 0.975 (1 - 0.95 is 0.05000000000000004 in binary).
  const alpha = Math.round(((1 - confidence) / 2) * 1e12) / 1e12;
  return { ci_low: quantile(finite, alpha), ci_high: quantile(finite, 1 - alpha) };
}

function quantile(sorted: Float64Array, q: number): number {
  const pos = q * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

/** Per-resample mean over several tracks' resamples (a pillar), ignoring tracks undefined in that resample. */
export function meanOfResamples(tracks: readonly Float64Array[]): Float64Array {
  const len = tracks[0]?.length ?? 0;
  const out = new Float64Array(len);
  // Stryker disable next-line EqualityOperator: r == len reads past every track (undefined is left out) and writes past the end, ignored
  for (let r = 0; r < len; r++) {
    let sum = 0;
    let n = 0;
    for (const t of tracks) {
      const v = t[r]!;
      if (!Number.isNaN(v)) {
        sum += v;
        n++;
      }
    }
    // Stryker disable next-line ConditionalExpression: without the test, 0 / 0 is NaN too
    out[r] = n === 0 ? NaN : sum / n;
  }
  return out;
}

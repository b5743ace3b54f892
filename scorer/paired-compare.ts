// Two runs over the same records, compared item by item (docs/view-diff.md): per track the two
// headlines, their difference with a paired group-bootstrap interval and a paired permutation
// p-value, the records whose headline answer flipped; and the same for the v1 mean. Paired: both
// runs are scored on the same gold, and each resample draws the same groups for both (the
// scorer's own draws, docs/scoring.md "Confidence intervals": each track's stream depends on its
// name only, so run A's resamples are exactly those behind its metrics.json interval, and B's use
// the same group indices). One track is held at a time: memory does not grow with the suite.
import { isScoredInV1, pillarOf } from "../common/catalogue.js";
import { readJsonLines } from "../common/jsonl-reader.js";
import { limitRecords, readCheckedTrack, type Suite, type SuiteRecord, type TrackFile } from "../common/suite/index.js";
import { parseResultLine } from "../common/results/index.js";
import { groupCount, meanOfResamples, percentileInterval, trackSeed, type GroupSums } from "./bootstrap.js";
import { Xoshiro128 } from "./prng.js";
import { TrackAccumulator } from "./track-accumulator.js";

/** Permutations of the paired test (each flips, group by group, which run an answer came from). */
export const PERMUTATIONS = 1000;
/** Mixed with each track's bootstrap seed, so the permutations draw their own stream, the same every time. */
export const PERMUTATION_SEED = 0x5eed_d1ff;

export interface PairedDifference {
  /** a − b; null when either is null. */
  difference: number | null;
  /** 95% paired group-bootstrap interval of the difference. */
  ci_low: number | null;
  ci_high: number | null;
  /** Two-sided paired permutation p-value, (1 + #{|permuted| ≥ |observed|}) / (1 + permutations); null without a difference. */
  p_value: number | null;
}

export interface TrackComparison extends PairedDifference {
  track: string;
  family: string;
  pillar: string;
  metric: string;
  records: number;
  groups: number;
  a: number | null;
  b: number | null;
  /** Records right in A and wrong (or missing) in B, and back, by id; null on retrieval tracks (queries are ranked whole). */
  flips: { right_to_wrong: string[]; wrong_to_right: string[] } | null;
}

export interface RunComparison {
  permutations: number;
  resamples: number;
  tracks: TrackComparison[];
  /** Over the v1 tracks where both runs have a headline: mean of A, of B, and the paired difference of the means. */
  v1: PairedDifference & { metric: "v1_mean" | "v1_mean_partial"; a: number | null; b: number | null; tracks: number };
}

export interface CompareRunsOptions {
  suite: Suite;
  /** The tracks compared, in suite order. */
  scope: readonly TrackFile[];
  /** Each run's results files of one track (`<dir>/<family>/<track>.jsonl`, …), in the order a later line wins. */
  resultsOf: (run: "a" | "b", file: TrackFile) => readonly string[];
  /** Records per track at most (both runs' `--limit`); all when absent. */
  limit?: number;
  permutations?: number;
}

export async function compareRuns(options: CompareRunsOptions): Promise<RunComparison> {
  const permutations = options.permutations ?? PERMUTATIONS;
  const tracks: TrackComparison[] = [];
  const resampleDiffs = new Map<string, Float64Array>();
  const permutedDiffs = new Map<string, Float64Array>();
  let resamples = 0;
  for (const file of options.scope) {
    const [accA, accB] = await loadPair(options.suite, file, options.limit);
    for (const [run, acc] of [["a", accA], ["b", accB]] as const) await applyResults(acc, options.resultsOf(run, file));
    const ma = accA.finish();
    const mb = accB.finish();
    const ra = accA.headlineResamples();
    const rb = accB.headlineResamples();
    resamples = ra.length;
    const diffs = new Float64Array(ra.length);
    for (let r = 0; r < ra.length; r++) diffs[r] = ra[r]! - rb[r]!;
    const a = ma.headline.value;
    const b = mb.headline.value;
    const difference = a === null || b === null ? null : a - b;
    const permuted = permutationDifferences(accA.headlineGroupSums(), accB.headlineGroupSums(), (trackSeed(file.track) ^ PERMUTATION_SEED) >>> 0, permutations);
    const ci = difference === null ? null : percentileInterval(diffs);
    if (difference !== null && isScoredInV1(file.track)) {
      resampleDiffs.set(file.track, diffs);
      permutedDiffs.set(file.track, permuted);
    }
    tracks.push({
      track: file.track,
      family: file.family,
      pillar: pillarOf(file.family),
      metric: ma.headline.metric,
      records: ma.records,
      groups: ma.groups,
      a,
      b,
      difference,
      ci_low: ci?.ci_low ?? null,
      ci_high: ci?.ci_high ?? null,
      p_value: difference === null ? null : pValue(permuted, observedDifference(accA.headlineGroupSums(), accB.headlineGroupSums())),
      flips: flipsOf(file.track, accA, accB),
    });
  }
  const v1Tracks = tracks.filter((t) => resampleDiffs.has(t.track));
  const mean = (xs: number[]) => (xs.length === 0 ? null : xs.reduce((s, x) => s + x, 0) / xs.length);
  const v1A = mean(v1Tracks.map((t) => t.a!));
  const v1B = mean(v1Tracks.map((t) => t.b!));
  const v1Diff = v1A === null || v1B === null ? null : v1A - v1B;
  const v1Ci = v1Diff === null ? null : percentileInterval(meanOfResamples([...resampleDiffs.values()]));
  const v1Permuted = meanOfResamples([...permutedDiffs.values()]);
  const complete = v1Tracks.length === 43;
  return {
    permutations,
    resamples,
    tracks,
    v1: {
      metric: complete ? "v1_mean" : "v1_mean_partial",
      a: v1A,
      b: v1B,
      tracks: v1Tracks.length,
      difference: v1Diff,
      ci_low: v1Ci?.ci_low ?? null,
      ci_high: v1Ci?.ci_high ?? null,
      p_value: v1Diff === null ? null : pValue(v1Permuted, v1Diff),
    },
  };
}

/** The same gold in two accumulators, one read of the track file. */
async function loadPair(suite: Suite, file: TrackFile, limit: number | undefined): Promise<[TrackAccumulator, TrackAccumulator]> {
  const a = new TrackAccumulator(file.track, file.family);
  const b = new TrackAccumulator(file.track, file.family);
  const add = (record: SuiteRecord & { line: number }) => {
    a.addRecord(record, { file: file.path, line: record.line });
    b.addRecord(record, { file: file.path, line: record.line });
  };
  if (limit === undefined) for await (const record of readCheckedTrack(suite, file)) add(record);
  else {
    const all: Array<SuiteRecord & { line: number }> = [];
    for await (const record of readCheckedTrack(suite, file)) all.push(record);
    for (const record of limitRecords(all, (r) => r.metadata.group_id, limit)) add(record);
  }
  a.sealRecords();
  b.sealRecords();
  return [a, b];
}

/** A run's lines for one track; a later line for a record replaces an earlier one. Lines of records not compared (outside a limit) are left out. */
async function applyResults(acc: TrackAccumulator, files: readonly string[]): Promise<void> {
  for (const file of files) {
    for await (const { line, value } of readJsonLines(file, { onTornLastLine: () => undefined })) {
      const result = parseResultLine(file, line, value);
      if (acc.hasRecord(result.run_id)) acc.addResult(result);
    }
  }
}

function observedDifference(a: GroupSums, b: GroupSums): number {
  const total = (g: GroupSums) => {
    const t = new Float64Array(g.width);
    for (let i = 0; i < g.sums.length; i++) t[i % g.width]! += g.sums[i]!;
    return t;
  };
  return a.headline(total(a)) - b.headline(total(b));
}

/**
 * The difference of headlines under `permutations` random relabellings: in each, every group's sums
 * go to A or B by a fair coin (a paired design's null hypothesis: the two runs are exchangeable
 * within a group). Deterministic: xoshiro128** from `seed`, one bit per group.
 */
export function permutationDifferences(a: GroupSums, b: GroupSums, seed: number, permutations: number): Float64Array {
  const out = new Float64Array(permutations);
  const n = groupCount(a);
  if (n === 0 || groupCount(b) !== n || a.width !== b.width) return out.fill(NaN);
  const w = a.width;
  const rng = new Xoshiro128(seed);
  const bits = new Uint32Array(Math.ceil(n / 32));
  const ta = new Float64Array(w);
  const tb = new Float64Array(w);
  for (let p = 0; p < permutations; p++) {
    rng.fill(bits);
    ta.fill(0);
    tb.fill(0);
    for (let g = 0; g < n; g++) {
      const swap = (bits[g >>> 5]! >>> (g & 31)) & 1;
      const base = g * w;
      const [from, to] = swap ? [b.sums, a.sums] : [a.sums, b.sums];
      for (let k = 0; k < w; k++) {
        ta[k]! += from[base + k]!;
        tb[k]! += to[base + k]!;
      }
    }
    out[p] = a.headline(ta) - b.headline(tb);
  }
  return out;
}

/** Two-sided: the share of permuted differences at least as far from 0 as the observed one (itself counted once). */
function pValue(permuted: Float64Array, observed: number): number | null {
  if (Number.isNaN(observed)) return null;
  // Differences within rounding of the observed one count as equal (a run against itself: all 0).
  const bar = Math.abs(observed) - 1e-12;
  let atLeast = 0;
  let counted = 0;
  for (const d of permuted) {
    if (Number.isNaN(d)) continue;
    counted++;
    if (Math.abs(d) >= bar) atLeast++;
  }
  return (1 + atLeast) / (1 + counted);
}

function flipsOf(track: string, a: TrackAccumulator, b: TrackAccumulator): TrackComparison["flips"] {
  const oa = a.headlineOutcomes();
  if (oa.length === 0) return null;
  const ob = new Map(b.headlineOutcomes().map((o) => [o.runId, o.right]));
  const id = (runId: string) => runId.slice(track.length + 1);
  const right_to_wrong: string[] = [];
  const wrong_to_right: string[] = [];
  for (const { runId, right } of oa) {
    const other = ob.get(runId);
    if (right === null || other === null || other === undefined || right === other) continue;
    (right ? right_to_wrong : wrong_to_right).push(id(runId));
  }
  return { right_to_wrong, wrong_to_right };
}

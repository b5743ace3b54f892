// Aggregation (scorer/aggregate.ts, docs/scoring.md "Aggregation") against hand-computed answers:
// family and pillar means unweighted over tracks with a headline, split by language; a pillar's
// interval is the percentile interval of its tracks' per-resample means; the v1 mean only with all
// 43 scored tracks (else v1_mean_partial), routerbench never in it; the family macro mean.
import { describe, expect, it } from "vitest";
import { V1_SCORED_TRACKS } from "../../common/catalogue.js";
import { aggregate, v1Interval } from "../../scorer/aggregate.js";
import type { TrackMetrics } from "../../scorer/track-metrics.js";

function track(family: string, pillar: string, lang: string, value: number | null): TrackMetrics {
  return { family, pillar, lang, records: 10, groups: 10, headline: { metric: "accuracy", value, ci_low: null, ci_high: null }, questions: {}, retrieval: null, routing: null, missing: 0 };
}

const f64 = (...v: number[]) => Float64Array.from(v);

describe("aggregate", () => {
  const [t1, t2, t3, t4] = V1_SCORED_TRACKS as [string, string, string, string];
  const tracks: Record<string, TrackMetrics> = {
    [t1]: track("fa", "p1", "vi", 0.2),
    [t2]: track("fa", "p1", "en", 0.4),
    [t3]: track("fb", "p1", "vi", 0.9),
    [t4]: track("fb", "p2", "vi", null),
    routerbench: track("fr", "p2", "en", 0.5),
  };
  const resamples = (name: string) =>
    ({ [t1]: f64(0.1, 0.2, 0.3, 0.4, 0.5), [t2]: f64(0.3, 0.3, 0.5, 0.5, NaN), [t3]: f64(0.8, 0.9, 1, 0.9, 0.8), routerbench: f64(0.5, 0.5, 0.5, 0.5, 0.5) })[name] ?? f64(NaN, NaN, NaN, NaN, NaN);

  it("family means over the tracks with a headline, by language too", () => {
    const a = aggregate(tracks, resamples);
    expect(a.families.fa).toEqual({ mean: 0.30000000000000004, by_lang: { en: 0.4, vi: 0.2 }, tracks: 2 });
    expect(a.families.fb).toEqual({ mean: 0.9, by_lang: { vi: 0.9 }, tracks: 1 });
    expect(Object.keys(a.families)).toEqual(["fa", "fb", "fr"]);
  });

  it("a pillar's mean and interval: per-resample means of its tracks, numpy's percentiles", () => {
    const a = aggregate(tracks, resamples);
    // Per resample: (0.1+0.3+0.8)/3, (0.2+0.3+0.9)/3, (0.3+0.5+1)/3, (0.4+0.5+0.9)/3, (0.5+0.8)/2.
    const means = [0.4, 1.4 / 3, 0.6, 0.6, 0.65].sort((x, y) => x - y);
    // numpy.percentile(means, [2.5, 97.5]): positions 0.1 and 3.9 of 5 sorted values.
    const low = means[0]! + 0.1 * (means[1]! - means[0]!);
    const high = means[3]! + 0.9 * (means[4]! - means[3]!);
    expect(a.pillars.p1!.mean).toBeCloseTo(1.5 / 3, 12);
    expect(a.pillars.p1!.tracks).toBe(3);
    expect(a.pillars.p1!.ci_low).toBeCloseTo(low, 12);
    expect(a.pillars.p1!.ci_high).toBeCloseTo(high, 12);
    // p2: only routerbench has a headline (t4 has none).
    expect(a.pillars.p2).toEqual({ mean: 0.5, by_lang: { en: 0.5 }, tracks: 1, ci_low: 0.5, ci_high: 0.5 });
  });

  it("a pillar with no headline at all has no mean and no interval", () => {
    const a = aggregate({ [t4]: track("fb", "p3", "vi", null) }, resamples);
    expect(a.pillars.p3).toEqual({ mean: null, by_lang: {}, tracks: 0, ci_low: null, ci_high: null });
    expect(a.summary).toEqual({ v1_mean: null, v1_mean_partial: null, v1_tracks: 0, family_macro_mean: null });
  });

  it("some scored tracks absent: v1_mean is null and v1_mean_partial the mean; routerbench is never scored", () => {
    const a = aggregate(tracks, resamples);
    expect(a.summary.v1_mean).toBeNull();
    expect(a.summary.v1_mean_partial).toBeCloseTo(0.5, 12);
    expect(a.summary.v1_tracks).toBe(3);
    // Families of the scored tracks: fa 0.3, fb 0.9.
    expect(a.summary.family_macro_mean).toBeCloseTo(0.6, 12);
    const ci = v1Interval(tracks, resamples)!;
    expect(ci.ci_low).toBeCloseTo(aggregate(tracks, resamples).pillars.p1!.ci_low!, 12);
    expect(v1Interval({ routerbench: track("fr", "p2", "en", 0.5) }, resamples)).toBeNull();
  });

  it("all 43 scored tracks: v1_mean, and no v1_mean_partial", () => {
    const all: Record<string, TrackMetrics> = {};
    V1_SCORED_TRACKS.forEach((n, i) => (all[n] = track(i % 2 === 0 ? "even" : "odd", "p", "vi", i % 2 === 0 ? 1 : 0)));
    all.routerbench = track("fr", "p", "en", 0.25);
    const a = aggregate(all, () => f64(0.5));
    expect(V1_SCORED_TRACKS.length).toBe(43);
    // 22 tracks at 1 (even indexes), 21 at 0.
    expect(a.summary).toEqual({ v1_mean: 22 / 43, v1_tracks: 43, family_macro_mean: 0.5 });
    expect("v1_mean_partial" in a.summary).toBe(false);
  });

  it("the same tracks in any order give the same figures, to the bit, and keys in name order", () => {
    // Floating-point sums depend on their order ((0.1 + 0.2) + 0.3 is 0.6000000000000001, (0.3 + 0.2) + 0.1
    // is 0.6): the tracks are taken in name order whatever order they arrive in, so that metrics.json and
    // a card's interval do not depend on which track finished first.
    const [a, b, c] = [...V1_SCORED_TRACKS].sort() as [string, string, string];
    const parts: [string, TrackMetrics][] = [
      [a, track("fz", "pz", "vi", 0.1)],
      [b, track("fz", "pz", "en", 0.2)],
      [c, track("fa", "pz", "en", 0.3)],
    ];
    const fixed = (_n: string) => f64(0.5);
    const byName = (n: string) => ({ [a]: f64(0.1, 0.3), [b]: f64(0.2, 0.3), [c]: f64(0.3, 0.3) })[n]!;
    const forward = Object.fromEntries(parts);
    const backward = Object.fromEntries([...parts].reverse());
    expect(aggregate(backward, fixed)).toEqual(aggregate(forward, fixed));
    expect(aggregate(forward, fixed).pillars.pz!.mean).toBe((0.1 + 0.2 + 0.3) / 3);
    expect(aggregate(backward, fixed).summary.v1_mean_partial).toBe((0.1 + 0.2 + 0.3) / 3);
    // Per resample (0.1+0.2+0.3)/3 and 0.9/3, in name order.
    expect(v1Interval(backward, byName)).toEqual(v1Interval(forward, byName));
    expect(v1Interval(backward, byName)!.ci_low).toBe((0.1 + 0.2 + 0.3) / 3 + 0.025 * (0.9 / 3 - (0.1 + 0.2 + 0.3) / 3));
    // Keys in name order: families, pillars and languages, whatever order the tracks gave them.
    const out = aggregate(forward, fixed);
    expect(Object.keys(out.families)).toEqual(["fa", "fz"]);
    expect(Object.keys(out.families.fz!.by_lang)).toEqual(["en", "vi"]);
    expect(Object.keys(aggregate({ [a]: track("f", "q2", "vi", 0.1), [b]: track("f", "q1", "en", 0.2) }, fixed).pillars)).toEqual(["q1", "q2"]);
  });

  it("a track without a headline stays out of its pillar's interval and the v1 interval, whatever its resamples", () => {
    const [a, b] = [...V1_SCORED_TRACKS].sort() as [string, string];
    const tracks = { [a]: track("f", "p", "vi", null), [b]: track("f", "p", "vi", 0.5) };
    const resamples = (n: string) => (n === a ? f64(0.9, 0.9) : f64(0.5, 0.5));
    expect(aggregate(tracks, resamples).pillars.p).toEqual({ mean: 0.5, by_lang: { vi: 0.5 }, tracks: 1, ci_low: 0.5, ci_high: 0.5 });
    expect(v1Interval(tracks, resamples)).toEqual({ ci_low: 0.5, ci_high: 0.5 });
  });
});


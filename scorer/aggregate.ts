// Family and pillar means, the v1 43-track mean and the family macro mean (docs/scoring.md "Aggregation").
import { isScoredInV1, V1_SCORED_TRACKS } from "../common/catalogue.js";
import { meanOfResamples, percentileInterval, type Interval } from "./bootstrap.js";
import type { TrackMetrics } from "./track-metrics.js";

export interface GroupMean {
  mean: number | null;
  by_lang: Record<string, number>;
  tracks: number;
}

export interface PillarMean extends GroupMean {
  ci_low: number | null;
  ci_high: number | null;
}

export interface Summary {
  v1_mean: number | null;
  /** Present only when some of the 43 scored tracks are absent: the mean over those present. */
  v1_mean_partial?: number | null;
  /** Scored tracks (all but routerbench) with a headline. */
  v1_tracks: number;
  family_macro_mean: number | null;
}

export interface Aggregates {
  families: Record<string, GroupMean>;
  pillars: Record<string, PillarMean>;
  summary: Summary;
}

function mean(xs: readonly number[]): number | null {
  return xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** Unweighted mean of headlines, also split by language; tracks without a headline value are left out. */
function groupMean(tracks: readonly TrackMetrics[]): GroupMean {
  const scored = tracks.filter((t) => t.headline.value !== null);
  const langs = new Map<string, number[]>();
  for (const t of scored) {
    const list = langs.get(t.lang) ?? [];
    list.push(t.headline.value!);
    langs.set(t.lang, list);
  }
  const by_lang: Record<string, number> = {};
  for (const lang of [...langs.keys()].sort()) by_lang[lang] = mean(langs.get(lang)!)!;
  return { mean: mean(scored.map((t) => t.headline.value!)), by_lang, tracks: scored.length };
}

/**
 * Aggregates per-track metrics. `resamples(track)` gives the bootstrap headlines of a track, so that a
 * pillar interval resamples within each of its tracks and averages, resample by resample.
 */
export function aggregate(tracks: Readonly<Record<string, TrackMetrics>>, resamples: (track: string) => Float64Array): Aggregates {
  const names = Object.keys(tracks).sort();
  const byFamily = new Map<string, string[]>();
  const byPillar = new Map<string, string[]>();
  for (const name of names) {
    const t = tracks[name]!;
    byFamily.set(t.family, [...(byFamily.get(t.family) ?? []), name]);
    byPillar.set(t.pillar, [...(byPillar.get(t.pillar) ?? []), name]);
  }
  const families: Record<string, GroupMean> = {};
  for (const family of [...byFamily.keys()].sort()) families[family] = groupMean(byFamily.get(family)!.map((n) => tracks[n]!));
  const pillars: Record<string, PillarMean> = {};
  for (const pillar of [...byPillar.keys()].sort()) {
    const members = byPillar.get(pillar)!.filter((n) => tracks[n]!.headline.value !== null);
    // Stryker disable next-line ConditionalExpression: without the test, meanOfResamples([]) is empty and its interval null all the same
    const ci = members.length === 0 ? null : percentileInterval(meanOfResamples(members.map(resamples)));
    pillars[pillar] = { ...groupMean(members.map((n) => tracks[n]!)), ci_low: ci?.ci_low ?? null, ci_high: ci?.ci_high ?? null };
  }

  const v1 = names.filter((n) => isScoredInV1(n) && tracks[n]!.headline.value !== null);
  const v1Values = v1.map((n) => tracks[n]!.headline.value!);
  const complete = V1_SCORED_TRACKS.every((n) => v1.includes(n));
  const v1Families = new Map<string, number[]>();
  for (const n of v1) {
    const t = tracks[n]!;
    v1Families.set(t.family, [...(v1Families.get(t.family) ?? []), t.headline.value!]);
  }
  const familyMeans = [...v1Families.values()].map((xs) => mean(xs)!);
  const summary: Summary = complete
    ? { v1_mean: mean(v1Values), v1_tracks: v1.length, family_macro_mean: mean(familyMeans) }
    : { v1_mean: null, v1_mean_partial: mean(v1Values), v1_tracks: v1.length, family_macro_mean: mean(familyMeans) };
  return { families, pillars, summary };
}

/**
 * The 95% interval of the v1 mean (of v1_mean_partial when some of the 43 tracks are absent), by
 * docs/scoring.md's rule for a pillar: resample within each scored track and average, resample by
 * resample. Not part of metrics.json (its summary is fixed); run cards and the leaderboard show it.
 */
export function v1Interval(tracks: Readonly<Record<string, TrackMetrics>>, resamples: (track: string) => Float64Array): Interval | null {
  const v1 = Object.keys(tracks).sort().filter((n) => isScoredInV1(n) && tracks[n]!.headline.value !== null);
  // Stryker disable next-line ConditionalExpression: as in aggregate, an empty list has no interval either way
  return v1.length === 0 ? null : percentileInterval(meanOfResamples(v1.map(resamples)));
}

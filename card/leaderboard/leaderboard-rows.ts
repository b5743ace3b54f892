// The leaderboard's rows (docs/run-card.md "Leaderboard"): one per run card (or plain
// results directory scored on the fly), ranked by v1 mean within groups of the same dataset and
// scope, never across them. A card that is not complete, does not verify or carries a signature
// that does not check is listed after the ranked rows, unranked; repeats of one setup (cards with
// one fingerprint) are summed up per group (mean, spread, n).
import { dirname } from "node:path";
import { signatureTier, type SignatureCheck } from "../card-signature.js";
import { rankingMean } from "../quality-tier.js";
import type { RunCard } from "../run-card.js";
import type { MetricsJson } from "../../scorer/index.js";
import { qualityTier } from "../quality-tier.js";

/** Stated formula of the cost-adjusted score: v1 mean per USD spent on 1,000 records. */
export const COST_ADJUSTED_FORMULA = "cost-adjusted = v1 mean / cost per 1,000 records (USD); n/a when the cost is unknown";

export interface LeaderboardTrack {
  track: string;
  family: string;
  pillar: string;
  metric: string;
  value: number | null;
  ci_low: number | null;
  ci_high: number | null;
}

export interface LeaderboardRow {
  /** Rank within the group; null: listed apart, unranked (not complete, unverified). */
  rank: number | null;
  source: string;
  /** The card's run_id (null: a results directory without a card). */
  run_id: string | null;
  /** The run's directory (the card's, or the results directory). */
  directory: string;
  model: string;
  condition: string;
  method_class: string;
  v1_mean: number | null;
  /** True when the mean is over a narrower scope than the 43 v1 tracks. */
  v1_partial: boolean;
  v1_ci_low: number | null;
  v1_ci_high: number | null;
  pillars: Record<string, number | null>;
  cost_per_1k_records_usd: number | null;
  records_per_minute: number | null;
  p95_latency_seconds: number | null;
  cost_adjusted_score: number | null;
  quality_tier: string | null;
  /** self-benchmarked | reproduced | ... from the card; `unverified` when it does not verify; `no card`. */
  verification_tier: string;
  date: string | null;
  fingerprint: string | null;
  tracks: LeaderboardTrack[];
  /** The card's signature: unsigned, signed-untrusted, signed-trusted (against --trusted-keys), invalid signature; `no card`. */
  signature: string;
  /** Cards of this group with this row's fingerprint, this one included (1: no repeat). */
  repeats: number;
  /** Why a card is unverified. */
  problems: string[];
  /** The card's status (null: no card); a row not `complete` is listed unranked after the ranked ones. */
  status: string | null;
  /** Records of the card whose result errored, and records in scope (null: no card). */
  records_errored: number | null;
  records: number | null;
  /**
   * This row against the next one of its group, record by record (`udm-orch diff`'s paired v1-mean
   * difference); absent where either run's results are not reachable.
   */
  vs_next?: NeighbourDifference;
}

/** A row's v1 mean minus the next row's, paired over the same records, with its 95% interval and permutation p-value. */
export interface NeighbourDifference {
  difference: number | null;
  ci_low: number | null;
  ci_high: number | null;
  p_value: number | null;
  /** The interval leaves out 0. */
  significant: boolean;
}

export interface LeaderboardGroup {
  dataset_sha256: string;
  dataset: string;
  scope: string[];
  /** Records per track at most (`--limit`): a limited scope, ranked apart from full runs; null or absent when none. */
  limit?: number | null;
  rows: LeaderboardRow[];
  /** Each setup run more than once among the ranked rows: its v1 means' mean, spread and count. */
  repeats: RepeatSummary[];
}

export interface RepeatSummary {
  /** First 12 hex digits, as the rows show it. */
  fingerprint: string;
  n: number;
  model: string;
  condition: string;
  v1_mean: number;
  /** Sample standard deviation of the runs' v1 means (n - 1 in the denominator). */
  v1_sd: number;
  v1_min: number;
  v1_max: number;
  run_ids: string[];
}

export interface Leaderboard {
  format: number;
  generated_at: string;
  cost_adjusted_formula: string;
  groups: LeaderboardGroup[];
  /** Files given that are no valid run card (each skipped, with the one line saying why). */
  invalid: InvalidCard[];
}

export interface InvalidCard {
  source: string;
  problem: string;
}

export type LeaderboardEntry =
  | { kind: "card"; source: string; card: RunCard; problems: string[]; signature?: SignatureCheck }
  | { kind: "results"; source: string; metrics: MetricsJson; datasetLabel: string; v1Interval: { ci_low: number; ci_high: number } | null };

function tracksOf(tracks: Record<string, { family: string; pillar: string; headline: { metric: string; value: number | null; ci_low: number | null; ci_high: number | null } }>): LeaderboardTrack[] {
  return Object.entries(tracks)
    .map(([track, t]) => ({ track, family: t.family, pillar: t.pillar, metric: t.headline.metric, value: t.headline.value, ci_low: t.headline.ci_low, ci_high: t.headline.ci_high }))
    .sort((a, b) => (a.track < b.track ? -1 : a.track > b.track ? 1 : 0));
}

/** The interval of the v1 mean: the card's scores.v1_ci (null on cards from before it was recorded). */
function intervalOf(ci: { ci_low: number | null; ci_high: number | null } | null | undefined): [number | null, number | null] {
  return [typeof ci?.ci_low === "number" ? ci.ci_low : null, typeof ci?.ci_high === "number" ? ci.ci_high : null];
}

function rowOf(e: LeaderboardEntry): { key: string; dataset: string; datasetSha: string; scope: string[]; limit: number | null; row: LeaderboardRow } {
  if (e.kind === "card") {
    const c = e.card;
    const mean = rankingMean(c.scores.summary);
    const costPer1k = c.totals.cost_per_entry_usd === null ? null : c.totals.cost_per_entry_usd * 1000;
    const [lo, hi] = intervalOf(c.scores.v1_ci);
    const scope = [...c.dataset.tracks].sort();
    const limit = c.dataset.limit ?? null;
    return {
      key: `${c.dataset.sha256}\n${scope.join(",")}${limit === null ? "" : `\nlimit ${limit}`}`,
      dataset: `${c.dataset.id} ${c.dataset.version}`,
      datasetSha: c.dataset.sha256,
      scope,
      limit,
      row: {
        rank: 0,
        source: e.source,
        run_id: c.run_id,
        directory: dirname(e.source),
        model: c.method.model_slug,
        condition: c.method.condition,
        method_class: c.method.method_class,
        v1_mean: mean,
        v1_partial: c.scores.summary.v1_mean === null && mean !== null,
        v1_ci_low: lo,
        v1_ci_high: hi,
        pillars: Object.fromEntries(Object.entries(c.scores.pillars).map(([k, p]) => [k, p.mean])),
        cost_per_1k_records_usd: costPer1k,
        records_per_minute: c.timing.entries_per_minute,
        p95_latency_seconds: c.timing.p95_latency_seconds,
        cost_adjusted_score: mean !== null && costPer1k !== null && costPer1k > 0 ? mean / costPer1k : null,
        quality_tier: c.quality_tier?.tier ?? null,
        verification_tier: e.problems.length > 0 ? "unverified" : c.verification_tier,
        date: c.finished ?? c.timestamp,
        fingerprint: c.fingerprint.slice(0, 12),
        tracks: tracksOf(c.scores.tracks),
        signature: signatureTier(e.signature ?? { state: "unsigned" }),
        repeats: 1,
        problems: e.problems,
        status: c.status,
        records_errored: c.scores.errors,
        records: c.dataset.entry_count,
      },
    };
  }
  const m = e.metrics;
  const mean = rankingMean(m.summary);
  const scope = Object.keys(m.tracks).sort();
  const [lo, hi] = intervalOf(e.v1Interval);
  return {
    key: `${m.suite.identity}\n${scope.join(",")}`,
    dataset: e.datasetLabel,
    datasetSha: m.suite.identity,
    scope,
    limit: null,
    row: {
      rank: 0,
      source: e.source,
      run_id: null,
      directory: e.source,
      model: e.source,
      condition: "unknown",
      method_class: "unknown",
      v1_mean: mean,
      v1_partial: m.summary.v1_mean === null && mean !== null,
      v1_ci_low: lo,
      v1_ci_high: hi,
      pillars: Object.fromEntries(Object.entries(m.pillars).map(([k, p]) => [k, p.mean])),
      cost_per_1k_records_usd: null,
      records_per_minute: null,
      p95_latency_seconds: null,
      cost_adjusted_score: null,
      quality_tier: qualityTier(mean),
      verification_tier: "no card",
      date: null,
      fingerprint: null,
      tracks: tracksOf(m.tracks),
      signature: "no card",
      repeats: 1,
      problems: [],
      status: null,
      records_errored: null,
      records: null,
    },
  };
}

/** The rank as shown: a row listed apart says why, with no rank ("- (complete_with_errors: 5 of 5 records errored)", "- (unverified)"). */
export function rankText(r: LeaderboardRow): string {
  if (r.status === "complete_with_errors") return `- (complete_with_errors: ${r.records_errored} of ${r.records} records errored)`;
  if (r.status !== null && r.status !== "complete") return `- (${r.status})`;
  if (r.problems.length > 0) return "- (unverified)";
  return String(r.rank);
}

/** Not complete (errored records, running, cancelled, failed) or not verifying: listed after the ranked rows, unranked. */
const apart = (r: LeaderboardRow) => ((r.status !== null && r.status !== "complete") || r.problems.length > 0 ? 1 : 0);

/** Groups by dataset and scope, ranks each group by v1 mean (no mean last; ties share a rank); rows apart unranked after. */
export function buildLeaderboard(entries: readonly LeaderboardEntry[], now = new Date(), invalid: readonly InvalidCard[] = []): Leaderboard {
  const groups = new Map<string, LeaderboardGroup>();
  for (const e of entries) {
    const { key, dataset, datasetSha, scope, limit, row } = rowOf(e);
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { dataset_sha256: datasetSha, dataset, scope, limit, rows: [], repeats: [] }));
    g.rows.push(row);
  }
  for (const g of groups.values()) {
    g.rows.sort((a, b) => apart(a) - apart(b) || (b.v1_mean ?? -Infinity) - (a.v1_mean ?? -Infinity) || (a.source < b.source ? -1 : 1));
    g.rows.forEach((r, i) => {
      if (apart(r)) return void (r.rank = null);
      const prev = g.rows[i - 1];
      r.rank = prev && prev.rank !== null && prev.v1_mean === r.v1_mean ? prev.rank : i + 1;
    });
    g.repeats = repeatsOf(g.rows);
  }
  return { format: LEADERBOARD_FORMAT, generated_at: now.toISOString(), cost_adjusted_formula: COST_ADJUSTED_FORMULA, groups: [...groups.values()], invalid: [...invalid] };
}

/** 2: rows carry run_id, directory, signature and repeats; a row listed apart has rank null; groups carry repeats. */
export const LEADERBOARD_FORMAT = 2;

/** Repeats of one setup among a group's cards: every row gets its count; ranked rows with a mean are summed up. */
function repeatsOf(rows: LeaderboardRow[]): RepeatSummary[] {
  const byFp = new Map<string, LeaderboardRow[]>();
  for (const r of rows) {
    if (r.fingerprint === null) continue;
    byFp.set(r.fingerprint, [...(byFp.get(r.fingerprint) ?? []), r]);
  }
  const out: RepeatSummary[] = [];
  for (const [fp, same] of byFp) {
    for (const r of same) r.repeats = same.length;
    const ranked = same.filter((r) => r.rank !== null && r.v1_mean !== null);
    if (ranked.length < 2) continue;
    const means = ranked.map((r) => r.v1_mean!);
    const mean = means.reduce((a, b) => a + b, 0) / means.length;
    const sd = Math.sqrt(means.reduce((a, x) => a + (x - mean) ** 2, 0) / (means.length - 1));
    out.push({
      fingerprint: fp,
      n: ranked.length,
      model: ranked[0]!.model,
      condition: ranked[0]!.condition,
      v1_mean: mean,
      v1_sd: sd,
      v1_min: Math.min(...means),
      v1_max: Math.max(...means),
      run_ids: ranked.map((r) => r.run_id ?? r.source),
    });
  }
  return out.sort((a, b) => b.v1_mean - a.v1_mean || (a.fingerprint < b.fingerprint ? -1 : 1));
}

// The scorer's Prometheus metrics (udm_scorer_*): each scored track's headline with its CI bounds,
// family / pillar / v1 means, missing questions, results applied / duplicate / invalid, consumer
// pending, and how long a track's metrics take to come out once its last result is in. Values are
// read in collect() from the scorer's own metrics (metrics.json as it stands), never recomputed.
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import type { MetricsJson } from "./metrics-json.js";
import type { ScorerCounts as CoreCounts } from "./run-scorer.js";

/** Last result in -> metrics out: milliseconds for a small track, seconds for a large one. */
export const EMIT_LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export interface ScorerCounts {
  applied: number;
  duplicates: number;
  /** Results that match no record in scope (another suite, a track outside the run). */
  invalid: number;
  /** Results refused because their MAC is missing or wrong (a scorer given the run's token). */
  rejected: number;
}

/** The core's counts as the metrics show them; `consumerErrors`: results the bus consumer could not read; `rejected`: forged or unsigned ones. */
export function scorerCountsOf(c: CoreCounts | undefined, consumerErrors = 0, rejected = 0): ScorerCounts {
  return { applied: c?.applied ?? 0, duplicates: c?.duplicates ?? 0, invalid: (c?.unknown ?? 0) + (c?.outOfScope ?? 0) + consumerErrors, rejected };
}

export interface ScorerMetricsSource {
  /** Metrics of the tracks scored so far (metrics.json as it stands). */
  metrics(): MetricsJson | undefined;
  /** Tracks the run has, scored or not. */
  tracksInScope(): number;
  /** Result counts, when the scorer consumes results one by one. */
  counts?(): ScorerCounts;
  /** Results delivered to the consumer and not yet acknowledged, when the bus tells. */
  pending?(): number | undefined;
}

export interface ScorerMetrics {
  /** A track's metrics were emitted `seconds` after its last result was in. */
  emitted(seconds: number): void;
}

export function registerScorerMetrics(registry: Registry, source: ScorerMetricsSource): ScorerMetrics {
  const registers = [registry];
  const headlineLabels = ["track", "family", "pillar", "lang", "metric"] as const;
  const tracks = () => Object.entries(source.metrics()?.tracks ?? {});
  const headline = (name: string, help: string, pick: (h: { value: number | null; ci_low: number | null; ci_high: number | null }) => number | null) =>
    new Gauge({
      name,
      help,
      labelNames: headlineLabels,
      registers,
      collect() {
        this.reset();
        for (const [track, m] of tracks()) {
          const v = pick(m.headline);
          if (v !== null) this.set({ track, family: m.family, pillar: m.pillar, lang: m.lang, metric: m.headline.metric }, v);
        }
      },
    });
  headline("udm_scorer_track_headline", "Headline metric of a scored track (docs/scoring.md), labelled with the metric's name.", (h) => h.value);
  headline("udm_scorer_track_headline_ci_low", "Lower bound of the headline's 95% bootstrap CI.", (h) => h.ci_low);
  headline("udm_scorer_track_headline_ci_high", "Upper bound of the headline's 95% bootstrap CI.", (h) => h.ci_high);
  new Gauge({
    name: "udm_scorer_track_missing_questions",
    help: "Questions of a scored track with no valid answer.",
    labelNames: ["track", "family"] as const,
    registers,
    collect() {
      this.reset();
      for (const [track, m] of tracks()) this.set({ track, family: m.family }, m.missing);
    },
  });
  new Gauge({
    name: "udm_scorer_tracks_scored",
    help: "Tracks whose final metrics are out.",
    registers,
    collect() {
      this.set(tracks().length);
    },
  });
  new Gauge({
    name: "udm_scorer_tracks",
    help: "Tracks the run has.",
    registers,
    collect() {
      this.set(source.tracksInScope());
    },
  });
  new Gauge({
    name: "udm_scorer_family_mean",
    help: "Mean headline of a family's scored tracks.",
    labelNames: ["family"] as const,
    registers,
    collect() {
      this.reset();
      for (const [family, g] of Object.entries(source.metrics()?.families ?? {})) if (g.mean !== null) this.set({ family }, g.mean);
    },
  });
  new Gauge({
    name: "udm_scorer_pillar_mean",
    help: "Mean headline of a pillar's scored tracks.",
    labelNames: ["pillar"] as const,
    registers,
    collect() {
      this.reset();
      for (const [pillar, g] of Object.entries(source.metrics()?.pillars ?? {})) if (g.mean !== null) this.set({ pillar }, g.mean);
    },
  });
  new Gauge({
    name: "udm_scorer_v1_mean",
    help: "v1 mean over the scored tracks (docs/scoring.md); absent until one is scored.",
    registers,
    collect() {
      // An unlabelled series always exists; NaN until a track is scored (0 would be a score).
      const s = source.metrics()?.summary;
      const v = s ? (s.v1_mean ?? s.v1_mean_partial ?? null) : null;
      this.set(v ?? NaN);
    },
  });
  if (source.counts) {
    const counts = source.counts.bind(source);
    new Counter({
      name: "udm_scorer_results_total",
      help: "Results received by outcome: applied, duplicate (run_id already applied), invalid (no record in scope), rejected (MAC missing or wrong, with --token).",
      labelNames: ["outcome"] as const,
      registers,
      collect() {
        const c = counts();
        this.reset();
        this.inc({ outcome: "applied" }, c.applied);
        this.inc({ outcome: "duplicate" }, c.duplicates);
        this.inc({ outcome: "invalid" }, c.invalid);
        this.inc({ outcome: "rejected" }, c.rejected);
      },
    });
  }
  if (source.pending) {
    const pending = source.pending.bind(source);
    new Gauge({
      name: "udm_scorer_consumer_pending",
      help: "Results received and not yet acknowledged to the bus (journal flush pending).",
      registers,
      collect() {
        this.set(pending() ?? NaN);
      },
    });
  }
  const emitLatency = new Histogram({
    name: "udm_scorer_emit_latency_seconds",
    help: "Time from a track's last result being in to its final metrics being emitted.",
    buckets: EMIT_LATENCY_BUCKETS,
    registers,
  });
  return { emitted: (seconds) => emitLatency.observe(seconds) };
}

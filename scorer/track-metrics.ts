// The per-track object of metrics.json (docs/scoring.md "metrics.json").
import type { ChoiceMetrics } from "./metrics/choice.js";
import type { NoulMetrics } from "./metrics/noul.js";
import type { RoutingMetrics } from "./metrics/routing.js";

export interface Headline {
  metric: string;
  value: number | null;
  ci_low: number | null;
  ci_high: number | null;
}

export interface RetrievalMetrics {
  "ndcg@10": number | null;
  "mrr@10": number | null;
  queries: number;
  queries_total: number;
  keep_precision: number | null;
  keep_recall: number | null;
  keep_f1: number | null;
}

export interface TrackMetrics {
  family: string;
  pillar: string;
  lang: string;
  records: number;
  groups: number;
  headline: Headline;
  questions: Record<string, ChoiceMetrics | NoulMetrics>;
  retrieval: RetrievalMetrics | null;
  routing: RoutingMetrics | null;
  /** Questions of the track's records with no valid answer (every question key, gold or not). */
  missing: number;
}

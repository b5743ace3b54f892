// run-card.json (RUN_CARD.md): the sealed record of one run's setup, quality, cost and speed,
// written beside metrics.json. The types here are the file's shape; build-card.ts fills them.
import { z } from "zod";

/**
 * Bump when the meaning of a field changes. 2: the fingerprint is the named object's with the
 * scope (fingerprint.ts; format 1 cards keep the old rule), `dataset.families`, and the status
 * `complete_with_errors`.
 */
export const RUN_CARD_FORMAT = 2;
export const RUN_CARD_FILE = "run-card.json";

/**
 * `complete_with_errors`: every record in scope has a result line, but `scores.errors` of them
 * errored (an engine without the method's endpoint, garbage answers): not ranked as complete,
 * and a sweep reruns it.
 */
export const RUN_STATUSES = ["running", "complete", "complete_with_errors", "failed", "cancelled"] as const;
export type RunCardStatus = (typeof RUN_STATUSES)[number];

/** The protocol's method classes (seed 003 §9.6, VALID_METHOD_CLASSES). */
export const METHOD_CLASSES = ["raw-llm", "coached-llm", "pipeline", "custom-plugin", "api", "human"] as const;
export type MethodClass = (typeof METHOD_CLASSES)[number];
export const DEFAULT_METHOD_CLASS: MethodClass = "raw-llm";

/**
 * Who validated the result (seed 003 §9.4). `reproduced`: `card reproduce` reran the setup and
 * every headline came within ±2%; `unverified` is what a leaderboard shows for a card whose
 * hash does not verify (never written into a card).
 */
export const VERIFICATION_TIERS = ["self-benchmarked", "reproduced", "gds-verified", "community-validated"] as const;
export type VerificationTier = (typeof VERIFICATION_TIERS)[number];

export interface CardHeadline {
  metric: string;
  value: number | null;
  ci_low: number | null;
  ci_high: number | null;
}

export interface CardTrack {
  family: string;
  pillar: string;
  lang: string;
  records: number;
  headline: CardHeadline;
  missing: number;
}

export interface CardPillar {
  mean: number | null;
  ci_low: number | null;
  ci_high: number | null;
  tracks: number;
}

export interface RunCard {
  card_format: number;
  run_id: string;
  harness_version: string;
  /** ISO 8601 UTC start of the run's first session. */
  timestamp: string;
  /** ISO 8601 UTC end; null while running. */
  finished: string | null;
  status: RunCardStatus;
  /** Wall time summed over every session of the run (resumes included). */
  elapsed_seconds: number;
  method: {
    /** Model as asked (--model), else as served. */
    model_slug: string;
    /** Model id(s) as the engines reported them (/v1/models); "" when no engine was seen. */
    model_id: string;
    /** Engine method and template label, e.g. `systemone`, `label-read/v1`. */
    condition: string;
    engine_method: string;
    template_version: string | null;
    temperature: number;
    seeds: number[];
    /** The template or instructions text the agent adds ("" when none). */
    system_prompt: string;
    system_prompt_sha256: string;
    /** Max units in flight per agent; null when each agent chooses (a cluster run). */
    batch_size: number | null;
    tools_enabled: string[];
    method_class: MethodClass;
  };
  dataset: {
    id: string;
    version: string;
    /** Suite identity (SUITE_FORMAT.md). */
    sha256: string;
    /** Records in scope (after --tracks/--families). */
    entry_count: number;
    tracks: string[];
    /** Families of the tracks in scope, sorted (card format 2 on; part of the fingerprint's scope). */
    families?: string[];
  };
  scores: {
    summary: { v1_mean: number | null; v1_mean_partial?: number | null; v1_tracks: number; family_macro_mean: number | null };
    /**
     * 95% bootstrap interval of the v1 mean (of v1_mean_partial when tracks are absent), by the
     * pillar rule of SCORING.md; null before a track is scored. Absent from cards before it was added.
     */
    v1_ci?: { ci_low: number | null; ci_high: number | null } | null;
    pillars: Record<string, CardPillar>;
    tracks: Record<string, CardTrack>;
    tracks_scored: number;
    tracks_in_scope: number;
    /** Records whose last result has at least one errored question. */
    errors: number;
    /** Questions without a valid answer, summed over tracks. */
    missing: number;
  };
  totals: {
    prompt_tokens: number | null;
    completion_tokens: number | null;
    /** null: unknown (vLLM's systemone usage has no cached count). */
    cached_tokens: number | null;
    gpu_seconds: number | null;
    gpu_hour_usd: number;
    /** null when the GPU-hour price is 0 (unknown) or GPU-seconds are unknown. */
    total_cost_usd: number | null;
    cost_per_entry_usd: number | null;
  };
  timing: {
    avg_latency_seconds: number | null;
    median_latency_seconds: number | null;
    p95_latency_seconds: number | null;
    /** Records the latency figures are over. */
    timed_records: number | null;
    entries_per_minute: number | null;
    tokens_per_second: number | null;
  };
  cluster: {
    agents_seen: number;
    agents: Array<{ agent_id: string; model: string; engine_url: string; results: number }>;
    engine_methods: string[];
    leases_expired: number;
    backup_units: number;
    results_rejected: number;
    sessions: number;
    resumes: number;
  };
  /** sha256 of each results file, keyed by its path relative to the card's directory (`/`). */
  results_files: Record<string, string>;
  quality_tier: { tier: QualityTierName | null; basis: "v1_mean" | "v1_mean_partial"; provisional: true; note: string };
  verification_tier: VerificationTier;
  /** Set by `card reproduce` on the new card. */
  reproduction?: {
    of_run_id: string;
    of_fingerprint: string;
    of_run_card_hash: string;
    tolerance: number;
    compared: number;
    outside: Array<{ track: string; original: number | null; reproduced: number | null }>;
    within: boolean;
  };
  fingerprint: string;
  run_card_hash: string;
}

export type QualityTierName = "Baseline" | "Emerging" | "Functional" | "Deployable" | "Fluent";

/** What `card verify` and the leaderboard need to find in a file before they trust it further. */
export const RunCardShape = z.looseObject({
  card_format: z.number(),
  run_id: z.string(),
  harness_version: z.string(),
  timestamp: z.string(),
  status: z.enum(RUN_STATUSES),
  method: z.looseObject({
    model_slug: z.string(),
    condition: z.string(),
    temperature: z.number(),
    system_prompt_sha256: z.string(),
    batch_size: z.number().nullable(),
    tools_enabled: z.array(z.string()),
  }),
  dataset: z.looseObject({ sha256: z.string(), entry_count: z.number() }),
  scores: z.looseObject({ summary: z.looseObject({ v1_mean: z.number().nullable() }) }),
  results_files: z.record(z.string(), z.string()),
  fingerprint: z.string(),
  run_card_hash: z.string(),
});

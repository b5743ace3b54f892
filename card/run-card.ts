// run-card.json (docs/run-card.md): the sealed record of one run's setup, quality, cost and speed,
// written beside metrics.json. The types here are the file's shape; build-card.ts fills them.
import { z } from "zod";
import type { CardSignature } from "./card-signature.js";

/**
 * Bump when the meaning of a field changes. 2: the fingerprint is the named object's with the
 * scope (fingerprint.ts; format 1 cards keep the old rule), `dataset.families`, and the status
 * `complete_with_errors`. 3: the fingerprint names what determines the answers (the seeds in, the
 * batch size out), so every command writes one fingerprint for one setup.
 */
export const RUN_CARD_FORMAT = 3;
export const RUN_CARD_FILE = "run-card.json";

/**
 * `complete_with_errors`: every record in scope has a result line, but `scores.errors` of them
 * errored (an engine without the method's endpoint, garbage answers): not ranked as complete,
 * and a sweep reruns it.
 */
export const RUN_STATUSES = ["running", "complete", "complete_with_errors", "failed", "cancelled"] as const;
export type RunCardStatus = (typeof RUN_STATUSES)[number];

/** The protocol's method classes (VALID_METHOD_CLASSES). */
export const METHOD_CLASSES = ["raw-llm", "coached-llm", "pipeline", "custom-plugin", "api", "human"] as const;
export type MethodClass = (typeof METHOD_CLASSES)[number];
export const DEFAULT_METHOD_CLASS: MethodClass = "raw-llm";

/**
 * Who validated the result. `reproduced`: `card reproduce` reran the setup and
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

export interface AnsweredShare {
  questions: number;
  /** questions / all questions answered, rounded to 6 digits. */
  share: number;
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
    /** Max units in flight per agent; null when each agent chooses (a cluster run). Not in the fingerprint from format 3 on. */
    batch_size: number | null;
    tools_enabled: string[];
    method_class: MethodClass;
    /**
     * Engine method -> the questions it answered and their share of all answered, over each
     * record's last result line (`answered_by`): a batched method hands what its endpoint cannot
     * read to label-read, so this says which method the numbers are. Absent from cards before it
     * was added, and while no record has a result.
     */
    answered_by?: Record<string, AnsweredShare>;
  };
  dataset: {
    id: string;
    version: string;
    /** Suite identity (docs/suite-format.md). */
    sha256: string;
    /** Records in scope (after --tracks/--families). */
    entry_count: number;
    tracks: string[];
    /** Families of the tracks in scope, sorted (card format 2 on; part of the fingerprint's scope). */
    families?: string[];
    /** Records per track at most (`--limit`, whole groups); absent when every record is in scope. Part of the fingerprint's scope. */
    limit?: number;
  };
  scores: {
    summary: { v1_mean: number | null; v1_mean_partial?: number | null; v1_tracks: number; family_macro_mean: number | null };
    /**
     * 95% bootstrap interval of the v1 mean (of v1_mean_partial when tracks are absent), by the
     * pillar rule of docs/scoring.md; null before a track is scored. Absent from cards before it was added.
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
  /** Optional ed25519 signature of run_card_hash (card-signature.ts); left out of the hash. */
  signature?: CardSignature;
}

export type QualityTierName = "Baseline" | "Emerging" | "Functional" | "Deployable" | "Fluent";

/** Tiers a card may carry when read: the written ones, and `unverified` (the protocol's name for none). */
export const READABLE_VERIFICATION_TIERS = [...VERIFICATION_TIERS, "unverified"] as const;

// Field rules of a card as read: every value the leaderboard and `card verify` use has its type and
// range checked here, so an odd card is refused with one line naming the field instead of failing
// (or ranking) further on.
const score = z.number().min(0).max(1);
const nullableScore = score.nullable();
const count = z.number().int().min(0);
const nonNegative = z.number().finite().min(0);
const isoDate = z.iso.datetime({ offset: true });
const sha256 = z.string().regex(/^[0-9a-f]{64}$/, "expected a sha256 (64 lowercase hex digits)");

/** A headline's value range by its metric: NLL-like metrics are >= 0, every other headline is in [0,1]. */
const Headline = z
  .looseObject({ metric: z.string(), value: z.number().finite().nullable(), ci_low: z.number().finite().nullable(), ci_high: z.number().finite().nullable() })
  .superRefine((h, ctx) => {
    const unbounded = /nll/i.test(h.metric);
    for (const key of ["value", "ci_low", "ci_high"] as const) {
      const v = h[key];
      if (v === null) continue;
      if (v < 0 || (!unbounded && v > 1)) ctx.addIssue({ code: "custom", path: [key], message: `${h.metric} must be ${unbounded ? ">= 0" : "in [0,1]"}, got ${v}` });
    }
  });

/**
 * A results file's key: a relative path below the card's directory with `/`, no `..`, `.` or empty
 * segment, not absolute, no control character (verify-card.ts still checks what is on disk).
 */
export function isResultsKey(key: string): boolean {
  if (key === "" || key.startsWith("/") || /[\x00-\x1f\x7f-\x9f]/.test(key)) return false;
  return key.split("/").every((seg) => seg !== "" && seg !== "." && seg !== "..");
}

/** What `card verify` and the leaderboard need to find in a file before they trust it further. */
export const RunCardShape = z.looseObject({
  card_format: z.number().int().min(1),
  run_id: z.string(),
  harness_version: z.string(),
  timestamp: isoDate,
  finished: isoDate.nullable(),
  status: z.enum(RUN_STATUSES),
  elapsed_seconds: nonNegative,
  method: z.looseObject({
    model_slug: z.string(),
    model_id: z.string(),
    condition: z.string(),
    engine_method: z.string(),
    template_version: z.string().nullable(),
    temperature: z.number().finite().min(0),
    seeds: z.array(z.number().int()),
    system_prompt_sha256: z.string(),
    batch_size: z.number().int().min(1).nullable(),
    tools_enabled: z.array(z.string()),
    method_class: z.enum(METHOD_CLASSES),
    answered_by: z.record(z.string(), z.looseObject({ questions: count, share: score })).optional(),
  }),
  dataset: z.looseObject({ id: z.string(), version: z.string(), sha256: z.string(), entry_count: count, tracks: z.array(z.string()), limit: z.number().int().positive().optional() }),
  scores: z.looseObject({
    summary: z.looseObject({ v1_mean: nullableScore, v1_mean_partial: nullableScore.optional(), v1_tracks: count, family_macro_mean: nullableScore }),
    v1_ci: z.looseObject({ ci_low: nullableScore, ci_high: nullableScore }).nullable().optional(),
    pillars: z.record(z.string(), z.looseObject({ mean: nullableScore, ci_low: nullableScore, ci_high: nullableScore, tracks: count })),
    tracks: z.record(z.string(), z.looseObject({ family: z.string(), pillar: z.string(), lang: z.string(), records: count, headline: Headline, missing: count })),
    tracks_scored: count,
    tracks_in_scope: count,
    errors: count,
    missing: count,
  }),
  totals: z.looseObject({
    prompt_tokens: count.nullable(),
    completion_tokens: count.nullable(),
    cached_tokens: count.nullable(),
    gpu_seconds: nonNegative.nullable(),
    gpu_hour_usd: nonNegative,
    total_cost_usd: nonNegative.nullable(),
    cost_per_entry_usd: nonNegative.nullable(),
  }),
  timing: z.looseObject({
    avg_latency_seconds: nonNegative.nullable(),
    median_latency_seconds: nonNegative.nullable(),
    p95_latency_seconds: nonNegative.nullable(),
    timed_records: count.nullable(),
    entries_per_minute: nonNegative.nullable(),
    tokens_per_second: nonNegative.nullable(),
  }),
  results_files: z.record(z.string().refine(isResultsKey, "expected a relative path inside the card's directory"), sha256),
  quality_tier: z.looseObject({ tier: z.enum(["Baseline", "Emerging", "Functional", "Deployable", "Fluent"]).nullable() }),
  verification_tier: z.enum(READABLE_VERIFICATION_TIERS),
  fingerprint: z.string().min(1),
  run_card_hash: sha256,
});

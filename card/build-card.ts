// buildRunCard: the card as a pure function of what a run leaves behind (run.json, metrics.json,
// the coordinator's run totals, the sealed results files) and the flags of the command. Nothing
// here reads a clock or a file; card-recorder.ts gathers the inputs.
import { VERSION } from "../common/version.js";
import type { MetricsJson } from "../scorer/index.js";
import { sealCard } from "./card-hash.js";
import type { CardTotals, ClusterView } from "./run-snapshot.js";
import { componentsOfCard, fingerprint } from "./fingerprint.js";
import { qualityTierOf } from "./quality-tier.js";
import { sha256Hex } from "../common/sha256.js";
import { RUN_CARD_FORMAT, type CardTrack, type MethodClass, type RunCard, type RunCardStatus, type VerificationTier } from "./run-card.js";

/** The fields of run.json a card uses (coordinator/run-manifest.ts). */
export interface RunManifestView {
  run_id: string;
  suite_identity: string;
  tracks: readonly string[];
  /** Records per track at most (`--limit`); null or absent: every record. */
  limit?: number | null;
  method: { method: string; seeds: readonly number[]; temperature: number; model: string };
  created_at: string;
  sessions: number;
  resumes: number;
}

/** What the command knows of the setup beyond run.json. */
export interface CardSetup {
  datasetId: string;
  datasetVersion: string;
  /** Records in scope. */
  entryCount: number;
  /** Template label of the engine method (label-read's), null for engine-side methods. */
  templateVersion: string | null;
  /** The text the agent adds to each prompt ("" when none). */
  systemPrompt: string;
  batchSize: number | null;
  toolsEnabled: readonly string[];
  /** Family of each track of the suite (the families of the scope, in the fingerprint); absent: none recorded. */
  trackFamilies?: Readonly<Record<string, string>>;
  methodClass: MethodClass;
  /** USD per GPU-hour; 0 = unknown. */
  gpuHourUsd: number;
  verificationTier?: VerificationTier;
}

export interface RunCardInputs {
  run: RunManifestView;
  metrics: MetricsJson | undefined;
  totals: CardTotals | undefined;
  /** answeredBy: engine method -> questions answered over the records' last lines (sealResults); absent or empty: none known. */
  results: { files: Record<string, string>; errorRecords: number; answeredBy?: Readonly<Record<string, number>> };
  cluster: ClusterView;
  setup: CardSetup;
  status: RunCardStatus;
  finished: string | null;
  elapsedSeconds: number;
  /** The scorer's interval of the v1 mean (scorer/aggregate.ts v1Interval); null or absent when none. */
  v1Interval?: { ci_low: number; ci_high: number } | null;
  reproduction?: RunCard["reproduction"];
}

/** `systemone`; a templated method by its template's label, e.g. `label-read/v1`. */
export function conditionOf(engineMethod: string, templateVersion: string | null): string {
  if (!templateVersion) return engineMethod;
  return templateVersion.startsWith(`${engineMethod}/`) ? templateVersion : `${engineMethod}/${templateVersion}`;
}

export function buildRunCard(i: RunCardInputs): RunCard {
  const { run, metrics, totals, setup } = i;
  // The models that answered (an agent restarting its engine for this run's model was first seen with the last run's).
  const answering = i.cluster.agents.filter((a) => a.results > 0);
  const tallied = (i.cluster.answeredModels ?? []).filter(Boolean);
  const servedModels = [...new Set(tallied.length > 0 ? tallied : (answering.length > 0 ? answering : i.cluster.agents).map((a) => a.model).filter(Boolean))].sort();
  const tracks: Record<string, CardTrack> = {};
  let missing = 0;
  for (const [name, t] of Object.entries(metrics?.tracks ?? {})) {
    tracks[name] = { family: t.family, pillar: t.pillar, lang: t.lang, records: t.records, headline: { ...t.headline }, missing: t.missing };
    missing += t.missing;
  }
  const pillars: RunCard["scores"]["pillars"] = {};
  for (const [name, p] of Object.entries(metrics?.pillars ?? {})) pillars[name] = { mean: p.mean, ci_low: p.ci_low, ci_high: p.ci_high, tracks: p.tracks };
  const summary = metrics?.summary ?? { v1_mean: null, v1_tracks: 0, family_macro_mean: null };
  const elapsed = i.elapsedSeconds;
  const gpuSeconds = totals?.gpuSeconds ?? null;
  const cost = gpuSeconds !== null && setup.gpuHourUsd > 0 ? (gpuSeconds * setup.gpuHourUsd) / 3600 : null;
  const tokens = totals?.promptTokens !== null && totals?.promptTokens !== undefined && totals.completionTokens !== null ? totals.promptTokens + totals.completionTokens : null;
  // Every record has a line but some errored: not a complete run (docs/run-card.md "Status").
  const status: RunCardStatus = i.status === "complete" && i.results.errorRecords > 0 ? "complete_with_errors" : i.status;
  const card: RunCard = {
    card_format: RUN_CARD_FORMAT,
    run_id: run.run_id,
    harness_version: VERSION,
    timestamp: run.created_at,
    finished: i.finished,
    status,
    elapsed_seconds: round(elapsed, 3),
    method: {
      model_slug: run.method.model || servedModels[0] || "",
      model_id: servedModels.join(","),
      condition: conditionOf(run.method.method, setup.templateVersion),
      engine_method: run.method.method,
      template_version: setup.templateVersion,
      temperature: run.method.temperature,
      seeds: [...run.method.seeds],
      system_prompt: setup.systemPrompt,
      system_prompt_sha256: sha256Hex(setup.systemPrompt),
      batch_size: setup.batchSize,
      tools_enabled: [...setup.toolsEnabled].sort(),
      method_class: setup.methodClass,
      ...answeredByOf(i.results.answeredBy),
    },
    dataset: {
      id: setup.datasetId,
      version: setup.datasetVersion,
      sha256: run.suite_identity,
      entry_count: setup.entryCount,
      tracks: [...run.tracks].sort(),
      families: familiesOf(run.tracks, setup.trackFamilies),
      // Only a limited run says so: the cards of every other run keep the bytes they had.
      ...(run.limit ? { limit: run.limit } : {}),
    },
    scores: {
      summary: { ...summary },
      v1_ci: i.v1Interval ? { ci_low: i.v1Interval.ci_low, ci_high: i.v1Interval.ci_high } : null,
      pillars,
      tracks,
      tracks_scored: Object.keys(tracks).length,
      tracks_in_scope: run.tracks.length,
      errors: i.results.errorRecords,
      missing,
    },
    totals: {
      prompt_tokens: totals?.promptTokens ?? null,
      completion_tokens: totals?.completionTokens ?? null,
      cached_tokens: totals?.cachedTokens ?? null,
      gpu_seconds: gpuSeconds === null ? null : round(gpuSeconds, 3),
      gpu_hour_usd: setup.gpuHourUsd,
      total_cost_usd: cost === null ? null : round(cost, 6),
      cost_per_entry_usd: cost === null || setup.entryCount === 0 ? null : round(cost / setup.entryCount, 9),
    },
    timing: {
      avg_latency_seconds: totals?.latency ? round(totals.latency.mean, 6) : null,
      median_latency_seconds: totals?.latency ? round(totals.latency.p50, 6) : null,
      p95_latency_seconds: totals?.latency ? round(totals.latency.p95, 6) : null,
      timed_records: totals?.latency ? totals.latency.count : null,
      // Only a complete run's rate: records that errored were not processed, only attempted.
      entries_per_minute: elapsed > 0 && status === "complete" ? round((setup.entryCount / elapsed) * 60, 3) : null,
      tokens_per_second: elapsed > 0 && tokens !== null ? round(tokens / elapsed, 3) : null,
    },
    cluster: {
      agents_seen: i.cluster.agents.length,
      agents: [...i.cluster.agents].sort((a, b) => (a.agent_id < b.agent_id ? -1 : a.agent_id > b.agent_id ? 1 : 0)),
      engine_methods: [run.method.method],
      leases_expired: i.cluster.leasesExpired,
      backup_units: i.cluster.backupUnits,
      results_rejected: i.cluster.resultsRejected,
      sessions: run.sessions,
      resumes: run.resumes,
    },
    results_files: sortedRecord(i.results.files),
    quality_tier: qualityTierOf(summary),
    verification_tier: setup.verificationTier ?? "self-benchmarked",
    ...(i.reproduction ? { reproduction: i.reproduction } : {}),
    fingerprint: "",
    run_card_hash: "",
  };
  card.fingerprint = fingerprint(componentsOfCard(card));
  return sealCard(card);
}

/** The card's method.answered_by: questions and share per method, in name order; nothing when none answered. */
export function answeredByOf(counts: Readonly<Record<string, number>> | undefined): { answered_by?: RunCard["method"]["answered_by"] } {
  const entries = Object.entries(counts ?? {}).filter(([, n]) => n > 0).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const total = entries.reduce((sum, [, n]) => sum + n, 0);
  if (total === 0) return {};
  return { answered_by: Object.fromEntries(entries.map(([m, n]) => [m, { questions: n, share: round(n / total, 6) }])) };
}

function familiesOf(tracks: readonly string[], trackFamilies: Readonly<Record<string, string>> | undefined): string[] {
  const families = new Set<string>();
  for (const t of tracks) {
    const f = trackFamilies?.[t];
    if (f !== undefined) families.add(f);
  }
  return [...families].sort();
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

function sortedRecord(r: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(r).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

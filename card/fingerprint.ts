// The setup's fingerprint (docs/run-card.md). From card format 2 on: sha256 of the
// canonical JSON of one named object, so no two setups can write the same bytes. Format 3 names
// only what determines the answers (dataset, model, condition, prompt, temperature, seeds,
// harness, tools, scope): the batch size (units an agent holds at once: `run`'s --capacity, null
// where agents choose) is scheduling, so `run`, `coordinator`, `sweep` and `card reproduce` of
// one setup write one fingerprint. Older cards keep the rule they were sealed with (format 2:
// batch size in, seeds out; format 1: legacyFingerprint), so they still verify.
import { canonicalJson } from "../common/canonical-json.js";
import { sha256Hex } from "../common/sha256.js";

/** The records a run covers: the tracks in scope and their families, sorted, and the records per track at most (`--limit`; null: all). */
export interface FingerprintScope {
  tracks: readonly string[];
  families: readonly string[];
  limit: number | null;
}

export interface FingerprintComponents {
  /** The card_format whose rule applies (1: legacyFingerprint; 2 and later: the named object). */
  cardFormat: number;
  datasetSha256: string;
  modelSlug: string;
  condition: string;
  systemPromptSha256: string;
  temperature: number;
  harnessVersion: string;
  /** Label-permutation seeds (format 3 on; ignored by the older rules). */
  seeds: readonly number[];
  /** Only the format 1 and 2 rules read it. */
  batchSize: number | null;
  toolsEnabled: readonly string[];
  /** Ignored by the format 1 rule. */
  scope: FingerprintScope;
}

/** The first card format whose fingerprint is the named object's. */
export const NAMED_FINGERPRINT_FORMAT = 2;
/** The first card format whose fingerprint names only what determines the answers (seeds in, batch size out). */
export const ANSWERS_FINGERPRINT_FORMAT = 3;

export function fingerprint(c: FingerprintComponents): string {
  if (c.cardFormat < NAMED_FINGERPRINT_FORMAT) return legacyFingerprint(c);
  const sorted = (xs: readonly string[]) => [...new Set(xs)].sort();
  if (c.cardFormat >= ANSWERS_FINGERPRINT_FORMAT) {
    return sha256Hex(
      canonicalJson({
        dataset_sha256: c.datasetSha256,
        model_slug: c.modelSlug,
        condition: c.condition,
        system_prompt_sha256: c.systemPromptSha256,
        temperature: c.temperature,
        // Averaged per question: their order does not change an answer, their set does.
        seeds: [...new Set(c.seeds)].sort((a, b) => a - b),
        harness_version: c.harnessVersion,
        tools_enabled: sorted(c.toolsEnabled),
        scope: { tracks: sorted(c.scope.tracks), families: sorted(c.scope.families), limit: c.scope.limit },
      }),
    );
  }
  return sha256Hex(
    canonicalJson({
      dataset_sha256: c.datasetSha256,
      model_slug: c.modelSlug,
      condition: c.condition,
      system_prompt_sha256: c.systemPromptSha256,
      temperature: c.temperature,
      harness_version: c.harnessVersion,
      batch_size: c.batchSize,
      tools_enabled: sorted(c.toolsEnabled),
      scope: { tracks: sorted(c.scope.tracks), families: sorted(c.scope.families), limit: c.scope.limit },
    }),
  );
}

/**
 * Card format 1 only: sha256 of the sorted parts joined with no separator. Ambiguous (model
 * `sim/pseudosystemone` with condition "" equals `sim/pseudo` with `systemone`) and blind to
 * scope; kept so the cards sealed with it still verify.
 */
export function legacyFingerprint(c: Omit<FingerprintComponents, "cardFormat" | "scope" | "seeds">): string {
  return sha256Hex(legacyFingerprintParts(c).sort().join(""));
}

export function legacyFingerprintParts(c: Omit<FingerprintComponents, "cardFormat" | "scope" | "seeds">): string[] {
  return [
    c.datasetSha256,
    c.modelSlug,
    c.condition,
    c.systemPromptSha256,
    String(c.temperature),
    c.harnessVersion,
    // Stryker disable next-line ConditionalExpression: String(null) is "null" too
    c.batchSize === null ? "null" : String(c.batchSize),
    JSON.stringify([...c.toolsEnabled].sort()),
  ];
}

/** The scope a card records: its tracks, (format 2 on) their families, and its limit (null when none). */
export function scopeOfCard(card: { dataset: { tracks?: readonly string[]; families?: readonly string[]; limit?: number | null } }): FingerprintScope {
  return { tracks: card.dataset.tracks ?? [], families: card.dataset.families ?? [], limit: card.dataset.limit ?? null };
}

/** The components as a card records them, under the rule of the card's own format. */
export function componentsOfCard(card: {
  card_format: number;
  harness_version: string;
  method: { model_slug: string; condition: string; system_prompt_sha256: string; temperature: number; seeds?: readonly number[]; batch_size: number | null; tools_enabled: readonly string[] };
  dataset: { sha256: string; tracks?: readonly string[]; families?: readonly string[]; limit?: number | null };
}): FingerprintComponents {
  return {
    cardFormat: card.card_format,
    datasetSha256: card.dataset.sha256,
    modelSlug: card.method.model_slug,
    condition: card.method.condition,
    systemPromptSha256: card.method.system_prompt_sha256,
    temperature: card.method.temperature,
    harnessVersion: card.harness_version,
    seeds: card.method.seeds ?? [],
    batchSize: card.method.batch_size,
    toolsEnabled: card.method.tools_enabled,
    scope: scopeOfCard(card),
  };
}

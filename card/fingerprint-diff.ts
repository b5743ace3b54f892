// Why two cards' fingerprints differ, by field: `card reproduce` names what changed (the model
// served, the harness version, the scope ...) instead of guessing.
import { ANSWERS_FINGERPRINT_FORMAT, componentsOfCard, NAMED_FINGERPRINT_FORMAT, type FingerprintComponents } from "./fingerprint.js";
import type { RunCard } from "./run-card.js";

type Field = { name: string; of: (c: FingerprintComponents) => unknown; from?: number; until?: number };

const sorted = (xs: readonly (string | number)[]) => [...new Set(xs)].sort();

/** The fingerprint's fields as the card records them, and the formats whose rule reads each. */
const FIELDS: readonly Field[] = [
  { name: "dataset.sha256", of: (c) => c.datasetSha256 },
  { name: "method.model_slug", of: (c) => c.modelSlug },
  { name: "method.condition", of: (c) => c.condition },
  { name: "method.system_prompt_sha256", of: (c) => c.systemPromptSha256 },
  { name: "method.temperature", of: (c) => c.temperature },
  { name: "method.seeds", of: (c) => [...new Set(c.seeds)].sort((a, b) => a - b), from: ANSWERS_FINGERPRINT_FORMAT },
  { name: "harness_version", of: (c) => c.harnessVersion },
  { name: "method.batch_size", of: (c) => c.batchSize, until: ANSWERS_FINGERPRINT_FORMAT },
  { name: "method.tools_enabled", of: (c) => sorted(c.toolsEnabled) },
  { name: "dataset.tracks", of: (c) => sorted(c.scope.tracks), from: NAMED_FINGERPRINT_FORMAT },
  { name: "dataset.families", of: (c) => sorted(c.scope.families), from: NAMED_FINGERPRINT_FORMAT },
];

/**
 * The fields of `original`'s fingerprint rule on which `rerun` differs, each as `field: a -> b`.
 * None: the same setup, even when the fingerprints differ because the cards are of two formats
 * (a card sealed under an older rule, rerun by this version).
 */
export function fingerprintDifferences(original: RunCard, rerun: RunCard): string[] {
  const ca = componentsOfCard(original);
  const cb = componentsOfCard(rerun);
  const format = original.card_format;
  const out: string[] = [];
  for (const f of FIELDS) {
    if ((f.from !== undefined && format < f.from) || (f.until !== undefined && format >= f.until)) continue;
    const va = JSON.stringify(f.of(ca));
    const vb = JSON.stringify(f.of(cb));
    if (va !== vb) out.push(`${f.name}: ${va} -> ${vb}`);
  }
  return out;
}

// The setup's fingerprint (RUN_CARD.md, seed 003 §3.8): sha256 of the sorted concatenation of the
// eight components. Each component is written as text first: numbers as JavaScript prints them
// (0, 0.7), a null batch size as "null", tools as the JSON array of their sorted names ("[]").
import { sha256Hex } from "../common/sha256.js";

export interface FingerprintComponents {
  datasetSha256: string;
  modelSlug: string;
  condition: string;
  systemPromptSha256: string;
  temperature: number;
  harnessVersion: string;
  batchSize: number | null;
  toolsEnabled: readonly string[];
}

export function fingerprintParts(c: FingerprintComponents): string[] {
  return [
    c.datasetSha256,
    c.modelSlug,
    c.condition,
    c.systemPromptSha256,
    String(c.temperature),
    c.harnessVersion,
    c.batchSize === null ? "null" : String(c.batchSize),
    JSON.stringify([...c.toolsEnabled].sort()),
  ];
}

export function fingerprint(c: FingerprintComponents): string {
  return sha256Hex(fingerprintParts(c).sort().join(""));
}

/** The components as a card records them. */
export function componentsOfCard(card: {
  harness_version: string;
  method: { model_slug: string; condition: string; system_prompt_sha256: string; temperature: number; batch_size: number | null; tools_enabled: readonly string[] };
  dataset: { sha256: string };
}): FingerprintComponents {
  return {
    datasetSha256: card.dataset.sha256,
    modelSlug: card.method.model_slug,
    condition: card.method.condition,
    systemPromptSha256: card.method.system_prompt_sha256,
    temperature: card.method.temperature,
    harnessVersion: card.harness_version,
    batchSize: card.method.batch_size,
    toolsEnabled: card.method.tools_enabled,
  };
}

// What `card reproduce` reruns comes from the card, so the card's method is checked as `run` checks
// its flags before any engine is asked: seeds are non-negative integers (a bounded count, each a
// full read of the suite), the batch size a bounded count of units, the temperature a finite
// sampling temperature. A card outside these bounds is bad input (exit 2), not a rerun.
import type { RunCard } from "./run-card.js";

export const MAX_REPRODUCE_SEEDS = 64;
export const MAX_REPRODUCE_BATCH = 4096;
export const MAX_REPRODUCE_TEMPERATURE = 2;

/** Why the card's setup cannot be rerun, naming the field; undefined when it can. */
export function reproduceSetupProblem(card: RunCard): string | undefined {
  const m = card.method;
  if (!Array.isArray(m.seeds) || m.seeds.length > MAX_REPRODUCE_SEEDS) return `method.seeds: at most ${MAX_REPRODUCE_SEEDS} seeds can be rerun, the card has ${Array.isArray(m.seeds) ? m.seeds.length : "none"}`;
  const bad = m.seeds.find((s) => !Number.isSafeInteger(s) || s < 0);
  if (bad !== undefined) return `method.seeds: must be non-negative integers, got ${JSON.stringify(bad)}`;
  if (new Set(m.seeds).size !== m.seeds.length) return `method.seeds: a seed is repeated`;
  if (m.batch_size !== null && (!Number.isInteger(m.batch_size) || m.batch_size < 1 || m.batch_size > MAX_REPRODUCE_BATCH)) {
    return `method.batch_size: must be an integer in 1..${MAX_REPRODUCE_BATCH}, got ${m.batch_size}`;
  }
  if (!Number.isFinite(m.temperature) || m.temperature < 0 || m.temperature > MAX_REPRODUCE_TEMPERATURE) return `method.temperature: must be in [0,${MAX_REPRODUCE_TEMPERATURE}], got ${m.temperature}`;
  return undefined;
}

// The results line (SUITE_FORMAT.md "Results"), compatible with the reference runner udm.infer.
import { z } from "zod";

/** Bump when a field's meaning changes. */
export const RESULT_FORMAT = 1;

export const ResultLineSchema = z.looseObject({
  run_id: z.string(),
  id: z.string().optional(),
  track: z.string().optional(),
  family: z.string().optional(),
  // Validity is decided per question by the scorer: one bad distribution makes that question
  // missing, not the whole line unreadable.
  probs: z.record(z.string(), z.unknown()).default({}),
  skipped: z.array(z.string()).default([]),
  errors: z.record(z.string(), z.string()).optional(),
});
export type ResultLine = z.infer<typeof ResultLineSchema>;

export type Distribution = Record<string, number>;

/** Tolerance of SUITE_FORMAT.md on the sum of a distribution. */
export const SUM_TOLERANCE = 1e-6;

/**
 * Why a distribution is invalid for the given option keys, or undefined when valid.
 * Choice: exactly the criteria keys; noul: exactly "true" and "false". Finite, in [0,1], sum 1±1e-6.
 */
export function distributionProblem(value: unknown, keys: readonly string[]): string | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return "not an object";
  const dist = value as Record<string, unknown>;
  const got = Object.keys(dist);
  if (got.length !== keys.length) return `has ${got.length} options, expected ${keys.length}`;
  let sum = 0;
  for (const k of keys) {
    const p = dist[k];
    if (typeof p !== "number") return `option ${JSON.stringify(k)} missing or not a number`;
    if (!Number.isFinite(p) || p < 0 || p > 1 + SUM_TOLERANCE) return `option ${JSON.stringify(k)} = ${p} is not a probability`;
    sum += p;
  }
  if (Math.abs(sum - 1) > SUM_TOLERANCE) return `sums to ${sum}, not 1`;
  return undefined;
}

export const NOUL_KEYS = ["true", "false"] as const;

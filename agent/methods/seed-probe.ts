// Whether an engine honours `seed` on POST /v1/systemone. Some vLLM versions' StructuredDecisionRequest
// has it ("Picks each question's label draw", vllm/entrypoints/generate/structured_decisions/
// protocol.py), current ones have cache_salt and no seed; vLLM's OpenAIBaseModel lets an unknown
// field pass (it only logs that it ignored it), so such a server answers a seeded request as if no
// seed were sent and `--seeds 0,1,2` would average three identical reads.
//
// Two reads of the same prompt are not identical either: the first prefills the prefix, later ones
// read it from the prefix cache, and cached and uncached reads differ at temperature 0 by up to
// about 2.6e-2 (vLLM issue 40896, PR 52701; bit-exact only with VLLM_BATCH_INVARIANT=1). So the
// probe does not compare two seeds' reads against a float tolerance. It reads one question whose
// options are all alike (only the labels tell them apart, so a seed that moves the labels moves the
// answer by the model's label-position preference) under seed 1, under seed 1 again, then under
// seeds 2 and 3: the same-seed repeat measures the engine's own noise, the other seeds are compared
// with the repeat (both warm reads), and the seed counts as honoured only when they differ by more
// than SEED_EFFECT_MIN and more than twice that noise.
import { isRouteNotServed, SystemOneResponseSchema, type SystemOneRequest } from "../../common/engine-protocol/index.js";
import { emptyAnswer } from "../engine-method.js";
import { EngineHttpError } from "../engine-http.js";
import { callEngine, type RetryPolicy } from "./engine-call.js";

/** The repeated seed, then the others. */
const SAME_SEED = 1;
const OTHER_SEEDS = [2, 3] as const;
const PROBE_OPTIONS = 8;
/**
 * Least change of one option's probability that counts as the seed's doing: about twice the
 * largest cached-vs-uncached drift reported (2.6e-2), well under what moving an option from one
 * label to another does to a model that prefers early labels.
 */
export const SEED_EFFECT_MIN = 0.05;

/** The probe request under one seed. */
export function seedProbeRequest(seed: number, model: string | undefined): SystemOneRequest {
  const criteria = Object.fromEntries(Array.from({ length: PROBE_OPTIONS }, (_, i) => [`option-${i + 1}`, "the same as every other option"]));
  return {
    ...(model ? { model } : {}),
    seed,
    state: "A probe of the server: every option below is the same.",
    questions: { probe: { type: "choice", instructions: "Pick any one option.", criteria } },
  };
}

/** What the probe saw: the largest probability change under the same seed, and under other seeds. */
export interface SeedProbeResult {
  honoured: boolean;
  /** Same seed, read twice: the engine's own noise (prefix cache, batch shape). */
  sameSeedChange: number;
  /** Largest change between the repeat and another seed's read. */
  otherSeedChange: number;
}

/** Largest change of one label's probability between two reads. */
export function largestChange(a: Readonly<Record<string, number>>, b: Readonly<Record<string, number>>): number {
  let most = 0;
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) most = Math.max(most, Math.abs((a[k] ?? 0) - (b[k] ?? 0)));
  return most;
}

/** The verdict on the reads: other seeds must move the answer clearly more than a repeat does. */
export function seedVerdict(sameSeedChange: number, otherSeedChange: number): boolean {
  return otherSeedChange > Math.max(SEED_EFFECT_MIN, 2 * sameSeedChange);
}

/**
 * The probe's result; undefined: the engine has no /v1/systemone (501, or 404/405: no such route).
 * A 400/422 that refuses the field is "not honoured". Other failures throw.
 */
export async function probeSystemOneSeed(baseUrl: string, model: string | undefined, policy: RetryPolicy, signal?: AbortSignal): Promise<SeedProbeResult | undefined> {
  const counters = emptyAnswer();
  const reads: Array<Record<string, number>> = [];
  try {
    for (const seed of [SAME_SEED, SAME_SEED, ...OTHER_SEEDS]) {
      const res = await callEngine(`${baseUrl}/v1/systemone`, seedProbeRequest(seed, model), SystemOneResponseSchema, policy, counters, signal ?? new AbortController().signal);
      reads.push(res.answers.probe?.probabilities ?? {});
    }
  } catch (err) {
    if (err instanceof EngineHttpError && (err.status === 501 || isRouteNotServed(err.status, err.info))) return undefined;
    if (err instanceof EngineHttpError && (err.status === 400 || err.status === 422) && /\bseed\b/.test(err.info?.message ?? "")) return { honoured: false, sameSeedChange: 0, otherSeedChange: 0 };
    throw err;
  }
  const [first, repeat, ...others] = reads as [Record<string, number>, Record<string, number>, ...Array<Record<string, number>>];
  const sameSeedChange = largestChange(first, repeat);
  const otherSeedChange = Math.max(...others.map((o) => largestChange(repeat, o)));
  return { honoured: seedVerdict(sameSeedChange, otherSeedChange), sameSeedChange, otherSeedChange };
}

/** true/false: honoured or not; undefined: no /v1/systemone. */
export async function systemOneHonoursSeed(baseUrl: string, model: string | undefined, policy: RetryPolicy, signal?: AbortSignal): Promise<boolean | undefined> {
  return (await probeSystemOneSeed(baseUrl, model, policy, signal))?.honoured;
}

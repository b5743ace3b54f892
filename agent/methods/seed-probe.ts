// Whether an engine honours `seed` on POST /v1/systemone. Some vLLM versions' StructuredDecisionRequest
// has it ("Picks each question's label draw", vllm/entrypoints/generate/structured_decisions/
// protocol.py), others have cache_salt and no seed; vLLM's OpenAIBaseModel lets an unknown field
// pass (it only logs that it ignored it), so such a server answers a seeded request as if no seed
// were sent and `--seeds 0,1,2` would average three identical reads. The probe reads one question
// whose options are all alike, so only the labels tell them apart, under two seeds: identical
// answers mean the seed is ignored.
import { isRouteNotServed, SystemOneResponseSchema, type SystemOneRequest } from "../../common/engine-protocol/index.js";
import { emptyAnswer } from "../engine-method.js";
import { EngineHttpError } from "../engine-http.js";
import { callEngine, type RetryPolicy } from "./engine-call.js";
import { ENGINE_TOLERANCE } from "./engine-distribution.js";

const PROBE_SEEDS = [1, 2] as const;
const PROBE_OPTIONS = 8;

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

/**
 * true: the two seeds gave different answers; false: identical answers, or a 400 that refuses the
 * field; undefined: the engine has no /v1/systemone (501, or 404/405: no such route). Other failures throw.
 */
export async function systemOneHonoursSeed(baseUrl: string, model: string | undefined, policy: RetryPolicy, signal?: AbortSignal): Promise<boolean | undefined> {
  const counters = emptyAnswer();
  const reads: Array<Record<string, number>> = [];
  try {
    for (const seed of PROBE_SEEDS) {
      const res = await callEngine(`${baseUrl}/v1/systemone`, seedProbeRequest(seed, model), SystemOneResponseSchema, policy, counters, signal ?? new AbortController().signal);
      reads.push(res.answers.probe?.probabilities ?? {});
    }
  } catch (err) {
    if (err instanceof EngineHttpError && (err.status === 501 || isRouteNotServed(err.status, err.info))) return undefined;
    if (err instanceof EngineHttpError && (err.status === 400 || err.status === 422) && /\bseed\b/.test(err.info?.message ?? "")) return false;
    throw err;
  }
  const [a, b] = reads as [Record<string, number>, Record<string, number>];
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].some((k) => Math.abs((a[k] ?? 0) - (b[k] ?? 0)) > ENGINE_TOLERANCE);
}

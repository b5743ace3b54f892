// Cached vs uncached reads differ at temperature 0 on vLLM: a read whose prompt prefix comes from
// the prefix cache runs other kernels (other split sizes, other reduction orders) than the read
// that prefilled it, and its probabilities move by up to about 2.6e-2 (vllm-project/vllm issue
// 40896; PR 52701 docs/usage: bit-exact only with VLLM_BATCH_INVARIANT=1, the drift does not grow
// with reuse). The sim's "current" profile has it: a read that hit the cache is mixed with a
// deterministic distribution of the same options, so every probability moves by at most
// CACHE_DRIFT and the distribution still sums to 1; a completion or chat read that hit the cache
// reports each token's probability scaled by a factor within 1 +- CACHE_DRIFT (the sampled token
// stays the one the cold read picks).
import { hashUnit } from "./deterministic.js";

/** The largest change of one probability between a cold and a warm read (PR 52701: "up to 2.6e-02"). */
export const CACHE_DRIFT = 0.026;

/**
 * `probs` as a read with `cachedTokens` of its prompt from the cache would give them: unchanged on
 * a cold read (0 cached tokens), else moved by at most CACHE_DRIFT per option. The same prompt and
 * cached length always move the same way (the kernels are deterministic for one batch shape).
 */
export function withCacheDrift(probs: readonly number[], cachedTokens: number, ...prompt: ReadonlyArray<string | number>): number[] {
  if (cachedTokens <= 0 || probs.length < 2) return [...probs];
  const weights = probs.map((_, i) => 0.05 + hashUnit("cache-drift", cachedTokens, i, ...prompt));
  const total = weights.reduce((a, b) => a + b, 0);
  // |(1-a)p + a q - p| = a |q - p| <= a, for p and q in [0, 1].
  return probs.map((p, i) => (1 - CACHE_DRIFT) * p + CACHE_DRIFT * (weights[i]! / total));
}

/**
 * The factor a token's probability is reported with by a read with `cachedTokens` of its prompt
 * from the cache: 1 on a cold read, else within 1 +- CACHE_DRIFT, so the probability moves by at
 * most CACHE_DRIFT. The same prompt, cached length, step and token always get the same factor.
 */
export function cacheDriftFactor(cachedTokens: number, ...token: ReadonlyArray<string | number>): number {
  if (cachedTokens <= 0) return 1;
  return 1 + CACHE_DRIFT * (2 * hashUnit("cache-drift-token", cachedTokens, ...token) - 1);
}

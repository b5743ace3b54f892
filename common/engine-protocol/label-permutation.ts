// Which label each option gets when a question is read under a label-permutation seed. Reading a
// question under several seeds and averaging cancels a model's preference for particular labels
// (the `seed` field of vLLM's structured decisions, vllm/entrypoints/openai/decisions/protocol.py:
// "Changes which label each option gets"). Seed 0 keeps the natural order; other seeds shuffle
// with a seeded PRNG (mulberry32), the same on every platform.

/** perm[i] = the label position of option i. */
export function labelPermutation(seed: number, n: number): number[] {
  const perm = Array.from({ length: n }, (_, i) => i);
  if (seed === 0 || n < 2) return perm;
  let a = (Math.trunc(seed) ^ 0x2545f491) >>> 0;
  const random = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [perm[i], perm[j]] = [perm[j]!, perm[i]!];
  }
  return perm;
}

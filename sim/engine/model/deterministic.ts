// Seeded, platform-independent randomness for the sim: hashes of content for the pseudo-model and
// the oracle, and a small PRNG for faults and jitter, so a run with a fixed seed repeats exactly.
import { createHash } from "node:crypto";

/** A number in [0, 1) determined by the parts (sha256 of the parts joined by NUL). */
export function hashUnit(...parts: ReadonlyArray<string | number>): number {
  const digest = createHash("sha256").update(parts.map(String).join("\u0000")).digest();
  // 48 bits are exact in a double.
  return digest.readUIntBE(0, 6) / 2 ** 48;
}

/** mulberry32: a 32-bit PRNG, enough for fault draws and jitter. */
export function seededRandom(seed: number): () => number {
  let a = (Math.trunc(seed) ^ 0x9e3779b9) >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

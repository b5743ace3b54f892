// Seeded pseudo-random numbers for synthetic suites: mulberry32 on a 32-bit state, so the same
// seed gives the same suite on every machine and Node version.

/** FNV-1a over a string: derives independent 32-bit seeds from (seed, track, purpose). */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A generator seeded from a list of parts, e.g. `Rng.from(seed, track, "plan")`. */
  static from(...parts: ReadonlyArray<string | number>): Rng {
    return new Rng(hash32(parts.join("\u0000")));
  }

  /** Uniform in [0, 1). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [min, max], both included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error("pick from an empty list");
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** Index drawn with probability proportional to `weights`. */
  weighted(weights: readonly number[]): number {
    const total = weights.reduce((a, b) => a + b, 0);
    let r = this.next() * total;
    for (let i = 0; i < weights.length; i++) {
      r -= weights[i] ?? 0;
      if (r < 0) return i;
    }
    return weights.length - 1;
  }

  /** `n` distinct items in random order (n <= items.length). */
  sample<T>(items: readonly T[], n: number): T[] {
    const copy = items.slice();
    for (let i = 0; i < n && i < copy.length; i++) {
      const j = i + Math.floor(this.next() * (copy.length - i));
      const tmp = copy[i] as T;
      copy[i] = copy[j] as T;
      copy[j] = tmp;
    }
    return copy.slice(0, n);
  }

  /** 8 lowercase hex digits. */
  hex8(): string {
    return Math.floor(this.next() * 4294967296).toString(16).padStart(8, "0");
  }
}

// Deterministic synthetic text in Vietnamese or English, built from word lists.
import type { Rng } from "./prng.js";
import { EN_COMMON, EN_DOMAIN, VI_COMMON, VI_DOMAIN } from "./words.js";

export type TextLang = "vi" | "en";

const DOMAIN_SHARE = 0.25;

export class TextGenerator {
  private readonly common: readonly string[];
  private readonly domain: readonly string[];

  constructor(
    private readonly rng: Rng,
    readonly lang: TextLang,
    domain?: string,
  ) {
    this.common = lang === "vi" ? VI_COMMON : EN_COMMON;
    const lists: Readonly<Record<string, readonly string[]>> = lang === "vi" ? VI_DOMAIN : EN_DOMAIN;
    this.domain = (domain && lists[domain]) || [];
  }

  word(): string {
    const useDomain = this.domain.length > 0 && this.rng.next() < DOMAIN_SHARE;
    return this.rng.pick(useDomain ? this.domain : this.common);
  }

  /** One sentence of `min`..`max` words, capitalised, ending with `end`. */
  sentence(min: number, max: number, end = "."): string {
    const n = this.rng.int(min, max);
    const parts: string[] = new Array<string>(n);
    for (let i = 0; i < n; i++) {
      let w = this.word();
      if (i > 2 && i < n - 2 && this.rng.next() < 0.08) w += ",";
      parts[i] = w;
    }
    const first = parts[0] ?? "";
    parts[0] = first.charAt(0).toUpperCase() + first.slice(1);
    return parts.join(" ") + end;
  }

  question(min: number, max: number): string {
    return this.sentence(min, max, "?");
  }

  /** Sentences until the text holds `min`..`max` words; `inject` words are spread through it. */
  passage(min: number, max: number, inject: readonly string[] = []): string {
    const target = this.rng.int(min, max);
    const sentences: string[] = [];
    let words = 0;
    while (words < target) {
      const n = Math.min(target - words, this.rng.int(8, 22));
      if (n > 1 && inject.length > 0 && this.rng.next() < 0.5) {
        sentences.push(this.sentence(n - 1, n - 1, "") + " " + this.rng.pick(inject) + ".");
      } else {
        sentences.push(this.sentence(n, n));
      }
      words += n;
    }
    return sentences.join(" ");
  }

  /** A short label-like phrase (option text). */
  phrase(min: number, max: number): string {
    const n = this.rng.int(min, max);
    const parts: string[] = [];
    for (let i = 0; i < n; i++) parts.push(this.word());
    return parts.join(" ");
  }
}

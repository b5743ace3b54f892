// Automatic prefix caching as vLLM does it: KV blocks of a prompt prefix are kept and reused by
// later prompts with the same prefix; only whole blocks count (vLLM hashes full blocks), and the
// least recently used entries go when the cache is full.

export class PrefixCache {
  private readonly entries = new Map<string, number>();
  private used = 0;

  constructor(
    /** KV cache size in tokens. */
    readonly capacityTokens: number,
    readonly blockSize = 16,
  ) {}

  /** Tokens of a prefix that a cache hit serves: whole blocks only. */
  cacheableTokens(prefixTokens: number): number {
    return Math.floor(prefixTokens / this.blockSize) * this.blockSize;
  }

  /** Cached tokens for this prefix (0 on a miss); a hit refreshes the entry. */
  lookup(key: string): number {
    const tokens = this.entries.get(key);
    if (tokens === undefined) return 0;
    this.entries.delete(key);
    this.entries.set(key, tokens);
    return tokens;
  }

  insert(key: string, prefixTokens: number): void {
    const tokens = this.cacheableTokens(prefixTokens);
    if (tokens === 0 || tokens > this.capacityTokens || this.entries.has(key)) return;
    while (this.used + tokens > this.capacityTokens) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.used -= this.entries.get(oldest.value) ?? 0;
      this.entries.delete(oldest.value);
    }
    this.entries.set(key, tokens);
    this.used += tokens;
  }

  /**
   * Token-level caching for prompts given as token ids (/v1/completions, chat): `blockKeys` are
   * chained hashes of the prompt's full blocks, so a key stands for the whole prefix up to its
   * block, as vLLM's block hashes do. Returns the tokens of the leading blocks already cached and
   * caches the rest.
   */
  lookupAndInsertBlocks(blockKeys: readonly string[], read = true): number {
    let hits = 0;
    if (read) {
      for (const key of blockKeys) {
        if (this.lookup(key) === 0) break;
        hits++;
      }
    }
    for (const key of blockKeys) this.insert(key, this.blockSize);
    return hits * this.blockSize;
  }

  /** Fraction of the KV cache in use, 0..1 (vllm:kv_cache_usage_perc). */
  usage(): number {
    return this.capacityTokens > 0 ? this.used / this.capacityTokens : 0;
  }
}

// A deterministic stand-in for a tokenizer: words cost one token per 4 characters (rounded up),
// every other non-space character one token. Close enough to BPE counts on English and Vietnamese
// text for capacity and context-length behaviour, and stable across platforms.

const PIECE = /[\p{L}\p{M}\p{N}]+|[^\s\p{L}\p{M}\p{N}]/gu;

export function countTokens(text: string): number {
  let n = 0;
  for (const m of text.matchAll(PIECE)) {
    const piece = m[0];
    n += /^[\p{L}\p{M}\p{N}]/u.test(piece) ? Math.ceil([...piece].length / 4) : 1;
  }
  return n;
}

// A deterministic stand-in for a tokenizer: words (runs of letters, marks and digits) cost one
// token per 4 code points (rounded up), every other non-space character one token. Close enough
// to BPE counts on English and Vietnamese text for capacity and context-length behaviour, and
// stable across platforms. A single pass over the code points: the sim counts every prompt, so
// this is its hottest function (bench/run-bench.ts profile).

const enum Kind {
  Space,
  Word,
  Other,
}

const WORD = /[\p{L}\p{M}\p{N}]/u;
const SPACE = /\s/u;
const nonAscii = new Map<number, Kind>();

function kindOf(cp: number): Kind {
  if (cp < 128) {
    if ((cp >= 97 && cp <= 122) || (cp >= 65 && cp <= 90) || (cp >= 48 && cp <= 57)) return Kind.Word;
    if (cp === 32 || (cp >= 9 && cp <= 13)) return Kind.Space;
    return Kind.Other;
  }
  let k = nonAscii.get(cp);
  if (k === undefined) {
    const ch = String.fromCodePoint(cp);
    k = WORD.test(ch) ? Kind.Word : SPACE.test(ch) ? Kind.Space : Kind.Other;
    nonAscii.set(cp, k);
  }
  return k;
}

export function countTokens(text: string): number {
  let tokens = 0;
  let word = 0; // code points in the current word
  for (let i = 0; i < text.length; i++) {
    let cp = text.charCodeAt(i);
    if (cp >= 0xd800 && cp <= 0xdbff && i + 1 < text.length) {
      const lo = text.charCodeAt(i + 1);
      if (lo >= 0xdc00 && lo <= 0xdfff) {
        cp = (cp - 0xd800) * 0x400 + (lo - 0xdc00) + 0x10000;
        i++;
      }
    }
    const k = kindOf(cp);
    if (k === Kind.Word) {
      word++;
      continue;
    }
    if (word > 0) {
      tokens += Math.ceil(word / 4);
      word = 0;
    }
    if (k === Kind.Other) tokens++;
  }
  if (word > 0) tokens += Math.ceil(word / 4);
  return tokens;
}

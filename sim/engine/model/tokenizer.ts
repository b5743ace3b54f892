// The sim's tokenizer: deterministic, with token ids, so /tokenize, prompts given as ids and
// logprob_token_ids behave as with a real vocabulary. Spaces are not tokens; "\n" is. Letter and
// digit runs split into pieces of at most 4 characters, except runs of capital letters: single
// capitals A..Z are tokens, and so are the pairs whose second letter is A..P ("AB" is one token,
// "AQ" is "A" + "Q"), so that some choice labels beyond Z take two tokens and a label reader has
// to walk a trie. Pieces outside the fixed vocabulary get a hashed id.
import { createHash } from "node:crypto";

export const VOCAB_SIZE = 151_936;
export const ENDOFTEXT = "<|endoftext|>";
export const IM_START = "<|im_start|>";
export const IM_END = "<|im_end|>";
const SPECIALS = [ENDOFTEXT, IM_START, IM_END];

const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ".split("");
/** Second letters that make a capital pair one token. */
const PAIR_SECONDS = new Set("ABCDEFGHIJKLMNOP".split(""));
const WORDS = ["yes", "no", "Yes", "No", "YES", "NO", "true", "false", "Answer", "Question", "Options"];

/** First id of the hashed range; everything below is the fixed vocabulary. */
const HASHED_BASE = 4096;

function buildFixedVocab(): string[] {
  const v: string[] = [...SPECIALS, "\n"];
  for (let c = 33; c < 127; c++) v.push(String.fromCharCode(c)); // printable ASCII: letters, digits, punctuation
  for (const a of UPPER) for (const b of PAIR_SECONDS) v.push(a + b);
  for (const w of WORDS) v.push(w);
  return v;
}

const FIXED = buildFixedVocab();
const FIXED_IDS = new Map(FIXED.map((s, i) => [s, i]));

const PIECE = /\n|[\p{L}\p{M}\p{N}]+|[^\s\p{L}\p{M}\p{N}]/gu;
const SPECIAL_SPLIT = /(<\|endoftext\|>|<\|im_start\|>|<\|im_end\|>)/;

export class SimTokenizer {
  /** Text of the hashed ids seen so far, for decoding. */
  private readonly hashed = new Map<number, string>();

  get vocabSize(): number {
    return VOCAB_SIZE;
  }

  idOf(piece: string): number | undefined {
    return FIXED_IDS.get(piece);
  }

  /** Token ids of `text`; special-token strings in the text become their ids. */
  encode(text: string): number[] {
    const ids: number[] = [];
    for (const part of text.split(SPECIAL_SPLIT)) {
      if (!part) continue;
      const special = FIXED_IDS.get(part);
      if (special !== undefined && special < SPECIALS.length) {
        ids.push(special);
        continue;
      }
      for (const m of part.matchAll(PIECE)) this.encodePiece(m[0], ids);
    }
    return ids;
  }

  private encodePiece(piece: string, out: number[]): void {
    const whole = FIXED_IDS.get(piece);
    if (whole !== undefined) {
      out.push(whole);
      return;
    }
    if (/^[A-Z]+$/.test(piece)) {
      for (let i = 0; i < piece.length; ) {
        const pair = piece.slice(i, i + 2);
        if (pair.length === 2 && PAIR_SECONDS.has(pair[1]!)) {
          out.push(FIXED_IDS.get(pair)!);
          i += 2;
        } else {
          out.push(FIXED_IDS.get(piece[i]!)!);
          i += 1;
        }
      }
      return;
    }
    const chars = [...piece];
    for (let i = 0; i < chars.length; i += 4) {
      const chunk = chars.slice(i, i + 4).join("");
      const fixed = FIXED_IDS.get(chunk);
      if (fixed !== undefined) {
        out.push(fixed);
        continue;
      }
      const id = HASHED_BASE + (createHash("sha1").update(chunk).digest().readUInt32BE(0) % (VOCAB_SIZE - HASHED_BASE));
      if (!this.hashed.has(id) && this.hashed.size < 1_000_000) this.hashed.set(id, chunk);
      out.push(id);
    }
  }

  /** The text of one token ("<|tok_N|>" for a hashed id never encoded here). */
  decodeToken(id: number): string {
    return FIXED[id] ?? this.hashed.get(id) ?? `<|tok_${id}|>`;
  }

  /** Ids below this are the fixed vocabulary (labels, letters, digits, punctuation, specials). */
  static get fixedVocabSize(): number {
    return FIXED.length;
  }
}

export interface ChatMessage {
  role: string;
  content: string;
}

/**
 * A ChatML template (the Qwen family's), as vLLM applies it for /v1/chat/completions and
 * /tokenize with messages: add_generation_prompt opens the assistant turn; continue_final_message
 * leaves the last (assistant) message open so the reply continues it.
 */
export function applyChatTemplate(messages: readonly ChatMessage[], opts: { addGenerationPrompt: boolean; continueFinalMessage: boolean }): string {
  let text = "";
  messages.forEach((m, i) => {
    const last = i === messages.length - 1;
    text += `${IM_START}${m.role}\n${m.content}`;
    if (!(last && opts.continueFinalMessage)) text += `${IM_END}\n`;
  });
  if (opts.addGenerationPrompt && !opts.continueFinalMessage) text += `${IM_START}assistant\n`;
  return text;
}

// The sim's tokenizer: deterministic, with token ids, so /tokenize, prompts given as ids and
// logprob_token_ids behave as with a real vocabulary. Spaces are not tokens; "\n" is. Letter and
// digit runs split into pieces of at most 4 characters, except runs of capital letters: single
// capitals A..Z are tokens, and so are the pairs whose second letter is A..P ("AB" is one token,
// "AQ" is "A" + "Q"), so that some choice labels beyond Z take two tokens and a label reader has
// to walk a trie. Pieces outside the fixed vocabulary get a hashed id.
// With `bos` it is a BOS-adding tokenizer like Llama's or Gemma's: text encoded with special tokens
// (vLLM's add_special_tokens, default true for /v1/completions and /tokenize with a prompt) starts
// with <|begin_of_text|>, and the chat template writes it first (chat requests and /tokenize with
// messages default to add_special_tokens false: the template adds it). vllm/renderers/params.py
// TokenizeParams.get_encode_kwargs passes add_special_tokens to the tokenizer;
// vllm/entrypoints/openai/completion/protocol.py and serve/tokenize/protocol.py set the defaults.
import { createHash } from "node:crypto";
import { FinalMessageMissing, type ChatMessage, type ChatRenderOptions, type EngineTokenizer } from "./engine-tokenizer.js";
import { countTokens } from "./token-count.js";

export const VOCAB_SIZE = 151_936;
export const ENDOFTEXT = "<|endoftext|>";
export const IM_START = "<|im_start|>";
export const IM_END = "<|im_end|>";
export const BOS = "<|begin_of_text|>";
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

/** The tokens the model scores; BOS comes after them, so adding it moved no id and no logit. */
const MODEL_FIXED = buildFixedVocab();
const FIXED = [...MODEL_FIXED, BOS];
const FIXED_IDS = new Map(FIXED.map((s, i) => [s, i]));
const SPECIAL_IDS = new Set([...SPECIALS, BOS].map((s) => FIXED_IDS.get(s)!));

const PIECE = /\n|[\p{L}\p{M}\p{N}]+|[^\s\p{L}\p{M}\p{N}]/gu;
const SPECIAL_SPLIT = /(<\|endoftext\|>|<\|im_start\|>|<\|im_end\|>|<\|begin_of_text\|>)/;

export class SimTokenizer implements EngineTokenizer {
  readonly name = "builtin" as const;
  readonly eosIds: ReadonlySet<number> = new Set([FIXED_IDS.get(ENDOFTEXT)!, FIXED_IDS.get(IM_END)!]);
  /** Text of the hashed ids seen so far, for decoding. */
  private readonly hashed = new Map<number, string>();
  private readonly idsOfChunks = new Map<string, number>();

  constructor(
    /** A BOS-adding tokenizer (Llama, Gemma). */
    readonly bos = false,
    /** Its chat template is a thinking one, like Qwen3's (applyChatTemplate). */
    readonly thinking = false,
  ) {}

  /** The BOS id this tokenizer adds, or null. */
  get bosId(): number | null {
    return this.bos ? FIXED_IDS.get(BOS)! : null;
  }

  get vocabSize(): number {
    return VOCAB_SIZE;
  }

  idOf(piece: string): number | undefined {
    return FIXED_IDS.get(piece);
  }

  /**
   * Token ids of `text`; special-token strings in the text become their ids. With
   * `addSpecialTokens`, a BOS-adding tokenizer puts BOS first.
   */
  encode(text: string, addSpecialTokens = false): number[] {
    return this.encodeWithPieces(text, addSpecialTokens).ids;
  }

  /**
   * The ids of `text` and their vocabulary pieces as a byte-level BPE tokenizer's
   * convert_ids_to_tokens gives them (what vLLM's /tokenize returns as token_strs): the token's
   * bytes with the whitespace before it, each byte as GPT-2's printable stand-in (" " is "Ġ",
   * "\n" is "Ċ"), so that joining pieces is not the text and only /detokenize turns ids back.
   */
  encodeWithPieces(text: string, addSpecialTokens = false): { ids: number[]; pieces: string[] } {
    const ids: number[] = addSpecialTokens && this.bos ? [FIXED_IDS.get(BOS)!] : [];
    const pieces: string[] = ids.map((id) => FIXED[id]!);
    for (const part of text.split(SPECIAL_SPLIT)) {
      if (!part) continue;
      const special = FIXED_IDS.get(part);
      if (special !== undefined && SPECIAL_IDS.has(special) && (this.bos || part !== BOS)) {
        ids.push(special);
        pieces.push(part);
        continue;
      }
      let end = 0;
      for (const m of part.matchAll(PIECE)) {
        const space = part.slice(end, m.index);
        end = m.index + m[0].length;
        const from = ids.length;
        this.encodePiece(m[0], ids);
        for (let i = from; i < ids.length; i++) pieces.push(byteLevel((i === from ? space : "") + this.decodeToken(ids[i]!)));
      }
    }
    return { ids, pieces };
  }

  /** Prompt counts of structured reads: the cheap estimate of token-count.ts, the sim's hottest path. */
  count(text: string): number {
    return countTokens(text);
  }

  renderChat(messages: readonly ChatMessage[], options: ChatRenderOptions): string {
    const enableThinking = typeof options.kwargs.enable_thinking === "boolean" ? options.kwargs.enable_thinking : undefined;
    return applyChatTemplate(messages, { addGenerationPrompt: options.addGenerationPrompt, continueFinalMessage: options.continueFinalMessage, bos: this.bos, thinking: this.thinking, enableThinking });
  }

  /** The text of `ids` (vLLM's /detokenize): the tokens' texts joined; the sim has no space tokens, so spaces between words are not restored. */
  decode(ids: readonly number[]): string {
    return ids.map((id) => this.decodeToken(id)).join("");
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
      out.push(this.hashedId(chunk));
    }
  }

  /**
   * The id of a chunk outside the fixed vocabulary: a hash of its text. Remembered per chunk, as a
   * real tokenizer's vocabulary lookup is cheap: tokenizing a state of tens of MB otherwise spends
   * tens of seconds hashing, blocking the process's event loop (run --sim shares it with agents).
   */
  private hashedId(chunk: string): number {
    let id = this.idsOfChunks.get(chunk);
    if (id !== undefined) return id;
    id = HASHED_BASE + (createHash("sha1").update(chunk).digest().readUInt32BE(0) % (VOCAB_SIZE - HASHED_BASE));
    if (!this.hashed.has(id) && this.hashed.size < 1_000_000) this.hashed.set(id, chunk);
    if (this.idsOfChunks.size < 1_000_000) this.idsOfChunks.set(chunk, id);
    return id;
  }

  /** The text of one token ("<|tok_N|>" for a hashed id never encoded here). */
  decodeToken(id: number): string {
    return FIXED[id] ?? this.hashed.get(id) ?? `<|tok_${id}|>`;
  }

  /** Ids below this are the tokens the model scores (labels, letters, digits, punctuation, specials but BOS). */
  static get fixedVocabSize(): number {
    return MODEL_FIXED.length;
  }
}

/** GPT-2's byte-level stand-ins: printable bytes are themselves, the others 256 upwards in byte order. */
const BYTE_CHARS: string[] = (() => {
  const out: string[] = [];
  let next = 256;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
    out.push(String.fromCodePoint(printable ? b : next++));
  }
  return out;
})();

function byteLevel(text: string): string {
  let out = "";
  for (const b of Buffer.from(text, "utf8")) out += BYTE_CHARS[b];
  return out;
}

export type { ChatMessage } from "./engine-tokenizer.js";
export { FinalMessageMissing } from "./engine-tokenizer.js";

/** What a thinking template (Qwen3's) writes for an empty reasoning block. */
export const EMPTY_THINK = "<think>\n\n</think>\n\n";

export interface ChatTemplateOptions {
  addGenerationPrompt: boolean;
  continueFinalMessage: boolean;
  bos?: boolean;
  /** A thinking template like Qwen3's (see applyChatTemplate). */
  thinking?: boolean;
  /** chat_template_kwargs.enable_thinking; absent is on, as in Qwen3's template. */
  enableThinking?: boolean;
}


/**
 * A ChatML template (the Qwen family's), as vLLM applies it for /v1/chat/completions and
 * /tokenize with messages: add_generation_prompt opens the assistant turn; continue_final_message
 * leaves the last (assistant) message open so the reply continues it. `bos`: the template starts
 * with the BOS token, as Llama's and Gemma's do ("{{ bos_token }}").
 *
 * `thinking`, like Qwen3's template: an assistant message after the last user message is written
 * as a reasoning block then its content (the reasoning taken from before "</think>" in the content,
 * the content after it, leading newlines dropped); the generation prompt adds the empty block only
 * when enable_thinking is false (otherwise the model writes its own). So without
 * enable_thinking: false, a label as the assistant's reply is the block's tokens then the label.
 *
 * continue_final_message as transformers does it (apply_chat_template): the rendered chat is cut
 * just after the last occurrence of the final message's trimmed content (so trailing whitespace of
 * the message is dropped), and a chat without it is refused (FinalMessageMissing, a 400 in vLLM).
 */
export function applyChatTemplate(messages: readonly ChatMessage[], opts: ChatTemplateOptions): string {
  let text = opts.bos ? BOS : "";
  let lastUser = -1;
  messages.forEach((m, i) => {
    if (m.role === "user") lastUser = i;
  });
  messages.forEach((m, i) => {
    let content = m.content;
    if (opts.thinking && m.role === "assistant" && i > lastUser) {
      const cut = content.lastIndexOf("</think>");
      const reasoning = cut < 0 ? "" : content.slice(0, cut).replace(/\n+$/, "").split("<think>").pop()!.replace(/^\n+/, "");
      const reply = cut < 0 ? content : content.slice(cut + "</think>".length);
      content = `<think>\n${reasoning}\n</think>\n\n${reply.replace(/^\n+/, "")}`;
    }
    text += `${IM_START}${m.role}\n${content}`;
    // The final message's end marker is not searched for its content below (a one-letter label could match in it).
    if (!(opts.continueFinalMessage && i === messages.length - 1)) text += `${IM_END}\n`;
  });
  if (opts.continueFinalMessage) {
    const final = (messages[messages.length - 1]?.content ?? "").trim();
    const at = text.lastIndexOf(final);
    if (at < 0) throw new FinalMessageMissing("continue_final_message is set but the final message does not appear in the chat after applying the chat template! This can happen if the chat template deletes portions of the final message. Please verify the chat template and final message in your chat to ensure they are compatible.");
    return text.slice(0, at + final.length);
  }
  if (opts.addGenerationPrompt) text += `${IM_START}assistant\n${opts.thinking && opts.enableThinking === false ? EMPTY_THINK : ""}`;
  return text;
}

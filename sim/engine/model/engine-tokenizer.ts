// What the sim needs of a tokenizer, whichever it is: the built-in stand-in (tokenizer.ts, fast,
// the default) or a model's real Hugging Face tokenizer (hf-tokenizer.ts: Qwen3, Llama 3.1,
// Gemma 3), so /tokenize, /detokenize, chat templates, logprob ids and prompt counts follow it.
export interface ChatMessage {
  role: string;
  content: string;
}

/** continue_final_message with a final message the rendered chat does not end in (transformers' apply_chat_template ValueError). */
export class FinalMessageMissing extends Error {}

export const TOKENIZER_NAMES = ["builtin", "qwen3", "llama3.1", "gemma3"] as const;
export type TokenizerName = (typeof TOKENIZER_NAMES)[number];

export function isTokenizerName(value: string): value is TokenizerName {
  return (TOKENIZER_NAMES as readonly string[]).includes(value);
}

export interface ChatRenderOptions {
  addGenerationPrompt: boolean;
  continueFinalMessage: boolean;
  /** chat_template_kwargs of the request (e.g. enable_thinking), passed to the template. */
  kwargs: Record<string, unknown>;
}

export interface EngineTokenizer {
  readonly name: TokenizerName;
  readonly vocabSize: number;
  /** The BOS id that add_special_tokens puts first, or null (Qwen3 adds none). */
  readonly bosId: number | null;
  /** Tokens that end a generation. */
  readonly eosIds: ReadonlySet<number>;
  /** Token ids of `text`; special-token strings in it become their ids. */
  encode(text: string, addSpecialTokens?: boolean): number[];
  /** The ids and their vocabulary pieces (convert_ids_to_tokens: "Ġ", "Ċ", "▁"), as /tokenize's token_strs. */
  encodeWithPieces(text: string, addSpecialTokens?: boolean): { ids: number[]; pieces: string[] };
  /** The text of `ids` (/detokenize). */
  decode(ids: readonly number[]): string;
  /** The text of one token (logprobs' token strings). */
  decodeToken(id: number): string;
  /** Tokens of `text` without special tokens: the prompt counts of structured reads. */
  count(text: string): number;
  /** The chat template applied to `messages` (throws FinalMessageMissing as transformers does). */
  renderChat(messages: readonly ChatMessage[], options: ChatRenderOptions): string;
}

// The token ids a label adds as the first tokens of the reply, once per model and label-read API:
// completions: what "Answer: X" adds after "Answer:"; chat: what an assistant message "X" adds
// after the generation prompt. Asked of the engine's /tokenize, so they are the model's own.
import type { TokenizeResponse } from "../../common/engine-protocol/index.js";
import type { CallCounters } from "./engine-call.js";
import { PromiseCache } from "./promise-cache.js";

/**
 * chat_template_kwargs of every chat label read and chat /tokenize: the template's thinking switch
 * off, as vLLM's own reads force it (vllm/entrypoints/openai/decisions/strategies.py
 * NextTokenStrategy._read_request). With thinking on, Qwen3's template opens the generation prompt
 * without a reasoning block but writes an empty one before an assistant message, so every label
 * would start with "<think>\n\n</think>\n\n" and no read would be the reply's first token.
 */
export const CHAT_TEMPLATE_KWARGS = { enable_thinking: false } as const;

/** What the completions prompt ends with; label tokens are what a label adds after it. */
export const ANSWER_TAIL = "Answer:";

export interface LabelTokens {
  ids: number[];
  /**
   * Token strings, for servers that answer with strings rather than "token_id:<id>". These are
   * vocabulary pieces (convert_ids_to_tokens: "Ġ", "Ċ", "▁"), never text: a chat read's assistant
   * text comes from /detokenize.
   */
  strs: string[];
}

/** A label that does not tokenize as a continuation of the prompt for this model. */
export class LabelTokenError extends Error {}

export type Tokenize = (body: Record<string, unknown>, counters: CallCounters, signal: AbortSignal) => Promise<TokenizeResponse>;

export class LabelTokenizer {
  private readonly cache = new PromiseCache<LabelTokens>(4096);
  private readonly tails = new PromiseCache<number[]>(4);

  constructor(
    private readonly api: "completions" | "chat",
    private readonly tokenize: Tokenize,
  ) {}

  tokens(label: string, counters: CallCounters, signal: AbortSignal): Promise<LabelTokens> {
    return this.cache.get(label, async (loadSignal) => {
      const user = { role: "user", content: "x" };
      const [tail, full] =
        this.api === "completions"
          ? await Promise.all([
              this.tails.get(this.api, async (tailSignal) => (await this.tokenize({ prompt: ANSWER_TAIL, add_special_tokens: false }, counters, tailSignal)).tokens),
              this.tokenize({ prompt: `${ANSWER_TAIL} ${label}`, add_special_tokens: false, return_token_strs: true }, counters, loadSignal),
            ])
          : await Promise.all([
              this.tails.get(this.api, async (tailSignal) => (await this.tokenize({ messages: [user], add_generation_prompt: true, chat_template_kwargs: CHAT_TEMPLATE_KWARGS }, counters, tailSignal)).tokens),
              this.tokenize({ messages: [user, { role: "assistant", content: label }], add_generation_prompt: false, continue_final_message: true, chat_template_kwargs: CHAT_TEMPLATE_KWARGS, return_token_strs: true }, counters, loadSignal),
            ]);
      const n = tail.length;
      if (full.tokens.length <= n || full.tokens.slice(0, n).some((t, i) => t !== tail[i])) {
        throw new LabelTokenError(`label ${JSON.stringify(label)} does not tokenize as a continuation of the prompt for this model`);
      }
      // Stryker disable next-line ArrayDeclaration: token_strs is null only from an engine without return_token_strs, and the tail is at least one token, so a one-element stand-in sliced at n is empty as well
      return { ids: full.tokens.slice(n), strs: (full.token_strs ?? []).slice(n) };
    }, signal);
  }
}

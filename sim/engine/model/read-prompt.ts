// How vLLM lays out one read (one question) of /v1/systemone, reduced to what the sim needs: the
// shared prefix (system instructions and the state) and the question's own text, counted in tokens.
// Mirrors vllm/entrypoints/openai/decisions/strategies.py NextTokenStrategy.read (user message =
// state, blank line, question prompt) and question_types.py QuestionType.prompt / reply_line.
import type { EngineTokenizer } from "./engine-tokenizer.js";
import type { SimTokenizer } from "./tokenizer.js";
import { sha256Hex } from "../../../common/sha256.js";
import type { ParsedQuestion, ParsedRequest } from "../protocol/systemone-request.js";

/** Chat-template tokens around the messages (role markers, generation prompt). */
const TEMPLATE_TOKENS = 6;

export interface ReadPrompt {
  questionId: string;
  /** Identity of the shared prefix: equal for every read of the same salt, instructions and state. */
  prefixKey: string;
  prefixTokens: number;
  promptTokens: number;
  /** Prompts given as token ids: chained block hashes (PrefixCache.lookupAndInsertBlocks) instead of prefixKey. */
  blockKeys?: readonly string[];
  /** vLLM skips reading the prefix cache for requests with prompt_logprobs (sampling_params.py skip_reading_prefix_cache). */
  skipCacheRead?: boolean;
}

/** The state as the model reads it: text as is, JSON as its JSON text (ensure_ascii=False). */
export function stateText(state: unknown): string {
  return typeof state === "string" ? state : JSON.stringify(state) ?? "null";
}

export function questionPrompt(q: ParsedQuestion): string {
  const lines = q.instructions ? [`Question: ${q.instructions}`] : [];
  q.options.forEach((o, i) => {
    const label = q.labels[i] ?? "?";
    if (q.type === "noul") lines.push(o.description ? `${label}: ${o.description}` : label);
    else lines.push(o.description ? `${label}: ${o.name} - ${o.description}` : `${label}: ${o.name}`);
  });
  lines.push(
    q.type === "noul" ? "Answer with yes or no only." : q.type === "score" ? "Answer with the number of one level only." : "Answer with the letter of one option only.",
  );
  return lines.join("\n");
}

const templateTokens = new WeakMap<EngineTokenizer, number>();

/**
 * Tokens the chat template adds around a system and a user message (role markers, BOS, the
 * generation prompt): a real tokenizer renders its own template once to count them; the built-in
 * one adds TEMPLATE_TOKENS, and its BOS.
 */
function templateOverhead(tokenizer: EngineTokenizer): number {
  let n = templateTokens.get(tokenizer);
  if (n === undefined) {
    if (tokenizer.name === "builtin") n = TEMPLATE_TOKENS + ((tokenizer as SimTokenizer).bos ? 1 : 0);
    else {
      const messages = [
        { role: "system", content: "x" },
        { role: "user", content: "y" },
      ];
      const text = tokenizer.renderChat(messages, { addGenerationPrompt: true, continueFinalMessage: false, kwargs: {} });
      n = Math.max(0, tokenizer.count(text) - tokenizer.count("x") - tokenizer.count("y"));
    }
    templateTokens.set(tokenizer, n);
  }
  return n;
}

/** The reads of a structured request, counted with the engine's tokenizer. */
export function readPrompts(req: ParsedRequest, tokenizer: EngineTokenizer): ReadPrompt[] {
  const state = stateText(req.state);
  const prefixText = `${req.instructions ?? ""}\n${state}\n\n`;
  const prefixKey = sha256Hex(`${req.cacheSalt ?? ""}\u0000${prefixText}`);
  const prefixTokens = templateOverhead(tokenizer) + tokenizer.count(prefixText);
  return req.questions.map((q) => ({
    questionId: q.id,
    prefixKey,
    prefixTokens,
    promptTokens: prefixTokens + tokenizer.count(questionPrompt(q)),
  }));
}

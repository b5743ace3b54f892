// How vLLM lays out one read (one question) of /v1/systemone, reduced to what the sim needs: the
// shared prefix (system instructions and the state) and the question's own text, counted in tokens.
// Mirrors vllm/entrypoints/openai/decisions/strategies.py NextTokenStrategy.read (user message =
// state, blank line, question prompt) and question_types.py QuestionType.prompt / reply_line.
import { countTokens } from "./token-count.js";
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

/** `bos`: the chat template starts with the tokenizer's BOS token (Llama, Gemma). */
export function readPrompts(req: ParsedRequest, bos = false): ReadPrompt[] {
  const state = stateText(req.state);
  const prefixText = `${req.instructions ?? ""}\n${state}\n\n`;
  const prefixKey = sha256Hex(`${req.cacheSalt ?? ""}\u0000${prefixText}`);
  const prefixTokens = TEMPLATE_TOKENS + (bos ? 1 : 0) + countTokens(prefixText);
  return req.questions.map((q) => ({
    questionId: q.id,
    prefixKey,
    prefixTokens,
    promptTokens: prefixTokens + countTokens(questionPrompt(q)),
  }));
}

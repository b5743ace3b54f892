// POST /v1/completions, POST /v1/chat/completions and POST /tokenize of the sim: request checks in
// vLLM's wording, prompt rendering to token ids, and the response bodies with logprobs.
// Sources (vllm-project/vllm):
// - vllm/entrypoints/openai/completion/protocol.py: CompletionRequest (prompt as text or ids,
//   max_tokens default 16, logprobs, logprob_token_ids "requires logprobs", check_logprobs
//   messages, CompletionLogProbs {text_offset, token_logprobs, tokens, top_logprobs});
//   to_sampling_params passes logprobs=None when logprob_token_ids is set, so max_logprobs does
//   not limit such a request.
// - vllm/entrypoints/openai/chat_completion/protocol.py: logprobs (bool) + top_logprobs, the
//   content[] of {token, logprob, bytes, top_logprobs[]}.
// - vllm/sampling_params.py _validate_logprobs: "Requested sample logprobs of N, which is greater
//   than max allowed: M", logprob_token_ids at most MAX_LOGPROB_TOKEN_IDS = 128, out-of-vocab ids.
//   skip_reading_prefix_cache = prompt_logprobs is not None: vLLM reads no prefix cache for a
//   request with prompt_logprobs (vllm/v1/core/kv_cache_manager.py get_computed_blocks), and
//   echo implies prompt_logprobs. The sim does the same, so a reader that scored with them pays.
// - vllm/renderers/params.py: context length 400 with param "input_tokens" (failure.ts).
// - the tokenize protocol (vllm/entrypoints/serve/tokenize): {prompt | messages} ->
//   {count, max_model_len, tokens, token_strs}.
// - OpenAIBaseModel lets unknown fields through (a warning in the log), which is how an older
//   vLLM without logprob_token_ids behaves: the field is ignored and top-k logprobs come back.
import { createHash } from "node:crypto";
import { badRequest as bad, contextLengthFailure, modelNotFound, type Failure } from "./failure.js";
import { applyChatTemplate, SimTokenizer, type ChatMessage } from "../model/tokenizer.js";
import type { TokenModel, TokenLogprob } from "../model/token-model.js";

export const MAX_LOGPROB_TOKEN_IDS = 128;

export interface GenerationLimits {
  servedModel: string;
  maxModelLen: number;
  maxLogprobs: number;
  /** false: behave like a vLLM older than logprob_token_ids (the field is ignored). */
  logprobTokenIds: boolean;
}

export interface GenerationPlan {
  kind: "completion" | "chat";
  prompts: number[][];
  maxTokens: number;
  /** Top-k logprobs per generated token (0 = the sampled token only), or null for none. */
  topLogprobs: number | null;
  tokenIds: number[] | null;
  asTokenIds: boolean;
  skipCacheRead: boolean;
  cacheSalt: string | null;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

const isIdList = (v: unknown): v is number[] => Array.isArray(v) && v.length > 0 && v.every((x) => Number.isInteger(x) && (x as number) >= 0);

function checkModel(body: Record<string, unknown>, limits: GenerationLimits): Failure | undefined {
  return typeof body.model === "string" && body.model !== limits.servedModel ? modelNotFound(body.model) : undefined;
}

/** The logprob checks shared by both endpoints; `topLogprobs` is what the sampler would be asked for. */
function checkLogprobs(body: Record<string, unknown>, topLogprobs: number | null, tokenizer: SimTokenizer, limits: GenerationLimits): { tokenIds: number[] | null } | Failure {
  let tokenIds: number[] | null = null;
  if (limits.logprobTokenIds && body.logprob_token_ids !== undefined && body.logprob_token_ids !== null) {
    const ids = body.logprob_token_ids;
    if (!Array.isArray(ids) || !ids.every((x) => Number.isInteger(x))) return bad("logprob_token_ids: Input should be a valid list of integers", "logprob_token_ids");
    if (ids.length === 0) return bad("`logprob_token_ids` must not be an empty list.", "logprob_token_ids");
    if (topLogprobs === null) return bad("when using `logprob_token_ids`, `logprobs` must be set.", "logprob_token_ids");
    if (ids.length > MAX_LOGPROB_TOKEN_IDS) {
      return bad(`Requested logprob_token_ids of length ${ids.length}, which is greater than max allowed: ${MAX_LOGPROB_TOKEN_IDS}`, "logprob_token_ids");
    }
    const outside = (ids as number[]).filter((id) => id < 0 || id >= tokenizer.vocabSize);
    if (outside.length) {
      return bad(`token_id(s) [${outside.join(", ")}] in logprob_token_ids contain out-of-vocab token ids. Vocabulary size: ${tokenizer.vocabSize}`, "logprob_token_ids");
    }
    tokenIds = ids as number[];
  } else if (topLogprobs !== null) {
    const n = topLogprobs === -1 ? tokenizer.vocabSize : topLogprobs;
    if (n > limits.maxLogprobs) return bad(`Requested sample logprobs of ${n}, which is greater than max allowed: ${limits.maxLogprobs}`, "logprobs");
  }
  const prompt = body.prompt_logprobs;
  if (typeof prompt === "number" && prompt > limits.maxLogprobs) {
    return bad(`Requested prompt logprobs of ${prompt}, which is greater than max allowed: ${limits.maxLogprobs}`, "prompt_logprobs");
  }
  return { tokenIds };
}

function maxTokensOf(body: Record<string, unknown>, fallback: number): number | Failure {
  const raw = body.max_tokens ?? body.max_completion_tokens;
  if (raw === undefined || raw === null) return fallback;
  if (!Number.isInteger(raw) || (raw as number) < 1) return bad(`max_tokens must be at least 1, got ${String(raw)}.`, "max_tokens");
  return raw as number;
}

export function parseCompletionRequest(body: unknown, tokenizer: SimTokenizer, limits: GenerationLimits): GenerationPlan | Failure {
  if (!isObject(body)) return bad("Input should be a valid dictionary or object to extract fields from", "body");
  const modelFailure = checkModel(body, limits);
  if (modelFailure) return modelFailure;
  const p = body.prompt;
  let prompts: number[][];
  if (typeof p === "string" && p !== "") prompts = [tokenizer.encode(p)];
  else if (isIdList(p)) prompts = [p];
  else if (Array.isArray(p) && p.length > 0 && p.every((x) => (typeof x === "string" && x !== "") || isIdList(x))) {
    prompts = p.map((x) => (typeof x === "string" ? tokenizer.encode(x) : (x as number[])));
  } else return bad("Either prompt or prompt_embeds must be provided and non-empty.", "prompt");
  for (const ids of prompts) {
    const outside = ids.find((id) => id >= tokenizer.vocabSize);
    if (outside !== undefined) return bad(`Token id ${outside} is out of vocabulary`, "prompt");
  }
  for (const f of ["logprobs", "prompt_logprobs"]) {
    const v = body[f];
    if (v !== undefined && v !== null && typeof v !== "number") return bad(`\`${f}\` must be an integer.`, f);
    if (typeof v === "number" && v < 0 && v !== -1) return bad(`\`${f}\` must be a positive value or -1.`, f);
  }
  const maxTokens = maxTokensOf(body, 16);
  if (typeof maxTokens !== "number") return maxTokens;
  const topLogprobs = typeof body.logprobs === "number" ? body.logprobs : null;
  const checked = checkLogprobs(body, topLogprobs, tokenizer, limits);
  if ("ok" in checked) return checked;
  for (const ids of prompts) {
    const tooLong = contextLengthFailure(ids.length, maxTokens, limits.maxModelLen);
    if (tooLong) return tooLong;
  }
  const echoLogprobs = body.echo === true && topLogprobs !== null;
  return {
    kind: "completion",
    prompts,
    maxTokens,
    topLogprobs,
    tokenIds: checked.tokenIds,
    asTokenIds: body.return_tokens_as_token_ids === true,
    skipCacheRead: (body.prompt_logprobs !== undefined && body.prompt_logprobs !== null) || echoLogprobs,
    cacheSalt: typeof body.cache_salt === "string" ? body.cache_salt : null,
  };
}

function messagesOf(raw: unknown): ChatMessage[] | Failure {
  if (!Array.isArray(raw) || raw.length === 0) return bad("messages: Input should be a non-empty list", "messages");
  const out: ChatMessage[] = [];
  for (const [i, m] of raw.entries()) {
    if (!isObject(m) || typeof m.role !== "string") return bad(`messages.${i}: each message needs a role`, "messages");
    const c = m.content;
    let content: string;
    if (typeof c === "string") content = c;
    else if (Array.isArray(c)) content = c.map((part) => (isObject(part) && part.type === "text" && typeof part.text === "string" ? part.text : "")).join("\n");
    else if (c === null || c === undefined) content = "";
    else return bad(`messages.${i}.content: Input should be a valid string or list`, "messages");
    out.push({ role: m.role, content });
  }
  return out;
}

/** The chat prompt as token ids, as /tokenize and /v1/chat/completions render it. */
export function renderChat(body: Record<string, unknown>, tokenizer: SimTokenizer): number[] | Failure {
  const messages = messagesOf(body.messages);
  if (!Array.isArray(messages)) return messages;
  const continueFinal = body.continue_final_message === true;
  const addGeneration = body.add_generation_prompt === undefined ? true : body.add_generation_prompt === true;
  if (continueFinal && addGeneration && body.add_generation_prompt === true) {
    return bad("Cannot set both `continue_final_message` and `add_generation_prompt` to True.", "continue_final_message");
  }
  if (continueFinal && messages[messages.length - 1]?.role !== "assistant") {
    return bad("continue_final_message needs the last message to be an assistant message", "continue_final_message");
  }
  return tokenizer.encode(applyChatTemplate(messages, { addGenerationPrompt: addGeneration, continueFinalMessage: continueFinal }));
}

export function parseChatRequest(body: unknown, tokenizer: SimTokenizer, limits: GenerationLimits): GenerationPlan | Failure {
  if (!isObject(body)) return bad("Input should be a valid dictionary or object to extract fields from", "body");
  const modelFailure = checkModel(body, limits);
  if (modelFailure) return modelFailure;
  const ids = renderChat(body, tokenizer);
  if (!Array.isArray(ids)) return ids;
  const top = body.top_logprobs;
  if (top !== undefined && top !== null && (typeof top !== "number" || top < 0)) return bad("`top_logprobs` must be a non-negative value.", "top_logprobs");
  if (typeof top === "number" && top > 0 && body.logprobs !== true) return bad("when using `top_logprobs`, `logprobs` must be set to true.", "top_logprobs");
  const maxTokens = maxTokensOf(body, Math.max(1, limits.maxModelLen - ids.length));
  if (typeof maxTokens !== "number") return maxTokens;
  const topLogprobs = body.logprobs === true ? (typeof top === "number" ? top : 0) : null;
  const checked = checkLogprobs(body, topLogprobs, tokenizer, limits);
  if ("ok" in checked) return checked;
  const tooLong = contextLengthFailure(ids.length, maxTokens, limits.maxModelLen);
  if (tooLong) return tooLong;
  return {
    kind: "chat",
    prompts: [ids],
    maxTokens,
    topLogprobs,
    tokenIds: checked.tokenIds,
    asTokenIds: body.return_tokens_as_token_ids === true,
    skipCacheRead: body.prompt_logprobs !== undefined && body.prompt_logprobs !== null,
    cacheSalt: typeof body.cache_salt === "string" ? body.cache_salt : null,
  };
}

export interface TokenizeResult {
  count: number;
  max_model_len: number;
  tokens: number[];
  token_strs: string[] | null;
}

export function tokenizeRequest(body: unknown, tokenizer: SimTokenizer, limits: GenerationLimits): TokenizeResult | Failure {
  if (!isObject(body)) return bad("Input should be a valid dictionary or object to extract fields from", "body");
  const modelFailure = checkModel(body, limits);
  if (modelFailure) return modelFailure;
  let tokens: number[];
  if (body.messages !== undefined) {
    const ids = renderChat(body, tokenizer);
    if (!Array.isArray(ids)) return ids;
    tokens = ids;
  } else if (typeof body.prompt === "string") tokens = tokenizer.encode(body.prompt);
  else return bad("prompt: Field required (or messages)", "prompt");
  return {
    count: tokens.length,
    max_model_len: limits.maxModelLen,
    tokens,
    token_strs: body.return_token_strs === true ? tokens.map((t) => tokenizer.decodeToken(t)) : null,
  };
}

/** Chained hashes of the prompt's full 16-token blocks (vLLM hashes a block with its parent's hash). */
export function blockKeys(ids: readonly number[], salt: string | null, blockSize = 16): string[] {
  const keys: string[] = [];
  let parent = salt ?? "";
  for (let i = 0; i + blockSize <= ids.length; i += blockSize) {
    parent = createHash("sha1").update(parent).update(Buffer.from(new Int32Array(ids.slice(i, i + blockSize)).buffer)).digest("hex");
    keys.push(parent);
  }
  return keys;
}

export interface GeneratedToken {
  id: number;
  logprob: number;
  /** Requested ids (logprob_token_ids) or the top-k, with the sampled token. */
  alternatives: TokenLogprob[];
}

/** Greedy generation of up to maxTokens tokens with their logprobs. */
export function generate(model: TokenModel, prompt: readonly number[], plan: GenerationPlan, eos: ReadonlySet<number>): GeneratedToken[] {
  const context = [...prompt];
  const out: GeneratedToken[] = [];
  for (let step = 0; step < plan.maxTokens; step++) {
    const dist = model.next(context);
    const chosen = dist.argmax();
    let alternatives: TokenLogprob[] = [];
    if (plan.topLogprobs !== null) {
      const listed = plan.tokenIds ? plan.tokenIds.map((id) => ({ id, logprob: dist.logprob(id) })) : dist.top(plan.topLogprobs);
      alternatives = listed.some((t) => t.id === chosen.id) ? listed : [...listed, chosen];
    }
    out.push({ id: chosen.id, logprob: chosen.logprob, alternatives });
    context.push(chosen.id);
    if (eos.has(chosen.id)) break;
  }
  return out;
}

function tokenText(tokenizer: SimTokenizer, id: number, asIds: boolean): string {
  return asIds ? `token_id:${id}` : tokenizer.decodeToken(id);
}

export function completionLogprobs(tokens: GeneratedToken[], tokenizer: SimTokenizer, plan: GenerationPlan): Record<string, unknown> | null {
  if (plan.topLogprobs === null) return null;
  let offset = 0;
  const text_offset: number[] = [];
  for (const t of tokens) {
    text_offset.push(offset);
    offset += tokenizer.decodeToken(t.id).length;
  }
  return {
    text_offset,
    token_logprobs: tokens.map((t) => t.logprob),
    tokens: tokens.map((t) => tokenText(tokenizer, t.id, plan.asTokenIds)),
    top_logprobs: tokens.map((t) => Object.fromEntries(t.alternatives.map((a) => [tokenText(tokenizer, a.id, plan.asTokenIds), a.logprob]))),
  };
}

export function chatLogprobs(tokens: GeneratedToken[], tokenizer: SimTokenizer, plan: GenerationPlan): Record<string, unknown> | null {
  if (plan.topLogprobs === null) return null;
  const entry = (id: number, logprob: number) => {
    const token = tokenText(tokenizer, id, plan.asTokenIds);
    return { token, logprob, bytes: [...Buffer.from(tokenizer.decodeToken(id), "utf8")] };
  };
  return {
    content: tokens.map((t) => ({ ...entry(t.id, t.logprob), top_logprobs: t.alternatives.map((a) => entry(a.id, a.logprob)) })),
  };
}

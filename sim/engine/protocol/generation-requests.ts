// POST /v1/completions, POST /v1/chat/completions and POST /tokenize of the sim: request checks in
// vLLM's wording, prompt rendering to token ids, and the response bodies with logprobs.
// Sources (vllm-project/vllm):
// - vllm/entrypoints/openai/completion/protocol.py: CompletionRequest (prompt as text or ids,
//   max_tokens default 16, add_special_tokens default true, logprobs, logprob_token_ids "requires
//   logprobs", the check_logprobs model validator, CompletionLogProbs {text_offset,
//   token_logprobs, tokens, top_logprobs}); the version that tests logprob_token_ids by
//   truthiness (an empty list is unset: to_sampling_params passes `logprob_token_ids or None`) and
//   refuses any negative logprobs ("`logprobs` must be a positive value."). to_sampling_params
//   passes logprobs=None when logprob_token_ids is set, so max_logprobs does not limit such a
//   request. Validator errors are pydantic 400s (validation-error.ts).
// - vllm/entrypoints/openai/chat_completion/protocol.py: logprobs (bool) + top_logprobs (-1 = the
//   whole vocabulary), add_special_tokens default false, check_logprobs, the content[] of {token,
//   logprob, bytes, top_logprobs[]}.
// - vllm/sampling_params.py _validate_logprobs: "Requested sample logprobs of N, which is greater
//   than max allowed: M", logprob_token_ids at most MAX_LOGPROB_TOKEN_IDS = 128, out-of-vocab ids;
//   VLLMValidationErrors raised while serving, after the prompt's context-length check.
//   skip_reading_prefix_cache = prompt_logprobs is not None: vLLM reads no prefix cache for a
//   request with prompt_logprobs (vllm/v1/core/kv_cache_manager.py get_computed_blocks), and
//   echo implies prompt_logprobs. The sim does the same, so a reader that scored with them pays.
// - vllm/renderers/params.py: context length 400 with param "input_tokens" (failure.ts).
// - the tokenize protocol (vllm/entrypoints/serve/tokenize/protocol.py): {prompt | messages} ->
//   {count, max_model_len, tokens, token_strs}; add_special_tokens default true for a prompt,
//   false for messages; token_strs are tokenizer.convert_ids_to_tokens pieces (serving.py), raw
//   vocabulary strings ("Ġ" for a leading space with byte-level BPE), not text. POST /detokenize
//   {model, tokens} -> {prompt} turns ids back into text (DetokenizeRequest, DetokenizeResponse).
// - chat_template_kwargs (chat_completion/protocol.py, tokenize/protocol.py): passed to the
//   template; the sim's thinking template reads enable_thinking.
// - OpenAIBaseModel lets unknown fields through (a warning in the log), which is how an older
//   vLLM without logprob_token_ids behaves: the field is ignored and top-k logprobs come back.
import { createHash } from "node:crypto";
import { badRequest as bad, contextLengthFailure, modelNotFound, VllmValidationError, type Failure } from "./failure.js";
import { pyRepr } from "./python-repr.js";
import { validationFailure, valueError, type PydanticError } from "./validation-error.js";
import { FinalMessageMissing, type ChatMessage } from "../model/tokenizer.js";
import type { EngineTokenizer } from "../model/engine-tokenizer.js";
import type { LabelTarget, NextTokenModel, TokenLogprob } from "../model/token-model.js";

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
  /** Each prompt's text when it came as text (or rendered messages); null for token ids. */
  texts: Array<string | null>;
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

/** A model_validator(mode="before") that raised: the pydantic 400 at loc body. */
function refused(body: Record<string, unknown>, error: VllmValidationError | string): Failure {
  return validationFailure([valueError(["body"], body, error)]);
}

function notADict(body: unknown): Failure {
  return validationFailure([{ type: "model_attributes_type", loc: ["body"], msg: "Input should be a valid dictionary or object to extract fields from", input: body }]);
}

function checkModel(body: Record<string, unknown>, limits: GenerationLimits): Failure | undefined {
  return typeof body.model === "string" && body.model !== limits.servedModel ? modelNotFound(body.model) : undefined;
}

/** Set and non-empty: both protocols test logprob_token_ids by truthiness, so [] is unset. */
function tokenIdsRequested(body: Record<string, unknown>, limits: GenerationLimits): boolean {
  const ids = body.logprob_token_ids;
  return limits.logprobTokenIds && Array.isArray(ids) && ids.length > 0;
}

/** The field check of logprob_token ids (list[int]), after the model validators. */
function tokenIdsSchema(body: Record<string, unknown>, limits: GenerationLimits): Failure | undefined {
  const ids = body.logprob_token_ids;
  if (!limits.logprobTokenIds || ids === undefined || ids === null) return undefined;
  if (!Array.isArray(ids)) return validationFailure([{ type: "list_type", loc: ["body", "logprob_token_ids"], msg: "Input should be a valid list", input: ids }]);
  const errors: PydanticError[] = [];
  ids.forEach((x, i) => {
    if (!Number.isInteger(x)) errors.push({ type: "int_type", loc: ["body", "logprob_token_ids", i], msg: "Input should be a valid integer", input: x });
  });
  return errors.length ? validationFailure(errors) : undefined;
}

/**
 * SamplingParams._validate_logprobs (vllm/sampling_params.py), raised while serving: the top-k
 * count against --max-logprobs (-1 = the whole vocabulary), or the explicit ids (at most 128, in
 * the vocabulary). With ids the count is not passed on (to_sampling_params: logprobs=None).
 */
function samplingLogprobs(body: Record<string, unknown>, topLogprobs: number | null, tokenizer: EngineTokenizer, limits: GenerationLimits): { tokenIds: number[] | null } | Failure {
  if (topLogprobs !== null && tokenIdsRequested(body, limits)) {
    const ids = body.logprob_token_ids as number[];
    if (ids.length > MAX_LOGPROB_TOKEN_IDS) {
      return new VllmValidationError(`Requested logprob_token_ids of length ${ids.length}, which is greater than max allowed: ${MAX_LOGPROB_TOKEN_IDS}`, "logprob_token_ids", ids.length).failure();
    }
    const outside = ids.filter((id) => id < 0 || id >= tokenizer.vocabSize);
    if (outside.length) {
      return new VllmValidationError(`token_id(s) ${pyRepr(outside)} in logprob_token_ids contain out-of-vocab token ids. Vocabulary size: ${tokenizer.vocabSize}`, "logprob_token_ids", outside).failure();
    }
    return { tokenIds: ids };
  }
  if (topLogprobs !== null && topLogprobs !== 0) {
    const n = topLogprobs === -1 ? tokenizer.vocabSize : topLogprobs;
    if (n > limits.maxLogprobs) return new VllmValidationError(`Requested sample logprobs of ${n}, which is greater than max allowed: ${limits.maxLogprobs}`, "logprobs", n).failure();
  }
  const prompt = body.prompt_logprobs;
  if (typeof prompt === "number" && prompt !== 0) {
    const n = prompt === -1 ? tokenizer.vocabSize : prompt;
    if (n > limits.maxLogprobs) return new VllmValidationError(`Requested prompt logprobs of ${n}, which is greater than max allowed: ${limits.maxLogprobs}`, "prompt_logprobs", n).failure();
  }
  return { tokenIds: null };
}

/** `prompt_logprobs` as both check_logprobs validators check it. */
function promptLogprobsRefusal(body: Record<string, unknown>): VllmValidationError | undefined {
  const v = body.prompt_logprobs;
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number") return new VllmValidationError("`prompt_logprobs` must be an integer.", "prompt_logprobs", v);
  if (body.stream === true && (v > 0 || v === -1)) return new VllmValidationError("`prompt_logprobs` are not available when `stream=True`.", "prompt_logprobs");
  if (v < 0 && v !== -1) return new VllmValidationError("`prompt_logprobs` must be a positive value or -1.", "prompt_logprobs", v);
  return undefined;
}

function maxTokensOf(body: Record<string, unknown>, fallback: number): number | Failure {
  const raw = body.max_tokens ?? body.max_completion_tokens;
  if (raw === undefined || raw === null) return fallback;
  if (!Number.isInteger(raw) || (raw as number) < 1) return bad(`max_tokens must be at least 1, got ${String(raw)}.`, "max_tokens");
  return raw as number;
}

/** add_special_tokens of the request, or the endpoint's default. */
function addSpecialTokens(body: Record<string, unknown>, fallback: boolean): boolean {
  return typeof body.add_special_tokens === "boolean" ? body.add_special_tokens : fallback;
}

/**
 * CompletionRequest.check_logprobs and validate_prompt_and_prompt_embeds (completion/protocol.py,
 * the version with logprob_token_ids): model validators, so the first one that raises is a pydantic
 * 400. logprobs has no -1 here: any negative count is refused.
 */
function completionRefusal(body: Record<string, unknown>, limits: GenerationLimits): VllmValidationError | undefined {
  const p = body.prompt;
  if (p === undefined || p === null || p === "") return new VllmValidationError("Either prompt or prompt_embeds must be provided and non-empty.", "prompt");
  if (tokenIdsRequested(body, limits)) {
    if (body.use_beam_search === true) return new VllmValidationError("`logprob_token_ids` is not supported with beam search.", "logprob_token_ids");
    if (body.logprobs === undefined || body.logprobs === null) return new VllmValidationError("when using `logprob_token_ids`, `logprobs` must be set.", "logprob_token_ids");
  }
  const lp = body.logprobs;
  if (lp !== undefined && lp !== null && typeof lp !== "number") return new VllmValidationError("`logprobs` must be an integer.", "logprobs", lp);
  const prompt = promptLogprobsRefusal(body);
  if (prompt) return prompt;
  if (typeof lp === "number" && lp < 0) return new VllmValidationError("`logprobs` must be a positive value.", "logprobs", lp);
  return undefined;
}

/** The request model's checks in pydantic's order: a dict, its model validators, its field types. */
function requestModel(
  raw: unknown,
  limits: GenerationLimits,
  validators: (body: Record<string, unknown>, limits: GenerationLimits) => VllmValidationError | undefined,
): { body: Record<string, unknown> } | Failure {
  if (!isObject(raw)) return notADict(raw);
  const refusal = validators(raw, limits);
  if (refusal) return refused(raw, refusal);
  return tokenIdsSchema(raw, limits) ?? { body: raw };
}

export function parseCompletionRequest(raw: unknown, tokenizer: EngineTokenizer, limits: GenerationLimits): GenerationPlan | Failure {
  const model = requestModel(raw, limits, completionRefusal);
  if ("ok" in model) return model;
  const { body } = model;
  const modelFailure = checkModel(body, limits);
  if (modelFailure) return modelFailure;
  const p = body.prompt;
  const special = addSpecialTokens(body, true);
  let items: Array<string | number[]>;
  if (typeof p === "string" || isIdList(p)) items = [p];
  else if (Array.isArray(p) && p.length > 0 && p.every((x) => (typeof x === "string" && x !== "") || isIdList(x))) items = p as Array<string | number[]>;
  else return refused(body, new VllmValidationError("Either prompt or prompt_embeds must be provided and non-empty.", "prompt"));
  const texts = items.map((x) => (typeof x === "string" ? x : null));
  const prompts = items.map((x) => (typeof x === "string" ? tokenizer.encode(x, special) : x));
  for (const ids of prompts) {
    const outside = ids.find((id) => id >= tokenizer.vocabSize);
    if (outside !== undefined) return bad(`Token id ${outside} is out of vocabulary`, "prompt");
  }
  const maxTokens = maxTokensOf(body, 16);
  if (typeof maxTokens !== "number") return maxTokens;
  for (const ids of prompts) {
    const tooLong = contextLengthFailure(ids.length, maxTokens, limits.maxModelLen);
    if (tooLong) return tooLong;
  }
  const topLogprobs = typeof body.logprobs === "number" ? body.logprobs : null;
  const checked = samplingLogprobs(body, topLogprobs, tokenizer, limits);
  if ("ok" in checked) return checked;
  const echoLogprobs = body.echo === true && topLogprobs !== null;
  return {
    kind: "completion",
    prompts,
    texts,
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

/**
 * The chat prompt as text and token ids, as /tokenize and /v1/chat/completions render it: the
 * template (which writes BOS on a BOS-adding tokenizer), then the text encoded with
 * add_special_tokens (default false for chat: the template already added them).
 */
export function renderChat(body: Record<string, unknown>, tokenizer: EngineTokenizer): { text: string; ids: number[]; pieces: string[] } | Failure {
  const continueFinal = body.continue_final_message === true;
  if (continueFinal && body.add_generation_prompt === true) {
    // check_generation_prompt, a model validator raising ValueError (no parameter).
    return refused(body, "Cannot set both `continue_final_message` and `add_generation_prompt` to True.");
  }
  const messages = messagesOf(body.messages);
  if (!Array.isArray(messages)) return messages;
  const addGeneration = body.add_generation_prompt === undefined ? true : body.add_generation_prompt === true;
  if (continueFinal && messages[messages.length - 1]?.role !== "assistant") {
    return bad("continue_final_message needs the last message to be an assistant message", "continue_final_message");
  }
  const kwargs = isObject(body.chat_template_kwargs) ? body.chat_template_kwargs : {};
  let text: string;
  try {
    text = tokenizer.renderChat(messages, { addGenerationPrompt: addGeneration, continueFinalMessage: continueFinal, kwargs });
  } catch (err) {
    // The template's ValueError (or its raise_exception), answered as a 400 by vLLM's chat preprocessing.
    if (err instanceof FinalMessageMissing) return bad(err.message);
    if (tokenizer.name !== "builtin" && err instanceof Error) return bad(err.message);
    throw err;
  }
  const { ids, pieces } = tokenizer.encodeWithPieces(text, addSpecialTokens(body, false));
  return { text, ids, pieces };
}

/**
 * ChatCompletionRequest.check_logprobs (chat_completion/protocol.py): top_logprobs may be -1 (the
 * whole vocabulary) and needs logprobs true; logprob_token_ids needs logprobs true.
 */
function chatRefusal(body: Record<string, unknown>, limits: GenerationLimits): VllmValidationError | undefined {
  if (tokenIdsRequested(body, limits) && body.logprobs !== true) return new VllmValidationError("when using `logprob_token_ids`, `logprobs` must be set to true.", "logprob_token_ids");
  const top = body.top_logprobs;
  if (top !== undefined && top !== null && typeof top !== "number") return new VllmValidationError("`top_logprobs` must be an integer.", "top_logprobs", top);
  const prompt = promptLogprobsRefusal(body);
  if (prompt) return prompt;
  if (typeof top === "number") {
    if (top < 0 && top !== -1) return new VllmValidationError("`top_logprobs` must be a positive value or -1.", "top_logprobs", top);
    if ((top === -1 || top > 0) && body.logprobs !== true) return new VllmValidationError("when using `top_logprobs`, `logprobs` must be set to true.", "top_logprobs");
  }
  return undefined;
}

export function parseChatRequest(raw: unknown, tokenizer: EngineTokenizer, limits: GenerationLimits): GenerationPlan | Failure {
  const model = requestModel(raw, limits, chatRefusal);
  if ("ok" in model) return model;
  const { body } = model;
  const rendered = renderChat(body, tokenizer);
  if ("ok" in rendered) return rendered;
  const modelFailure = checkModel(body, limits);
  if (modelFailure) return modelFailure;
  const { text, ids } = rendered;
  const top = body.top_logprobs;
  const maxTokens = maxTokensOf(body, Math.max(1, limits.maxModelLen - ids.length));
  if (typeof maxTokens !== "number") return maxTokens;
  const tooLong = contextLengthFailure(ids.length, maxTokens, limits.maxModelLen);
  if (tooLong) return tooLong;
  const topLogprobs = body.logprobs === true ? (typeof top === "number" ? top : 0) : null;
  const checked = samplingLogprobs(body, topLogprobs, tokenizer, limits);
  if ("ok" in checked) return checked;
  return {
    kind: "chat",
    prompts: [ids],
    texts: [text],
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

/** /tokenize: the ids and the text they came from (the oracle reads the text of a prompt sent later as ids). */
export function tokenizeRequest(body: unknown, tokenizer: EngineTokenizer, limits: GenerationLimits): { result: TokenizeResult; text: string } | Failure {
  if (!isObject(body)) return notADict(body);
  let tokens: number[];
  let pieces: string[];
  let text: string;
  if (body.messages !== undefined) {
    const rendered = renderChat(body, tokenizer);
    if ("ok" in rendered) return rendered;
    ({ text, ids: tokens, pieces } = rendered);
  } else if (typeof body.prompt === "string") {
    text = body.prompt;
    ({ ids: tokens, pieces } = tokenizer.encodeWithPieces(text, addSpecialTokens(body, true)));
  } else return bad("prompt: Field required (or messages)", "prompt");
  const modelFailure = checkModel(body, limits);
  if (modelFailure) return modelFailure;
  return {
    text,
    result: {
      count: tokens.length,
      max_model_len: limits.maxModelLen,
      tokens,
      // Vocabulary pieces (convert_ids_to_tokens), not text: " A" is "ĠA", "\n" is "Ċ".
      token_strs: body.return_token_strs === true ? pieces : null,
    },
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

/** Greedy generation of up to maxTokens tokens with their logprobs; `target` in oracle mode. */
export function generate(model: NextTokenModel, prompt: readonly number[], plan: GenerationPlan, eos: ReadonlySet<number>, target?: LabelTarget): GeneratedToken[] {
  const context = [...prompt];
  const out: GeneratedToken[] = [];
  for (let step = 0; step < plan.maxTokens; step++) {
    const dist = model.next(context, target);
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

function tokenText(tokenizer: EngineTokenizer, id: number, asIds: boolean): string {
  return asIds ? `token_id:${id}` : tokenizer.decodeToken(id);
}

export function completionLogprobs(tokens: GeneratedToken[], tokenizer: EngineTokenizer, plan: GenerationPlan): Record<string, unknown> | null {
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

export function chatLogprobs(tokens: GeneratedToken[], tokenizer: EngineTokenizer, plan: GenerationPlan): Record<string, unknown> | null {
  if (plan.topLogprobs === null) return null;
  const entry = (id: number, logprob: number) => {
    const token = tokenText(tokenizer, id, plan.asTokenIds);
    return { token, logprob, bytes: [...Buffer.from(tokenizer.decodeToken(id), "utf8")] };
  };
  return {
    content: tokens.map((t) => ({ ...entry(t.id, t.logprob), top_logprobs: t.alternatives.map((a) => entry(a.id, a.logprob)) })),
  };
}

/** POST /detokenize: {model?, tokens: list[int]} -> {prompt} (tokenize/protocol.py DetokenizeRequest). */
export function detokenizeRequest(body: unknown, tokenizer: EngineTokenizer, limits: GenerationLimits): { prompt: string } | Failure {
  if (!isObject(body)) return notADict(body);
  const tokens = body.tokens;
  if (tokens === undefined) return validationFailure([{ type: "missing", loc: ["body", "tokens"], msg: "Field required", input: body }]);
  if (!Array.isArray(tokens)) return validationFailure([{ type: "list_type", loc: ["body", "tokens"], msg: "Input should be a valid list", input: tokens }]);
  const errors: PydanticError[] = [];
  tokens.forEach((x, i) => {
    if (!Number.isInteger(x)) errors.push({ type: "int_type", loc: ["body", "tokens", i], msg: "Input should be a valid integer", input: x });
  });
  if (errors.length) return validationFailure(errors);
  const modelFailure = checkModel(body, limits);
  if (modelFailure) return modelFailure;
  const outside = (tokens as number[]).find((id) => id < 0 || id >= tokenizer.vocabSize);
  if (outside !== undefined) return bad(`Token id ${outside} is out of vocabulary`, "tokens");
  return { prompt: tokenizer.decode(tokens as number[]) };
}

// HTTP bodies of the vLLM endpoints we speak (sim serves them, agent sends them). Responses are
// parsed leniently (unknown fields pass); the sim validates requests the way vLLM does in
// sim/engine/protocol/systemone-request.ts, so these request schemas only describe the shape.
//
// Sources (vllm-project/vllm):
// - /v1/systemone request/response: vllm/entrypoints/openai/.../structured_decisions protocol.py
//   (StructuredDecisionRequest, StructuredDecisionResponse, DecisionUsage) and
//   docs/serving/online_serving/structured_decisions.md
// - limits: vllm/entrypoints/openai/decisions/strategies.py (NextTokenStrategy.limits: 64 questions,
//   26 labels A..Z) and question_types.py (score: 10 levels)
// - error body: vllm/entrypoints/serve/engine/protocol.py (ErrorResponse{error: ErrorInfo}) and
//   vllm/entrypoints/serve/exception_handling/error_response.py (code = HTTP status)
// - /v1/models: ModelCard in vllm/entrypoints/openai/models/protocol.py
import { z } from "zod";

/** Questions per /v1/systemone request (NextTokenStrategy.limits). */
export const SYSTEMONE_MAX_QUESTIONS = 64;
/** Options per choice question: one capital letter label each, A..Z. */
export const SYSTEMONE_MAX_CHOICE_OPTIONS = 26;
/** Levels per score question: labels 0..9. */
export const SYSTEMONE_MAX_SCORE_LEVELS = 10;

export const SYSTEMONE_QUESTION_TYPES = ["choice", "noul", "score"] as const;

/** One question as /v1/systemone takes it: the suite's own question format. */
export interface SystemOneQuestion {
  type: string;
  instructions?: unknown;
  criteria?: unknown;
}

export interface SystemOneRequest {
  model?: string | null;
  /** Text, or JSON that the server renders as its JSON text. */
  state: unknown;
  /** Question id -> question, asked in this order. */
  questions: Record<string, SystemOneQuestion>;
  instructions?: string | null;
  chat_template_kwargs?: Record<string, unknown> | null;
  cache_salt?: string | null;
  priority?: number;
  request_id?: string;
  /** Changes which label each option gets (label-position bias); newer vLLM. */
  seed?: number | null;
}

export const SystemOneAnswerSchema = z.looseObject({
  type: z.string(),
  choice: z.union([z.string(), z.boolean()]).optional(),
  /** noul: probability of yes. */
  noul: z.number().optional(),
  /** choice: by option name; noul: {yes, no}; score: by level index. */
  probabilities: z.record(z.string(), z.number()),
  confidence: z.number().optional(),
});
export type SystemOneAnswer = z.infer<typeof SystemOneAnswerSchema>;

/**
 * vLLM's DecisionUsage has input_tokens/output_tokens only. The Decisions API adds
 * input_tokens_details.cached_tokens; the completions API reports prompt_tokens and
 * prompt_tokens_details.cached_tokens. All are accepted here; the sim sends all of them.
 */
export const SystemOneUsageSchema = z.looseObject({
  input_tokens: z.number().optional(),
  output_tokens: z.number().optional(),
  input_tokens_details: z.looseObject({ cached_tokens: z.number().nullish() }).nullish(),
  prompt_tokens: z.number().optional(),
  completion_tokens: z.number().nullish(),
  total_tokens: z.number().optional(),
  prompt_tokens_details: z.looseObject({ cached_tokens: z.number().nullish() }).nullish(),
});
export type SystemOneUsage = z.infer<typeof SystemOneUsageSchema>;

export const SystemOneResponseSchema = z.looseObject({
  id: z.string().optional(),
  object: z.string().optional(),
  created: z.number().optional(),
  model: z.string(),
  answers: z.record(z.string(), SystemOneAnswerSchema),
  usage: SystemOneUsageSchema.optional(),
  diagnostics: z.record(z.string(), z.looseObject({ label_mass: z.number().optional(), argmax_is_label: z.boolean().optional() })).optional(),
});
export type SystemOneResponse = z.infer<typeof SystemOneResponseSchema>;

/**
 * Token counts of a usage block, whichever naming the server used; `cached` is undefined when the
 * block has no cached count (vllm/entrypoints/generate/structured_decisions/protocol.py
 * DecisionUsage never has one; completions only with --enable-prompt-tokens-details), never 0
 * for "not reported".
 */
export function usageTokens(usage: SystemOneUsage | null | undefined): { prompt: number; completion: number; cached: number | undefined } {
  if (!usage) return { prompt: 0, completion: 0, cached: undefined };
  return {
    prompt: usage.input_tokens ?? usage.prompt_tokens ?? 0,
    completion: usage.output_tokens ?? usage.completion_tokens ?? 0,
    cached: usage.input_tokens_details?.cached_tokens ?? usage.prompt_tokens_details?.cached_tokens ?? undefined,
  };
}

// ---- errors ----

export interface ErrorInfo {
  message: string;
  type: string;
  param: string | null;
  code: number;
}
export interface ErrorBody {
  error: ErrorInfo;
}

const ErrorInfoSchema = z.looseObject({
  message: z.string(),
  type: z.string().optional(),
  param: z.string().nullish(),
  code: z.union([z.number(), z.string()]).nullish(),
});
/** Current vLLM: {"error": {...}}. */
const NestedErrorSchema = z.looseObject({ error: ErrorInfoSchema });
/** Older vLLM (before ErrorInfo): {"object": "error", "message", "type", "param", "code"}. */
const FlatErrorSchema = ErrorInfoSchema.extend({ object: z.literal("error") });
/** FastAPI's own errors: {"detail": "..."}. */
const DetailErrorSchema = z.looseObject({ detail: z.unknown() });

/** The error of an error body in any of vLLM's formats, or undefined when it is none of them. */
export function parseErrorBody(body: unknown, status: number): ErrorInfo | undefined {
  const nested = NestedErrorSchema.safeParse(body);
  const info = nested.success ? nested.data.error : FlatErrorSchema.safeParse(body).data;
  if (info) {
    return { message: info.message, type: info.type ?? "", param: info.param ?? null, code: typeof info.code === "number" ? info.code : status };
  }
  const detail = DetailErrorSchema.safeParse(body);
  if (detail.success) {
    const d = detail.data.detail;
    return { message: typeof d === "string" ? d : JSON.stringify(d), type: "", param: null, code: status };
  }
  return undefined;
}

export function errorBody(code: number, type: string, message: string, param: string | null = null): ErrorBody {
  return { error: { message, type, param, code } };
}

/**
 * True when a 400 says the prompt does not fit max_model_len. vLLM raises VLLMValidationError with
 * parameter "input_tokens" (after tokenizing) or "input_text" (before, on characters); see
 * vllm/renderers/params.py _token_len_check / _text_len_check. Older versions had no param and said
 * "This model's maximum context length is N tokens", so the wording is the fallback.
 */
export function isContextLengthError(status: number, info: ErrorInfo | undefined): boolean {
  if (status !== 400 || !info) return false;
  if (info.param === "input_tokens" || info.param === "input_text") return true;
  // Current vLLM's structured decisions say "Winnow decision exceeds the model context", no figures
  // (vllm/entrypoints/openai/decisions/strategies.py).
  return /maximum context length|context length is only|maximum input length|exceeds the model context/i.test(info.message);
}

/**
 * True when the server has no such route: FastAPI's own 404 {"detail":"Not Found"} (a vLLM before
 * the endpoint, or a proxy that does not forward it) or 405, not vLLM's 404 for an unknown model
 * (an ErrorResponse with param "model", BaseServing._check_model).
 */
export function isRouteNotServed(status: number, info: ErrorInfo | undefined): boolean {
  if (status === 405) return true;
  return status === 404 && info?.param !== "model" && /^not found$/i.test(info?.message.trim() ?? "Not Found");
}

/**
 * True when a 503 refuses admission (the request's reads would overfill the engine's queue,
 * --max-num-queued-reqs; vllm/v1/engine/async_llm.py) rather than saying the engine is down: a
 * smaller request is admitted where the same one is refused again.
 */
export function isAdmissionRefusal(status: number, info: ErrorInfo | undefined): boolean {
  return status === 503 && !!info && /max_num_queued_reqs|server overloaded|queue is full/i.test(info.message);
}

/**
 * True when a 400/422 refuses the field logprob_token_ids itself (a vLLM before the field with a
 * strict proxy in front, or a server that forbids unknown fields), not one of its values: an id
 * outside the vocabulary or too many ids (vllm/sampling_params.py, MAX_LOGPROB_TOKEN_IDS) are
 * the request's fault, not a missing feature.
 */
export function isLogprobTokenIdsRejection(status: number, info: ErrorInfo | undefined): boolean {
  if ((status !== 400 && status !== 422) || !info) return false;
  if (/greater than max allowed|out-of-vocab/.test(info.message)) return false;
  return info.param === "logprob_token_ids" || info.message.includes("logprob_token_ids");
}

/**
 * The server's max_logprobs from a 400 "Requested sample logprobs of N, which is greater than max
 * allowed: M" (vLLM's logprobs check against --max-logprobs, vllm/v1/engine/processor.py
 * _validate_logprobs), else undefined.
 */
export function maxLogprobsAllowed(status: number, info: ErrorInfo | undefined): number | undefined {
  if (status !== 400 || !info) return undefined;
  const m = /sample logprobs of \d+, which is greater than max allowed: (\d+)/.exec(info.message);
  return m ? Number(m[1]) : undefined;
}

/**
 * How many tokens (or, for a check on characters, characters) a context-length 400 says the
 * prompt is over its limit, from the message: vllm/renderers/params.py _token_len_check "You
 * passed N input tokens ... maximum input length of M tokens" and _text_len_check "You passed N
 * input characters ... (at most X characters)"; older vLLM "This model's maximum context length
 * is L tokens. However, you requested N tokens" / "your request has N input tokens". Undefined
 * when the message gives no figures.
 */
export function contextLengthExcess(info: ErrorInfo): number | undefined {
  const m = info.message;
  const chars = /You passed (\d+) input characters.*at most (\d+) characters/s.exec(m);
  if (chars) return Number(chars[1]) - Number(chars[2]);
  const tokens = /You passed (\d+) input tokens.*maximum input length of (\d+) tokens/s.exec(m);
  if (tokens) return Number(tokens[1]) - Number(tokens[2]);
  const older = /maximum context length is (\d+) tokens.*(?:you requested|your request has) (\d+)/s.exec(m);
  if (older) return Number(older[2]) - Number(older[1]);
  return undefined;
}

/**
 * The server's questions-per-request limit from a 400 "questions: at most N for this model"
 * (vllm/entrypoints/openai/decisions/serving.py), else undefined.
 */
export function maxQuestionsAllowed(status: number, info: ErrorInfo | undefined): number | undefined {
  if (status !== 400 || !info) return undefined;
  const m = /questions: at most (\d+) for this model/.exec(info.message);
  return m ? Number(m[1]) : undefined;
}

// ---- /v1/models ----

export const ModelCardSchema = z.looseObject({
  id: z.string(),
  object: z.string().optional(),
  created: z.number().optional(),
  owned_by: z.string().optional(),
  root: z.string().nullish(),
  parent: z.string().nullish(),
  max_model_len: z.number().int().positive().nullish(),
});
export type ModelCard = z.infer<typeof ModelCardSchema>;

export const ModelListSchema = z.looseObject({
  object: z.string().optional(),
  data: z.array(ModelCardSchema),
});
export type ModelList = z.infer<typeof ModelListSchema>;

// ---- /v1/completions, /v1/chat/completions, /tokenize ----
// vllm/entrypoints/openai/completion/protocol.py (CompletionResponse, CompletionLogProbs),
// vllm/entrypoints/openai/chat_completion/protocol.py (ChatCompletionLogProbs content[] with
// top_logprobs[]), the tokenize protocol (TokenizeResponse {count, max_model_len, tokens,
// token_strs}). With return_tokens_as_token_ids the tokens read "token_id:<id>".

export const CompletionUsageSchema = z.looseObject({
  prompt_tokens: z.number().optional(),
  completion_tokens: z.number().nullish(),
  total_tokens: z.number().optional(),
  prompt_tokens_details: z.looseObject({ cached_tokens: z.number().nullish() }).nullish(),
});

export const CompletionResponseSchema = z.looseObject({
  model: z.string().optional(),
  choices: z
    .array(
      z.looseObject({
        text: z.string().nullish(),
        logprobs: z.looseObject({ top_logprobs: z.array(z.record(z.string(), z.number()).nullable()).nullish() }).nullish(),
      }),
    )
    .min(1),
  usage: CompletionUsageSchema.nullish(),
});
export type CompletionResponse = z.infer<typeof CompletionResponseSchema>;

const ChatTopLogprobSchema = z.looseObject({ token: z.string(), logprob: z.number() });
export const ChatCompletionResponseSchema = z.looseObject({
  model: z.string().optional(),
  choices: z
    .array(
      z.looseObject({
        logprobs: z.looseObject({ content: z.array(z.looseObject({ token: z.string(), logprob: z.number(), top_logprobs: z.array(ChatTopLogprobSchema).nullish() })).nullish() }).nullish(),
      }),
    )
    .min(1),
  usage: CompletionUsageSchema.nullish(),
});
export type ChatCompletionResponse = z.infer<typeof ChatCompletionResponseSchema>;

export const TokenizeResponseSchema = z.looseObject({
  count: z.number().int().nonnegative(),
  max_model_len: z.number().int().nullish(),
  tokens: z.array(z.number().int()),
  token_strs: z.array(z.string()).nullish(),
});
export type TokenizeResponse = z.infer<typeof TokenizeResponseSchema>;

/** POST /detokenize {model, tokens} answers {prompt}: the ids' text (vllm/entrypoints/serve/tokenize/protocol.py DetokenizeResponse). */
export const DetokenizeResponseSchema = z.looseObject({ prompt: z.string() });

/** The id in a "token_id:<id>" token string (return_tokens_as_token_ids), else undefined. */
export function tokenIdOf(token: string): number | undefined {
  const m = /^token_id:(\d+)$/.exec(token);
  return m ? Number(m[1]) : undefined;
}

// ---- /v1/decisions (vllm/entrypoints/openai/decisions/protocol.py) ----

export const DecisionAnswerSchema = z.looseObject({
  type: z.string(),
  name: z.string().nullish(),
  /** predicate: p(true). */
  probability: z.number().optional(),
  probabilities: z.array(z.looseObject({ value: z.union([z.string(), z.boolean(), z.number()]), probability: z.number() })).optional(),
});
export type DecisionAnswer = z.infer<typeof DecisionAnswerSchema>;

export const DecisionResponseSchema = z.looseObject({
  model: z.string(),
  answers: z.array(DecisionAnswerSchema),
  usage: SystemOneUsageSchema.optional(),
});
export type DecisionResponse = z.infer<typeof DecisionResponseSchema>;

/**
 * Questions per /v1/decisions request. DecisionRequest allows up to 200, but the serving backend
 * refuses more than its read strategy's limit with a 400 "questions: at most 64 for this model"
 * (vllm/entrypoints/openai/decisions/serving.py create_decisions; strategies.py
 * NextTokenStrategy.limits() max_questions=64).
 */
export const DECISIONS_MAX_QUESTIONS = 64;

// The `systemone` engine method: a record's questions go to vLLM's POST /v1/systemone in the suite's
// own format (state + questions), at most 64 per request; the requests of a record share the state,
// so the engine's prefix cache prefills it once. Limits and wording follow vLLM
// (common/vllm-protocol.ts cites the files).
import pRetry from "p-retry";
import { firstIssue, type Question } from "../../common/suite-schema.js";
import type { Distribution } from "../../common/result-schema.js";
import {
  isContextLengthError,
  ModelListSchema,
  SYSTEMONE_MAX_CHOICE_OPTIONS,
  SYSTEMONE_MAX_QUESTIONS,
  SystemOneResponseSchema,
  usageTokens,
  type SystemOneAnswer,
  type SystemOneRequest,
  type SystemOneResponse,
} from "../../common/vllm-protocol.js";
import type { EngineInfo, EngineMethod, RecordAnswer, RecordPayload } from "../engine-method.js";
import { EngineHttpError, EngineProtocolError, EngineRetriesExhaustedError, isRetryableEngineError, requestJson } from "../engine-http.js";

export interface SystemOneOptions {
  /** Engine base URL, e.g. http://127.0.0.1:8000. */
  baseUrl: string;
  /** Model name sent with each request; default none (vLLM then uses the served model). */
  model?: string;
  /** Records the engine usefully works on at once (the agent's credit). Default 8. */
  capacity?: number;
  /** Retries per HTTP request after the first attempt, on 429, 5xx, network errors, timeouts. Default 4. */
  retries?: number;
  /** First backoff, doubled each retry and randomized ×1..2. Default 250 ms. */
  minBackoffMs?: number;
  /** Longest backoff. Default 8000 ms. */
  maxBackoffMs?: number;
  /** Per HTTP request; a hung engine costs at most this per attempt. Default 120000 ms. */
  requestTimeoutMs?: number;
  /** Questions per request, at most vLLM's 64. Default 64. */
  maxQuestionsPerRequest?: number;
}

/** Where a question goes: systemone, or another method (label-read, later) for the reason given. */
export type SystemOneRoute = { to: "systemone" } | { to: "fallback"; reason: string };

/** The seam for label-read: questions /v1/systemone cannot take. */
export function routeSystemOne(question: Question): SystemOneRoute {
  if (question.type === "choice") {
    const n = Object.keys(question.criteria).length;
    if (n > SYSTEMONE_MAX_CHOICE_OPTIONS) {
      return { to: "fallback", reason: `choice with ${n} options: /v1/systemone reads one letter label per option, at most ${SYSTEMONE_MAX_CHOICE_OPTIONS} (needs label-read)` };
    }
    if (n === 0) return { to: "fallback", reason: "choice without options" };
  }
  return { to: "systemone" };
}

/** A question /v1/systemone answered 501 for: the engine has no structured-decisions support. */
function unsupportedMessage(err: EngineHttpError): string {
  return `engine does not support /v1/systemone (HTTP 501${err.info ? `: ${err.info.message}` : ""}; needs label-read)`;
}

const TOLERANCE = 1e-3;

/** The suite's distribution from one systemone answer, or a problem string. */
export function answerToDistribution(question: Question, answer: SystemOneAnswer): Distribution | string {
  if (answer.type !== question.type) return `engine answered type ${JSON.stringify(answer.type)} for a ${question.type} question`;
  if (question.type === "noul") {
    const p = answer.noul ?? answer.probabilities.yes;
    if (p === undefined || !Number.isFinite(p) || p < -TOLERANCE || p > 1 + TOLERANCE) return `noul answer without a probability of yes in [0,1] (got ${p})`;
    const yes = Math.min(1, Math.max(0, p));
    return { true: yes, false: 1 - yes };
  }
  const keys = Object.keys(question.criteria);
  const raw: number[] = [];
  for (const k of keys) {
    const p = answer.probabilities[k];
    if (p === undefined || !Number.isFinite(p) || p < 0) return `answer has no probability for option ${JSON.stringify(k)}`;
    raw.push(p);
  }
  const sum = raw.reduce((a, b) => a + b, 0);
  // Renormalise only against float error; a real shortfall means options are missing or renamed.
  if (Math.abs(sum - 1) > TOLERANCE) return `answer probabilities sum to ${sum}, not 1`;
  return Object.fromEntries(keys.map((k, i) => [k, raw[i]! / sum]));
}

export class SystemOneMethod implements EngineMethod {
  readonly name = "systemone" as const;
  private readonly baseUrl: string;
  private readonly retries: number;
  private readonly minBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly timeoutMs: number;
  private readonly maxQuestions: number;

  constructor(private readonly options: SystemOneOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.retries = options.retries ?? 4;
    this.minBackoffMs = options.minBackoffMs ?? 250;
    this.maxBackoffMs = options.maxBackoffMs ?? 8000;
    this.timeoutMs = options.requestTimeoutMs ?? 120_000;
    this.maxQuestions = Math.min(options.maxQuestionsPerRequest ?? SYSTEMONE_MAX_QUESTIONS, SYSTEMONE_MAX_QUESTIONS);
  }

  async info(signal?: AbortSignal): Promise<EngineInfo> {
    const url = `${this.baseUrl}/v1/models`;
    const parsed = ModelListSchema.safeParse(await requestJson(url, { method: "GET", timeoutMs: this.timeoutMs, signal }));
    if (!parsed.success) {
      const { field, message } = firstIssue(parsed.error);
      throw new EngineProtocolError(url, `${field || "body"}: ${message}`);
    }
    const cards = parsed.data.data;
    const card = this.options.model ? cards.find((c) => c.id === this.options.model) : cards[0];
    if (!card) {
      throw new EngineProtocolError(url, this.options.model ? `model ${JSON.stringify(this.options.model)} is not served (served: ${cards.map((c) => c.id).join(", ") || "none"})` : "no model served");
    }
    // vLLM always reports max_model_len; 0 stands for "not reported".
    return { model: card.id, maxModelLen: card.max_model_len ?? 0, capacity: this.options.capacity ?? 8 };
  }

  async answer(record: RecordPayload, signal: AbortSignal): Promise<RecordAnswer> {
    const started = performance.now();
    const out: RecordAnswer = {
      probs: {},
      skipped: [],
      errors: {},
      usage: { promptTokens: 0, cachedTokens: 0, completionTokens: 0, requests: 0 },
      latencyMs: 0,
      answeredBy: {},
      retries: 0,
      approximate: false,
    };
    const keys: string[] = [];
    for (const [key, q] of Object.entries(record.questions)) {
      const route = routeSystemOne(q);
      if (route.to === "systemone") keys.push(key);
      else out.errors[key] = route.reason;
    }
    // Sequential on purpose: the first request prefills the state, the later ones hit the cache.
    for (let i = 0; i < keys.length; i += this.maxQuestions) {
      await this.runBatch(record, keys.slice(i, i + this.maxQuestions), out, signal);
    }
    out.latencyMs = performance.now() - started;
    return out;
  }

  private async runBatch(record: RecordPayload, keys: string[], out: RecordAnswer, signal: AbortSignal): Promise<void> {
    let response: SystemOneResponse;
    try {
      response = await this.post(record, keys, out, signal);
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      if (err instanceof EngineHttpError && (err.status === 400 || err.status === 422) && keys.length > 1) {
        // vLLM rejects the whole request for one bad or oversized question: split to isolate it.
        const mid = Math.ceil(keys.length / 2);
        await this.runBatch(record, keys.slice(0, mid), out, signal);
        await this.runBatch(record, keys.slice(mid), out, signal);
        return;
      }
      if (err instanceof EngineHttpError && isContextLengthError(err.status, err.info)) {
        out.skipped.push(...keys);
        return;
      }
      const message = err instanceof EngineHttpError && err.status === 501 ? unsupportedMessage(err) : (err as Error).message;
      for (const k of keys) out.errors[k] = message;
      return;
    }
    const tokens = usageTokens(response.usage);
    out.usage.promptTokens += tokens.prompt;
    out.usage.cachedTokens += tokens.cached;
    out.usage.completionTokens += tokens.completion;
    for (const k of keys) {
      const answer = response.answers[k];
      const question = record.questions[k]!;
      const dist = answer ? answerToDistribution(question, answer) : "engine returned no answer for this question";
      if (typeof dist === "string") out.errors[k] = dist;
      else {
        out.probs[k] = dist;
        out.answeredBy[k] = "systemone";
      }
    }
  }

  /** One request with retries; counts every attempt and retry into `out`. */
  private async post(record: RecordPayload, keys: string[], out: RecordAnswer, signal: AbortSignal): Promise<SystemOneResponse> {
    const url = `${this.baseUrl}/v1/systemone`;
    const body: SystemOneRequest = {
      ...(this.options.model ? { model: this.options.model } : {}),
      state: record.state,
      // Exactly the three fields vLLM takes: a suite question may carry extra fields, and vLLM
      // answers 400 for any unknown field of a question.
      questions: Object.fromEntries(
        keys.map((k) => {
          const q = record.questions[k]!;
          return [k, { type: q.type, instructions: q.instructions, criteria: q.criteria }];
        }),
      ),
    };
    let attempts = 0;
    try {
      return await pRetry(
        async () => {
          attempts++;
          out.usage.requests++;
          const parsed = SystemOneResponseSchema.safeParse(await requestJson(url, { method: "POST", body, timeoutMs: this.timeoutMs, signal }));
          if (!parsed.success) {
            const { field, message } = firstIssue(parsed.error);
            throw new EngineProtocolError(url, `${field || "body"}: ${message}`);
          }
          return parsed.data;
        },
        {
          retries: this.retries,
          factor: 2,
          minTimeout: this.minBackoffMs,
          maxTimeout: this.maxBackoffMs,
          randomize: true,
          signal,
          shouldRetry: ({ error }) => isRetryableEngineError(error),
        },
      );
    } catch (err) {
      if (!signal.aborted && isRetryableEngineError(err)) throw new EngineRetriesExhaustedError(attempts, err as Error);
      throw err;
    } finally {
      out.retries += Math.max(0, attempts - 1);
    }
  }
}

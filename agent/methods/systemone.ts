// The `systemone` engine method: a record's questions go to vLLM's POST /v1/systemone in the suite's
// own format (state + questions), at most 64 per request; the requests of a record share the state,
// so the engine's prefix cache prefills it once. Limits and wording follow vLLM
// (common/vllm-protocol.ts cites the files).
import { readEngineInfo } from "./model-info.js";
import { combineSeedReads, inQuestionOrder } from "./seed-reads.js";
import { choiceDistribution, noulDistribution } from "./engine-distribution.js";
import type { Question } from "../../common/suite/schema.js";
import type { Distribution } from "../../common/results/format.js";
import {
  isContextLengthError,
  SYSTEMONE_MAX_CHOICE_OPTIONS,
  SYSTEMONE_MAX_QUESTIONS,
  SystemOneResponseSchema,
  usageTokens,
  type SystemOneAnswer,
  type SystemOneRequest,
  type SystemOneResponse,
} from "../../common/engine-protocol/vllm.js";
import { emptyAnswer, type EngineInfo, type EngineMethod, type RecordAnswer, type RecordPayload, type RunParams } from "../engine-method.js";
import { LabelReadMethod } from "./label-read.js";
import { StateFit } from "./state-fit.js";
import { callEngine } from "./engine-call.js";
import type { AdaptiveConcurrency } from "../adaptive-concurrency.js";
import { EngineHttpError } from "../engine-http.js";

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
  /** Label-permutation seeds (the request's `seed`), averaged per question; empty = one read without a seed. */
  seeds?: readonly number[];
  /** Gates every request (adaptive concurrency), shared with the label-read fallback. */
  limiter?: AdaptiveConcurrency;
  /** Reads the questions /v1/systemone cannot take; default a LabelReadMethod on the same engine. */
  labelRead?: LabelReadMethod;
}

/** Where a question goes: systemone, or label-read for the reason given. */
export type SystemOneRoute = { to: "systemone" } | { to: "fallback"; reason: string };

/** Questions /v1/systemone cannot take go to label-read. */
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

/** The suite's distribution from one systemone answer, or a problem string. */
export function answerToDistribution(question: Question, answer: SystemOneAnswer): Distribution | string {
  if (answer.type !== question.type) return `engine answered type ${JSON.stringify(answer.type)} for a ${question.type} question`;
  if (question.type === "noul") return noulDistribution(answer.noul ?? answer.probabilities.yes, "noul answer without a probability of yes");
  return choiceDistribution(Object.keys(question.criteria), (k) => answer.probabilities[k], "option");
}

export class SystemOneMethod implements EngineMethod {
  readonly name = "systemone" as const;
  private readonly baseUrl: string;
  private readonly retries: number;
  private readonly minBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly timeoutMs: number;
  private readonly maxQuestions: number;
  private seeds: number[];
  private labelReadMethod: LabelReadMethod | undefined;
  /** Set when the engine answered 501: every question goes to label-read from then on. */
  private unsupported = false;
  private maxModelLen = 0;
  private readonly stateFit: StateFit;

  constructor(private readonly options: SystemOneOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.retries = options.retries ?? 4;
    this.minBackoffMs = options.minBackoffMs ?? 250;
    this.maxBackoffMs = options.maxBackoffMs ?? 8000;
    this.timeoutMs = options.requestTimeoutMs ?? 120_000;
    this.maxQuestions = Math.min(options.maxQuestionsPerRequest ?? SYSTEMONE_MAX_QUESTIONS, SYSTEMONE_MAX_QUESTIONS);
    this.seeds = [...(options.seeds ?? [])];
    this.labelReadMethod = options.labelRead;
    this.stateFit = new StateFit(this.baseUrl, options.model, this.timeoutMs);
  }

  /** The run's label-permutation seeds (from --seeds or the coordinator's Welcome). */
  applyRunParams(params: RunParams): void {
    if (params.seeds.length > 0) this.setSeeds(params.seeds);
  }

  setSeeds(seeds: readonly number[]): void {
    this.seeds = [...seeds];
    this.labelReadMethod?.setSeeds(seeds);
  }

  private get labelRead(): LabelReadMethod {
    this.labelReadMethod ??= new LabelReadMethod({
      baseUrl: this.baseUrl,
      ...(this.options.model ? { model: this.options.model } : {}),
      seeds: this.seeds,
      retry: { retries: this.retries, minBackoffMs: this.minBackoffMs, maxBackoffMs: this.maxBackoffMs, timeoutMs: this.timeoutMs },
      ...(this.options.limiter ? { limiter: this.options.limiter } : {}),
    });
    return this.labelReadMethod;
  }

  async info(signal?: AbortSignal): Promise<EngineInfo> {
    const info = await readEngineInfo(this.baseUrl, this.options.model, this.options.capacity ?? 8, this.timeoutMs, signal);
    this.maxModelLen = info.maxModelLen;
    return info;
  }

  async answer(record: RecordPayload, signal: AbortSignal): Promise<RecordAnswer> {
    const started = performance.now();
    const out = emptyAnswer();
    let keys: string[] = [];
    const toLabelRead: string[] = [];
    for (const [key, q] of Object.entries(record.questions)) {
      if (this.unsupported || routeSystemOne(q).to === "fallback") toLabelRead.push(key);
      else keys.push(key);
    }
    if (keys.length > 0 && (await this.stateFit.cannotFit(record.state, this.maxModelLen, out, signal))) {
      out.skipped.push(...keys);
      keys = [];
    }
    const seeds: Array<number | null> = this.seeds.length > 0 ? this.seeds : [null];
    const reads = seeds.map((): RecordAnswer & { unsupported: string[] } => ({ ...out, probs: {}, errors: {}, skipped: [], answeredBy: {}, retries: 0, unsupported: [] }));
    for (const [i, seed] of seeds.entries()) {
      const read = reads[i]!;
      // Sequential on purpose: the first request prefills the state, the later ones hit the cache.
      for (let b = 0; b < keys.length; b += this.maxQuestions) {
        await this.runBatch(record, keys.slice(b, b + this.maxQuestions), read, signal, seed);
      }
      out.retries += read.retries;
    }
    combineSeedReads(keys, reads, "systemone", out, toLabelRead);
    if (toLabelRead.length > 0) await this.labelRead.answerQuestions(record, inQuestionOrder(record, toLabelRead), out, signal);
    out.latencyMs = performance.now() - started;
    return out;
  }

  private async runBatch(record: RecordPayload, keys: string[], out: RecordAnswer & { unsupported: string[] }, signal: AbortSignal, seed: number | null): Promise<void> {
    let response: SystemOneResponse;
    try {
      response = await this.post(record, keys, out, signal, seed);
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      if (err instanceof EngineHttpError && (err.status === 400 || err.status === 422) && keys.length > 1) {
        // vLLM rejects the whole request for one bad or oversized question: split to isolate it.
        const mid = Math.ceil(keys.length / 2);
        await this.runBatch(record, keys.slice(0, mid), out, signal, seed);
        await this.runBatch(record, keys.slice(mid), out, signal, seed);
        return;
      }
      if (err instanceof EngineHttpError && isContextLengthError(err.status, err.info)) {
        out.skipped.push(...keys);
        return;
      }
      if (err instanceof EngineHttpError && err.status === 501) {
        // No structured decisions for this model (vLLM answers 501): label-read takes over.
        this.unsupported = true;
        out.unsupported.push(...keys);
        return;
      }
      for (const k of keys) out.errors[k] = (err as Error).message;
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
  private async post(record: RecordPayload, keys: string[], out: RecordAnswer, signal: AbortSignal, seed: number | null): Promise<SystemOneResponse> {
    const url = `${this.baseUrl}/v1/systemone`;
    const body: SystemOneRequest = {
      ...(this.options.model ? { model: this.options.model } : {}),
      ...(seed !== null ? { seed } : {}),
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
    return callEngine(url, body, SystemOneResponseSchema, { retries: this.retries, minBackoffMs: this.minBackoffMs, maxBackoffMs: this.maxBackoffMs, timeoutMs: this.timeoutMs, limiter: this.options.limiter }, out, signal);
  }
}

// The skeleton shared by the engine methods that send a record's questions in batches to one
// decision endpoint (systemone: POST /v1/systemone, decisions: POST /v1/decisions):
//   route the questions the endpoint cannot take to label-read, check that the record's state fits
//   max_model_len, read every seed as sequential batches (the first request prefills the state,
//   the later ones hit the prefix cache), combine the seeds' reads per question, and hand what the
//   endpoint could not read (501: no decisions for this model) to label-read.
// A DecisionEndpoint says what differs: the endpoint, its question limits, the request body and how
// an answer becomes the suite's distribution.
import type { z } from "zod";
import type { Distribution } from "../../common/results/format.js";
import type { Question } from "../../common/suite/schema.js";
import { isContextLengthError, usageTokens, type SystemOneUsage } from "../../common/engine-protocol/vllm.js";
import { emptyAnswer, type EngineInfo, type EngineMethod, type RecordAnswer, type RecordPayload, type RunParams } from "../engine-method.js";
import { EngineHttpError } from "../engine-http.js";
import { callEngine, DEFAULT_RETRY_POLICY, type RetryPolicy } from "./engine-call.js";
import { LabelReadMethod } from "./label-read.js";
import type { MethodOptions } from "./method-options.js";
import { readEngineInfo } from "./model-info.js";
import { RunSeeds } from "./run-seeds.js";
import { combineSeedReads, inQuestionOrder, type SeedRead as BaseSeedRead } from "./seed-reads.js";
import { StateFit } from "./state-fit.js";

export interface BatchedMethodOptions extends MethodOptions {
  /** Questions per request, at most the endpoint's own limit (the default). */
  maxQuestionsPerRequest?: number;
  /** Reads the questions the endpoint cannot take; default a LabelReadMethod on the same engine. */
  labelRead?: LabelReadMethod;
}

/** Where a question goes: the method's endpoint, or label-read for the reason given. */
export type QuestionRoute = { to: "endpoint" } | { to: "fallback"; reason: string };

/** A decision endpoint's response as far as the skeleton reads it. */
export interface EndpointResponse {
  usage?: SystemOneUsage | undefined;
}

/** What the skeleton needs to know of the endpoint. */
export interface DecisionEndpoint<R extends EndpointResponse, A = unknown> {
  /** The engine method's name (--method). */
  method: "systemone" | "decisions";
  /** e.g. /v1/systemone */
  path: string;
  /** Questions per request the endpoint takes. */
  maxQuestions: number;
  responseSchema: z.ZodType<R>;
  /** Whether the endpoint can take the question at all. */
  route(question: Question): QuestionRoute;
  /** The request body for `keys` of the record. */
  body(record: RecordPayload, keys: readonly string[], request: BatchRequest): unknown;
  /** The answer to the question `key`, the `index`th of the batch, when the response has one. */
  answerOf(response: R, key: string, index: number): A | undefined;
  /** The suite's distribution from one answer, or a problem string. */
  distribution(question: Question, answer: A): Distribution | string;
}

/** What a batch's request body depends on besides the questions. */
export interface BatchRequest {
  /** Label-permutation seed; null: no seed, natural order. */
  seed: number | null;
  /** The engine as /v1/models showed it. */
  info: EngineInfo;
  /** --model, when given. */
  model: string | undefined;
}

/** One seed's read of the record, filled in batch by batch. */
type SeedRead = BaseSeedRead & { skipped: Set<string>; unsupported: Set<string> };

export class BatchedEndpointMethod<R extends EndpointResponse, A> implements EngineMethod {
  readonly name: "systemone" | "decisions";
  protected readonly baseUrl: string;
  protected readonly policy: RetryPolicy;
  private readonly maxQuestions: number;
  private readonly seeds: RunSeeds;
  private labelReadMethod: LabelReadMethod | undefined;
  private readonly stateFit: StateFit;
  private info_: EngineInfo | undefined;
  /** Set when the engine answered 501: every question goes to label-read from then on. */
  private unsupported = false;

  constructor(
    protected readonly options: BatchedMethodOptions,
    private readonly endpoint: DecisionEndpoint<R, A>,
  ) {
    this.name = endpoint.method;
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.policy = { ...DEFAULT_RETRY_POLICY, ...options.retry, limiter: options.limiter };
    this.maxQuestions = Math.min(options.maxQuestionsPerRequest ?? endpoint.maxQuestions, endpoint.maxQuestions);
    this.seeds = new RunSeeds(options.seeds);
    this.labelReadMethod = options.labelRead;
    this.stateFit = new StateFit(this.baseUrl, options.model, this.policy.timeoutMs);
  }

  /** The run's label-permutation seeds (from --seeds or the coordinator's Welcome). */
  applyRunParams(params: RunParams): void {
    this.seeds.apply(params);
    this.labelReadMethod?.applyRunParams(params);
  }

  async info(signal?: AbortSignal): Promise<EngineInfo> {
    this.info_ = await readEngineInfo(this.baseUrl, this.options.model, this.options.capacity ?? 8, this.policy.timeoutMs, signal);
    return this.info_;
  }

  private get labelRead(): LabelReadMethod {
    if (!this.labelReadMethod) {
      const { maxQuestionsPerRequest: _max, labelRead: _given, ...shared } = this.options;
      this.labelReadMethod = new LabelReadMethod({ ...shared, retry: this.policy });
      this.labelReadMethod.applyRunParams({ seeds: this.seeds.current });
    }
    return this.labelReadMethod;
  }

  async answer(record: RecordPayload, signal: AbortSignal): Promise<RecordAnswer> {
    const started = performance.now();
    const out = emptyAnswer();
    const info = this.info_ ?? (await this.info(signal));
    const keys: string[] = [];
    const toLabelRead: string[] = [];
    for (const [key, q] of Object.entries(record.questions)) {
      if (this.unsupported || this.endpoint.route(q).to === "fallback") toLabelRead.push(key);
      else keys.push(key);
    }
    if (keys.length > 0 && (await this.stateFit.cannotFit(record.state, info.maxModelLen, out, signal))) {
      out.skipped.push(...keys.splice(0));
    }
    const seeds: Array<number | null> = this.seeds.current.length > 0 ? [...this.seeds.current] : [null];
    const reads: SeedRead[] = [];
    for (const seed of seeds) {
      const read: SeedRead = { probs: {}, errors: {}, skipped: new Set(), unsupported: new Set() };
      // Sequential on purpose: the first request prefills the state, the later ones hit the cache.
      for (let b = 0; b < keys.length; b += this.maxQuestions) await this.readBatch(record, keys.slice(b, b + this.maxQuestions), seed, info, read, out, signal);
      reads.push(read);
    }
    combineSeedReads(keys, reads, this.name, out, toLabelRead);
    if (toLabelRead.length > 0) await this.labelRead.answerQuestions(record, inQuestionOrder(record, toLabelRead), out, signal);
    out.latencyMs = performance.now() - started;
    return out;
  }

  /** One request for `keys`; what it cannot answer lands in the seed's read. */
  private async readBatch(record: RecordPayload, keys: string[], seed: number | null, info: EngineInfo, read: SeedRead, out: RecordAnswer, signal: AbortSignal): Promise<void> {
    let response: R;
    try {
      response = await callEngine(`${this.baseUrl}${this.endpoint.path}`, this.endpoint.body(record, keys, { seed, info, model: this.options.model }), this.endpoint.responseSchema, this.policy, out, signal);
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      if (err instanceof EngineHttpError && (err.status === 400 || err.status === 422) && keys.length > 1) {
        // vLLM rejects the whole request for one bad or oversized question: split to isolate it.
        const mid = Math.ceil(keys.length / 2);
        await this.readBatch(record, keys.slice(0, mid), seed, info, read, out, signal);
        await this.readBatch(record, keys.slice(mid), seed, info, read, out, signal);
        return;
      }
      if (err instanceof EngineHttpError && isContextLengthError(err.status, err.info)) {
        for (const k of keys) read.skipped.add(k);
        return;
      }
      if (err instanceof EngineHttpError && err.status === 501) {
        // No structured decisions for this model (vLLM answers 501): label-read takes over.
        this.unsupported = true;
        for (const k of keys) read.unsupported.add(k);
        return;
      }
      for (const k of keys) read.errors[k] = (err as Error).message;
      return;
    }
    const tokens = usageTokens(response.usage);
    out.usage.promptTokens += tokens.prompt;
    out.usage.cachedTokens += tokens.cached;
    out.usage.completionTokens += tokens.completion;
    keys.forEach((key, i) => {
      const answer = this.endpoint.answerOf(response, key, i);
      const dist = answer ? this.endpoint.distribution(record.questions[key]!, answer) : "engine returned no answer for this question";
      if (typeof dist === "string") read.errors[key] = dist;
      else read.probs[key] = dist;
    });
  }
}

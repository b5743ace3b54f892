// The `decisions` engine method: OpenAI's Decisions API as vLLM serves it, POST /v1/decisions
// (vllm/entrypoints/openai/decisions/protocol.py): `input` is the record's state as JSON text,
// each noul question a `predicate` (answer: probability of true), each choice a `choice` whose
// values are the option keys (answer: probabilities[{value, probability}]), named by question key.
// At most 200 questions per request; vLLM reads them with the state as a shared prefix. Choices
// with more than 26 options (vLLM: "This model supports at most 26 choices per question") or
// fewer than 2, and everything once the engine answered 501, go to label-read. Seeds reorder a
// choice's options (the API has no seed field; the label an option gets follows its position) and
// the answers are averaged.
import { combineSeedReads, inQuestionOrder, type SeedRead as BaseSeedRead } from "./seed-reads.js";
import { choiceDistribution, noulDistribution } from "./engine-distribution.js";
import { labelPermutation } from "../../common/engine-protocol/label-permutation.js";
import type { Distribution } from "../../common/results/format.js";
import type { Question } from "../../common/suite/schema.js";
import { DECISIONS_MAX_QUESTIONS, DecisionResponseSchema, isContextLengthError, SYSTEMONE_MAX_CHOICE_OPTIONS, usageTokens, type DecisionAnswer } from "../../common/engine-protocol/vllm.js";
import type { AdaptiveConcurrency } from "../adaptive-concurrency.js";
import { emptyAnswer, type EngineInfo, type EngineMethod, type RecordAnswer, type RecordPayload, type RunParams } from "../engine-method.js";
import { EngineHttpError } from "../engine-http.js";
import { callEngine, DEFAULT_RETRY_POLICY, type RetryPolicy } from "./engine-call.js";
import { LabelReadMethod } from "./label-read.js";
import { readEngineInfo } from "./model-info.js";
import { StateFit } from "./state-fit.js";

export interface DecisionsOptions {
  baseUrl: string;
  model?: string;
  capacity?: number;
  seeds?: readonly number[];
  retry?: Partial<RetryPolicy>;
  limiter?: AdaptiveConcurrency;
  /** Questions per request, at most 200. */
  maxQuestionsPerRequest?: number;
  labelRead?: LabelReadMethod;
}

/** One seed's read, with sets the batches fill in. */
type SeedRead = BaseSeedRead & { skipped: Set<string>; unsupported: Set<string> };

/** The suite's distribution from one Decisions answer, or a problem string. */
export function decisionToDistribution(question: Question, answer: DecisionAnswer): Distribution | string {
  if (question.type === "noul") {
    if (answer.type !== "predicate") return `engine answered type ${JSON.stringify(answer.type)} for a predicate`;
    return noulDistribution(answer.probability, "predicate answer without a probability");
  }
  if (answer.type !== "choice") return `engine answered type ${JSON.stringify(answer.type)} for a choice`;
  const byValue = new Map((answer.probabilities ?? []).map((e) => [String(e.value), e.probability]));
  return choiceDistribution(Object.keys(question.criteria), (k) => byValue.get(k), "choice");
}

export class DecisionsMethod implements EngineMethod {
  readonly name = "decisions" as const;
  private readonly baseUrl: string;
  private readonly policy: RetryPolicy;
  private readonly maxQuestions: number;
  private seeds: number[];
  private unsupported = false;
  private info_: EngineInfo | undefined;
  private labelReadMethod: LabelReadMethod | undefined;
  private readonly stateFit: StateFit;

  constructor(private readonly options: DecisionsOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.policy = { ...DEFAULT_RETRY_POLICY, ...options.retry, limiter: options.limiter };
    this.maxQuestions = Math.min(options.maxQuestionsPerRequest ?? DECISIONS_MAX_QUESTIONS, DECISIONS_MAX_QUESTIONS);
    this.seeds = [...(options.seeds ?? [])];
    this.labelReadMethod = options.labelRead;
    this.stateFit = new StateFit(this.baseUrl, options.model, this.policy.timeoutMs);
  }

  applyRunParams(params: RunParams): void {
    if (params.seeds.length > 0) this.setSeeds(params.seeds);
  }

  setSeeds(seeds: readonly number[]): void {
    this.seeds = [...seeds];
    this.labelReadMethod?.setSeeds(seeds);
  }

  private get labelRead(): LabelReadMethod {
    this.labelReadMethod ??= new LabelReadMethod({ baseUrl: this.baseUrl, ...(this.options.model ? { model: this.options.model } : {}), seeds: this.seeds, retry: this.policy, ...(this.options.limiter ? { limiter: this.options.limiter } : {}) });
    return this.labelReadMethod;
  }

  async info(signal?: AbortSignal): Promise<EngineInfo> {
    this.info_ = await readEngineInfo(this.baseUrl, this.options.model, this.options.capacity ?? 8, this.policy.timeoutMs, signal);
    return this.info_;
  }

  async answer(record: RecordPayload, signal: AbortSignal): Promise<RecordAnswer> {
    const started = performance.now();
    const out = emptyAnswer();
    const info = this.info_ ?? (await this.info(signal));
    const keys: string[] = [];
    const toLabelRead: string[] = [];
    for (const [key, q] of Object.entries(record.questions)) {
      const n = q.type === "choice" ? Object.keys(q.criteria).length : 2;
      if (this.unsupported || n < 2 || n > SYSTEMONE_MAX_CHOICE_OPTIONS) toLabelRead.push(key);
      else keys.push(key);
    }
    if (keys.length > 0 && (await this.stateFit.cannotFit(record.state, info.maxModelLen, out, signal))) {
      out.skipped.push(...keys.splice(0));
    }
    const seeds = this.seeds.length > 0 ? this.seeds : [0];
    const reads: SeedRead[] = [];
    for (const seed of seeds) {
      const read: SeedRead = { probs: {}, skipped: new Set(), errors: {}, unsupported: new Set() };
      // Sequential: the first request prefills the state, the later ones hit the prefix cache.
      for (let b = 0; b < keys.length; b += this.maxQuestions) await this.runBatch(record, keys.slice(b, b + this.maxQuestions), seed, info.model, read, out, signal);
      reads.push(read);
    }
    combineSeedReads(keys, reads, this.name, out, toLabelRead);
    if (toLabelRead.length > 0) await this.labelRead.answerQuestions(record, inQuestionOrder(record, toLabelRead), out, signal);
    out.latencyMs = performance.now() - started;
    return out;
  }

  private async runBatch(record: RecordPayload, keys: string[], seed: number, model: string, read: SeedRead, out: RecordAnswer, signal: AbortSignal): Promise<void> {
    const questions = keys.map((key) => {
      const q = record.questions[key]!;
      if (q.type === "noul") {
        const sides = [q.criteria.true ? `true means: ${q.criteria.true}` : "", q.criteria.false ? `false means: ${q.criteria.false}` : ""].filter(Boolean);
        return { type: "predicate", name: key, instructions: sides.length ? `${q.instructions} (${sides.join("; ")})` : q.instructions };
      }
      const optionKeys = Object.keys(q.criteria);
      const positions = labelPermutation(seed, optionKeys.length);
      const ordered = optionKeys.map((k, i) => ({ k, at: positions[i]! })).sort((a, b) => a.at - b.at);
      return { type: "choice", name: key, instructions: q.instructions, choices: ordered.map(({ k }) => ({ value: k, description: q.criteria[k] ?? "" })) };
    });
    const body = { model, input: JSON.stringify(record.state), questions };
    let response;
    try {
      response = await callEngine(`${this.baseUrl}/v1/decisions`, body, DecisionResponseSchema, this.policy, out, signal);
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      if (err instanceof EngineHttpError && (err.status === 400 || err.status === 422) && keys.length > 1) {
        // One oversized or refused question fails the whole request: split to isolate it.
        const mid = Math.ceil(keys.length / 2);
        await this.runBatch(record, keys.slice(0, mid), seed, model, read, out, signal);
        await this.runBatch(record, keys.slice(mid), seed, model, read, out, signal);
        return;
      }
      if (err instanceof EngineHttpError && isContextLengthError(err.status, err.info)) {
        for (const k of keys) read.skipped.add(k);
        return;
      }
      if (err instanceof EngineHttpError && err.status === 501) {
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
    keys.forEach((k, i) => {
      const answer = response.answers[i];
      const dist = answer ? decisionToDistribution(record.questions[k]!, answer) : "engine returned no answer for this question";
      if (typeof dist === "string") read.errors[k] = dist;
      else read.probs[k] = dist;
    });
  }
}

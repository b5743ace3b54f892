// The skeleton shared by the engine methods that send a record's questions in batches to one
// decision endpoint (systemone: POST /v1/systemone, decisions: POST /v1/decisions):
//   probe at startup (and whenever the engine was away) whether the endpoint is served at all, route
//   the questions the endpoint cannot take to label-read, check that the record's state fits
//   max_model_len, read every seed as sequential batches (the first request prefills the state,
//   the later ones hit the prefix cache), combine the seeds' reads per question, and hand what the
//   endpoint could not read (501: no decisions for this model; 404/405: no such route) to label-read.
// Seeds never change the method: where the engine ignores the `seed` field, they are read through
// the same endpoint with each question's options reordered per seed (the label an option gets
// follows its position), as /v1/decisions always does.
// A DecisionEndpoint says what differs: the endpoint, its question limits, the request body and how
// an answer becomes the suite's distribution.
import type { z } from "zod";
import type { Distribution } from "../../common/results/index.js";
import type { Question } from "../../common/suite/index.js";
import { contextLengthExcess, isAdmissionRefusal, isContextLengthError, isRouteNotServed, maxQuestionsAllowed, usageTokens, type ErrorInfo, type SystemOneUsage } from "../../common/engine-protocol/index.js";
import { addUsage, emptyAnswer, type EngineInfo, type EngineMethod, type RecordAnswer, type RecordPayload, type RunParams } from "../engine-method.js";
import { EngineHttpError, EngineRetriesExhaustedError, EngineUnreachableError, EngineTimeoutError } from "../engine-http.js";
import { EngineSettingsCheck } from "../engine-settings.js";
import { isKeyRefusal } from "../engine-auth.js";
import { callEngine, DEFAULT_RETRY_POLICY, type RetryPolicy } from "./engine-call.js";
import { LabelReadMethod } from "./label-read.js";
import type { MethodOptions } from "./method-options.js";
import { readEngineInfo } from "./model-info.js";
import { RunSeeds } from "./run-seeds.js";
import { combineSeedReads, inQuestionOrder, type SeedRead as BaseSeedRead } from "./seed-reads.js";
import { StateFit } from "./state-fit.js";
import { probeSystemOneSeed } from "./seed-probe.js";

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
  /**
   * Seeds go to the engine as the request's `seed` field (systemone), which not every engine
   * honours (then BatchRequest.seedAs is "order"); otherwise the body applies them itself
   * (decisions reorders the options).
   */
  seedField: boolean;
  responseSchema: z.ZodType<R>;
  /** Whether the endpoint can take the question at all. */
  route(question: Question): QuestionRoute;
  /** A question whose request does not change with the seed (read the given way): read under the first seed only. */
  seedInvariant?(question: Question, seedAs: SeedAs): boolean;
  /** The request body for `keys` of the record. */
  body(record: RecordPayload, keys: readonly string[], request: BatchRequest): unknown;
  /** The answer to the question `key`, the `index`th of the batch, when the response has one. */
  answerOf(response: R, key: string, index: number): A | undefined;
  /** The suite's distribution from one answer, or a problem string. */
  distribution(question: Question, answer: A): Distribution | string;
  /** The labels of an answer that are not options of the question (dropped from the distribution). */
  unknownLabels(question: Question, answer: A): string[];
}

/** How a seed reaches the engine: its `seed` field, or the order of each question's options. */
export type SeedAs = "field" | "order";

/** What a batch's request body depends on besides the questions. */
export interface BatchRequest {
  /** Label-permutation seed; null: no seed, natural order. */
  seed: number | null;
  /** "order": the engine ignores `seed`, so the body reorders the options itself (labelPermutation). */
  seedAs: SeedAs;
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
  /** Questions per request: the endpoint's limit, lowered when the server names a smaller one. */
  private maxQuestions: number;
  private readonly seeds: RunSeeds;
  private labelReadMethod: LabelReadMethod | undefined;
  private readonly stateFit: StateFit;
  private readonly settings: EngineSettingsCheck;
  private info_: EngineInfo | undefined;
  /** Set when the engine answered 501/404/405 for the endpoint: every question goes to label-read until a probe finds it served. */
  private unsupported = false;
  /** The startup probe of the endpoint, once per engine life (asked again after the engine was away or changed model). */
  private endpointProbe: Promise<void> | undefined;
  /** Whether the engine honours the seed field (seedField endpoints), once asked. */
  private seedHonoured: Promise<boolean> | undefined;
  /** The run's seeds arrived after startup: ask on the next record. */
  private seedProbeWanted = false;
  private unknownLabelsLogged = false;

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
    this.settings = new EngineSettingsCheck(this.baseUrl, options.logger);
  }

  /** The run's label-permutation seeds (from --seeds or the coordinator's Welcome). */
  applyRunParams(params: RunParams): void {
    this.seeds.apply(params);
    this.labelReadMethod?.applyRunParams(params);
    if (this.needsSeedField) this.seedProbeWanted = true;
  }

  /**
   * The engine's model and limits; at startup (and after the engine was away) also whether it
   * serves the endpoint, and with seeds whether it honours the seed field.
   */
  async info(signal?: AbortSignal): Promise<EngineInfo> {
    const info = await this.readInfo(signal);
    await this.settings.check(info, signal);
    await this.probeEndpoint(info, signal);
    if (this.needsSeedField && !this.unsupported) await this.seedFieldHonoured(signal);
    return info;
  }

  private async readInfo(signal?: AbortSignal): Promise<EngineInfo> {
    let info: EngineInfo;
    try {
      info = await readEngineInfo(this.baseUrl, this.options.model, this.options.capacity ?? 8, this.policy.timeoutMs, signal);
    } catch (err) {
      // The engine is away (restarting, replaced): what it serves is asked again when it is back.
      if (err instanceof EngineUnreachableError || err instanceof EngineTimeoutError || err instanceof EngineHttpError) this.forgetEngine();
      throw err;
    }
    // Another model (the engine restarted with another one) may be another vLLM: ask again.
    if (this.info_ && this.info_.model !== info.model) this.forgetEngine();
    this.info_ = info;
    return info;
  }

  /** What was learnt of the engine (endpoint served, seed honoured) is asked again at the next probe. */
  private forgetEngine(): void {
    this.endpointProbe = undefined;
    this.seedHonoured = undefined;
  }

  /**
   * One small request to the endpoint: 501 (no structured decisions for this model), 404 or 405 (no
   * such route: a vLLM before it, a proxy) mean "not served", and every question goes to label-read,
   * said once; any other answer from the route (2xx, 400, 422) means served. An engine that fails
   * otherwise (5xx, away) is asked again at the next probe.
   */
  private probeEndpoint(info: EngineInfo, signal?: AbortSignal): Promise<void> {
    this.endpointProbe ??= (async () => {
      const body = this.endpoint.body(PROBE_RECORD, Object.keys(PROBE_RECORD.questions), { seed: null, seedAs: "field", info, model: this.options.model });
      try {
        await callEngine(`${this.baseUrl}${this.endpoint.path}`, body, this.endpoint.responseSchema, { ...this.policy, retries: 0 }, emptyAnswer(), signal ?? new AbortController().signal);
        this.setServed(true);
      } catch (err) {
        if (err instanceof EngineHttpError && (err.status === 501 || isRouteNotServed(err.status, err.info))) this.setServed(false, err.status);
        // A refused API key says nothing of the route: asked again once the key is accepted.
        else if (err instanceof EngineHttpError && err.status >= 400 && err.status < 500 && err.status !== 408 && err.status !== 429 && !isKeyRefusal(err.status)) this.setServed(true);
        else this.endpointProbe = undefined;
      }
    })();
    // An engine slow or hung on the endpoint must not hold the agent's start: after a short wait
    // the agent goes on (its own requests find the same answer) and the probe, still waiting on its
    // request, settles what is served when it is answered.
    return waitAtMost(this.endpointProbe, ENDPOINT_PROBE_WAIT_MS);
  }

  /** The endpoint is (not) served: said when that changes, the first "not served" as a warning. */
  private setServed(served: boolean, status?: number): void {
    if (served) {
      if (this.unsupported) this.options.logger?.info(`${this.endpoint.path} is served by this engine again: questions go to ${this.endpoint.method}`);
      this.unsupported = false;
      return;
    }
    if (!this.unsupported) this.options.logger?.warn(`${this.endpoint.path} is not served by this engine (HTTP ${status}): questions are read by label-read`);
    this.unsupported = true;
  }

  private get needsSeedField(): boolean {
    return this.endpoint.seedField && this.seeds.current.length > 0;
  }

  /**
   * Whether the engine honours the seed field, asked once (seed-probe.ts) and said once. Where it
   * does not, the seeds are read through the same endpoint with each question's options reordered
   * per seed: the method stays the same, only how the seed reaches the engine changes.
   */
  private seedFieldHonoured(signal?: AbortSignal): Promise<boolean> {
    this.seedProbeWanted = false;
    this.seedHonoured ??= probeSystemOneSeed(this.baseUrl, this.options.model, this.policy, signal).then(
      (probe) => {
        const seen = probe ? ` (a same-seed repeat moved a probability by ${probe.sameSeedChange.toFixed(4)}, other seeds by ${probe.otherSeedChange.toFixed(4)})` : "";
        if (probe?.honoured === false) {
          this.options.logger?.warn(`the engine ignores \`seed\` on ${this.endpoint.path}${seen}: label-permutation seeds are read by ${this.endpoint.method} with each question's options reordered per seed`);
        } else if (probe?.honoured) this.options.logger?.info(`the engine honours \`seed\` on ${this.endpoint.path}${seen}`);
        return probe?.honoured !== false;
      },
      (err: unknown) => {
        // Asked again at the next startup probe or record.
        this.seedHonoured = undefined;
        this.seedProbeWanted = true;
        throw err;
      },
    );
    return this.seedHonoured;
  }

  /** How this record's seeds reach the engine: "order" where it ignores the seed field. */
  private async seedAs(signal: AbortSignal): Promise<SeedAs> {
    if (!this.needsSeedField) return this.endpoint.seedField ? "field" : "order";
    if (!this.seedHonoured && !this.seedProbeWanted) return "field";
    try {
      return (await this.seedFieldHonoured(signal)) ? "field" : "order";
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      return "field";
    }
  }

  private get labelRead(): LabelReadMethod {
    if (!this.labelReadMethod) {
      const { maxQuestionsPerRequest: _max, labelRead: _given, ...shared } = this.options;
      this.labelReadMethod = new LabelReadMethod({ ...shared, retry: this.policy, stateFit: this.stateFit });
      this.labelReadMethod.applyRunParams({ seeds: this.seeds.current });
    }
    return this.labelReadMethod;
  }

  async answer(record: RecordPayload, signal: AbortSignal): Promise<RecordAnswer> {
    const started = performance.now();
    const out = emptyAnswer();
    const info = this.info_ ?? (await this.readInfo(signal));
    const allToLabelRead = this.unsupported;
    const seedAs = allToLabelRead ? "field" : await this.seedAs(signal);
    const keys: string[] = [];
    const toLabelRead: string[] = [];
    for (const [key, q] of Object.entries(record.questions)) {
      if (allToLabelRead || this.endpoint.route(q).to === "fallback") toLabelRead.push(key);
      else keys.push(key);
    }
    if (keys.length > 0 && (await this.stateFit.cannotFit(record.state, info.maxModelLen, out, signal))) {
      out.skipped.push(...keys.splice(0));
    }
    const seeds: Array<number | null> = this.seeds.current.length > 0 ? [...this.seeds.current] : [null];
    const reads: SeedRead[] = [];
    const invariant = (key: string): boolean => this.endpoint.seedInvariant?.(record.questions[key]!, seedAs) ?? false;
    for (const [i, seed] of seeds.entries()) {
      const read: SeedRead = { probs: {}, errors: {}, skipped: new Set(), unsupported: new Set() };
      const seedKeys = i === 0 ? keys : keys.filter((k) => !invariant(k));
      // Sequential on purpose: the first request prefills the state, the later ones hit the cache.
      for (const batch of inBatches(seedKeys, this.maxQuestions)) await this.readBatch(record, batch, { seed, seedAs, info, model: this.options.model }, read, out, signal);
      reads.push(read);
    }
    for (const key of keys) combineSeedReads([key], invariant(key) ? reads.slice(0, 1) : reads, this.name, out, toLabelRead);
    if (toLabelRead.length > 0) await this.labelRead.answerQuestions(record, inQuestionOrder(record, toLabelRead), out, signal);
    out.latencyMs = performance.now() - started;
    return out;
  }

  private async readHalves(record: RecordPayload, keys: string[], request: BatchRequest, read: SeedRead, out: RecordAnswer, signal: AbortSignal): Promise<void> {
    const mid = Math.ceil(keys.length / 2);
    await this.readBatch(record, keys.slice(0, mid), request, read, out, signal);
    await this.readBatch(record, keys.slice(mid), request, read, out, signal);
  }

  /** One request for `keys`; what it cannot answer lands in the seed's read. */
  private async readBatch(record: RecordPayload, keys: string[], request: BatchRequest, read: SeedRead, out: RecordAnswer, signal: AbortSignal): Promise<void> {
    let response: R;
    // A batch the engine will not admit (503, queue full) is cut rather than sent again as is.
    const policy: RetryPolicy = keys.length > 1 ? { ...this.policy, giveUpOn: admissionRefused } : this.policy;
    try {
      response = await callEngine(`${this.baseUrl}${this.endpoint.path}`, this.endpoint.body(record, keys, request), this.endpoint.responseSchema, policy, out, signal);
    } catch (caught) {
      if (signal.aborted) throw signal.reason;
      const err = caught instanceof EngineRetriesExhaustedError ? caught.last : caught;
      if (keys.length > 1 && admissionRefused(err)) {
        // vLLM admits a batch by its question count (--max-num-queued-reqs): half the size from now on.
        const half = Math.ceil(keys.length / 2);
        if (half < this.maxQuestions) this.options.logger?.warn(`${this.endpoint.path}: the engine refused a batch of ${keys.length} questions (503, queue full); batches of ${half} from now on`);
        this.maxQuestions = Math.min(this.maxQuestions, half);
        return this.readHalves(record, keys, request, read, out, signal);
      }
      if (err instanceof EngineHttpError && isContextLengthError(err.status, err.info)) {
        // Recognised before any split: when no question of the batch can fit, splitting would
        // only repeat the 400 for every half.
        // A message without figures (current vLLM's "Winnow decision exceeds the model context")
        // cannot tell which question is over: splitting would cost 2N-1 requests to learn it.
        if (keys.length === 1 || contextLengthExcess(err.info!) === undefined || noQuestionFits(record, keys, err.info!)) {
          for (const k of keys) read.skipped.add(k);
          return;
        }
        return this.readHalves(record, keys, request, read, out, signal);
      }
      const allowed = err instanceof EngineHttpError ? maxQuestionsAllowed(err.status, err.info) : undefined;
      if (allowed !== undefined && allowed >= 1 && allowed < keys.length) {
        // A server with a smaller limit than vLLM's 64: from now on batches of its size.
        this.maxQuestions = Math.min(this.maxQuestions, allowed);
        for (const batch of inBatches(keys, allowed)) await this.readBatch(record, batch, request, read, out, signal);
        return;
      }
      if (err instanceof EngineHttpError && (err.status === 400 || err.status === 422) && keys.length > 1) {
        // vLLM rejects the whole request for one bad question: split to isolate it.
        return this.readHalves(record, keys, request, read, out, signal);
      }
      if (err instanceof EngineHttpError && (err.status === 501 || isRouteNotServed(err.status, err.info))) {
        // No structured decisions for this model (vLLM answers 501), or no such route at all (an
        // older vLLM, a proxy: 404/405): label-read takes over, said once.
        this.setServed(false, err.status);
        for (const k of keys) read.unsupported.add(k);
        return;
      }
      for (const k of keys) read.errors[k] = (caught as Error).message;
      return;
    }
    addUsage(out.usage, usageTokens(response.usage));
    keys.forEach((key, i) => {
      const answer = this.endpoint.answerOf(response, key, i);
      if (answer) this.countUnknownLabels(record.questions[key]!, answer, out);
      const dist = answer ? this.endpoint.distribution(record.questions[key]!, answer) : "engine returned no answer for this question";
      if (typeof dist === "string") read.errors[key] = dist;
      else read.probs[key] = dist;
    });
  }

  /** Labels outside the question's options are dropped; counted, and the first logged once. */
  private countUnknownLabels(question: Question, answer: A, out: RecordAnswer): void {
    const unknown = this.endpoint.unknownLabels(question, answer);
    if (unknown.length === 0) return;
    out.unknownLabels = (out.unknownLabels ?? 0) + unknown.length;
    if (this.unknownLabelsLogged) return;
    this.unknownLabelsLogged = true;
    this.options.logger?.warn(`${this.endpoint.path} answered labels that are not options of the question; dropped and counted (agent stats: unknown labels)`, {
      labels: unknown.slice(0, 5),
      options: question.type === "choice" ? Object.keys(question.criteria).slice(0, 5) : ["yes"],
    });
  }
}

/** How long the agent's start waits for the probe of the endpoint (longer than the 10 s after which a stalled request is logged). */
const ENDPOINT_PROBE_WAIT_MS = 12_000;

function waitAtMost(p: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  return Promise.race([p, waited]).finally(() => clearTimeout(timer));
}

/** The endpoint probe's record: a short state and one yes/no question (a few dozen tokens). */
const PROBE_RECORD: RecordPayload = {
  recordKey: "probe:probe",
  id: "probe",
  state: { text: "A probe of the server." },
  questions: { probe: { type: "noul", instructions: "Is this a probe?", criteria: {} } },
  payloadSha256: "",
};

function admissionRefused(err: unknown): boolean {
  return err instanceof EngineHttpError && isAdmissionRefusal(err.status, err.info);
}

/** `keys` cut into batches of at most `size`, decided before the first request. */
function inBatches(keys: readonly string[], size: number): string[][] {
  const out: string[][] = [];
  for (let b = 0; b < keys.length; b += size) out.push(keys.slice(b, b + size));
  return out;
}

/**
 * Most characters a question can add to its prompt: its text and options, with room for the
 * template's labels and lines. A token is at least one character, so it adds at most this many
 * tokens too.
 */
function questionCharsBound(question: Question): number {
  const options = question.type === "choice" ? Object.keys(question.criteria).length : 2;
  return JSON.stringify({ instructions: question.instructions, criteria: question.criteria }).length + 8 * options + 128;
}

/**
 * Whether a context-length 400 on a batch shows that none of its questions fits. The server
 * renders a batch's questions in order and answers for the first prompt that is too long (vLLM
 * strategies.py NextTokenStrategy.read, renderers/params.py); every prompt is the shared part
 * (template, state) plus the question's own. When the prompt is over by more than any question of
 * the batch can add, the shared part alone is too long, and so is every prompt of the batch.
 */
function noQuestionFits(record: RecordPayload, keys: readonly string[], error: ErrorInfo): boolean {
  const excess = contextLengthExcess(error);
  if (excess === undefined) return false;
  return keys.every((k) => excess > questionCharsBound(record.questions[k]!));
}

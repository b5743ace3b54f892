// The `label-read` engine method, for any generation model: each question is one
// /v1/completions request (or /v1/chat/completions, the server applying the chat template) with
// max_tokens 1, temperature 0, and logprob_token_ids set to the label tokens, so the reply's first
// token gives the model's probability of each label. Label tokens come from /tokenize once per
// model (label-tokens.ts). A label of several tokens is read as a trie (label-trie.ts): one more
// read per shared prefix, with that prefix appended to the prompt, so
//   p(option) = P(label's tokens) x P(no longer label continues | label), normalised over options,
// is exact for the model (the second factor only for a label that is a prefix of another).
// noul reads the labels "yes" and "no", as vLLM's structured decisions do
// (vllm/entrypoints/openai/decisions/question_types.py NoulQuestion.label_set = ("yes", "no")).
//
// A chat read of a label's later tokens continues an assistant message holding the label's first
// tokens as text, which /detokenize gives (token_strs are vocabulary pieces, not text); every chat
// request and chat /tokenize sends chat_template_kwargs {enable_thinking: false}, so that a
// thinking template (Qwen3's) puts no reasoning block between the prompt and the label.
//
// Never prompt_logprobs or echo: vLLM skips the prefix cache for any request with prompt logprobs
// (vllm/sampling_params.py skip_reading_prefix_cache, vllm/v1/core/kv_cache_manager.py
// get_computed_blocks), and echo implies them; one generated token's logprobs keep the cache. The
// prompt is the state prefix then the question, so every question of a record shares the state's
// KV blocks. Prompts are counted with /tokenize only when their characters could exceed
// max_model_len (a token is at least one character), the state once per record.
//
// Older vLLM without logprob_token_ids ignores the field (or a proxy rejects it): the method then
// reads the top `max_logprobs` tokens instead, renormalises over the labels found, and marks the
// record approximate. A 400 "greater than max allowed: M" teaches it the server's max_logprobs.
import { labelPermutation, ChatCompletionResponseSchema, DetokenizeResponseSchema, CompletionResponseSchema, isContextLengthError, isLogprobTokenIdsRejection, maxLogprobsAllowed, TokenizeResponseSchema, tokenIdOf, usageTokens, type CompletionResponse, type ChatCompletionResponse } from "../../common/engine-protocol/index.js";
import type { Distribution } from "../../common/results/index.js";
import type { Question } from "../../common/suite/index.js";
import { addUsage, emptyAnswer, type EngineInfo, type EngineMethod, type RecordAnswer, type RecordPayload, type RunParams } from "../engine-method.js";
import { EngineHttpError } from "../engine-http.js";
import { EngineSettingsCheck } from "../engine-settings.js";
import { callEngine, DEFAULT_RETRY_POLICY, type CallCounters, type RetryPolicy } from "./engine-call.js";
import { LABEL_READ_SYSTEM, listOptions, questionText, statePrefix, type ListedOption } from "./label-read-template.js";
import { CHAT_TEMPLATE_KWARGS, LabelTokenError, LabelTokenizer, type LabelTokens } from "./label-tokens.js";
import { labelMasses, pathKey, sameTokens, trieNodes } from "./label-trie.js";
import type { MethodOptions } from "./method-options.js";
import { readEngineInfo } from "./model-info.js";
import { PromiseCache } from "./promise-cache.js";
import { RunSeeds } from "./run-seeds.js";
import { StateFit } from "./state-fit.js";

/** vllm/sampling_params.py MAX_LOGPROB_TOKEN_IDS. */
const MAX_IDS_PER_READ = 128;
/** Tokens a chat template adds around the messages, at most (role markers, generation prompt). */
const CHAT_TEMPLATE_SLACK = 64;

export interface LabelReadOptions extends MethodOptions {
  /** completions (default): the prompt as token ids; chat: messages, the server's chat template. */
  api?: "completions" | "chat";
  /** The server's max_logprobs until it says otherwise (top-k fallback). Default 20. */
  maxLogprobs?: number;
  /** The state-length check, shared with a method that hands this one questions (its counts are reused). Default: its own. */
  stateFit?: StateFit;
}

/** A question that could not be read, and why. */
class QuestionFailure extends Error {
  constructor(
    message: string,
    readonly skipped: boolean,
  ) {
    super(message);
  }
}

interface TrieRead {
  /** option key -> unnormalised probability */
  mass: Map<string, number>;
  approximate: boolean;
}

type ReadContext = CallCounters & { approximate: boolean };

export class LabelReadMethod implements EngineMethod {
  readonly name = "label-read" as const;
  private readonly baseUrl: string;
  private readonly policy: RetryPolicy;
  private readonly api: "completions" | "chat";
  private readonly seeds: RunSeeds;
  private info_: EngineInfo | undefined;
  /** undefined until the server showed whether it honours logprob_token_ids. */
  private tokenIdsHonoured: boolean | undefined;
  private maxLogprobs: number;
  private readonly labelTokenizer: LabelTokenizer;
  private readonly settings: EngineSettingsCheck;
  /** Token ids of a record's state prefix, with the special tokens the server adds (BOS). */
  private readonly prefixCache = new PromiseCache<number[]>(1024);
  /** Token ids of a question's own text, or of a chat prompt's messages. */
  private readonly questionCache = new PromiseCache<number[]>(8192);
  /** Token ids of a whole completions prompt as the server tokenizes it, for the reads after a label's first tokens. */
  private readonly promptCache = new PromiseCache<number[]>(8192);
  /** Text of a label path's ids (/detokenize), for chat reads that continue it. */
  private readonly pathTexts = new PromiseCache<string>(8192);
  private readonly stateFit: StateFit;

  constructor(private readonly options: LabelReadOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.policy = { ...DEFAULT_RETRY_POLICY, ...options.retry, limiter: options.limiter };
    this.api = options.api ?? "completions";
    this.seeds = new RunSeeds(options.seeds);
    this.maxLogprobs = options.maxLogprobs ?? 20;
    this.settings = new EngineSettingsCheck(this.baseUrl, options.logger);
    this.labelTokenizer = new LabelTokenizer(this.api, (body, counters, signal) => this.tokenize(body, counters, signal));
    this.stateFit = options.stateFit ?? new StateFit(this.baseUrl, options.model, this.policy.timeoutMs);
  }

  /** The run's label-permutation seeds (from --seeds or the coordinator's Welcome). */
  applyRunParams(params: RunParams): void {
    this.seeds.apply(params);
  }

  /** True once the method fell back to top-k logprobs. */
  get approximateMode(): boolean {
    return this.tokenIdsHonoured === false;
  }

  async info(signal?: AbortSignal): Promise<EngineInfo> {
    this.info_ = await readEngineInfo(this.baseUrl, this.options.model, this.options.capacity ?? 8, this.policy.timeoutMs, signal);
    await this.settings.check(this.info_, signal);
    return this.info_;
  }

  async answer(record: RecordPayload, signal: AbortSignal): Promise<RecordAnswer> {
    const started = performance.now();
    const out = emptyAnswer();
    await this.answerQuestions(record, Object.keys(record.questions), out, signal);
    out.latencyMs = performance.now() - started;
    return out;
  }

  /**
   * Answers `keys` of the record into `out` (also used by systemone for the questions it cannot
   * take). The first question goes alone so that it prefills the state; the rest follow at once
   * and hit the prefix cache.
   */
  async answerQuestions(record: RecordPayload, keys: readonly string[], out: RecordAnswer, signal: AbortSignal): Promise<void> {
    if (keys.length === 0) return;
    // A state that alone exceeds max_model_len: every prompt holds it (statePrefix and the chat
    // message carry its JSON text), so every question is skipped after at most one /tokenize,
    // rather than one refused count per question (current vLLM's /tokenize refuses it, a 400).
    if (await this.stateFit.cannotFit(record.state, (await this.ensureInfo(signal)).maxModelLen, out, signal)) {
      out.skipped.push(...keys);
      return;
    }
    const ctx: ReadContext = { usage: out.usage, retries: 0, approximate: false };
    const settle = async (key: string): Promise<void> => {
      try {
        out.probs[key] = await this.readQuestion(record, record.questions[key]!, ctx, signal);
        out.answeredBy[key] = this.name;
      } catch (err) {
        if (signal.aborted) throw signal.reason;
        if (err instanceof QuestionFailure && err.skipped) out.skipped.push(key);
        else out.errors[key] = (err as Error).message;
      }
    };
    try {
      await settle(keys[0]!);
      await Promise.all(keys.slice(1).map(settle));
    } finally {
      out.retries += ctx.retries;
      if (ctx.approximate) out.approximate = true;
    }
    // Keep the record's question order in skipped, whatever order the reads finished in.
    out.skipped.sort((a, b) => keys.indexOf(a) - keys.indexOf(b));
  }

  /** The engine's model and limits without the startup checks (a record read before info()). */
  private async ensureInfo(signal: AbortSignal): Promise<EngineInfo> {
    // Stryker disable next-line LogicalOperator: an answer uses only this read's model and max_model_len, never its capacity (info() reads that)
    this.info_ ??= await readEngineInfo(this.baseUrl, this.options.model, this.options.capacity ?? 8, this.policy.timeoutMs, signal);
    return this.info_;
  }

  private async readQuestion(record: RecordPayload, q: Question, ctx: ReadContext, signal: AbortSignal): Promise<Distribution> {
    const info = await this.ensureInfo(signal);
    const keys = q.type === "noul" ? ["true", "false"] : Object.keys(q.criteria);
    if (keys.length === 0) throw new QuestionFailure("choice without options", false);
    const seeds = this.seeds.current.length > 0 ? this.seeds.current : [0];
    const sum = new Map<string, number>(keys.map((k) => [k, 0]));
    for (const seed of seeds) {
      const options = listOptions(q, labelPermutation(seed, keys.length));
      const read = await this.readOnce(record, q, options, info, ctx, signal);
      let total = 0;
      for (const m of read.mass.values()) total += m;
      if (!(total > 0)) throw new QuestionFailure("the model gave no probability to any label (none among the logprobs returned)", false);
      for (const k of keys) sum.set(k, sum.get(k)! + (read.mass.get(k) ?? 0) / total / seeds.length);
      if (read.approximate) ctx.approximate = true;
    }
    return Object.fromEntries(keys.map((k) => [k, sum.get(k)!]));
  }

  /** One read of a question under one label assignment: unnormalised option masses. */
  private async readOnce(record: RecordPayload, q: Question, options: readonly ListedOption[], info: EngineInfo, ctx: ReadContext, signal: AbortSignal): Promise<TrieRead> {
    const labels = await Promise.all(options.map((o) => this.labelTokens(o.label, ctx, signal)));
    const same = sameTokens(labels.map((l) => l.ids));
    if (same) throw new QuestionFailure(`labels ${JSON.stringify(options[same[0]]!.label)} and ${JSON.stringify(options[same[1]]!.label)} are the same tokens for this model`, false);
    const depth = Math.max(...labels.map((l) => l.ids.length));
    const text = questionText(q, options);
    let prompt: Prompt;
    // A token is at least one character for vLLM's tokenizers, so a prompt with fewer characters
    // than max_model_len tokens fits without counting; only longer ones go through /tokenize.
    const limit = info.maxModelLen > 0 ? info.maxModelLen - depth : Infinity;
    if (this.api === "completions") {
      const prefixText = statePrefix(record.state);
      const full = prefixText + text;
      if (full.length > limit) {
        const [prefix, question] = await Promise.all([
          this.tokenizeCached(this.prefixCache, prefixText, { prompt: prefixText }, ctx, signal),
          this.tokenizeCached(this.questionCache, text, { prompt: text, add_special_tokens: false }, ctx, signal),
        ]);
        const length = prefix.length + question.length;
        // Stryker disable next-line StringLiteral: a skipped question keeps no message (settle puts it in skipped), so its text is never seen
        if (length > limit) throw new QuestionFailure(`prompt of ${length} tokens (+${depth} for the label) exceeds max_model_len ${info.maxModelLen}`, true);
      }
      prompt = { kind: "text", text: full };
    } else {
      const messages = [
        { role: "system", content: LABEL_READ_SYSTEM },
        { role: "user", content: `${JSON.stringify(record.state)}\n\n${text}` },
      ];
      if (messages.reduce((n, m) => n + m.content.length, 0) + CHAT_TEMPLATE_SLACK > limit) {
        const length = (await this.tokenizeCached(this.questionCache, JSON.stringify(messages), { messages, add_generation_prompt: true, chat_template_kwargs: CHAT_TEMPLATE_KWARGS }, ctx, signal)).length;
        // Stryker disable next-line StringLiteral: a skipped question keeps no message (settle puts it in skipped), so its text is never seen
        if (length > limit) throw new QuestionFailure(`prompt of ${length} tokens (+${depth} for the label) exceeds max_model_len ${info.maxModelLen}`, true);
      }
      // Stryker disable next-line StringLiteral: only "text" is ever asked for; any other kind is the messages
      prompt = { kind: "messages", messages };
    }
    return this.readTrie(prompt, options, labels, ctx, signal);
  }

  /** Reads every node of the label trie (one read each, all at once) and the options' masses. */
  private async readTrie(prompt: Prompt, options: readonly ListedOption[], labels: readonly LabelTokens[], ctx: ReadContext, signal: AbortSignal): Promise<TrieRead> {
    // A reply that names tokens as strings (no return_tokens_as_token_ids) is read by the labels'
    // vocabulary pieces; a label without pieces (token_strs null) is found by id only.
    const byString = new Map<string, number>();
    for (const l of labels) l.strs.forEach((s, i) => byString.set(s, l.ids[i]!));
    const reads = new Map<string, Map<number, number>>();
    let approximate = false;
    await Promise.all(
      trieNodes(labels.map((l) => l.ids)).map(async (node) => {
        // A chat read continues the assistant's text, so a path goes as the text of its ids
        // (/detokenize), never as joined token_strs: those are vocabulary pieces ("Ġ", "Ċ").
        // Stryker disable next-line StringLiteral: the text of no path is used by no read (completions never, chat only after a path)
        const pathText = this.api === "chat" && node.path.length > 0 ? await this.detokenize(node.path, ctx, signal) : "";
        const read = await this.readNext(prompt, node.path, pathText, node.next, byString, ctx, signal);
        if (read.approximate) approximate = true;
        reads.set(pathKey(node.path), read.probs);
      }),
    );
    const masses = labelMasses(labels.map((l) => l.ids), reads);
    return { mass: new Map(options.map((o, i) => [o.key, masses[i]!])), approximate };
  }

  /** Probabilities of `ids` as the next token after the prompt and `path`. */
  private async readNext(prompt: Prompt, path: number[], pathText: string, ids: number[], byString: ReadonlyMap<string, number>, ctx: ReadContext, signal: AbortSignal): Promise<{ probs: Map<number, number>; approximate: boolean }> {
    const probs = new Map<number, number>();
    if (this.tokenIdsHonoured !== false) {
      for (let i = 0; i < ids.length; i += MAX_IDS_PER_READ) {
        const chunk = ids.slice(i, i + MAX_IDS_PER_READ);
        let got: Map<number, number>;
        try {
          got = await this.request(prompt, path, pathText, { ids: chunk }, byString, ctx, signal);
        } catch (err) {
          if (err instanceof EngineHttpError && isLogprobTokenIdsRejection(err.status, err.info)) {
            this.tokenIdsHonoured = false;
            return this.readNext(prompt, path, pathText, ids, byString, ctx, signal);
          }
          throw err;
        }
        if (chunk.some((id) => !got.has(id))) {
          // The server ignored logprob_token_ids (older vLLM): read top-k from now on.
          this.tokenIdsHonoured = false;
          return this.readNext(prompt, path, pathText, ids, byString, ctx, signal);
        }
        this.tokenIdsHonoured = true;
        for (const id of chunk) probs.set(id, got.get(id)!);
      }
      return { probs, approximate: false };
    }
    const got = await this.request(prompt, path, pathText, { topK: this.maxLogprobs }, byString, ctx, signal);
    for (const id of ids) probs.set(id, got.get(id) ?? 0);
    return { probs, approximate: true };
  }

  /** One read: logprobs of the next token as probabilities by id. Learns max_logprobs from a 400. */
  private async request(
    prompt: Prompt,
    path: number[],
    pathText: string,
    want: { ids: number[] } | { topK: number },
    byString: ReadonlyMap<string, number>,
    ctx: ReadContext,
    signal: AbortSignal,
  ): Promise<Map<number, number>> {
    // With logprob_token_ids vLLM ignores the logprobs count (completion/protocol.py passes
    // logprobs=None to SamplingParams), so ask for 1: a server that ignores the ids then answers
    // with fewer tokens than asked, which is how an older vLLM shows itself.
    const k = "ids" in want ? 1 : want.topK;
    const common = {
      // Stryker disable next-line OptionalChaining: every read follows ensureInfo(), so info_ is set
      ...(this.info_?.model ? { model: this.info_.model } : {}),
      max_tokens: 1,
      temperature: 0,
      return_tokens_as_token_ids: true,
      ...("ids" in want ? { logprob_token_ids: want.ids } : {}),
    };
    let entries: Array<[string, number]>;
    try {
      if (prompt.kind === "text") {
        // The first read sends text, which the server tokenizes with its default special tokens
        // (BOS on Llama, Gemma: CompletionRequest.add_special_tokens defaults to true). A read after
        // a label's first tokens sends the prompt's ids plus those tokens; the ids come from
        // /tokenize with the same default (TokenizeCompletionRequest.add_special_tokens, true), so
        // they are exactly the ids of the first read, BOS included, and the read hits the prefix
        // cache the first read filled (vllm/entrypoints/openai/completion/protocol.py,
        // vllm/entrypoints/serve/tokenize/protocol.py).
        const body = path.length ? [...(await this.tokenizeCached(this.promptCache, prompt.text, { prompt: prompt.text }, ctx, signal)), ...path] : prompt.text;
        const res: CompletionResponse = await callEngine(`${this.baseUrl}/v1/completions`, { ...common, prompt: body, logprobs: k }, CompletionResponseSchema, this.policy, ctx, signal);
        this.count(res.usage, ctx);
        // The schema holds at least one choice.
        entries = Object.entries(res.choices[0]!.logprobs?.top_logprobs?.[0] ?? {});
      } else {
        const messages = path.length ? [...prompt.messages, { role: "assistant", content: pathText }] : prompt.messages;
        const body = { ...common, messages, logprobs: true, top_logprobs: k, chat_template_kwargs: CHAT_TEMPLATE_KWARGS, ...(path.length ? { add_generation_prompt: false, continue_final_message: true } : {}) };
        const res: ChatCompletionResponse = await callEngine(`${this.baseUrl}/v1/chat/completions`, body, ChatCompletionResponseSchema, this.policy, ctx, signal);
        this.count(res.usage, ctx);
        // The schema holds at least one choice.
        // Stryker disable next-line ArrayDeclaration: a stand-in element has no token, so it names no label (tokenIdOf and byString find nothing) and adds nothing
        entries = (res.choices[0]!.logprobs?.content?.[0]?.top_logprobs ?? []).map((t) => [t.token, t.logprob]);
      }
    } catch (err) {
      // Stryker disable next-line StringLiteral,LogicalOperator,OptionalChaining: a skipped question keeps no message (settle puts it in skipped), so its text is never seen
      if (err instanceof EngineHttpError && isContextLengthError(err.status, err.info)) throw new QuestionFailure(`engine: ${err.info?.message ?? "prompt too long"}`, true);
      // vLLM refuses only a count above its max_logprobs, so a figure it names is below k; no figure
      // stands as k, no smaller count to retry with.
      const allowed = (err instanceof EngineHttpError ? maxLogprobsAllowed(err.status, err.info) : undefined) ?? k;
      if (allowed < k) {
        this.maxLogprobs = allowed;
        // Stryker disable next-line StringLiteral: an ids read asks for 1 logprob, a count vLLM ignores with logprob_token_ids (above), so this 400 comes only to a top-k read
        return this.request(prompt, path, pathText, "ids" in want ? want : { topK: this.maxLogprobs }, byString, ctx, signal);
      }
      throw err;
    }
    const out = new Map<number, number>();
    for (const [token, logprob] of entries) {
      const id = tokenIdOf(token) ?? byString.get(token);
      // Stryker disable next-line ConditionalExpression: a token of no label would add an undefined key, which no read asks for
      if (id !== undefined) out.set(id, Math.exp(logprob));
    }
    return out;
  }

  private count(usage: CompletionResponse["usage"], ctx: ReadContext): void {
    addUsage(ctx.usage, usageTokens(usage));
  }

  /** Token ids of a label as the reply's first tokens, once per model. */
  private async labelTokens(label: string, ctx: ReadContext, signal: AbortSignal): Promise<LabelTokens> {
    try {
      return await this.labelTokenizer.tokens(label, ctx, signal);
    } catch (err) {
      // Stryker disable next-line ConditionalExpression: either way the question's error is the message (settle files any other error the same way; a label is never too long to count)
      if (err instanceof LabelTokenError) throw new QuestionFailure(err.message, false);
      throw err;
    }
  }

  /** /tokenize of `body` once per `key`; a prompt without add_special_tokens gets the server's default, as an inference request would. */
  private tokenizeCached(cache: PromiseCache<number[]>, key: string, body: Record<string, unknown>, ctx: ReadContext, signal: AbortSignal): Promise<number[]> {
    return cache.get(key, async (loadSignal) => (await this.tokenize(body, ctx, loadSignal)).tokens, signal);
  }

  /** The text of `ids`, once per path: POST /detokenize {model, tokens} -> {prompt} (vllm/entrypoints/serve/tokenize/protocol.py). */
  private detokenize(ids: number[], ctx: ReadContext, signal: AbortSignal): Promise<string> {
    return this.pathTexts.get(
      pathKey(ids),
      async (loadSignal) => {
        // Stryker disable next-line OptionalChaining: every read follows ensureInfo(), so info_ is set
        const body = { ...(this.info_?.model ? { model: this.info_.model } : {}), tokens: ids };
        return (await callEngine(`${this.baseUrl}/detokenize`, body, DetokenizeResponseSchema, { ...this.policy, limiter: undefined }, ctx, loadSignal)).prompt;
      },
      signal,
    );
  }

  private async tokenize(body: Record<string, unknown>, counters: CallCounters, signal: AbortSignal) {
    try {
      // Stryker disable next-line OptionalChaining: every /tokenize follows ensureInfo(), so info_ is set
      return await callEngine(`${this.baseUrl}/tokenize`, { ...(this.info_?.model ? { model: this.info_.model } : {}), ...body }, TokenizeResponseSchema, { ...this.policy, limiter: undefined }, counters, signal);
    } catch (err) {
      // Current vLLM's /tokenize refuses a prompt over max_model_len (state-fit.ts): skipped, as counted.
      // Stryker disable next-line StringLiteral,LogicalOperator,OptionalChaining: a skipped question keeps no message (settle puts it in skipped), so its text is never seen
      if (err instanceof EngineHttpError && isContextLengthError(err.status, err.info)) throw new QuestionFailure(`engine: ${err.info?.message ?? "prompt too long"}`, true);
      throw err;
    }
  }
}

type Prompt = { kind: "text"; text: string } | { kind: "messages"; messages: Array<{ role: string; content: string }> };

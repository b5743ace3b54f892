// Whether a record's state alone is longer than max_model_len, so that none of its questions can
// be read: those questions go to `skipped` without a request. A token is at least one character
// for vLLM's tokenizers, so /tokenize is only asked (once per state) when the state's JSON text
// has at least as many characters as max_model_len has tokens. Without /tokenize the engine's own
// context-length 400 decides. Current vLLM's /tokenize refuses a prompt over max_model_len with
// that 400 itself (vllm/entrypoints/serve/tokenize/serving.py through vllm/renderers/params.py):
// that answer is the count we asked for, so the state cannot fit.
import { isContextLengthError, TokenizeResponseSchema } from "../../common/engine-protocol/index.js";
import type { RecordAnswer } from "../engine-method.js";
import { EngineHttpError, EngineProtocolError, requestJson } from "../engine-http.js";
import { PromiseCache } from "./promise-cache.js";

export class StateFit {
  private readonly counts = new PromiseCache<number>(1024);

  constructor(
    private readonly baseUrl: string,
    private readonly model: string | undefined,
    private readonly timeoutMs: number,
  ) {}

  async cannotFit(state: Record<string, string>, maxModelLen: number, out: Pick<RecordAnswer, "usage">, signal: AbortSignal): Promise<boolean> {
    if (maxModelLen <= 0) return false;
    const text = JSON.stringify(state);
    if (text.length < maxModelLen) return false;
    try {
      const tokens = await this.counts.get(text, async (loadSignal) => {
        out.usage.requests++;
        const url = `${this.baseUrl}/tokenize`;
        // The server's default special tokens (BOS), as the prompts that carry the state get them.
        const body = { ...(this.model ? { model: this.model } : {}), prompt: text };
        const parsed = TokenizeResponseSchema.safeParse(await requestJson(url, { method: "POST", body, timeoutMs: this.timeoutMs, signal: loadSignal }));
        // Stryker disable next-line ConditionalExpression,StringLiteral: without this throw `parsed.data.count` throws a TypeError instead, and the catch below answers "fits" to either, its message unseen
        if (!parsed.success) throw new EngineProtocolError(url, "not a tokenize response");
        return parsed.data.count;
      }, signal);
      // One token is the reply; the template and the question come on top.
      return tokens >= maxModelLen - 1;
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      return err instanceof EngineHttpError && isContextLengthError(err.status, err.info);
    }
  }
}

// What POST /v1/completions and POST /v1/chat/completions share: the prompts as token ids run as
// reads (prefix cache by chained block hashes), greedy generation with logprobs, and the usage.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { EngineContext } from "../context.js";
import type { ReadPrompt } from "../model/read-prompt.js";
import type { Failure } from "../protocol/failure.js";
import { blockKeys, generate, type GeneratedToken, type GenerationPlan } from "../protocol/generation-requests.js";

export interface Generated {
  plan: GenerationPlan;
  /** Generated tokens of each prompt, in prompt order. */
  outputs: GeneratedToken[][];
  usage: { prompt_tokens: number; total_tokens: number; completion_tokens: number; prompt_tokens_details: { cached_tokens: number } | null };
}

/** Parses, runs and generates; undefined when the request was answered here. */
export async function runGeneration(
  ctx: EngineContext,
  req: IncomingMessage,
  res: ServerResponse,
  endpoint: string,
  parse: (body: unknown) => GenerationPlan | Failure,
): Promise<Generated | undefined> {
  const parsed = await ctx.inferenceBody(req, res, endpoint);
  if (!parsed) return undefined;
  const plan = parse(parsed.body);
  if ("ok" in plan) {
    ctx.http.fail(res, plan);
    return undefined;
  }
  const reads: ReadPrompt[] = plan.prompts.map((ids, i) => ({
    questionId: String(i),
    prefixKey: "",
    prefixTokens: 0,
    promptTokens: ids.length,
    blockKeys: blockKeys(ids, plan.cacheSalt),
    skipCacheRead: plan.skipCacheRead,
  }));
  const outcomes = await ctx.runReads(res, reads);
  if (!outcomes) return undefined;
  const outputs = plan.prompts.map((ids, i) => ctx.answeredTokens(generate(ctx.tokenModel, ids, plan, ctx.eos, ctx.labelTarget(ids, plan.texts[i] ?? null)), outcomes[i], ids));
  const t = ctx.account(outcomes);
  const completion = outputs.reduce((a, g) => a + g.length, 0);
  return {
    plan,
    outputs,
    usage: { prompt_tokens: t.prompt, total_tokens: t.prompt + completion, completion_tokens: completion,
      // Current vLLM: null without --enable-prompt-tokens-details (vllm-profile.ts).
      prompt_tokens_details: ctx.profile === "current" ? null : { cached_tokens: t.cached } },
  };
}

/** "stop" when generation ended on an end-of-text token, else "length". */
export function finishReason(ctx: EngineContext, g: readonly GeneratedToken[]): "stop" | "length" {
  return g.length > 0 && ctx.eos.has(g[g.length - 1]!.id) ? "stop" : "length";
}

/** The generated text, without the end-of-text token. */
export function outputText(ctx: EngineContext, g: readonly GeneratedToken[]): string {
  return g
    .filter((t) => !ctx.eos.has(t.id))
    .map((t) => ctx.tokenizer.decodeToken(t.id))
    .join("");
}

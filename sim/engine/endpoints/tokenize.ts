// POST /tokenize: a prompt or chat messages to token ids (the tokenize protocol of
// vllm/entrypoints/serve/tokenize); not an inference request, so no faults and no reads.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { EngineContext } from "../context.js";
import { tokenizeRequest } from "../protocol/generation-requests.js";
import { tokenizeOverflowFailure } from "../vllm-profile.js";

export async function tokenize(ctx: EngineContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  ctx.stats.tokenizeRequests++;
  const parsed = await ctx.http.jsonBody(req, res);
  if (!parsed) return;
  const tokenized = tokenizeRequest(parsed.body, ctx.tokenizer, ctx.generationLimits);
  if ("ok" in tokenized) return ctx.http.fail(res, tokenized);
  // Current vLLM renders /tokenize through the same length check as a generation (vllm-profile.ts).
  if (ctx.profile === "current" && tokenized.result.count > ctx.maxModelLen) return ctx.http.fail(res, tokenizeOverflowFailure(tokenized.result.count, ctx.maxModelLen));
  ctx.rememberPrompt(tokenized.result.tokens, tokenized.text);
  ctx.http.send(res, 200, tokenized.result);
}

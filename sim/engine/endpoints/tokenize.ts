// POST /tokenize: a prompt or chat messages to token ids (the tokenize protocol of
// vllm/entrypoints/serve/tokenize); not an inference request, so no faults and no reads.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { EngineContext } from "../context.js";
import { tokenizeRequest } from "../protocol/generation-requests.js";

export async function tokenize(ctx: EngineContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  ctx.stats.tokenizeRequests++;
  const parsed = await ctx.http.jsonBody(req, res);
  if (!parsed) return;
  const result = tokenizeRequest(parsed.body, ctx.tokenizer, ctx.generationLimits);
  if ("ok" in result) return ctx.http.fail(res, result);
  ctx.http.send(res, 200, result);
}

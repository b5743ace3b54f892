// POST /detokenize: token ids to text (vllm/entrypoints/serve/tokenize: DetokenizeRequest
// {model, tokens} -> DetokenizeResponse {prompt}); like /tokenize, not an inference request.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { EngineContext } from "../context.js";
import { detokenizeRequest } from "../protocol/generation-requests.js";

export async function detokenize(ctx: EngineContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  ctx.stats.detokenizeRequests++;
  const parsed = await ctx.http.jsonBody(req, res);
  if (!parsed) return;
  const result = detokenizeRequest(parsed.body, ctx.tokenizer, ctx.generationLimits);
  if ("ok" in result) return ctx.http.fail(res, result);
  ctx.http.send(res, 200, result);
}

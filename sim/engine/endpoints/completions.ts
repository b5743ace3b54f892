// POST /v1/completions: text_completion bodies with CompletionLogProbs
// (vllm/entrypoints/openai/completion/protocol.py).
import type { IncomingMessage, ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import type { EngineContext } from "../context.js";
import { completionLogprobs, parseCompletionRequest } from "../protocol/generation-requests.js";
import { finishReason, outputText, runGeneration } from "./generation.js";

export async function completions(ctx: EngineContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const done = await runGeneration(ctx, req, res, "/v1/completions", (body) => parseCompletionRequest(body, ctx.tokenizer, ctx.generationLimits));
  if (!done) return;
  ctx.http.send(res, 200, {
    id: `cmpl-${randomUUID().replace(/-/g, "")}`,
    object: "text_completion",
    created: Math.floor(Date.now() / 1000),
    model: ctx.model,
    choices: done.outputs.map((g, index) => ({
      index,
      text: outputText(ctx, g),
      logprobs: completionLogprobs(g, ctx.tokenizer, done.plan),
      finish_reason: finishReason(ctx, g),
      stop_reason: null,
      prompt_logprobs: null,
    })),
    usage: done.usage,
  });
}

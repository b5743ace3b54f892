// POST /v1/chat/completions: chat.completion bodies with per-token logprobs content
// (vllm/entrypoints/openai/chat_completion/protocol.py).
import type { IncomingMessage, ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import type { EngineContext } from "../context.js";
import { chatLogprobs, parseChatRequest } from "../protocol/generation-requests.js";
import { finishReason, outputText, runGeneration } from "./generation.js";

export async function chatCompletions(ctx: EngineContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const done = await runGeneration(ctx, req, res, "/v1/chat/completions", (body) => parseChatRequest(body, ctx.tokenizer, ctx.generationLimits));
  if (!done) return;
  ctx.http.send(res, 200, {
    id: `chatcmpl-${randomUUID().replace(/-/g, "")}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: ctx.model,
    choices: done.outputs.map((g, index) => ({
      index,
      message: { role: "assistant", content: outputText(ctx, g), tool_calls: [] },
      logprobs: chatLogprobs(g, ctx.tokenizer, done.plan),
      finish_reason: finishReason(ctx, g),
      stop_reason: null,
    })),
    usage: done.usage,
  });
}

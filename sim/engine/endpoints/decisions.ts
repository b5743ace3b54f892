// POST /v1/decisions: OpenAI's Decisions API as vLLM implements it (protocol/decisions-request.ts),
// read like /v1/systemone and answered as vllm/entrypoints/openai/decisions/adapters.py does.
import type { IncomingMessage, ServerResponse } from "node:http";
import { SYSTEMONE_MAX_CHOICE_OPTIONS, SYSTEMONE_MAX_QUESTIONS } from "../../../common/engine-protocol/index.js";
import type { EngineContext } from "../context.js";
import { stateText } from "../model/read-prompt.js";
import { decisionAnswer, parseDecisionRequest } from "../protocol/decisions-request.js";

export async function decisions(ctx: EngineContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const parsed = await ctx.inferenceBody(req, res, "/v1/decisions");
  if (!parsed) return;
  const validated = parseDecisionRequest(parsed.body, {
    servedModel: ctx.model,
    decisionApi: ctx.decisionApi,
    // vllm/entrypoints/openai/decisions/strategies.py NextTokenStrategy.limits(): 64 questions, 26 labels.
    maxQuestions: SYSTEMONE_MAX_QUESTIONS,
    maxOptions: SYSTEMONE_MAX_CHOICE_OPTIONS,
  });
  if ("ok" in validated) return ctx.http.fail(res, validated);
  const { request, specs } = validated;
  const outcomes = await ctx.runDecisionReads(res, request);
  if (!outcomes) return;
  const text = stateText(request.state);
  const answers = request.questions.map((q, i) => {
    const read = ctx.pseudo.read(request.state, text, q);
    return decisionAnswer(specs[i]!, ctx.answeredProbs(read.probs, outcomes[i], text, q.id), read.labelMass);
  });
  const t = ctx.account(outcomes);
  ctx.http.send(res, 200, {
    model: ctx.model,
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

// POST /v1/systemone: vLLM's structured decisions (vllm/entrypoints/generate/structured_decisions/
// serving.py). Validation (protocol/systemone-request.ts), the context-length check of every read
// with one output token (vllm/renderers/params.py), the reads on the GPU model, the answers shaped
// as question_types.py's QuestionType.answer, and DecisionUsage.
import type { IncomingMessage, ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import { SYSTEMONE_MAX_CHOICE_OPTIONS, SYSTEMONE_MAX_QUESTIONS } from "../../../common/engine-protocol/index.js";
import type { EngineContext } from "../context.js";
import { answerObject } from "../model/pseudo-model.js";
import { stateText } from "../model/read-prompt.js";
import { validateSystemOneRequest } from "../protocol/systemone-request.js";

export async function systemone(ctx: EngineContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const parsed = await ctx.inferenceBody(req, res, "/v1/systemone");
  if (!parsed) return;
  const validated = validateSystemOneRequest(parsed.body, {
    servedModel: ctx.model,
    decisionApi: ctx.decisionApi,
    maxQuestions: SYSTEMONE_MAX_QUESTIONS,
    maxOptions: SYSTEMONE_MAX_CHOICE_OPTIONS,
    // Current vLLM's StructuredDecisionRequest has cache_salt and no seed; OpenAIBaseModel lets
    // the unknown field through and ignores it (model_config extra="allow"; it only logs "fields
    // were present in the request but ignored"), vllm/entrypoints/generate/structured_decisions/protocol.py.
    seedField: ctx.profile !== "current",
  });
  if (!validated.ok) return ctx.http.fail(res, validated);
  const request = validated.request;
  const outcomes = await ctx.runDecisionReads(res, request);
  if (!outcomes) return;
  const text = stateText(request.state);
  const answers: Record<string, unknown> = {};
  const diagnostics: Record<string, unknown> = {};
  for (const [i, q] of request.questions.entries()) {
    const read = ctx.pseudo.read(request.state, text, q, request.seed);
    answers[q.id] = answerObject(q, ctx.answeredProbs(read.probs, outcomes[i], text, q.id), read.labelMass);
    diagnostics[q.id] = { label_mass: read.labelMass, argmax_is_label: true };
  }
  const t = ctx.account(outcomes);
  ctx.http.send(res, 200, {
    id: `decision-${randomUUID().replace(/-/g, "")}`,
    object: "structured_decision",
    created: Math.floor(Date.now() / 1000),
    model: ctx.model,
    answers,
    // structured_decisions/protocol.py DecisionUsage: input and output tokens only, so a client
    // cannot see cache hits here (the sim's /metrics and stats still count them).
    usage: { input_tokens: t.prompt, output_tokens: t.completion },
    diagnostics,
  });
}

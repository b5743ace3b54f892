// model_routing (RouterBench): choose one of 11 models; scoring holds each model's quality and
// cost and the accepted set. A group is one prompt; a second row of a group is another sample of it.
import type { BuildContext, GroupBuilder } from "../build-context.js";
import { assembleRecord, type SyntheticRecord } from "../record.js";

/** name, description, typical quality, USD per 1k prompt tokens. */
export const ROUTER_MODELS: ReadonlyArray<readonly [string, string, number, number]> = [
  ["gpt-4-1106-preview", "OpenAI GPT-4 Turbo", 0.86, 0.01],
  ["gpt-3.5-turbo-1106", "OpenAI GPT-3.5 Turbo", 0.7, 0.001],
  ["claude-v2", "Anthropic Claude 2", 0.78, 0.008],
  ["claude-v1", "Anthropic Claude 1", 0.72, 0.008],
  ["claude-instant-v1", "Anthropic Claude Instant", 0.66, 0.0008],
  ["meta/llama-2-70b-chat", "Meta Llama 2 70B chat", 0.62, 0.0009],
  ["meta/code-llama-instruct-34b-chat", "Meta Code Llama 34B instruct", 0.5, 0.000776],
  ["mistralai/mixtral-8x7b-chat", "Mistral Mixtral 8x7B chat", 0.7, 0.0006],
  ["mistralai/mistral-7b-chat", "Mistral 7B chat", 0.55, 0.0002],
  ["zero-one-ai/Yi-34B-Chat", "01.AI Yi 34B chat", 0.68, 0.0008],
  ["WizardLM/WizardLM-13B-V1.2", "WizardLM 13B v1.2", 0.52, 0.0003],
];

const EVALS = ["mmlu", "hellaswag", "winogrande", "arc-challenge", "gsm8k", "mbpp", "mt-bench", "grade-school-math"];

export const buildRoutingGroup: GroupBuilder = (ctx, _group, rows) => {
  const { shape, profile, rng } = ctx;
  const evalName = rng.pick(EVALS);
  const textGen = rng.chance(0.15) ? ctx.text : ctx.english;
  const prompt = textGen.passage(20, 160);
  const promptTokens = Math.round(prompt.length / 4);
  const criteria: Record<string, string> = Object.fromEntries(ROUTER_MODELS.map(([name, desc]) => [name, desc]));
  const groupId = ctx.newId();
  const records: SyntheticRecord[] = [];
  for (let r = 0; r < rows; r++) {
    const outcomes = drawOutcomes(ctx, evalName, promptTokens);
    const best = Math.max(...Object.values(outcomes).map((o) => o.quality));
    const accepted = ROUTER_MODELS.map(([name]) => name).filter((name) => (outcomes[name]?.quality ?? 0) >= best);
    const cheapest = accepted.reduce((a, b) => ((outcomes[b]?.cost_usd ?? 0) < (outcomes[a]?.cost_usd ?? 0) ? b : a));
    records.push(
      assembleRecord(shape, {
        id: rows === 1 ? groupId : `${groupId}:s${r}`,
        groupId,
        source: profile.source,
        origin: shape.origin,
        stratum: evalName,
        state: { prompt },
        questions: {
          route: { type: "choice", instructions: "Which model should answer this prompt to get an acceptable answer at the lowest cost?", criteria },
        },
        expected: { route: cheapest },
        extra: { eval_name: evalName, sample: r },
        scoring: { type: "routing_outcome", outcomes, accepted },
      }),
    );
  }
  return records;
};

function drawOutcomes(ctx: BuildContext, evalName: string, promptTokens: number): Record<string, { quality: number; cost_usd: number }> {
  const { rng } = ctx;
  const graded = evalName === "mt-bench";
  for (;;) {
    const outcomes: Record<string, { quality: number; cost_usd: number }> = {};
    for (const [name, , skill, price] of ROUTER_MODELS) {
      const quality = graded ? Math.round(Math.min(1, Math.max(0, skill + (rng.next() - 0.5) * 0.4)) * 10) / 10 : rng.chance(skill) ? 1 : 0;
      const outputTokens = rng.int(20, 400);
      const cost = ((promptTokens + outputTokens) / 1000) * price;
      outcomes[name] = { quality, cost_usd: Math.round(cost * 1e8) / 1e8 };
    }
    // A prompt no model answers has no accepted route; RouterBench rows have at least one.
    if (Object.values(outcomes).some((o) => o.quality > 0)) return outcomes;
  }
}

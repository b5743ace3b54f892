// The `decisions` engine method: OpenAI's Decisions API as vLLM serves it, POST /v1/decisions
// (vllm/entrypoints/openai/decisions/protocol.py): `input` is the record's state as JSON text,
// each noul question a `predicate` (answer: probability of true), each choice a `choice` whose
// values are the option keys (answer: probabilities[{value, probability}]), named by question key.
// vLLM reads them with the state as a shared prefix. Choices with more than 26 options (vLLM:
// "This model supports at most 26 choices per question") or fewer than 2, and everything once the
// engine answered 501, go to label-read. Seeds reorder a choice's options (the API has no seed
// field; the label an option gets follows its position) and the answers are averaged. A predicate
// has no options to reorder (vLLM's NoulQuestion reads its fixed "yes"/"no" labels), so it is read
// once, under the first seed, whatever the seeds. The flow
// is BatchedEndpointMethod's.
import { choiceDistribution, noulDistribution } from "./engine-distribution.js";
import { labelPermutation, DECISIONS_MAX_QUESTIONS, DecisionResponseSchema, SYSTEMONE_MAX_CHOICE_OPTIONS, type DecisionAnswer, type DecisionResponse } from "../../common/engine-protocol/index.js";
import type { Distribution } from "../../common/results/index.js";
import type { Question } from "../../common/suite/index.js";
import { BatchedEndpointMethod, type BatchedMethodOptions, type DecisionEndpoint } from "./batched-endpoint-method.js";

export type DecisionsOptions = BatchedMethodOptions;

/** The suite's distribution from one Decisions answer, or a problem string. */
export function decisionToDistribution(question: Question, answer: DecisionAnswer): Distribution | string {
  if (question.type === "noul") {
    if (answer.type !== "predicate") return `engine answered type ${JSON.stringify(answer.type)} for a predicate`;
    return noulDistribution(answer.probability, "predicate answer without a probability");
  }
  if (answer.type !== "choice") return `engine answered type ${JSON.stringify(answer.type)} for a choice`;
  const byValue = new Map((answer.probabilities ?? []).map((e) => [String(e.value), e.probability]));
  return choiceDistribution(Object.keys(question.criteria), (k) => byValue.get(k), "choice");
}

/** Choice values of a Decisions answer that the question does not have (a predicate has none). */
export function decisionUnknownLabels(question: Question, answer: DecisionAnswer): string[] {
  if (question.type !== "choice" || answer.type !== "choice") return [];
  return (answer.probabilities ?? []).map((e) => String(e.value)).filter((value) => !Object.hasOwn(question.criteria, value));
}

/** POST /v1/decisions for BatchedEndpointMethod. */
const DECISIONS_ENDPOINT: DecisionEndpoint<DecisionResponse, DecisionAnswer> = {
  method: "decisions",
  path: "/v1/decisions",
  maxQuestions: DECISIONS_MAX_QUESTIONS,
  seedField: false,
  responseSchema: DecisionResponseSchema,
  route(question) {
    const n = question.type === "choice" ? Object.keys(question.criteria).length : 2;
    if (n < 2) return { to: "fallback", reason: `choice with ${n} option(s): a Decisions choice has at least 2` };
    if (n > SYSTEMONE_MAX_CHOICE_OPTIONS) return { to: "fallback", reason: `choice with ${n} options: at most ${SYSTEMONE_MAX_CHOICE_OPTIONS} per question (needs label-read)` };
    return { to: "endpoint" };
  },
  // A predicate has no options to permute: its request is the same under every seed, so N seeds
  // would be N identical reads of one answer. Read it once.
  seedInvariant: (question) => question.type === "noul",
  body(record, keys, { seed, info }) {
    const questions = keys.map((key) => {
      const q = record.questions[key]!;
      if (q.type === "noul") {
        const sides = [q.criteria.true ? `true means: ${q.criteria.true}` : "", q.criteria.false ? `false means: ${q.criteria.false}` : ""].filter(Boolean);
        return { type: "predicate", name: key, instructions: sides.length ? `${q.instructions} (${sides.join("; ")})` : q.instructions };
      }
      const optionKeys = Object.keys(q.criteria);
      const positions = labelPermutation(seed ?? 0, optionKeys.length);
      const ordered = optionKeys.map((k, i) => ({ k, at: positions[i]! })).sort((a, b) => a.at - b.at);
      return { type: "choice", name: key, instructions: q.instructions, choices: ordered.map(({ k }) => ({ value: k, description: q.criteria[k] ?? "" })) };
    });
    return { model: info.model, input: JSON.stringify(record.state), questions };
  },
  // vLLM answers in question order.
  answerOf: (response, _key, index) => response.answers[index],
  distribution: decisionToDistribution,
  unknownLabels: decisionUnknownLabels,
};

export class DecisionsMethod extends BatchedEndpointMethod<DecisionResponse, DecisionAnswer> {
  declare readonly name: "decisions";
  constructor(options: DecisionsOptions) {
    super(options, DECISIONS_ENDPOINT);
  }
}

// The `systemone` engine method: a record's questions go to vLLM's POST /v1/systemone in the suite's
// own format (state + questions), at most 64 per request; the requests of a record share the state,
// so the engine's prefix cache prefills it once. Limits and wording follow vLLM
// (common/engine-protocol/vllm.ts cites the files). The flow is BatchedEndpointMethod's.
// Seeds go as the request's `seed` where the engine honours it (seed-probe.ts); where it does not
// (current vLLM: no such field, accepted and ignored), each seed's request lists every choice's
// options in that seed's order (labelPermutation, as /v1/decisions does): systemone labels
// options A, B, C... in the order sent, so the label each option gets changes with the seed
// exactly as the seed field would make it. A yes/no question has no options to reorder and is
// read once. The answer names options by key, so nothing needs mapping back.
import { choiceDistribution, noulDistribution } from "./engine-distribution.js";
import type { Question } from "../../common/suite/index.js";
import type { Distribution } from "../../common/results/index.js";
import { labelPermutation, SYSTEMONE_MAX_CHOICE_OPTIONS, SYSTEMONE_MAX_QUESTIONS, SystemOneResponseSchema, type SystemOneAnswer, type SystemOneRequest, type SystemOneResponse } from "../../common/engine-protocol/index.js";
import { BatchedEndpointMethod, type BatchedMethodOptions, type DecisionEndpoint } from "./batched-endpoint-method.js";
import { OrderedObject, orderedJson } from "./ordered-json.js";

/** A choice's option keys in the order a seed gives them (option i at label position perm[i]). */
export function optionsInSeedOrder(keys: readonly string[], seed: number): string[] {
  const positions = labelPermutation(seed, keys.length);
  const ordered: string[] = new Array<string>(keys.length);
  keys.forEach((k, i) => (ordered[positions[i]!] = k));
  return ordered;
}

export type SystemOneOptions = BatchedMethodOptions;

/** Where a question goes: systemone, or label-read for the reason given. */
export type SystemOneRoute = { to: "systemone" } | { to: "fallback"; reason: string };

/** Questions /v1/systemone cannot take go to label-read. */
export function routeSystemOne(question: Question): SystemOneRoute {
  if (question.type === "choice") {
    const n = Object.keys(question.criteria).length;
    if (n > SYSTEMONE_MAX_CHOICE_OPTIONS) {
      return { to: "fallback", reason: `choice with ${n} options: /v1/systemone reads one letter label per option, at most ${SYSTEMONE_MAX_CHOICE_OPTIONS} (needs label-read)` };
    }
    if (n === 0) return { to: "fallback", reason: "choice without options" };
  }
  return { to: "systemone" };
}

/** The suite's distribution from one systemone answer, or a problem string. */
export function answerToDistribution(question: Question, answer: SystemOneAnswer): Distribution | string {
  if (answer.type !== question.type) return `engine answered type ${JSON.stringify(answer.type)} for a ${question.type} question`;
  if (question.type === "noul") return noulDistribution(answer.noul ?? answer.probabilities.yes, "noul answer without a probability of yes");
  return choiceDistribution(Object.keys(question.criteria), (k) => answer.probabilities[k], "option");
}

/** Labels of a systemone answer that the question does not have (noul answers by yes and no). */
export function systemOneUnknownLabels(question: Question, answer: SystemOneAnswer): string[] {
  const known = question.type === "choice" ? question.criteria : NOUL_LABELS;
  return Object.keys(answer.probabilities).filter((label) => !Object.hasOwn(known, label));
}

const NOUL_LABELS = { yes: "", no: "" };

/** POST /v1/systemone for BatchedEndpointMethod. */
const SYSTEMONE_ENDPOINT: DecisionEndpoint<SystemOneResponse, SystemOneAnswer> = {
  method: "systemone",
  path: "/v1/systemone",
  maxQuestions: SYSTEMONE_MAX_QUESTIONS,
  seedField: true,
  responseSchema: SystemOneResponseSchema,
  route(question) {
    const route = routeSystemOne(question);
    return route.to === "systemone" ? { to: "endpoint" } : route;
  },
  seedInvariant: (question, seedAs) => seedAs === "order" && question.type !== "choice",
  body(record, keys, { seed, seedAs, model }) {
    if (seedAs === "order" && seed !== null) {
      // No seed field: the options go in the seed's order, written as JSON text so that the order
      // holds for integer-like keys too (vLLM labels a dict's keys in the order received).
      return orderedJson({
        ...(model ? { model } : {}),
        state: JSON.stringify(record.state),
        questions: new OrderedObject(
          keys.map((k) => {
            const q = record.questions[k]!;
            const criteria = q.type === "choice" ? new OrderedObject(optionsInSeedOrder(Object.keys(q.criteria), seed).map((o) => [o, q.criteria[o]])) : q.criteria;
            return [k, { type: q.type, instructions: q.instructions, criteria }];
          }),
        ),
      });
    }
    const request: SystemOneRequest = {
      ...(model ? { model } : {}),
      ...(seed !== null ? { seed } : {}),
      // The state goes as its JSON text, never as an object: the older template-based systemone
      // renders an object with Python's json.dumps, whose ensure_ascii escapes every non-ASCII
      // character (Vietnamese arrives as \uXXXX, several tokens each), while a string goes into the
      // prompt as is on every version (StructuredDecisionRequest.state takes text or JSON,
      // vllm/entrypoints/generate/structured_decisions/protocol.py).
      state: JSON.stringify(record.state),
      // Exactly the three fields vLLM takes: a suite question may carry extra fields, and vLLM
      // answers 400 for any unknown field of a question.
      questions: Object.fromEntries(
        keys.map((k) => {
          const q = record.questions[k]!;
          return [k, { type: q.type, instructions: q.instructions, criteria: q.criteria }];
        }),
      ),
    };
    return request;
  },
  answerOf: (response, key) => response.answers[key],
  distribution: answerToDistribution,
  unknownLabels: systemOneUnknownLabels,
};

export class SystemOneMethod extends BatchedEndpointMethod<SystemOneResponse, SystemOneAnswer> {
  declare readonly name: "systemone";
  constructor(options: SystemOneOptions) {
    super(options, SYSTEMONE_ENDPOINT);
  }
}

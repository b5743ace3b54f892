// POST /v1/decisions of the sim: OpenAI's Decisions API as vLLM implements it.
// vllm/entrypoints/openai/decisions/protocol.py: DecisionRequest {model, input (text or user
// messages), questions[1..200] of predicate | choice (2..255 distinct values) | score (2..10
// levels)}, every model extra="forbid"; answers in question order: predicate {name, probability},
// choice {name, choice, probabilities[{value, probability}], confidence}, score {...}; usage with
// input_tokens_details.cached_tokens.
// vllm/entrypoints/openai/decisions/adapters.py make_read_question: a predicate is read as a
// choice between false (A) and true (B); more options than labels is a 400 "This model supports
// at most 26 choices per question".
import { errorBody } from "../../../common/engine-protocol/vllm.js";
import { badRequest, modelNotFound, type Failure } from "./failure.js";
import type { ParsedQuestion, ParsedRequest } from "./systemone-request.js";

const LABELS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ".split("");
const MAX_QUESTIONS = 200;

export interface DecisionQuestionSpec {
  type: "predicate" | "choice" | "score";
  name: string | null;
  /** Choice values as sent (string or boolean). */
  values: Array<string | boolean>;
  levels: string[];
}

export interface ParsedDecisionRequest {
  /** As a structured-decisions request, so the sim's reads and oracle apply unchanged. */
  request: ParsedRequest;
  specs: DecisionQuestionSpec[];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

const invalid = (loc: string, msg: string): Failure => ({ ok: false, status: 400, body: errorBody(400, "Bad Request", `1 validation error:\n  {'loc': ('body', ${loc}), 'msg': '${msg}'}`, `body.${loc.replace(/'/g, "").replace(/, /g, ".")}`) });

function extraField(obj: Record<string, unknown>, allowed: string[], loc: string): Failure | undefined {
  const extra = Object.keys(obj).find((k) => !allowed.includes(k));
  return extra === undefined ? undefined : invalid(`${loc}, '${extra}'`, "Extra inputs are not permitted");
}

function inputText(input: unknown): string | Failure {
  if (typeof input === "string") return input;
  if (!Array.isArray(input)) return invalid("'input'", "Input should be a valid string or list of messages");
  const parts: string[] = [];
  for (const [i, m] of input.entries()) {
    if (!isObject(m) || m.role !== "user") return invalid(`'input', ${i}, 'role'`, "Input should be 'user'");
    if (typeof m.content === "string") parts.push(m.content);
    else if (Array.isArray(m.content)) {
      if (m.content.some((p) => isObject(p) && p.type === "input_image")) return invalid(`'input', ${i}`, "Value error, Decisions supports text input only; images are not supported");
      parts.push(m.content.map((p) => (isObject(p) && typeof p.text === "string" ? p.text : "")).join("\n"));
    } else return invalid(`'input', ${i}, 'content'`, "Input should be a valid string or list");
  }
  return parts.join("\n\n");
}

export function parseDecisionRequest(body: unknown, servedModel: string, maxOptions: number): ParsedDecisionRequest | Failure {
  if (!isObject(body)) return invalid("", "Input should be a valid dictionary or object to extract fields from");
  const extra = extraField(body, ["model", "input", "questions", "safety_identifier"], "");
  if (extra) return extra;
  if (typeof body.model !== "string") return invalid("'model'", body.model === undefined ? "Field required" : "Input should be a valid string");
  if (body.model !== servedModel) return modelNotFound(body.model);
  const text = inputText(body.input);
  if (typeof text !== "string") return text;
  const qs = body.questions;
  if (!Array.isArray(qs) || qs.length < 1 || qs.length > MAX_QUESTIONS) return invalid("'questions'", `List should have at least 1 item and at most ${MAX_QUESTIONS} items`);
  const specs: DecisionQuestionSpec[] = [];
  const questions: ParsedQuestion[] = [];
  for (const [i, q] of qs.entries()) {
    if (!isObject(q)) return invalid(`'questions', ${i}`, "Input should be a valid dictionary");
    if (typeof q.instructions !== "string") return invalid(`'questions', ${i}, 'instructions'`, "Field required");
    if ("name" in q && typeof q.name !== "string") return invalid(`'questions', ${i}`, "Value error, name must be a string when provided");
    const name = typeof q.name === "string" ? q.name : null;
    let spec: DecisionQuestionSpec;
    let options: ParsedQuestion["options"];
    let criteria: unknown;
    if (q.type === "predicate") {
      const e = extraField(q, ["type", "instructions", "name"], `'questions', ${i}`);
      if (e) return e;
      spec = { type: "predicate", name, values: [], levels: [] };
      // Read as false (A) / true (B); named no/yes inside the sim so the oracle's booleans apply.
      options = [
        { name: "no", description: null },
        { name: "yes", description: null },
      ];
      criteria = {};
    } else if (q.type === "choice") {
      const e = extraField(q, ["type", "instructions", "name", "choices"], `'questions', ${i}`);
      if (e) return e;
      const choices = q.choices;
      if (!Array.isArray(choices) || choices.length < 2 || choices.length > 255) return invalid(`'questions', ${i}, 'choices'`, "List should have at least 2 items and at most 255 items");
      const values: Array<string | boolean> = [];
      for (const [j, c] of choices.entries()) {
        if (!isObject(c) || (typeof c.value !== "string" && typeof c.value !== "boolean")) return invalid(`'questions', ${i}, 'choices', ${j}, 'value'`, "Input should be a valid string or boolean");
        const ce = extraField(c, ["value", "description"], `'questions', ${i}, 'choices', ${j}`);
        if (ce) return ce;
        values.push(c.value);
      }
      if (new Set(values.map((v) => `${typeof v}:${String(v)}`)).size !== values.length) return invalid(`'questions', ${i}`, "Value error, choice values must be distinct");
      spec = { type: "choice", name, values, levels: [] };
      options = (choices as Array<Record<string, unknown>>).map((c) => ({ name: String(c.value), description: typeof c.description === "string" && c.description ? c.description : null }));
      criteria = Object.fromEntries(options.map((o) => [o.name, o.description]));
    } else if (q.type === "score") {
      const e = extraField(q, ["type", "instructions", "name", "levels"], `'questions', ${i}`);
      if (e) return e;
      const levels = q.levels;
      if (!Array.isArray(levels) || levels.length < 2 || levels.length > 10 || !levels.every((l) => isObject(l) && typeof l.label === "string")) {
        return invalid(`'questions', ${i}, 'levels'`, "List should have at least 2 items and at most 10 items");
      }
      const labels = (levels as Array<Record<string, unknown>>).map((l) => String(l.label));
      spec = { type: "score", name, values: [], levels: labels };
      options = (levels as Array<Record<string, unknown>>).map((l) => ({ name: String(l.label), description: typeof l.description === "string" && l.description ? l.description : null }));
      criteria = labels;
    } else {
      return invalid(`'questions', ${i}`, "Input tag does not match any of the expected tags: 'predicate', 'choice', 'score'");
    }
    const limit = Math.min(maxOptions, LABELS.length);
    if (options.length > limit) return badRequest(`This model supports at most ${limit} choices per question`);
    specs.push(spec);
    questions.push({
      id: name ?? String(i),
      type: "choice",
      instructions: q.instructions,
      options,
      labels: LABELS.slice(0, options.length),
      criteria,
    });
  }
  let state: unknown = text;
  try {
    // Agents send a record's state as its JSON text; the oracle keys on the parsed value.
    const parsed: unknown = JSON.parse(text);
    if (isObject(parsed)) state = parsed;
  } catch {
    /* plain text input */
  }
  return { request: { model: body.model, state, instructions: null, cacheSalt: null, questions, seed: null }, specs };
}

/** One answer of the Decisions API from the label probabilities (adapters.py make_answer). */
export function decisionAnswer(spec: DecisionQuestionSpec, probs: readonly number[], labelMass: number): Record<string, unknown> {
  if (spec.type === "predicate") return { type: "predicate", name: spec.name, probability: probs[1] };
  let top = 0;
  probs.forEach((p, i) => {
    if (p > probs[top]!) top = i;
  });
  const confidence = probs[top]! * labelMass;
  if (spec.type === "choice") {
    return {
      type: "choice",
      name: spec.name,
      choice: spec.values[top],
      probabilities: spec.values.map((value, i) => ({ value, probability: probs[i] })),
      confidence,
    };
  }
  return {
    type: "score",
    name: spec.name,
    score: probs.reduce((s, p, i) => s + i * p, 0),
    probabilities: spec.levels.map((label, i) => ({ value: i, label, probability: probs[i] })),
    confidence,
  };
}

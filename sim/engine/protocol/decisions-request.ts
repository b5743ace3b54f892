// POST /v1/decisions of the sim: OpenAI's Decisions API as vLLM implements it, checked in vLLM's
// order:
// 1. the pydantic model DecisionRequest (vllm/entrypoints/openai/decisions/protocol.py: {model,
//    input (text or user messages), questions[1..200] of predicate | choice (2..255 distinct
//    values) | score (2..10 levels)}, every model extra="forbid"), every error at once in
//    validation-error.ts's format;
// 2. a model without the Decisions API: 501 "The model does not support the Decisions API"
//    (decisions/api_router.py, after FastAPI validated the body);
// 3. the served model name (404, BaseServing._check_model in decisions/serving.py);
// 4. "questions: at most 64 for this model" (serving.py with NextTokenStrategy.limits(), a 400);
// 5. adapters.py make_read_question: a predicate is read as a choice between false (A) and true
//    (B); more options than labels is a 400 "This model supports at most 26 choices per question".
// Answers come in question order (adapters.py make_answer), usage with input_tokens_details.
import { badRequest, modelNotFound, notImplemented, type Failure } from "./failure.js";
import type { ParsedQuestion, ParsedRequest } from "./systemone-request.js";
import { listLengthError, validationFailure, valueError, type PydanticError } from "./validation-error.js";

const LABELS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ".split("");
/** DecisionRequest.questions max_length: the schema's bound, above the serving limit. */
const SCHEMA_MAX_QUESTIONS = 200;
const QUESTION_TAGS = ["predicate", "choice", "score"] as const;
const EXPECTED_TAGS = QUESTION_TAGS.map((t) => `'${t}'`).join(", ");

export interface DecisionLimits {
  servedModel: string;
  /** false: no Decisions API for this model (501). */
  decisionApi: boolean;
  /** The read strategy's questions per request (NextTokenStrategy: 64). */
  maxQuestions: number;
  /** Options per question the model can label (26). */
  maxOptions: number;
}

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

type Loc = Array<string | number>;

/** extra="forbid": one error per field the model does not declare. */
function extraFields(obj: Record<string, unknown>, allowed: readonly string[], loc: Loc, errors: PydanticError[]): void {
  for (const [k, v] of Object.entries(obj)) if (!allowed.includes(k)) errors.push({ type: "extra_forbidden", loc: [...loc, k], msg: "Extra inputs are not permitted", input: v });
}

function strictString(obj: Record<string, unknown>, field: string, loc: Loc, errors: PydanticError[], required: boolean): void {
  const v = obj[field];
  if (v === undefined) {
    if (required) errors.push({ type: "missing", loc: [...loc, field], msg: "Field required", input: obj });
  } else if (typeof v !== "string") errors.push({ type: "string_type", loc: [...loc, field], msg: "Input should be a valid string", input: v });
}

function checkInput(body: Record<string, unknown>, errors: PydanticError[]): void {
  const input = body.input;
  if (input === undefined) return void errors.push({ type: "missing", loc: ["body", "input"], msg: "Field required", input: body });
  if (typeof input === "string") return;
  if (!Array.isArray(input)) {
    // A union of str and list: pydantic reports each branch; the cleaned loc drops the branch names.
    errors.push({ type: "string_type", loc: ["body", "input"], msg: "Input should be a valid string", input });
    errors.push({ type: "list_type", loc: ["body", "input"], msg: "Input should be a valid list", input });
    return;
  }
  input.forEach((m, i) => {
    const loc: Loc = ["body", "input", i];
    if (!isObject(m)) return void errors.push({ type: "model_type", loc, msg: "Input should be a valid dictionary or instance of DecisionInputMessage", input: m });
    if (Array.isArray(m.content) && m.content.some((p) => isObject(p) && p.type === "input_image")) {
      // DecisionInputMessage.reject_images, a model_validator(mode="before").
      return void errors.push(valueError(loc, m, "Decisions supports text input only; images are not supported"));
    }
    extraFields(m, ["role", "content", "type"], loc, errors);
    if (m.role === undefined) errors.push({ type: "missing", loc: [...loc, "role"], msg: "Field required", input: m });
    else if (m.role !== "user") errors.push({ type: "literal_error", loc: [...loc, "role"], msg: "Input should be 'user'", input: m.role, ctx: { expected: "'user'" } });
    if (m.type !== undefined && m.type !== "message") errors.push({ type: "literal_error", loc: [...loc, "type"], msg: "Input should be 'message'", input: m.type, ctx: { expected: "'message'" } });
    const c = m.content;
    if (c === undefined) errors.push({ type: "missing", loc: [...loc, "content"], msg: "Field required", input: m });
    else if (Array.isArray(c)) {
      c.forEach((p, j) => {
        const ploc: Loc = [...loc, "content", j];
        if (!isObject(p)) return void errors.push({ type: "model_type", loc: ploc, msg: "Input should be a valid dictionary or instance of DecisionInputText", input: p });
        extraFields(p, ["type", "text"], ploc, errors);
        if (p.type !== "input_text") errors.push({ type: "literal_error", loc: [...ploc, "type"], msg: "Input should be 'input_text'", input: p.type, ctx: { expected: "'input_text'" } });
        strictString(p, "text", ploc, errors, true);
      });
    } else if (typeof c !== "string") {
      errors.push({ type: "string_type", loc: [...loc, "content"], msg: "Input should be a valid string", input: c });
      errors.push({ type: "list_type", loc: [...loc, "content"], msg: "Input should be a valid list", input: c });
    }
  });
}

/** One question of the discriminated union; member errors carry the tag in their loc. */
function checkQuestion(q: unknown, i: number, errors: PydanticError[]): void {
  const at: Loc = ["body", "questions", i];
  if (!isObject(q)) return void errors.push({ type: "model_attributes_type", loc: at, msg: "Input should be a valid dictionary or object to extract fields from", input: q });
  if (q.type === undefined) return void errors.push({ type: "union_tag_not_found", loc: at, msg: "Unable to extract tag using discriminator 'type'", input: q, ctx: { discriminator: "'type'" } });
  if (!(QUESTION_TAGS as readonly unknown[]).includes(q.type)) {
    const tag = typeof q.type === "string" ? q.type : String(q.type);
    return void errors.push({
      type: "union_tag_invalid",
      loc: at,
      msg: `Input tag '${tag}' found using 'type' does not match any of the expected tags: ${EXPECTED_TAGS}`,
      input: q,
      ctx: { discriminator: "'type'", tag, expected_tags: EXPECTED_TAGS },
    });
  }
  const tag = q.type as (typeof QUESTION_TAGS)[number];
  const loc: Loc = [...at, tag];
  const before = errors.length;
  const fields = tag === "predicate" ? ["type", "instructions", "name"] : tag === "choice" ? ["type", "instructions", "name", "choices"] : ["type", "instructions", "name", "levels"];
  extraFields(q, fields, loc, errors);
  strictString(q, "instructions", loc, errors, true);
  if (q.name !== undefined && q.name !== null) strictString(q, "name", loc, errors, false);
  if (tag === "choice") {
    const choices = q.choices;
    if (choices === undefined) errors.push({ type: "missing", loc: [...loc, "choices"], msg: "Field required", input: q });
    else if (!Array.isArray(choices)) errors.push({ type: "list_type", loc: [...loc, "choices"], msg: "Input should be a valid list", input: choices });
    else {
      choices.forEach((c, j) => {
        const cloc: Loc = [...loc, "choices", j];
        if (!isObject(c)) return void errors.push({ type: "model_type", loc: cloc, msg: "Input should be a valid dictionary or instance of ChoiceOption", input: c });
        extraFields(c, ["value", "description"], cloc, errors);
        if (c.value === undefined) errors.push({ type: "missing", loc: [...cloc, "value"], msg: "Field required", input: c });
        else if (typeof c.value !== "string" && typeof c.value !== "boolean") {
          errors.push({ type: "string_type", loc: [...cloc, "value"], msg: "Input should be a valid string", input: c.value });
          errors.push({ type: "bool_type", loc: [...cloc, "value"], msg: "Input should be a valid boolean", input: c.value });
        }
        strictString(c, "description", cloc, errors, false);
      });
      const length = listLengthError([...loc, "choices"], choices, 2, 255);
      if (length) errors.push(length);
    }
  } else if (tag === "score") {
    const levels = q.levels;
    if (levels === undefined) errors.push({ type: "missing", loc: [...loc, "levels"], msg: "Field required", input: q });
    else if (!Array.isArray(levels)) errors.push({ type: "list_type", loc: [...loc, "levels"], msg: "Input should be a valid list", input: levels });
    else {
      levels.forEach((l, j) => {
        const lloc: Loc = [...loc, "levels", j];
        if (!isObject(l)) return void errors.push({ type: "model_type", loc: lloc, msg: "Input should be a valid dictionary or instance of ScoreLevel", input: l });
        extraFields(l, ["label", "description"], lloc, errors);
        strictString(l, "label", lloc, errors, true);
        strictString(l, "description", lloc, errors, false);
      });
      const length = listLengthError([...loc, "levels"], levels, 2, 10);
      if (length) errors.push(length);
    }
  }
  if (errors.length > before) return;
  // model_validator(mode="after") checks, once the fields are valid.
  if ("name" in q && q.name === null) errors.push(valueError(loc, q, "name must be a string when provided"));
  else if (tag === "choice") {
    const values = (q.choices as Array<{ value: string | boolean }>).map((c) => `${typeof c.value}:${String(c.value)}`);
    if (new Set(values).size !== values.length) errors.push(valueError(loc, q, "choice values must be distinct"));
  }
}

/** Every pydantic error of the body, in field order. */
function schemaErrors(body: unknown): PydanticError[] {
  if (!isObject(body)) return [{ type: "model_attributes_type", loc: ["body"], msg: "Input should be a valid dictionary or object to extract fields from", input: body }];
  const errors: PydanticError[] = [];
  extraFields(body, ["model", "input", "questions", "safety_identifier"], ["body"], errors);
  strictString(body, "model", ["body"], errors, true);
  checkInput(body, errors);
  const qs = body.questions;
  if (qs === undefined) errors.push({ type: "missing", loc: ["body", "questions"], msg: "Field required", input: body });
  else if (!Array.isArray(qs)) errors.push({ type: "list_type", loc: ["body", "questions"], msg: "Input should be a valid list", input: qs });
  else {
    qs.forEach((q, i) => checkQuestion(q, i, errors));
    const length = listLengthError(["body", "questions"], qs, 1, SCHEMA_MAX_QUESTIONS);
    if (length) errors.push(length);
  }
  if (body.safety_identifier !== undefined && body.safety_identifier !== null) strictString(body, "safety_identifier", ["body"], errors, false);
  return errors;
}

/** adapters.py input_text: the messages' text joined by blank lines. */
function inputText(input: string | Array<Record<string, unknown>>): string {
  if (typeof input === "string") return input;
  return input
    .map((m) => (typeof m.content === "string" ? m.content : (m.content as Array<{ text: string }>).map((p) => p.text).join("\n")))
    .join("\n\n");
}

export function parseDecisionRequest(body: unknown, limits: DecisionLimits): ParsedDecisionRequest | Failure {
  const errors = schemaErrors(body);
  if (errors.length > 0) return validationFailure(errors);
  if (!limits.decisionApi) return notImplemented("The model does not support the Decisions API");
  const req = body as { model: string; input: string | Array<Record<string, unknown>>; questions: Array<Record<string, unknown>> };
  if (req.model !== limits.servedModel) return modelNotFound(req.model);
  if (req.questions.length > limits.maxQuestions) return badRequest(`questions: at most ${limits.maxQuestions} for this model`);
  const specs: DecisionQuestionSpec[] = [];
  const questions: ParsedQuestion[] = [];
  for (const [i, q] of req.questions.entries()) {
    const name = typeof q.name === "string" ? q.name : null;
    let spec: DecisionQuestionSpec;
    let options: ParsedQuestion["options"];
    let oracleOptions: string[] | null;
    if (q.type === "predicate") {
      spec = { type: "predicate", name, values: [], levels: [] };
      // Read as false (A) / true (B); named no/yes inside the sim so the oracle's booleans apply.
      options = [
        { name: "no", description: null },
        { name: "yes", description: null },
      ];
      oracleOptions = null;
    } else if (q.type === "choice") {
      const choices = q.choices as Array<{ value: string | boolean; description?: string }>;
      spec = { type: "choice", name, values: choices.map((c) => c.value), levels: [] };
      options = choices.map((c) => ({ name: String(c.value), description: c.description ? c.description : null }));
      oracleOptions = options.map((o) => o.name);
    } else {
      const levels = q.levels as Array<{ label: string; description?: string }>;
      spec = { type: "score", name, values: [], levels: levels.map((l) => l.label) };
      options = levels.map((l) => ({ name: l.label, description: l.description ? l.description : null }));
      oracleOptions = options.map((o) => o.name);
    }
    const limit = Math.min(limits.maxOptions, LABELS.length);
    if (options.length > limit) return badRequest(`This model supports at most ${limit} choices per question`);
    specs.push(spec);
    questions.push({ id: name ?? String(i), type: "choice", instructions: q.instructions as string, options, labels: LABELS.slice(0, options.length), oracleOptions });
  }
  const text = inputText(req.input);
  let state: unknown = text;
  try {
    // Agents send a record's state as its JSON text; the oracle keys on the parsed value.
    const parsed: unknown = JSON.parse(text);
    if (isObject(parsed)) state = parsed;
  } catch {
    /* plain text input */
  }
  return { request: { model: req.model, state, instructions: null, cacheSalt: null, questions, seed: null }, specs };
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

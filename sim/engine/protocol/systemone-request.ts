// Validation of POST /v1/systemone exactly in vLLM's order, with vLLM's status codes, error types and
// wording:
// 1. content type (vllm/entrypoints/serve/utils/api_utils.py validate_json_request: a
//    RequestValidationError, so 400 "Bad Request");
// 2. the pydantic model StructuredDecisionRequest (validation-error.ts);
// 3. a model without structured decisions: 501 (structured_decisions/api_router.py raises
//    NotImplementedError once FastAPI has validated the body);
// 4. the served model name (404 NotFoundError, BaseServing._check_model);
// 5. parse_questions / build_question (400 BadRequestError; structured_decisions serving.py and
//    vllm/entrypoints/openai/decisions/question_types.py);
// 6. thinking must stay off (decisions/strategies.py NextTokenStrategy._read_request).
// The context-length check needs the rendered prompt: endpoints/systemone.ts.
import { errorBody, SYSTEMONE_QUESTION_TYPES } from "../../../common/engine-protocol/index.js";
import { badRequest, modelNotFound, notImplemented, type Failure } from "./failure.js";
import { pyRepr } from "./python-repr.js";
import { validationFailure, type PydanticError } from "./validation-error.js";

export interface ParsedOption {
  name: string;
  description: string | null;
}

export interface ParsedQuestion {
  id: string;
  type: (typeof SYSTEMONE_QUESTION_TYPES)[number];
  instructions: string;
  options: ParsedOption[];
  /** The labels the model reads, in option order. */
  labels: string[];
  /** The option names the oracle keys on, in any order; null for a yes/no question. */
  oracleOptions: string[] | null;
}

export interface ParsedRequest {
  model: string | null;
  state: unknown;
  instructions: string | null;
  cacheSalt: string | null;
  questions: ParsedQuestion[];
  /** Label-permutation seed (changes which label each option gets); null = natural order. */
  seed: number | null;
}

export interface ValidationLimits {
  servedModel: string;
  /** false: the model has no structured-decisions read strategy (501 after the schema). */
  decisionApi: boolean;
  maxQuestions: number;
  maxOptions: number;
  /** false: a vLLM whose request has no `seed` (current): any value passes and is ignored. Default true. */
  seedField?: boolean;
}

export type ValidationResult = { ok: true; request: ParsedRequest } | Failure;

const CHOICE_LABELS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ".split("");
const NOUL_LABELS = ["yes", "no"];
const SCORE_LABELS = "0123456789".split("");
const QUESTION_FIELDS = new Set(["type", "instructions", "criteria"]);

/** Body that is not application/json. */
export function unsupportedMediaType(): Failure {
  const message = "1 validation error:\n  Unsupported Media Type: Only 'application/json' is allowed";
  return { ok: false, status: 400, body: errorBody(400, "Bad Request", message) };
}

/** Body that is not JSON (FastAPI reports json_invalid at loc (body, position)). */
export function invalidJson(position: number): Failure {
  return validationFailure([{ type: "json_invalid", loc: ["body", position], msg: "JSON decode error", input: {} }]);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function checkOptionalString(body: Record<string, unknown>, field: string, errors: PydanticError[]): void {
  const v = body[field];
  if (v !== undefined && v !== null && typeof v !== "string") errors.push({ type: "string_type", loc: ["body", field], msg: "Input should be a valid string", input: v });
}

export function validateSystemOneRequest(body: unknown, limits: ValidationLimits): ValidationResult {
  // 2. pydantic: every error of the body at once.
  if (!isPlainObject(body)) {
    return validationFailure([{ type: "model_attributes_type", loc: ["body"], msg: "Input should be a valid dictionary or object to extract fields from", input: body }]);
  }
  const errors: PydanticError[] = [];
  if (!("state" in body)) errors.push({ type: "missing", loc: ["body", "state"], msg: "Field required", input: body });
  const questions = body.questions;
  if (questions === undefined) errors.push({ type: "missing", loc: ["body", "questions"], msg: "Field required", input: body });
  else if (!isPlainObject(questions)) errors.push({ type: "dict_type", loc: ["body", "questions"], msg: "Input should be a valid dictionary", input: questions });
  else {
    for (const [qid, spec] of Object.entries(questions)) {
      if (!isPlainObject(spec)) {
        errors.push({ type: "model_type", loc: ["body", "questions", qid], msg: "Input should be a valid dictionary or instance of QuestionSpec", input: spec });
      } else if (spec.type === undefined) {
        errors.push({ type: "missing", loc: ["body", "questions", qid, "type"], msg: "Field required", input: spec });
      } else if (typeof spec.type !== "string") {
        errors.push({ type: "string_type", loc: ["body", "questions", qid, "type"], msg: "Input should be a valid string", input: spec.type });
      }
    }
  }
  for (const f of ["model", "instructions", "cache_salt", "request_id"]) checkOptionalString(body, f, errors);
  const ctk = body.chat_template_kwargs;
  if (ctk !== undefined && ctk !== null && !isPlainObject(ctk)) errors.push({ type: "dict_type", loc: ["body", "chat_template_kwargs"], msg: "Input should be a valid dictionary", input: ctk });
  const priority = body.priority;
  if (priority !== undefined && !(typeof priority === "number" && Number.isInteger(priority))) {
    errors.push({ type: "int_type", loc: ["body", "priority"], msg: "Input should be a valid integer", input: priority });
  }
  const seed = limits.seedField === false ? undefined : body.seed;
  if (seed !== undefined && seed !== null && !(typeof seed === "number" && Number.isInteger(seed))) {
    errors.push({ type: "int_type", loc: ["body", "seed"], msg: "Input should be a valid integer", input: seed });
  }
  if (errors.length > 0) return validationFailure(errors);

  // 3. no handler for the route.
  if (!limits.decisionApi) return notImplemented("The model does not support the structured decision API");

  // 4. the served model.
  const model = typeof body.model === "string" ? body.model : null;
  if (model !== null && model !== limits.servedModel) {
    return modelNotFound(model);
  }

  // 5. parse_questions.
  const specs = Object.entries(questions as Record<string, Record<string, unknown>>);
  if (specs.length === 0) return badRequest("questions: needs at least one question");
  if (specs.length > limits.maxQuestions) return badRequest(`questions: at most ${limits.maxQuestions} for this model`);
  const parsed: ParsedQuestion[] = [];
  for (const [qid, spec] of specs) {
    const extra = Object.keys(spec).filter((k) => !QUESTION_FIELDS.has(k)).sort();
    if (extra.length) return badRequest(`question ${pyRepr(qid)}: unknown field(s) ${pyRepr(extra)}`);
    const built = buildQuestion(qid, spec.type as string, spec.instructions, spec.criteria, limits.maxOptions);
    if (typeof built === "string") return badRequest(built);
    parsed.push(built);
  }

  // 6. a read is one token, so no thinking.
  if (isPlainObject(ctk) && ctk.enable_thinking) return badRequest("a read is the reply's first token, so thinking must be off");

  return {
    ok: true,
    request: {
      model,
      state: stateValue(body.state),
      instructions: typeof body.instructions === "string" ? body.instructions : null,
      cacheSalt: typeof body.cache_salt === "string" ? body.cache_salt : null,
      questions: parsed,
      seed: typeof seed === "number" ? seed : null,
    },
  };
}

/** build_question of question_types.py; a string is the 400's message. */
function buildQuestion(qid: string, type: string, instructions: unknown, criteria: unknown, maxOptions: number): ParsedQuestion | string {
  if (!qid) return "question ids must be non-empty";
  if (!(SYSTEMONE_QUESTION_TYPES as readonly string[]).includes(type)) {
    return `unknown question type ${pyRepr(type)}; supported: ${pyRepr([...SYSTEMONE_QUESTION_TYPES].sort())}`;
  }
  const qtype = type as ParsedQuestion["type"];
  let options: ParsedOption[];
  let labelSet: string[];
  if (qtype === "choice") {
    if (!isPlainObject(criteria) || Object.keys(criteria).length === 0) {
      return `question ${pyRepr(qid)}: choice criteria must map option names to a description or null`;
    }
    options = Object.entries(criteria).map(([name, d]) => ({ name, description: d === null || d === undefined ? null : String(d) }));
    labelSet = CHOICE_LABELS;
  } else if (qtype === "noul") {
    if (criteria !== null && criteria !== undefined && (!isPlainObject(criteria) || Object.keys(criteria).some((k) => k !== "true" && k !== "false"))) {
      return `question ${pyRepr(qid)}: noul criteria must be an object with true and false`;
    }
    const c = (criteria ?? {}) as Record<string, unknown>;
    const desc = (v: unknown) => (v === null || v === undefined ? null : String(v));
    options = [
      { name: "yes", description: desc(c.true) },
      { name: "no", description: desc(c.false) },
    ];
    labelSet = NOUL_LABELS;
  } else {
    if (!Array.isArray(criteria) || criteria.length < 2) return `question ${pyRepr(qid)}: score criteria must be an ordered list of levels`;
    options = criteria.map((level) => ({ name: String(level), description: null }));
    labelSet = SCORE_LABELS;
  }
  const names = options.map((o) => o.name);
  if (new Set(names).size !== names.length) return `question ${pyRepr(qid)}: duplicate option names`;
  const limit = Math.min(maxOptions, labelSet.length);
  if (options.length > limit) return `question ${pyRepr(qid)}: at most ${limit} options for this model`;
  const text = typeof instructions === "string" ? instructions : instructions === null || instructions === undefined ? "" : String(instructions);
  return { id: qid, type: qtype, instructions: text, options, labels: labelSet.slice(0, options.length), oracleOptions: qtype === "noul" ? null : names };
}

/**
 * The state as the oracle keys it: agents send a record's state as its JSON text (an object is
 * taken too, as vLLM takes both), and the oracle keys on the parsed value; other text stays text.
 */
function stateValue(state: unknown): unknown {
  if (typeof state !== "string") return state;
  try {
    const parsed: unknown = JSON.parse(state);
    return isPlainObject(parsed) ? parsed : state;
  } catch {
    return state;
  }
}

// Request validation errors as vLLM reports them. Two shapes:
// - a pydantic error of the request model: 400 "Bad Request", message "N validation error(s):" and
//   one python-dict line per error with `loc` as a dotted path, the echoed `input` bounded, at most
//   10 errors and 1000 characters per line; param = the first VLLMValidationError's parameter, else
//   the first error's dotted loc (vllm/entrypoints/serve/exception_handling/handlers/validation.py,
//   the version with _format_error and clean_loc_for_param);
// - a VLLMValidationError raised while serving: 400 BadRequestError, param = its parameter
//   (serve/exception_handling/error_response.py create_error_response).
import { errorBody } from "../../../common/engine-protocol/index.js";
import { VllmValidationError, type Failure } from "./failure.js";
import { pyRepr, pyStr } from "./python-repr.js";

export interface PydanticError {
  type: string;
  loc: Array<string | number>;
  msg: string;
  input: unknown;
  /** Printed as the `ctx` dict; `error` is a raised exception (VllmValidationError or ValueError text). */
  ctx?: Record<string, unknown>;
}

/** A ValueError (or VLLMValidationError) raised by a model validator, at `loc`. */
export function valueError(loc: Array<string | number>, input: unknown, error: VllmValidationError | string): PydanticError {
  const text = typeof error === "string" ? error : error.toString();
  return { type: "value_error", loc, msg: `Value error, ${text}`, input, ctx: { error } };
}

const MAX_REPORTED_ERRORS = 10;
const MAX_ERROR_INPUT_CHARS = 200;
const MAX_ERROR_CHARS = 1000;

/** _summarize_error_input: containers described, strings and scalars as bounded text. */
function summarizeInput(value: unknown): string {
  if (Array.isArray(value)) return `<list of ${value.length} items>`;
  if (value !== null && typeof value === "object") return `<dict of ${Object.keys(value).length} items>`;
  const text = pyStr(value);
  return text.length > MAX_ERROR_INPUT_CHARS ? `${text.slice(0, MAX_ERROR_INPUT_CHARS)}...[truncated]` : text;
}

function ctxRepr(ctx: Record<string, unknown>): string {
  const entries = Object.entries(ctx).map(([k, v]) => {
    if (v instanceof VllmValidationError) return `${pyRepr(k)}: VLLMValidationError(${pyRepr(v.message)})`;
    if (k === "error" && typeof v === "string") return `${pyRepr(k)}: ValueError(${pyRepr(v)})`;
    return `${pyRepr(k)}: ${pyRepr(v)}`;
  });
  return `{${entries.join(", ")}}`;
}

function formatError(e: PydanticError): string {
  let text = `{'type': ${pyRepr(e.type)}, 'loc': ${pyRepr(e.loc.map(String).join("."))}, 'msg': ${pyRepr(e.msg)}, 'input': ${pyRepr(summarizeInput(e.input))}`;
  if (e.ctx) text += `, 'ctx': ${ctxRepr(e.ctx)}`;
  text += "}";
  return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS)}...[truncated]` : text;
}

/** The 400 of a request that failed its pydantic model. */
export function validationFailure(errors: readonly PydanticError[]): Failure {
  const label = errors.length === 1 ? "error" : "errors";
  const shown = errors.slice(0, MAX_REPORTED_ERRORS);
  let message = `${errors.length} validation ${label}:\n`;
  message += shown.map((e) => `  ${formatError(e)}\n`).join("");
  if (errors.length > shown.length) message += `  ...and ${errors.length - shown.length} more ${label}\n`;
  const raised = errors.map((e) => e.ctx?.error).find((x): x is VllmValidationError => x instanceof VllmValidationError);
  const first = errors[0];
  const param = raised?.parameter ?? (first ? first.loc.map(String).join(".") : null);
  return { ok: false, status: 400, body: errorBody(400, "Bad Request", message.trimEnd(), param) };
}

/** A pydantic list length error (too_short / too_long) with its ctx. */
export function listLengthError(loc: Array<string | number>, list: readonly unknown[], min: number, max: number): PydanticError | undefined {
  const items = (n: number) => `${n} item${n === 1 ? "" : "s"}`;
  if (list.length < min) {
    return { type: "too_short", loc, msg: `List should have at least ${items(min)} after validation, not ${list.length}`, input: list, ctx: { field_type: "List", min_length: min, actual_length: list.length } };
  }
  if (list.length > max) {
    return { type: "too_long", loc, msg: `List should have at most ${items(max)} after validation, not ${list.length}`, input: list, ctx: { field_type: "List", max_length: max, actual_length: list.length } };
  }
  return undefined;
}

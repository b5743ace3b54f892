// A request the sim refuses: status and vLLM's error body, plus the refusals every endpoint shares.
// Sources (vllm-project/vllm): vllm/entrypoints/serve/exception_handling/error_response.py (the
// body), BaseServing._check_model (404), vllm/renderers/params.py TokenizeParams._token_len_check
// (the context-length VLLMValidationError: a 400 with param "input_tokens"). A VLLMValidationError's
// message ends with "(parameter=..., value=...)" (vllm/exceptions.py VLLMValidationError.__str__).
import { errorBody, type ErrorBody } from "../../../common/engine-protocol/index.js";
import { pyStr } from "./python-repr.js";

export type Failure = { ok: false; status: number; body: ErrorBody };

/** A VLLMValidationError: its message with the parameter and value appended, as str() gives it. */
export class VllmValidationError {
  constructor(
    readonly message: string,
    readonly parameter: string | null = null,
    readonly value: unknown = null,
  ) {}

  toString(): string {
    const extras: string[] = [];
    if (this.parameter !== null) extras.push(`parameter=${this.parameter}`);
    if (this.value !== null && this.value !== undefined) extras.push(`value=${pyStr(this.value)}`);
    return extras.length ? `${this.message} (${extras.join(", ")})` : this.message;
  }

  /** Raised while serving: a 400 BadRequestError. */
  failure(): Failure {
    return { ok: false, status: 400, body: errorBody(400, "BadRequestError", this.toString(), this.parameter) };
  }
}

export function badRequest(message: string, param: string | null = null): Failure {
  return { ok: false, status: 400, body: errorBody(400, "BadRequestError", message, param) };
}

export function modelNotFound(model: string): Failure {
  return { ok: false, status: 404, body: errorBody(404, "NotFoundError", `The model \`${model}\` does not exist.`, "model") };
}

/** A route whose handler the model lacks: create_error_response(NotImplementedError(...)). */
export function notImplemented(message: string): Failure {
  return { ok: false, status: 501, body: errorBody(501, "NotImplementedError", message) };
}

/** A prompt of `inputTokens` that does not leave room for `maxTokens` output tokens, or undefined when it fits. */
export function contextLengthFailure(inputTokens: number, maxTokens: number, maxModelLen: number): Failure | undefined {
  if (inputTokens + maxTokens <= maxModelLen) return undefined;
  const maxInput = maxModelLen - maxTokens;
  return new VllmValidationError(
    `You passed ${inputTokens} input tokens and requested ${maxTokens} output tokens. ` +
      `However, the model's context length is only ${maxModelLen} tokens, resulting in a maximum ` +
      `input length of ${maxInput} tokens. Please reduce the length of the input prompt.`,
    "input_tokens",
    inputTokens,
  ).failure();
}

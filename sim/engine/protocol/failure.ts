// A request the sim refuses: status and vLLM's error body, plus the refusals every endpoint shares.
// Sources (vllm-project/vllm): vllm/entrypoints/serve/exception_handling/error_response.py (the
// body), BaseServing._check_model (404), vllm/renderers/params.py TokenizeParams._token_len_check
// (the context-length 400 with param "input_tokens").
import { errorBody, type ErrorBody } from "../../../common/engine-protocol/vllm.js";

export type Failure = { ok: false; status: number; body: ErrorBody };

export function badRequest(message: string, param: string | null = null): Failure {
  return { ok: false, status: 400, body: errorBody(400, "BadRequestError", message, param) };
}

export function modelNotFound(model: string): Failure {
  return { ok: false, status: 404, body: errorBody(404, "NotFoundError", `The model \`${model}\` does not exist.`, "model") };
}

/** A prompt of `inputTokens` that does not leave room for `maxTokens` output tokens, or undefined when it fits. */
export function contextLengthFailure(inputTokens: number, maxTokens: number, maxModelLen: number): Failure | undefined {
  if (inputTokens + maxTokens <= maxModelLen) return undefined;
  const maxInput = maxModelLen - maxTokens;
  return badRequest(
    `You passed ${inputTokens} input tokens and requested ${maxTokens} output tokens. ` +
      `However, the model's context length is only ${maxModelLen} tokens, resulting in a maximum ` +
      `input length of ${maxInput} tokens. Please reduce the length of the input prompt.`,
    "input_tokens",
  );
}

// Which vLLM the sim behaves as. The vLLM releases agents meet differ in ways that change a run's
// numbers, so the sim can be each of them:
// - "structured-seed" (the default, the sim's behaviour before profiles): /v1/systemone and
//   /v1/decisions with `seed`, logprob_token_ids, /tokenize counting any prompt, no admission limit.
// - "legacy": a vLLM before structured decisions: no /v1/systemone or /v1/decisions route at all
//   (FastAPI's 404 {"detail":"Not Found"}, starlette/exceptions.py HTTPException via the router's
//   default not-found handler), and no logprob_token_ids (vllm/sampling_params.py before the field).
// - "current": vLLM main: /tokenize refuses a prompt longer than max_model_len (vllm/entrypoints/
//   serve/tokenize/serving.py renders through vllm/renderers/params.py, whose length check raises
//   the context-length 400); admission by question count against --max-num-queued-reqs (a batch of
//   N questions is N engine requests, each taking a queue slot; over the limit a 503,
//   vllm/v1/engine/async_llm.py's queue check); a structured-decisions read over the context is a
//   400 without figures ("Winnow decision exceeds the model context", vllm/entrypoints/openai/
//   decisions/strategies.py); usage.prompt_tokens_details is null unless
//   --enable-prompt-tokens-details (vllm/entrypoints/openai/completion/serving.py); /v1/systemone has
//   no `seed` (accepted and ignored); and a read that hits the prefix cache drifts from the cold
//   read by up to 2.6e-2 at temperature 0, structured decisions and completion/chat logprobs alike
//   (model/cache-drift.ts, vLLM issue 40896, PR 52701).
import { errorBody } from "../../common/engine-protocol/index.js";
import { badRequest, type Failure } from "./protocol/failure.js";

export const VLLM_PROFILES = ["structured-seed", "legacy", "current"] as const;
export type VllmProfile = (typeof VLLM_PROFILES)[number];

export function isVllmProfile(value: string): value is VllmProfile {
  return (VLLM_PROFILES as readonly string[]).includes(value);
}

/** The current profile's refusal of a structured-decisions read over the context: no figures. */
export function decisionOverflowFailure(): Failure {
  return badRequest("Winnow decision exceeds the model context");
}

/** The current profile's /tokenize refusal of a prompt over max_model_len, worded as vLLM's older check. */
export function tokenizeOverflowFailure(inputTokens: number, maxModelLen: number): Failure {
  return badRequest(
    `This model's maximum context length is ${maxModelLen} tokens. However, your request has ${inputTokens} input tokens. Please reduce the length of the input messages.`,
    "input_tokens",
  );
}

/** The current profile's admission refusal: a request whose reads would overfill the waiting queue. */
export function admissionFailure(requested: number, queued: number, limit: number): Failure {
  return {
    ok: false,
    status: 503,
    body: errorBody(503, "ServiceUnavailableError", `Server overloaded: ${requested} requests would join ${queued} queued, over max_num_queued_reqs=${limit}. Please retry with fewer requests.`),
  };
}

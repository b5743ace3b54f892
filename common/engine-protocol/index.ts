// vLLM's request and response shapes as the agent and the simulator both read them, and the
// label permutation they share.
export { labelPermutation } from "./label-permutation.js";
export { ChatCompletionResponseSchema, CompletionResponseSchema, DECISIONS_MAX_QUESTIONS, DecisionResponseSchema, DetokenizeResponseSchema, ModelListSchema, SYSTEMONE_MAX_CHOICE_OPTIONS, SYSTEMONE_MAX_QUESTIONS, SYSTEMONE_QUESTION_TYPES, SystemOneResponseSchema, TokenizeResponseSchema, contextLengthExcess, errorBody, isContextLengthError, isLogprobTokenIdsRejection, maxLogprobsAllowed, maxQuestionsAllowed, parseErrorBody, tokenIdOf, usageTokens, type ChatCompletionResponse, type CompletionResponse, type DecisionAnswer, type DecisionResponse, type ErrorBody, type ErrorInfo, type SystemOneAnswer, type SystemOneRequest, type SystemOneResponse, type SystemOneUsage, type TokenizeResponse } from "./vllm.js";
export { MODEL_NAME_MAX, MODEL_NAME_RULE, modelNameProblem } from "./model-name.js";

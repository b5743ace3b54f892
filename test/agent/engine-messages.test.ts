// The classifiers of vLLM's error messages and usage blocks the agent's methods act on
// (common/engine-protocol/vllm.ts), and the engine settings the agent warns about
// (agent/engine-settings.ts), as tables of the texts vLLM sends.
import { describe, expect, it } from "vitest";
import {
  contextLengthExcess,
  isContextLengthError,
  isLogprobTokenIdsRejection,
  maxLogprobsAllowed,
  maxQuestionsAllowed,
  usageTokens,
  type ErrorInfo,
} from "../../common/engine-protocol/vllm.js";
import { engineSettingWarnings, parseCacheConfig } from "../../agent/engine-settings.js";

const info = (message: string, param: string | null = null): ErrorInfo => ({ message, type: "BadRequestError", param, code: 400 });

describe("contextLengthExcess", () => {
  it.each<[string, ErrorInfo, number | undefined]>([
    [
      "token check (renderers/params.py _token_len_check)",
      info("You passed 5000 input tokens and requested 1 output tokens. However, the model's context length is only 4096 tokens, resulting in a maximum input length of 4095 tokens. Please reduce the length of the input prompt. (parameter=input_tokens, value=5000)", "input_tokens"),
      905,
    ],
    [
      "character check (_text_len_check)",
      info("You passed 90000 input characters and requested 1 output tokens. However, the model's context length is only 4096 tokens, resulting in a maximum input length of 4095 tokens (at most 40950 characters). Please reduce the length of the input prompt.", "input_text"),
      49050,
    ],
    ["older vLLM", info("This model's maximum context length is 2048 tokens. However, you requested 2100 tokens (2099 in the messages, 1 in the completion). Please reduce the length of the messages or completion."), 52],
    ["no figures", info("prompt too long"), undefined],
  ])("%s", (_name, error, excess) => {
    expect(contextLengthExcess(error)).toBe(excess);
    if (excess !== undefined) expect(isContextLengthError(400, error)).toBe(true);
  });
});

describe("limits named by a 400", () => {
  it.each<[number, string, number | undefined]>([
    [400, "questions: at most 64 for this model", 64],
    [400, "questions: at most 8 for this model (parameter=questions, value=20)", 8],
    [422, "questions: at most 64 for this model", undefined],
    [400, "List should have at least 1 item and at most 200 items", undefined],
  ])("maxQuestionsAllowed %i %s", (status, message, n) => {
    expect(maxQuestionsAllowed(status, info(message))).toBe(n);
  });
  it.each<[number, string, number | undefined]>([
    [400, "Requested sample logprobs of 64, which is greater than max allowed: 20", 20],
    [400, "Requested sample logprobs of 21, which is greater than max allowed: 20 (parameter=logprobs, value=21)", 20],
    [400, "Requested prompt logprobs of 21, which is greater than max allowed: 20", undefined],
    [500, "Requested sample logprobs of 64, which is greater than max allowed: 20", undefined],
  ])("maxLogprobsAllowed %i %s", (status, message, n) => {
    expect(maxLogprobsAllowed(status, info(message))).toBe(n);
  });
  it.each<[number, ErrorInfo, boolean]>([
    [400, info("Extra inputs are not permitted", "logprob_token_ids"), true],
    [422, info("1 validation error: logprob_token_ids: Extra inputs are not permitted"), true],
    [400, info("logprob_token_ids contains out-of-vocab token ids", "logprob_token_ids"), false],
    [400, info("requested logprob_token_ids of length 200, which is greater than max allowed: 128", "logprob_token_ids"), false],
    [400, info("temperature must be non-negative", "temperature"), false],
  ])("isLogprobTokenIdsRejection %i %j", (status, error, yes) => {
    expect(isLogprobTokenIdsRejection(status, error)).toBe(yes);
  });
});

describe("usageTokens", () => {
  it.each<[string, Parameters<typeof usageTokens>[0], ReturnType<typeof usageTokens>]>([
    ["systemone DecisionUsage: no cached count", { input_tokens: 120, output_tokens: 2 }, { prompt: 120, completion: 2, cached: undefined }],
    ["Decisions API with cached tokens", { input_tokens: 120, output_tokens: 2, input_tokens_details: { cached_tokens: 96 } }, { prompt: 120, completion: 2, cached: 96 }],
    ["completions with prompt_tokens_details", { prompt_tokens: 50, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 0 } }, { prompt: 50, completion: 1, cached: 0 }],
    ["completions without details", { prompt_tokens: 50, completion_tokens: 1, prompt_tokens_details: null }, { prompt: 50, completion: 1, cached: undefined }],
    ["no usage", undefined, { prompt: 0, completion: 0, cached: undefined }],
  ])("%s", (_name, usage, tokens) => {
    expect(usageTokens(usage)).toEqual(tokens);
  });
});

describe("engine settings", () => {
  const metrics = (labels: string) => `# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n# TYPE vllm:cache_config_info gauge\nvllm:cache_config_info{${labels}} 1.0\nvllm:num_requests_waiting{engine="0",model_name="m"} 0.0\n`;
  it.each<[string, string, boolean | undefined | "absent"]>([
    ["on", metrics('block_size="16",cache_dtype="auto",enable_prefix_caching="True",gpu_memory_utilization="0.9"'), true],
    ["off", metrics('block_size="16",enable_prefix_caching="False",engine="0"'), false],
    ["label absent", metrics('block_size="16"'), undefined],
    ["gauge absent", 'vllm:num_requests_waiting{engine="0"} 0.0\n', "absent"],
  ])("parseCacheConfig: prefix caching %s", (_name, text, expected) => {
    const cache = parseCacheConfig(text);
    if (expected === "absent") expect(cache).toBeUndefined();
    else expect(cache).toEqual({ enablePrefixCaching: expected });
  });
  it.each<[string, number, boolean | undefined, RegExp[]]>([
    ["all well", 32768, true, []],
    ["short context", 4096, true, [/max_model_len is 4096/]],
    ["no max_model_len", 0, undefined, [/no max_model_len/]],
    ["prefix caching off", 16384, false, [/--enable-prefix-caching/]],
    ["both", 2048, false, [/max_model_len is 2048/, /--enable-prefix-caching/]],
  ])("engineSettingWarnings: %s", (_name, maxModelLen, prefix, expected) => {
    const warnings = engineSettingWarnings({ model: "m", maxModelLen, capacity: 8 }, { enablePrefixCaching: prefix });
    expect(warnings).toHaveLength(expected.length);
    expected.forEach((re, i) => expect(warnings[i]).toMatch(re));
  });
});

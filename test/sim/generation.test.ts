// The sim's /tokenize, /v1/completions, /v1/chat/completions and /v1/decisions over real HTTP.
import { afterEach, describe, expect, it } from "vitest";
import { startSimEngine, type SimEngine, type SimEngineOptions } from "../../sim/engine/server.js";
import { SimTokenizer } from "../../sim/engine/model/tokenizer.js";
import { TokenModel } from "../../sim/engine/model/token-model.js";
import { postJson } from "./engine-fixtures.js";

const engines: SimEngine[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
});

async function engine(options: SimEngineOptions = {}): Promise<SimEngine> {
  const e = await startSimEngine({ model: "tiny", seed: 1, ...options });
  engines.push(e);
  return e;
}

const PROMPT = "The parcel arrived late and crushed.\n\nQuestion: Which team?\nA: billing\nB: shipping\nAQ: other\nAnswer:";

describe("sim tokenizer", () => {
  it("is deterministic, keeps line breaks, and makes some two-letter labels two tokens", () => {
    const t = new SimTokenizer();
    expect(t.encode(PROMPT)).toEqual(new SimTokenizer().encode(PROMPT));
    expect(t.encode("A\nB").map((id) => t.decodeToken(id))).toEqual(["A", "\n", "B"]);
    expect(t.encode("AB")).toHaveLength(1);
    expect(t.encode("AQ").map((id) => t.decodeToken(id))).toEqual(["A", "Q"]);
    expect(t.encode("yes")).toHaveLength(1);
    expect(t.encode("<|im_start|>user")[0]).toBe(t.idOf("<|im_start|>"));
  });
});

describe("sim engine: /tokenize", () => {
  it("answers {count, max_model_len, tokens, token_strs} for a prompt or chat messages", async () => {
    const e = await engine({ maxModelLen: 4096 });
    const res = await postJson(`${e.url}/tokenize`, { prompt: "A: billing", return_token_strs: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ count: 4, max_model_len: 4096 });
    // Vocabulary pieces as a byte-level BPE tokenizer names them, not text.
    expect(res.body.token_strs).toEqual(["A", ":", "Ġbill", "ing"]);
    const chat = await postJson(`${e.url}/tokenize`, { messages: [{ role: "user", content: "hi" }] });
    const t = new SimTokenizer();
    expect(chat.body.tokens).toEqual(t.encode("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"));
    expect(e.stats().requests).toBe(0);
    expect(e.stats().tokenizeRequests).toBe(2);
    const bad = await postJson(`${e.url}/tokenize`, { messages: [{ role: "user", content: "x" }], add_generation_prompt: true, continue_final_message: true });
    expect(bad.status).toBe(400);
  });
});

describe("sim engine: raw pieces, /detokenize and a thinking template", () => {
  it("names tokens by raw pieces (Ġ a space, Ċ a newline, bytes for non-ASCII) and turns ids back into text with /detokenize", async () => {
    const e = await engine();
    const res = await postJson(`${e.url}/tokenize`, { prompt: "Answer: A\nđi", add_special_tokens: false, return_token_strs: true });
    expect(res.body.token_strs).toEqual(["Answer", ":", "ĠA", "Ċ", "Ä\u0133i"]);
    const text = await postJson(`${e.url}/detokenize`, { model: "sim/tiny", tokens: res.body.tokens.slice(2) });
    expect(text).toEqual({ status: 200, body: { prompt: "A\nđi" } });
    expect((await postJson(`${e.url}/detokenize`, { tokens: ["x"] })).status).toBe(400);
    expect((await postJson(`${e.url}/detokenize`, { model: "other", tokens: [1] })).status).toBe(404);
    expect(e.stats().detokenizeRequests).toBe(3);
  });

  it("writes Qwen3's empty <think> block before the reply unless enable_thinking is false", async () => {
    const e = await engine({ thinking: true });
    const user = { role: "user", content: "x" };
    const tail = async (kwargs?: unknown) => (await postJson(`${e.url}/tokenize`, { messages: [user], add_generation_prompt: true, ...(kwargs ? { chat_template_kwargs: kwargs } : {}) })).body.tokens as number[];
    const full = async (kwargs?: unknown) =>
      (await postJson(`${e.url}/tokenize`, { messages: [user, { role: "assistant", content: "A" }], add_generation_prompt: false, continue_final_message: true, return_token_strs: true, ...(kwargs ? { chat_template_kwargs: kwargs } : {}) })).body;
    const off = { enable_thinking: false };
    const [t0, f0, t1, f1] = [await tail(), await full(), await tail(off), await full(off)];
    expect(f0.token_strs.slice(t0.length)).toEqual(["<", "thin", "k", ">", "Ċ", "Ċ", "<", "/", "thin", "k", ">", "Ċ", "Ċ", "A"]);
    expect(f1.token_strs.slice(t1.length)).toEqual(["A"]);
    expect(f1.tokens.slice(0, t1.length)).toEqual(t1);
    // Raw pieces as the assistant's text are not in the rendered chat: transformers' ValueError, a 400.
    const joined = f0.token_strs.slice(t0.length, -1).join("");
    const bad = await postJson(`${e.url}/v1/chat/completions`, { messages: [user, { role: "assistant", content: joined }], add_generation_prompt: false, continue_final_message: true, max_tokens: 1 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/final message does not appear/);
  });
});

describe("sim engine: /v1/completions", () => {
  it("returns the model's logprobs of logprob_token_ids (as token_id:N), the sampled token and usage", async () => {
    const e = await engine();
    const t = new SimTokenizer();
    const ids = t.encode(PROMPT);
    const a = t.idOf("A")!;
    const b = t.idOf("B")!;
    const res = await postJson(`${e.url}/v1/completions`, { model: "sim/tiny", prompt: ids, max_tokens: 1, temperature: 0, logprobs: 1, logprob_token_ids: [a, b], return_tokens_as_token_ids: true });
    expect(res.status).toBe(200);
    expect(res.body.object).toBe("text_completion");
    const top = res.body.choices[0].logprobs.top_logprobs[0] as Record<string, number>;
    const next = new TokenModel(1, t).next(ids);
    expect(top[`token_id:${a}`]).toBeCloseTo(next.logprob(a), 12);
    expect(top[`token_id:${b}`]).toBeCloseTo(next.logprob(b), 12);
    expect(res.body.choices[0].logprobs.tokens[0]).toBe(`token_id:${next.argmax().id}`);
    expect(res.body.usage).toMatchObject({ prompt_tokens: ids.length, completion_tokens: 1, total_tokens: ids.length + 1 });
    // The listed options take most of the mass, the model favours the labels on offer.
    expect(Math.exp(next.logprob(a)) + Math.exp(next.logprob(b))).toBeGreaterThan(0.5);
  });

  it("text prompts are tokenized, and a repeated prompt hits the prefix cache in whole 16-token blocks", async () => {
    const e = await engine();
    const first = await postJson(`${e.url}/v1/completions`, { prompt: PROMPT, max_tokens: 1 });
    expect(first.body.usage.prompt_tokens_details.cached_tokens).toBe(0);
    const again = await postJson(`${e.url}/v1/completions`, { prompt: PROMPT, max_tokens: 1 });
    const n = again.body.usage.prompt_tokens as number;
    expect(again.body.usage.prompt_tokens_details.cached_tokens).toBe(Math.floor(n / 16) * 16);
    // prompt_logprobs: vLLM reads no prefix cache for such a request.
    const pl = await postJson(`${e.url}/v1/completions`, { prompt: PROMPT, max_tokens: 1, prompt_logprobs: 1 });
    expect(pl.body.usage.prompt_tokens_details.cached_tokens).toBe(0);
    const echo = await postJson(`${e.url}/v1/completions`, { prompt: PROMPT, max_tokens: 1, echo: true, logprobs: 1 });
    expect(echo.body.usage.prompt_tokens_details.cached_tokens).toBe(0);
  });

  it("answers vLLM's 400s: max_logprobs, 128 ids, logprobs missing, out of vocabulary, context length", async () => {
    const e = await engine({ maxModelLen: 40 });
    // Raised while serving: BadRequestError, the VLLMValidationError's "(parameter=..., value=...)" suffix.
    const serving: Array<[Record<string, unknown>, string, string]> = [
      [{ prompt: "hi", logprobs: 21 }, "Requested sample logprobs of 21, which is greater than max allowed: 20 (parameter=logprobs, value=21)", "logprobs"],
      [{ prompt: "hi", logprobs: 1, logprob_token_ids: Array.from({ length: 129 }, (_, i) => i) }, "Requested logprob_token_ids of length 129, which is greater than max allowed: 128 (parameter=logprob_token_ids, value=129)", "logprob_token_ids"],
      [{ prompt: "hi", logprobs: 1, logprob_token_ids: [999999] }, "token_id(s) [999999] in logprob_token_ids contain out-of-vocab token ids. Vocabulary size: 151936 (parameter=logprob_token_ids, value=[999999])", "logprob_token_ids"],
      [{ prompt: "word ".repeat(60), max_tokens: 1 }, "You passed 60 input tokens and requested 1 output tokens. However, the model's context length is only 40 tokens, resulting in a maximum input length of 39 tokens. Please reduce the length of the input prompt. (parameter=input_tokens, value=60)", "input_tokens"],
    ];
    for (const [body, message, param] of serving) {
      const res = await postJson(`${e.url}/v1/completions`, body);
      expect(res.status, message).toBe(400);
      expect(res.body).toEqual({ error: { message, type: "BadRequestError", param, code: 400 } });
    }
    // Raised by the request model's validators: pydantic's 400, param from the VLLMValidationError.
    const validator: Array<[Record<string, unknown>, string, string]> = [
      [{ prompt: "hi", logprob_token_ids: [1] }, "when using `logprob_token_ids`, `logprobs` must be set.", "(parameter=logprob_token_ids)"],
      [{ prompt: "" }, "Either prompt or prompt_embeds must be provided and non-empty.", "(parameter=prompt)"],
    ];
    for (const [body, message, suffix] of validator) {
      const res = await postJson(`${e.url}/v1/completions`, body);
      expect(res.status, message).toBe(400);
      const param = /parameter=(\w+)/.exec(suffix)![1];
      const input = `<dict of ${Object.keys(body).length} items>`;
      const line = `{'type': 'value_error', 'loc': 'body', 'msg': 'Value error, ${message} ${suffix}', 'input': '${input}', 'ctx': {'error': VLLMValidationError('${message}')}}`;
      expect(res.body).toEqual({ error: { message: `1 validation error:\n  ${line}`, type: "Bad Request", param, code: 400 } });
    }
    const model = await postJson(`${e.url}/v1/completions`, { model: "other", prompt: "hi" });
    expect(model.status).toBe(404);
  });

  it("like an older vLLM, ignores logprob_token_ids and returns top-k when switched off", async () => {
    const e = await engine({ logprobTokenIds: false });
    const res = await postJson(`${e.url}/v1/completions`, { prompt: PROMPT, max_tokens: 1, logprobs: 3, logprob_token_ids: [1, 2] });
    expect(res.status).toBe(200);
    const top = res.body.choices[0].logprobs.top_logprobs[0] as Record<string, number>;
    expect(Object.keys(top)).toHaveLength(3);
    expect(Object.keys(top)).toContain("A");
  });
});

describe("sim engine: /v1/chat/completions", () => {
  it("applies the chat template, continues a final assistant message, and returns content[].top_logprobs", async () => {
    const e = await engine();
    const t = new SimTokenizer();
    const q = t.idOf("Q")!;
    const messages = [{ role: "user", content: PROMPT }];
    const res = await postJson(`${e.url}/v1/chat/completions`, { messages: [...messages, { role: "assistant", content: "A" }], add_generation_prompt: false, continue_final_message: true, max_tokens: 1, logprobs: true, logprob_token_ids: [q] });
    expect(res.status).toBe(200);
    expect(res.body.object).toBe("chat.completion");
    const content = res.body.choices[0].logprobs.content[0];
    const ids = t.encode(`<|im_start|>user\n${PROMPT}<|im_end|>\n<|im_start|>assistant\nA`);
    expect(content.top_logprobs.find((x: { token: string }) => x.token === "Q").logprob).toBeCloseTo(new TokenModel(1, t).next(ids).logprob(q), 12);
    // After "A" the model continues the only label that starts with A and goes on: AQ.
    expect(Math.exp(new TokenModel(1, t).next(ids).logprob(q))).toBeGreaterThan(0.5);
  });
});

describe("sim engine: /v1/decisions", () => {
  it("answers predicates and choices in order, with usage", async () => {
    const e = await engine();
    const res = await postJson(`${e.url}/v1/decisions`, {
      model: "sim/tiny",
      input: JSON.stringify({ text: "late parcel" }),
      questions: [
        { type: "predicate", name: "flag", instructions: "Complaint?" },
        { type: "choice", name: "team", instructions: "Which team?", choices: [{ value: "billing" }, { value: "shipping", description: "parcels" }, { value: true }] },
      ],
    });
    expect(res.status).toBe(200);
    const [flag, team] = res.body.answers;
    expect(flag).toMatchObject({ type: "predicate", name: "flag" });
    expect(flag.probability).toBeGreaterThan(0);
    expect(team.probabilities.map((p: { value: unknown }) => p.value)).toEqual(["billing", "shipping", true]);
    expect(team.probabilities.reduce((s: number, p: { probability: number }) => s + p.probability, 0)).toBeCloseTo(1, 12);
    expect(res.body.usage).toMatchObject({ output_tokens: 2, input_tokens_details: { cached_tokens: expect.any(Number) } });
  });

  it("refuses more than 26 choices, unknown fields and a missing model; 501 without structured decisions", async () => {
    const e = await engine();
    const many = Array.from({ length: 27 }, (_, i) => ({ value: `v${i}` }));
    const big = await postJson(`${e.url}/v1/decisions`, { model: "sim/tiny", input: "x", questions: [{ type: "choice", instructions: "?", choices: many }] });
    expect(big.status).toBe(400);
    expect(big.body.error.message).toBe("This model supports at most 26 choices per question");
    const extra = await postJson(`${e.url}/v1/decisions`, { model: "sim/tiny", input: "x", questions: [{ type: "predicate", instructions: "?", criteria: {} }] });
    expect(extra.status).toBe(400);
    expect(extra.body.error.message).toMatch(/Extra inputs are not permitted/);
    const noModel = await postJson(`${e.url}/v1/decisions`, { input: "x", questions: [{ type: "predicate", instructions: "?" }] });
    expect(noModel.status).toBe(400);
    const off = await engine({ systemone: false });
    const res = await postJson(`${off.url}/v1/decisions`, { model: "sim/tiny", input: "x", questions: [{ type: "predicate", instructions: "?" }] });
    expect(res.status).toBe(501);
  });
});

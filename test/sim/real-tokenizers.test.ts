// The sim with a model's real tokenizer (--tokenizer qwen3|llama3.1|gemma3): /tokenize answers the
// model's own ids, raw pieces (convert_ids_to_tokens: "Ġ", "▁") and the BOS it adds with vLLM's
// defaults (a prompt: add_special_tokens true; chat messages: the template writes it, then
// add_special_tokens false; vllm/entrypoints/serve/tokenize/protocol.py), /detokenize decodes
// real ids, chat requests render the model's own template (Qwen3's thinking switch through
// chat_template_kwargs), and usage counts real tokens. Each tokenizer is loaded once per file.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimEngine, type SimEngine } from "../../sim/engine/server.js";
import { loadHfTokenizer, type HfTokenizer } from "../../sim/engine/model/hf-tokenizer.js";
import { postJson } from "./engine-fixtures.js";

const NAMES = ["qwen3", "llama3.1", "gemma3"] as const;
type Name = (typeof NAMES)[number];
const tokenizers = new Map<Name, HfTokenizer>();
const engines = new Map<Name, SimEngine>();

beforeAll(async () => {
  for (const name of NAMES) {
    const t = await loadHfTokenizer(name);
    tokenizers.set(name, t);
    engines.set(name, await startSimEngine({ model: name, seed: 1, tokenizer: t, maxModelLen: 4096 }));
  }
  // Loading three real vocabularies is CPU work: 60 s was not enough beside four CPU burners.
}, 240_000);

afterAll(async () => {
  await Promise.all([...engines.values()].map((e) => e.close()));
});

/** "Answer: B" with vLLM's completion defaults, its pieces, and the pieces of the label token. */
const KNOWN: Record<Name, { ids: number[]; pieces: string[] }> = {
  qwen3: { ids: [16141, 25, 425], pieces: ["Answer", ":", "ĠB"] },
  "llama3.1": { ids: [128000, 16533, 25, 426], pieces: ["<|begin_of_text|>", "Answer", ":", "ĠB"] },
  gemma3: { ids: [2, 7925, 236787, 603], pieces: ["<bos>", "Answer", ":", "▁B"] },
};

const url = (name: Name) => engines.get(name)!.url;

describe.each(NAMES)("sim engine --tokenizer %s", (name) => {
  it("/tokenize: the model's ids, raw pieces and BOS as vLLM adds it; /detokenize turns them back", async () => {
    const res = await postJson(`${url(name)}/tokenize`, { prompt: "Answer: B", return_token_strs: true });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ count: KNOWN[name].ids.length, max_model_len: 4096, tokens: KNOWN[name].ids, token_strs: KNOWN[name].pieces });
    const plain = await postJson(`${url(name)}/tokenize`, { prompt: "Answer: B", add_special_tokens: false });
    expect(plain.body.tokens).toEqual(KNOWN[name].ids.slice(name === "qwen3" ? 0 : 1));
    const text = "Tiếng Việt: câu trả lời là B.\n{\"a\": 1}";
    const ids = (await postJson(`${url(name)}/tokenize`, { prompt: text, add_special_tokens: false })).body.tokens;
    expect(await postJson(`${url(name)}/detokenize`, { model: `sim/${name}`, tokens: ids })).toEqual({ status: 200, body: { prompt: text } });
    expect((await postJson(`${url(name)}/detokenize`, { tokens: [tokenizers.get(name)!.vocabSize] })).status).toBe(400);
  });

  it("chat: the template writes BOS once, add_special_tokens defaults to false, and a continued assistant label adds the label's tokens", async () => {
    const t = tokenizers.get(name)!;
    const user = [{ role: "user", content: "Which one?" }];
    const prompt = await postJson(`${url(name)}/tokenize`, { messages: user, add_generation_prompt: true, chat_template_kwargs: { enable_thinking: false } });
    const ids: number[] = prompt.body.tokens;
    if (t.bosId !== null) {
      expect(ids[0]).toBe(t.bosId);
      expect(ids.filter((id) => id === t.bosId)).toHaveLength(1);
    }
    const label = await postJson(`${url(name)}/tokenize`, {
      messages: [...user, { role: "assistant", content: "B" }],
      add_generation_prompt: false,
      continue_final_message: true,
      chat_template_kwargs: { enable_thinking: false },
      return_token_strs: true,
    });
    expect(label.body.tokens.slice(0, ids.length)).toEqual(ids);
    expect(label.body.token_strs.slice(ids.length)).toEqual(["B"]);
  });

  it("counts real tokens in usage and answers logprob_token_ids over the real vocabulary", async () => {
    const res = await postJson(`${url(name)}/v1/completions`, { model: `sim/${name}`, prompt: "Answer: B", max_tokens: 1, logprobs: 1, logprob_token_ids: [KNOWN[name].ids.at(-1)] });
    expect(res.status).toBe(200);
    expect(res.body.usage.prompt_tokens).toBe(KNOWN[name].ids.length);
    const chat = await postJson(`${url(name)}/v1/chat/completions`, { model: `sim/${name}`, messages: [{ role: "user", content: "hi" }], max_tokens: 1 });
    expect(chat.status).toBe(200);
    const counted = await postJson(`${url(name)}/tokenize`, { messages: [{ role: "user", content: "hi" }] });
    expect(chat.body.usage.prompt_tokens).toBe(counted.body.count);
  });
});

describe("chat templates from tokenizer_config.json", () => {
  it("Qwen3: the generation prompt opens an empty reasoning block only with enable_thinking false; a label after the bare prompt starts with the block", async () => {
    const t = tokenizers.get("qwen3")!;
    const messages = [{ role: "user", content: "x" }];
    expect(t.renderChat(messages, { addGenerationPrompt: true, continueFinalMessage: false, kwargs: {} })).toBe("<|im_start|>user\nx<|im_end|>\n<|im_start|>assistant\n");
    expect(t.renderChat(messages, { addGenerationPrompt: true, continueFinalMessage: false, kwargs: { enable_thinking: false } })).toBe("<|im_start|>user\nx<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
    const bare = await postJson(`${url("qwen3")}/tokenize`, { messages, add_generation_prompt: true });
    const label = await postJson(`${url("qwen3")}/tokenize`, { messages: [...messages, { role: "assistant", content: "A" }], add_generation_prompt: false, continue_final_message: true, return_token_strs: true });
    expect(label.body.token_strs.slice(bare.body.count)).toEqual(["<think>", "ĊĊ", "</think>", "ĊĊ", "A"]);
  });

  it("Qwen3 replies to a bare generation prompt with the empty reasoning block, then a label; with enable_thinking false with the label at once", async () => {
    const messages = [{ role: "user", content: "The parcel came late.\n\nQuestion: Which team?\nA: billing\nB: shipping\nAnswer with the label of one option only." }];
    const thinking = await postJson(`${url("qwen3")}/v1/chat/completions`, { model: "sim/qwen3", messages, max_tokens: 8 });
    expect(thinking.body.choices[0].message.content).toMatch(/^<think>\n\n<\/think>\n\n[AB]$/);
    expect(thinking.body.choices[0].finish_reason).toBe("stop");
    const direct = await postJson(`${url("qwen3")}/v1/chat/completions`, { model: "sim/qwen3", messages, max_tokens: 8, chat_template_kwargs: { enable_thinking: false } });
    expect(direct.body.choices[0].message.content).toMatch(/^[AB]$/);
  });

  it("Llama 3.1 and Gemma 3 write their own headers; Gemma refuses roles that do not alternate (a 400, as the template raises)", async () => {
    const messages = [
      { role: "system", content: "Be brief." },
      { role: "user", content: "x" },
    ];
    expect(tokenizers.get("llama3.1")!.renderChat(messages, { addGenerationPrompt: true, continueFinalMessage: false, kwargs: {} })).toBe(
      "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nx<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
    );
    expect(tokenizers.get("gemma3")!.renderChat(messages, { addGenerationPrompt: true, continueFinalMessage: false, kwargs: {} })).toBe("<bos><start_of_turn>user\nBe brief.\n\nx<end_of_turn>\n<start_of_turn>model\n");
    const res = await postJson(`${url("gemma3")}/tokenize`, { messages: [{ role: "user", content: "a" }, { role: "user", content: "b" }] });
    expect(res.status).toBe(400);
    expect(res.body.message ?? res.body.error?.message).toMatch(/alternate/);
  });
});

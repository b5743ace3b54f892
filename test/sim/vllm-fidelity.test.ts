// The sim answers as current vLLM does where a client could tell (issue 13): the Decisions API's
// 64-question limit and its 501 after validation, BOS-adding tokenizers, DecisionUsage, pydantic
// error lines with dotted locs, VLLMValidationError suffixes, logprobs -1 and empty
// logprob_token_ids, and oracle reads of label tries.
import { rmSync } from "node:fs";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { startSimEngine, type SimEngine, type SimEngineOptions } from "../../sim/engine/server.js";
import { oracleFromSuite } from "../../sim/engine/model/oracle.js";
import { BOS, SimTokenizer } from "../../sim/engine/model/tokenizer.js";
import { LabelReadMethod } from "../../agent/methods/label-read.js";
import { SystemOneMethod } from "../../agent/methods/systemone.js";
import { postJson, writeSuite, type FixtureRecord } from "./engine-fixtures.js";

const engines: SimEngine[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function engine(options: SimEngineOptions = {}): Promise<SimEngine> {
  const e = await startSimEngine({ model: "tiny", seed: 1, ...options });
  engines.push(e);
  return e;
}

const predicate = (i: number) => ({ type: "predicate", name: `q${i}`, instructions: `Question ${i}?` });

describe("/v1/decisions limits and order (vllm/entrypoints/openai/decisions/serving.py, api_router.py)", () => {
  it("takes 64 questions and refuses 65 with vLLM's 400; the schema still bounds a request at 200", async () => {
    const e = await engine();
    const ok = await postJson(`${e.url}/v1/decisions`, { model: "sim/tiny", input: "x", questions: Array.from({ length: 64 }, (_, i) => predicate(i)) });
    expect(ok.status).toBe(200);
    expect(ok.body.answers).toHaveLength(64);
    const over = await postJson(`${e.url}/v1/decisions`, { model: "sim/tiny", input: "x", questions: Array.from({ length: 65 }, (_, i) => predicate(i)) });
    expect(over.status).toBe(400);
    expect(over.body).toEqual({ error: { message: "questions: at most 64 for this model", type: "BadRequestError", param: null, code: 400 } });
    const schema = await postJson(`${e.url}/v1/decisions`, { model: "sim/tiny", input: "x", questions: Array.from({ length: 201 }, (_, i) => predicate(i)) });
    expect(schema.status).toBe(400);
    expect(schema.body.error).toEqual({
      message:
        "1 validation error:\n  {'type': 'too_long', 'loc': 'body.questions', 'msg': 'List should have at most 200 items after validation, not 201', 'input': '<list of 201 items>', 'ctx': {'field_type': 'List', 'max_length': 200, 'actual_length': 201}}",
      type: "Bad Request",
      param: "body.questions",
      code: 400,
    });
  });

  it("validates the body before its 501, which says the Decisions API; /v1/systemone likewise", async () => {
    const e = await engine({ systemone: false });
    const invalid = await postJson(`${e.url}/v1/decisions`, { model: "sim/tiny", input: "x", questions: [{ type: "predicate" }] });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.param).toBe("body.questions.0.predicate.instructions");
    expect(invalid.body.error.message).toBe("1 validation error:\n  {'type': 'missing', 'loc': 'body.questions.0.predicate.instructions', 'msg': 'Field required', 'input': '<dict of 1 items>'}");
    const valid = await postJson(`${e.url}/v1/decisions`, { model: "sim/tiny", input: "x", questions: [predicate(0)] });
    expect(valid.status).toBe(501);
    expect(valid.body).toEqual({ error: { message: "The model does not support the Decisions API", type: "NotImplementedError", param: null, code: 501 } });
    // The 501 comes before the model check, as the handler that checks the model is missing.
    const otherModel = await postJson(`${e.url}/v1/decisions`, { model: "other", input: "x", questions: [predicate(0)] });
    expect(otherModel.status).toBe(501);

    const s1 = await postJson(`${e.url}/v1/systemone`, { questions: {} });
    expect(s1.status).toBe(400);
    expect(s1.body.error.param).toBe("body.state");
    const s2 = await postJson(`${e.url}/v1/systemone`, { state: "x", questions: { q: { type: "noul" } } });
    expect(s2.status).toBe(501);
    expect(s2.body.error).toEqual({ message: "The model does not support the structured decision API", type: "NotImplementedError", param: null, code: 501 });
  });

  it("prints pydantic's errors with dotted locs, the union tag in a member's loc, and value errors with ctx", async () => {
    const e = await engine();
    const res = await postJson(`${e.url}/v1/decisions`, {
      model: "sim/tiny",
      input: "x",
      questions: [{ type: "choice", instructions: "?", choices: [{ value: "a" }, { value: "a" }] }, { type: "rank", instructions: "?" }],
      extra: 1,
    });
    expect(res.status).toBe(400);
    const lines = (res.body.error.message as string).split("\n");
    expect(lines[0]).toBe("3 validation errors:");
    expect(lines[1]).toBe("  {'type': 'extra_forbidden', 'loc': 'body.extra', 'msg': 'Extra inputs are not permitted', 'input': '1'}");
    expect(lines[2]).toBe(
      "  {'type': 'value_error', 'loc': 'body.questions.0.choice', 'msg': 'Value error, choice values must be distinct', 'input': '<dict of 3 items>', 'ctx': {'error': ValueError('choice values must be distinct')}}",
    );
    expect(lines[3]).toMatch(/^  \{'type': 'union_tag_invalid', 'loc': 'body\.questions\.1', 'msg': "Input tag 'rank' found using 'type' does not match any of the expected tags: 'predicate', 'choice', 'score'"/);
    expect(res.body.error.param).toBe("body.extra");
  });

  it("reports usage as OpenAIDecisionUsage, with cached tokens; /v1/systemone's DecisionUsage has none", async () => {
    const e = await engine();
    const body = { model: "sim/tiny", input: JSON.stringify({ text: "a parcel that came late and broken" }), questions: [predicate(0), predicate(1)] };
    await postJson(`${e.url}/v1/decisions`, body);
    const again = await postJson(`${e.url}/v1/decisions`, body);
    expect(Object.keys(again.body.usage).sort()).toEqual(["input_tokens", "input_tokens_details", "output_tokens", "output_tokens_details", "total_tokens"]);
    expect(again.body.usage.input_tokens_details.cached_tokens).toBeGreaterThan(0);
    const s1 = await postJson(`${e.url}/v1/systemone`, { state: "x", questions: { q: { type: "noul" } } });
    expect(s1.body.usage).toEqual({ input_tokens: expect.any(Number), output_tokens: 1 });
  });
});

describe("--bos: a BOS-adding tokenizer (vllm/renderers/params.py, serve/tokenize/protocol.py)", () => {
  const PROMPT = "The parcel came late and broken, and nobody answered my emails about it.\n\nQuestion: Which team?\nA: billing\nB: shipping\nAnswer:";

  it("puts BOS before a text prompt and /tokenize's by default, not with add_special_tokens false; the chat template writes it", async () => {
    const e = await engine({ bos: true });
    const t = new SimTokenizer();
    const bos = new SimTokenizer(true).bosId!;
    expect(bos).toBe(t.idOf(BOS));
    const plain = t.encode(PROMPT);
    const dflt = await postJson(`${e.url}/tokenize`, { prompt: PROMPT });
    expect(dflt.body.tokens).toEqual([bos, ...plain]);
    const off = await postJson(`${e.url}/tokenize`, { prompt: PROMPT, add_special_tokens: false });
    expect(off.body.tokens).toEqual(plain);
    const chat = await postJson(`${e.url}/tokenize`, { messages: [{ role: "user", content: "hi" }] });
    expect(chat.body.tokens).toEqual([bos, ...t.encode("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n")]);
    const completion = await postJson(`${e.url}/v1/completions`, { prompt: PROMPT, max_tokens: 1 });
    expect(completion.body.usage.prompt_tokens).toBe(plain.length + 1);
    // Without --bos nothing changes.
    const qwen = await engine();
    expect((await postJson(`${qwen.url}/tokenize`, { prompt: PROMPT })).body.tokens).toEqual(plain);
  });

  it("a prompt sent as ids without BOS is another prompt: it misses the prefix cache the text prompt filled", async () => {
    const e = await engine({ bos: true });
    await postJson(`${e.url}/v1/completions`, { prompt: PROMPT, max_tokens: 1 });
    const withoutBos = (await postJson(`${e.url}/tokenize`, { prompt: PROMPT, add_special_tokens: false })).body.tokens as number[];
    const miss = await postJson(`${e.url}/v1/completions`, { prompt: [...withoutBos, 7], max_tokens: 1 });
    expect(miss.body.usage.prompt_tokens_details.cached_tokens).toBe(0);
    const withBos = (await postJson(`${e.url}/tokenize`, { prompt: PROMPT })).body.tokens as number[];
    const hit = await postJson(`${e.url}/v1/completions`, { prompt: [...withBos, 7], max_tokens: 1 });
    expect(hit.body.usage.prompt_tokens_details.cached_tokens).toBe(Math.floor(withBos.length / 16) * 16);
  });
});

describe("logprobs checks of the request models (completion/protocol.py, chat_completion/protocol.py)", () => {
  it("refuses logprobs -1 on /v1/completions with the VLLMValidationError's parameter and value", async () => {
    const e = await engine();
    const res = await postJson(`${e.url}/v1/completions`, { prompt: "hi", logprobs: -1 });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      message:
        "1 validation error:\n  {'type': 'value_error', 'loc': 'body', 'msg': 'Value error, `logprobs` must be a positive value. (parameter=logprobs, value=-1)', 'input': '<dict of 2 items>', 'ctx': {'error': VLLMValidationError('`logprobs` must be a positive value.')}}",
      type: "Bad Request",
      param: "logprobs",
      code: 400,
    });
    const notInt = await postJson(`${e.url}/v1/completions`, { prompt: "hi", logprobs: "3" });
    expect(notInt.body.error.message).toContain("'Value error, `logprobs` must be an integer. (parameter=logprobs, value=3)'");
  });

  it("treats an empty logprob_token_ids as unset: top-k logprobs come back", async () => {
    const e = await engine();
    const res = await postJson(`${e.url}/v1/completions`, { prompt: "Question: x\nA: one\nB: two\nAnswer:", max_tokens: 1, logprobs: 2, logprob_token_ids: [] });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.choices[0].logprobs.top_logprobs[0])).toHaveLength(2);
    const chat = await postJson(`${e.url}/v1/chat/completions`, { messages: [{ role: "user", content: "x" }], max_tokens: 1, logprob_token_ids: [] });
    expect(chat.status).toBe(200);
  });

  it("on chat: top_logprobs -1 means the whole vocabulary, other negatives and a missing logprobs are refused", async () => {
    const e = await engine();
    const messages = [{ role: "user", content: "x" }];
    const all = await postJson(`${e.url}/v1/chat/completions`, { messages, max_tokens: 1, logprobs: true, top_logprobs: -1 });
    expect(all.body.error).toEqual({ message: "Requested sample logprobs of 151936, which is greater than max allowed: 20 (parameter=logprobs, value=151936)", type: "BadRequestError", param: "logprobs", code: 400 });
    const neg = await postJson(`${e.url}/v1/chat/completions`, { messages, max_tokens: 1, logprobs: true, top_logprobs: -2 });
    expect(neg.body.error.param).toBe("top_logprobs");
    expect(neg.body.error.message).toContain("'Value error, `top_logprobs` must be a positive value or -1. (parameter=top_logprobs, value=-2)'");
    const flag = await postJson(`${e.url}/v1/chat/completions`, { messages, max_tokens: 1, top_logprobs: 2 });
    expect(flag.body.error.message).toContain("when using `top_logprobs`, `logprobs` must be set to true. (parameter=top_logprobs)");
    const ids = await postJson(`${e.url}/v1/chat/completions`, { messages, max_tokens: 1, logprob_token_ids: [5] });
    expect(ids.body.error.param).toBe("logprob_token_ids");
  });
});

describe("oracle mode reads label tries", () => {
  /** One record with a 60-option choice whose gold sits at `gold`, and a yes/no question. */
  function bigRecord(id: string, gold: number): FixtureRecord & { run_id: string } {
    const criteria = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`intent_${i}`, i % 7 === 0 ? `what intent ${i} means` : ""]));
    return {
      id,
      run_id: `t-big:${id}`,
      state: { text: `Message ${id}: please move my flight to Friday and refund the seat upgrade.` },
      questions: { intent: { type: "choice", instructions: "Which intent?", criteria } as never, urgent: { type: "noul", instructions: "Is it urgent?", criteria: {} } },
      expected: { intent: `intent_${gold}`, urgent: gold % 2 === 0 },
    };
  }

  it.each([
    ["completions", "completions"],
    ["chat", "chat"],
  ] as const)("puts gold on top over %s for one-token labels, a label other labels continue (A, AQ..), and two-token labels", async (_name, api) => {
    // Gold 0 is "A" in natural order (a prefix of AQ..AZ), 30 is "AE" (one token), 45 is "AT" (A + T).
    const records = [bigRecord("r0", 0), bigRecord("r1", 30), bigRecord("r2", 45), bigRecord("r3", 59)];
    const suite = writeSuite(records, "t-big", "intent");
    dirs.push(suite);
    const e = await engine({ oracle: await oracleFromSuite(suite), accuracy: 1 });
    const method = new LabelReadMethod({ baseUrl: e.url, api, seeds: [0, 1, 2] });
    const structured = new SystemOneMethod({ baseUrl: e.url, seeds: [0, 1, 2] });
    for (const r of records) {
      const payload = { recordKey: r.run_id, id: r.id, state: r.state, questions: r.questions as never, payloadSha256: "x" };
      const out = await method.answer(payload, new AbortController().signal);
      const intent = out.probs.intent!;
      const top = Object.entries(intent).sort((a, b) => b[1] - a[1])[0]!;
      expect(top[0], r.id).toBe(r.expected.intent);
      // The trie read gives back the oracle's own distribution, the one /v1/systemone answers with.
      const read = (await structured.answer(payload, new AbortController().signal)).probs;
      for (const q of ["intent", "urgent"]) for (const [k, p] of Object.entries(read[q]!)) expect(out.probs[q]![k], `${r.id} ${q} ${k}`).toBeCloseTo(p, 6);
      expect(out.probs.urgent![String(r.expected.urgent)], r.id).toBeGreaterThan(0.5);
    }
    // Labels past Z were read as tries: more reads than questions x seeds.
    expect(e.stats().reads).toBeGreaterThan(records.length * 2 * 3);
  });
});

// The agent's methods against what a real vLLM does where it differs from the sim's defaults
// (issue 13): /v1/decisions takes at most 64 questions, a context-length 400 is recognised before
// any split, an engine may ignore `seed` on /v1/systemone, usage may have no cached count, label
// reads after a label's first tokens send the ids the server's tokenizer makes (special tokens
// included), and the startup warnings. The real simulated engine, behind a recording proxy where
// one field of a response or request has to differ.
import { afterEach, describe, expect, it } from "vitest";
import { startSimEngine, type SimEngine, type SimEngineOptions } from "../../sim/engine/server.js";
import { SystemOneMethod } from "../../agent/methods/systemone.js";
import { DecisionsMethod } from "../../agent/methods/decisions.js";
import { LabelReadMethod } from "../../agent/methods/label-read.js";
import { statePrefix } from "../../agent/methods/label-read-template.js";
import type { RecordPayload } from "../../agent/engine-method.js";
import type { Question } from "../../common/suite/schema.js";
import type { Logger } from "../../common/log.js";
import { choiceQuestion, postJson } from "../sim/engine-fixtures.js";
import { startEngineProxy, type EngineProxy, type EngineProxyOptions } from "./engine-proxy.js";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

async function engine(sim: SimEngineOptions = {}, proxy: EngineProxyOptions = {}): Promise<{ sim: SimEngine; proxy: EngineProxy }> {
  const s = await startSimEngine({ model: "tiny", seed: 3, ...sim });
  const p = await startEngineProxy(s.url, proxy);
  closers.push(() => p.close(), () => s.close());
  return { sim: s, proxy: p };
}

function capture(): Logger & { lines: Array<{ level: string; msg: string }> } {
  const lines: Array<{ level: string; msg: string }> = [];
  const log = (level: string) => (msg: string) => void lines.push({ level, msg });
  const logger = { lines, debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error"), child: () => logger };
  return logger;
}

const fast = { retry: { minBackoffMs: 1, maxBackoffMs: 5 } };
const record = (questions: Record<string, Question>, state: Record<string, string> = { text: "The parcel arrived two weeks late." }, id = "r1"): RecordPayload => ({
  recordKey: `t:${id}`,
  id,
  state,
  questions,
  payloadSha256: "x",
});
const manyQuestions = (n: number): Record<string, Question> =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`q${i}`, i % 3 ? choiceQuestion(2 + (i % 5), `Question ${i}?`) : { type: "noul", instructions: `Is ${i} so?`, criteria: {} }]));
const questionCount = (body: unknown): number => {
  const qs = (body as { questions: unknown }).questions;
  return Array.isArray(qs) ? qs.length : Object.keys(qs as object).length;
};
/** /v1/models without max_model_len (a proxy or server that does not report it). */
const hideMaxModelLen: EngineProxyOptions["response"] = (path, body) =>
  path === "/v1/models" ? { ...body, data: (body.data as Array<Record<string, unknown>>).map(({ max_model_len: _, ...card }) => card) } : body;

describe("decisions: at most 64 questions per request", () => {
  it("splits 150 questions into 64 + 64 + 22 up front: no request over the limit, no 400", async () => {
    const { proxy } = await engine();
    const method = new DecisionsMethod({ baseUrl: proxy.url, seeds: [0, 1], ...fast });
    const qs = manyQuestions(150);
    const out = await method.answer(record(qs), new AbortController().signal);
    expect(out.errors).toEqual({});
    expect(Object.keys(out.probs)).toHaveLength(150);
    const sent = proxy.to("/v1/decisions");
    // The second seed reads only the 100 choices: a predicate's request cannot change with the seed.
    expect(sent.map((r) => questionCount(r.body))).toEqual([64, 64, 22, 64, 36]);
    expect(sent.every((r) => r.status === 200)).toBe(true);
  });

  it("a server that names a smaller limit costs one 400, and is followed from then on", async () => {
    // vllm/entrypoints/openai/decisions/serving.py: more questions than the strategy's limit is a 400.
    const limit = 8;
    const { proxy } = await engine({}, {
      answer: (path, body) =>
        path === "/v1/decisions" && questionCount(body) > limit
          ? { status: 400, body: { error: { message: `questions: at most ${limit} for this model`, type: "BadRequestError", param: null, code: 400 } } }
          : undefined,
    });
    const method = new DecisionsMethod({ baseUrl: proxy.url, ...fast });
    const first = await method.answer(record(manyQuestions(20)), new AbortController().signal);
    expect(first.errors).toEqual({});
    expect(Object.keys(first.probs)).toHaveLength(20);
    expect(proxy.to("/v1/decisions").map((r) => [questionCount(r.body), r.status])).toEqual([[20, 400], [8, 200], [8, 200], [4, 200]]);
    await method.answer(record(manyQuestions(20), undefined, "r2"), new AbortController().signal);
    expect(proxy.to("/v1/decisions").slice(4).map((r) => [questionCount(r.body), r.status])).toEqual([[8, 200], [8, 200], [4, 200]]);
  });
});

describe("a state too long for max_model_len", () => {
  const longState = { text: "lorem ipsum dolor sit amet ".repeat(120) };
  it.each([
    ["systemone", (url: string) => new SystemOneMethod({ baseUrl: url, ...fast }), "/v1/systemone"],
    ["decisions", (url: string) => new DecisionsMethod({ baseUrl: url, ...fast }), "/v1/decisions"],
  ] as const)("%s: a 64-question batch costs exactly one request before its questions are skipped", async (_name, make, path) => {
    const qs = manyQuestions(64);
    // max_model_len known: the state is counted once with /tokenize and no question is sent.
    const known = await engine({ maxModelLen: 512 });
    const a = await make(known.proxy.url).answer(record(qs, longState), new AbortController().signal);
    expect(a.skipped).toEqual(Object.keys(qs));
    expect(a.errors).toEqual({});
    expect(a.usage.requests).toBe(1);
    expect(known.proxy.to("/tokenize")).toHaveLength(1);
    expect(known.proxy.to(path)).toHaveLength(0);
    // max_model_len not reported: the engine's context-length 400 is recognised before any split.
    const unknown = await engine({ maxModelLen: 512 }, { response: hideMaxModelLen });
    const b = await make(unknown.proxy.url).answer(record(qs, longState), new AbortController().signal);
    expect(b.skipped).toEqual(Object.keys(qs));
    expect(b.errors).toEqual({});
    expect(b.usage.requests).toBe(1);
    expect(unknown.proxy.to(path).map((r) => [questionCount(r.body), r.status])).toEqual([[64, 400]]);
  });

  it("one question too long among short ones is still isolated, and only it is skipped", async () => {
    const { proxy } = await engine({ maxModelLen: 160 }, { response: hideMaxModelLen });
    const method = new SystemOneMethod({ baseUrl: proxy.url, ...fast });
    const qs: Record<string, Question> = { a: choiceQuestion(2), long: choiceQuestion(3, "Please consider carefully ".repeat(40)), b: { type: "noul", instructions: "Yes?", criteria: {} } };
    const out = await method.answer(record(qs), new AbortController().signal);
    expect(out.skipped).toEqual(["long"]);
    expect(Object.keys(out.probs).sort()).toEqual(["a", "b"]);
  });
});

describe("seed on /v1/systemone", () => {
  const qs: Record<string, Question> = { label: choiceQuestion(5, "Which?"), flag: { type: "noul", instructions: "Yes?", criteria: {} } };

  it("an engine that honours it: asked once at startup, said once, seeds go as the seed field", async () => {
    const { proxy } = await engine();
    const logger = capture();
    const method = new SystemOneMethod({ baseUrl: proxy.url, seeds: [0, 1, 2], logger, ...fast });
    await method.info();
    await method.info();
    const probes = proxy.to("/v1/systemone").length;
    // One probe of the endpoint, then the seed probe's four reads (seed 1 twice, seeds 2 and 3).
    expect(probes).toBe(5);
    expect(logger.lines.filter((l) => /honours `seed`/.test(l.msg))).toHaveLength(1);
    const out = await method.answer(record(qs), new AbortController().signal);
    expect(out.answeredBy).toEqual({ label: "systemone", flag: "systemone" });
    expect(proxy.to("/v1/systemone").slice(probes).map((r) => (r.body as { seed: number }).seed)).toEqual([0, 1, 2]);
  });

  it("an engine that ignores it (no seed field): warned once, the seeds are read by systemone itself with the options reordered per seed", async () => {
    const { proxy } = await engine({}, { request: (path, body) => (path === "/v1/systemone" ? (({ seed: _, ...rest }) => rest)(body) : body) });
    const logger = capture();
    const method = new SystemOneMethod({ baseUrl: proxy.url, seeds: [0, 1, 2], logger, ...fast });
    await method.info();
    const warnings = logger.lines.filter((l) => l.level === "warn" && /ignores `seed`/.test(l.msg));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.msg).toMatch(/read by systemone with each question's options reordered per seed/);
    const probes = proxy.to("/v1/systemone").length;
    const out = await method.answer(record(qs), new AbortController().signal);
    expect(out.errors).toEqual({});
    expect(out.answeredBy).toEqual({ label: "systemone", flag: "systemone" });
    // Three reads of the choice (one per seed), the yes/no question only in the first: no seed field, options in each seed's order.
    const sent = proxy.to("/v1/systemone").slice(probes).map((r) => r.body as { seed?: number; questions: Record<string, { criteria: Record<string, string> }> });
    expect(sent).toHaveLength(3);
    expect(sent.every((b) => b.seed === undefined)).toBe(true);
    expect(sent.map((b) => Object.keys(b.questions))).toEqual([["label", "flag"], ["label"], ["label"]]);
    const orders = sent.map((b) => Object.keys(b.questions.label!.criteria).join(","));
    expect(new Set(orders).size).toBe(3);
    // The same numbers as an engine that honours the seed (the label an option gets is what moves).
    const { proxy: honouring } = await engine();
    const seeded = await new SystemOneMethod({ baseUrl: honouring.url, seeds: [0, 1, 2], ...fast }).answer(record(qs), new AbortController().signal);
    for (const [k, d] of Object.entries(seeded.probs.label!)) expect(out.probs.label![k]).toBeCloseTo(d, 12);
    await method.answer(record(qs, undefined, "r2"), new AbortController().signal);
    expect(logger.lines.filter((l) => /ignores `seed`/.test(l.msg))).toHaveLength(1);
  });

  it("seeds that arrive with the run's Welcome are checked before the first record", async () => {
    const { proxy } = await engine({}, { request: (path, body) => (path === "/v1/systemone" ? (({ seed: _, ...rest }) => rest)(body) : body) });
    const method = new SystemOneMethod({ baseUrl: proxy.url, logger: capture(), ...fast });
    await method.info();
    // The endpoint probe only: no seeds yet, no seed probe.
    expect(proxy.to("/v1/systemone")).toHaveLength(1);
    method.applyRunParams({ seeds: [0, 1] });
    const out = await method.answer(record(qs), new AbortController().signal);
    // The seed probe's four reads, then the record's: both questions under seed 0, the choice under seed 1.
    expect(proxy.to("/v1/systemone")).toHaveLength(1 + 4 + 2);
    expect(new Set(Object.values(out.answeredBy))).toEqual(new Set(["systemone"]));
  });
});

describe("cached tokens the engine does not report are unknown, not 0", () => {
  it("systemone against vLLM's DecisionUsage (input_tokens/output_tokens only)", async () => {
    const { sim, proxy } = await engine({}, { response: (path, body) => (path === "/v1/systemone" ? { ...body, usage: { input_tokens: (body.usage as { input_tokens: number }).input_tokens, output_tokens: (body.usage as { output_tokens: number }).output_tokens } } : body) });
    const out = await new SystemOneMethod({ baseUrl: proxy.url, ...fast }).answer(record(manyQuestions(3)), new AbortController().signal);
    expect(out.usage.cachedTokens).toBeNull();
    expect(out.usage.promptTokens).toBe(sim.stats().promptTokens);
    // The Decisions API does report them (input_tokens_details.cached_tokens): a number, the state's reuse.
    const decisions = await new DecisionsMethod({ baseUrl: sim.url, ...fast }).answer(record(manyQuestions(3)), new AbortController().signal);
    expect(decisions.usage.cachedTokens).toBeGreaterThan(0);
    // The sim answers with DecisionUsage too; an engine that adds cached tokens gets them counted.
    const { proxy: reporting } = await engine({}, { response: (path, body) => (path === "/v1/systemone" ? { ...body, usage: { ...(body.usage as object), input_tokens_details: { cached_tokens: 7 } } } : body) });
    const reported = await new SystemOneMethod({ baseUrl: reporting.url, ...fast }).answer(record(manyQuestions(3)), new AbortController().signal);
    expect(reported.usage.cachedTokens).toBe(7);
  });

  it("label-read against completions without prompt_tokens_details (no --enable-prompt-tokens-details)", async () => {
    const { proxy } = await engine({}, { response: (path, body) => (path === "/v1/completions" ? { ...body, usage: { ...(body.usage as object), prompt_tokens_details: null } } : body) });
    const out = await new LabelReadMethod({ baseUrl: proxy.url, ...fast }).answer(record({ a: choiceQuestion(3) }), new AbortController().signal);
    expect(out.errors).toEqual({});
    expect(out.usage.cachedTokens).toBeNull();
  });
});

describe("labels an engine answers that are not options of the question", () => {
  it("are dropped from the distribution, counted per record and said once", async () => {
    type Answers = Record<string, { type: string; probabilities: Record<string, number> }>;
    const { proxy } = await engine({}, {
      response: (path, body) => {
        if (path === "/v1/systemone") {
          const answers = body.answers as Answers;
          for (const a of Object.values(answers)) if (a.type === "choice") a.probabilities["Z?"] = 0;
        }
        if (path === "/v1/decisions") {
          for (const a of body.answers as Array<{ type: string; probabilities?: Array<{ value: string; probability: number }> }>) {
            if (a.type === "choice") a.probabilities!.push({ value: "not-an-option", probability: 0 }, { value: "nor-this", probability: 0 });
          }
        }
        return body;
      },
    });
    const questions = { a: choiceQuestion(3), b: choiceQuestion(4), c: { type: "noul" as const, instructions: "Is it late?", criteria: {} } };
    const logger = capture();
    const s1 = new SystemOneMethod({ baseUrl: proxy.url, logger, ...fast });
    const out = await s1.answer(record(questions), new AbortController().signal);
    expect(out.errors).toEqual({});
    expect(Object.keys(out.probs.a!)).toEqual(Object.keys(questions.a.criteria));
    expect(out.unknownLabels).toBe(2);
    await s1.answer(record(questions, undefined, "r2"), new AbortController().signal);
    expect(logger.lines.filter((l) => /not options of the question/.test(l.msg))).toHaveLength(1);
    const d = await new DecisionsMethod({ baseUrl: proxy.url, ...fast }).answer(record(questions), new AbortController().signal);
    expect(d.errors).toEqual({});
    expect(d.unknownLabels).toBe(4);
    // A well-behaved engine: nothing counted.
    const { sim } = await engine();
    expect((await new SystemOneMethod({ baseUrl: sim.url, ...fast }).answer(record(questions), new AbortController().signal)).unknownLabels).toBeUndefined();
  });
});

describe("label reads after a label's first tokens", () => {
  it("send the prompt's ids as /tokenize makes them with the server's default special tokens, then the label's tokens", async () => {
    const { sim, proxy } = await engine();
    const method = new LabelReadMethod({ baseUrl: proxy.url, ...fast });
    // 60 options: some labels are two tokens in the sim, so the trie has deeper reads.
    const q = choiceQuestion(60, "Which one?");
    const out = await method.answer(record({ q }), new AbortController().signal);
    expect(out.errors).toEqual({});
    const reads = proxy.to("/v1/completions").map((r) => (r.body as { prompt: unknown }).prompt);
    const text = reads.find((p) => typeof p === "string") as string;
    expect(text.startsWith(statePrefix({ text: "The parcel arrived two weeks late." }))).toBe(true);
    const deeper = reads.filter((p): p is number[] => Array.isArray(p));
    const tokenizeDefault = (await postJson(`${sim.url}/tokenize`, { prompt: text })).body.tokens as number[];
    expect(deeper.length).toBeGreaterThan(0);
    for (const ids of deeper) {
      expect(ids.slice(0, tokenizeDefault.length)).toEqual(tokenizeDefault);
      expect(ids.length).toBeGreaterThan(tokenizeDefault.length);
    }
    const asked = proxy.to("/tokenize").map((r) => r.body as Record<string, unknown>).filter((b) => b.prompt === text);
    expect(asked).toHaveLength(1);
    expect(asked[0]).not.toHaveProperty("add_special_tokens");
  });
});

describe("startup warnings from /v1/models and /metrics", () => {
  it("a short max_model_len is said once at startup", async () => {
    const { proxy } = await engine({ maxModelLen: 2048 });
    const logger = capture();
    const method = new LabelReadMethod({ baseUrl: proxy.url, logger, ...fast });
    await method.info();
    await method.info();
    const warnings = logger.lines.filter((l) => l.level === "warn");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.msg).toMatch(/max_model_len is 2048 .*--max-model-len 8192/);
  });

  it("a long max_model_len gives no warning", async () => {
    const { proxy } = await engine({ maxModelLen: 32768 });
    const logger = capture();
    await new SystemOneMethod({ baseUrl: proxy.url, logger, ...fast }).info();
    expect(logger.lines.filter((l) => l.level === "warn")).toEqual([]);
  });
});

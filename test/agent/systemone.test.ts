// SystemOneMethod against the real simulated engine over HTTP on 127.0.0.1:0.
import { afterEach, describe, expect, it } from "vitest";
import { startSimEngine, type SimEngine, type SimEngineOptions } from "../../sim/engine/server.js";
import { answerToDistribution, routeSystemOne, SystemOneMethod, type SystemOneOptions } from "../../agent/methods/systemone.js";
import type { RecordPayload } from "../../agent/engine-method.js";
import type { Question } from "../../common/suite/schema.js";
import { distributionProblem, NOUL_KEYS } from "../../common/results/format.js";
import { choiceQuestion, postJson } from "../sim/engine-fixtures.js";
import { startEngineProxy } from "./engine-proxy.js";

const engines: SimEngine[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
});

async function setup(sim: SimEngineOptions = {}, method: Partial<SystemOneOptions> = {}): Promise<{ engine: SimEngine; method: SystemOneMethod }> {
  const engine = await startSimEngine({ model: "tiny", ...sim });
  engines.push(engine);
  return { engine, method: new SystemOneMethod({ baseUrl: engine.url, ...method, retry: { minBackoffMs: 1, maxBackoffMs: 5, ...method.retry } }) };
}

const STATE = { text: "Khách hàng phàn nàn rằng đơn hàng đến muộn hai tuần và hộp bị móp.", lang: "vi" };

function record(questions: Record<string, Question>, id = "r1"): RecordPayload {
  return { recordKey: `t:${id}`, id, state: STATE, questions, payloadSha256: "x" };
}

function questions(n: number): Record<string, Question> {
  return Object.fromEntries(Array.from({ length: n }, (_, i) => [i % 2 ? `q${i}` : `flag${i}`, i % 2 ? choiceQuestion(3 + (i % 4), `Question ${i}?`) : { type: "noul", instructions: `Is ${i} true?`, criteria: {} }]));
}

function expectValid(answer: Awaited<ReturnType<SystemOneMethod["answer"]>>, qs: Record<string, Question>): void {
  for (const [k, dist] of Object.entries(answer.probs)) {
    const q = qs[k]!;
    expect(distributionProblem(dist, q.type === "noul" ? [...NOUL_KEYS] : Object.keys(q.criteria)), k).toBeUndefined();
  }
}

describe("SystemOneMethod", () => {
  it("reads model, max_model_len and capacity from the engine", async () => {
    const { method } = await setup({ maxModelLen: 2048 }, { capacity: 5 });
    expect(await method.info()).toEqual({ model: "sim/tiny", maxModelLen: 2048, capacity: 5 });
    const named = new SystemOneMethod({ baseUrl: engines[0]!.url, model: "nope" });
    await expect(named.info()).rejects.toThrow(/not served/);
  });

  it("splits 100 questions into 64 + 36, answers all of them, and reuses the prefix cache", async () => {
    const { engine, method } = await setup();
    const qs = questions(100);
    const out = await method.answer(record(qs), new AbortController().signal);
    expect(engine.stats().requests).toBe(2);
    expect(engine.stats().reads).toBe(100);
    expect(Object.keys(out.probs)).toHaveLength(100);
    expect(Object.keys(out.probs)).toEqual(Object.keys(qs));
    expect(out.errors).toEqual({});
    expect(out.skipped).toEqual([]);
    expect(new Set(Object.values(out.answeredBy))).toEqual(new Set(["systemone"]));
    expect(out.usage.requests).toBe(2);
    expect(out.usage.completionTokens).toBe(100);
    expect(out.usage.promptTokens).toBe(engine.stats().promptTokens);
    // vLLM's DecisionUsage reports no cached tokens (issue 13 item 5): the reuse shows in the engine.
    expect(out.usage.cachedTokens).toBeNull();
    expect(engine.stats().cachedTokens).toBeGreaterThan(0);
    expect(out.retries).toBe(0);
    expect(out.approximate).toBe(false);
    expect(out.latencyMs).toBeGreaterThan(0);
    expectValid(out, qs);
  });

  it("maps noul to {true: p(yes), false: 1 - p(yes)} and choices to their criteria keys", async () => {
    const { engine, method } = await setup();
    const qs: Record<string, Question> = {
      flag: { type: "noul", instructions: "Complaint?", criteria: {} },
      label: { type: "choice", instructions: "Which?", criteria: { "0": "zero", "skill:a": "a", "gpt-4": "model" } },
    };
    const out = await method.answer(record(qs), new AbortController().signal);
    const direct = await postJson(`${engine.url}/v1/systemone`, { state: STATE, questions: qs });
    const p = direct.body.answers.flag.noul as number;
    expect(out.probs.flag).toEqual({ true: p, false: 1 - p });
    expect(Object.keys(out.probs.label!)).toEqual(["0", "skill:a", "gpt-4"]);
    expectValid(out, qs);
  });

  it("sends the state as its JSON text, non-ASCII as is, which the engine reads as the object", async () => {
    const { engine, method: direct } = await setup();
    const proxy = await startEngineProxy(engine.url);
    try {
      const method = new SystemOneMethod({ baseUrl: proxy.url, retry: { minBackoffMs: 1, maxBackoffMs: 5 } });
      const qs = questions(3);
      const out = await method.answer(record(qs), new AbortController().signal);
      const sent = proxy.to("/v1/systemone").map((r) => (r.body as { state: unknown }).state);
      expect(sent).toEqual([JSON.stringify(STATE)]);
      expect(sent[0]).toContain("Khách hàng");
      // The sim still takes an object (as vLLM does) and reads it the same.
      const asObject = await postJson(`${engine.url}/v1/systemone`, { state: STATE, questions: qs });
      expect(asObject.status).toBe(200);
      expect(out.probs).toEqual((await direct.answer(record(qs), new AbortController().signal)).probs);
      expect(out.probs.flag0).toEqual({ true: asObject.body.answers.flag0.noul, false: 1 - asObject.body.answers.flag0.noul });
    } finally {
      await proxy.close();
    }
  });

  it("sends only type, instructions and criteria even when the suite question has more fields", async () => {
    const { method } = await setup();
    const qs = { q: { ...choiceQuestion(2), note: "extra field from the suite" } as Question };
    const out = await method.answer(record(qs), new AbortController().signal);
    expect(out.errors).toEqual({});
    expect(Object.keys(out.probs)).toEqual(["q"]);
  });

  it("retries through 5xx=0.3 and answers every record", async () => {
    const { engine, method } = await setup({ faults: "5xx=0.3", seed: 5 }, { retry: { retries: 10 } });
    let retries = 0;
    for (let i = 0; i < 20; i++) {
      const qs = questions(3);
      const out = await method.answer({ ...record(qs, `r${i}`), state: { text: `record ${i}` } }, new AbortController().signal);
      expect(out.errors).toEqual({});
      expect(Object.keys(out.probs)).toHaveLength(3);
      expect(out.usage.requests).toBe(1 + out.retries);
      retries += out.retries;
    }
    expect(retries).toBeGreaterThan(0);
    expect(retries).toBe(engine.stats().faults.serverErrors);
  });

  it("puts every question in errors after the last retry when the engine always fails", async () => {
    const { engine, method } = await setup({ faults: "5xx=1" }, { retry: { retries: 2 } });
    const qs = questions(4);
    const out = await method.answer(record(qs), new AbortController().signal);
    expect(out.probs).toEqual({});
    expect(Object.keys(out.errors)).toEqual(Object.keys(qs));
    for (const m of Object.values(out.errors)) expect(m).toMatch(/^failed after 3 attempt\(s\): .*HTTP 50[03]/);
    expect(out.usage.requests).toBe(3);
    expect(out.retries).toBe(2);
    expect(engine.stats().requests).toBe(3);
  });

  it("retries 429 like a 5xx", async () => {
    const { engine, method } = await setup({ faults: "429=1" }, { retry: { retries: 1 } });
    const out = await method.answer(record(questions(1)), new AbortController().signal);
    expect(Object.values(out.errors)[0]).toMatch(/failed after 2 attempt\(s\): .*HTTP 429/);
    expect(engine.stats().requests).toBe(2);
  });

  it("routes a choice with more than 26 options to label-read and records who answered each question", async () => {
    const { engine, method } = await setup();
    const big = choiceQuestion(30);
    expect(routeSystemOne(big)).toMatchObject({ to: "fallback" });
    expect(routeSystemOne(choiceQuestion(26))).toEqual({ to: "systemone" });
    const qs: Record<string, Question> = { big, small: choiceQuestion(4) };
    const out = await method.answer(record(qs), new AbortController().signal);
    expect(out.errors).toEqual({});
    expect(Object.keys(out.probs).sort()).toEqual(["big", "small"]);
    expect(out.answeredBy).toEqual({ big: "label-read", small: "systemone" });
    expectValid(out, qs);
    const s = engine.stats();
    expect(s.byEndpoint["/v1/systemone"]).toBe(1);
    // 30 labels A..Z, AA..AD: all one token each in the sim, so one completion read.
    expect(s.byEndpoint["/v1/completions"]).toBe(1);
    expect(out.usage.requests).toBe(s.requests + s.tokenizeRequests);
  });

  it("skips questions longer than max_model_len, and only those", async () => {
    const { method } = await setup({ maxModelLen: 120 });
    const long = choiceQuestion(3, "Please consider carefully ".repeat(40));
    const qs: Record<string, Question> = { a: choiceQuestion(2), long, b: { type: "noul", instructions: "Yes?", criteria: {} } };
    const out = await method.answer(record(qs), new AbortController().signal);
    expect(out.skipped).toEqual(["long"]);
    expect(out.errors).toEqual({});
    // [a, long, b] -> 400; [a, long] -> 400; [a] ok; [long] -> skipped; [b] ok. A 400 is never retried.
    expect(out.usage.requests).toBe(5);
    expect(out.retries).toBe(0);
    expect(Object.keys(out.probs).sort()).toEqual(["a", "b"]);

    const tiny = await setup({ maxModelLen: 10 });
    const all = await tiny.method.answer(record(qs), new AbortController().signal);
    expect(all.skipped).toEqual(["a", "long", "b"]);
    expect(all.probs).toEqual({});
  });

  it("skips every question of a record whose state alone exceeds max_model_len, counting it with /tokenize once", async () => {
    const { engine, method } = await setup({ maxModelLen: 64 });
    await method.info();
    // The startup probe of /v1/systemone is the only inference request.
    expect(engine.stats().requests).toBe(1);
    const long = { ...record(questions(3)), state: { text: "lorem ipsum dolor sit amet ".repeat(30) } };
    const out = await method.answer(long, new AbortController().signal);
    expect(out.skipped).toEqual(Object.keys(long.questions));
    expect(out.errors).toEqual({});
    expect(engine.stats().requests).toBe(1);
    expect(engine.stats().tokenizeRequests).toBe(1);
    await method.answer({ ...long, id: "r2" }, new AbortController().signal);
    expect(engine.stats().tokenizeRequests).toBe(1);
  });

  it("sends every question to label-read once the engine answers 501, and stops asking /v1/systemone", async () => {
    const { engine, method } = await setup({ systemone: false });
    const qs = questions(3);
    const out = await method.answer(record(qs), new AbortController().signal);
    expect(out.errors).toEqual({});
    expect(Object.keys(out.probs)).toHaveLength(3);
    expect(new Set(Object.values(out.answeredBy))).toEqual(new Set(["label-read"]));
    expectValid(out, qs);
    expect(engine.stats().byEndpoint["/v1/systemone"]).toBe(1);
    const again = await method.answer(record(qs, "r2"), new AbortController().signal);
    expect(Object.keys(again.probs)).toHaveLength(3);
    expect(engine.stats().byEndpoint["/v1/systemone"]).toBe(1);
  });

  it("averages the reads under each label seed (the request's seed field)", async () => {
    const qs: Record<string, Question> = { label: choiceQuestion(5, "Which?"), flag: { type: "noul", instructions: "Yes?", criteria: {} } };
    const single = [];
    for (const seed of [0, 1, 2]) {
      const { method } = await setup({}, { seeds: [seed] });
      single.push(await method.answer(record(qs), new AbortController().signal));
    }
    const { engine, method } = await setup({}, { seeds: [0, 1, 2] });
    const out = await method.answer(record(qs), new AbortController().signal);
    expect(engine.stats().requests).toBe(3);
    for (const k of Object.keys(qs)) {
      for (const opt of Object.keys(out.probs[k]!)) {
        const mean = single.reduce((a, r) => a + r.probs[k]![opt]!, 0) / 3;
        expect(out.probs[k]![opt]).toBeCloseTo(mean, 12);
      }
    }
    // The sim prefers early labels, so the seeds do change the 5-way answer.
    expect(single[1]!.probs.label).not.toEqual(single[0]!.probs.label);
    expectValid(out, qs);
  });

  it("times out a hung engine and retries, then reports the timeout", async () => {
    const { engine, method } = await setup({ faults: "hang=1" }, { retry: { timeoutMs: 200, retries: 1 } });
    const out = await method.answer(record(questions(1)), new AbortController().signal);
    expect(Object.values(out.errors)[0]).toMatch(/failed after 2 attempt\(s\): .*no answer within 200 ms/);
    expect(engine.stats().faults.hangs).toBe(2);
  });

  it("reports an engine that crashed as unreachable", async () => {
    const { method } = await setup({ faults: "crash-after=1" }, { retry: { retries: 2 } });
    const first = await method.answer(record(questions(1)), new AbortController().signal);
    expect(first.errors).toEqual({});
    const second = await method.answer(record(questions(1), "r2"), new AbortController().signal);
    expect(Object.values(second.errors)[0]).toMatch(/failed after 3 attempt\(s\): .*unreachable/);
    await expect(method.info()).rejects.toThrow(/unreachable/);
  });

  it("rethrows the caller's abort", async () => {
    const { method } = await setup({ faults: "hang=1" }, { retry: { timeoutMs: 60_000 } });
    const ctl = new AbortController();
    const pending = method.answer(record(questions(1)), ctl.signal);
    setTimeout(() => ctl.abort(new Error("unit cancelled")), 50);
    await expect(pending).rejects.toThrow("unit cancelled");
  });
});

describe("answerToDistribution", () => {
  const choice: Question = { type: "choice", instructions: "", criteria: { A: "a", B: "b" } };
  it.each([
    ["exact", { type: "choice", probabilities: { A: 0.25, B: 0.75 } }, { A: 0.25, B: 0.75 }],
    ["float noise renormalised", { type: "choice", probabilities: { A: 0.2500001, B: 0.7500001 } }, { A: 0.2500001 / 1.0000002, B: 0.7500001 / 1.0000002 }],
  ])("%s", (_name, answer, expected) => {
    expect(answerToDistribution(choice, answer)).toEqual(expected);
  });
  it("refuses a missing option, a real shortfall and a type mismatch", () => {
    expect(answerToDistribution(choice, { type: "choice", probabilities: { A: 1 } })).toMatch(/no probability for option "B"/);
    expect(answerToDistribution(choice, { type: "choice", probabilities: { A: 0.2, B: 0.5 } })).toMatch(/sum to 0.7/);
    expect(answerToDistribution(choice, { type: "noul", probabilities: {} })).toMatch(/type "noul"/);
  });
  it("reads noul from `noul`, else from probabilities.yes", () => {
    const noul: Question = { type: "noul", instructions: "", criteria: {} };
    expect(answerToDistribution(noul, { type: "noul", noul: 0.3, probabilities: { yes: 0.3, no: 0.7 } })).toEqual({ true: 0.3, false: 0.7 });
    expect(answerToDistribution(noul, { type: "noul", probabilities: { yes: 0.9, no: 0.1 } })).toEqual({ true: 0.9, false: 1 - 0.9 });
    expect(answerToDistribution(noul, { type: "noul", probabilities: {} })).toMatch(/without a probability/);
  });
});

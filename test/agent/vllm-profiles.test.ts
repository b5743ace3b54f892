// The batched engine methods against the sim's vLLM profiles (sim --vllm legacy|current): an
// endpoint that is not served (404), a /tokenize that refuses an over-long state, a context
// overflow without figures and an admission 503, each answered without errored questions.
import { afterEach, describe, expect, it } from "vitest";
import { startSimEngine, type SimEngine, type SimEngineOptions } from "../../sim/engine/server.js";
import { SystemOneMethod } from "../../agent/methods/systemone.js";
import { DecisionsMethod } from "../../agent/methods/decisions.js";
import type { RecordPayload } from "../../agent/engine-method.js";
import type { Question } from "../../common/suite/schema.js";
import { createLogger } from "../../common/log.js";
import { choiceQuestion } from "../sim/engine-fixtures.js";
import { EngineProbe } from "../../agent/engine-probe.js";
import { observeEngineRequests, requestJson } from "../../agent/engine-http.js";
import { FakeEngineMethod } from "./attach-fakes.js";

const engines: SimEngine[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
});

async function engine(options: SimEngineOptions): Promise<SimEngine> {
  const e = await startSimEngine({ model: "tiny", ...options });
  engines.push(e);
  return e;
}

function logLines(): { logger: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = [];
  const logger = createLogger("t", "warn");
  logger.warn = (m: string) => void lines.push(m);
  return { logger, lines };
}

const RETRY = { minBackoffMs: 1, maxBackoffMs: 5 };
const STATE = { text: "The parcel came two weeks late and the box was dented." };

function questions(n: number): Record<string, Question> {
  return Object.fromEntries(Array.from({ length: n }, (_, i) => [`q${i}`, i % 2 ? choiceQuestion(3, `Question ${i}?`) : { type: "noul", instructions: `Is ${i} true?`, criteria: {} }]));
}

function record(qs: Record<string, Question>, id = "r1", state: Record<string, string> = STATE): RecordPayload {
  return { recordKey: `t:${id}`, id, state, questions: qs, payloadSha256: "x" };
}

describe("vLLM profiles: legacy (no decision routes)", () => {
  for (const Method of [SystemOneMethod, DecisionsMethod]) {
    it(`${Method.name}: a 404 on its endpoint sends every question to label-read, said once`, async () => {
      const e = await engine({ vllm: "legacy" });
      const { logger, lines } = logLines();
      const method = new Method({ baseUrl: e.url, logger, retry: RETRY });
      await method.info();
      const qs = questions(3);
      for (const id of ["r1", "r2"]) {
        const out = await method.answer(record(qs, id), new AbortController().signal);
        expect(out.errors).toEqual({});
        expect(Object.keys(out.probs)).toHaveLength(3);
        expect(new Set(Object.values(out.answeredBy))).toEqual(new Set(["label-read"]));
      }
      expect(lines.filter((l) => /not served by this engine \(HTTP 404\)/.test(l))).toHaveLength(1);
      expect(e.stats().byStatus[404]).toBe(1);
    });
  }
});

describe("vLLM profiles: current", () => {
  it("a state over the context, refused by /tokenize, is skipped in exactly one request", async () => {
    const e = await engine({ vllm: "current", maxModelLen: 64 });
    const method = new SystemOneMethod({ baseUrl: e.url, retry: RETRY });
    await method.info();
    const probes = e.stats().requests;
    const long = record(questions(3), "r1", { text: "lorem ipsum dolor sit amet ".repeat(30) });
    const out = await method.answer(long, new AbortController().signal);
    expect(out.errors).toEqual({});
    expect(out.skipped).toEqual(Object.keys(long.questions));
    expect(e.stats().tokenizeRequests).toBe(1);
    expect(e.stats().requests - probes).toBe(0);
    expect(out.usage.requests).toBe(1);
  });

  it("an overflow without figures is skipped without splitting the batch", async () => {
    // The state fits (no /tokenize), the questions' prompts do not.
    const e = await engine({ vllm: "current", maxModelLen: 90 });
    const method = new SystemOneMethod({ baseUrl: e.url, retry: RETRY });
    const qs = Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`q${i}`, choiceQuestion(3, "Please consider carefully ".repeat(20))]));
    const out = await method.answer(record(qs), new AbortController().signal);
    expect(out.errors).toEqual({});
    expect(out.skipped.sort()).toEqual(Object.keys(qs));
    expect(e.stats().requests).toBe(1);
    expect(e.stats().byStatus[400]).toBe(1);
  });

  it("a 503 admission refusal halves the batch, and later batches stay smaller", async () => {
    const e = await engine({ vllm: "current", maxNumQueuedReqs: 20 });
    const { logger, lines } = logLines();
    const method = new SystemOneMethod({ baseUrl: e.url, logger, retry: RETRY });
    const qs = questions(40);
    const out = await method.answer(record(qs), new AbortController().signal);
    expect(out.errors).toEqual({});
    expect(Object.keys(out.probs)).toHaveLength(40);
    // 40 refused (one request, not retried at that size); 20 + 20 admitted.
    expect(e.stats().byStatus[503]).toBe(1);
    expect(e.stats().requests).toBe(3);
    expect(out.retries).toBe(0);
    expect(lines.filter((l) => /refused a batch of 40 questions/.test(l))).toHaveLength(1);
    const next = await method.answer(record(qs, "r2"), new AbortController().signal);
    expect(Object.keys(next.probs)).toHaveLength(40);
    expect(e.stats().byStatus[503]).toBe(1);
    expect(e.stats().requests).toBe(5);
  });
});

describe("vLLM profiles: current, the engine probe", () => {
  it("503 admission refusals in a row keep the engine ready (it is alive, only full)", async () => {
    const e = await engine({ vllm: "current", maxNumQueuedReqs: 1 });
    const probe = new EngineProbe(new FakeEngineMethod(), { readyIntervalMs: 60_000, downIntervalMs: 60_000, timeoutMs: 1_000, serverErrorStreak: 3 }, createLogger("t", "silent"));
    expect(await probe.probe()).toBe(true);
    // As the attach loop feeds it.
    const unobserve = observeEngineRequests((o) => probe.observe(o.outcome, o.admissionRefused));
    try {
      for (let i = 0; i < 4; i++) {
        const status = await requestJson(`${e.url}/v1/systemone`, { method: "POST", body: { state: STATE, questions: questions(2) }, timeoutMs: 5_000 }).then(
          () => 200,
          (err: { status?: number }) => err.status,
        );
        expect(status).toBe(503);
      }
      await new Promise((r) => setTimeout(r, 20));
      expect(probe.ready).toBe(true);
    } finally {
      unobserve();
      probe.stop();
    }
  });
});

describe("vLLM profiles: the startup probe of the method's own endpoint", () => {
  for (const Method of [SystemOneMethod, DecisionsMethod]) {
    it(`${Method.name}: a legacy engine is found out at startup, said once, and its records never reach the endpoint`, async () => {
      const e = await engine({ vllm: "legacy" });
      const { logger, lines } = logLines();
      const method = new Method({ baseUrl: e.url, logger, retry: RETRY });
      await method.info();
      expect(lines.filter((l) => /not served by this engine \(HTTP 404\)/.test(l))).toHaveLength(1);
      await method.info();
      expect(e.stats().byStatus[404]).toBe(1);
      const out = await method.answer(record(questions(3)), new AbortController().signal);
      expect(new Set(Object.values(out.answeredBy))).toEqual(new Set(["label-read"]));
      expect(e.stats().byStatus[404]).toBe(1);
      expect(lines.filter((l) => /not served/.test(l))).toHaveLength(1);
    });
  }

  it("an engine restarted as a vLLM that serves the endpoint is probed again: its questions go back to the method", async () => {
    const old = await engine({ vllm: "legacy" });
    const { logger, lines } = logLines();
    const infos: string[] = [];
    logger.info = (m: string) => void infos.push(m);
    const method = new SystemOneMethod({ baseUrl: old.url, logger, retry: { ...RETRY, retries: 0 } });
    await method.info();
    expect(lines.filter((l) => /not served/.test(l))).toHaveLength(1);
    await old.close();
    await expect(method.info()).rejects.toThrow();
    const fresh = await engine({ vllm: "current", port: old.port });
    await method.info();
    expect(infos.filter((m) => /served by this engine again/.test(m))).toHaveLength(1);
    const out = await method.answer(record(questions(3)), new AbortController().signal);
    expect(out.errors).toEqual({});
    expect(new Set(Object.values(out.answeredBy))).toEqual(new Set(["systemone"]));
    expect(fresh.stats().byEndpoint["/v1/systemone"]).toBe(2);
  });
});

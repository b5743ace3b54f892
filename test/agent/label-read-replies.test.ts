// LabelReadMethod with replies other than the plain exact read, against the real simulated engine
// on 127.0.0.1:0 behind a gateway (engine-proxy.ts): logprob_token_ids refused with a 400, a
// completions route the gateway does not serve, replies without logprobs (no label gets any
// probability), replies naming tokens as strings, labels that are the same tokens for the model.
import { afterEach, describe, expect, it } from "vitest";
import { startSimEngine, type SimEngine, type SimEngineOptions } from "../../sim/engine/server.js";
import { SimTokenizer } from "../../sim/engine/model/tokenizer.js";
import { validationFailure } from "../../sim/engine/protocol/validation-error.js";
import { LabelReadMethod, type LabelReadOptions } from "../../agent/methods/label-read.js";
import type { RecordPayload } from "../../agent/engine-method.js";
import type { Question } from "../../common/suite/schema.js";
import { choiceQuestion } from "../sim/engine-fixtures.js";
import { startEngineProxy, type EngineProxyOptions } from "./engine-proxy.js";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

const STATE = { text: "The order arrived two weeks late and the box was dented." };
const noul: Question = { type: "noul", instructions: "Is it a complaint?", criteria: {} };
const record = (questions: Record<string, Question>): RecordPayload => ({ recordKey: "t:r1", id: "r1", state: STATE, questions, payloadSha256: "x" });
const signal = () => new AbortController().signal;
const NO_PROBABILITY = "the model gave no probability to any label (none among the logprobs returned)";

async function engine(options: SimEngineOptions = {}): Promise<SimEngine> {
  const sim = await startSimEngine({ model: "tiny", seed: 3, ...options });
  closers.push(() => sim.close());
  return sim;
}

/** The sim behind a gateway, and a method reading through the gateway. */
async function proxied(hooks: EngineProxyOptions, sim: SimEngineOptions = {}, method: Partial<LabelReadOptions> = {}) {
  const e = await engine(sim);
  const proxy = await startEngineProxy(e.url, hooks);
  closers.push(() => proxy.close());
  return { engine: e, proxy, method: new LabelReadMethod({ baseUrl: proxy.url, retry: { minBackoffMs: 1, maxBackoffMs: 5 }, ...method }) };
}

/** The same reads straight from an identical sim: the exact answer. */
async function direct(questions: Record<string, Question>, method: Partial<LabelReadOptions> = {}) {
  const e = await engine();
  const out = await new LabelReadMethod({ baseUrl: e.url, retry: { minBackoffMs: 1, maxBackoffMs: 5 }, ...method }).answer(record(questions), signal());
  expect(out.errors).toEqual({});
  return out.probs;
}

describe("LabelReadMethod: replies other than the exact read", () => {
  it("logprob_token_ids refused with a 400 naming it: the method reads top-k from then on and marks the answer approximate", async () => {
    // A gateway whose request schema forbids unknown fields, answering in vLLM's pydantic-error
    // format (vllm/entrypoints/serve/exception_handling/handlers/validation.py: 400, the errors
    // listed in the message, param the first error's loc).
    const refusal = (body: Record<string, unknown>) => validationFailure([{ type: "extra_forbidden", loc: ["body", "logprob_token_ids"], msg: "Extra inputs are not permitted", input: body.logprob_token_ids }]);
    const { proxy, method } = await proxied({ answer: (path, body) => (path === "/v1/completions" && body.logprob_token_ids !== undefined ? refusal(body) : undefined) });
    const qs = { flag: noul, label: choiceQuestion(3, "Which sentiment?") };
    const out = await method.answer(record(qs), signal());
    expect(out.errors).toEqual({});
    expect(out.approximate).toBe(true);
    expect(method.approximateMode).toBe(true);
    // One refused read, then top-k only: with these few labels all are among the top 20, so the
    // renormalised answer is the exact one.
    const reads = proxy.to("/v1/completions");
    expect(reads.filter((r) => r.status === 400)).toHaveLength(1);
    expect(reads.filter((r) => r.status === 200).every((r) => (r.body as { logprob_token_ids?: unknown }).logprob_token_ids === undefined)).toBe(true);
    const exact = await direct(qs);
    for (const [k, dist] of Object.entries(exact)) for (const [opt, p] of Object.entries(dist)) expect(out.probs[k]![opt], `${k}/${opt}`).toBeCloseTo(p, 9);
  });

  it("a completions route the gateway does not serve (404) is the question's error; the method stays in exact mode", async () => {
    // FastAPI's own 404 for a route it does not have (starlette's HTTPException body {"detail": ...}).
    const { proxy, method } = await proxied({ answer: (path) => (path === "/v1/completions" ? { status: 404, body: { detail: "Not Found" } } : undefined) });
    const out = await method.answer(record({ flag: noul }), signal());
    expect(Object.keys(out.errors)).toEqual(["flag"]);
    expect(out.errors.flag).toContain("HTTP 404");
    expect(out.skipped).toEqual([]);
    expect(method.approximateMode).toBe(false);
    expect(proxy.to("/v1/completions")).toHaveLength(1);
  });

  describe("replies without logprobs: no label has any probability, the question's error says so", () => {
    type Reply = Record<string, unknown> & { choices: Array<Record<string, unknown>> };
    const completions: Record<string, (choice: Record<string, unknown>) => void> = {
      "logprobs null": (c) => {
        c.logprobs = null;
      },
      "top_logprobs null": (c) => {
        (c.logprobs as Record<string, unknown>).top_logprobs = null;
      },
      "top_logprobs [null]": (c) => {
        (c.logprobs as Record<string, unknown>).top_logprobs = [null];
      },
    };
    for (const [name, strip] of Object.entries(completions)) {
      it(`completions, ${name}`, async () => {
        const { method } = await proxied({
          response: (path, body) => {
            if (path === "/v1/completions") for (const c of (body as Reply).choices) strip(c);
            return body;
          },
        });
        const out = await method.answer(record({ flag: noul }), signal());
        expect([out.errors, out.skipped, out.probs]).toEqual([{ flag: NO_PROBABILITY }, [], {}]);
      });
    }
    const chat: Record<string, (choice: Record<string, unknown>) => void> = {
      "logprobs null": (c) => {
        c.logprobs = null;
      },
      "content null": (c) => {
        (c.logprobs as Record<string, unknown>).content = null;
      },
      "content []": (c) => {
        (c.logprobs as Record<string, unknown>).content = [];
      },
      "top_logprobs null": (c) => {
        ((c.logprobs as { content: Array<Record<string, unknown>> }).content[0]!).top_logprobs = null;
      },
    };
    for (const [name, strip] of Object.entries(chat)) {
      it(`chat, ${name}`, async () => {
        const { method } = await proxied(
          {
            response: (path, body) => {
              if (path === "/v1/chat/completions") for (const c of (body as Reply).choices) strip(c);
              return body;
            },
          },
          {},
          { api: "chat" },
        );
        const out = await method.answer(record({ flag: noul }), signal());
        expect([out.errors, out.skipped, out.probs]).toEqual([{ flag: NO_PROBABILITY }, [], {}]);
      });
    }
  });

  it("a server that names tokens as strings (no return_tokens_as_token_ids): labels are found by their pieces, the answer is exact", async () => {
    // Chat: a label's tokens open the assistant message, so their pieces carry no leading-space
    // mark and are the tokens' text; 45 options make AQ..AS two tokens, read after "A".
    const qs = { intent: choiceQuestion(45, "Which intent?"), flag: noul };
    const { proxy, method } = await proxied(
      {
        request: (path, body) => {
          if (path !== "/v1/chat/completions") return body;
          const { return_tokens_as_token_ids: _dropped, ...rest } = body;
          return rest;
        },
      },
      {},
      { api: "chat" },
    );
    const out = await method.answer(record(qs), signal());
    expect(out.errors).toEqual({});
    expect(out.approximate).toBe(false);
    // The replies named tokens as text, never as token_id:N.
    const replies = proxy.to("/v1/chat/completions").map((r) => JSON.stringify(r.response));
    expect(replies.length).toBeGreaterThan(0);
    expect(replies.some((r) => r.includes("token_id:"))).toBe(false);
    const exact = await direct(qs, { api: "chat" });
    for (const [k, dist] of Object.entries(exact)) for (const [opt, p] of Object.entries(dist)) expect(out.probs[k]![opt], `${k}/${opt}`).toBeCloseTo(p, 12);
  });

  it("a server without token_strs that names tokens as strings: an empty token string is no label's", async () => {
    // A vLLM with neither return_tokens_as_token_ids nor /tokenize's token_strs: labels have no
    // pieces to match. Its top-k may hold a special token decoded to "" (skip_special_tokens).
    const { method } = await proxied(
      {
        request: (path, body) => {
          const { return_tokens_as_token_ids: _dropped, ...rest } = body;
          return path === "/v1/completions" ? rest : body;
        },
        response: (path, body) => {
          if (path === "/tokenize") body.token_strs = null;
          if (path === "/v1/completions") for (const c of (body as { choices: Array<{ logprobs: { top_logprobs: Array<Record<string, number>> } }> }).choices) c.logprobs.top_logprobs[0]![""] = -0.05;
          return body;
        },
      },
      { logprobTokenIds: false },
    );
    const out = await method.answer(record({ flag: noul }), signal());
    expect([out.errors, out.probs]).toEqual([{ flag: NO_PROBABILITY }, {}]);
  });

  it("two labels that are the same tokens for the model: that question's error names them, nothing is read", async () => {
    // A vocabulary without capital letters and no byte fallback: /tokenize gives every letter
    // label its one <unk> token (the tail "Answer:" as the sim tokenizes it).
    const tokenizer = new SimTokenizer();
    const tail = tokenizer.encodeWithPieces("Answer:", false);
    const UNK = 100_000;
    const { engine: e, method } = await proxied({
      answer: (path, body) =>
        path === "/tokenize" && typeof body.prompt === "string" && /^Answer: [A-Z]+$/.test(body.prompt)
          ? { status: 200, body: { count: tail.ids.length + 1, max_model_len: 8192, tokens: [...tail.ids, UNK], token_strs: [...tail.pieces, "<unk>"] } }
          : undefined,
    });
    const out = await method.answer(record({ label: choiceQuestion(3, "Which sentiment?"), flag: noul }), signal());
    expect(out.errors).toEqual({ label: 'labels "A" and "B" are the same tokens for this model' });
    expect(out.skipped).toEqual([]);
    expect(Object.keys(out.probs)).toEqual(["flag"]);
    // The noul question's read only.
    expect(e.stats().byEndpoint["/v1/completions"]).toBe(1);
  });
});

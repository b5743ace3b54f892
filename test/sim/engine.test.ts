// The simulated vLLM engine over real HTTP on 127.0.0.1:0.
import { existsSync, rmSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startSimEngine, type SimEngine, type SimEngineOptions } from "../../sim/engine/server.js";
import { writeOracleFile } from "../../sim/engine/model/oracle.js";
import { parseFaults } from "../../sim/engine/faults.js";
import { UsageError } from "../../common/errors.js";
import { choiceQuestion, makeRecords, postJson, writeSuite } from "./engine-fixtures.js";

const engines: SimEngine[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function engine(options: SimEngineOptions = {}): Promise<SimEngine> {
  const e = await startSimEngine({ model: "tiny", ...options });
  engines.push(e);
  return e;
}

const STATE = { text: "The parcel arrived two weeks late, the box was crushed and support never answered my emails." };

describe("sim engine: endpoints", () => {
  it("serves /health, /v1/models with max_model_len and a sim/ model id", async () => {
    const e = await engine({ maxModelLen: 4096 });
    const health = await fetch(`${e.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.text()).toBe("");
    const models = (await (await fetch(`${e.url}/v1/models`)).json()) as any;
    expect(models.object).toBe("list");
    expect(models.data).toHaveLength(1);
    expect(models.data[0]).toMatchObject({ id: "sim/tiny", object: "model", max_model_len: 4096, root: "sim/tiny" });
    expect(typeof models.data[0].owned_by).toBe("string");
    expect(e.model).toBe("sim/tiny");
  });

  it("answers 404 for unknown paths and 405 for a wrong method, FastAPI style", async () => {
    const e = await engine();
    const nf = await fetch(`${e.url}/v1/nothing`);
    expect(nf.status).toBe(404);
    expect(await nf.json()).toEqual({ detail: "Not Found" });
    const na = await fetch(`${e.url}/v1/systemone`);
    expect(na.status).toBe(405);
  });

  it("answers choice and noul questions with probabilities per option, noul = p(yes), and usage", async () => {
    const e = await engine();
    const res = await postJson(`${e.url}/v1/systemone`, {
      model: "sim/tiny",
      state: STATE,
      questions: {
        team: { type: "choice", instructions: "Which team?", criteria: { billing: "payments", shipping: "deliveries", security: null } },
        urgent: { type: "noul", instructions: "Urgent?", criteria: { true: "money is moving" } },
        tone: { type: "score", instructions: "How upset?", criteria: ["calm", "annoyed", "furious"] },
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.object).toBe("structured_decision");
    expect(res.body.model).toBe("sim/tiny");
    expect(Object.keys(res.body.answers)).toEqual(["team", "urgent", "tone"]);
    const team = res.body.answers.team;
    expect(team.type).toBe("choice");
    expect(Object.keys(team.probabilities)).toEqual(["billing", "shipping", "security"]);
    const sum = Object.values(team.probabilities as Record<string, number>).reduce((a, b) => a + b, 0);
    expect(sum).toBeCloseTo(1, 12);
    const top = Object.entries(team.probabilities as Record<string, number>).sort((a, b) => b[1] - a[1])[0]![0];
    expect(team.choice).toBe(top);
    const urgent = res.body.answers.urgent;
    expect(urgent.type).toBe("noul");
    expect(urgent.noul).toBe(urgent.probabilities.yes);
    expect(urgent.probabilities.yes + urgent.probabilities.no).toBeCloseTo(1, 12);
    expect(Object.keys(res.body.answers.tone.legend)).toEqual(["0", "1", "2"]);
    expect(res.body.usage.input_tokens).toBeGreaterThan(0);
    expect(res.body.usage.output_tokens).toBe(3);
    expect(res.body.usage.prompt_tokens).toBe(res.body.usage.input_tokens);
    expect(res.body.diagnostics.team.label_mass).toBeGreaterThan(0);
  });

  it("is deterministic for a seed and differs across seeds", async () => {
    const [a, b, c] = await Promise.all([engine({ seed: 7 }), engine({ seed: 7 }), engine({ seed: 8 })]);
    const req = { state: STATE, questions: { q: choiceQuestion(5) } };
    const ra = await postJson(`${a.url}/v1/systemone`, req);
    const rb = await postJson(`${b.url}/v1/systemone`, req);
    const rc = await postJson(`${c.url}/v1/systemone`, req);
    expect(ra.body.answers).toEqual(rb.body.answers);
    expect(ra.body.answers.q.probabilities).not.toEqual(rc.body.answers.q.probabilities);
  });
});

describe("sim engine: validation as vLLM", () => {
  it("rejects more than 64 questions with 400 and vLLM's error body", async () => {
    const e = await engine();
    const questions = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`q${i}`, choiceQuestion(2)]));
    const res = await postJson(`${e.url}/v1/systemone`, { state: STATE, questions });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { message: "questions: at most 64 for this model", type: "BadRequestError", param: null, code: 400 } });
    const ok = await postJson(`${e.url}/v1/systemone`, { state: STATE, questions: Object.fromEntries(Object.entries(questions).slice(0, 64)) });
    expect(ok.status).toBe(200);
  });

  it("rejects a choice with 27 options and accepts 26", async () => {
    const e = await engine();
    const bad = await postJson(`${e.url}/v1/systemone`, { state: STATE, questions: { big: choiceQuestion(27) } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toEqual({ message: "question 'big': at most 26 options for this model", type: "BadRequestError", param: null, code: 400 });
    const ok = await postJson(`${e.url}/v1/systemone`, { state: STATE, questions: { big: choiceQuestion(26) } });
    expect(ok.status).toBe(200);
  });

  it("reports schema errors as vLLM's RequestValidationError handler does (400, param = loc)", async () => {
    const e = await engine();
    const missing = await postJson(`${e.url}/v1/systemone`, { questions: { q: choiceQuestion(2) } });
    expect(missing.status).toBe(400);
    expect(missing.body.error.type).toBe("Bad Request");
    expect(missing.body.error.code).toBe(400);
    expect(missing.body.error.param).toBe("body.state");
    expect(missing.body.error.message).toMatch(/^1 validation error:\n  \{'type': 'missing', 'loc': \('body', 'state'\), 'msg': 'Field required'/);

    const two = await postJson(`${e.url}/v1/systemone`, { state: "s", questions: { q: { instructions: "x" } }, priority: "high" });
    expect(two.status).toBe(400);
    expect(two.body.error.message).toMatch(/^2 validation errors:/);
    expect(two.body.error.param).toBe("body.questions.q.type");

    const badJson = await postJson(`${e.url}/v1/systemone`, "{not json");
    expect(badJson.status).toBe(400);
    expect(badJson.body.error.message).toContain("json_invalid");

    const text = await postJson(`${e.url}/v1/systemone`, JSON.stringify({ state: "s" }), { "content-type": "text/plain" });
    expect(text.status).toBe(400);
    expect(text.body.error.message).toContain("Only 'application/json' is allowed");
  });

  it("rejects unknown question fields, unknown types, bad criteria and a wrong model", async () => {
    const e = await engine();
    const post = (body: unknown) => postJson(`${e.url}/v1/systemone`, body);
    const extra = await post({ state: STATE, questions: { q: { ...choiceQuestion(2), weight: 2 } } });
    expect(extra.status).toBe(400);
    expect(extra.body.error.message).toBe("question 'q': unknown field(s) ['weight']");
    const type = await post({ state: STATE, questions: { q: { type: "rank", instructions: "", criteria: {} } } });
    expect(type.body.error.message).toBe("unknown question type 'rank'; supported: ['choice', 'noul', 'score']");
    const crit = await post({ state: STATE, questions: { q: { type: "choice", instructions: "", criteria: {} } } });
    expect(crit.body.error.message).toBe("question 'q': choice criteria must map option names to a description or null");
    const noul = await post({ state: STATE, questions: { q: { type: "noul", instructions: "", criteria: { maybe: "x" } } } });
    expect(noul.body.error.message).toBe("question 'q': noul criteria must be an object with true and false");
    const none = await post({ state: STATE, questions: {} });
    expect(none.body.error.message).toBe("questions: needs at least one question");
    const model = await post({ model: "other", state: STATE, questions: { q: choiceQuestion(2) } });
    expect(model.status).toBe(404);
    expect(model.body.error).toMatchObject({ type: "NotFoundError", code: 404, param: "model" });
  });

  it("answers 501 when the model has no structured-decisions support", async () => {
    const e = await engine({ systemone: false });
    const res = await postJson(`${e.url}/v1/systemone`, { state: STATE, questions: { q: choiceQuestion(2) } });
    expect(res.status).toBe(501);
    expect(res.body.error).toMatchObject({ type: "NotImplementedError", code: 501 });
  });

  it("rejects a prompt longer than max_model_len with the context-length 400", async () => {
    const e = await engine({ maxModelLen: 40 });
    const res = await postJson(`${e.url}/v1/systemone`, { state: STATE.text.repeat(5), questions: { q: choiceQuestion(2) } });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe("input_tokens");
    expect(res.body.error.message).toMatch(/the model's context length is only 40 tokens/);
  });
});

describe("sim engine: prefix cache and metrics", () => {
  it("serves a repeated state from the prefix cache, visible in usage and /metrics", async () => {
    const e = await engine();
    const first = await postJson(`${e.url}/v1/systemone`, { state: STATE, questions: { a: choiceQuestion(3, "First question?") } });
    expect(first.body.usage.prompt_tokens_details.cached_tokens).toBe(0);
    const second = await postJson(`${e.url}/v1/systemone`, { state: STATE, questions: { b: choiceQuestion(3, "Second question?") } });
    expect(second.body.usage.prompt_tokens_details.cached_tokens).toBeGreaterThan(0);
    expect(second.body.usage.input_tokens_details.cached_tokens).toBe(second.body.usage.prompt_tokens_details.cached_tokens);
    expect(second.body.usage.prompt_tokens_details.cached_tokens).toBeLessThan(second.body.usage.prompt_tokens);
    // Within one request the state is prefilled once: every read after the first is cached.
    const many = await postJson(`${e.url}/v1/systemone`, { state: { other: STATE.text.toUpperCase() }, questions: { x: choiceQuestion(2), y: choiceQuestion(2), z: choiceQuestion(2) } });
    expect(many.body.usage.prompt_tokens_details.cached_tokens).toBeGreaterThan(0);

    const text = await (await fetch(`${e.url}/metrics`)).text();
    const value = (name: string) => Number(new RegExp(`^${name}\\{[^}]*model_name="sim/tiny"[^}]*\\} (\\S+)$`, "m").exec(text)?.[1]);
    for (const name of [
      "vllm:num_requests_running",
      "vllm:num_requests_waiting",
      "vllm:kv_cache_usage_perc",
      "vllm:prefix_cache_queries_total",
      "vllm:prefix_cache_hits_total",
      "vllm:prompt_tokens_total",
      "vllm:generation_tokens_total",
      "vllm:time_to_first_token_seconds_count",
      "vllm:e2e_request_latency_seconds_count",
    ]) {
      expect(Number.isFinite(value(name)), name).toBe(true);
    }
    const stats = e.stats();
    expect(value("vllm:prefix_cache_hits_total")).toBe(stats.cachedTokens);
    expect(value("vllm:prompt_tokens_total")).toBe(stats.promptTokens);
    expect(value("vllm:generation_tokens_total")).toBe(5);
    expect(value("vllm:kv_cache_usage_perc")).toBeGreaterThan(0);
    expect(text).toMatch(/vllm:request_success_total\{[^}]*finished_reason="length"/);
  });

  it("completes every request under a finite token rate with one sequence at a time", async () => {
    const e = await engine({ tokensPerS: 200_000, maxNumSeqs: 1 });
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => postJson(`${e.url}/v1/systemone`, { state: { n: String(i) }, questions: { a: choiceQuestion(2), b: choiceQuestion(3) } })),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(e.stats()).toMatchObject({ reads: 12, running: 0, waiting: 0 });
  });
});

describe("sim engine: oracle mode", () => {
  async function argmaxHits(accuracy: number): Promise<{ hits: number; total: number }> {
    const records = makeRecords(40);
    const suite = writeSuite(records);
    dirs.push(suite);
    const out = mkdtempSync(join(tmpdir(), "udm-oracle-"));
    dirs.push(out);
    const file = join(out, "oracle.jsonl");
    expect(await writeOracleFile(suite, file)).toBe(40);
    const first = JSON.parse(readFileSync(file, "utf8").split("\n")[0]!);
    expect(first).toMatchObject({ run_id: "t-demo:r0", expected: records[0]!.expected });
    const e = await engine({ oracle: file, accuracy, seed: 3 });
    let hits = 0;
    let total = 0;
    for (const r of records) {
      const res = await postJson(`${e.url}/v1/systemone`, { state: r.state, questions: r.questions });
      const label = res.body.answers.label;
      total += 2;
      if (label.choice === r.expected.label) hits++;
      if ((res.body.answers.flag.noul > 0.5) === r.expected.flag) hits++;
    }
    return { hits, total };
  }

  it("puts gold on top every time at accuracy 1 and never at accuracy 0", async () => {
    const perfect = await argmaxHits(1);
    expect(perfect.hits).toBe(perfect.total);
    const never = await argmaxHits(0);
    expect(never.hits).toBe(0);
  });

  it("refuses a missing suite and leaves no oracle file behind", async () => {
    const out = mkdtempSync(join(tmpdir(), "udm-oracle-"));
    dirs.push(out);
    await expect(writeOracleFile(join(out, "no-suite"), join(out, "o.jsonl"))).rejects.toThrow(UsageError);
    expect(existsSync(join(out, "o.jsonl"))).toBe(false);
  });

  it("hits roughly the asked accuracy in between", async () => {
    const { hits, total } = await argmaxHits(0.7);
    expect(hits / total).toBeGreaterThan(0.5);
    expect(hits / total).toBeLessThan(0.9);
  });
});

describe("sim engine: faults", () => {
  it("parses fault specs and refuses bad ones", () => {
    expect(parseFaults("5xx=0.05,hang=0.01,crash-after=500")).toEqual({ serverErrorRate: 0.05, tooManyRequestsRate: 0, hangRate: 0.01, crashAfter: 500 });
    expect(() => parseFaults("5xx=2")).toThrow(UsageError);
    expect(() => parseFaults("boom=0.1")).toThrow(/unknown fault/);
    expect(() => parseFaults("hang")).toThrow(/needs a number/);
  });

  it("answers 5xx at roughly the asked rate, with vLLM error bodies, the same for the same seed", async () => {
    const run = async () => {
      const e = await engine({ faults: "5xx=0.3", seed: 11 });
      const statuses: number[] = [];
      for (let i = 0; i < 200; i++) {
        const res = await postJson(`${e.url}/v1/systemone`, { state: "s", questions: { q: choiceQuestion(2) } });
        statuses.push(res.status);
        if (res.status >= 500) {
          expect([500, 503]).toContain(res.status);
          expect(res.body.error.code).toBe(res.status);
        }
      }
      return statuses;
    };
    const a = await run();
    const failures = a.filter((s) => s >= 500).length;
    expect(failures).toBeGreaterThan(40);
    expect(failures).toBeLessThan(80);
    expect(await run()).toEqual(a);
  });

  it("crashes after N requests: connection dropped, then refused", async () => {
    let crashed = 0;
    const e = await engine({ faults: "crash-after=3", onCrash: () => crashed++ });
    for (let i = 0; i < 3; i++) expect((await postJson(`${e.url}/v1/systemone`, { state: "s", questions: { q: choiceQuestion(2) } })).status).toBe(200);
    await expect(postJson(`${e.url}/v1/systemone`, { state: "s", questions: { q: choiceQuestion(2) } })).rejects.toThrow();
    await expect(fetch(`${e.url}/health`)).rejects.toThrow();
    expect(e.stats().crashed).toBe(true);
    expect(crashed).toBe(1);
  });

  it("hangs until the client gives up", async () => {
    const e = await engine({ faults: "hang=1" });
    const res = fetch(`${e.url}/v1/systemone`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ state: "s", questions: { q: choiceQuestion(2) } }),
      signal: AbortSignal.timeout(300),
    });
    await expect(res).rejects.toThrow();
    expect(e.stats().faults.hangs).toBe(1);
    // The engine still answers other endpoints.
    expect((await fetch(`${e.url}/health`)).status).toBe(200);
  });
});

// `udm-orch sim-engine` through the real command tree (runCli), on 127.0.0.1:0.
import { afterEach, describe, expect, it, vi } from "vitest";
import { runCli } from "../../cli/program.js";
import { rmSync } from "node:fs";
import { choiceQuestion, makeRecords, postJson, writeSuite } from "./engine-fixtures.js";

afterEach(() => {
  vi.restoreAllMocks();
});

function captureStdout(): { lines: string[]; firstLine: Promise<string> } {
  const lines: string[] = [];
  let resolve!: (l: string) => void;
  const firstLine = new Promise<string>((r) => (resolve = r));
  vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
    const text = String(chunk);
    lines.push(text);
    const url = /^http:\/\/\S+/m.exec(text);
    if (url) resolve(url[0]);
    return true;
  });
  return { lines, firstLine };
}

describe("udm-orch sim-engine", () => {
  it("prints its URL, serves, and exits 1 when crash-after fires", async () => {
    vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    const out = captureStdout();
    const exit = runCli(["sim-engine", "--port", "0", "--model", "cli", "--tokens-per-s", "0", "--max-model-len", "512", "--faults", "crash-after=2"]);
    const url = await out.firstLine;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const models = (await (await fetch(`${url}/v1/models`)).json()) as any;
    expect(models.data[0]).toMatchObject({ id: "sim/cli", max_model_len: 512 });
    for (let i = 0; i < 2; i++) expect((await postJson(`${url}/v1/systemone`, { state: "s", questions: { q: choiceQuestion(2) } })).status).toBe(200);
    await expect(postJson(`${url}/v1/systemone`, { state: "s", questions: { q: choiceQuestion(2) } })).rejects.toThrow();
    expect(await exit).toBe(1);
  });

  it("--api-key: /v1 paths answer 401 without the key, with it they serve; VLLM_API_KEY when no flag is given", async () => {
    vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    const json = { "content-type": "application/json" };
    const body = { state: "s", questions: { q: choiceQuestion(2) } };
    for (const [args, key] of [
      [["--api-key", "k-flag"], "k-flag"],
      [[], "k-env"],
    ] as const) {
      vi.stubEnv("VLLM_API_KEY", "k-env");
      const out = captureStdout();
      const exit = runCli(["sim-engine", "--port", "0", "--tokens-per-s", "0", ...args, "--faults", "crash-after=1"]);
      const url = await out.firstLine;
      expect(await postJson(`${url}/v1/systemone`, body, json)).toEqual({ status: 401, body: { error: "Unauthorized" } });
      expect((await fetch(`${url}/health`)).status).toBe(200);
      expect((await postJson(`${url}/v1/systemone`, body, { ...json, authorization: `Bearer ${key}` })).status).toBe(200);
      await expect(postJson(`${url}/v1/systemone`, body, { ...json, authorization: `Bearer ${key}` })).rejects.toThrow();
      expect(await exit).toBe(1);
      vi.unstubAllEnvs();
      vi.restoreAllMocks();
      vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    }
  });

  it("takes a suite directory as --oracle and answers its gold at accuracy 1", async () => {
    vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    const records = makeRecords(6);
    const suite = writeSuite(records);
    try {
      const out = captureStdout();
      const exit = runCli(["sim-engine", "--port", "0", "--tokens-per-s", "0", "--oracle", suite, "--accuracy", "1", "--faults", `crash-after=${records.length}`]);
      const url = await out.firstLine;
      for (const r of records) {
        const res = await postJson(`${url}/v1/systemone`, { state: r.state, questions: r.questions });
        expect(res.body.answers.label.choice).toBe(r.expected.label);
        expect(res.body.answers.flag.noul > 0.5).toBe(r.expected.flag);
      }
      await expect(postJson(`${url}/v1/systemone`, { state: "s", questions: { q: choiceQuestion(2) } })).rejects.toThrow();
      expect(await exit).toBe(1);
    } finally {
      rmSync(suite, { recursive: true, force: true });
    }
  });

  it("--bos makes a BOS-adding tokenizer: /tokenize starts a prompt with <|begin_of_text|>", async () => {
    vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    const out = captureStdout();
    const exit = runCli(["sim-engine", "--port", "0", "--bos", "--tokens-per-s", "0", "--faults", "crash-after=0"]);
    const url = await out.firstLine;
    const res = await postJson(`${url}/tokenize`, { prompt: "hello", return_token_strs: true });
    expect(res.body.token_strs).toEqual(["<|begin_of_text|>", "hell", "o"]);
    await expect(postJson(`${url}/v1/completions`, { prompt: "x" })).rejects.toThrow();
    expect(await exit).toBe(1);
  });

  it("--thinking makes a Qwen3-like thinking template: the empty <think> block opens the reply unless enable_thinking is false", async () => {
    vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    const out = captureStdout();
    const exit = runCli(["sim-engine", "--port", "0", "--thinking", "--tokens-per-s", "0", "--faults", "crash-after=0"]);
    const url = await out.firstLine;
    const messages = [{ role: "user", content: "x" }, { role: "assistant", content: "A" }];
    const on = await postJson(`${url}/tokenize`, { messages, add_generation_prompt: false, continue_final_message: true, return_token_strs: true });
    expect(on.body.token_strs.slice(-3)).toEqual(["Ċ", "Ċ", "A"]);
    const off = await postJson(`${url}/tokenize`, { messages: messages.slice(0, 1), add_generation_prompt: true, chat_template_kwargs: { enable_thinking: false }, return_token_strs: true });
    expect(off.body.token_strs.slice(-2)).toEqual(["Ċ", "Ċ"]);
    await expect(postJson(`${url}/v1/completions`, { prompt: "x" })).rejects.toThrow();
    expect(await exit).toBe(1);
  });

  it("refuses bad flags with exit 2", async () => {
    const err: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((c: string | Uint8Array) => (err.push(String(c)), true));
    expect(await runCli(["sim-engine", "--port", "0", "--faults", "boom=1"])).toBe(2);
    expect(err.join("")).toMatch(/unknown fault "boom"/);
    expect(await runCli(["sim-engine", "--port", "0", "--accuracy", "1.5"])).toBe(2);
    expect(await runCli(["sim-engine", "--port", "0", "--oracle", "/nonexistent/oracle.jsonl"])).toBe(2);
  });
});

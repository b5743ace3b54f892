// The sim's --api-key as vLLM's AuthenticationMiddleware (vLLM v0.33.0,
// vllm/entrypoints/openai/api_server.py): paths that start with /v1 need "Authorization: Bearer
// KEY" and get 401 {"error": "Unauthorized"} without it, before any route runs (an unknown /v1 path
// too); /health, /metrics, /tokenize, /detokenize stay open; OPTIONS is never checked. With no key
// nothing is checked. `sim-engine` reads VLLM_API_KEY when --api-key is not given, as vLLM does.
import { afterEach, describe, expect, it } from "vitest";
import { startSimEngine, simApiKeys, type SimEngine } from "../../sim/index.js";

const engines: SimEngine[] = [];
afterEach(async () => {
  for (const e of engines.splice(0)) await e.close();
});

async function engine(apiKeys?: string[]): Promise<SimEngine> {
  const e = await startSimEngine({ tokensPerS: 0, ...(apiKeys ? { apiKeys } : {}) });
  engines.push(e);
  return e;
}

async function ask(url: string, method: string, path: string, authorization?: string): Promise<{ status: number; body: string; type: string | null }> {
  const post = method === "POST";
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { ...(post ? { "content-type": "application/json" } : {}), ...(authorization !== undefined ? { authorization } : {}) },
    ...(post ? { body: JSON.stringify({ prompt: "hello", model: "sim/pseudo", max_tokens: 1 }) } : {}),
  });
  return { status: res.status, body: await res.text(), type: res.headers.get("content-type") };
}

const PROTECTED: Array<[string, string]> = [
  ["GET", "/v1/models"],
  ["POST", "/v1/completions"],
  ["POST", "/v1/chat/completions"],
  ["POST", "/v1/systemone"],
  ["POST", "/v1/decisions"],
  ["GET", "/v1/no-such-route"],
];
const OPEN: Array<[string, string]> = [
  ["GET", "/health"],
  ["GET", "/metrics"],
  ["POST", "/tokenize"],
  ["POST", "/detokenize"],
];

describe("sim-engine --api-key", () => {
  it("answers vLLM's 401 {\"error\": \"Unauthorized\"} on /v1 paths without the right key, before routing", async () => {
    const e = await engine(["k-1", "k-2"]);
    for (const [method, path] of PROTECTED) {
      for (const authorization of [undefined, "Bearer wrong", "k-1", "Basic k-1", "Bearer  k-1", "Bearer"]) {
        const r = await ask(e.url, method, path, authorization);
        expect({ path, authorization, status: r.status, body: r.body }).toEqual({ path, authorization, status: 401, body: '{"error":"Unauthorized"}' });
        expect(r.type).toBe("application/json");
      }
    }
    expect(e.stats().byStatus[401]).toBe(PROTECTED.length * 6);
  });

  it("lets the right key through (either of several, scheme in any case), and leaves /health, /metrics, /tokenize, /detokenize and OPTIONS open", async () => {
    const e = await engine(["k-1", "k-2"]);
    expect((await ask(e.url, "GET", "/v1/models")).status).toBe(401);
    for (const authorization of ["Bearer k-1", "bearer k-2", "BEARER k-1"]) {
      expect((await ask(e.url, "GET", "/v1/models", authorization)).status).toBe(200);
      expect((await ask(e.url, "POST", "/v1/completions", authorization)).status).toBe(200);
      // Past the check, an unknown route is FastAPI's 404 again.
      expect((await ask(e.url, "GET", "/v1/no-such-route", authorization)).status).toBe(404);
    }
    for (const [method, path] of OPEN) expect((await ask(e.url, method, path)).status, path).not.toBe(401);
    expect((await ask(e.url, "OPTIONS", "/v1/models")).status).not.toBe(401);
  });

  it("checks nothing without a key (none given, or only empty ones)", async () => {
    expect((await ask((await engine(["k"])).url, "GET", "/v1/models")).status).toBe(401);
    for (const keys of [undefined, [""]]) {
      const e = await engine(keys);
      expect((await ask(e.url, "GET", "/v1/models")).status).toBe(200);
    }
  });

  it("takes --api-key over VLLM_API_KEY, the variable when no flag is given, and no empty key", () => {
    expect(simApiKeys(["a", "b"], { VLLM_API_KEY: "env" })).toEqual(["a", "b"]);
    expect(simApiKeys(undefined, { VLLM_API_KEY: "env" })).toEqual(["env"]);
    expect(simApiKeys([], { VLLM_API_KEY: "env" })).toEqual(["env"]);
    expect(simApiKeys(undefined, { VLLM_API_KEY: "" })).toEqual([]);
    expect(simApiKeys(undefined, {})).toEqual([]);
  });
});

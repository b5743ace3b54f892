// The simulated vLLM server: the endpoints of endpoints/ on node:http, with vLLM's validation,
// limits and error bodies. Its model is sim/<name>, and every response says so, so nobody mistakes
// its numbers for a model's.
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { errorBody } from "../../common/engine-protocol/index.js";
import { limitHttpServer } from "../../common/http-limits.js";
import { EngineContext, type SimEngineOptions, type SimEngineStats } from "./context.js";
import { chatCompletions } from "./endpoints/chat-completions.js";
import { completions } from "./endpoints/completions.js";
import { decisions } from "./endpoints/decisions.js";
import { modelList } from "./endpoints/models.js";
import { systemone } from "./endpoints/systemone.js";
import { tokenize } from "./endpoints/tokenize.js";
import { detokenize } from "./endpoints/detokenize.js";
import { router } from "./http.js";
import { apiKeyCheck, UNAUTHORIZED_BODY } from "./api-key.js";
import { loadHfTokenizer } from "./model/hf-tokenizer.js";
import type { EngineTokenizer, TokenizerName } from "./model/engine-tokenizer.js";

export type { SimEngineOptions, SimEngineStats } from "./context.js";

export interface SimEngine {
  url: string;
  host: string;
  port: number;
  model: string;
  close(): Promise<void>;
  stats(): SimEngineStats;
}

export async function startSimEngine(options: SimEngineOptions = {}): Promise<SimEngine> {
  const host = options.host ?? "127.0.0.1";
  const sockets = new Set<Socket>();
  let closing: Promise<void> | undefined;
  const crash = (req: IncomingMessage): void => {
    ctx.stats.crashed = true;
    req.socket.destroy();
    void shutdown().then(() => options.onCrash?.());
  };
  const ctx = new EngineContext(options, crash, await engineTokenizer(options.tokenizer));
  const { http, metrics } = ctx;
  const authorized = apiKeyCheck((options.apiKeys ?? []).filter((k) => k !== ""));

  const routes = router(
    http,
    {
      // A legacy vLLM has no such routes: FastAPI's 404 (vllm-profile.ts).
      ...(ctx.profile === "legacy"
        ? {}
        : {
            "/v1/systemone": { method: "POST", handle: (req, res) => systemone(ctx, req, res) },
            "/v1/decisions": { method: "POST", handle: (req, res) => decisions(ctx, req, res) },
          }),
      "/v1/completions": { method: "POST", handle: (req, res) => completions(ctx, req, res) },
      "/v1/chat/completions": { method: "POST", handle: (req, res) => chatCompletions(ctx, req, res) },
      "/tokenize": { method: "POST", handle: (req, res) => tokenize(ctx, req, res) },
      "/detokenize": { method: "POST", handle: (req, res) => detokenize(ctx, req, res) },
      "/v1/models": { method: "GET", handle: (_req, res) => http.send(res, 200, modelList(ctx)) },
      "/health": { method: "GET", handle: (_req, res) => http.send(res, 200, undefined, "text/plain") },
      "/metrics": { method: "GET", handle: async (_req, res) => http.send(res, 200, await metrics.text(), metrics.contentType) },
    },
    (message) => errorBody(500, "InternalServerError", message),
  );
  // The key is checked before any route, as vLLM's middleware wraps the whole app (api-key.ts).
  const server = createServer((req, res) => {
    if (authorized(req)) return routes(req, res);
    req.resume();
    http.send(res, 401, UNAUTHORIZED_BODY);
  });
  // A test tool, but bounded like every udm-orch port: agents hold many connections (one per request
  // in flight), and a hung request (the hang fault) may sit silent as long as the agent waits.
  limitHttpServer(server, { maxConnections: 4_096, idleTimeoutMs: 0 });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  server.listen(options.port ?? 0, host);
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  const port = (server.address() as AddressInfo).port;

  function shutdown(): Promise<void> {
    closing ??= new Promise<void>((resolve) => {
      ctx.capacity.stop();
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    });
    return closing;
  }

  const { stats } = ctx;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    host,
    port,
    model: ctx.model,
    close: shutdown,
    stats: () => ({
      ...stats,
      byStatus: { ...stats.byStatus },
      byEndpoint: { ...stats.byEndpoint },
      faults: { ...stats.faults },
      running: ctx.capacity.numRunning,
      waiting: ctx.capacity.numWaiting,
    }),
  };
}

/** A real tokenizer by name, loaded (the optional packages, once per process); undefined for the built-in one. */
async function engineTokenizer(tokenizer: TokenizerName | EngineTokenizer | undefined): Promise<EngineTokenizer | undefined> {
  if (tokenizer === undefined || tokenizer === "builtin") return undefined;
  return typeof tokenizer === "string" ? loadHfTokenizer(tokenizer) : tokenizer;
}

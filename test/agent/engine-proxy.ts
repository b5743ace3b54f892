// A recording HTTP proxy in front of the simulated engine, for the agent's method tests: it logs
// every request (path and JSON body) and can rewrite a request body or a response body on the
// way, to stand for an engine version that differs from the sim in one field (a vLLM without
// `seed` on /v1/systemone, DecisionUsage without cached tokens, /v1/models without max_model_len).
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface ProxiedRequest {
  method: string;
  path: string;
  /** Parsed JSON body, undefined for a GET. */
  body: unknown;
  status: number;
  /** Parsed JSON response body, when it was JSON. */
  response?: unknown;
  /** The request's Authorization header (passed on to the engine). */
  authorization?: string;
}

export interface EngineProxyOptions {
  /** Changes a request's JSON body before it goes to the engine. */
  request?: (path: string, body: Record<string, unknown>) => Record<string, unknown>;
  /** Changes a JSON response body (2xx) before it goes back. */
  response?: (path: string, body: Record<string, unknown>) => Record<string, unknown>;
  /** Answers a request here instead of the engine (a server whose limits differ from the sim's). */
  answer?: (path: string, body: Record<string, unknown>) => { status: number; body: unknown } | undefined;
}

export interface EngineProxy {
  url: string;
  requests: ProxiedRequest[];
  /** Requests to `path` (inference endpoints by path, e.g. /v1/decisions). */
  to(path: string): ProxiedRequest[];
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export async function startEngineProxy(target: string, options: EngineProxyOptions = {}): Promise<EngineProxy> {
  const requests: ProxiedRequest[] = [];
  const server: Server = createServer(async (req, res) => {
    const path = req.url ?? "/";
    const raw = await readBody(req);
    let body: unknown;
    let sent = raw;
    if (raw) {
      body = JSON.parse(raw);
      if (options.request && body && typeof body === "object") {
        body = options.request(path, body as Record<string, unknown>);
        sent = JSON.stringify(body);
      }
    }
    const authorization = req.headers.authorization;
    const entry: ProxiedRequest = { method: req.method ?? "GET", path, body, status: 0, ...(authorization !== undefined ? { authorization } : {}) };
    requests.push(entry);
    const own = options.answer && body && typeof body === "object" ? options.answer(path, body as Record<string, unknown>) : undefined;
    if (own) {
      entry.status = own.status;
      res.writeHead(own.status, { "content-type": "application/json" });
      res.end(JSON.stringify(own.body));
      return;
    }
    try {
      const upstream = await fetch(`${target}${path}`, { method: req.method, headers: { ...(raw ? { "content-type": "application/json" } : {}), ...(authorization !== undefined ? { authorization } : {}) }, ...(raw ? { body: sent } : {}) });
      let text = await upstream.text();
      entry.status = upstream.status;
      try {
        entry.response = JSON.parse(text);
      } catch {
        entry.response = undefined;
      }
      if (options.response && upstream.ok && (upstream.headers.get("content-type") ?? "").includes("json")) {
        text = JSON.stringify(options.response(path, JSON.parse(text) as Record<string, unknown>));
      }
      res.writeHead(upstream.status, { "content-type": upstream.headers.get("content-type") ?? "application/json" });
      res.end(text);
    } catch (err) {
      entry.status = 502;
      res.writeHead(502, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: (err as Error).message, type: "BadGateway", param: null, code: 502 } }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    to: (path) => requests.filter((r) => r.path === path),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Requests a test abandoned (a read that failed first) would hold close() until they end.
        server.closeAllConnections();
      }),
  };
}

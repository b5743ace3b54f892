// The HTTP server of a process's metrics: GET /metrics (Prometheus text), /healthz, and whatever
// routes the owner adds (the coordinator adds its live page and API). Binds one address.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { bearerMatches } from "../bearer-token.js";
import { UsageError } from "../errors.js";
import { limitHttpServer, type HttpLimits } from "../http-limits.js";
import type { Logger } from "../log.js";
import { formatListen, type ListenAddress } from "./metrics-listen.js";

export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** Answers a request and returns true, or returns false to let the next route (or 404) have it. */
export type Route = (req: IncomingMessage, res: ServerResponse, url: URL) => boolean | Promise<boolean>;

export interface MetricsServerOptions {
  listen: ListenAddress;
  metrics: () => Promise<string>;
  routes?: readonly Route[];
  /** When set, GET /metrics needs `Authorization: Bearer <metricsToken>` (401 otherwise). @default none */
  metricsToken?: string;
  /** Connection cap and timeouts (common/http-limits.ts). @default HTTP_LIMITS_DEFAULTS */
  limits?: Partial<HttpLimits>;
  log?: Logger;
}

export interface MetricsServer {
  /** host:port as bound (the real port when 0 was asked). */
  address: string;
  port: number;
  url: string;
  close(): Promise<void>;
}

export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const routes = options.routes ?? [];
  const metricsToken = options.metricsToken ? Buffer.from(options.metricsToken) : undefined;
  const server: Server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      options.log?.warn("metrics server request failed", { url: req.url, error: (err as Error).message });
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end("internal error\n");
    });
  });
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://localhost");
    for (const route of routes) if (await route(req, res, url)) return;
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain" }).end("method not allowed\n");
      return;
    }
    if (url.pathname === "/metrics") {
      // The page's metrics name every track's headline, the model and the agents: behind the token.
      if (metricsToken && !bearerMatches(req.headers.authorization, metricsToken)) {
        res.writeHead(401, { "content-type": "text/plain", "www-authenticate": "Bearer" }).end("missing or wrong token (--metrics-token): send Authorization: Bearer <token>\n");
        return;
      }
      const text = await options.metrics();
      res.writeHead(200, { "content-type": PROMETHEUS_CONTENT_TYPE, "cache-control": "no-store" }).end(req.method === "HEAD" ? undefined : text);
      return;
    }
    if (url.pathname === "/healthz") {
      res.writeHead(200, { "content-type": "text/plain" }).end("ok\n");
      return;
    }
    res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
  }
  // Idle keep-alive connections stay open longer than any scrape interval up to a minute, so
  // Prometheus reuses its connection and a client reuses one only well inside the server's idle
  // timeout. With Node's 5 s, a process starved of CPU (libuv runs expired timers before it
  // reads the sockets) closed a connection whose next request was already waiting in it, and the
  // client saw "other side closed". close() ends the idle connections itself.
  server.keepAliveTimeout = 65_000;
  // Past its idle timeout (longer than the keep-alive's) a connection that sends nothing is closed.
  limitHttpServer(server, options.limits, (err) =>
    options.log?.warn("metrics server: a connection could not be accepted", { error: err.message }),
  );
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err) => reject(new UsageError(`--metrics: cannot listen on ${formatListen(options.listen)}: ${err.message}`, { cause: err })));
    server.listen(options.listen.port, options.listen.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const address = formatListen({ host: options.listen.host, port });
  const urlHost = options.listen.host === "0.0.0.0" || options.listen.host === "::" ? "127.0.0.1" : options.listen.host;
  return {
    address,
    port,
    url: `http://${formatListen({ host: urlHost, port })}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

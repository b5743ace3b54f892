// The coordinator's HTTP routes beside /metrics and /healthz: the live run page (GET /), its API
// (GET /api/status: the JSON of `udm-orch status --json`; GET /api/run: what the run is; GET
// /api/events: server-sent events) and /readyz. With a token, /api/* needs `Authorization: Bearer
// <token>` or `?token=<token>` (EventSource cannot send headers). The page never reads result files.
import type { IncomingMessage, ServerResponse } from "node:http";
import { bearerTokenOf, tokenMatches } from "../../common/bearer-token.js";
import type { Route } from "../../common/metrics/index.js";
import type { RunStatus } from "../../common/run-status/index.js";
import { runStatusToWire } from "../transport/wire.js";
import type { EventHub } from "./event-hub.js";
import { LIVE_PAGE_HTML } from "./live-page.js";

/** What the page shows beside the status: fixed for the run. */
export interface LiveRunInfo {
  runId: string;
  method: string;
  model: string;
  seeds: readonly number[];
  /** USD per GPU-hour; 0 = unknown. */
  gpuHourUsd: number;
  /** The sweep's run shown (a sweep serves its runs one after the other on one page): its cell name, and which of how many. */
  sweep?: { cell: string; index: number; of: number };
}

export interface ObservabilityRoutesOptions {
  status: () => Promise<RunStatus>;
  run: () => LiveRunInfo;
  events: EventHub;
  /** True while the coordinator serves agents (GET /readyz 200; 503 otherwise). */
  ready: () => boolean;
  token?: string;
}

export function observabilityRoutes(options: ObservabilityRoutesOptions): Route[] {
  const expected = options.token !== undefined ? Buffer.from(options.token) : undefined;
  const authorized = (req: IncomingMessage, url: URL): boolean => {
    if (!expected) return true;
    return tokenMatches(bearerTokenOf(req.headers.authorization) ?? url.searchParams.get("token") ?? undefined, expected);
  };
  const json = (res: ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" }).end(JSON.stringify(body, null, 2) + "\n");

  return [
    async (req, res, url) => {
      if (req.method !== "GET" && req.method !== "HEAD") return false;
      switch (url.pathname) {
        case "/":
        case "/index.html":
          res.writeHead(200, {
            "content-type": "text/html; charset=utf-8",
            "cache-control": "no-store",
            // Everything the page needs is in it; it may talk to this origin only.
            "content-security-policy": "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; connect-src 'self'",
          });
          res.end(req.method === "HEAD" ? undefined : LIVE_PAGE_HTML);
          return true;
        case "/readyz": {
          const ok = options.ready();
          res.writeHead(ok ? 200 : 503, { "content-type": "text/plain" }).end(ok ? "ready\n" : "not ready\n");
          return true;
        }
      }
      if (!url.pathname.startsWith("/api/")) return false;
      if (!authorized(req, url)) {
        res.writeHead(401, { "content-type": "text/plain", "www-authenticate": "Bearer" }).end("missing or wrong token (--token): send Authorization: Bearer <token> or ?token=<token>\n");
        return true;
      }
      switch (url.pathname) {
        case "/api/status":
          json(res, 200, runStatusToWire(await options.status()));
          return true;
        case "/api/run":
          json(res, 200, options.run());
          return true;
        case "/api/events": {
          const last = Number(req.headers["last-event-id"]);
          options.events.attach(res, Number.isInteger(last) ? last : undefined);
          return true;
        }
        default:
          json(res, 404, { error: `no such API route: ${url.pathname}` });
          return true;
      }
    },
  ];
}

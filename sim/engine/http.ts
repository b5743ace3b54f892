// HTTP plumbing of the sim: writing JSON answers (counted by status), reading a request's JSON body
// with the refusals vLLM's router gives before any handler runs (wrong media type, too large, bad
// JSON), and a route table with vLLM's 404 and 405 bodies.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ErrorBody } from "../../common/engine-protocol/index.js";
import type { Failure } from "./protocol/failure.js";
import { invalidJson, unsupportedMediaType } from "./protocol/systemone-request.js";

export const MAX_BODY_BYTES = 64 * 1024 * 1024;

export class Http {
  constructor(
    /** Answers sent, by status code (SimEngineStats.byStatus). */
    private readonly byStatus: Record<number, number>,
  ) {}

  send(res: ServerResponse, status: number, body: unknown, contentType = "application/json"): void {
    this.byStatus[status] = (this.byStatus[status] ?? 0) + 1;
    const text = body === undefined ? "" : typeof body === "string" ? body : JSON.stringify(body);
    res.writeHead(status, { "content-type": contentType, "content-length": Buffer.byteLength(text) });
    res.end(text);
  }

  sendError(res: ServerResponse, status: number, body: ErrorBody | { detail: string }): void {
    this.send(res, status, body);
  }

  fail(res: ServerResponse, failure: Failure): void {
    this.sendError(res, failure.status, failure.body);
  }

  /** The request's JSON body, or undefined when it was answered here. */
  async jsonBody(req: IncomingMessage, res: ServerResponse): Promise<{ body: unknown } | undefined> {
    const mediaType = (req.headers["content-type"] ?? "").toLowerCase().split(";", 1)[0]?.trim();
    if (mediaType !== "application/json") {
      req.resume();
      this.fail(res, unsupportedMediaType());
      return undefined;
    }
    const raw = await readBody(req);
    if (raw === undefined) {
      this.sendError(res, 413, { detail: `Request body larger than ${MAX_BODY_BYTES} bytes` });
      return undefined;
    }
    try {
      return { body: JSON.parse(raw) as unknown };
    } catch (err) {
      const m = /position (\d+)/.exec((err as Error).message);
      this.fail(res, invalidJson(m ? Number(m[1]) : 0));
      return undefined;
    }
  }
}

/** The body as text, or undefined when it is larger than MAX_BODY_BYTES. */
async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      req.resume();
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

export interface Route {
  method: "GET" | "POST";
  handle(req: IncomingMessage, res: ServerResponse): void | Promise<void>;
}

/** Dispatches by path; an unknown path is 404, a wrong method 405, a handler that throws 500. */
export function router(http: Http, routes: Readonly<Record<string, Route>>, internalError: (message: string) => ErrorBody) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? "/").split("?", 1)[0]!;
    const route = Object.hasOwn(routes, path) ? routes[path] : undefined;
    if (!route) {
      req.resume();
      return http.sendError(res, 404, { detail: "Not Found" });
    }
    if (req.method !== route.method) {
      req.resume();
      return http.sendError(res, 405, { detail: "Method Not Allowed" });
    }
    Promise.resolve(route.handle(req, res)).catch((err: unknown) => {
      if (!res.headersSent && !res.destroyed) http.sendError(res, 500, internalError((err as Error).message));
    });
  };
}

// JSON over HTTP to an inference engine, with typed failures: an HTTP status with vLLM's error
// body, an unreachable engine, a timeout, or a body that is not what the endpoint promises. Retry
// decisions are made on these types and on status codes, never on messages.
import { defaultMaxListeners, getMaxListeners, setMaxListeners } from "node:events";
import http from "node:http";
import https from "node:https";
import { UdmError } from "../common/errors.js";
import { engineAuthorization } from "./engine-auth.js";
import { isAdmissionRefusal, parseErrorBody, type ErrorInfo } from "../common/engine-protocol/index.js";

/** The engine answered with a non-2xx status. */
export class EngineHttpError extends UdmError {
  constructor(
    readonly url: string,
    readonly status: number,
    /** vLLM's error body, when the answer had one. */
    readonly info: ErrorInfo | undefined,
  ) {
    super(`${url}: HTTP ${status}${info ? ` ${info.type ? `${info.type}: ` : ""}${info.message}` : ""}`);
  }
}

/** No connection, connection reset, or the engine closed the socket without answering. */
export class EngineUnreachableError extends UdmError {
  constructor(
    readonly url: string,
    cause: unknown,
  ) {
    super(`${url}: engine unreachable (${describeCause(cause)})`, { cause });
  }
}

/** No answer within the per-request timeout (a hung engine). */
export class EngineTimeoutError extends UdmError {
  constructor(
    readonly url: string,
    readonly timeoutMs: number,
  ) {
    super(`${url}: no answer within ${timeoutMs} ms`);
  }
}

/** A 2xx answer whose body is not the JSON the endpoint returns. */
export class EngineProtocolError extends UdmError {
  constructor(
    readonly url: string,
    problem: string,
    options?: { cause?: unknown },
  ) {
    super(`${url}: unexpected answer: ${problem}`, options);
  }
}

/** The last retryable failure of a request, after every attempt was spent. */
export class EngineRetriesExhaustedError extends UdmError {
  constructor(
    readonly attempts: number,
    readonly last: Error,
  ) {
    super(`failed after ${attempts} attempt(s): ${last.message}`, { cause: last });
  }
}

/** 429, 5xx other than 501, network errors and timeouts are worth another attempt. */
export function isRetryableEngineError(err: unknown): boolean {
  if (err instanceof EngineHttpError) return err.status === 429 || (err.status >= 500 && err.status !== 501);
  return err instanceof EngineUnreachableError || err instanceof EngineTimeoutError;
}

/**
 * A request body already written as JSON text, sent as is: for a body whose key order matters
 * where JSON.stringify would change it (integer-like keys go first in a JavaScript object, while
 * vLLM reads a Python dict in the order sent).
 */
export class JsonText {
  constructor(readonly text: string) {}
}

export interface EngineRequest {
  method: "GET" | "POST";
  body?: unknown;
  timeoutMs: number;
  /** The caller's cancellation; its reason is rethrown as is. */
  signal?: AbortSignal | undefined;
}

/** One HTTP exchange, JSON in and out. Throws the typed errors above, or the caller's abort reason. */
export async function requestJson(url: string, req: EngineRequest): Promise<unknown> {
  const text = await requestText(url, req);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new EngineProtocolError(url, `body is not JSON: ${text.slice(0, 120)}`, { cause: err });
  }
}

/** How one engine request ended, for metrics (agent/agent-metrics.ts). */
export interface EngineRequestObservation {
  url: string;
  /** HTTP status, or what happened instead of one. */
  outcome: number | "timeout" | "unreachable" | "aborted";
  seconds: number;
  /** A 503 that refused admission (queue full): the engine is alive, only busy. */
  admissionRefused?: boolean;
}

const observers = new Set<(o: EngineRequestObservation) => void>();

/** Calls `fn` after every engine request of this process; returns the function that stops it. */
export function observeEngineRequests(fn: (o: EngineRequestObservation) => void): () => void {
  observers.add(fn);
  return () => observers.delete(fn);
}

/** How long a request goes without an answer before stall observers hear of it (it keeps its own timeout). */
export const ENGINE_STALL_MS = 10_000;

const stallObservers = new Set<(url: string) => void>();

/**
 * Calls `fn` with a request's URL when it has had no answer for ENGINE_STALL_MS and its timeout is
 * longer: a hung engine is named within seconds rather than at the request timeout. Returns the
 * function that stops it.
 */
export function observeEngineStalls(fn: (url: string) => void): () => void {
  stallObservers.add(fn);
  return () => stallObservers.delete(fn);
}

export async function requestText(url: string, req: EngineRequest): Promise<string> {
  if (observers.size === 0) return requestTextOnce(url, req);
  const started = performance.now();
  let outcome: EngineRequestObservation["outcome"] = "unreachable";
  let admissionRefused = false;
  try {
    const text = await requestTextOnce(url, req);
    outcome = 200;
    return text;
  } catch (err) {
    if (err instanceof EngineHttpError) {
      outcome = err.status;
      admissionRefused = isAdmissionRefusal(err.status, err.info);
    } else if (err instanceof EngineTimeoutError) outcome = "timeout";
    else if (err instanceof EngineUnreachableError) outcome = "unreachable";
    else outcome = "aborted";
    throw err;
  } finally {
    const o: EngineRequestObservation = { url, outcome, seconds: (performance.now() - started) / 1000, ...(admissionRefused ? { admissionRefused } : {}) };
    for (const fn of observers) fn(o);
  }
}

// One keep-alive pool per protocol for every engine request of the process. node:http instead of
// fetch: on the agent's hot path (thousands of requests a second to a local engine) fetch's web
// streams, abort signals and request objects cost several times the exchange itself (agent profile
// in README "Figures on 2026-12-01").
const agents = { "http:": new http.Agent({ keepAlive: true }), "https:": new https.Agent({ keepAlive: true }) };

function requestTextOnce(url: string, req: EngineRequest): Promise<string> {
  if (req.signal?.aborted) return Promise.reject(req.signal.reason);
  let target: URL;
  try {
    target = new URL(url);
  } catch (err) {
    return Promise.reject(new EngineUnreachableError(url, err));
  }
  const isHttps = target.protocol === "https:";
  if (!isHttps && target.protocol !== "http:") return Promise.reject(new EngineUnreachableError(url, new Error(`unsupported protocol ${target.protocol}`)));
  const body = req.body === undefined ? undefined : Buffer.from(req.body instanceof JsonText ? req.body.text : JSON.stringify(req.body), "utf8");
  const headers: http.OutgoingHttpHeaders = body ? { "content-type": "application/json", "content-length": body.length } : {};
  const authorization = engineAuthorization(target);
  if (authorization) headers.authorization = authorization;
  return new Promise<string>((resolve, reject) => {
    let settled = false;
    const settle = (err: unknown, text?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.signal?.removeEventListener("abort", onAbort);
      if (err !== undefined) reject(err);
      else resolve(text!);
    };
    const request = (isHttps ? https : http).request(
      target,
      {
        method: req.method,
        agent: agents[target.protocol as "http:" | "https:"],
        headers,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", (err) => settle(new EngineUnreachableError(url, err)));
        res.on("close", () => {
          if (!res.complete) settle(new EngineUnreachableError(url, new Error("the engine closed the connection mid-answer")));
        });
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) return settle(undefined, text);
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch {
            parsed = text ? { detail: text.slice(0, 500) } : undefined;
          }
          settle(new EngineHttpError(url, status, parseErrorBody(parsed, status)));
        });
      },
    );
    const timedOut = () => {
      settle(new EngineTimeoutError(url, req.timeoutMs));
      request.destroy();
    };
    // One timer per request: at the stall mark it tells the stall observers, then waits out the rest.
    const stallMark = stallObservers.size > 0 && req.timeoutMs > ENGINE_STALL_MS;
    let timer = setTimeout(
      stallMark
        ? () => {
            if (settled) return;
            for (const fn of stallObservers) fn(url);
            timer = setTimeout(timedOut, req.timeoutMs - ENGINE_STALL_MS);
          }
        : timedOut,
      stallMark ? ENGINE_STALL_MS : req.timeoutMs,
    );
    const onAbort = () => {
      settle(req.signal!.reason);
      request.destroy();
    };
    request.on("error", (err) => settle(new EngineUnreachableError(url, err)));
    if (req.signal) {
      raiseListenerLimit(req.signal);
      req.signal.addEventListener("abort", onAbort, { once: true });
    }
    request.end(body);
  });
}

/**
 * A record's requests run under its unit's signal, dozens at once, each listening until it settles:
 * as fetch does (undici), a signal still at Node's default limit of 10 gets a higher one. A signal
 * of another realm (a VM context) is refused by node:events and keeps its limit.
 */
function raiseListenerLimit(signal: AbortSignal): void {
  try {
    if (getMaxListeners(signal) === defaultMaxListeners) setMaxListeners(1500, signal);
  } catch {
    // only the warning is at stake
  }
}

function describeCause(err: unknown): string {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } } | undefined;
  return e?.code ?? e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(err);
}

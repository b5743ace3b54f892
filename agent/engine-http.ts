// JSON over HTTP to an inference engine, with typed failures: an HTTP status with vLLM's error
// body, an unreachable engine, a timeout, or a body that is not what the endpoint promises. Retry
// decisions are made on these types and on status codes, never on messages.
import { UdmError } from "../common/errors.js";
import { parseErrorBody, type ErrorInfo } from "../common/engine-protocol/vllm.js";

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
}

const observers = new Set<(o: EngineRequestObservation) => void>();

/** Calls `fn` after every engine request of this process; returns the function that stops it. */
export function observeEngineRequests(fn: (o: EngineRequestObservation) => void): () => void {
  observers.add(fn);
  return () => observers.delete(fn);
}

export async function requestText(url: string, req: EngineRequest): Promise<string> {
  if (observers.size === 0) return requestTextOnce(url, req);
  const started = performance.now();
  let outcome: EngineRequestObservation["outcome"] = "unreachable";
  try {
    const text = await requestTextOnce(url, req);
    outcome = 200;
    return text;
  } catch (err) {
    if (err instanceof EngineHttpError) outcome = err.status;
    else if (err instanceof EngineTimeoutError) outcome = "timeout";
    else if (err instanceof EngineUnreachableError) outcome = "unreachable";
    else outcome = "aborted";
    throw err;
  } finally {
    const o: EngineRequestObservation = { url, outcome, seconds: (performance.now() - started) / 1000 };
    for (const fn of observers) fn(o);
  }
}

async function requestTextOnce(url: string, req: EngineRequest): Promise<string> {
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), req.timeoutMs);
  const signal = req.signal ? AbortSignal.any([req.signal, timeout.signal]) : timeout.signal;
  try {
    let res: Response;
    try {
      res = await fetch(url, {
        method: req.method,
        signal,
        ...(req.body !== undefined ? { body: JSON.stringify(req.body), headers: { "content-type": "application/json" } } : {}),
      });
    } catch (err) {
      throw classify(url, req, timeout.signal, err);
    }
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      throw classify(url, req, timeout.signal, err);
    }
    if (!res.ok) {
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = text ? { detail: text.slice(0, 500) } : undefined;
      }
      throw new EngineHttpError(url, res.status, parseErrorBody(body, res.status));
    }
    return text;
  } finally {
    clearTimeout(timer);
  }
}

function classify(url: string, req: EngineRequest, timeoutSignal: AbortSignal, err: unknown): unknown {
  if (req.signal?.aborted) return req.signal.reason;
  if (timeoutSignal.aborted) return new EngineTimeoutError(url, req.timeoutMs);
  return new EngineUnreachableError(url, err);
}

function describeCause(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  return cause?.code ?? cause?.message ?? (err as Error)?.message ?? String(err);
}

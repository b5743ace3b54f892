// One engine request with retries, shared by the engine methods: 429, 5xx (not 501), network
// errors and timeouts are retried with exponential backoff (p-retry); every attempt is counted
// into the record's usage; the body is checked against the endpoint's schema. An optional
// concurrency limiter gates each attempt and learns from its latency and outcome.
import pRetry from "p-retry";
import type { z } from "zod";
import { firstIssue } from "../../common/parse.js";
import type { RecordAnswer } from "../engine-method.js";
import { EngineHttpError, EngineProtocolError, EngineRetriesExhaustedError, EngineTimeoutError, isRetryableEngineError, requestJson } from "../engine-http.js";
import type { AdaptiveConcurrency } from "../adaptive-concurrency.js";

export interface RetryPolicy {
  /** Retries after the first attempt. */
  retries: number;
  minBackoffMs: number;
  maxBackoffMs: number;
  /** Per attempt. */
  timeoutMs: number;
  limiter?: AdaptiveConcurrency | undefined;
  /** Failures not retried although retryable (the caller answers them, e.g. by a smaller request). */
  giveUpOn?: ((err: unknown) => boolean) | undefined;
  /** Told of every attempt that ran past timeoutMs (EngineTimeouts logs them). */
  onTimeout?: (() => void) | undefined;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { retries: 4, minBackoffMs: 250, maxBackoffMs: 8000, timeoutMs: 120_000 };

/** Counters of a record the calls add to (RecordAnswer's usage and retries). */
export type CallCounters = Pick<RecordAnswer, "usage" | "retries">;

export async function callEngine<S extends z.ZodType>(
  url: string,
  body: unknown,
  schema: S,
  policy: RetryPolicy,
  counters: CallCounters,
  signal: AbortSignal,
): Promise<z.infer<S>> {
  let attempts = 0;
  try {
    return await pRetry(
      async () => {
        attempts++;
        counters.usage.requests++;
        const release = policy.limiter ? await policy.limiter.acquire(signal) : undefined;
        const started = performance.now();
        let raw: unknown;
        try {
          raw = await requestJson(url, { method: "POST", body, timeoutMs: policy.timeoutMs, signal });
          release?.({ latencyMs: performance.now() - started, overloaded: false });
        } catch (err) {
          if (err instanceof EngineTimeoutError) policy.onTimeout?.();
          const overloaded = err instanceof EngineTimeoutError || (err instanceof EngineHttpError && (err.status === 429 || err.status === 503));
          release?.({ latencyMs: performance.now() - started, overloaded, failed: true });
          throw err;
        }
        const parsed = schema.safeParse(raw);
        if (!parsed.success) {
          const { field, message } = firstIssue(parsed.error);
          throw new EngineProtocolError(url, `${field || "body"}: ${message}`);
        }
        return parsed.data;
      },
      {
        retries: policy.retries,
        factor: 2,
        minTimeout: policy.minBackoffMs,
        maxTimeout: policy.maxBackoffMs,
        randomize: true,
        signal,
        shouldRetry: ({ error }) => isRetryableEngineError(error) && !policy.giveUpOn?.(error),
      },
    );
  } catch (err) {
    if (!signal.aborted && isRetryableEngineError(err) && !policy.giveUpOn?.(err)) throw new EngineRetriesExhaustedError(attempts, err as Error);
    throw err;
  } finally {
    counters.retries += Math.max(0, attempts - 1);
  }
}

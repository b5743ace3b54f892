// The options every engine method takes (systemone, decisions, label-read): where the engine is,
// the run's label-permutation seeds until the coordinator names its own, and one retry policy
// shape for every request.
import type { Logger } from "../../common/log.js";
import type { AdaptiveConcurrency } from "../adaptive-concurrency.js";
import type { RetryPolicy } from "./engine-call.js";

export interface MethodOptions {
  /** Engine base URL, e.g. http://127.0.0.1:8000. */
  baseUrl: string;
  /** Model name sent with each request; default the served model from /v1/models. */
  model?: string;
  /** Records the engine usefully works on at once (the agent's credit). Default 8. */
  capacity?: number;
  /** Label-permutation seeds averaged per question (--seeds); empty = one read in natural order. */
  seeds?: readonly number[];
  /** Retries, backoff and per-attempt timeout of every engine request. */
  retry?: Partial<RetryPolicy>;
  /** Gates every engine request (adaptive concurrency). */
  limiter?: AdaptiveConcurrency;
  /** Where the method says once what it found out about the engine (default: silent). */
  logger?: Logger;
}

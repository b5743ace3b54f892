// Delay before the n-th consecutive reconnect attempt: exponential, capped, with jitter so a
// coordinator restart is not met by every agent of the cluster in the same millisecond.

export interface BackoffOptions {
  /** First delay in ms (default 250). */
  initialMs: number;
  /** Largest delay in ms (default 30000). */
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 250, maxMs: 30_000 };

/**
 * `attempt` counts from 0. "Equal jitter": half the capped exponential delay is fixed, the other
 * half random, so delays still grow while agents spread out. `random` is injectable for tests.
 */
export function reconnectDelayMs(attempt: number, options: BackoffOptions, random: () => number = Math.random): number {
  const exp = Math.min(options.maxMs, options.initialMs * 2 ** Math.min(attempt, 30));
  return Math.round(exp / 2 + random() * (exp / 2));
}
